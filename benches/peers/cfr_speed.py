"""CFR+ seconds per iteration: metagame's `cfr` loop vs OpenSpiel's C++ `CFRPlusSolver`.

Run (from the repository root, after `cargo build --release`):

    target/python-venv/bin/python benches/peers/cfr_speed.py
        [--games leduc_poker liars_dice "goofspiel(num_cards=4,imp_info=True,points_order=descending)"]
        [--iterations 100] [--repeats 3] [--metagame-bin target/release/metagame]

(any venv with `pip install open_spiel==2.0.2`; `scripts/test` makes target/python-venv.)
Both sides are timed over the iterations alone, NashConv and the game's set-up excluded:

- OpenSpiel: `pyspiel.CFRPlusSolver(game)`, then `solver.evaluate_and_update_policy()` in a
  loop, timed around the loop (alternating updates, regret matching+, linear averaging).
- metagame: `metagame run` of a config with `algorithm = "cfr"`, `variant = "cfr+"` and
  `max_iterations = N`; the time is the sum over iterations 1..N of the report's
  `times.oracle_s` (the regret walks and the average update of each iteration, without the
  tree build and the NashConv of the average and current policies).

The two sides alternate, `--repeats` times each, and the median of each is compared, so
that both see the same load on a shared machine. Both sides' NashConv after N iterations is
printed as a check that they ran the same algorithm (OpenSpiel's from
`pyspiel.nash_conv` on its average policy). Prints one line per game and a JSON line with
every time.

`goofspiel(num_cards=4)` with OpenSpiel's default `imp_info=False` is a game of imperfect
recall in the turn-based form, which metagame refuses for tree algorithms; the default game
list uses the imperfect-information, descending-points form instead.
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
DEFAULT_GAMES = ["leduc_poker", "liars_dice", "goofspiel(num_cards=4,imp_info=True,points_order=descending)"]


def openspiel_game(spec):
    game = pyspiel.load_game(spec)
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.load_game_as_turn_based(spec)
    return game


def openspiel_run(game, iterations):
    solver = pyspiel.CFRPlusSolver(game)
    step = solver.evaluate_and_update_policy
    started = time.perf_counter()
    for _ in range(iterations):
        step()
    seconds = time.perf_counter() - started
    nash_conv = pyspiel.nash_conv(game, solver.average_policy())
    return seconds / iterations, nash_conv


def metagame_run(binary, spec, iterations):
    with tempfile.TemporaryDirectory() as tmp:
        config = os.path.join(tmp, "cfr.toml")
        with open(config, "w") as f:
            f.write(f"game = {json.dumps(spec)}\nalgorithm = \"cfr\"\nvariant = \"cfr+\"\n"
                    f"max_iterations = {iterations}\n")
        out = os.path.join(tmp, "run")
        subprocess.run([binary, "run", config, "--out", out], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        with open(os.path.join(out, "report.json")) as f:
            report = json.load(f)
    its = report["iterations"]
    seconds = sum(r["times"]["oracle_s"] for r in its[1:])
    return seconds / (len(its) - 1), its[-1]["nash_conv"]


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--games", nargs="*", default=DEFAULT_GAMES)
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--metagame-bin", default=os.path.join(REPO_ROOT, "target", "release", "metagame"))
    args = parser.parse_args()
    print(f"CPU {cpu_model()}, {os.cpu_count()} logical CPUs, load average "
          f"{os.getloadavg()[0]:.1f}; {args.iterations} CFR+ iterations, median of {args.repeats}")
    results = {}
    for spec in args.games:
        game = openspiel_game(spec)
        ours, theirs = [], []
        for _ in range(args.repeats):
            t, their_nc = openspiel_run(game, args.iterations)
            theirs.append(t)
            o, our_nc = metagame_run(args.metagame_bin, spec, args.iterations)
            ours.append(o)
        o, t = statistics.median(ours), statistics.median(theirs)
        results[spec] = {"metagame_s_per_iteration": ours, "openspiel_s_per_iteration": theirs,
                         "metagame_nash_conv": our_nc, "openspiel_nash_conv": their_nc}
        print(f"{spec}: metagame {o * 1e3:.3f} ms/it, OpenSpiel C++ {t * 1e3:.3f} ms/it, "
              f"ratio {t / o:.1f}x; NashConv after {args.iterations}: metagame {our_nc:.9g}, "
              f"OpenSpiel {their_nc:.9g}", flush=True)
    print(json.dumps({"cpu": cpu_model(), "iterations": args.iterations, "results": results}))


if __name__ == "__main__":
    main()
