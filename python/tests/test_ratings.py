"""Ratings from numpy match data: online Elo, batch Elo (Bradley-Terry, OpenSpiel's
smoothing), mElo and Nash averaging. Known values are those of the Rust tests
(populations/src/loops/league/rating/batch_elo.rs, tests/it/ratings.rs) and of
OpenSpiel's ``open_spiel/python/algorithms/elo_test.py`` and ``open_spiel/evaluation/elo_test.cc``
where they come from there."""

from __future__ import annotations

import math

import numpy as np
import pytest

import metagame


def cyclic_matches(edge: float, count: int, seed: int) -> np.ndarray:
    """Rock-paper-scissors members: i beats i + 1 (mod 3) with probability ``edge``;
    ``count`` matches between uniformly drawn distinct pairs, as (first, second, score)."""
    rng = np.random.default_rng(seed)
    first = rng.integers(0, 3, count)
    second = (first + rng.integers(1, 3, count)) % 3
    beats = (second - first) % 3 == 1
    p_first = np.where(beats, edge, 1 - edge)
    score = (rng.random(count) < p_first).astype(float)
    return np.c_[first, second, score]


def melo_predict(ratings, vectors, i, j, scale=400.0):
    """mElo's P(i beats j): logistic(ln 10 / scale * (r_i - r_j) + c_i^T Omega c_j), Omega
    pairing the components (Balduzzi et al. 2018, arXiv:1806.02643, eq. 4)."""
    ci, cj = vectors[i].reshape(-1, 2), vectors[j].reshape(-1, 2)
    cyclic = float((ci[:, 0] * cj[:, 1] - ci[:, 1] * cj[:, 0]).sum())
    return 1 / (1 + math.exp(-(math.log(10) / scale * (ratings[i] - ratings[j]) + cyclic)))


# --- online Elo --------------------------------------------------------------------------


def test_elo_one_win():
    # Equal ratings expect 1/2, so the winner gains K/2 = 16 points.
    np.testing.assert_allclose(metagame.elo([[0, 1, 1.0]]), [1016.0, 984.0])
    np.testing.assert_allclose(metagame.elo([[0, 1, 0.0]]), [984.0, 1016.0])
    np.testing.assert_allclose(metagame.elo([[0, 1, 0.5]]), [1000.0, 1000.0])
    # Settings: K, scale and the starting rating.
    np.testing.assert_allclose(metagame.elo([[0, 1, 1.0]], k_factor=10, initial_rating=1500), [1505.0, 1495.0])


def test_elo_sequence_by_hand():
    # Second match: 0 (1016) draws 1 (984); 0 expected 1/(1 + 10^(-32/400)).
    expected = 1 / (1 + 10 ** (-32 / 400))
    np.testing.assert_allclose(metagame.elo([[0, 1, 1], [1, 0, 0.5]]),
                               [1016 + 32 * (0.5 - expected), 984 - 32 * (0.5 - expected)], atol=1e-12)


def test_elo_winner_rises_and_the_sum_is_conserved():
    matches = cyclic_matches(0.8, 300, seed=1)
    ratings = metagame.elo(matches)
    assert ratings.shape == (3,) and ratings.sum() == pytest.approx(3000.0, abs=1e-9)
    # A member that always wins rises above everyone; unplayed members stay at the start.
    winner = np.array([[3, m, 1.0] for m in (0, 1, 2)] * 10)
    ratings = metagame.elo(np.r_[matches, winner], num_members=5)
    assert ratings[3] == ratings.max() and ratings[3] > 1000 and ratings[4] == 1000.0
    assert ratings.sum() == pytest.approx(5000.0, abs=1e-9)


# --- batch Elo ---------------------------------------------------------------------------


def test_batch_elo_openspiel_known_matrix():
    # OpenSpiel's test (Meeple Pentathlon): members 0 and 2 are provably equal, 1 weaker, and
    # the lowest rating is 0.
    ratings = metagame.batch_elo([[0, 4, 2], [1, 0, 2], [3, 3, 0]])
    assert ratings[0] == pytest.approx(ratings[2], abs=1e-6)
    assert ratings[1] == 0.0 and ratings[1] < ratings[0]
    # A draw between 0 and 1 tips it to r2 > r0 (OpenSpiel's Python test).
    drawn = metagame.batch_elo([[0, 4, 2], [1, 0, 2], [3, 3, 0]], [[0, 1, 0], [1, 0, 0], [0, 0, 0]])
    assert drawn[2] > drawn[0]


def test_batch_elo_two_members_closed_form():
    # 2 wins to 1, smoothing 0.01: odds 2.01 : 1.01, so 400 log10(2.01 / 1.01) and 0.
    np.testing.assert_allclose(metagame.batch_elo([[0, 2], [1, 0]]), [400 * math.log10(2.01 / 1.01), 0.0],
                               atol=1e-6)
    # A draw counts half a win each: 2.51 : 1.51.
    np.testing.assert_allclose(metagame.batch_elo([[0, 2], [1, 0]], [[0, 1], [1, 0]]),
                               [400 * math.log10(2.51 / 1.51), 0.0], atol=1e-6)
    # Settings: no smoothing gives the plain odds 2 : 1; a floor shifts everything.
    np.testing.assert_allclose(metagame.batch_elo([[0, 2], [1, 0]], smoothing=0.0, minimum_rating=1000),
                               [1000 + 400 * math.log10(2), 1000.0], atol=1e-6)


def test_batch_elo_sco_paper_order():
    # OpenSpiel's SCO-paper test: [[0, 5, 2], [0, 0, 2], [3, 3, 0]] orders r0 > r2 > r1.
    r = metagame.batch_elo([[0, 5, 2], [0, 0, 2], [3, 3, 0]])
    assert r[0] > r[2] > r[1]


# --- mElo --------------------------------------------------------------------------------


def test_melo_shapes_and_seeding():
    ratings, vectors = metagame.melo([[0, 1, 1.0]], num_members=4)
    assert ratings.shape == (4,) and vectors.shape == (4, 2)
    ratings, vectors = metagame.melo([[0, 1, 1.0]], k=3, seed=5)
    assert ratings.shape == (2,) and vectors.shape == (2, 6)
    # Initial vectors are drawn from [-0.5, 0.5], fixed by the seed.
    _, unplayed = metagame.melo(np.zeros((0, 3)), num_members=3, k=2, seed=9)
    assert np.all(np.abs(unplayed) <= 0.5)
    np.testing.assert_array_equal(unplayed, metagame.melo(np.zeros((0, 3)), num_members=3, k=2, seed=9)[1])
    assert not np.array_equal(unplayed, metagame.melo(np.zeros((0, 3)), num_members=3, k=2, seed=10)[1])
    # k = 0 is Elo with K = rating_rate.
    matches = [[0, 1, 1], [1, 2, 0.5], [2, 0, 0], [0, 2, 1]]
    ratings, vectors = metagame.melo(matches, k=0, rating_rate=24)
    assert vectors.shape == (3, 0)
    np.testing.assert_allclose(ratings, metagame.elo(matches, k_factor=24), atol=1e-9)


def test_melo_predicts_the_cycle_elo_cannot():
    # The Rust test's setting (tests/it/ratings.rs): edge 0.8, vector_rate 0.02, 30 000
    # matches. Elo sees three equal members; mElo learns who beats whom.
    matches = cyclic_matches(0.8, 30_000, seed=7)
    elo = metagame.elo(matches)
    assert np.ptp(elo) < 60  # predictions within a few points of 1/2
    ratings, vectors = metagame.melo(matches, vector_rate=0.02)
    for i in range(3):
        j = (i + 1) % 3
        assert melo_predict(ratings, vectors, i, j) == pytest.approx(0.8, abs=0.06)
        assert melo_predict(ratings, vectors, j, i) == pytest.approx(0.2, abs=0.06)


# --- Nash averaging ----------------------------------------------------------------------


def test_nash_averaging_of_rock_paper_scissors():
    rps = np.array([[0.5, 1.0, 0.0], [0.0, 0.5, 1.0], [1.0, 0.0, 0.5]])
    result = metagame.nash_averaging(rps)
    np.testing.assert_allclose(result["maxent_nash"], [1 / 3] * 3, atol=1e-6)
    np.testing.assert_allclose(result["skill"], [0.0] * 3, atol=1e-6)
    assert abs(result["deviation_gain"]) <= 1e-9
    # A fourth member that loses to everyone gets no mass and a negative skill.
    four = np.full((4, 4), 0.5)
    four[:3, :3] = rps
    four[3, :3], four[:3, 3] = 0.0, 1.0
    result = metagame.nash_averaging(four)
    assert result["maxent_nash"][3] < 1e-6 and result["skill"][3] < -0.4


def test_nash_averaging_of_a_transitive_population():
    # 0 beats 1 and 2, 1 beats 2 (each with 0.7): the Nash is member 0 alone, and a skill
    # is the win rate against it less 1/2: 1 and 2 both lose 0.7 to member 0.
    w = np.array([[0.5, 0.7, 0.7], [0.3, 0.5, 0.7], [0.3, 0.3, 0.5]])
    result = metagame.nash_averaging(w)
    np.testing.assert_allclose(result["maxent_nash"], [1, 0, 0], atol=1e-6)
    np.testing.assert_allclose(result["skill"], [0.0, -0.2, -0.2], atol=1e-6)
