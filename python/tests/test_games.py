"""Built-in games, policies in every form, and exact evaluation (NashConv, best responses,
expected returns, aggregation) against known values.

Golden values and their sources:

- Kuhn poker, uniform policy: NashConv 11/12, expected returns (1/8, -1/8), best-response
  values (1/2, 5/12), so improvements (3/8, 13/24). OpenSpiel's
  ``open_spiel/python/algorithms/exploitability_test.py`` (``test_kuhn_poker_uniform``:
  NashConv 0.916666...); the per-player parts by hand from the 6 deals.
- Leduc poker, uniform policy: NashConv 1709/360 = 4.747222...
  (``exploitability_test.py``, ``test_leduc_poker_uniform``); expected returns
  (-0.078125, 0.078125) (OpenSpiel's ``expected_game_score`` of two uniform policies).
- Kuhn poker with 3 players, uniform: NashConv 33/16 (``pyspiel.nash_conv``, checked
  live in test_openspiel.py).
"""

from __future__ import annotations

import collections
import json
import math

import numpy as np
import pytest

import metagame

KUHN_UNIFORM_NASH_CONV = 11 / 12
LEDUC_UNIFORM_NASH_CONV = 1709 / 360
KUHN3_UNIFORM_NASH_CONV = 33 / 16


# --- games ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name, players, nodes, infosets, actions",
    [
        # The poker and dice counts are OpenSpiel's: its TabularPolicy has these many rows,
        # and walking its game gives these many nodes (test_openspiel.py checks Kuhn, Leduc
        # and liar's dice; tests/it/openspiel_fixtures.rs goofspiel). matrix_rps, turn-based:
        # 1 + 3 + 9 nodes.
        ("kuhn_poker", 2, 58, 12, 2),
        ("kuhn_poker(players=3)", 3, 617, 48, 2),
        ("leduc_poker", 2, 9457, 936, 3),
        ("liars_dice", 2, 294_883, 24_576, 13),
        ("goofspiel(imp_info=True,num_cards=4,points_order=descending)", 2, 1077, 162, 4),
        ("matrix_rps", 2, 13, 2, 3),
    ],
)
def test_load_game_sizes(name, players, nodes, infosets, actions):
    game = metagame.load_game(name)
    assert (game.name, game.num_players, game.num_nodes, game.num_infosets, game.num_actions) == (
        name,
        players,
        nodes,
        infosets,
        actions,
    )
    assert game.utility_sum == 0.0
    assert name in repr(game) and f"{nodes} nodes" in repr(game)


def test_infosets_are_partitioned_by_player(kuhn, leduc):
    for game in (kuhn, leduc):
        everything = game.infosets()
        by_player = [game.infosets(p) for p in range(game.num_players)]
        # Rows are grouped by player, in policy-row order.
        assert sum(by_player, []) == everything
        assert len(set(everything)) == game.num_infosets
        for p, keys in enumerate(by_player):
            assert all(game.infoset_player(k) == p for k in keys)
        for i, key in enumerate(everything):
            assert game.infoset_index(key) == i
            assert game.infoset_index(i) == i
            assert game.infoset_player(i) == game.infoset_player(key)


def test_kuhn_infosets_and_legal_actions(kuhn):
    # OpenSpiel's Kuhn strings: the card, then the history (p = pass, b = bet).
    assert set(kuhn.infosets(0)) == {"0", "1", "2", "0pb", "1pb", "2pb"}
    assert set(kuhn.infosets(1)) == {"0p", "0b", "1p", "1b", "2p", "2b"}
    assert all(kuhn.legal_actions(k) == [0, 1] for k in kuhn.infosets())


def test_leduc_legal_actions_skip_fold_when_nothing_to_call(leduc):
    # Leduc's actions are fold 0, call 1, raise 2; the first player to act cannot fold.
    first = [k for k in leduc.infosets(0) if k.endswith("[Round1: ][Round2: ]")]
    assert len(first) == 6  # one per private card: 3 ranks x 2 suits
    assert all(leduc.legal_actions(k) == [1, 2] for k in first)
    sizes = collections.Counter(len(leduc.legal_actions(k)) for k in leduc.infosets())
    assert set(sizes) == {2, 3}


def test_matrix_game_is_one_infoset_per_player():
    game = metagame.load_game("matrix_rps")
    assert len(game.infosets(0)) == len(game.infosets(1)) == 1
    assert game.legal_actions(0) == game.legal_actions(1) == [0, 1, 2]
    # Uniform is the equilibrium of rock-paper-scissors: no player gains by deviating.
    assert metagame.nash_conv(game, metagame.Policy.uniform(game)) == pytest.approx(0.0, abs=1e-12)
    rock = np.tile([1.0, 0.0, 0.0], (2, 1))
    assert metagame.nash_conv(game, rock) == pytest.approx(2.0)  # both gain 1 with paper


def test_games_listing_names_loadable_games():
    listing = metagame.games()
    names = [name for name, _ in listing]
    for required in ("kuhn_poker", "leduc_poker", "liars_dice", "matrix_rps", "matrix_mp"):
        assert required in names
    assert all(isinstance(about, str) and about for _, about in listing)
    for name in names:
        # liars_dice is loaded in test_load_game_sizes; goofspiel's default 13 cards and
        # connect four do not fit a tree: refused at once, before anything is built.
        if name in ("goofspiel", "connect_four"):
            with pytest.raises(ValueError, match="more than 10000000 nodes"):
                metagame.load_game(name)
        elif name != "liars_dice":
            game = metagame.load_game(name)
            assert game.num_players >= 2 and game.name == name


def test_solvers_listing():
    names = {name for name, _ in metagame.solvers()}
    for required in ("nash", "lp", "lemke-howson", "rm+", "alpha-rank", "ce", "support-enumeration",
                     "vertex-enumeration"):
        assert required in names


# --- policies ------------------------------------------------------------------------


def test_uniform_policy_spreads_over_legal_actions(leduc):
    array = metagame.Policy.uniform(leduc).array
    assert array.shape == (936, 3)
    for i in range(leduc.num_infosets):
        legal = leduc.legal_actions(i)
        expected = np.zeros(3)
        expected[legal] = 1 / len(legal)
        np.testing.assert_array_equal(array[i], expected)


def test_policy_from_array_round_trips(leduc, random_policy):
    rows = random_policy(leduc, 1)
    policy = metagame.Policy(leduc, rows)
    np.testing.assert_array_equal(policy.array, rows)
    assert policy.game.name == "leduc_poker"
    # A plain nested list works too, and array is a copy.
    np.testing.assert_array_equal(metagame.Policy(leduc, rows.tolist()).array, rows)
    policy.array[0] = 0.0
    np.testing.assert_array_equal(policy.array, rows)
    key = leduc.infosets()[5]
    assert policy.action_probabilities(key) == [(a, rows[5, a]) for a in leduc.legal_actions(key)]


def test_to_dict_is_openspiels_form(kuhn, leduc, random_policy):
    import pyspiel
    from open_spiel.python import policy as os_policy

    for game in (kuhn, leduc):
        # OpenSpiel's to_dict() lists every action (0 for illegal ones); ours the legal ones,
        # as OpenSpiel's action_probabilities(). Both read back the same.
        reference = os_policy.TabularPolicy(pyspiel.load_game(game.name)).to_dict()
        ours = metagame.Policy.uniform(game).to_dict()
        assert ours.keys() == reference.keys()
        for key, pairs in reference.items():
            assert [a for a, _ in ours[key]] == game.legal_actions(key)
            assert dict(ours[key]) == {a: p for a, p in pairs if a in game.legal_actions(key)}
            assert all(p == 0.0 for a, p in pairs if a not in game.legal_actions(key))
        np.testing.assert_array_equal(metagame.Policy(game, reference).array, metagame.Policy.uniform(game).array)
        policy = metagame.Policy(game, random_policy(game, 2))
        np.testing.assert_array_equal(metagame.Policy(game, policy.to_dict()).array, policy.array)
        # Through JSON the pairs become lists; they are read all the same.
        through_json = json.loads(json.dumps(policy.to_dict()))
        np.testing.assert_array_equal(metagame.Policy(game, through_json).array, policy.array)


def test_dict_of_rows(kuhn, random_policy):
    rows = random_policy(kuhn, 3)
    as_rows = {key: rows[i] for i, key in enumerate(kuhn.infosets())}
    np.testing.assert_array_equal(metagame.Policy(kuhn, as_rows).array, rows)
    as_lists = {key: list(rows[i]) for i, key in enumerate(kuhn.infosets())}
    np.testing.assert_array_equal(metagame.Policy(kuhn, as_lists).array, rows)


def test_tabulate_answer_forms(leduc, random_policy):
    rows = random_policy(leduc, 4)
    index = {key: i for i, key in enumerate(leduc.infosets())}

    def per_legal(key, legal):
        return [rows[index[key], a] for a in legal]

    def per_action(key, legal):
        return rows[index[key]]

    def as_dict(key, legal):
        return {a: float(rows[index[key], a]) for a in legal}

    for fn in (per_legal, per_action, as_dict):
        np.testing.assert_allclose(metagame.tabulate(leduc, fn).array, rows, rtol=0, atol=1e-15)


def test_tabulate_per_legal_action_maps_onto_the_legal_actions(leduc):
    # Weights 1, 2, ... over the legal actions: at the first decision (legal [1, 2]) the
    # answer [1/3, 2/3] means call 1/3, raise 2/3, fold 0.
    def increasing(key, legal):
        weights = np.arange(1, len(legal) + 1, dtype=float)
        return weights / weights.sum()

    policy = metagame.tabulate(leduc, increasing)
    key = leduc.infosets(0)[0]
    assert leduc.legal_actions(key) == [1, 2]
    np.testing.assert_allclose(policy.array[leduc.infoset_index(key)], [0.0, 1 / 3, 2 / 3])


def test_tabulate_queries_each_information_state_once(leduc):
    calls = []

    def fn(key, legal):
        calls.append((key, list(legal)))
        return [1 / len(legal)] * len(legal)

    policy = metagame.tabulate(leduc, fn)
    counts = collections.Counter(key for key, _ in calls)
    assert set(counts) == set(leduc.infosets()) and set(counts.values()) == {1}
    assert all(legal == leduc.legal_actions(key) for key, legal in calls)
    np.testing.assert_array_equal(policy.array, metagame.Policy.uniform(leduc).array)


# --- exact evaluation ----------------------------------------------------------------


def test_uniform_nash_conv_golden_values(kuhn, leduc, kuhn3):
    for game, expected in ((kuhn, KUHN_UNIFORM_NASH_CONV), (leduc, LEDUC_UNIFORM_NASH_CONV),
                           (kuhn3, KUHN3_UNIFORM_NASH_CONV)):
        assert metagame.nash_conv(game, metagame.Policy.uniform(game)) == pytest.approx(expected, abs=1e-12)


def test_exploitability_is_half_the_nash_conv(kuhn, leduc):
    assert metagame.exploitability(kuhn, metagame.Policy.uniform(kuhn)) == pytest.approx(11 / 24, abs=1e-12)
    assert metagame.exploitability(leduc, metagame.Policy.uniform(leduc)) == pytest.approx(1709 / 720, abs=1e-12)


def test_uniform_expected_returns(kuhn, leduc):
    np.testing.assert_allclose(metagame.expected_returns(kuhn, metagame.Policy.uniform(kuhn)), [0.125, -0.125],
                               atol=1e-12)
    np.testing.assert_allclose(metagame.expected_returns(leduc, metagame.Policy.uniform(leduc)),
                               [-0.078125, 0.078125], atol=1e-12)


def test_nash_conv_report_kuhn(kuhn, kuhn3):
    report = metagame.nash_conv_report(kuhn, metagame.Policy.uniform(kuhn))
    assert report["nash_conv"] == pytest.approx(11 / 12, abs=1e-12)
    np.testing.assert_allclose(report["best_response_values"], [0.5, 5 / 12], atol=1e-12)
    np.testing.assert_allclose(report["expected_returns"], [0.125, -0.125], atol=1e-12)
    np.testing.assert_allclose(report["improvements"], [0.375, 0.541666666667], atol=1e-12)
    assert report["exploitability"] == pytest.approx(11 / 24, abs=1e-12)
    # No exploitability for 3 players; the parts still add up.
    report3 = metagame.nash_conv_report(kuhn3, metagame.Policy.uniform(kuhn3))
    assert report3["exploitability"] is None
    assert sum(report3["improvements"]) == pytest.approx(33 / 16, abs=1e-12)


def test_best_response_kuhn_uniform(kuhn):
    uniform = metagame.Policy.uniform(kuhn)
    for player, value in ((0, 0.5), (1, 5 / 12)):
        response, br_value = metagame.best_response(kuhn, uniform, player)
        assert br_value == pytest.approx(value, abs=1e-12)
        array = response.array
        for key in kuhn.infosets(player):
            # Pure at the responder's information states...
            assert sorted(array[kuhn.infoset_index(key)]) == [0.0, 1.0]
        for key in kuhn.infosets(1 - player):
            # ...and the profile elsewhere.
            np.testing.assert_array_equal(array[kuhn.infoset_index(key)], [0.5, 0.5])
        # Its value is what it earns against the others.
        assert metagame.expected_returns(kuhn, response)[player] == pytest.approx(value, abs=1e-12)
    # pyspiel.TabularBestResponse(kuhn, 0, uniform).get_best_response_actions():
    # bet (1) with the jack and the queen, fold the jack to a bet, call with the rest. With
    # the king passing and betting both earn 3/2, a tie broken to the lowest action.
    response, _ = metagame.best_response(kuhn, uniform, 0)
    openspiel = {"0": 1, "0pb": 0, "1": 1, "1pb": 1, "2": 0, "2pb": 1}
    assert {key: int(np.argmax(response.array[kuhn.infoset_index(key)])) for key in openspiel} == openspiel


def test_best_response_values_bound_the_returns(leduc, random_policy):
    policy = metagame.Policy(leduc, random_policy(leduc, 5))
    returns = metagame.expected_returns(leduc, policy)
    report = metagame.nash_conv_report(leduc, policy)
    for player in range(2):
        response, value = metagame.best_response(leduc, policy, player)
        assert value >= returns[player]
        assert value == pytest.approx(report["best_response_values"][player], abs=1e-12)
    assert report["nash_conv"] == pytest.approx(sum(report["best_response_values"]) - sum(returns), abs=1e-12)


def test_per_seat_policies_equal_one_joint_policy(leduc, kuhn3, random_policy):
    for game in (leduc, kuhn3):
        seats = [random_policy(game, 10 + p) for p in range(game.num_players)]
        joint = np.empty_like(seats[0])
        for p in range(game.num_players):
            rows = [game.infoset_index(k) for k in game.infosets(p)]
            joint[rows] = seats[p][rows]
        for profile in (seats, tuple(seats), [metagame.Policy(game, s) for s in seats]):
            assert metagame.nash_conv(game, profile) == pytest.approx(metagame.nash_conv(game, joint), abs=1e-12)
            np.testing.assert_allclose(metagame.expected_returns(game, profile),
                                       metagame.expected_returns(game, joint), atol=1e-12)
            assert metagame.best_response(game, profile, 1)[1] == pytest.approx(
                metagame.best_response(game, joint, 1)[1], abs=1e-12)
        # And it is not the same as giving everyone seat 0's policy.
        assert metagame.nash_conv(game, seats) != pytest.approx(metagame.nash_conv(game, seats[0]), abs=1e-6)


def test_all_policy_forms_give_the_same_nash_conv(kuhn, random_policy):
    rows = random_policy(kuhn, 6)
    policy = metagame.Policy(kuhn, rows)
    expected = metagame.nash_conv(kuhn, policy)
    for form in (rows, rows.tolist(), policy.to_dict(), {k: rows[i] for i, k in enumerate(kuhn.infosets())}):
        assert metagame.nash_conv(kuhn, form) == expected


def test_aggregate_mixes_by_realisation(kuhn, leduc, random_policy):
    for game in (kuhn, leduc):
        members = [metagame.Policy(game, random_policy(game, 20 + j)) for j in range(3)]
        weights = [0.2, 0.5, 0.3]
        mixed = metagame.aggregate(game, members, weights)
        opponent = members[0]
        # Playing the aggregate against a fixed opponent earns the weighted returns of the
        # members (realisation equivalence), for each seat.
        for seat in range(2):
            def seated(p):
                return [p, opponent] if seat == 0 else [opponent, p]

            expected = sum(w * metagame.expected_returns(game, seated(m)) for w, m in zip(weights, members))
            np.testing.assert_allclose(metagame.expected_returns(game, seated(mixed)), expected, atol=1e-12)
        # Weights are normalised; one member with all the weight is that member.
        np.testing.assert_allclose(metagame.aggregate(game, members, [2, 5, 3]).array, mixed.array, atol=1e-12)
        np.testing.assert_allclose(metagame.aggregate(game, members, [0, 1, 0]).array, members[1].array,
                                   atol=1e-12)


def test_nash_conv_is_zero_at_an_equilibrium_of_kuhn(kuhn):
    # Kuhn's equilibrium family (Kuhn 1950) with alpha = 1/3: player 0 bets the jack with
    # alpha, never the queen, the king with 3 alpha; calls with the queen at alpha + 1/3.
    a = 1 / 3
    bet = {"0": a, "1": 0.0, "2": 3 * a, "0pb": 0.0, "1pb": a + 1 / 3, "2pb": 1.0,
           "0p": 1 / 3, "0b": 0.0, "1p": 0.0, "1b": 1 / 3, "2p": 1.0, "2b": 1.0}
    policy = {key: [1 - p, p] for key, p in bet.items()}
    assert metagame.nash_conv(kuhn, policy) == pytest.approx(0.0, abs=1e-12)
    # Player 0's value is -1/18 (Kuhn 1950).
    assert metagame.expected_returns(kuhn, policy)[0] == pytest.approx(-1 / 18, abs=1e-12)
    assert math.isclose(metagame.exploitability(kuhn, policy), 0.0, abs_tol=1e-12)
