#!/usr/bin/env python3
"""OpenSpiel's side of `metagame bench`: the same grid, written in the same bench.json format
(docs/src/bench.md), for `metagame bench ... --compare PEER.json`.

Usage (from anywhere; plain python3 is fine, the script bootstraps benches/peers/.venv):

    python3 benches/peers/bench.py --games kuhn_poker,leduc_poker,liars_dice \\
        --algorithms cfr+,dcfr,mccfr-outcome,psro-nash,xfp --budget 30s \\
        [--seeds K] [--target NASHCONV] [--out benches/peers/results/bench_openspiel.json]

Algorithms (open_spiel 2.0.2):
  cfr, cfr+        C++ pyspiel.CFRSolver / pyspiel.CFRPlusSolver (alternating updates)
  linear-cfr, dcfr Python discounted_cfr.LCFRSolver / DCFRSolver (alpha 1.5, beta 0, gamma 2)
  mccfr-outcome    C++ pyspiel.OutcomeSamplingMCCFRSolver(game, 0.6, seed)
  mccfr-external   C++ pyspiel.ExternalSamplingMCCFRSolver(game, seed, SIMPLE)
                   (an iteration here is 1000 of OpenSpiel's, as metagame's default
                   traversals_per_iteration)
  xfp              Python fictitious_play.XFPSolver
  psro-<solver>    Python psro_v2 with exact payoffs and exact best responses, as
                   benches/peers/psro.py runs it (PEERS.md section 4)

NashConv: pyspiel.nash_conv of the average policy (the Python solvers' policies converted
with python_policy_to_pyspiel_policy; PSRO: the aggregated meta-mixture scored by
exploitability.nash_conv, as psro.py does).

Timing. `seconds` is the solver's own time: setup and iterations, NashConv evaluations
excluded (metagame's `seconds` include its NashConv at every iteration). OpenSpiel's
NashConv of a liar's dice policy takes seconds, so the peer is evaluated at iterations 0-5
and then whenever its training time has grown by a quarter since the last evaluation, and
after the last iteration. A time budget is checked after each iteration (the last one may
pass it, as metagame's do). With `--target`, a cell is evaluated on metagame's CFR schedule
instead (every iteration up to 20, then each ceil(s/20) after the last one s) and stops at
the first evaluation at or below the target, as metagame's cells do. Seeds: the MCCFR solvers get seeds 0..K-1 (OpenSpiel's own
generators, not metagame's streams); the others are deterministic and run once.
"""

import argparse
import json
import os
import platform
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

from peer_venv import RESULTS, ensure_venv  # noqa: E402

if __name__ == "__main__":
    ensure_venv(__file__, ["open_spiel==2.0.2", "numpy", "scipy", "cvxpy", "ecos", "matplotlib",
                          "networkx"],
                "numpy, scipy, pyspiel, cvxpy, ecos, matplotlib, networkx", {"open_spiel": "2.0.2"})

import pyspiel  # noqa: E402
from open_spiel.python import policy as policy_lib  # noqa: E402
from open_spiel.python.algorithms import discounted_cfr  # noqa: E402
from open_spiel.python.algorithms import fictitious_play  # noqa: E402

FORMAT = "metagame-bench/1"
TRAVERSALS_PER_ITERATION = 1000
SEEDED = ("mccfr-outcome", "mccfr-external")


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def machine():
    cpu = platform.processor() or "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    m = {"cpu": cpu, "cores": os.cpu_count() or 1, "os": sys.platform}
    try:
        with open("/proc/loadavg") as f:
            m["load_average"] = float(f.read().split()[0])
    except OSError:
        pass
    return m


def parse_budget(text):
    if text.endswith("s"):
        s = float(text[:-1])
        if not s > 0:
            raise SystemExit(f"error: budget `{text}`: the time per cell must be more than 0 seconds")
        return {"kind": "seconds", "value": s}
    n = int(text)
    if n < 1:
        raise SystemExit(f"error: budget `{text}`: the iterations per cell must be at least 1")
    return {"kind": "iterations", "value": n}


def copied(table, pol):
    """`pol` copied into the Python TabularPolicy `table` state by state (as
    mccfr_reference.py does: the C++ MCCFR average falls back to uniform only through a
    lookup by state, and XFP's average is a joint policy of callables)."""
    for i, state in enumerate(table.states):
        row = table.action_probability_array[i]
        row[:] = 0.0
        for action, p in pol.action_probabilities(state).items():
            row[action] = p
    return policy_lib.python_policy_to_pyspiel_policy(table)


class Cell:
    """One solver: `step()` runs one iteration, `nash_conv()` scores its policy."""

    def __init__(self, algorithm, game, seed):
        self.game = game
        self.table = None
        if algorithm == "cfr":
            s = pyspiel.CFRSolver(game)
            self.step, self.policy = s.evaluate_and_update_policy, s.average_policy
        elif algorithm == "cfr+":
            s = pyspiel.CFRPlusSolver(game)
            self.step, self.policy = s.evaluate_and_update_policy, s.average_policy
        elif algorithm == "linear-cfr":
            s = discounted_cfr.LCFRSolver(game)
            self.step, self.policy = s.evaluate_and_update_policy, s.average_policy
        elif algorithm == "dcfr":
            s = discounted_cfr.DCFRSolver(game)
            self.step, self.policy = s.evaluate_and_update_policy, s.average_policy
        elif algorithm in SEEDED:
            if algorithm == "mccfr-outcome":
                s = pyspiel.OutcomeSamplingMCCFRSolver(game, 0.6, seed)
            else:
                s = pyspiel.ExternalSamplingMCCFRSolver(game, seed, pyspiel.MCCFRAverageType.SIMPLE)

            def step():
                for _ in range(TRAVERSALS_PER_ITERATION):
                    s.run_iteration()
            self.step, self.policy = step, s.average_policy
            self.table = policy_lib.TabularPolicy(game)
        elif algorithm == "xfp":
            s = fictitious_play.XFPSolver(game)
            self.step, self.policy = s.iteration, s.average_policy
            self.table = policy_lib.TabularPolicy(game)
        elif algorithm.startswith("psro-"):
            import numpy as np
            import psro as peer_psro  # benches/peers/psro.py: the same PSRO set-up
            np.random.seed(1)
            _, s = peer_psro.make_psro(game, algorithm[len("psro-"):])
            self.step = s.iteration
            self.nash_conv = lambda: peer_psro.psro_nash_conv(game, s)
        else:
            raise SystemExit(f"error: unknown algorithm `{algorithm}`")

    def nash_conv(self):  # replaced per instance for PSRO
        pol = self.policy()
        if self.table is not None:
            pol = copied(self.table, pol)
        elif isinstance(pol, policy_lib.TabularPolicy):  # the Python CFR solvers'
            pol = policy_lib.python_policy_to_pyspiel_policy(pol)
        return float(pyspiel.nash_conv(self.game, pol))


def on_schedule(t):
    """metagame's NashConvSchedule::Auto: every iteration up to 20, then ~5% apart."""
    s = 20
    if t <= s:
        return True
    while s < t:
        s += -(-s // 20)
    return s == t


def run_cell(algorithm, game_name, seed, budget, target=None):
    records = []
    start = time.perf_counter()
    game = pyspiel.load_game(game_name)
    cell = Cell(algorithm, game, seed)
    train = time.perf_counter() - start
    last_eval = None
    iteration = 0

    def evaluate():
        nonlocal last_eval
        nc = cell.nash_conv()
        records.append({"algorithm": algorithm, "game": game_name, "seed": seed,
                        "iteration": iteration, "seconds": train, "nash_conv": nc})
        last_eval = train

    evaluate()
    while True:
        if budget["kind"] == "seconds" and train >= budget["value"]:
            break
        if budget["kind"] == "iterations" and iteration >= budget["value"]:
            break
        t0 = time.perf_counter()
        cell.step()
        train += time.perf_counter() - t0
        iteration += 1
        if target is not None:
            if on_schedule(iteration):
                evaluate()
                if records[-1]["nash_conv"] <= target:
                    break
        elif iteration <= 5 or train >= 1.25 * last_eval:
            evaluate()
    if records[-1]["iteration"] != iteration:
        evaluate()
    log(f"  OpenSpiel {game_name} {algorithm} seed {seed}: NashConv {records[-1]['nash_conv']:.6g} "
        f"after {iteration} iterations, {train:.1f} s (+{time.perf_counter() - start - train:.1f} s evaluating)")
    cell_entry = {"algorithm": algorithm, "game": game_name, "seed": seed,
                  "seeded": algorithm in SEEDED, "status": "finished",
                  "note": ("target_nash_conv" if target is not None and records[-1]["nash_conv"] <= target
                           else "time_budget" if budget["kind"] == "seconds" else "max_iterations"),
                  "iterations": iteration, "seconds": train}
    return cell_entry, records


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", required=True)
    ap.add_argument("--algorithms", required=True)
    ap.add_argument("--budget", required=True, help="seconds per cell such as 30s, or iterations")
    ap.add_argument("--seeds", type=int, default=1)
    ap.add_argument("--target", type=float, default=None,
                    help="stop each cell at this NashConv, evaluated on metagame's CFR schedule")
    ap.add_argument("--out", default=os.path.join(RESULTS, "bench_openspiel.json"))
    args = ap.parse_args()
    budget = parse_budget(args.budget)
    games = [g for g in args.games.split(",") if g]
    algorithms = [a for a in args.algorithms.split(",") if a]
    algorithms = ["linear-cfr" if a == "lcfr" else a for a in algorithms]
    out = {"format": FORMAT, "tool": "OpenSpiel", "version": pyspiel.__version__ if hasattr(pyspiel, "__version__") else "2.0.2",
           "machine": machine(), "budget": budget, "seeds": args.seeds, "games": games,
           **({"target": args.target} if args.target is not None else {}),
           "algorithms": algorithms, "started": int(time.time()), "cells": [], "records": []}
    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    for game in games:
        for algorithm in algorithms:
            for seed in range(args.seeds if algorithm in SEEDED else 1):
                try:
                    cell, records = run_cell(algorithm, game, seed, budget, args.target)
                except SystemExit:
                    raise
                except Exception as e:  # an algorithm OpenSpiel cannot run on the game
                    log(f"  OpenSpiel skipped {algorithm} on {game}: {type(e).__name__}: {e}")
                    cell = {"algorithm": algorithm, "game": game, "seed": seed,
                            "seeded": algorithm in SEEDED, "status": "skipped",
                            "note": f"{type(e).__name__}: {e}", "iterations": 0, "seconds": 0.0}
                    records = []
                out["cells"].append(cell)
                out["records"].extend(records)
                with open(args.out + ".tmp", "w") as f:
                    json.dump(out, f, indent=1)
                os.replace(args.out + ".tmp", args.out)
    log(f"wrote {args.out}")


if __name__ == "__main__":
    main()
