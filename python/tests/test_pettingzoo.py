"""PettingZoo environments as games (``metagame.pettingzoo.from_env``): connect four and
tic-tac-toe give the built-in games' payoffs within standard errors, Leduc hold'em is dealt
at random through its chance seeds, rock-paper-scissors (a parallel environment) is walked
into a tree with its exact NashConv, and VecEnv plays them with PettingZoo's masks."""

from __future__ import annotations

import numpy as np
import pytest

import metagame
from conftest import require


def centre(obs, legal):
    """Prefers the middle columns, reading nothing (the same policy on every encoding)."""
    weights = legal * np.array([1, 2, 4, 8, 4, 2, 1], dtype=np.float32)
    return weights / weights.sum(axis=1, keepdims=True)


def close(ours, theirs):
    for x, y in zip(ours["entries"], theirs["entries"]):
        gap = abs(x["mean"][0] - y["mean"][0])
        assert gap < 4 * np.hypot(x["stderr"][0], y["stderr"][0]) + 1e-12, (x, y)


def test_connect_four_v3_gives_the_built_in_payoffs_within_standard_errors():
    require("pettingzoo")
    import metagame.pettingzoo
    from pettingzoo.classic import connect_four_v3

    game = metagame.pettingzoo.from_env(connect_four_v3.env)
    assert (game.num_players, game.num_actions, game.tensor_shape) == (2, 7, ("information_state", [84]))
    ours = metagame.matches(game, ["uniform", centre], episodes=250, seed=0)
    native = metagame.matches("connect_four", ["uniform", centre], episodes=4000, seed=1)
    close(ours, native)
    # The centre policy beats uniform play from either seat.
    assert ours["entries"][2]["mean"][0] > 0 > ours["entries"][1]["mean"][0]


def test_tictactoe_v3_gives_the_built_in_payoffs_and_plays_in_a_vec_env():
    require("pettingzoo")
    import metagame.pettingzoo
    from pettingzoo.classic import tictactoe_v3

    game = metagame.pettingzoo.from_env(tictactoe_v3.env)
    close(metagame.matches(game, ["uniform"], episodes=600, seed=0),
          metagame.matches("tic_tac_toe", ["uniform"], episodes=20000, seed=0))
    env = metagame.VecEnv(game, 8, player=1, opponents=["first-action"])
    obs, infos = env.reset()
    assert obs.shape == (8, 18) and infos["action_mask"].shape == (8, 9)
    while env.finished[0] < 8:
        obs, rewards, done, _, infos = env.step(infos["action_mask"].argmax(axis=1))
        assert set(np.unique(rewards[done])) <= {-1.0, 0.0, 1.0}


def test_leduc_holdem_v4_is_dealt_at_random_through_its_chance_seeds():
    require("pettingzoo")
    import metagame.pettingzoo
    from pettingzoo.classic import leduc_holdem_v4

    dealt = metagame.pettingzoo.from_env(leduc_holdem_v4.env, chance_seeds=1000)
    obs, _ = metagame.VecEnv(dealt, 16).reset()
    assert len({row.tobytes() for row in obs}) > 1  # not every lane holds the same card
    fixed = metagame.pettingzoo.from_env(leduc_holdem_v4.env)
    obs, _ = metagame.VecEnv(fixed, 16).reset()
    assert len({row.tobytes() for row in obs}) == 1  # one deal, reset(seed=0)
    table = metagame.matches(dealt, ["uniform"], episodes=300, seed=0)
    assert table["entries"][0]["episodes"] == 300


def test_a_parallel_env_is_walked_into_a_tree_with_exact_nash_conv():
    require("pettingzoo")
    import metagame.pettingzoo
    from pettingzoo.classic import rps_v2

    game = metagame.pettingzoo.from_env(lambda: rps_v2.parallel_env(max_cycles=1), walk=True)
    assert (game.num_nodes, game.num_infosets) == (13, 2)
    assert metagame.nash_conv(game, metagame.Policy.uniform(game)) == pytest.approx(0.0, abs=1e-12)
    rock = lambda obs, legal: np.eye(3, dtype=np.float32)[np.zeros(len(obs), int)]  # noqa: E731
    assert metagame.nash_conv(game, rock) == pytest.approx(2.0)
    with pytest.raises(TypeError, match="env_fn must make a PettingZoo environment"):
        metagame.pettingzoo.from_env(lambda: "connect_four")


def test_neural_psro_runs_on_tictactoe_v3_and_resumes(tmp_path):
    require("pettingzoo")
    import metagame.pettingzoo
    from pettingzoo.classic import tictactoe_v3

    game = metagame.pettingzoo.from_env(tictactoe_v3.env)
    config = {"algorithm": "psro", "oracle": "ppo", "evaluator": "rollout", "episodes_per_entry": 40,
              "max_iterations": 2, "learner": {"episodes_per_response": 64}}
    whole = metagame.run(config, out=tmp_path / "whole", game=game)
    assert whole["meta_game_shape"] == [3, 3] and whole["meta_game_stderr"] is not None
    assert len([f for f in (tmp_path / "whole" / "members").iterdir() if f.suffix == ".safetensors"]) == 4
    with metagame.Experiment(config, out=tmp_path / "cut", game=game) as experiment:
        next(experiment)
        next(experiment)
    resumed = metagame.run(config, out=tmp_path / "cut", game=game, resume=True)
    assert resumed["meta_game"] == whole["meta_game"]
