"""A PSRO oracle in PyTorch: clipped PPO as CleanRL's ppo.py has it (GAE, advantages
normalised per minibatch, clipped policy loss, value loss, entropy bonus, Adam, gradient
clipping), trained against each request's meta-mixture through ``request.env`` and
answering with its policy network (``metagame.torch.policy``: a run on a game too large
for its tree keeps it as a member, its state dict in safetensors, without pickle).

    python examples/python/ppo_oracle_torch.py [game] [iterations]

runs PSRO on Kuhn poker (by default) with it and prints each iteration's NashConv
(``scripts/check-torch-adapter`` runs it: PyTorch is too large for the test venv).
"""

from __future__ import annotations

import sys

import numpy as np
import torch
from torch import nn

import metagame
import metagame.torch


def mlp(inputs: int, outputs: int, hidden: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inputs, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, outputs))


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
        torch.manual_seed(request.seed % 2**63)
        pi, v = mlp(d, a, self.hidden), mlp(d, 1, self.hidden)
        params = list(pi.parameters()) + list(v.parameters())
        optimiser = torch.optim.Adam(params, lr=self.lr, eps=1e-5)
        obs, infos = env.reset()
        mask = infos["action_mask"]
        rng = np.random.default_rng(request.seed)
        for _ in range(self.updates):
            buf = {k: [] for k in ("obs", "mask", "actions", "logp", "values", "rewards", "dones")}
            with torch.no_grad():
                for _ in range(t_max):
                    x, m = torch.from_numpy(obs), torch.from_numpy(mask)
                    dist = torch.distributions.Categorical(logits=pi(x).masked_fill(~m, -1e9))
                    action = dist.sample()
                    for name, value in (("obs", x), ("mask", m), ("actions", action), ("logp", dist.log_prob(action)),
                                        ("values", v(x)[:, 0])):
                        buf[name].append(value)
                    obs, reward, done, _, infos = env.step(action.numpy())
                    mask = infos["action_mask"]
                    buf["rewards"].append(torch.from_numpy(reward).float())
                    buf["dones"].append(torch.from_numpy(done).float())
                # GAE; a lane whose episode ended starts the next at once, so an ended step
                # bootstraps nothing.
                next_value = v(torch.from_numpy(obs))[:, 0]
                values, rewards, dones = (torch.stack(buf[k]) for k in ("values", "rewards", "dones"))
                adv, last = torch.zeros(t_max, n), torch.zeros(n)
                for t in reversed(range(t_max)):
                    following = next_value if t == t_max - 1 else values[t + 1]
                    delta = rewards[t] + self.gamma * following * (1 - dones[t]) - values[t]
                    last = delta + self.gamma * self.lam * (1 - dones[t]) * last
                    adv[t] = last
            batch = {
                "obs": torch.stack(buf["obs"]).reshape(t_max * n, d),
                "mask": torch.stack(buf["mask"]).reshape(t_max * n, a),
                "actions": torch.stack(buf["actions"]).reshape(-1),
                "logp": torch.stack(buf["logp"]).reshape(-1),
                "adv": adv.reshape(-1),
                "returns": (adv + values).reshape(-1),
            }
            size = t_max * n // self.minibatches
            for _ in range(self.epochs):
                order = torch.from_numpy(rng.permutation(t_max * n))
                for i in range(self.minibatches):
                    part = {k: x[order[i * size:(i + 1) * size]] for k, x in batch.items()}
                    dist = torch.distributions.Categorical(logits=pi(part["obs"]).masked_fill(~part["mask"], -1e9))
                    ratio = (dist.log_prob(part["actions"]) - part["logp"]).exp()
                    adv_n = (part["adv"] - part["adv"].mean()) / (part["adv"].std() + 1e-8)
                    policy_loss = torch.max(-adv_n * ratio, -adv_n * ratio.clamp(1 - self.clip, 1 + self.clip)).mean()
                    value_loss = 0.5 * ((v(part["obs"])[:, 0] - part["returns"]) ** 2).mean()
                    loss = policy_loss - self.ent_coef * dist.entropy().mean() + self.vf_coef * value_loss
                    optimiser.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_(params, self.max_norm)
                    optimiser.step()
        return metagame.torch.policy(pi.eval())


if __name__ == "__main__":
    game = sys.argv[1] if len(sys.argv) > 1 else "kuhn_poker"
    iterations = int(sys.argv[2]) if len(sys.argv) > 2 else 6
    config = {"game": game, "algorithm": "psro", "meta_solver": "nash", "max_iterations": iterations}
    for report in metagame.Experiment(config, out=f"runs/{game}_psro_torch_ppo", oracle=PPO(), overwrite=True):
        print(report["iteration"], report["nash_conv"])
