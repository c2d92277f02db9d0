"""Reference NashConv curves of OpenSpiel's Monte Carlo CFR, for tests/it/mccfr.rs.

Run: /path/to/venv/bin/python benches/peers/mccfr_reference.py [--seeds 5] [--json]
     (a venv with `pip install open_spiel==2.0.2`; Python 3.11)

For each game and sampling scheme, OpenSpiel's C++ solvers (through pyspiel) run with
seeds 1..N, and the NashConv (pyspiel.nash_conv) of the average policy is taken after
1e3, 1e4 and 1e5 iterations (an OpenSpiel iteration is one traversal per player, player 0
first). Prints, per (game, scheme, checkpoint), the min and max over the seeds, then one
JSON line per run with every value in full precision.

- outcome: pyspiel.OutcomeSamplingMCCFRSolver(game, epsilon=0.6, seed) (its defaults).
- external: pyspiel.ExternalSamplingMCCFRSolver(game, seed, MCCFRAverageType.SIMPLE)
  (the default average type).
- external-full: the same with MCCFRAverageType.FULL (Kuhn only: a full tree walk per
  iteration).

The C++ average policy falls back to its default (uniform) policy at infosets no traversal
has visited, through a lookup by state that `pyspiel.nash_conv` (which looks up by string)
does not make; the policy is therefore copied into a Python TabularPolicy state by state
before it is scored.
"""
import argparse
import json

import pyspiel
from open_spiel.python import policy as policy_lib

CHECKPOINTS = [1_000, 10_000, 100_000]
GAMES = ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"]


def nash_conv(game, table, average):
    for i, state in enumerate(table.states):
        probs = average.action_probabilities(state)
        row = table.action_probability_array[i]
        row[:] = 0.0
        for action, p in probs.items():
            row[action] = p
    return pyspiel.nash_conv(game, policy_lib.python_policy_to_pyspiel_policy(table))


def solvers(game_str):
    out = [
        ("outcome", lambda g, s: pyspiel.OutcomeSamplingMCCFRSolver(g, 0.6, s)),
        ("external", lambda g, s: pyspiel.ExternalSamplingMCCFRSolver(
            g, s, pyspiel.MCCFRAverageType.SIMPLE)),
    ]
    if game_str == "kuhn_poker":
        out.append(("external-full", lambda g, s: pyspiel.ExternalSamplingMCCFRSolver(
            g, s, pyspiel.MCCFRAverageType.FULL)))
    return out


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--games", nargs="*", default=GAMES)
    args = parser.parse_args()
    lines = []
    for game_str in args.games:
        game = pyspiel.load_game(game_str)
        table = policy_lib.TabularPolicy(game)
        for name, make in solvers(game_str):
            runs = []
            for seed in range(1, args.seeds + 1):
                solver = make(game, seed)
                values = {}
                for it in range(1, CHECKPOINTS[-1] + 1):
                    solver.run_iteration()
                    if it in CHECKPOINTS:
                        values[it] = nash_conv(game, table, solver.average_policy())
                runs.append(values)
                lines.append(json.dumps({"game": game_str, "sampling": name, "seed": seed,
                                         "nash_conv": values}))
            for it in CHECKPOINTS:
                vals = [r[it] for r in runs]
                print(f"{game_str} {name} {it}: min {min(vals)!r} max {max(vals)!r}", flush=True)
    for line in lines:
        print(line)


if __name__ == "__main__":
    main()
