"""``metagame.jax``: a JAX function as a policy, over the callable contract, equal to the
same network written in numpy; in matches and VecEnv like any callable."""

from __future__ import annotations

import numpy as np
import pytest

import metagame
from conftest import require


def weights(inputs: int, actions: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return {
        "w1": rng.standard_normal((inputs, 32)).astype(np.float32) / np.sqrt(inputs),
        "w2": rng.standard_normal((32, actions)).astype(np.float32),
    }


def numpy_policy(params):
    def mlp(obs, legal):
        logits = np.where(legal, np.maximum(obs @ params["w1"], 0) @ params["w2"], -np.inf)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)

    return mlp


def test_a_jax_function_is_a_policy_equal_to_its_numpy_twin():
    jnp = require("jax.numpy")
    import metagame.jax

    leduc = metagame.load_game("leduc_poker")
    params = weights(leduc.tensor_shape[1][0], leduc.num_actions)

    def apply(params, obs):
        return jnp.maximum(obs @ params["w1"], 0) @ params["w2"]

    jax_policy = metagame.jax.policy(apply, {k: jnp.asarray(v) for k, v in params.items()})
    assert jax_policy.__name__ == "apply"
    assert metagame.nash_conv(leduc, jax_policy) == pytest.approx(metagame.nash_conv(leduc, numpy_policy(params)), abs=1e-5)
    # A function of the observation alone, played on a game without a tree.
    env = metagame.VecEnv("connect_four", 32, opponents=[metagame.jax.policy(lambda obs: jnp.zeros((obs.shape[0], 7)))])
    obs, infos = env.reset()
    for _ in range(30):
        obs, _, _, _, infos = env.step(infos["action_mask"].argmax(axis=1))
    assert env.finished[0] > 0


def test_the_books_jax_ppo_oracle_lowers_nash_conv_through_request_env(tmp_path):
    """examples/python/ppo_oracle.py, the PPO oracle the book shows, in a short PSRO run."""
    require("jax")
    import importlib.util
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "examples" / "python" / "ppo_oracle.py"
    spec = importlib.util.spec_from_file_location("ppo_oracle", path)
    ppo_oracle = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(ppo_oracle)
    config = {"game": "kuhn_poker", "algorithm": "psro", "meta_solver": "nash", "max_iterations": 3}
    report = metagame.run(config, out=tmp_path / "run", oracle=ppo_oracle.PPO(updates=25))
    nash_conv = [it["nash_conv"] for it in report["iterations"]]
    assert nash_conv[-1] < 0.5 * nash_conv[0], nash_conv
