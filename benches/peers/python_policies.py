#!/usr/bin/env python3
"""Peer benchmark: Python policies and environments, side by side in one process.

Run it with the test venv, which has the metagame wheel (scripts/test builds it there); it
installs PettingZoo's classic games (pettingzoo 1.27.0 with pygame, which its connect four
imports) into that venv when they are missing:

    target/python-venv/bin/python benches/peers/python_policies.py [--quick]

1. A Python callable against a native network, as an opponent in `metagame.VecEnv`: the
   same two-hidden-layer network (128 units, ReLU; numpy float32 weights drawn by
   default_rng(0)) as a numpy callable `policy(obs, legal) -> probs` and as a safetensors
   file in PyTorch's `nn.Sequential` layout (the native network member). The learner's
   seat plays a uniformly random legal action drawn by numpy for the whole batch. For each
   game (leduc_poker, connect_four) and lane count (64 to 4096): environment steps per
   second with each opponent, the callable's decisions per second, and the share of the
   wall time spent inside the callable.
2. Connect four played by uniformly random players, steps of the learner's seat per second:
   `metagame.VecEnv("connect_four", N)` (uniform opponent, in Rust) against PettingZoo's
   `connect_four_v3` AEC loop (`env.last()`, the mask, `env.step`), and against a
   Gymnasium `SyncVectorEnv` of N environments, each one seat of PettingZoo's game with a
   uniform opponent inside (the usual way to hand an AEC game to a single-agent trainer).
3. Connect four played uniformly by `metagame.matches`, episodes per second: PettingZoo's
   `connect_four_v3` through `metagame.pettingzoo.from_env`, OpenSpiel's through
   `from_pyspiel(walk=False)`, and the native game.

Results: a table on stdout and benches/peers/results/python_policies.json with the CPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def ensure_pettingzoo() -> None:
    try:
        import pygame  # noqa: F401
        from pettingzoo.classic import connect_four_v3  # noqa: F401
    except ImportError:
        print("[setup] pip install pettingzoo==1.27.0 pygame==2.6.1", file=sys.stderr)
        subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", "pettingzoo==1.27.0", "pygame==2.6.1"])


def cpu() -> str:
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return f"{line.split(':', 1)[1].strip()}, {os.cpu_count()} cores"
    except OSError:
        pass
    return platform.processor()


def network(inputs: int, actions: int, hidden: int = 128, seed: int = 0):
    """Weights as PyTorch's nn.Linear keeps them ([out, in]) and the numpy callable."""
    rng = np.random.default_rng(seed)
    sizes = [inputs, hidden, hidden, actions]
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        bound = 1 / np.sqrt(a)
        layers.append((rng.uniform(-bound, bound, (b, a)).astype(np.float32), rng.uniform(-bound, bound, b).astype(np.float32)))
    timer = {"seconds": 0.0, "decisions": 0}

    def mlp(obs, legal):
        start = time.perf_counter()
        x = obs
        for i, (w, b) in enumerate(layers):
            x = x @ w.T + b
            if i < len(layers) - 1:
                x = np.maximum(x, 0)
        x = np.where(legal, x, -np.inf)
        p = np.exp(x - x.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        timer["seconds"] += time.perf_counter() - start
        timer["decisions"] += len(obs)
        return p

    tensors = {}
    for i, (w, b) in enumerate(layers):
        tensors[f"{2 * i}.weight"], tensors[f"{2 * i}.bias"] = w, b
    return mlp, tensors, timer


def random_actions(rng, mask):
    return (mask * rng.random(mask.shape)).argmax(axis=1)


def steps_per_second(env, rng, seconds: float) -> float:
    obs, infos = env.reset()
    steps, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        obs, _, _, _, infos = env.step(random_actions(rng, infos["action_mask"]))
        steps += env.num_envs
    return steps / (time.perf_counter() - start)


def callable_against_native(quick: bool) -> list[dict]:
    from safetensors.numpy import save_file

    import metagame

    rows = []
    seconds = 0.5 if quick else 2.0
    folder = tempfile.mkdtemp()
    for game in ("leduc_poker", "connect_four"):
        probe = metagame.VecEnv(game, 1)
        mlp, tensors, timer = network(probe.observation_size, probe.num_actions)
        path = os.path.join(folder, f"{game}.safetensors")
        save_file(tensors, path)
        for lanes in (64, 256, 1024, 4096):
            rng = np.random.default_rng(1)
            native = steps_per_second(metagame.VecEnv(game, lanes, player=1, opponents=[path]), rng, seconds)
            timer.update(seconds=0.0, decisions=0)
            start = time.perf_counter()
            python = steps_per_second(metagame.VecEnv(game, lanes, player=1, opponents=[mlp]), rng, seconds)
            wall = time.perf_counter() - start
            rows.append({
                "game": game, "lanes": lanes, "native_steps_per_s": native, "callable_steps_per_s": python,
                "callable_decisions_per_s": timer["decisions"] / wall, "share_in_callable": timer["seconds"] / wall,
            })
            r = rows[-1]
            print(f"{game:13} {lanes:5} lanes  native {native:10.0f} steps/s  callable {python:10.0f} steps/s "
                  f"({r['callable_decisions_per_s']:9.0f} decisions/s, {100 * r['share_in_callable']:4.1f}% in the callable)",
                  flush=True)
    return rows


class PettingZooSeat:
    """One seat of PettingZoo's connect_four_v3 as a Gymnasium environment, a uniformly
    random opponent inside (what a single-agent trainer is usually handed)."""

    def __init__(self, seed: int):
        import gymnasium
        from pettingzoo.classic import connect_four_v3

        self.env = connect_four_v3.env()
        self.rng = np.random.default_rng(seed)
        self.observation_space = gymnasium.spaces.Box(0, 1, (6, 7, 2), np.int8)
        self.action_space = gymnasium.spaces.Discrete(7)
        self.metadata = {"autoreset_mode": gymnasium.vector.AutoresetMode.NEXT_STEP}
        self.render_mode = None
        self.spec = None
        self.np_random = self.rng

    def _opponent(self):
        while self.env.agents and self.env.agent_selection != "player_0":
            obs, _, term, trunc, _ = self.env.last()
            if term or trunc:
                self.env.step(None)
                continue
            self.env.step(int(self.rng.choice(obs["action_mask"].nonzero()[0])))

    def reset(self, seed=None, options=None):
        self.env.reset(seed=seed)
        obs, *_ = self.env.last()
        return obs["observation"], {"action_mask": obs["action_mask"]}

    def step(self, action):
        self.env.step(int(action))
        self._opponent()
        if not self.env.agents:
            return np.zeros((6, 7, 2), np.int8), 0.0, True, False, {}
        obs, reward, term, trunc, _ = self.env.last()
        return obs["observation"], float(reward), bool(term), bool(trunc), {"action_mask": obs["action_mask"]}

    def close(self):
        self.env.close()


def connect_four_loops(quick: bool) -> list[dict]:
    import gymnasium
    from pettingzoo.classic import connect_four_v3

    import metagame

    seconds = 0.5 if quick else 2.0
    rng = np.random.default_rng(0)
    # PettingZoo's own loop, both players uniform: the learner's seat's steps (every other move).
    env = connect_four_v3.env()
    env.reset(seed=0)
    moves, start = 0, time.perf_counter()
    while time.perf_counter() - start < seconds:
        for agent in env.agent_iter():
            obs, _, term, trunc, _ = env.last()
            env.step(None if term or trunc else int(rng.choice(obs["action_mask"].nonzero()[0])))
            moves += 1
        env.reset()
    pettingzoo = moves / 2 / (time.perf_counter() - start)
    rows = []
    for lanes in (1, 16, 256):
        ours = steps_per_second(metagame.VecEnv("connect_four", lanes), rng, seconds)
        vector = gymnasium.vector.SyncVectorEnv([lambda i=i: PettingZooSeat(i) for i in range(lanes)],
                                                autoreset_mode=gymnasium.vector.AutoresetMode.NEXT_STEP)
        vector.reset(seed=0)
        mask = np.ones((lanes, 7), bool)
        steps, start = 0, time.perf_counter()
        while time.perf_counter() - start < seconds:
            _, _, _, _, infos = vector.step(random_actions(rng, mask))
            mask = np.asarray(infos.get("action_mask", np.ones((lanes, 7))), bool)
            mask[~mask.any(axis=1)] = True
            steps += lanes
        sync = steps / (time.perf_counter() - start)
        rows.append({"lanes": lanes, "metagame_steps_per_s": ours, "pettingzoo_aec_steps_per_s": pettingzoo,
                     "gymnasium_sync_steps_per_s": sync})
        print(f"connect four {lanes:4} lanes  metagame.VecEnv {ours:10.0f} steps/s  PettingZoo AEC loop {pettingzoo:8.0f}  "
              f"SyncVectorEnv {sync:8.0f}  ({ours / pettingzoo:6.1f}x, {ours / sync:6.1f}x)", flush=True)
    return rows


def from_env_episodes(quick: bool) -> dict:
    """Episodes per second of uniform play through `metagame.matches`: PettingZoo's
    connect_four_v3 through `metagame.pettingzoo.from_env`, OpenSpiel's connect_four
    through `from_pyspiel(walk=False)`, and the native connect_four."""
    import pyspiel
    from pettingzoo.classic import connect_four_v3

    import metagame
    import metagame.openspiel
    import metagame.pettingzoo

    episodes = 200 if quick else 1000
    games = {"pettingzoo from_env": metagame.pettingzoo.from_env(connect_four_v3.env),
             "pyspiel walk=False": metagame.openspiel.from_pyspiel(pyspiel.load_game("connect_four"), walk=False),
             "native": "connect_four"}
    rates = {}
    for name, game in games.items():
        n = episodes * (20 if name == "native" else 1)
        start = time.perf_counter()
        metagame.matches(game, ["uniform"], episodes=n, seed=0)
        rates[name] = n / (time.perf_counter() - start)
    native = rates["native"]
    for name, rate in rates.items():
        print(f"connect four, uniform play, metagame.matches: {name:20} {rate:10.0f} episodes/s "
              f"(native {native / rate:7.1f}x)", flush=True)
    return rates


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="0.5 s per measurement instead of 2 s")
    args = parser.parse_args()
    ensure_pettingzoo()
    print(f"CPU: {cpu()}")
    results = {"cpu": cpu(), "callable_against_native": callable_against_native(args.quick),
               "connect_four_loops": connect_four_loops(args.quick),
               "from_env_episodes_per_s": from_env_episodes(args.quick)}
    os.makedirs(os.path.join(HERE, "results"), exist_ok=True)
    with open(os.path.join(HERE, "results", "python_policies.json"), "w") as f:
        json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
