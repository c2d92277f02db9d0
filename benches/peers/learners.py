#!/usr/bin/env python3
"""Peer benchmark: tabular Q-learning training throughput on Leduc poker, OpenSpiel vs metagame.

Usage (from anywhere; plain python3 is fine, the script bootstraps its venv):

    python3 benches/peers/learners.py                          # 20 000 OpenSpiel episodes
    python3 benches/peers/learners.py --episodes 50000 --metagame-episodes 20000000

OpenSpiel side: `open_spiel.python.algorithms.tabular_qlearner.QLearner` at seat 0 against
`random_agent.RandomAgent` at seat 1 in `rl_environment.Environment("leduc_poker")`, the
loop of OpenSpiel's `tabular_qlearner_example.py` (train mode, epsilon 0.2, step 0.1).
metagame side: `cargo run --release -p metagame-learners --example throughput -- q 1 N`
(one rayon thread, the same seat and opponent). Prints episodes per second and the ratio;
raw numbers go to benches/peers/results/learners.json.

Exit status: 0 on success, 2 on setup failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peer_venv import REPO_ROOT, RESULTS, ensure_venv  # noqa: E402

if __name__ == "__main__":
    ensure_venv(__file__, ["open_spiel==2.0.2", "numpy"], "numpy, pyspiel", {"open_spiel": "2.0.2"})

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402


def openspiel_episodes_per_second(episodes):
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import random_agent, tabular_qlearner

    env = rl_environment.Environment("leduc_poker")
    num_actions = env.action_spec()["num_actions"]
    agents = [tabular_qlearner.QLearner(player_id=0, num_actions=num_actions),
              random_agent.RandomAgent(player_id=1, num_actions=num_actions)]
    start = time.perf_counter()
    for _ in range(episodes):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            output = agents[player].step(time_step)
            time_step = env.step([output.action])
        for agent in agents:
            agent.step(time_step)
    return episodes / (time.perf_counter() - start)


def metagame_episodes_per_second(episodes):
    cmd = ["cargo", "run", "--quiet", "--release", "-p", "metagame-learners", "--example", "throughput",
           "--", "q", "1", str(episodes)]
    out = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    m = re.search(r"= ([0-9.]+) M episodes/s", out)
    if not m:
        raise RuntimeError(f"unexpected output: {out!r}")
    return float(m.group(1)) * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=20_000, help="OpenSpiel training episodes")
    ap.add_argument("--metagame-episodes", type=int, default=10_000_000)
    args = ap.parse_args()
    ours = metagame_episodes_per_second(args.metagame_episodes)
    theirs = openspiel_episodes_per_second(args.episodes)
    print(f"{'implementation':<40} {'episodes/s':>14}")
    print(f"{'OpenSpiel tabular_qlearner (Python)':<40} {theirs:>14,.0f}")
    print(f"{'metagame QLearner (1 thread)':<40} {ours:>14,.0f}")
    print(f"ratio metagame / OpenSpiel: {ours / theirs:,.0f}x")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "learners.json"), "w") as f:
        json.dump({"game": "leduc_poker", "openspiel_episodes_per_second": theirs,
                   "metagame_episodes_per_second": ours}, f, indent=2)


if __name__ == "__main__":
    main()
