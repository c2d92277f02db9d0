"""Shared fixtures: the built-in games (enumerated once per session) and seeded random
policies that put probability only on legal actions."""

from __future__ import annotations

import numpy as np
import pytest

import metagame


@pytest.fixture(scope="session")
def kuhn() -> metagame.Game:
    return metagame.load_game("kuhn_poker")


@pytest.fixture(scope="session")
def leduc() -> metagame.Game:
    return metagame.load_game("leduc_poker")


@pytest.fixture(scope="session")
def kuhn3() -> metagame.Game:
    return metagame.load_game("kuhn_poker(players=3)")


def legal_mask(game: metagame.Game) -> np.ndarray:
    """``[infosets x actions]``: 1 where the action is legal."""
    mask = np.zeros((game.num_infosets, game.num_actions))
    for i in range(game.num_infosets):
        mask[i, game.legal_actions(i)] = 1.0
    return mask


def random_rows(mask: np.ndarray, seed: int) -> np.ndarray:
    """Rows drawn uniformly from the simplex of each row's legal actions (so every legal
    action has positive probability and best responses have no ties)."""
    rng = np.random.default_rng(seed)
    rows = rng.exponential(size=mask.shape) * mask
    return rows / rows.sum(axis=1, keepdims=True)


@pytest.fixture
def random_policy():
    """``random_policy(game, seed)``: a seeded random numpy policy of a metagame Game."""

    def make(game: metagame.Game, seed: int) -> np.ndarray:
        return random_rows(legal_mask(game), seed)

    return make


@pytest.fixture
def random_tabular():
    """``random_tabular(pyspiel_game, seed)``: an OpenSpiel TabularPolicy with seeded random
    rows over the legal actions."""
    from open_spiel.python import policy as os_policy

    def make(pyspiel_game, seed: int):
        tabular = os_policy.TabularPolicy(pyspiel_game)
        tabular.action_probability_array[:] = random_rows(tabular.legal_actions_mask.astype(float), seed)
        return tabular

    return make
