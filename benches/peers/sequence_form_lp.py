#!/usr/bin/env python3
"""Peer benchmark: the exact equilibrium of a two-player zero-sum game by the sequence-form
LP, OpenSpiel's `sequence_form_lp` (Python; cvxpy with ECOS, its default) vs `metagame solve --game SPEC`.

Usage (from anywhere; plain python3 is fine, the script bootstraps its venv):

    python3 benches/peers/sequence_form_lp.py                        # kuhn, leduc, liar's dice
    python3 benches/peers/sequence_form_lp.py --games leduc_poker --repeat 5
    python3 benches/peers/sequence_form_lp.py --budget 60             # OpenSpiel's time per game

For each game it
  * times OpenSpiel's `sequence_form_lp.solve_zero_sum_game(game)` (LP built from the game
    and solved; best of --repeat runs, each in a child process stopped after --budget
    seconds) and computes the NashConv of its two policies with OpenSpiel's
    `exploitability.nash_conv` (skipped past --certify-below histories);
  * runs `metagame solve --game SPEC --json --repeat N` (target/release/metagame) and reads
    `value`, `nash_conv`, `seconds` (one solve: LP built and solved, certificate from the
    tree), `seconds_per_solve` and `tree_build_seconds`; the whole process is timed too;
  * prints both values, their difference, both certificates and the ratios
    (OpenSpiel / metagame solve, and / metagame's whole process), with the CPU; raw results
    go to benches/peers/results/sequence_form_lp.json.

Exit status: 0 when every value OpenSpiel gave agrees with metagame's to --tol, 1 on a
mismatch, 2 on setup failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))

from peer_venv import RESULTS, ensure_venv  # noqa: E402

if __name__ == "__main__":
    ensure_venv(
        __file__,
        ["open_spiel==2.0.2", "numpy", "cvxpy", "ecos"],
        "numpy, pyspiel, cvxpy, ecos",
        {"open_spiel": "2.0.2"},
    )

import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402

from machine import cpu_model  # noqa: E402

GAMES = ["kuhn_poker", "leduc_poker", "liars_dice"]
HISTORIES = {"kuhn_poker": 58, "leduc_poker": 9457, "liars_dice": 294883}


def openspiel_solve(spec, certify, queue):
    """One OpenSpiel solve in this (child) process: (value, seconds, nash_conv or None)."""
    import pyspiel
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability, sequence_form_lp

    game = pyspiel.load_game(spec)
    start = time.perf_counter()
    value, _, pi0, pi1 = sequence_form_lp.solve_zero_sum_game(game)
    seconds = time.perf_counter() - start
    nash_conv = None
    if certify:
        merged = os_policy.merge_tabular_policies([pi0, pi1], game)
        nash_conv = exploitability.nash_conv(game, merged)
    queue.put((float(value), seconds, nash_conv))


def run_openspiel(spec, repeat, budget, certify_below):
    """Best of `repeat` OpenSpiel solves, each stopped after `budget` seconds; None if none answered."""
    best = None
    for k in range(repeat):
        queue = multiprocessing.Queue()
        certify = k == 0 and HISTORIES.get(spec, certify_below + 1) <= certify_below
        child = multiprocessing.Process(target=openspiel_solve, args=(spec, certify, queue))
        child.start()
        child.join(budget)
        if child.is_alive():
            child.terminate()
            child.join()
            print(f"[openspiel] {spec}: no answer within {budget} s", file=sys.stderr)
            return best
        if child.exitcode != 0:
            print(f"[openspiel] {spec}: failed (exit {child.exitcode})", file=sys.stderr)
            return best
        value, seconds, nash_conv = queue.get()
        if best is None:
            best = {"value": value, "seconds": seconds, "nash_conv": nash_conv}
        else:
            best["seconds"] = min(best["seconds"], seconds)
    return best


def run_metagame(binary, spec, repeat):
    argv = [binary, "solve", "--game", spec, "--json", "--repeat", str(repeat)]
    start = time.perf_counter()
    out = subprocess.run(argv, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)}: {out.stderr.strip()}")
    result = json.loads(out.stdout)
    # The process's time without the repeats: startup, tree build, one solve.
    result["process_seconds"] = wall - result.get("seconds_per_solve", 0.0) * repeat
    return result


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--games", nargs="+", default=GAMES)
    parser.add_argument("--repeat", type=int, default=3, help="solves per side (best / mean)")
    parser.add_argument("--budget", type=float, default=600.0, help="seconds per OpenSpiel solve")
    parser.add_argument("--certify-below", type=int, default=20000,
                        help="compute OpenSpiel's NashConv for games with at most this many histories")
    parser.add_argument("--tol", type=float, default=1e-9, help="largest |value difference| accepted")
    parser.add_argument("--metagame-bin", default=os.path.join(REPO_ROOT, "target", "release", "metagame"))
    args = parser.parse_args()
    if not os.path.exists(args.metagame_bin):
        print(f"{args.metagame_bin} not found: cargo build --release first", file=sys.stderr)
        sys.exit(2)

    cpu = cpu_model()
    print(f"CPU: {cpu}, {os.cpu_count()} cores")
    header = (f"{'game':<12} {'OpenSpiel value':>17} {'metagame value':>17} {'|diff|':>8} "
              f"{'OS nash_conv':>12} {'mg nash_conv':>12} {'OS s':>8} {'mg s':>8} {'mg proc s':>9} "
              f"{'OS/mg':>7} {'OS/proc':>7}")
    print(header)
    rows, ok = [], True
    for spec in args.games:
        mg = run_metagame(args.metagame_bin, spec, args.repeat)
        os_result = run_openspiel(spec, args.repeat, args.budget, args.certify_below)
        row = {"game": spec, "metagame": mg, "openspiel": os_result, "cpu": cpu}
        rows.append(row)
        mg_seconds = mg.get("seconds_per_solve", mg["seconds"])
        if os_result is None:
            print(f"{spec:<12} {'(no answer)':>17} {mg['value']:>17.12f} {'':>8} {'':>12} "
                  f"{mg['nash_conv']:>12.2e} {'>' + str(int(args.budget)):>8} {mg_seconds:>8.4f} "
                  f"{mg['process_seconds']:>9.4f}")
            continue
        diff = abs(os_result["value"] - mg["value"])
        row["value_difference"] = diff
        ok &= diff <= args.tol
        os_nc = os_result["nash_conv"]
        os_nc_text = f"{os_nc:.2e}" if os_nc is not None else "-"
        print(f"{spec:<12} {os_result['value']:>17.12f} {mg['value']:>17.12f} {diff:>8.1e} "
              f"{os_nc_text:>12} {mg['nash_conv']:>12.2e} {os_result['seconds']:>8.4f} {mg_seconds:>8.4f} "
              f"{mg['process_seconds']:>9.4f} {os_result['seconds'] / mg_seconds:>7.1f} "
              f"{os_result['seconds'] / mg['process_seconds']:>7.1f}")
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "sequence_form_lp.json"), "w") as f:
        json.dump(rows, f, indent=1)
    if not ok:
        print(f"MISMATCH: a value differs from OpenSpiel's by more than {args.tol}", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
