"""Normal-form games from numpy and Gambit .nfg, every kind of meta-solver on them, against
known equilibria, scipy's HiGHS and nashpy."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import metagame
from conftest import require

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "nfg"

RPS = np.array([[0.0, -1.0, 1.0], [1.0, 0.0, -1.0], [-1.0, 1.0, 0.0]])
PENNIES = np.array([[1.0, -1.0], [-1.0, 1.0]])
# Battle of the sexes: (3, 2) if both go to the opera, (2, 3) if both to the match.
BOS = (np.array([[3.0, 0.0], [0.0, 2.0]]), np.array([[2.0, 0.0], [0.0, 3.0]]))
# Its three equilibria: both pure ones, and the mixed one where each player mixes so the
# other is indifferent (row: 3/5 opera; column: 2/5 opera).
BOS_EQUILIBRIA = [((1, 0), (1, 0)), ((0, 1), (0, 1)), ((0.6, 0.4), (0.4, 0.6))]


def strategies(solution):
    return [np.asarray(s) for s in solution.strategies]


def assert_distributions(solution, shape):
    assert [len(s) for s in solution.strategies] == list(shape)
    for s in solution.strategies:
        assert np.all(s >= -1e-12) and abs(s.sum() - 1.0) < 1e-9


# --- construction ---------------------------------------------------------------------


def test_one_matrix_is_zero_sum():
    game = metagame.NormalFormGame(RPS)
    assert game.num_players == 2 and game.shape == [3, 3]
    np.testing.assert_array_equal(game.payoffs(0), RPS)
    np.testing.assert_array_equal(game.payoffs(1), -RPS)
    assert repr(game) == "NormalFormGame(3×3)"


def test_bimatrix_and_tensors():
    game = metagame.NormalFormGame(*BOS)
    np.testing.assert_array_equal(game.payoffs(1), BOS[1])
    assert game.expected_payoffs([[1, 0], [1, 0]]) == [3.0, 2.0]
    assert game.expected_payoffs([[0.5, 0.5], [0.5, 0.5]]) == [1.25, 1.25]
    rng = np.random.default_rng(3)
    tensors = [rng.standard_normal((2, 3, 4)) for _ in range(3)]
    three = metagame.NormalFormGame(tensors)
    assert three.num_players == 3 and three.shape == [2, 3, 4]
    for p in range(3):
        np.testing.assert_array_equal(three.payoffs(p), tensors[p])
    # Nested lists and tuples are read as tensors too.
    for form in ([t.tolist() for t in tensors], tuple(tensors)):
        np.testing.assert_array_equal(metagame.NormalFormGame(form).payoffs(2), tensors[2])
    np.testing.assert_array_equal(metagame.NormalFormGame([list(b) for b in BOS]).payoffs(0), BOS[0])
    # A matrix given as a list of rows stays a zero-sum matrix.
    np.testing.assert_array_equal(metagame.NormalFormGame(list(PENNIES)).payoffs(1), -PENNIES)
    # A pure profile's payoffs are the tensors' entries.
    pure = [np.eye(n)[i] for n, i in zip((2, 3, 4), (1, 2, 0))]
    assert three.expected_payoffs(pure) == pytest.approx([t[1, 2, 0] for t in tensors])


def test_nfg_files():
    stengel = metagame.NormalFormGame.from_nfg(EXAMPLES / "von_stengel_3x2.nfg")
    # von Stengel (2007), Figure 3.1 (the file's comment): A = [3 3; 2 5; 0 6], B = [3 2; 2 6; 3 1].
    np.testing.assert_array_equal(stengel.payoffs(0), [[3, 3], [2, 5], [0, 6]])
    np.testing.assert_array_equal(stengel.payoffs(1), [[3, 2], [2, 6], [3, 1]])
    pennies = metagame.NormalFormGame.from_nfg(str(EXAMPLES / "matching_pennies.nfg"))
    np.testing.assert_array_equal(pennies.payoffs(0), PENNIES)
    shapley = metagame.NormalFormGame.from_nfg(EXAMPLES / "shapley.nfg")
    # Row i, column j: player 1 gets 1 when j = i, player 2 when j = i + 1 (mod 3).
    np.testing.assert_array_equal(shapley.payoffs(0), np.eye(3))
    np.testing.assert_array_equal(shapley.payoffs(1), np.roll(np.eye(3), 1, axis=1))


def test_nfg_string_round_trip():
    rng = np.random.default_rng(4)
    tensors = [np.round(rng.standard_normal((2, 3, 2)), 3) for _ in range(3)]
    game = metagame.NormalFormGame(tensors)
    text = game.to_nfg_string()
    assert text.startswith("NFG 1 R")
    again = metagame.NormalFormGame.from_nfg_string(text)
    assert again.shape == [2, 3, 2]
    for p in range(3):
        np.testing.assert_array_equal(again.payoffs(p), tensors[p])
    # Gambit's outcome form reads too: matching pennies.
    outcomes = 'NFG 1 R "mp" { "1" "2" } { 2 2 }\n{\n{ "win" 1, -1 }\n{ "lose" -1, 1 }\n}\n1 2 2 1\n'
    np.testing.assert_array_equal(metagame.NormalFormGame.from_nfg_string(outcomes).payoffs(0), PENNIES)


# --- solvers on known games -------------------------------------------------------------


@pytest.mark.parametrize("solver, settings", [
    ("nash", {}), ("lp", {}), ("lemke-howson", {}), ("rm+", {"iterations": 20_000}), ("alpha-rank", {}),
    ("ce", {}), ("support-enumeration", {}), ("vertex-enumeration", {}),
])
@pytest.mark.parametrize("payoffs", [RPS, PENNIES], ids=["rps", "pennies"])
def test_zero_sum_games_have_the_uniform_equilibrium(solver, settings, payoffs):
    solution = metagame.solve(payoffs, solver, **settings)
    assert_distributions(solution, payoffs.shape)
    n = payoffs.shape[0]
    for s in strategies(solution):
        np.testing.assert_allclose(s, np.full(n, 1 / n), atol=1e-3 if solver == "rm+" else 1e-9)
    assert solution.is_equilibrium or solver == "rm+"
    assert solution.nash_conv == pytest.approx(solution.certificate["nash_conv"])


def test_lp_value_and_certificate():
    # Biased matching pennies [[2, -1], [-1, 1]]: row mixes (2/5, 3/5), value 1/5.
    game = np.array([[2.0, -1.0], [-1.0, 1.0]])
    solution = metagame.solve(game, "lp")
    assert solution.status == "solved" and solution.is_equilibrium
    assert solution.value == pytest.approx(0.2, abs=1e-12)
    np.testing.assert_allclose(strategies(solution), [[0.4, 0.6], [0.4, 0.6]], atol=1e-12)
    certificate = solution.certificate
    assert set(certificate) == {"nash_conv", "deviation_gains", "primal_dual_gap", "max_violation"}
    assert certificate["nash_conv"] <= 1e-12 and abs(certificate["primal_dual_gap"]) <= 1e-12
    assert len(certificate["deviation_gains"]) == 2
    assert certificate["max_violation"] is None
    # Lemke-Howson finds the same point, but reports no value.
    lemke = metagame.solve(game, "lemke-howson")
    np.testing.assert_allclose(strategies(lemke), strategies(solution), atol=1e-12)
    assert lemke.value is None


def test_certificate_is_the_games_nash_conv():
    game = metagame.NormalFormGame(np.array([[2.0, -1.0], [-1.0, 1.0]]))
    rough = metagame.solve(game, "rm+", iterations=10)
    assert rough.status == "max_iterations" and rough.iterations == 10
    assert not rough.is_equilibrium
    assert rough.nash_conv == pytest.approx(game.nash_conv(rough.strategies), abs=1e-12)
    assert rough.nash_conv == pytest.approx(sum(rough.certificate["deviation_gains"]), abs=1e-12)
    # More iterations get closer.
    finer = metagame.solve(game, "rm+", iterations=5000)
    assert finer.nash_conv < rough.nash_conv / 10
    # A pure profile's NashConv by hand: (row 0, column 0) pays 2; the column gains 3 by
    # switching to column 1, the row nothing.
    assert game.nash_conv([[1, 0], [1, 0]]) == pytest.approx(3.0)


def ce_gains(joint, payoffs):
    """Every CE constraint's gain: for player p, recommended r and deviation d, what p
    gains by playing d whenever told r (a CE has none positive)."""
    gains = []
    for p, u in enumerate(payoffs):
        moved = np.moveaxis(u, p, 0)
        sigma = np.moveaxis(joint, p, 0)
        for r in range(u.shape[p]):
            for d in range(u.shape[p]):
                if d != r:
                    gains.append(float((sigma[r] * (moved[d] - moved[r])).sum()))
    return np.array(gains)


def test_alpha_rank_reports_its_stationary_distribution():
    ranked = metagame.solve(RPS, "alpha-rank")
    assert ranked.stationary is not None and ranked.joint is None and ranked.value is None
    # A symmetric game is one population: a distribution over its strategies.
    assert ranked.stationary.shape == (3,)
    np.testing.assert_allclose(ranked.stationary, [1 / 3] * 3, atol=1e-9)
    # Two populations: over joint profiles in the game's shape (as a CE's ``joint``), with
    # the strategies as its marginals.
    bos = metagame.solve(metagame.NormalFormGame(*BOS), "alpha-rank")
    assert bos.stationary.shape == (2, 2)
    np.testing.assert_allclose(bos.stationary.sum(), 1.0, atol=1e-12)
    np.testing.assert_allclose(bos.stationary.sum(axis=1), bos.strategies[0], atol=1e-12)
    assert all(d.shape == (2, 2) for d in bos.stationary_distributions)
    # Prisoner's dilemma: defection (1) is the sink of every deviation path.
    pd = (np.array([[3.0, 0.0], [5.0, 1.0]]), np.array([[3.0, 5.0], [0.0, 1.0]]))
    ranked = metagame.solve(pd, "alpha-rank")
    np.testing.assert_allclose(strategies(ranked), [[0, 1], [0, 1]], atol=1e-6)
    np.testing.assert_allclose(ranked.stationary, [0, 1] if ranked.stationary.ndim == 1 else [[0, 0], [0, 1]], atol=1e-6)


def test_ce_is_the_maximum_gini_correlated_equilibrium():
    from scipy.optimize import minimize

    ce = metagame.solve(metagame.NormalFormGame(*BOS), "ce")
    joint = ce.joint
    assert ce.stationary is None and ce.value is None
    assert joint.shape == (2, 2) and joint.sum() == pytest.approx(1.0) and np.all(joint >= -1e-12)
    assert ce_gains(joint, BOS).max() <= 1e-9
    assert ce.certificate["max_violation"] <= 1e-9
    np.testing.assert_allclose(strategies(ce)[0], joint.sum(axis=1), atol=1e-12)
    np.testing.assert_allclose(strategies(ce)[1], joint.sum(axis=0), atol=1e-12)
    # The solver's default objective is the maximum Gini impurity (MG-CE, the JPSRO
    # meta-solver): the CE of least squared norm, as SLSQP finds it.
    reference = minimize(
        lambda x: x @ x, np.full(4, 0.25), method="SLSQP", bounds=[(0, 1)] * 4,
        constraints=[{"type": "eq", "fun": lambda x: x.sum() - 1},
                     {"type": "ineq", "fun": lambda x: -ce_gains(x.reshape(2, 2), BOS)}],
        options={"ftol": 1e-14, "maxiter": 500},
    )
    assert reference.success
    np.testing.assert_allclose(joint.ravel(), reference.x, atol=1e-6)
    # CCE constraints are weaker: the CE is a CCE, and "cce" gives one.
    cce = metagame.solve(metagame.NormalFormGame(*BOS), "cce")
    assert cce.certificate["max_violation"] <= 1e-9 and cce.joint.sum() == pytest.approx(1.0)


def test_solve_all_finds_battle_of_the_sexes_three_equilibria():
    for solver in ("support-enumeration", "vertex-enumeration"):
        solutions = metagame.solve_all(BOS, solver)
        found = sorted(tuple(map(tuple, np.round(strategies(s), 9))) for s in solutions)
        assert found == sorted(tuple(map(tuple, e)) for e in BOS_EQUILIBRIA)
        assert all(s.is_equilibrium and s.status == "solved" for s in solutions)


def test_solve_all_on_von_stengels_game():
    # The file's comment: (T, l); ((0, 1/3, 2/3), (1/3, 2/3)); ((4/5, 1/5, 0), (2/3, 1/3)).
    game = metagame.NormalFormGame.from_nfg(EXAMPLES / "von_stengel_3x2.nfg")
    expected = [((1, 0, 0), (1, 0)), ((0, 1 / 3, 2 / 3), (1 / 3, 2 / 3)), ((4 / 5, 1 / 5, 0), (2 / 3, 1 / 3))]
    found = metagame.solve_all(game, "vertex-enumeration")
    assert len(found) == 3
    for x, y in expected:
        assert any(np.allclose(s.strategies[0], x, atol=1e-9) and np.allclose(s.strategies[1], y, atol=1e-9)
                   for s in found)
    # The default solver returns one of them, certified.
    one = metagame.solve(game)
    assert one.is_equilibrium


def test_three_player_game():
    rng = np.random.default_rng(5)
    tensors = [rng.standard_normal((2, 2, 2)) for _ in range(3)]
    solution = metagame.solve(tensors, "nash")
    assert_distributions(solution, (2, 2, 2))
    assert solution.is_equilibrium
    assert metagame.NormalFormGame(tensors).nash_conv(solution.strategies) <= 1e-8
    ce = metagame.solve(tensors, "ce")
    assert ce.joint.shape == (2, 2, 2)


# --- against other implementations ------------------------------------------------------


def test_lp_value_equals_highs_on_a_random_20x20_game():
    from scipy.optimize import linprog

    payoffs = np.random.default_rng(7).standard_normal((20, 20))
    solution = metagame.solve(payoffs, "lp")
    # HiGHS: maximise v subject to x^T A >= v (every column), x a distribution.
    m, n = payoffs.shape
    cost = np.r_[np.zeros(m), -1.0]
    result = linprog(cost, A_ub=np.c_[-payoffs.T, np.ones(n)], b_ub=np.zeros(n),
                     A_eq=np.r_[np.ones(m), 0.0][None, :], b_eq=[1.0],
                     bounds=[(0, None)] * m + [(None, None)], method="highs")
    assert result.status == 0
    assert solution.value == pytest.approx(-result.fun, abs=1e-9)
    x, y = strategies(solution)
    # Both strategies guarantee the value.
    assert (x @ payoffs).min() == pytest.approx(solution.value, abs=1e-9)
    assert (payoffs @ y).max() == pytest.approx(solution.value, abs=1e-9)


def test_support_enumeration_equals_nashpys():
    nashpy = require("nashpy")
    # A generic (non-degenerate) 4x4 bimatrix game with three equilibria.
    a, b = (np.random.default_rng(seed).standard_normal((4, 4)) for seed in (3, 103))
    theirs = list(nashpy.Game(a, b).support_enumeration())
    assert len(theirs) >= 3
    for solver in ("support-enumeration", "vertex-enumeration"):
        ours = metagame.solve_all((a, b), solver)
        assert len(ours) == len(theirs)
        for x, y in theirs:
            assert any(np.allclose(s.strategies[0], x, atol=1e-9) and np.allclose(s.strategies[1], y, atol=1e-9)
                       for s in ours), (solver, x, y)


def test_an_equilibrium_nashpys_support_enumeration_misses():
    # On this generic game nashpy 0.0.43's support enumeration returns nothing (its
    # tolerance check rejects the answer) while its vertex enumeration finds the one
    # equilibrium, with supports of sizes 3 and 3; both enumerations here find it.
    nashpy = require("nashpy")
    a, b = (np.random.default_rng(seed).standard_normal((4, 4)) for seed in (1, 101))
    (x, y), = list(nashpy.Game(a, b).vertex_enumeration())
    for solver in ("support-enumeration", "vertex-enumeration"):
        (ours,) = metagame.solve_all((a, b), solver)
        np.testing.assert_allclose(ours.strategies[0], x, atol=1e-9)
        np.testing.assert_allclose(ours.strategies[1], y, atol=1e-9)
        assert ours.is_equilibrium
