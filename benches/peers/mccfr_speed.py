"""MCCFR iterations per second: metagame's `mccfr` loop vs OpenSpiel's C++ solvers.

Run (from the repository root, after `cargo build --release`):

    /path/to/venv/bin/python benches/peers/mccfr_speed.py [--game leduc_poker]
        [--iterations 200000] [--repeats 3] [--metagame-bin target/release/metagame]

(a venv with `pip install open_spiel==2.0.2`.) An iteration is OpenSpiel's: one traversal
per player. Both sides are timed over the iterations alone, NashConv excluded:

- OpenSpiel: `solver.run_iteration()` in a loop, timed around the loop, for
  `pyspiel.OutcomeSamplingMCCFRSolver(game, 0.6, seed)` and
  `pyspiel.ExternalSamplingMCCFRSolver(game, seed, MCCFRAverageType.SIMPLE)` (C++; the
  Python loop around `run_iteration` costs well under a microsecond an iteration).
- metagame: `metagame run` of a config with `traversals_per_iteration = N` and
  `max_iterations = 1`; the time is the report's `times.oracle_s` of iteration 1 (the N
  traversals per player, without the tree build and the NashConv).

The two sides alternate, `--repeats` times each, and the median of each is compared, so
that both see the same load on a shared machine. Prints one line per scheme and a JSON line
with every time.

Measured (AMD EPYC, 2 cores shared with other builds, load average about 11; open_spiel
2.0.2; `--iterations 200000 --openspiel-iterations 20000 --repeats 5`):

    mccfr-outcome:  metagame 549,091 it/s (1.821 us/it), OpenSpiel C++ 13,822 it/s (72.349 us/it), ratio 39.7x
    mccfr-external: metagame 320,355 it/s (3.122 us/it), OpenSpiel C++ 5,975 it/s (167.356 us/it), ratio 53.6x

The load inflates both sides' times; the ratio is the figure to read (an earlier run under
the same load gave 38x and 59x).
"""
import argparse
import json
import os
from machine import cpu_model  # the script's folder is on sys.path
import statistics
import subprocess
import tempfile
import time

import pyspiel

HERE = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


def openspiel_seconds(game, sampling, iterations, seed):
    if sampling == "outcome":
        solver = pyspiel.OutcomeSamplingMCCFRSolver(game, 0.6, seed)
    else:
        solver = pyspiel.ExternalSamplingMCCFRSolver(game, seed, pyspiel.MCCFRAverageType.SIMPLE)
    run = solver.run_iteration
    started = time.perf_counter()
    for _ in range(iterations):
        run()
    return time.perf_counter() - started


def metagame_seconds(binary, game, sampling, iterations, seed):
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "mccfr.toml")
        with open(config, "w") as f:
            f.write(f'game = "{game}"\nalgorithm = "mccfr"\nsampling = "{sampling}"\n'
                    f"traversals_per_iteration = {iterations}\nseed = {seed}\nmax_iterations = 1\n")
        out = os.path.join(tmp, "run")
        subprocess.run([binary, "run", config, "--out", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
        return report["iterations"][1]["times"]["oracle_s"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--game", default="leduc_poker")
    parser.add_argument("--iterations", type=int, default=200_000)
    parser.add_argument("--openspiel-iterations", type=int, default=None,
                        help="iterations for OpenSpiel (default: --iterations / 10)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--metagame-bin", default=os.path.join(REPO_ROOT, "target", "release", "metagame"))
    args = parser.parse_args()
    os_iterations = args.openspiel_iterations or max(1, args.iterations // 10)
    game = pyspiel.load_game(args.game)
    print(f"{args.game}, CPU {cpu_model()}, {os.cpu_count()} logical CPUs; "
          f"OpenSpiel {os_iterations} iterations, metagame {args.iterations}, median of {args.repeats}")
    results = {}
    for sampling in ["outcome", "external"]:
        ours, theirs = [], []
        for r in range(args.repeats):
            theirs.append(openspiel_seconds(game, sampling, os_iterations, r + 1) / os_iterations)
            ours.append(metagame_seconds(args.metagame_bin, args.game, sampling, args.iterations, r + 1)
                        / args.iterations)
        o, t = statistics.median(ours), statistics.median(theirs)
        results[sampling] = {"metagame_s_per_iteration": ours, "openspiel_s_per_iteration": theirs}
        print(f"mccfr-{sampling}: metagame {1 / o:,.0f} it/s ({o * 1e6:.3f} us/it), "
              f"OpenSpiel C++ {1 / t:,.0f} it/s ({t * 1e6:.3f} us/it), ratio {t / o:.1f}x", flush=True)
    print(json.dumps({"game": args.game, "cpu": cpu_model(), "results": results}))


if __name__ == "__main__":
    main()
