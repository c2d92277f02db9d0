"""Shared fixtures: the built-in games (enumerated once per session) and seeded random
policies that put probability only on legal actions; and how a test says that something it
needs is missing (a skip, but a failure under ``CI=true``, where every check runs)."""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import numpy as np
import pytest

import metagame


def missing(what: str) -> None:
    """Skip the test for want of ``what``, or fail it under ``CI=true`` (.ci/run sets it:
    in CI every check runs, as tests/it/book.rs and report_html_render.rs do in Rust)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI=true but {what}", pytrace=False)
    pytest.skip(what)


def require(module: str) -> ModuleType:
    """``pytest.importorskip(module)``, except that under ``CI=true`` a module that cannot
    be imported fails the test (python/requirements-test.txt installs every one asked for)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        missing(f"{module} cannot be imported ({e}); pip install -r python/requirements-test.txt")
        raise  # unreachable: missing() raises


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
