"""A PSRO oracle in JAX: clipped PPO as CleanRL's ppo.py has it (GAE, advantages
normalised per minibatch, clipped policy loss, value loss, entropy bonus, Adam, gradient
clipping), trained against each request's meta-mixture through ``request.env`` and
answering with its policy network as a callable (``metagame.jax.policy``).

    python examples/python/ppo_oracle.py [game] [iterations]

runs PSRO on Kuhn poker (by default) with it and prints each iteration's exact NashConv.
"""

from __future__ import annotations

import sys
from functools import partial

import jax
import jax.numpy as jnp
import numpy as np

import metagame
import metagame.jax


def init(key, sizes):
    """An MLP's layers, orthogonal-ish (scaled normal) weights and zero biases."""
    layers = []
    for a, b in zip(sizes, sizes[1:]):
        key, k = jax.random.split(key)
        layers.append((jax.random.normal(k, (a, b)) * jnp.sqrt(2.0 / a), jnp.zeros(b)))
    return layers


def mlp(layers, x):
    for w, b in layers[:-1]:
        x = jnp.tanh(x @ w + b)
    w, b = layers[-1]
    return x @ w + b


def masked(logits, mask):
    return jnp.where(mask, logits, -1e9)


@jax.jit
def act(params, obs, mask, key):
    logits = masked(mlp(params["pi"], obs), mask)
    action = jax.random.categorical(key, logits)
    logp = jax.nn.log_softmax(logits)[jnp.arange(len(action)), action]
    return action, logp, mlp(params["v"], obs)[:, 0]


def loss(params, batch, clip, ent_coef, vf_coef):
    logits = masked(mlp(params["pi"], batch["obs"]), batch["mask"])
    logp_all = jax.nn.log_softmax(logits)
    logp = logp_all[jnp.arange(len(batch["actions"])), batch["actions"]]
    ratio = jnp.exp(logp - batch["logp"])
    adv = (batch["adv"] - batch["adv"].mean()) / (batch["adv"].std() + 1e-8)
    policy_loss = jnp.maximum(-adv * ratio, -adv * jnp.clip(ratio, 1 - clip, 1 + clip)).mean()
    value_loss = 0.5 * ((mlp(params["v"], batch["obs"])[:, 0] - batch["returns"]) ** 2).mean()
    entropy = -(jnp.exp(logp_all) * jnp.where(batch["mask"], logp_all, 0.0)).sum(axis=1).mean()
    return policy_loss - ent_coef * entropy + vf_coef * value_loss


@partial(jax.jit, static_argnames=("clip", "ent_coef", "vf_coef", "lr", "max_norm"))
def update(params, adam, batch, *, clip, ent_coef, vf_coef, lr, max_norm):
    grads = jax.grad(loss)(params, batch, clip, ent_coef, vf_coef)
    norm = jnp.sqrt(sum(jnp.sum(g**2) for g in jax.tree_util.tree_leaves(grads)))
    grads = jax.tree_util.tree_map(lambda g: g * jnp.minimum(1.0, max_norm / (norm + 1e-6)), grads)
    t = adam["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: 0.9 * m + 0.1 * g, adam["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: 0.999 * v + 0.001 * g**2, adam["v"], grads)
    step = lr * jnp.sqrt(1 - 0.999**t) / (1 - 0.9**t)
    params = jax.tree_util.tree_map(lambda p, m, v: p - step * m / (jnp.sqrt(v) + 1e-5), params, m, v)
    return params, {"t": t, "m": m, "v": v}


class PPO:
    """The oracle: ``respond(request)`` trains a fresh network for ``updates`` rounds of
    ``lanes`` × ``steps`` decisions, then answers with it."""

    def __init__(self, lanes=64, steps=16, updates=40, epochs=4, minibatches=4, lr=3e-3, gamma=1.0, lam=0.95,
                 clip=0.2, ent_coef=0.01, vf_coef=0.5, max_norm=0.5, hidden=64):
        self.__dict__.update(locals())
        del self.__dict__["self"]

    def respond(self, request):
        env = request.env(self.lanes)
        d, a, n, t_max = env.observation_size, env.num_actions, self.lanes, self.steps
        key = jax.random.PRNGKey(request.seed % 2**31)
        key, k_pi, k_v = jax.random.split(key, 3)
        params = {"pi": init(k_pi, [d, self.hidden, self.hidden, a]), "v": init(k_v, [d, self.hidden, self.hidden, 1])}
        zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
        adam = {"t": 0, "m": zeros, "v": zeros}
        obs, infos = env.reset()
        mask = infos["action_mask"]
        rng = np.random.default_rng(request.seed)
        for _ in range(self.updates):
            buf = {k: [] for k in ("obs", "mask", "actions", "logp", "values", "rewards", "dones")}
            for _ in range(t_max):
                key, k = jax.random.split(key)
                action, logp, value = act(params, obs, mask, k)
                action = np.asarray(action)
                for name, x in (("obs", obs), ("mask", mask), ("actions", action), ("logp", logp), ("values", value)):
                    buf[name].append(np.asarray(x))
                obs, reward, done, _, infos = env.step(action)
                mask = infos["action_mask"]
                buf["rewards"].append(reward)
                buf["dones"].append(done)
            # GAE; a lane whose episode ended starts the next at once, so an ended step
            # bootstraps nothing.
            _, _, next_value = act(params, obs, mask, key)
            values, rewards, dones = (np.array(buf[k]) for k in ("values", "rewards", "dones"))
            adv, last = np.zeros((t_max, n)), np.zeros(n)
            next_value = np.asarray(next_value)
            for t in reversed(range(t_max)):
                following = next_value if t == t_max - 1 else values[t + 1]
                delta = rewards[t] + self.gamma * following * (1 - dones[t]) - values[t]
                last = delta + self.gamma * self.lam * (1 - dones[t]) * last
                adv[t] = last
            batch = {
                "obs": np.array(buf["obs"]).reshape(t_max * n, d),
                "mask": np.array(buf["mask"]).reshape(t_max * n, a),
                "actions": np.array(buf["actions"]).reshape(-1),
                "logp": np.array(buf["logp"]).reshape(-1),
                "adv": adv.reshape(-1).astype(np.float32),
                "returns": (adv + values).reshape(-1).astype(np.float32),
            }
            size = t_max * n // self.minibatches
            for _ in range(self.epochs):
                order = rng.permutation(t_max * n)
                for i in range(self.minibatches):
                    part = {k: v[order[i * size:(i + 1) * size]] for k, v in batch.items()}
                    params, adam = update(params, adam, part, clip=self.clip, ent_coef=self.ent_coef,
                                          vf_coef=self.vf_coef, lr=self.lr, max_norm=self.max_norm)
        return metagame.jax.policy(mlp, params["pi"], name="ppo")


if __name__ == "__main__":
    game = sys.argv[1] if len(sys.argv) > 1 else "kuhn_poker"
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    config = {"game": game, "algorithm": "psro", "meta_solver": "nash", "max_iterations": iterations}
    for report in metagame.Experiment(config, out=f"runs/{game}_psro_jax_ppo", oracle=PPO(), overwrite=True):
        print(report["iteration"], report["nash_conv"])
