"""Reference NashConv values of OpenSpiel's CFR family, for tests/it/cfr.rs.

Run: python3 -m venv /tmp/osvenv && /tmp/osvenv/bin/pip install open_spiel==2.0.2
     /tmp/osvenv/bin/python benches/peers/cfr_reference.py [--leduc3 | --psro-paper | --pcfr]

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
- pcfr+ (Python, `--pcfr`): OpenSpiel has no predictive CFR+, so `PredictiveCfrPlus` below
  builds it on OpenSpiel's Python `cfr._CFRSolver` walk as Farina, Kroer and Sandholm (AAAI
  2021) define it: alternating updates; per infoset, with r the walk's instantaneous
  regrets, R <- max(R + r, 0) and the next policy regret matching on R + r; the average
  weighted by t^2.
"""
import json
import sys

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import cfr, discounted_cfr


def nash_conv(game, pol):
    if isinstance(pol, policy_lib.TabularPolicy):  # the Python solvers' policies
        pol = policy_lib.python_policy_to_pyspiel_policy(pol)
    return pyspiel.nash_conv(game, pol)


class PredictiveCfrPlus(cfr._CFRSolver):
  """Predictive CFR+ on OpenSpiel's Python CFR walk (see the module docstring)."""

  def __init__(self, game):
    super().__init__(game, alternating_updates=True, linear_averaging=False,
                     regret_matching_plus=False)
    self._owner = {}
    self._collect_owners(game.new_initial_state())
    self._prediction = {k: {a: 0.0 for a in n.legal_actions}
                        for k, n in self._info_state_nodes.items()}

  def _collect_owners(self, state):
    if state.is_terminal():
      return
    if state.is_chance_node():
      for a, _ in state.chance_outcomes():
        self._collect_owners(state.child(a))
      return
    player = state.current_player()
    self._owner[state.information_state_string(player)] = player
    for a in state.legal_actions():
      self._collect_owners(state.child(a))

  def evaluate_and_update_policy(self):
    self._iteration += 1
    weight = float(self._iteration) ** 2
    for player in range(self._game.num_players()):
      mine = {k: n for k, n in self._info_state_nodes.items()
              if self._owner[k] == player}
      saved = {k: (n.cumulative_regret, n.cumulative_policy)
               for k, n in mine.items()}
      for n in mine.values():  # the walk adds this iteration's terms to zeros
        n.cumulative_regret = {a: 0.0 for a in n.legal_actions}
        n.cumulative_policy = {a: 0.0 for a in n.legal_actions}
      self._compute_counterfactual_regret_for_player(
          self._root_node, policies=None,
          reach_probabilities=np.ones(self._game.num_players() + 1),
          player=player)
      for k, n in mine.items():
        regrets, policy_sum = saved[k]
        r = n.cumulative_regret
        n.cumulative_regret = {a: max(regrets[a] + r[a], 0.0) for a in r}
        n.cumulative_policy = {a: policy_sum[a] + n.cumulative_policy[a] * weight
                               for a in r}
        self._prediction[k] = dict(r)
        total = sum(max(n.cumulative_regret[a] + r[a], 0.0) for a in r)
        row = self._current_policy.policy_for_key(k)
        for a in n.legal_actions:
          row[a] = (max(n.cumulative_regret[a] + r[a], 0.0) / total if total > 0
                    else 1.0 / len(n.legal_actions))


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
    if "--pcfr" in sys.argv:
        for game in ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"]:
            run(game, "pcfr+", PredictiveCfrPlus, [1, 10, 100])
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
