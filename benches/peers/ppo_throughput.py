#!/usr/bin/env python3
"""Peer benchmark: PPO training throughput, metagame's `ppo` learner (Rust, candle) beside a
CleanRL-style PPO in PyTorch, on the same network, settings, environment and budget.

Usage (after `scripts/check-torch-adapter`, which makes target/torch-venv with PyTorch and
the metagame wheel; this script re-executes itself there):

    python3 benches/peers/ppo_throughput.py                       # Leduc and connect four
    python3 benches/peers/ppo_throughput.py --episodes 5000 --games leduc_poker
    python3 benches/peers/ppo_throughput.py --save benches/peers/results/ppo_throughput.txt

Both sides train seat 0 against uniform play for --episodes episodes (default 20 000):

  * metagame: `cargo run --release --example ppo_throughput` (examples/ppo_throughput.rs),
    the `ppo` learner at its defaults, trained as PSRO trains it (on the tree where the
    game's tree is built, Leduc; on the states otherwise, connect four);
  * PyTorch: CleanRL's ppo.py (read, not copied) on `metagame.VecEnv` (the same game, played
    in Rust, in Gymnasium's VectorEnv form, so both sides play the same environment and the
    figure compares the learners): actor and critic Linear(d, 64)-ReLU-Linear(64, 64)-ReLU-
    Linear(64, ·) as metagame's `hidden = [64, 64]`, 32 lanes × 16 steps per update, GAE
    (γ 1, λ 0.95), 4 epochs × 4 minibatches, advantages normalised per minibatch, clipped
    policy loss (0.2) and clipped value loss, entropy 0.01, value 0.5, gradient norm 0.5,
    Adam (lr 1e-3 annealed over the budget, eps 1e-5), illegal actions masked in the logits.
    torch uses its default threads (every core).

Throughput is learner decisions (the seat's environment steps) per second of training;
each side's time is split into rollouts (environment and the acting forward passes),
gradients (advantages, forward and backward passes of the updates) and the optimiser
(gradient clipping and Adam). Prints a table with the ratio metagame / PyTorch.
"""

import json
import os
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
TORCH_VENV = os.path.join(REPO_ROOT, "target", "torch-venv")


def in_torch_venv():
    return os.path.realpath(sys.prefix) == os.path.realpath(TORCH_VENV)


if __name__ == "__main__" and not in_torch_venv():
    python = os.path.join(TORCH_VENV, "bin", "python")
    if not os.path.exists(python):
        print(f"[setup] {TORCH_VENV} is missing: run scripts/check-torch-adapter first "
              "(it installs PyTorch and the metagame wheel there)", file=sys.stderr)
        sys.exit(2)
    os.execv(python, [python, os.path.abspath(__file__)] + sys.argv[1:])

import argparse  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
from torch import nn  # noqa: E402

import metagame  # noqa: E402

LANES, STEPS, EPOCHS, MINIBATCHES = 32, 16, 4, 4
LR, GAMMA, LAM, CLIP, ENT, VF, MAX_NORM, HIDDEN = 1e-3, 1.0, 0.95, 0.2, 0.01, 0.5, 0.5, 64


def mlp(inputs, outputs):
    return nn.Sequential(nn.Linear(inputs, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, HIDDEN), nn.ReLU(),
                         nn.Linear(HIDDEN, outputs))


def torch_ppo(game, episodes, seed=0):
    """CleanRL-style PPO against uniform play until `episodes` episodes have ended."""
    torch.manual_seed(seed)
    env = metagame.VecEnv(game, num_envs=LANES, player=0, opponents=["uniform"], seed=seed)
    d, a, n = env.observation_size, env.num_actions, LANES
    pi, v = mlp(d, a), mlp(d, 1)
    params = list(pi.parameters()) + list(v.parameters())
    optimiser = torch.optim.Adam(params, lr=LR, eps=1e-5)
    rng = np.random.default_rng(seed)
    obs, infos = env.reset()
    mask = infos["action_mask"]
    clock = {"rollouts": 0.0, "gradients": 0.0, "optimiser": 0.0}
    steps = 0
    started = time.perf_counter()
    while env.finished[0] < episodes:
        optimiser.param_groups[0]["lr"] = LR * max(0.0, 1.0 - env.finished[0] / episodes)
        t = time.perf_counter()
        buf = {k: [] for k in ("obs", "mask", "actions", "logp", "values", "rewards", "dones")}
        with torch.no_grad():
            for _ in range(STEPS):
                x, m = torch.from_numpy(obs), torch.from_numpy(mask)
                dist = torch.distributions.Categorical(logits=pi(x).masked_fill(~m, -1e9))
                action = dist.sample()
                for name, value in (("obs", x), ("mask", m), ("actions", action),
                                    ("logp", dist.log_prob(action)), ("values", v(x)[:, 0])):
                    buf[name].append(value)
                obs, reward, done, _, infos = env.step(action.numpy())
                mask = infos["action_mask"]
                buf["rewards"].append(torch.from_numpy(reward).float())
                buf["dones"].append(torch.from_numpy(done).float())
        steps += STEPS * n
        clock["rollouts"] += time.perf_counter() - t
        t = time.perf_counter()
        with torch.no_grad():
            next_value = v(torch.from_numpy(obs))[:, 0]
            values, rewards, dones = (torch.stack(buf[k]) for k in ("values", "rewards", "dones"))
            adv, last = torch.zeros(STEPS, n), torch.zeros(n)
            for s in reversed(range(STEPS)):
                following = next_value if s == STEPS - 1 else values[s + 1]
                delta = rewards[s] + GAMMA * following * (1 - dones[s]) - values[s]
                last = delta + GAMMA * LAM * (1 - dones[s]) * last
                adv[s] = last
        batch = {
            "obs": torch.stack(buf["obs"]).reshape(STEPS * n, d),
            "mask": torch.stack(buf["mask"]).reshape(STEPS * n, a),
            "actions": torch.stack(buf["actions"]).reshape(-1),
            "logp": torch.stack(buf["logp"]).reshape(-1),
            "values": values.reshape(-1),
            "adv": adv.reshape(-1),
            "returns": (adv + values).reshape(-1),
        }
        size = STEPS * n // MINIBATCHES
        for _ in range(EPOCHS):
            order = torch.from_numpy(rng.permutation(STEPS * n))
            for i in range(MINIBATCHES):
                part = {k: x[order[i * size:(i + 1) * size]] for k, x in batch.items()}
                dist = torch.distributions.Categorical(logits=pi(part["obs"]).masked_fill(~part["mask"], -1e9))
                ratio = (dist.log_prob(part["actions"]) - part["logp"]).exp()
                adv_n = (part["adv"] - part["adv"].mean()) / (part["adv"].std() + 1e-8)
                policy_loss = torch.max(-adv_n * ratio, -adv_n * ratio.clamp(1 - CLIP, 1 + CLIP)).mean()
                value = v(part["obs"])[:, 0]
                clipped = part["values"] + (value - part["values"]).clamp(-CLIP, CLIP)
                value_loss = 0.5 * torch.max((value - part["returns"]) ** 2,
                                             (clipped - part["returns"]) ** 2).mean()
                loss = policy_loss - ENT * dist.entropy().mean() + VF * value_loss
                optimiser.zero_grad()
                loss.backward()
                o = time.perf_counter()
                nn.utils.clip_grad_norm_(params, MAX_NORM)
                optimiser.step()
                clock["optimiser"] += time.perf_counter() - o
        clock["gradients"] += time.perf_counter() - t
    seconds = time.perf_counter() - started
    clock["gradients"] -= clock["optimiser"]
    return {"game": game, "episodes": env.finished[0], "steps": steps, "seconds": seconds,
            "steps_per_second": steps / seconds, "rollouts_s": clock["rollouts"],
            "gradients_s": clock["gradients"], "optimiser_s": clock["optimiser"],
            "mean_return": env.finished[1]}


def ours(episodes, games):
    subprocess.run(["cargo", "build", "--release", "--quiet", "--example", "ppo_throughput"], cwd=REPO_ROOT,
                   check=True)
    exe = os.path.join(REPO_ROOT, "target", "release", "examples", "ppo_throughput")
    out = subprocess.run([exe, str(episodes), ",".join(games)], cwd=REPO_ROOT, check=True,
                         capture_output=True, text=True).stdout
    return {r["game"]: r for r in map(json.loads, out.splitlines())}


def split(r):
    total = r["seconds"]
    return " / ".join(f"{100 * r[k] / total:.0f}%" for k in ("rollouts_s", "gradients_s", "optimiser_s"))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--episodes", type=int, default=20_000)
    ap.add_argument("--games", default="leduc_poker,connect_four")
    ap.add_argument("--save", metavar="FILE", help="also write the table (command line first) to FILE")
    args = ap.parse_args()
    games = args.games.split(",")
    load = os.getloadavg()[0]
    mine = ours(args.episodes, games)
    lines = [f"$ python3 benches/peers/ppo_throughput.py {' '.join(map(shlex.quote, sys.argv[1:]))}",
             f"# {time.strftime('%Y-%m-%d %H:%M')}, {os.cpu_count()} CPUs, load average {load:.2f}, "
             f"torch {torch.__version__} ({torch.get_num_threads()} threads)", "",
             "| game | side | episodes | steps | seconds | steps/s | rollouts / gradients / optimiser | ratio |",
             "|---|---|---|---|---|---|---|---|"]
    for game in games:
        theirs = torch_ppo(game, args.episodes)
        m = mine[game]
        ratio = m["steps_per_second"] / theirs["steps_per_second"]
        for side, r, cell in (("metagame ppo", m, f"{ratio:.2f}×"), ("PyTorch (CleanRL-style)", theirs, "1")):
            lines.append(f"| {game} | {side} | {r['episodes']} | {r['steps']} | {r['seconds']:.2f} | "
                         f"{r['steps_per_second']:.0f} | {split(r)} | {cell} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.save:
        with open(args.save, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
