#!/usr/bin/env python3
"""Peer benchmark: network members playing each other, metagame's batched rollouts against
OpenSpiel's way (one forward pass per state) and a batched numpy forward pass.

Usage (from anywhere; plain python3 is fine, the script bootstraps its venv):

    python3 benches/peers/rollouts.py                      # the defaults below
    python3 benches/peers/rollouts.py --episodes 400000 --openspiel-episodes 4000

What runs, on the same two networks per game (`nn.Sequential(Linear, ReLU, Linear, ReLU,
Linear)` of 2 hidden layers of 128, PyTorch's default initialisation drawn by numpy, saved
with `safetensors.numpy.save_file`, PyTorch's state_dict layout), network 0 against network 1
and 1 against 0:

* metagame: `target/release/metagame matches --game G --policies a.safetensors b.safetensors
  --evaluator rollout --episodes N --json` (B episodes in lock-step, one batched forward pass
  per network and seat per step, all cores); its JSON gives the decisions the networks were
  asked and the wall time of the evaluation. On Leduc also `--evaluator cpu`, which
  tabulates the networks over the tree (936 forward passes) and samples the flat tree.
* OpenSpiel's way: pyspiel states, each decision one forward pass of the network on the
  state's tensor (`information_state_tensor`, or `observation_tensor` for connect four), as
  `psro_v2`'s `rl_policy` calls its network once per state; numpy does the forward pass (no
  PyTorch here: numpy on one state is faster than a torch call), actions sampled by numpy.
* numpy batched: the forward pass alone on 1 024 tensors at once (`x @ W.T + b`, float32,
  numpy's BLAS), the ceiling of any Python-side batching.

Decisions per second and episodes per second on each side, and the ratios, are printed and
written to benches/peers/results/rollouts.json with the CPU model. The binary is taken from
target/release (built with `cargo build --release --bin metagame` when missing).

Exit status: 0 on success, 2 on setup failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peer_venv import REPO_ROOT, RESULTS, ensure_venv  # noqa: E402

if __name__ == "__main__":
    ensure_venv(__file__, ["open_spiel==2.0.2", "numpy", "safetensors==0.8.0"], "numpy, pyspiel, safetensors",
                {"open_spiel": "2.0.2"})

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402
from safetensors.numpy import save_file  # noqa: E402

from machine import cpu_model  # noqa: E402

METAGAME = os.path.join(REPO_ROOT, "target", "release", "metagame")


def network(sizes, seed):
    """PyTorch's default Linear initialisation: U(-1/sqrt(in), 1/sqrt(in)) for weights and biases."""
    rng = np.random.default_rng(seed)
    layers = {}
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = 1.0 / np.sqrt(n_in)
        layers[f"{2 * k}.weight"] = rng.uniform(-bound, bound, (n_out, n_in)).astype(np.float32)
        layers[f"{2 * k}.bias"] = rng.uniform(-bound, bound, (n_out,)).astype(np.float32)
    return layers


def forward(layers, x):
    """Logits of a batch (rows) or one tensor."""
    n = len(layers) // 2
    for k in range(n):
        x = x @ layers[f"{2 * k}.weight"].T + layers[f"{2 * k}.bias"]
        if k < n - 1:
            x = np.maximum(x, 0.0)
    return x


def openspiel_way(game, nets, episodes, observation, seed):
    """Episodes of nets[0] against nets[1] and back, one forward pass per decision."""
    rng = np.random.default_rng(seed)
    num_actions = game.num_distinct_actions()
    decisions = 0
    start = time.perf_counter()
    for e in range(episodes):
        seats = nets if e % 2 == 0 else nets[::-1]
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes())
                state.apply_action(int(rng.choice(outcomes, p=probs)))
                continue
            player = state.current_player()
            tensor = state.observation_tensor(player) if observation else state.information_state_tensor(player)
            logits = forward(seats[player], np.asarray(tensor, dtype=np.float32))
            legal = state.legal_actions()
            mask = np.full(num_actions, -np.inf, dtype=np.float32)
            mask[legal] = 0.0
            z = logits + mask
            p = np.exp(z - z.max()).astype(np.float64)
            state.apply_action(int(rng.choice(num_actions, p=p / p.sum())))
            decisions += 1
    seconds = time.perf_counter() - start
    return {"episodes": episodes, "decisions": decisions, "seconds": seconds,
            "episodes_per_second": episodes / seconds, "decisions_per_second": decisions / seconds}


def numpy_batched(layers, width, batch=1024, repeat=200):
    x = np.random.default_rng(0).random((batch, width), dtype=np.float32)
    forward(layers, x)
    start = time.perf_counter()
    for _ in range(repeat):
        forward(layers, x)
    seconds = time.perf_counter() - start
    return {"batch": batch, "decisions_per_second": batch * repeat / seconds}


def metagame(game, paths, evaluator, episodes):
    done = subprocess.run([METAGAME, "matches", "--game", game, "--policies", *paths, "--evaluator", evaluator,
                           "--episodes", str(episodes), "--json"], check=True, capture_output=True, text=True)
    out = json.loads(done.stdout)
    # Entries [0,1] and [1,0] are the cross-play the OpenSpiel side plays; [0,0] and [1,1]
    # run too (matches plays the whole table), and all count.
    return {"evaluator": evaluator, "episodes": sum(e["episodes"] for e in out["entries"]),
            "seconds": out["seconds"], "episodes_per_second": out["episodes_per_second"],
            "decisions": out["policy_decisions"], "decisions_per_second": out["policy_decisions_per_second"]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=200_000, help="metagame episodes per entry (Leduc)")
    parser.add_argument("--connect-four-episodes", type=int, default=20_000, help="metagame episodes per entry")
    parser.add_argument("--openspiel-episodes", type=int, default=2_000, help="episodes of OpenSpiel's way")
    args = parser.parse_args()
    if args.episodes < 1 or args.connect_four_episodes < 1 or args.openspiel_episodes < 2:
        print("rollouts.py: episode counts must be positive (OpenSpiel's at least 2)", file=sys.stderr)
        sys.exit(2)
    if not os.path.exists(METAGAME):
        subprocess.check_call(["cargo", "build", "--release", "--bin", "metagame"], cwd=REPO_ROOT)
    results = {"cpu": cpu_model(), "cores": os.cpu_count(), "games": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for name, width, actions, observation, episodes in [
            ("leduc_poker", 30, 3, False, args.episodes),
            ("connect_four", 126, 7, True, args.connect_four_episodes),
        ]:
            nets = [network([width, 128, 128, actions], seed) for seed in (1, 2)]
            paths = []
            for k, layers in enumerate(nets):
                paths.append(os.path.join(tmp, f"{name}_{k}.safetensors"))
                save_file(layers, paths[-1])
            row = {"metagame_rollout": metagame(name, paths, "rollout", episodes)}
            if name == "leduc_poker":
                row["metagame_cpu_tabulated"] = metagame(name, paths, "cpu", episodes)
            row["openspiel_way"] = openspiel_way(pyspiel.load_game(name), nets, args.openspiel_episodes, observation, 0)
            row["numpy_batched_1024"] = numpy_batched(nets[0], width)
            results["games"][name] = row
    print(f"CPU: {results['cpu']}, {results['cores']} cores")
    print("decisions: forward passes' rows asked of the networks (the tabulated run asks each of")
    print("Leduc's 936 information sets once); ratios against OpenSpiel's way")
    print(f"{'game':<14} {'side':<24} {'episodes/s':>11} {'ratio':>8} {'decisions/s':>12} {'ratio':>8}")
    for name, row in results["games"].items():
        base = row["openspiel_way"]
        for side, r in row.items():
            eps = r.get("episodes_per_second")
            e_text = "-" if eps is None else f"{eps:.4g}"
            e_ratio = "-" if eps is None else f"{eps / base['episodes_per_second']:.1f}x"
            d_ratio = "-" if side == "metagame_cpu_tabulated" else \
                f"{r['decisions_per_second'] / base['decisions_per_second']:.1f}x"
            print(f"{name:<14} {side:<24} {e_text:>11} {e_ratio:>8} {r['decisions_per_second']:12.4g} {d_ratio:>8}")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "rollouts.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
