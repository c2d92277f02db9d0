"""Python objects as members of a run on a game too large for its tree: a numpy MLP trained
by a Python oracle through ``request.env`` on connect four, kept in the run folder pickled
(the run allows pickle), played by rollouts into a payoff table with standard errors, and
resumed to the uninterrupted run; a JAX function likewise, kept as its parameters in
safetensors without pickle; an answer that cannot be kept, or a pickled folder resumed
without allowing pickle, is one clear error and the folder stays resumable."""

from __future__ import annotations

import os
import subprocess

import numpy as np
import pytest

import metagame
from conftest import missing, require
from test_experiment import CLI, without_times


class NumpyMlp:
    """A policy network in numpy: one tanh hidden layer, logits masked to the legal actions."""

    def __init__(self, w1, b1, w2, b2):
        self.w1, self.b1, self.w2, self.b2 = w1, b1, w2, b2

    def logits(self, obs):
        hidden = np.tanh(obs @ self.w1 + self.b1)
        return hidden, hidden @ self.w2 + self.b2

    def __call__(self, obs, legal):
        _, logits = self.logits(obs)
        logits = np.where(legal, logits, -np.inf)
        p = np.exp(logits - logits.max(axis=1, keepdims=True))
        return p / p.sum(axis=1, keepdims=True)


class Reinforce:
    """An oracle: REINFORCE with a mean baseline, from the warm start where the request
    gives one (the player's previous member, the NumpyMlp it answered) or from a fresh
    network, for ``episodes`` episodes of ``lanes`` lanes against the meta-mixture."""

    def __init__(self, episodes=400, lanes=32, hidden=32, lr=0.05):
        self.episodes, self.lanes, self.hidden, self.lr = episodes, lanes, hidden, lr
        self.requests = []

    def respond(self, request):
        self.requests.append((request.player, request.game, type(request.warm_start).__name__))
        env = request.env(self.lanes)
        rng = np.random.default_rng(request.seed)
        d, a = env.observation_size, env.num_actions
        warm = request.warm_start
        if isinstance(warm, NumpyMlp):
            net = NumpyMlp(*(x.copy() for x in (warm.w1, warm.b1, warm.w2, warm.b2)))
        else:
            net = NumpyMlp(rng.standard_normal((d, self.hidden)) / np.sqrt(d), np.zeros(self.hidden),
                           np.zeros((self.hidden, a)), np.zeros(a))
        obs, infos = env.reset()
        lanes = [[] for _ in range(self.lanes)]
        done_episodes = []
        while env.finished[0] < self.episodes:
            probs = net(obs.astype(np.float64), infos["action_mask"])
            actions = np.array([rng.choice(a, p=p) for p in probs])
            for lane in range(self.lanes):
                lanes[lane].append((obs[lane], infos["action_mask"][lane], actions[lane]))
            obs, rewards, dones, _, infos = env.step(actions)
            for lane in np.flatnonzero(dones):
                done_episodes.append((lanes[lane], rewards[lane]))
                lanes[lane] = []
            if len(done_episodes) >= self.lanes:
                self.update(net, done_episodes)
                done_episodes = []
        return net

    def update(self, net, episodes):
        baseline = np.mean([r for _, r in episodes])
        obs = np.array([o for steps, _ in episodes for o, _, _ in steps], dtype=np.float64)
        mask = np.array([m for steps, _ in episodes for _, m, _ in steps])
        actions = np.array([x for steps, _ in episodes for _, _, x in steps])
        advantage = np.array([r - baseline for steps, r in episodes for _ in steps])
        hidden, logits = net.logits(obs)
        probs = net(obs, mask)
        # d(-advantage · log pi(a)) / d logits = advantage · (pi - onehot(a)).
        grad_logits = probs
        grad_logits[np.arange(len(actions)), actions] -= 1.0
        grad_logits *= advantage[:, None] / len(episodes)
        grad_hidden = (grad_logits @ net.w2.T) * (1 - hidden**2)
        net.w2 -= self.lr * hidden.T @ grad_logits
        net.b2 -= self.lr * grad_logits.sum(axis=0)
        net.w1 -= self.lr * obs.T @ grad_hidden
        net.b1 -= self.lr * grad_hidden.sum(axis=0)


CONFIG = {"game": "connect_four", "algorithm": "psro", "evaluator": "rollout", "episodes_per_entry": 200,
          "max_iterations": 2}


def test_a_numpy_network_trained_through_request_env_is_a_member_on_connect_four_and_resumes(tmp_path):
    oracle = Reinforce()
    whole = metagame.run(CONFIG, out=tmp_path / "whole", oracle=oracle, allow_pickle=True)
    # Asked on the states (no tree, so no Game); warm-started from the first member (native
    # uniform play), then from its own previous answer, the object it returned.
    assert [g for _, g, _ in oracle.requests] == [None] * 4
    assert [w for *_, w in oracle.requests] == ["NativePolicy", "NativePolicy", "NumpyMlp", "NumpyMlp"]
    members = sorted(os.listdir(tmp_path / "whole" / "members"))
    assert len([m for m in members if m.endswith(".pkl")]) == 4, members
    # The payoff table: every entry by rollouts, each with its standard error.
    assert whole["meta_game_shape"] == [3, 3]
    payoffs, stderr = whole["meta_game"], whole["meta_game_stderr"]
    assert [len(p) for p in stderr] == [9, 9] and all(e > 0 for p in stderr for e in p), stderr
    # The trained members beat the first member (uniform play) as the first player.
    assert payoffs[0][1 * 3 + 0] > 3 * stderr[0][3], (payoffs, stderr)

    # Stopped after one iteration and resumed, with a new oracle object (the members come
    # back from their pickled files): the uninterrupted run.
    with metagame.Experiment(CONFIG, out=tmp_path / "cut", oracle=Reinforce(), allow_pickle=True) as experiment:
        next(experiment)
        next(experiment)
    # Unpickling runs code: a resume reads the pickled members only where it allows pickle.
    kept = (tmp_path / "cut" / "checkpoint.json").read_bytes()
    with pytest.raises(ValueError, match=r"a pickled Python member is read only by a run that allows pickle"):
        metagame.run(CONFIG, out=tmp_path / "cut", oracle=Reinforce(), resume=True)
    assert (tmp_path / "cut" / "checkpoint.json").read_bytes() == kept
    resumed = metagame.run(CONFIG, out=tmp_path / "cut", oracle=Reinforce(), resume=True, allow_pickle=True)
    assert without_times(resumed)["meta_game"] == without_times(whole)["meta_game"]
    assert sorted(os.listdir(tmp_path / "cut" / "members")) == members


def test_the_cli_names_what_reads_a_run_of_python_members(tmp_path):
    if not CLI.is_file():
        missing("the release CLI is not built (cargo build --release)")
    config = {**CONFIG, "max_iterations": 1}
    metagame.run(config, out=tmp_path / "run", oracle=Reinforce(episodes=64), allow_pickle=True)
    done = subprocess.run([str(CLI), "run", "--resume", str(tmp_path / "run")], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode != 0
    assert "policy kind `python`" in done.stderr and "resume=True, allow_pickle=True" in done.stderr, done.stderr


def test_an_answer_that_cannot_be_kept_is_one_error_and_the_run_resumes(tmp_path):
    class Closure:
        def respond(self, request):
            return lambda obs, legal: legal / legal.sum(axis=1, keepdims=True)

    config = {**CONFIG, "max_iterations": 3}
    with metagame.Experiment(config, out=tmp_path / "run", oracle=Reinforce(episodes=64), allow_pickle=True) as e:
        next(e)
        next(e)
    with pytest.raises(ValueError, match=r"the callable <lambda> cannot be kept in the run folder without pickle: "
                                         r"wrap a PyTorch module with metagame.torch.policy"):
        metagame.run(config, out=tmp_path / "fresh", oracle=Closure())
    assert (tmp_path / "fresh" / "checkpoint.json").is_file()
    with pytest.raises(ValueError, match=r"the callable <lambda> cannot be kept in the run folder: pickle failed"):
        metagame.run(config, out=tmp_path / "run", oracle=Closure(), resume=True, allow_pickle=True)
    report = metagame.run(config, out=tmp_path / "run", oracle=Reinforce(episodes=64), resume=True, allow_pickle=True)
    assert len(report["iterations"]) == 4
    with pytest.raises(ValueError, match=r"respond\(\) returned something that is not a policy of connect_four"):
        metagame.run({**config, "max_iterations": 1}, out=tmp_path / "table", oracle=TableAnswer())


class TableAnswer:
    def respond(self, request):
        return metagame.Policy.uniform(metagame.load_game("kuhn_poker"))


def test_a_jax_function_is_a_member_on_connect_four_and_resumes(tmp_path):
    require("jax")
    import importlib.util
    import sys
    from pathlib import Path

    # The book's PPO oracle, imported as a module so that its network function pickles by
    # reference.
    path = Path(__file__).resolve().parents[2] / "examples" / "python" / "ppo_oracle.py"
    spec = importlib.util.spec_from_file_location("ppo_oracle", path)
    ppo_oracle = importlib.util.module_from_spec(spec)
    sys.modules["ppo_oracle"] = ppo_oracle
    spec.loader.exec_module(ppo_oracle)
    config = {**CONFIG, "max_iterations": 1, "episodes_per_entry": 100}
    oracle = ppo_oracle.PPO(lanes=16, steps=16, updates=4, hidden=32)
    whole = metagame.run(config, out=tmp_path / "whole", oracle=oracle)
    # Kept without pickle: the parameters in safetensors, the function by its import path.
    files = [tmp_path / "whole" / "members" / m for m in os.listdir(tmp_path / "whole" / "members")]
    assert sorted(f.suffix for f in files) == [".policy", ".safetensors", ".safetensors"], files
    from safetensors.numpy import load_file

    assert all(load_file(f) for f in files if f.suffix == ".safetensors")
    checkpoint = (tmp_path / "whole" / "checkpoint.json").read_text()
    assert checkpoint.count('"kind":"jax"') == 2, checkpoint
    with metagame.Experiment(config, out=tmp_path / "cut", oracle=oracle) as experiment:
        next(experiment)
    resumed = metagame.run(config, out=tmp_path / "cut", oracle=oracle, resume=True)
    assert without_times(resumed)["meta_game"] == without_times(whole)["meta_game"]
