"""OpenSpiel games played on pyspiel's states, not walked (``from_pyspiel(game,
walk=False)``): connect four equal move for move to the built-in one, breakthrough (too
large for any walk) in matches and VecEnv, a Python oracle's request on one, and a pyspiel
call that raises as one ValueError."""

from __future__ import annotations

import os

import numpy as np
import pytest

import metagame
import metagame.openspiel
from conftest import require


def test_connect_four_played_through_pyspiel_is_the_built_in_game_move_for_move():
    require("pyspiel")
    played = metagame.openspiel.from_pyspiel("connect_four", walk=False)
    assert isinstance(played, metagame.PlayedGame)
    assert (played.num_players, played.num_actions, played.tensor_shape) == (2, 7, ("observation", [3, 6, 7]))
    ours = metagame.VecEnv("connect_four", 8, player=1, opponents=["uniform"], seed=3)
    theirs = metagame.VecEnv(played, 8, player=1, opponents=["uniform"], seed=3)
    (obs_a, info_a), (obs_b, info_b) = ours.reset(), theirs.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        np.testing.assert_array_equal(obs_a, obs_b)
        np.testing.assert_array_equal(info_a["action_mask"], info_b["action_mask"])
        actions = [rng.choice(np.flatnonzero(m)) for m in info_a["action_mask"]]
        obs_a, r_a, d_a, _, info_a = ours.step(actions)
        obs_b, r_b, d_b, _, info_b = theirs.step(actions)
        np.testing.assert_array_equal(r_a, r_b)
        np.testing.assert_array_equal(d_a, d_b)
    assert ours.finished == theirs.finished and ours.finished[0] > 8


def test_matches_on_a_played_game_agree_with_the_built_in_game_within_standard_errors():
    require("pyspiel")
    played = metagame.openspiel.from_pyspiel("connect_four", walk=False)

    def centre(obs, legal):  # prefers the middle columns, reading nothing
        weights = legal * np.array([1, 2, 4, 8, 4, 2, 1], dtype=np.float32)
        return weights / weights.sum(axis=1, keepdims=True)

    a = metagame.matches(played, ["uniform", centre], episodes=400, seed=1)
    b = metagame.matches("connect_four", ["uniform", centre], episodes=400, seed=2)
    assert a["tree"] is False and len(a["entries"]) == 4
    for x, y in zip(a["entries"], b["entries"]):
        gap = abs(x["mean"][0] - y["mean"][0])
        assert gap < 4 * np.hypot(x["stderr"][0], y["stderr"][0]) + 1e-12, (x, y)
    # Both rate the policies by batch Elo over pyspiel's utility range [-1, 1]: the centre
    # player above uniform play, uniform at 0.
    for table in (a, b):
        assert table["batch_elo"][0] == 0.0 and table["batch_elo"][1] > 100, table["batch_elo"]


def test_breakthrough_too_large_to_walk_is_played_with_its_tensors():
    pyspiel = require("pyspiel")
    with pytest.raises(ValueError, match="walk=False"):
        metagame.openspiel.from_pyspiel("breakthrough")
    played = metagame.openspiel.from_pyspiel(pyspiel.load_game("breakthrough"), walk=False)
    d = int(np.prod(played.tensor_shape[1]))
    seen = []

    def first(obs, legal):
        seen.append(obs.shape)
        return (np.cumsum(legal, axis=1) == 1) & legal

    table = metagame.matches(played, ["uniform", first], episodes=20, seed=0)
    assert all(e["episodes"] == 20 for e in table["entries"])
    assert {s[1] for s in seen} == {d}
    env = metagame.VecEnv(played, 4, opponents=[first])
    obs, infos = env.reset()
    while env.finished[0] < 4:
        obs, *_, infos = env.step(infos["action_mask"].argmax(axis=1))
    assert obs.shape == (4, d)


def test_a_request_on_a_played_game_trains_through_its_env():
    require("pyspiel")
    played = metagame.openspiel.from_pyspiel("connect_four", walk=False)
    request = metagame.ResponseRequest(played, 0, [(1, 0, "uniform", 1.0)], seed=5)
    assert request.game is None and request.game_name == "connect_four()" and request.profile is None
    env = request.env(16)
    _, infos = env.reset()
    while env.finished[0] < 16:
        _, _, _, _, infos = env.step(infos["action_mask"].argmax(axis=1))
    # Always the leftmost column against uniform play wins most games.
    assert env.finished[1] > 0


class _Type:
    class dynamics:
        name = "SEQUENTIAL"

    class utility:
        name = "ZERO_SUM"

    class information:
        name = "PERFECT_INFORMATION"

    provides_information_state_tensor = False
    provides_observation_tensor = False


class _BrokenState:
    """Counts to 3 and then raises, as a buggy game would."""

    def __init__(self, moves=0):
        self.moves = moves

    def is_terminal(self):
        return self.moves >= 6

    def is_chance_node(self):
        return False

    def current_player(self):
        return self.moves % 2

    def legal_actions(self):
        return [0, 1]

    def apply_action(self, action):
        if self.moves == 3:
            raise RuntimeError("the fourth move is broken")
        self.moves += 1

    def returns(self):
        return [1.0, -1.0]

    def clone(self):
        return _BrokenState(self.moves)


class _BrokenGame:
    def __str__(self):
        return "broken_game"

    def get_type(self):
        return _Type()

    def num_players(self):
        return 2

    def num_distinct_actions(self):
        return 2

    def new_initial_state(self):
        return _BrokenState()


def test_a_pyspiel_call_that_raises_is_one_value_error_of_the_call_that_played_it():
    played = metagame.openspiel.from_pyspiel(_BrokenGame(), walk=False)
    with pytest.raises(ValueError, match=r"broken_game: apply_action\(\) raised RuntimeError: the fourth move is broken"):
        metagame.matches(played, ["uniform"], episodes=10)
    env = metagame.VecEnv(played, 2)
    _, infos = env.reset()
    with pytest.raises(ValueError, match="the fourth move is broken"):
        for _ in range(4):
            _, _, _, _, infos = env.step([0, 0])


PPO_PSRO = {"algorithm": "psro", "oracle": "ppo", "evaluator": "rollout", "episodes_per_entry": 60,
            "max_iterations": 2, "seed": 2, "learner": {"episodes_per_response": 48}}


def without_times(report: dict) -> list:
    return [{k: v for k, v in it.items() if k not in ("elapsed_s", "times")} for it in report["iterations"]]


def test_a_psro_run_on_pyspiel_connect_four_is_the_run_on_the_built_in_game_and_resumes(tmp_path):
    require("pyspiel")
    played = metagame.openspiel.from_pyspiel("connect_four", walk=False)
    # The config names no game: the played game's name is taken, as for a Game.
    theirs = metagame.run(PPO_PSRO, out=tmp_path / "pyspiel", game=played)
    ours = metagame.run({**PPO_PSRO, "game": "connect_four"}, out=tmp_path / "native")
    assert theirs["config"]["game"] == "connect_four()" and theirs["meta_game_stderr"] is not None
    # Move for move the same game, the same tensors and draws: the same networks and payoffs.
    assert theirs["meta_game"] == ours["meta_game"]
    assert sorted(os.listdir(tmp_path / "pyspiel" / "members")) == sorted(os.listdir(tmp_path / "native" / "members"))
    # Stopped after its first response and resumed with the game given again.
    with metagame.Experiment(PPO_PSRO, out=tmp_path / "cut", game=played) as experiment:
        next(experiment)
        next(experiment)
    resumed = metagame.run(PPO_PSRO, out=tmp_path / "cut", game=played, resume=True)
    assert without_times(resumed) == without_times(theirs)


def test_exact_algorithms_refuse_a_played_game_in_one_line(tmp_path):
    played = metagame.openspiel.from_pyspiel(_BrokenGame(), walk=False)
    with pytest.raises(ValueError, match=r"algorithm `cfr` needs the game tree, and broken_game is played on its states"):
        metagame.run({"algorithm": "cfr", "max_iterations": 2}, out=tmp_path / "cfr", game=played)
    with pytest.raises(ValueError, match=r"^<config>: game: the config names `kuhn_poker`, but the run is on the game `broken_game`$"):
        metagame.run({"algorithm": "psro", "game": "kuhn_poker", "evaluator": "rollout"}, out=tmp_path / "kuhn",
                     game=played)


class _FlakyState(_BrokenState):
    """Plays well until ``_FlakyState.broken`` is set: a game whose code fails mid-run."""

    broken = False

    def current_player(self):
        return -4 if self.is_terminal() else self.moves % 2  # pyspiel's terminal player

    def apply_action(self, action):
        if _FlakyState.broken and self.moves == 3:
            raise RuntimeError("the fourth move is broken")
        self.moves += 1

    def returns(self):
        return [1.0, -1.0] if self.moves % 4 else [-1.0, 1.0]

    def clone(self):
        return _FlakyState(self.moves)


class _FlakyGame(_BrokenGame):
    def __str__(self):
        return "flaky_game"

    def new_initial_state(self):
        return _FlakyState()


class _UniformOracle:
    def respond(self, request):
        return "uniform"


def test_a_played_game_that_fails_mid_run_is_one_value_error_and_the_run_resumes(tmp_path):
    played = metagame.openspiel.from_pyspiel(_FlakyGame(), walk=False)
    config = {"algorithm": "psro", "evaluator": "rollout", "episodes_per_entry": 20, "max_iterations": 3}
    whole = metagame.run(config, out=tmp_path / "whole", game=played, oracle=_UniformOracle())
    with metagame.Experiment(config, out=tmp_path / "run", game=played, oracle=_UniformOracle()) as experiment:
        next(experiment)
        next(experiment)
    kept = (tmp_path / "run" / "checkpoint.json").read_bytes()
    _FlakyState.broken = True
    try:
        with pytest.raises(ValueError, match=r"^flaky_game: apply_action\(\) raised RuntimeError: the fourth move is broken$"):
            metagame.run(config, out=tmp_path / "run", game=played, oracle=_UniformOracle(), resume=True)
    finally:
        _FlakyState.broken = False
    # Nothing of the failed iteration was kept: the run resumes to the uninterrupted one.
    assert (tmp_path / "run" / "checkpoint.json").read_bytes() == kept
    resumed = metagame.run(config, out=tmp_path / "run", game=played, oracle=_UniformOracle(), resume=True)
    assert without_times(resumed) == without_times(whole)
