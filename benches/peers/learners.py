#!/usr/bin/env python3
"""Peer benchmark: tabular Q-learning on Leduc poker, OpenSpiel vs metagame: learned-response quality and training throughput.

Usage (from anywhere; plain python3 is fine, the script bootstraps its venv):

    python3 benches/peers/learners.py                          # 20 000 episodes on both sides
    python3 benches/peers/learners.py --episodes 200000 --seat 1 --metagame-episodes 20000000

What runs, same game (`leduc_poker`), same seat (`--seat`, default 0), same opponent (uniform
random at the other seat), same number of training episodes N (`--episodes`, default 20 000):

* OpenSpiel: `open_spiel.python.algorithms.tabular_qlearner.QLearner` (its defaults: constant
  epsilon 0.2, constant step 0.1, discount 1) against `random_agent.RandomAgent` in
  `rl_environment.Environment("leduc_poker")`, the train loop of OpenSpiel's
  `tabular_qlearner_example.py`, numpy seeded with `--seed`. Its Q table (keyed by
  `str(information_state_tensor(seat))`) becomes a greedy `TabularPolicy` for the seat: argmax
  over legal actions, ties split evenly, so never-visited information states are uniform; the
  other seat's rows stay uniform. Scored with OpenSpiel's own exact tools:
  `expected_game_score.policy_value` (learned value vs uniform) and
  `best_response.BestResponsePolicy(game, seat, uniform).value(root)` (best-response value).
* metagame: `target/release/metagame respond --game leduc_poker --against uniform --seat S
  --learner q-learning --episodes N --seed SEED --points 1 --json` (the `q-learning` defaults:
  per-visit schedules, epsilon = visits^-1/2 floored at 0.01, step = 1/visits floored at 0.001;
  greedy output policy, ties split evenly), whose summary line gives value, best-response
  value, gap and the seconds of training plus one exact evaluation. The same command runs
  again at `--metagame-episodes` (default 10 000 000), and so does the raw throughput example
  `learners/examples/throughput.rs` (`throughput q 1 M`, one rayon thread, seat 0).

Gap = best-response value - learned value (>= 0), also as % of Leduc's payoff range (26:
-13..13). Prints a side-by-side table (episodes, wall seconds, episodes/s, final value,
best-response value, gap, gap % range), both sides' best-response values (they must agree:
same game, same uniform opponent; a mismatch is a failure) and the throughput ratio
metagame / OpenSpiel. All raw numbers go to benches/peers/results/learners.json.

The binaries are taken from target/release (built with `cargo build --release --bin metagame
--example throughput` only when missing, or always with `--build`).

Exit status: 0 on success, 1 if the two best-response values disagree, 2 on setup failure.
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

GAME = "leduc_poker"
METAGAME = os.path.join(REPO_ROOT, "target", "release", "metagame")
THROUGHPUT = os.path.join(REPO_ROOT, "target", "release", "examples", "throughput")


def openspiel_q_learning(episodes, seat, seed):
    """Train OpenSpiel's QLearner at `seat` vs uniform random; score its greedy policy exactly."""
    import numpy as np
    import pyspiel
    from open_spiel.python import policy as policy_lib
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import (best_response, expected_game_score, random_agent,
                                              tabular_qlearner)

    np.random.seed(seed)
    env = rl_environment.Environment(GAME)
    num_actions = env.action_spec()["num_actions"]
    learner = tabular_qlearner.QLearner(player_id=seat, num_actions=num_actions)
    opponent = random_agent.RandomAgent(player_id=1 - seat, num_actions=num_actions)
    agents = [learner, opponent] if seat == 0 else [opponent, learner]
    start = time.perf_counter()
    for _ in range(episodes):
        time_step = env.reset()
        while not time_step.last():
            player = time_step.observations["current_player"]
            output = agents[player].step(time_step)
            time_step = env.step([output.action])
        for agent in agents:
            agent.step(time_step)
    train_seconds = time.perf_counter() - start

    start = time.perf_counter()
    game = pyspiel.load_game(GAME)
    learned = policy_lib.TabularPolicy(game)  # uniform everywhere to begin with
    q_table = learner._q_values  # pylint: disable=protected-access
    seat_states = visited = 0
    for index, state in enumerate(learned.states):
        if state.current_player() != seat:
            continue
        seat_states += 1
        key = str(state.information_state_tensor(seat))  # QLearner.step's key
        if key not in q_table:  # never visited: stays uniform
            continue
        visited += 1
        q = q_table[key]
        legal = state.legal_actions()
        best = max(q.get(a, 0.0) for a in legal)
        greedy = [a for a in legal if q.get(a, 0.0) == best]
        row = np.zeros(game.num_distinct_actions())
        row[greedy] = 1.0 / len(greedy)
        learned.action_probability_array[index] = row
    if visited == 0:
        raise RuntimeError("no Q-table key matched an information state: key format changed?")
    uniform = policy_lib.UniformRandomPolicy(game)
    root = game.new_initial_state()
    value = float(expected_game_score.policy_value(root, [learned, learned])[seat])
    br_value = float(best_response.BestResponsePolicy(game, seat, uniform).value(root))
    lo, hi = game.min_utility(), game.max_utility()
    gap = max(br_value - value, 0.0)
    return {
        "episodes": episodes, "seat": seat, "seed": seed, "epsilon": 0.2, "step_size": 0.1,
        "train_seconds": train_seconds, "eval_seconds": time.perf_counter() - start,
        "episodes_per_second": episodes / train_seconds,
        "q_table_states": len(q_table), "seat_information_states": seat_states,
        "visited_information_states": visited,
        "value": value, "best_response_value": br_value, "gap": gap,
        "gap_fraction_of_range": gap / (hi - lo), "payoff_range": [lo, hi],
    }


def ensure_binaries(force):
    if force or not (os.path.exists(METAGAME) and os.path.exists(THROUGHPUT)):
        print("[setup] cargo build --release --bin metagame --example throughput", file=sys.stderr)
        subprocess.run(["cargo", "build", "--quiet", "--release", "--bin", "metagame",
                        "--example", "throughput"], cwd=REPO_ROOT, check=True)


def metagame_respond(episodes, seat, seed):
    cmd = [METAGAME, "respond", "--game", GAME, "--against", "uniform", "--seat", str(seat),
           "--learner", "q-learning", "--episodes", str(episodes), "--seed", str(seed),
           "--points", "1", "--json"]
    start = time.perf_counter()
    out = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, check=True).stdout
    process_seconds = time.perf_counter() - start
    summaries = [json.loads(line) for line in out.splitlines()
                 if line.strip().startswith("{") and json.loads(line).get("summary")]
    if len(summaries) != 1:
        raise RuntimeError(f"no summary line in metagame respond output: {out!r}")
    summary = summaries[0]
    summary["process_seconds"] = process_seconds
    summary["episodes_per_second"] = episodes / summary["seconds"]
    summary["command"] = " ".join(os.path.relpath(c, REPO_ROOT) if c == METAGAME else c for c in cmd)
    return summary


def metagame_throughput(episodes):
    out = subprocess.run([THROUGHPUT, "q", "1", str(episodes)], cwd=REPO_ROOT,
                         capture_output=True, text=True, check=True).stdout
    m = re.search(r"in ([0-9.]+) s = ([0-9.]+) M episodes/s", out)
    if not m:
        raise RuntimeError(f"unexpected output: {out!r}")
    return {"episodes": episodes, "seconds": float(m.group(1)),
            "episodes_per_second": float(m.group(2)) * 1e6, "output": out.strip()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--episodes", type=int, default=20_000,
                    help="training episodes on both sides (OpenSpiel and metagame respond)")
    ap.add_argument("--metagame-episodes", type=int, default=10_000_000,
                    help="episodes of the extra metagame respond run and of the throughput example")
    ap.add_argument("--seat", type=int, choices=[0, 1], default=0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--build", action="store_true", help="cargo build the binaries even if present")
    args = ap.parse_args()
    try:
        ensure_binaries(args.build)
    except (subprocess.CalledProcessError, OSError) as e:
        print(f"[setup] build failed: {e}", file=sys.stderr)
        return 2

    ours = metagame_respond(args.episodes, args.seat, args.seed)
    ours_long = metagame_respond(args.metagame_episodes, args.seat, args.seed)
    raw = metagame_throughput(args.metagame_episodes)
    theirs = openspiel_q_learning(args.episodes, args.seat, args.seed)

    print(f"{GAME}, seat {args.seat} vs uniform random, tabular Q-learning, seed {args.seed}")
    head = (f"{'implementation':<42} {'episodes':>11} {'seconds':>9} {'episodes/s':>12} "
            f"{'value':>9} {'BR value':>9} {'gap':>9} {'gap %rng':>9}")
    print(head)
    print("-" * len(head))
    rows = [("OpenSpiel tabular_qlearner (Python)", theirs, theirs["train_seconds"]),
            ("metagame respond q-learning", ours, ours["seconds"]),
            ("metagame respond q-learning", ours_long, ours_long["seconds"])]
    for name, r, secs in rows:
        print(f"{name:<42} {r['episodes']:>11,} {secs:>9.3f} {r['episodes_per_second']:>12,.0f} "
              f"{r['value']:>9.5f} {r['best_response_value']:>9.5f} {r['gap']:>9.5f} "
              f"{100 * r['gap_fraction_of_range']:>8.3f}%")
    print(f"{'metagame throughput example (1 thread)':<42} {raw['episodes']:>11,} "
          f"{raw['seconds']:>9.3f} {raw['episodes_per_second']:>12,.0f}")
    print("OpenSpiel seconds: training only (exact scoring took "
          f"{theirs['eval_seconds']:.2f} s more); metagame seconds: training + one exact scoring")
    print(f"OpenSpiel greedy policy: {theirs['visited_information_states']} of "
          f"{theirs['seat_information_states']} seat-{args.seat} information states visited "
          "(the rest uniform)")
    br_ok = abs(theirs["best_response_value"] - ours["best_response_value"]) <= 1e-9
    print(f"best-response value vs uniform: OpenSpiel {theirs['best_response_value']:.12f}, "
          f"metagame {ours['best_response_value']:.12f} -> {'agree' if br_ok else 'DISAGREE'}")
    ratio_same = ours["episodes_per_second"] / theirs["episodes_per_second"]
    ratio_raw = raw["episodes_per_second"] / theirs["episodes_per_second"]
    print(f"throughput ratio metagame / OpenSpiel: {ratio_same:,.0f}x at {args.episodes:,} episodes "
          f"(respond), {ratio_raw:,.0f}x raw training (throughput example, "
          f"{args.metagame_episodes:,} episodes)")

    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "learners.json"), "w") as f:
        json.dump({
            "game": GAME, "seat": args.seat, "seed": args.seed, "opponent": "uniform",
            "episodes": args.episodes, "metagame_episodes": args.metagame_episodes,
            "openspiel": theirs, "metagame": ours, "metagame_long": ours_long,
            "metagame_throughput": raw, "best_response_values_agree": br_ok,
            "openspiel_episodes_per_second": theirs["episodes_per_second"],
            "metagame_episodes_per_second": raw["episodes_per_second"],
            "throughput_ratio_same_episodes": ratio_same, "throughput_ratio_raw": ratio_raw,
        }, f, indent=2)
        f.write("\n")
    return 0 if br_ok else 1


if __name__ == "__main__":
    sys.exit(main())
