"""Reference NashConv values of OpenSpiel's CFR family, for tests/it/cfr.rs.

Run: python3 -m venv /tmp/osvenv && /tmp/osvenv/bin/pip install open_spiel==2.0.2
     /tmp/osvenv/bin/python benches/peers/cfr_reference.py [--leduc3 | --psro-paper]

Prints one JSON line per (game, algorithm, implementation) with the NashConv
(pyspiel.nash_conv; the Python solvers' policies converted with
policy.python_policy_to_pyspiel_policy) of the average policy, and of the current policy, at each
checkpoint, in full precision (repr of the float).

- cfr, cfr+ (C++): pyspiel.CFRSolver / pyspiel.CFRPlusSolver, defaults
  (alternating updates; CFR+ = regret matching+ and linear averaging).
- cfr-simultaneous (Python): cfr._CFRSolver(game, alternating_updates=False,
  linear_averaging=False, regret_matching_plus=False).
- linear, dcfr (Python): discounted_cfr.LCFRSolver / DCFRSolver (alpha 1.5,
  beta 0, gamma 2).
"""
import json
import sys

import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import cfr, discounted_cfr


def nash_conv(game, pol):
    if isinstance(pol, policy_lib.TabularPolicy):  # the Python solvers' policies
        pol = policy_lib.python_policy_to_pyspiel_policy(pol)
    return pyspiel.nash_conv(game, pol)


def run(game_str, name, make, checkpoints, current=True):
    game = pyspiel.load_game(game_str)
    solver = make(game)
    avg, cur = {}, {}
    for it in range(1, max(checkpoints) + 1):
        if current and it in checkpoints:
            # The current policy used in iteration `it` (before its update).
            cur[it - 1] = nash_conv(game, solver.current_policy())
        solver.evaluate_and_update_policy()
        if it in checkpoints:
            avg[it] = nash_conv(game, solver.average_policy())
            if current:
                cur[it] = nash_conv(game, solver.current_policy())
    print(json.dumps({"game": game_str, "algo": name, "average": avg,
                      "current": cur}), flush=True)


def main():
    cpp_cfr = lambda g: pyspiel.CFRSolver(g)
    cpp_plus = lambda g: pyspiel.CFRPlusSolver(g)
    if "--leduc3" in sys.argv:
        # Minutes per C++ iteration on 1.8 M histories: the first iterations only.
        run("leduc_poker(players=3)", "cfr", cpp_cfr, [1, 2, 5], current=False)
        return
    if "--psro-paper" in sys.argv:
        # Lanctot et al. 2017 (arXiv:1711.00832), App. E.2: Leduc CFR, 500 iterations.
        run("leduc_poker", "cfr-simultaneous", lambda g: cfr._CFRSolver(
            g, alternating_updates=False, linear_averaging=False,
            regret_matching_plus=False), [500], current=False)
        return
    for game in ["kuhn_poker", "leduc_poker"]:
        run(game, "cfr", cpp_cfr, [1, 10, 100, 500, 1000])
        run(game, "cfr+", cpp_plus, [1, 10, 100, 1000])
        run(game, "linear", discounted_cfr.LCFRSolver, [1, 10, 100])
        run(game, "dcfr", discounted_cfr.DCFRSolver, [1, 10, 100])
        run(game, "cfr-simultaneous", lambda g: cfr._CFRSolver(
            g, alternating_updates=False, linear_averaging=False,
            regret_matching_plus=False), [1, 10, 100])
    run("kuhn_poker(players=3)", "cfr", cpp_cfr, [1, 10, 100])
    run("kuhn_poker(players=3)", "cfr+", cpp_plus, [1, 10, 100])


if __name__ == "__main__":
    main()
