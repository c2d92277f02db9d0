"""``metagame.VecEnv``: a seat of a game as a Gymnasium-style vectorised environment played
in Rust, opponents (names, files, callables) drawn per episode from a mixture."""

from __future__ import annotations

import numpy as np
import pytest

import metagame


def play_random(env: metagame.VecEnv, steps: int, seed: int = 0):
    """Uniform legal actions; every ended episode's reward."""
    rng = np.random.default_rng(seed)
    obs, infos = env.reset()
    rewards = []
    for _ in range(steps):
        mask = infos["action_mask"]
        actions = [rng.choice(np.flatnonzero(row)) for row in mask]
        obs, reward, terminated, truncated, infos = env.step(actions)
        assert obs.shape == (env.num_envs, env.observation_size) and obs.dtype == np.float32
        assert not truncated.any()
        rewards.extend(reward[terminated])
        # Rewards come only with the end of an episode.
        assert (reward[~terminated] == 0).all()
    return np.array(rewards)


def test_uniform_play_earns_the_exact_value_of_uniform_play():
    leduc = metagame.load_game("leduc_poker")
    exact = metagame.expected_returns(leduc, metagame.Policy.uniform(leduc))[1]
    env = metagame.VecEnv("leduc_poker", num_envs=64, player=1, opponents=["uniform"], seed=3)
    rewards = play_random(env, 600)
    assert len(rewards) > 5000
    assert abs(rewards.mean() - exact) <= 5 * rewards.std() / np.sqrt(len(rewards))
    episodes, mean = env.finished
    assert episodes == len(rewards) and mean == pytest.approx(rewards.mean())


def test_connect_four_is_played_with_its_observation_planes_and_masks():
    env = metagame.VecEnv("connect_four", num_envs=16, seed=1)
    obs, infos = env.reset()
    assert obs.shape == (16, 3 * 6 * 7) and infos["action_mask"].shape == (16, 7)
    # Seat 0 moves first: an empty board (OpenSpiel's third plane, empty cells), every
    # column legal.
    assert (obs.reshape(16, 3, 6, 7)[:, 2] == 1).all() and infos["action_mask"].all()
    rewards = play_random(env, 200)
    assert len(rewards) > 0 and set(np.unique(rewards)) <= {-1.0, 0.0, 1.0}


def test_callable_opponents_answer_whole_batches_and_weights_mix_them():
    batches = []

    def first_legal(obs, legal):
        batches.append(len(obs))
        probs = np.zeros(legal.shape, dtype=np.float32)
        probs[np.arange(len(legal)), legal.argmax(axis=1)] = 1.0
        return probs

    env = metagame.VecEnv("kuhn_poker", 32, player=0, opponents=[first_legal, "uniform"], weights=[0.5, 0.5], seed=2)
    play_random(env, 50)
    assert max(batches) > 1


def test_the_same_seed_gives_the_same_episodes_and_reset_restarts_them():
    def run(num_envs, seed):
        env = metagame.VecEnv("leduc_poker", num_envs, seed=seed)
        obs, infos = env.reset()
        # Always the lowest legal action: the episodes differ only by chance and the opponent.
        for _ in range(40):
            obs, reward, terminated, _, infos = env.step(infos["action_mask"].argmax(axis=1))
        return env.finished

    assert run(8, 4) == run(8, 4)
    assert run(8, 4) != run(8, 5)


def test_a_trainer_in_numpy_learns_a_best_response_through_it():
    """REINFORCE on a softmax-linear policy over Kuhn's tensor against an opponent that
    always checks or calls (first legal action): the learner's return rises to the best
    response's value, computed exactly."""
    kuhn = metagame.load_game("kuhn_poker")
    first = np.zeros((kuhn.num_infosets, kuhn.num_actions))
    for i in range(kuhn.num_infosets):
        first[i, kuhn.legal_actions(i)[0]] = 1.0
    _, best = metagame.best_response(kuhn, first, 0)
    env = metagame.VecEnv("kuhn_poker", 128, player=0, opponents=["first-action"], seed=0)
    rng = np.random.default_rng(0)
    weights = np.zeros((env.observation_size, env.num_actions))
    obs, infos = env.reset()
    trajectories = [[] for _ in range(env.num_envs)]
    returns = []
    for _ in range(1500):
        logits = np.where(infos["action_mask"], obs @ weights, -np.inf)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        actions = np.array([rng.choice(len(p), p=p) for p in probs])
        for lane in range(env.num_envs):
            trajectories[lane].append((obs[lane].copy(), probs[lane], actions[lane]))
        obs, reward, terminated, _, infos = env.step(actions)
        grad = np.zeros_like(weights)
        for lane in np.flatnonzero(terminated):
            for o, p, a in trajectories[lane]:
                g = -p
                g[a] += 1.0
                grad += reward[lane] * np.outer(o, g)
            trajectories[lane] = []
            returns.append(reward[lane])
        weights += 0.05 * grad / env.num_envs
    late = np.mean(returns[-3000:])
    assert late > best - 0.05, (late, best)
    assert np.mean(returns[:1000]) < late


def test_bad_setups_and_actions_are_value_errors():
    with pytest.raises(ValueError, match="player 2 does not exist"):
        metagame.VecEnv("kuhn_poker", 4, player=2)
    with pytest.raises(ValueError, match="2 weights for 1 opponents"):
        metagame.VecEnv("kuhn_poker", 4, opponents=["uniform"], weights=[0.5, 0.5])
    with pytest.raises(ValueError, match="not a distribution"):
        metagame.VecEnv("kuhn_poker", 4, opponents=["uniform"], weights=[0.5])
    with pytest.raises(ValueError, match="0 lanes"):
        metagame.VecEnv("kuhn_poker", 0)
    # A word that is not a policy name is read as a tabular policy file, which needs a tree.
    with pytest.raises(ValueError, match="policy `no-such-policy` needs the game tree of kuhn_poker"):
        metagame.VecEnv("kuhn_poker", 4, opponents=["no-such-policy"])
    with pytest.raises(TypeError, match="tables need the game tree"):
        metagame.VecEnv("kuhn_poker", 4, opponents=[np.zeros((12, 2))])
    env = metagame.VecEnv("leduc_poker", 2)
    obs, infos = env.reset()
    illegal = int(np.flatnonzero(~infos["action_mask"][0])[0])
    with pytest.raises(ValueError, match=f"action {illegal} is not legal in lane 0"):
        env.step([illegal, int(infos["action_mask"][1].argmax())])
    with pytest.raises(ValueError, match="3 actions for an environment of 2 lanes"):
        env.step([1, 1, 1])

    def broken(obs, legal):
        raise RuntimeError("the opponent fell over")

    # Seat 0 moves first: the broken opponent is asked as the lanes start.
    with pytest.raises(ValueError, match="the callable broken raised RuntimeError: the opponent fell over"):
        metagame.VecEnv("kuhn_poker", 4, player=1, opponents=[broken])


def test_on_a_game_tables_are_opponents_and_play_as_their_names_do():
    leduc = metagame.load_game("leduc_poker")

    def finished(game, opponents):
        env = metagame.VecEnv(game, 8, player=1, opponents=opponents, seed=9)
        obs, infos = env.reset()
        for _ in range(60):
            obs, _, _, _, infos = env.step(infos["action_mask"].argmax(axis=1))
        return env.finished

    assert finished(leduc, [metagame.Policy.uniform(leduc)]) == finished("leduc_poker", ["uniform"])


class Reinforce:
    """A PSRO oracle in numpy: REINFORCE on a softmax-linear policy over the game's tensor,
    trained against the request's meta-mixture through ``request.env``; it answers with the
    policy as a callable."""

    def __init__(self, steps: int = 300, lanes: int = 64, rate: float = 0.1):
        self.steps, self.lanes, self.rate = steps, lanes, rate
        self.envs = 0

    def respond(self, request):
        env = request.env(self.lanes)
        self.envs += 1
        rng = np.random.default_rng(request.seed)
        weights = np.zeros((env.observation_size, env.num_actions))

        def policy(obs, legal):
            logits = np.where(legal, obs @ weights, -np.inf)
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            return p / p.sum(axis=1, keepdims=True)

        obs, infos = env.reset()
        trajectories = [[] for _ in range(env.num_envs)]
        for _ in range(self.steps):
            probs = policy(obs, infos["action_mask"])
            actions = (probs.cumsum(axis=1) > rng.random((len(probs), 1))).argmax(axis=1)
            for lane in range(env.num_envs):
                trajectories[lane].append((obs[lane].copy(), probs[lane], actions[lane]))
            obs, reward, terminated, _, infos = env.step(actions)
            grad = np.zeros_like(weights)
            for lane in np.flatnonzero(terminated):
                for o, p, a in trajectories[lane]:
                    g = -p
                    g[a] += 1.0
                    grad += reward[lane] * np.outer(o, g)
                trajectories[lane] = []
            weights = weights + self.rate * grad / env.num_envs
        frozen = weights.copy()

        def trained(obs, legal):
            logits = np.where(legal, obs @ frozen, -np.inf)
            p = np.exp(logits - logits.max(axis=1, keepdims=True))
            return (p / p.sum(axis=1, keepdims=True)).astype(np.float32)

        return trained


def test_a_python_oracle_trains_through_request_env_and_psro_improves(tmp_path):
    oracle = Reinforce()
    report = metagame.run(
        {"game": "kuhn_poker", "algorithm": "psro", "max_iterations": 6}, out=tmp_path / "run", oracle=oracle
    )
    nash_conv = [it["nash_conv"] for it in report["iterations"]]
    assert oracle.envs == 2 * 6
    assert nash_conv[-1] < 0.5 * nash_conv[0], nash_conv
