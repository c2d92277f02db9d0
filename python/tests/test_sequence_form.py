"""The exact equilibrium of two-player zero-sum games by the sequence-form LP
(``metagame.solve_sequence_form``): values, certificates recomputed by the package's own
NashConv, games read from pyspiel, and OpenSpiel's ``sequence_form_lp`` side by side (its LP
solver, cvxpy with ECOS, from python/requirements-test.txt)."""

from __future__ import annotations

import pytest

import metagame
from conftest import require

# OpenSpiel 2.0.2's sequence_form_lp.solve_zero_sum_game (cvxpy 1.9.3, ECOS 2.0.14; its
# tolerance 1e-7), run by benches/peers/sequence_form_lp.py: its first player's values. Kuhn's
# is -1/18 (Kuhn 1950); OpenSpiel's answer is 7e-10 off it.
OPENSPIEL_VALUES = {"kuhn_poker": -0.055555556270, "leduc_poker": -0.085606424051}
OPENSPIEL_TOLERANCE = 1e-9


def test_kuhn_value_is_minus_one_eighteenth(kuhn):
    solved = metagame.solve_sequence_form(kuhn)
    assert abs(solved.value + 1 / 18) < 1e-12
    assert solved.nash_conv < 1e-9
    assert solved.status == "solved"
    assert solved.exploitability == solved.nash_conv / 2


def test_leduc_certificate_is_the_packages_own_nash_conv(leduc):
    solved = metagame.solve_sequence_form(leduc)
    assert abs(solved.value + 0.0856064240) < 1e-9
    assert solved.nash_conv < 1e-9
    # The two policies, or both in one table, are the same profile.
    assert len(solved.policies) == 2
    assert metagame.nash_conv(leduc, solved.policies) == solved.nash_conv
    assert metagame.nash_conv(leduc, solved.policy) == solved.nash_conv
    assert metagame.expected_returns(leduc, solved.policy)[0] == solved.value


@pytest.mark.parametrize("game", sorted(OPENSPIEL_VALUES))
def test_values_equal_openspiels(game):
    solved = metagame.solve_sequence_form(metagame.load_game(game))
    assert abs(solved.value - OPENSPIEL_VALUES[game]) < OPENSPIEL_TOLERANCE


def test_other_games_raise_value_error(kuhn3):
    with pytest.raises(ValueError, match="3 players, not 2"):
        metagame.solve_sequence_form(kuhn3)


def test_a_game_read_from_pyspiel():
    require("pyspiel")
    from metagame import openspiel as mos

    solved = metagame.solve_sequence_form(mos.from_pyspiel("leduc_poker", progress=False))
    assert abs(solved.value + 0.0856064240) < 1e-9
    assert solved.nash_conv < 1e-9


@pytest.mark.parametrize("game", ["kuhn_poker", "leduc_poker", "goofspiel(num_cards=3,imp_info=True)"])
def test_openspiels_sequence_form_lp_side_by_side(game):
    # OpenSpiel's sequence_form_lp solves with cvxpy and ECOS (python/requirements-test.txt).
    require("cvxpy")
    require("ecos")
    pyspiel = require("pyspiel")
    from open_spiel.python.algorithms import sequence_form_lp

    from metagame import openspiel as mos

    spiel_game = pyspiel.convert_to_turn_based(pyspiel.load_game(game)) if "goofspiel" in game else pyspiel.load_game(game)
    value, _, _, _ = sequence_form_lp.solve_zero_sum_game(spiel_game)
    solved = metagame.solve_sequence_form(mos.from_pyspiel(spiel_game, progress=False))
    assert solved.nash_conv < 1e-9
    assert abs(solved.value - value) < OPENSPIEL_TOLERANCE
