"""OpenSpiel interop: games metagame does not implement walked through pyspiel
(``metagame.openspiel.from_pyspiel``), checked number for number against OpenSpiel's own
NashConv and best responses, and policies to and from OpenSpiel's ``TabularPolicy``."""

from __future__ import annotations

import numpy as np
import pytest

import metagame
from metagame import openspiel as mos

from conftest import require

pyspiel = require("pyspiel")
from open_spiel.python import policy as os_policy  # noqa: E402
from open_spiel.python.algorithms import best_response as os_best_response  # noqa: E402
from open_spiel.python.algorithms import cfr as os_cfr  # noqa: E402
from open_spiel.python.algorithms import exploitability as os_exploitability  # noqa: E402
from open_spiel.python.algorithms import policy_aggregator as os_aggregator  # noqa: E402

TOLERANCE = 1e-9


def converted(name: str):
    return pyspiel.convert_to_turn_based(pyspiel.load_game(name))


# Each one stands for a kind of game: (id, pyspiel game factory, utility kind, players).
GAMES = [
    ("kuhn_poker(players=3)", lambda: pyspiel.load_game("kuhn_poker(players=3)"), "ZERO_SUM", 3),
    ("tiny_hanabi", lambda: pyspiel.load_game("tiny_hanabi"), "IDENTICAL", 2),  # chance, cooperative
    ("first_sealed_auction", lambda: pyspiel.load_game("first_sealed_auction(max_value=3)"), "GENERAL_SUM", 2),
    ("sheriff", lambda: pyspiel.load_game("sheriff(num_rounds=1,max_items=2,max_bribe=2)"), "GENERAL_SUM", 2),
    ("goofspiel_turn_based", lambda: converted("goofspiel(num_cards=3)"), "ZERO_SUM", 2),
    # Imperfect recall: the strings forget the order of a player's own bids (OpenSpiel keys
    # its best responses by the string; so does metagame).
    ("goofspiel_imperfect_recall", lambda: converted("goofspiel(num_cards=4)"), "ZERO_SUM", 2),
    ("matching_pennies_3p_turn_based", lambda: converted("matching_pennies_3p"), "GENERAL_SUM", 3),
    ("leduc_poker", lambda: pyspiel.load_game("leduc_poker"), "ZERO_SUM", 2),
    ("lewis_signaling", lambda: pyspiel.load_game("lewis_signaling"), "GENERAL_SUM", 2),
]


@pytest.fixture(scope="module", params=GAMES, ids=[g[0] for g in GAMES])
def walked(request):
    """(pyspiel game, metagame Game walked from it, utility kind, players)."""
    _, make, utility, players = request.param
    game = make()
    return game, mos.from_pyspiel(game, progress=False), utility, players


def test_walked_game_matches_openspiels_shape(walked):
    game, ours, utility, players = walked
    assert game.get_type().utility.name == utility
    assert ours.num_players == game.num_players() == players
    assert ours.num_actions == game.num_distinct_actions()
    assert ours.name == str(game)
    tabular = os_policy.TabularPolicy(game)
    assert set(ours.infosets()) == set(tabular.state_lookup)
    for key, row in tabular.state_lookup.items():
        assert ours.legal_actions(key) == list(np.flatnonzero(tabular.legal_actions_mask[row]))
    # Zero-sum games sum to 0; general-sum and identical-interest ones have no constant sum
    # (identical-interest payoffs are equal, not constant).
    assert ours.utility_sum == (0.0 if utility == "ZERO_SUM" else None)


def test_uniform_nash_conv_equals_openspiels(walked):
    game, ours, _, _ = walked
    uniform = os_policy.UniformRandomPolicy(game)
    tabular = os_policy.tabular_policy_from_callable(game, uniform)
    expected = pyspiel.nash_conv(game, tabular.to_dict())
    assert metagame.nash_conv(ours, metagame.Policy.uniform(ours)) == pytest.approx(expected, abs=TOLERANCE)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_policy_nash_conv_equals_openspiels(walked, random_tabular, seed):
    game, ours, _, _ = walked
    tabular = random_tabular(game, seed)
    expected = pyspiel.nash_conv(game, tabular.to_dict())
    # The TabularPolicy itself, its to_dict(), and the Policy read from it.
    assert metagame.nash_conv(ours, tabular) == pytest.approx(expected, abs=TOLERANCE)
    assert metagame.nash_conv(ours, tabular.to_dict()) == pytest.approx(expected, abs=TOLERANCE)
    policy = mos.from_tabular_policy(ours, tabular)
    assert metagame.nash_conv(ours, policy) == pytest.approx(expected, abs=TOLERANCE)
    # The Python implementation agrees as well (it reports the same NashConv).
    assert os_exploitability.nash_conv(game, tabular) == pytest.approx(expected, abs=TOLERANCE)


def test_random_policy_best_responses_equal_openspiels(walked, random_tabular):
    game, ours, _, players = walked
    tabular = random_tabular(game, 7)
    report = metagame.nash_conv_report(ours, tabular)
    root = game.new_initial_state()
    for player in range(players):
        reference = pyspiel.TabularBestResponse(game, player, tabular.to_dict())
        _, value = metagame.best_response(ours, tabular, player)
        assert value == pytest.approx(reference.value_from_state(root), abs=TOLERANCE)
        assert report["best_response_values"][player] == pytest.approx(value, abs=TOLERANCE)
    # Expected returns are OpenSpiel's (its expected_game_score via the policy's values).
    from open_spiel.python.algorithms import expected_game_score

    seats = [tabular] * players
    np.testing.assert_allclose(metagame.expected_returns(ours, tabular),
                               expected_game_score.policy_value(root, seats), atol=TOLERANCE)


@pytest.mark.parametrize("name", ["kuhn_poker(players=3)", "goofspiel(num_cards=3)"])
def test_cfr_average_policy_nash_conv_equals_openspiels(name):
    game = pyspiel.load_game(name)
    if game.get_type().dynamics == pyspiel.GameType.Dynamics.SIMULTANEOUS:
        game = pyspiel.convert_to_turn_based(game)
    solver = os_cfr.CFRSolver(game)
    for _ in range(5):
        solver.evaluate_and_update_policy()
    average = solver.average_policy()
    ours = mos.from_pyspiel(game, progress=False)
    expected = pyspiel.nash_conv(game, average.to_dict())
    assert expected > 1e-3  # five iterations are far from an equilibrium
    assert metagame.nash_conv(ours, average) == pytest.approx(expected, abs=TOLERANCE)


def test_best_response_on_builtin_games_equals_openspiels(kuhn, leduc, random_policy):
    for game in (kuhn, leduc):
        spiel = pyspiel.load_game(game.name)
        root = spiel.new_initial_state()
        for policy in (metagame.Policy.uniform(game), metagame.Policy(game, random_policy(game, 3))):
            tabular = mos.to_tabular_policy(policy, spiel)
            for player in range(2):
                response, value = metagame.best_response(game, policy, player)
                python_br = os_best_response.BestResponsePolicy(spiel, player, tabular)
                assert value == pytest.approx(python_br.value(root), abs=TOLERANCE)
                cpp_br = pyspiel.TabularBestResponse(spiel, player, tabular.to_dict())
                assert value == pytest.approx(cpp_br.value_from_state(root), abs=TOLERANCE)
                # The same actions, wherever one is strictly best (random rows: no ties;
                # uniform rows: OpenSpiel's tie-break, the lowest action, is ours too).
                actions = cpp_br.get_best_response_actions()
                array = response.array
                mismatched = [key for key in game.infosets(player)
                              if int(np.argmax(array[game.infoset_index(key)])) != actions[key]]
                assert not mismatched, mismatched[:3]
            assert metagame.nash_conv(game, policy) == pytest.approx(
                pyspiel.nash_conv(spiel, tabular.to_dict()), abs=TOLERANCE)


def test_builtin_games_equal_their_openspiel_walk(kuhn, leduc, random_policy):
    # metagame's own Kuhn and Leduc have OpenSpiel's trees: same sizes, same values.
    for game in (kuhn, leduc):
        walked = mos.from_pyspiel(game.name, progress=False)
        assert (walked.num_nodes, walked.num_infosets, walked.num_actions) == (
            game.num_nodes, game.num_infosets, game.num_actions)
        policy = metagame.Policy(game, random_policy(game, 8))
        as_dict = policy.to_dict()
        assert metagame.nash_conv(walked, as_dict) == pytest.approx(metagame.nash_conv(game, policy), abs=1e-12)


def test_liars_dice_builtin_equals_openspiel_walk(random_policy):
    # Liar's dice (chance: the dice rolls). pyspiel.nash_conv of the uniform policy takes
    # 15 s, so its value is recorded: 1.5614886463844795 (open_spiel 2.0.2). A random
    # policy is compared with OpenSpiel's game walked through pyspiel instead.
    builtin = metagame.load_game("liars_dice")
    assert metagame.nash_conv(builtin, metagame.Policy.uniform(builtin)) == pytest.approx(1.5614886463844795,
                                                                                           abs=TOLERANCE)
    walked = mos.from_pyspiel("liars_dice", progress=False)
    assert (walked.num_nodes, walked.num_infosets) == (builtin.num_nodes, builtin.num_infosets)
    policy = metagame.Policy(builtin, random_policy(builtin, 9))
    assert metagame.nash_conv(walked, policy.to_dict()) == pytest.approx(metagame.nash_conv(builtin, policy),
                                                                         abs=TOLERANCE)


def test_goofspiel_builtin_equals_openspiel_turn_based_walk(random_policy):
    # The built-in goofspiel is OpenSpiel's turn-based form: the same information states
    # and legal actions as convert_to_turn_based's, and the same NashConv.
    for name in ["goofspiel(num_cards=3)", "goofspiel(imp_info=True,num_cards=4,points_order=descending)"]:
        builtin = metagame.load_game(name)
        spiel = converted(name)
        walked = mos.from_pyspiel(spiel, progress=False)
        assert (walked.num_nodes, walked.num_infosets) == (builtin.num_nodes, builtin.num_infosets)
        assert sorted(builtin.infosets()) == sorted(walked.infosets())
        for key in builtin.infosets():
            assert builtin.legal_actions(key) == walked.legal_actions(key)
        policy = metagame.Policy(builtin, random_policy(builtin, 10))
        expected = pyspiel.nash_conv(spiel, policy.to_dict())
        assert metagame.nash_conv(builtin, policy) == pytest.approx(expected, abs=TOLERANCE)


def test_tic_tac_toe():
    # 549 946 histories, 294 778 of them decisions (255 168 finished games). The uniform
    # policy's NashConv is pyspiel.nash_conv's (open_spiel 2.0.2, 23 s on 2 cores).
    game = mos.from_pyspiel(pyspiel.load_game("tic_tac_toe"), progress=False)
    assert (game.num_nodes, game.num_infosets, game.num_actions) == (549_946, 294_778, 9)
    uniform = metagame.Policy.uniform(game)
    assert metagame.nash_conv(game, uniform) == pytest.approx(1.9196593915343914, abs=TOLERANCE)
    # Tic-tac-toe is a draw: a best response to uniform wins a lot, but not everything.
    _, value = metagame.best_response(game, uniform, 0)
    assert 0.5 < value < 1.0


def test_tabular_policy_round_trip(kuhn, leduc, kuhn3, random_policy):
    for game in (kuhn, leduc, kuhn3):
        spiel = pyspiel.load_game(game.name)
        policy = metagame.Policy(game, random_policy(game, 11))
        tabular = mos.to_tabular_policy(policy, spiel)
        assert isinstance(tabular, os_policy.TabularPolicy)
        for key, row in tabular.state_lookup.items():
            np.testing.assert_array_equal(tabular.action_probability_array[row], policy.array[game.infoset_index(key)])
        back = mos.from_tabular_policy(game, tabular)
        np.testing.assert_array_equal(back.array, policy.array)
        np.testing.assert_array_equal(metagame.Policy(game, tabular).array, policy.array)
        # Any policy form with game= given.
        again = mos.to_tabular_policy(policy.array, spiel, game=game)
        np.testing.assert_array_equal(again.action_probability_array, tabular.action_probability_array)


def test_openspiel_tabular_policy_reads_into_metagame(kuhn, random_tabular):
    spiel = pyspiel.load_game("kuhn_poker")
    tabular = random_tabular(spiel, 12)
    policy = metagame.Policy(kuhn, tabular)
    for key, row in tabular.state_lookup.items():
        np.testing.assert_array_equal(policy.array[kuhn.infoset_index(key)], tabular.action_probability_array[row])
    assert metagame.nash_conv(kuhn, policy) == pytest.approx(pyspiel.nash_conv(spiel, tabular.to_dict()),
                                                             abs=TOLERANCE)


def test_aggregate_equals_openspiels_policy_aggregator(kuhn, random_policy):
    spiel = pyspiel.load_game("kuhn_poker")
    members = [metagame.Policy(kuhn, random_policy(kuhn, 30 + j)) for j in range(2)]
    weights = [0.3, 0.7]
    ours = metagame.aggregate(kuhn, members, weights)
    tabulars = [mos.to_tabular_policy(m, spiel) for m in members]
    theirs = os_aggregator.PolicyAggregator(spiel).aggregate([0, 1], [tabulars, tabulars], [weights, weights])
    assert metagame.nash_conv(kuhn, ours) == pytest.approx(os_exploitability.nash_conv(spiel, theirs),
                                                           abs=TOLERANCE)
    for key in kuhn.infosets():
        player = kuhn.infoset_player(key)
        expected = theirs.policy[player][key]
        np.testing.assert_allclose([p for _, p in ours.action_probabilities(key)],
                                   [expected.get(a, 0.0) for a in kuhn.legal_actions(key)], atol=1e-12)


def test_from_pyspiel_takes_a_game_string():
    game = mos.from_pyspiel("kuhn_poker", progress=False)
    assert game.name == "kuhn_poker()" and game.num_nodes == 58
    assert metagame.nash_conv(game, metagame.Policy.uniform(game)) == pytest.approx(11 / 12, abs=1e-12)


def test_a_walked_game_pickles_as_an_openspiel_game():
    import pickle

    game = mos.from_pyspiel("kuhn_poker", progress=False)
    for handle in (game, metagame.Policy.uniform(game).game, metagame.best_response(game, np.full((12, 2), 0.5), 0)[0].game):
        again = pickle.loads(pickle.dumps(handle))
        assert again.name == "kuhn_poker()" and again.num_nodes == 58
    # A registry game pickles as one.
    assert pickle.loads(pickle.dumps(metagame.load_game("kuhn_poker"))).name == "kuhn_poker"


def test_the_built_in_tic_tac_toe_is_openspiels():
    """metagame's own tic_tac_toe and OpenSpiel's walked through pyspiel: the same
    information states in the same rows, so policies carry over as arrays."""
    import numpy as np

    ours = metagame.load_game("tic_tac_toe")
    theirs = mos.from_pyspiel(pyspiel.load_game("tic_tac_toe"), progress=False)
    assert ours.num_nodes == theirs.num_nodes == 549_946
    assert ours.infosets() == theirs.infosets()
    rng = np.random.default_rng(3)
    raw = rng.random((ours.num_infosets, ours.num_actions))
    for i, key in enumerate(ours.infosets()):
        mask = np.zeros(ours.num_actions)
        mask[ours.legal_actions(i)] = 1.0
        raw[i] *= mask
    raw /= raw.sum(axis=1, keepdims=True)
    assert metagame.nash_conv(ours, raw) == pytest.approx(metagame.nash_conv(theirs, raw), abs=1e-12)


def _pyspiel_payoffs(text: str, tmp_path, name: str) -> list[np.ndarray]:
    """The payoff tensors of an .nfg text as ``pyspiel.load_nfg_game`` reads it."""
    pyspiel = require("pyspiel")
    path = tmp_path / name
    path.write_text(text)
    game = pyspiel.load_nfg_game(path.read_text())
    shape = [len(game.new_initial_state().legal_actions(p)) for p in range(game.num_players())]
    payoffs = [np.zeros(shape) for _ in range(game.num_players())]
    for profile in np.ndindex(*shape):
        state = game.new_initial_state()
        state.apply_actions(list(profile))
        for p, u in enumerate(state.returns()):
            payoffs[p][profile] = u
    return payoffs


def test_every_nfg_metagame_writes_loads_in_pyspiel(tmp_path):
    """``to_nfg_string`` (2 and 3 players, named strategies) and a PSRO run's
    ``meta_game.nfg``: pyspiel's reader takes each, with the same payoffs."""
    rng = np.random.default_rng(7)
    games = {
        "three.nfg": metagame.NormalFormGame([np.round(rng.standard_normal((2, 3, 2)), 3) for _ in range(3)]),
        "two.nfg": metagame.NormalFormGame([np.array([[3.0, 0.0], [0.0, 2.0]]), np.array([[2.0, 0.0], [0.5, 3.0]])]),
    }
    for name, game in games.items():
        read = _pyspiel_payoffs(game.to_nfg_string(), tmp_path, name)
        for p, payoff in enumerate(read):
            np.testing.assert_array_equal(payoff, game.payoffs(p), err_msg=name)
    run = tmp_path / "psro"
    metagame.run({"algorithm": "psro", "game": "kuhn_poker", "max_iterations": 4}, out=run)
    text = (run / "meta_game.nfg").read_text()
    written = metagame.NormalFormGame.from_nfg_string(text)
    read = _pyspiel_payoffs(text, tmp_path, "meta_game.nfg")
    assert [r.shape for r in read] == [tuple(written.shape)] * 2
    for p, payoff in enumerate(read):
        np.testing.assert_array_equal(payoff, written.payoffs(p))


def test_a_game_whose_states_give_strings_its_type_does_not_declare_is_walked():
    """python_iterated_prisoners_dilemma declares no information-state strings, yet its
    states give them: it is walked (turn-based, two rounds) like any other game."""
    from open_spiel.python import games  # noqa: F401  (registers OpenSpiel's Python games)

    pd = pyspiel.convert_to_turn_based(pyspiel.load_game("python_iterated_prisoners_dilemma(max_game_length=2)"))
    assert not pd.get_type().provides_information_state_string
    game = mos.from_pyspiel(pd, progress=False)
    assert game.num_players == 2 and game.num_infosets > 0
    # Always defecting is the only equilibrium of the finitely repeated game: uniform play
    # is exploitable, the all-defect policy is not.
    defect = np.zeros((game.num_infosets, game.num_actions))
    defect[:, 1] = 1.0
    assert metagame.nash_conv(game, metagame.Policy.uniform(game)) > 0.5
    assert metagame.nash_conv(game, defect) == pytest.approx(0.0, abs=1e-12)


@pytest.mark.parametrize("name", ["kuhn_poker", "leduc_poker", "tic_tac_toe"])
def test_a_walked_game_carries_openspiels_tensors(name):
    """The walk keeps each information state's tensor as pyspiel gives it (the
    information-state tensor, or the observation tensor of a perfect-information game):
    equal to the built-in game's, so a callable policy reads the same on both."""
    walked = mos.from_pyspiel(name, progress=False)
    built = metagame.load_game(name)
    assert walked.tensor_shape == built.tensor_shape
    ours = built.infoset_tensors()
    theirs = walked.infoset_tensors()
    for i, key in enumerate(walked.infosets()):
        np.testing.assert_array_equal(theirs[i], ours[built.infoset_index(key)], err_msg=key)


def assert_leducs_tensors(walked):
    built = metagame.load_game("leduc_poker")
    ours = built.infoset_tensors()
    theirs = walked.infoset_tensors()
    for i, key in enumerate(walked.infosets()):
        np.testing.assert_array_equal(theirs[i], ours[built.infoset_index(key)], err_msg=key)


def test_the_walk_reads_every_tensor_through_openspiels_observer(monkeypatch):
    """The walk fills OpenSpiel's observation buffer (``set_from``) once per information
    state and reads it in place, for the whole walk, not only while it compares."""
    calls = []

    class Counting(pyspiel._Observation):
        def set_from(self, state, player):
            calls.append(player)
            super().set_from(state, player)

    monkeypatch.setattr(pyspiel, "_Observation", Counting)
    walked = mos.from_pyspiel("leduc_poker", progress=False)
    assert len(calls) == walked.num_infosets == 936
    assert_leducs_tensors(walked)


def test_an_observer_that_disagrees_leaves_the_state_method(monkeypatch):
    """An observer whose tensor is not the state method's (here: the opponent's) is dropped
    at the first difference; every tensor is then the state method's."""
    game = pyspiel.load_game("leduc_poker")
    size = game.information_state_tensor_size()

    class Opponents(bytearray):
        def has_tensor(self):
            return True

        def set_from(self, state, player):
            self[:] = np.asarray(state.information_state_tensor(1 - player), np.float32).tobytes()

    monkeypatch.setattr(pyspiel, "_Observation", lambda game, observer: Opponents(4 * size))
    assert_leducs_tensors(mos.from_pyspiel(game, progress=False))
