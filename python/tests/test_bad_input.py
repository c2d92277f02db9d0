"""Bad input raises ValueError or TypeError (or the user callable's own exception) with a
message that says what is wrong; nothing crashes the interpreter or panics."""

from __future__ import annotations

import numpy as np
import pytest

import metagame
from metagame import openspiel as mos

from conftest import require

pyspiel = require("pyspiel")
from open_spiel.python import policy as os_policy  # noqa: E402


def raises(kind, fragment):
    """``pytest.raises`` for ``kind`` whose message holds ``fragment`` literally."""
    import re

    return pytest.raises(kind, match=re.escape(fragment))


# --- games ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, fragment", [
    ("no_such_game", "unknown game `no_such_game`; known games: kuhn_poker"),
    ("kuhn_poker(players=1)", "players must be in 2..=10, got 1"),
    ("kuhn_poker(foo=1)", "unknown parameter `foo`"),
    ("kuhn_poker(players=x)", "players must be an integer, got `x`"),
    ("kuhn_poker(players=3", "missing `)`"),
])
def test_unknown_or_malformed_game_names(name, fragment):
    with raises(ValueError, fragment):
        metagame.load_game(name)


def test_max_nodes_too_small():
    with raises(ValueError, "leduc_poker has more than 100 nodes; pass max_nodes= to raise the limit"):
        metagame.load_game("leduc_poker", max_nodes=100)
    # The limit is inclusive: Kuhn has 58 nodes.
    assert metagame.load_game("kuhn_poker", max_nodes=58).num_nodes == 58
    with raises(ValueError, "more than 57 nodes"):
        metagame.load_game("kuhn_poker", max_nodes=57)
    # Far past the limit: refused from random playouts before the walk; near it, by the walk.
    with raises(ValueError, "leduc_poker() has about 1.1e+04 nodes (estimated from 200 random playouts), more than the limit of 1000"):
        mos.from_pyspiel(pyspiel.load_game("leduc_poker"), max_nodes=1000, progress=False)
    with raises(ValueError, "leduc_poker() has more than 6000 nodes; pass max_nodes="):
        mos.from_pyspiel(pyspiel.load_game("leduc_poker"), max_nodes=6000, progress=False)
    with raises(ValueError, "more than 57 nodes"):
        mos.from_pyspiel("kuhn_poker", max_nodes=57, progress=False)
    with raises(ValueError, "max_nodes must be at least 1, got 0"):
        mos.from_pyspiel("kuhn_poker", max_nodes=0)


def test_unknown_information_states_and_players(kuhn):
    with raises(KeyError, 'kuhn_poker has no information state "zzz"'):
        kuhn.infoset_index("zzz")
    with raises(IndexError, "information state 99 is out of range: kuhn_poker has 12"):
        kuhn.legal_actions(99)
    with raises(ValueError, "player 5 does not exist: kuhn_poker has 2 players"):
        kuhn.infosets(5)
    with raises(ValueError, "player 2 does not exist: kuhn_poker has players 0..2"):
        metagame.best_response(kuhn, metagame.Policy.uniform(kuhn), 2)
    with raises(ValueError, "player -1 does not exist"):
        metagame.best_response(kuhn, metagame.Policy.uniform(kuhn), -1)


# --- OpenSpiel games ------------------------------------------------------------------


def test_openspiel_game_without_information_state_strings():
    game = pyspiel.load_game("catch")
    assert not game.get_type().provides_information_state_string
    with raises(ValueError, "catch() has no information-state strings (its states do not give them"):
        mos.from_pyspiel(game, progress=False)


def test_openspiel_games_too_large_to_walk_are_refused_before_the_walk():
    """A tree far past the limit is refused from random playouts at once, not after the
    walk has filled the limit (connect_four took 70 s and 2.8 GB that way)."""
    for name in ("connect_four", "breakthrough"):
        with raises(ValueError, f"the game tree of {name}() has about"):
            mos.from_pyspiel(name, progress=False)
    with raises(ValueError, "the game tree of tic_tac_toe() has about"):
        mos.from_pyspiel("tic_tac_toe", max_nodes=10_000, progress=False)


def test_simultaneous_game_not_converted():
    with raises(ValueError, "is a simultaneous-move game; pass pyspiel.convert_to_turn_based(game)"):
        mos.from_pyspiel(pyspiel.load_game("goofspiel(num_cards=3)"), progress=False)
    with raises(ValueError, "matrix_mp() is a simultaneous-move game"):
        mos.from_pyspiel(pyspiel.load_game("matrix_mp"), progress=False)


def test_mean_field_game():
    with raises(ValueError, "has MEAN_FIELD dynamics; only sequential games"):
        mos.from_pyspiel(pyspiel.load_game("mfg_crowd_modelling"), progress=False)


def test_from_pyspiel_bad_arguments():
    with raises(TypeError, "from_pyspiel: a pyspiel.Game or a game string, not int"):
        mos.from_pyspiel(5)
    # OpenSpiel's unknown-game error, as a ValueError of one line.
    with pytest.raises(ValueError, match=r"^from_pyspiel: Unknown game 'no_such_game'[^\n]*$"):
        mos.from_pyspiel("no_such_game")


# --- policies --------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(11, 2), (12, 3), (24,), (2, 12, 2)])
def test_wrong_policy_shapes(kuhn, shape):
    with raises(ValueError, f"an array of shape {list(shape)}, but kuhn_poker takes [infosets, actions] = [12, 2]"):
        metagame.Policy(kuhn, np.full(shape, 0.5))


def test_nan_and_non_distribution_policies(kuhn, leduc):
    with raises(ValueError, "policy: entry 0 (row-major) is NaN, not a finite number"):
        metagame.Policy(kuhn, np.full((12, 2), np.nan))
    with raises(ValueError, "is inf, not a finite number"):
        metagame.nash_conv(kuhn, np.r_[[[np.inf, 0.0]], np.full((11, 2), 0.5)])
    with raises(ValueError, 'bad policy at information state "0": probabilities sum to 2, not 1'):
        metagame.Policy(kuhn, np.ones((12, 2)))
    with raises(ValueError, "probability -0.5 of action 1 is not a finite non-negative number"):
        metagame.Policy(kuhn, np.tile([1.5, -0.5], (12, 1)))
    # Leduc's first decision cannot fold: putting mass there is refused.
    rows = metagame.Policy.uniform(leduc).array
    rows[0] = [1.0, 0.0, 0.0]
    with raises(ValueError, "illegal action 0 has probability 1"):
        metagame.nash_conv(leduc, rows)
    with raises(ValueError, "policy: not an array of numbers"):
        metagame.Policy(kuhn, [["a", "b"]] * 12)


def test_policies_of_the_wrong_kind(kuhn):
    for bad in (5, None, "uniform"):
        with raises(TypeError, "a policy must be a metagame.Policy, a callable policy(obs, legal) -> probs, a numpy array"):
            metagame.nash_conv(kuhn, bad)


def test_policy_of_another_game(kuhn, leduc, kuhn3):
    with raises(ValueError, "the policy is of the game kuhn_poker, not of leduc_poker"):
        metagame.nash_conv(leduc, metagame.Policy.uniform(kuhn))
    with raises(ValueError, "the policy is of the game kuhn_poker, not of leduc_poker"):
        metagame.nash_conv(leduc, [metagame.Policy.uniform(kuhn)] * 2)
    with raises(ValueError, 'policy: leduc_poker has no information state "0"'):
        metagame.nash_conv(leduc, metagame.Policy.uniform(kuhn).to_dict())
    with raises(ValueError, "the policy is of the game kuhn_poker, not of leduc_poker"):
        metagame.aggregate(leduc, [metagame.Policy.uniform(kuhn)], [1.0])
    # OpenSpiel policies of another game, even one holding every one of kuhn_poker's
    # information-state strings (3-player Kuhn has them all, with other meanings).
    with raises(ValueError, "the TabularPolicy has 2 actions per row, leduc_poker has 3: a policy of another game"):
        metagame.Policy(leduc, os_policy.TabularPolicy(pyspiel.load_game("kuhn_poker")))
    with raises(ValueError, "the TabularPolicy has 48 information states (48 rows), kuhn_poker has 12"):
        metagame.Policy(kuhn, os_policy.TabularPolicy(pyspiel.load_game("kuhn_poker(players=3)")))
    # The right sizes, but keys of no state of the game, or a row past the array.
    renamed = os_policy.TabularPolicy(pyspiel.load_game("kuhn_poker"))
    renamed.state_lookup = {"x" + key: row for key, row in renamed.state_lookup.items()}
    with raises(ValueError, "is not one of kuhn_poker's: a policy of another game"):
        metagame.Policy(kuhn, renamed)
    past = os_policy.TabularPolicy(pyspiel.load_game("kuhn_poker"))
    past.state_lookup = {key: row + 1 for key, row in past.state_lookup.items()}
    with raises(ValueError, "the TabularPolicy's state_lookup names row 12, its action_probability_array has 12"):
        metagame.Policy(kuhn, past)
    with raises(ValueError, "to_tabular_policy: the OpenSpiel game has 12 information states and 2 actions, "
                            "the policy's game kuhn_poker(players=3) 48 and 2: a policy of another game"):
        mos.to_tabular_policy(metagame.Policy.uniform(kuhn3), pyspiel.load_game("kuhn_poker"))
    with raises(ValueError, "a policy of another game"):
        mos.to_tabular_policy(metagame.Policy.uniform(kuhn), pyspiel.load_game("leduc_poker"))
    with raises(TypeError, "to_tabular_policy: pass game= for a policy that is not a metagame.Policy"):
        mos.to_tabular_policy(np.full((12, 2), 0.5), pyspiel.load_game("kuhn_poker"))


def test_bad_policy_dicts(kuhn):
    uniform = metagame.Policy.uniform(kuhn).to_dict()
    with raises(ValueError, 'policy: the information state "0" is missing'):
        metagame.nash_conv(kuhn, {k: v for k, v in uniform.items() if k != "0"})
    with raises(ValueError, 'policy at "0": action 5 is not one of 0..2'):
        metagame.nash_conv(kuhn, {**uniform, "0": [(5, 1.0)]})
    with raises(ValueError, 'policy at "0": action 0.5 is not one of 0..2'):
        metagame.nash_conv(kuhn, {**uniform, "0": [(0.5, 1.0)]})
    with raises(ValueError, "policy: the key 3 is not an information-state string"):
        metagame.nash_conv(kuhn, {**uniform, 3: [(0, 1.0)]})
    with raises(ValueError, 'policy at "0": expected [(action, probability), ...] or a row of probabilities'):
        metagame.nash_conv(kuhn, {**uniform, "0": "x"})
    with raises(ValueError, 'policy at "0": 3 probabilities, the game has 2 actions'):
        metagame.nash_conv(kuhn, {**uniform, "0": [0.2, 0.3, 0.5]})
    with raises(ValueError, "probability NaN of action 0 is not a finite non-negative number"):
        metagame.nash_conv(kuhn, {**uniform, "0": [(0, float("nan")), (1, 1.0)]})


def test_bad_profiles(kuhn, kuhn3):
    uniform = metagame.Policy.uniform(kuhn)
    with raises(ValueError, "3 policies for the 2 players of kuhn_poker"):
        metagame.nash_conv(kuhn, [uniform] * 3)
    with raises(ValueError, "exploitability is defined only for 2-player constant-sum games; "
                            "kuhn_poker(players=3) is not one (use nash_conv)"):
        metagame.exploitability(kuhn3, metagame.Policy.uniform(kuhn3))
    general = mos.from_pyspiel("first_sealed_auction(max_value=3)", progress=False)
    with raises(ValueError, "is not one (use nash_conv)"):
        metagame.exploitability(general, metagame.Policy.uniform(general))


def test_bad_aggregate_weights(kuhn):
    members = [metagame.Policy.uniform(kuhn)] * 2
    with raises(ValueError, "1 weights for 2 policies"):
        metagame.aggregate(kuhn, members, [1.0])
    with raises(ValueError, "mixture weights [1.5, -0.5] are not a distribution"):
        metagame.aggregate(kuhn, members, [1.5, -0.5])
    with raises(ValueError, "mixture weights [0.0, 0.0] are not a distribution"):
        metagame.aggregate(kuhn, members, [0.0, 0.0])
    with raises(ValueError, "weights: entry 0 (row-major) is NaN"):
        metagame.aggregate(kuhn, members, [np.nan, 1.0])


# --- tabulate -------------------------------------------------------------------------


@pytest.mark.parametrize("answer, fragment", [
    ("xyz", 'tabulate: the answer at "0": not an array of numbers'),
    (None, 'tabulate: at "0" the callable returned None, not probabilities'),
    ([0.2, 0.3, 0.5], 'at "0" the callable returned 3 numbers; expected one per legal action (2) or per action (2)'),
    ([[0.5, 0.5]], 'returned an array of shape [1, 2]; expected a flat sequence'),
    ([0.2, 0.3], 'tabulate: bad policy at information state "0": probabilities sum to 0.5, not 1'),
    ([np.nan, 1.0], 'tabulate: the answer at "0": entry 0 (row-major) is NaN'),
    ({"a": 1.0}, 'returned a dict with the key a, not an action'),
    ({7: 1.0}, 'returned action 7, not one of 0..2'),
    ({-1: 1.0}, 'returned a dict with the key -1, not an action'),
    ({0: "x"}, 'returned a dict with the value x, not a probability'),
])
def test_tabulate_garbage(kuhn, answer, fragment):
    with raises(ValueError, fragment):
        metagame.tabulate(kuhn, lambda key, legal: answer)


def test_tabulate_exception_propagates(kuhn):
    class Boom(Exception):
        pass

    seen = []

    def explode(key, legal):
        seen.append(key)
        if len(seen) == 3:
            raise Boom("the network is down")
        return [0.5, 0.5]

    with pytest.raises(Boom, match="the network is down"):
        metagame.tabulate(kuhn, explode)
    assert len(seen) == 3  # it stops at the first failure
    with raises(TypeError, "'int' object is not callable"):
        metagame.tabulate(kuhn, 5)


# --- normal-form games ----------------------------------------------------------------


def test_bad_payoffs():
    with raises(ValueError, "payoffs: entry 0 (row-major) is NaN, not a finite number"):
        metagame.NormalFormGame(np.array([[np.nan, 1.0], [0.0, 1.0]]))
    with raises(ValueError, "payoffs of player 1: entry 3 (row-major) is inf"):
        metagame.NormalFormGame(np.eye(2), np.array([[0, 1], [1, np.inf]]))
    with raises(ValueError, "payoffs: entry 0 (row-major) is inf"):
        metagame.solve(np.array([[np.inf, 1.0], [0.0, 1.0]]))
    with raises(ValueError, "one payoff array makes a zero-sum matrix game and must be 2-dimensional, got shape [2, 2, 2]"):
        metagame.NormalFormGame(np.zeros((2, 2, 2)))
    with raises(ValueError, "player 1's payoffs have shape [2, 3], player 0's [2, 2]"):
        metagame.NormalFormGame(np.zeros((2, 2)), np.zeros((2, 3)))
    with raises(ValueError, "3 players need payoff tensors with 3 axes, got shape [2, 2]"):
        metagame.NormalFormGame([np.zeros((2, 2))] * 3)
    with raises(ValueError, "player 0 has no strategy"):
        metagame.NormalFormGame(np.zeros((0, 2)))
    with raises(ValueError, "a normal-form game needs at least 2 players, got 0"):
        metagame.NormalFormGame()
    with raises(ValueError, "payoffs: not an array of numbers"):
        metagame.NormalFormGame([[1, 2], [3]])
    with raises(ValueError, "payoffs: not an array of numbers"):
        metagame.NormalFormGame([["a", "b"], ["c", "d"]])


def test_bad_strategies():
    game = metagame.NormalFormGame(np.eye(2))
    with raises(ValueError, "1 strategies for 2 players"):
        game.nash_conv([[1, 0]])
    with raises(ValueError, "strategy of player 1: expected a distribution over 2 strategies, got [0.5, 0.6]"):
        game.nash_conv([[1, 0], [0.5, 0.6]])
    with raises(ValueError, "strategy of player 0: expected a distribution over 2 strategies"):
        game.expected_payoffs([[1, 0, 0], [0.5, 0.5]])
    with raises(ValueError, "strategy of player 1: entry 0 (row-major) is NaN"):
        game.nash_conv([[1, 0], [np.nan, 1]])
    with raises(ValueError, "player 5 does not exist: the game has 2 players"):
        game.payoffs(5)


def test_unknown_solvers_and_settings():
    with raises(ValueError, "unknown meta-solver `nope`; known: uniform, nash, lp"):
        metagame.solve(np.eye(2), "nope")
    with raises(ValueError, "unknown meta-solver `nope`"):
        metagame.solve_all(np.eye(2), "nope")
    with raises(ValueError, "solve: unknown setting `iters`; the solvers take `iterations`"):
        metagame.solve(np.eye(2), "rm+", iters=5)
    with raises(ValueError, "iterations must be a positive integer, got -5"):
        metagame.solve(np.eye(2), "rm+", iterations=-5)
    with raises(ValueError, "iterations must be a positive integer, got 2.5"):
        metagame.solve(np.eye(2), "rm+", iterations=2.5)
    with raises(ValueError, "meta-solver `rm+`: iterations must be at least 1"):
        metagame.solve(np.eye(2), "rm+", iterations=0)


def test_solvers_refuse_games_they_do_not_support():
    three = [np.zeros((2, 2, 2))] * 3
    with raises(ValueError, "lp does not support this game: needs 2 players, the game has 3"):
        metagame.solve(three, "lp")
    with raises(ValueError, "lemke-howson does not support this game: needs 2 players, the game has 3"):
        metagame.solve(three, "lemke-howson")
    with raises(ValueError, "lp does not support this game: the game is not constant-sum"):
        metagame.solve((np.eye(2), np.eye(2)), "lp")


def test_bad_nfg():
    with raises(ValueError, "malformed .nfg at line 1: expected `NFG` at the start, found `garbage`"):
        metagame.NormalFormGame.from_nfg_string("garbage")
    with raises(ValueError, "/nonexistent.nfg: No such file or directory"):
        metagame.NormalFormGame.from_nfg("/nonexistent.nfg")


# --- ratings --------------------------------------------------------------------------


def test_bad_matches():
    with raises(ValueError, "matches: expected rows of (first, second, score), got shape [3, 2]"):
        metagame.elo(np.zeros((3, 2)))
    with raises(ValueError, "matches: row 0 has the score 2"):
        metagame.elo([[0, 1, 2.0]])
    with raises(ValueError, "matches: entry 2 (row-major) is NaN"):
        metagame.elo([[0, 1, np.nan]])
    with raises(ValueError, "matches: row 0 names member 1.5, not an index"):
        metagame.elo([[0, 1.5, 1]])
    with raises(ValueError, "matches: row 1 names member -1, not an index"):
        metagame.melo([[0, 1, 1], [-1, 1, 1]])
    with raises(ValueError, "matches name member 5, but num_members is 2"):
        metagame.elo([[0, 5, 1]], num_members=2)
    # Huge indices or member counts are refused, not allocated (nor wrapped around).
    with raises(ValueError, "names member 1e300; ratings hold at most 1000000 members"):
        metagame.elo([[0, 1e300, 1]])
    with raises(ValueError, "names member 1e18; ratings hold at most"):
        metagame.melo([[1e18, 0, 1]])
    with raises(ValueError, "num_members is 1000000000000; ratings hold at most 1000000 members"):
        metagame.elo([[0, 1, 1]], num_members=10**12)


def test_bad_rating_settings():
    with raises(ValueError, "elo: invalid config: k_factor must be a finite number > 0, got -1"):
        metagame.elo([[0, 1, 1]], k_factor=-1)
    with raises(ValueError, "elo: unknown field `kfactor`, expected one of `k_factor`, `scale`, `initial_rating`"):
        metagame.elo([[0, 1, 1]], kfactor=3)
    with raises(ValueError, 'elo: invalid type: string "x", expected f64'):
        metagame.elo([[0, 1, 1]], k_factor="x")
    with raises(ValueError, "melo: invalid config: k must be at most 64, got 100"):
        metagame.melo([[0, 1, 1]], k=100)
    with raises(ValueError, "batch_elo: unknown field `foo`"):
        metagame.batch_elo([[0, 1], [1, 0]], foo=1)
    with raises(ValueError, "config: `scale` is a NoneType, which a config cannot hold"):
        metagame.elo([[0, 1, 1]], scale=None)


def test_bad_win_matrices():
    with raises(ValueError, "the win matrix must be square, got 2×3"):
        metagame.batch_elo(np.zeros((2, 3)))
    with raises(ValueError, "win count (0, 1) must be a finite number ≥ 0, got -1"):
        metagame.batch_elo([[0, -1], [1, 0]])
    with raises(ValueError, "wins: expected a 2-dimensional array, got shape [2]"):
        metagame.batch_elo([1, 2])
    with raises(ValueError, "the draw matrix must be symmetric, not at (0, 1)"):
        metagame.batch_elo([[0, 1], [1, 0]], [[0, 1], [2, 0]])
    with raises(ValueError, "win rate (0, 1) must be in [0, 1], got 2"):
        metagame.nash_averaging([[0.5, 2], [0, 0.5]])
    with raises(ValueError, "the win-rate matrix must be square and non-empty, got 2×3"):
        metagame.nash_averaging(np.zeros((2, 3)))
    with raises(ValueError, "win_rates: entry 1 (row-major) is NaN"):
        metagame.nash_averaging([[0.5, np.nan], [0, 0.5]])
    with raises(ValueError, "win_rates: expected a 2-dimensional array, got shape []"):
        metagame.nash_averaging(3.0)
