"""Network members read from PyTorch's safetensors layout, played by the CLI's `matches` and
held to OpenSpiel: the same network evaluated by pyspiel on OpenSpiel's own tensors.

The networks are written by `safetensors.numpy.save_file` (the file format and key names of
`safetensors.torch.save_file(model.state_dict(), path)` for an `nn.Sequential` of Linear and
ReLU), and numpy computes their forward pass on pyspiel's tensors here.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pyspiel
import pytest
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import expected_game_score
from safetensors.numpy import save_file

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "release" / "metagame"


def random_network(sizes: list[int], seed: int, scale: float = 3.0) -> dict[str, np.ndarray]:
    """A state_dict of nn.Sequential(Linear, ReLU, ..., Linear), weights larger than
    PyTorch's initialisation so that the policy is far from uniform."""
    rng = np.random.default_rng(seed)
    layers = {}
    for k, (n_in, n_out) in enumerate(zip(sizes[:-1], sizes[1:])):
        bound = 1.0 / np.sqrt(n_in)
        layers[f"{2 * k}.weight"] = (scale * rng.uniform(-bound, bound, (n_out, n_in))).astype(np.float32)
        layers[f"{2 * k}.bias"] = rng.uniform(-bound, bound, (n_out,)).astype(np.float32)
    return layers


def probabilities(layers: dict[str, np.ndarray], tensor, legal: list[int], num_actions: int) -> np.ndarray:
    """The network's masked softmax, in float32 as the library computes it."""
    x = np.asarray(tensor, dtype=np.float32)
    n = len(layers) // 2
    for k in range(n):
        x = layers[f"{2 * k}.weight"] @ x + layers[f"{2 * k}.bias"]
        if k < n - 1:
            x = np.maximum(x, 0.0)
    mask = np.zeros(num_actions, dtype=bool)
    mask[legal] = True
    logits = np.where(mask, x, -np.inf)
    e = np.exp(logits - logits[mask].max())
    return e / e.sum()


class NetworkPolicy(policy_lib.Policy):
    """An OpenSpiel policy that plays the network on OpenSpiel's tensors."""

    def __init__(self, game, layers, observation: bool):
        super().__init__(game, list(range(game.num_players())))
        self.layers, self.observation = layers, observation

    def action_probabilities(self, state, player_id=None):
        player = state.current_player()
        tensor = state.observation_tensor(player) if self.observation else state.information_state_tensor(player)
        legal = state.legal_actions(player)
        p = probabilities(self.layers, tensor, legal, self.game.num_distinct_actions())
        return {a: float(p[a]) for a in legal}


def matches(game: str, policies: list[str], evaluator: str, episodes: int = 100_000, seed: int = 0) -> dict:
    done = subprocess.run(
        [str(CLI), "matches", "--game", game, "--policies", *policies, "--evaluator", evaluator,
         "--episodes", str(episodes), "--seed", str(seed), "--json"],
        check=True, capture_output=True, text=True, timeout=600,
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def leduc_network(tmp_path_factory):
    path = tmp_path_factory.mktemp("nets") / "leduc.safetensors"
    layers = random_network([30, 32, 32, 3], seed=1)
    save_file(layers, str(path))
    return path, layers


def test_a_leduc_network_is_worth_what_pyspiel_computes_on_openspiels_tensors(leduc_network):
    path, layers = leduc_network
    game = pyspiel.load_game("leduc_poker")
    net = NetworkPolicy(game, layers, observation=False)
    uniform = policy_lib.UniformRandomPolicy(game)
    want = {
        (0, 0): expected_game_score.policy_value(game.new_initial_state(), [net, net]),
        (0, 1): expected_game_score.policy_value(game.new_initial_state(), [net, uniform]),
        (1, 0): expected_game_score.policy_value(game.new_initial_state(), [uniform, net]),
    }
    exact = matches("leduc_poker", [str(path), "uniform"], "exact")
    assert exact["tree"] and exact["exact"]
    entries = {tuple(e["policies"]): e for e in exact["entries"]}
    for seats, value in want.items():
        assert np.allclose(entries[seats]["mean"], value, atol=1e-5), (seats, entries[seats]["mean"], value)
    # Sampled: on the tree (tabulated) and by rollouts, within 4 standard errors.
    for evaluator in ["cpu", "rollout"]:
        sampled = {tuple(e["policies"]): e for e in matches("leduc_poker", [str(path), "uniform"], evaluator)["entries"]}
        for seats, value in want.items():
            mean, stderr = sampled[seats]["mean"][0], sampled[seats]["stderr"][0]
            assert stderr > 0 and abs(mean - value[0]) <= 4 * stderr, (evaluator, seats, mean, stderr, value)


def play_in_pyspiel(game, layers_by_seat, episodes: int, seed: int) -> np.ndarray:
    """Player 0's return in `episodes` games played by pyspiel, each seat's network sampled."""
    rng = np.random.default_rng(seed)
    returns = np.empty(episodes)
    for e in range(episodes):
        state = game.new_initial_state()
        while not state.is_terminal():
            player = state.current_player()
            legal = state.legal_actions()
            p = probabilities(layers_by_seat[player], state.observation_tensor(player), legal, 7)
            p = p.astype(np.float64)
            state.apply_action(int(rng.choice(7, p=p / p.sum())))
        returns[e] = state.returns()[0]
    return returns


def test_two_connect_four_networks_play_as_in_pyspiel(tmp_path):
    a, b = random_network([126, 64, 64, 7], seed=2), random_network([126, 64, 64, 7], seed=3)
    save_file(a, str(tmp_path / "a.safetensors"))
    save_file(b, str(tmp_path / "b.safetensors"))
    ours = matches("connect_four", [str(tmp_path / "a.safetensors"), str(tmp_path / "b.safetensors")], "cpu",
                   episodes=20_000)
    assert not ours["tree"]
    entries = {tuple(e["policies"]): e for e in ours["entries"]}
    game = pyspiel.load_game("connect_four")
    for seats, nets in [((0, 1), [a, b]), ((1, 0), [b, a])]:
        returns = play_in_pyspiel(game, nets, 2000, seed=sum(seats) + 7 * seats[0])
        theirs, theirs_se = returns.mean(), returns.std(ddof=1) / np.sqrt(len(returns))
        mean, stderr = entries[seats]["mean"][0], entries[seats]["stderr"][0]
        assert abs(mean - theirs) <= 4 * np.hypot(stderr, theirs_se), (seats, mean, stderr, theirs, theirs_se)


def test_a_network_that_does_not_fit_or_holds_nan_is_refused_in_one_line(tmp_path, leduc_network):
    path, layers = leduc_network
    for game, expect in [("kuhn_poker", "does not fit"), ("connect_four", "does not fit")]:
        done = subprocess.run([str(CLI), "matches", "--game", game, "--policies", str(path), "uniform"],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        assert len(done.stderr.strip().splitlines()) == 1 and expect in done.stderr, done.stderr
    broken = dict(layers)
    broken["2.weight"] = broken["2.weight"].copy()
    broken["2.weight"][3, 4] = np.nan
    save_file(broken, str(tmp_path / "nan.safetensors"))
    done = subprocess.run([str(CLI), "exploitability", "--game", "leduc_poker", "--policy", str(tmp_path / "nan.safetensors")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "2.weight" in done.stderr and "NaN" in done.stderr, done.stderr


def test_exploitability_of_a_network_is_its_tabulated_policys(leduc_network):
    path, layers = leduc_network
    done = subprocess.run([str(CLI), "exploitability", "--game", "leduc_poker", "--policy", str(path), "--json"],
                          check=True, capture_output=True, text=True, timeout=120)
    ours = json.loads(done.stdout)["nash_conv"]
    game = pyspiel.load_game("leduc_poker")
    tabular = NetworkPolicy(game, layers, observation=False).to_tabular()
    from open_spiel.python.algorithms import exploitability
    assert abs(ours - exploitability.nash_conv(game, tabular)) < 1e-5


def test_ppo_members_of_a_psro_run_are_worth_what_pyspiel_computes(tmp_path):
    """Neural PSRO (`oracle = "ppo"`) on Leduc: every member it wrote, read back from the run
    folder, has the NashConv pyspiel computes for the same network on OpenSpiel's tensors."""
    from open_spiel.python.algorithms import exploitability
    from safetensors.numpy import load_file

    config = tmp_path / "ppo.toml"
    config.write_text('game = "leduc_poker"\nalgorithm = "psro"\noracle = "ppo"\nmax_iterations = 2\n'
                      '[learner]\nepisodes_per_response = 2000\n')
    subprocess.run([str(CLI), "run", str(config), "--out", str(tmp_path / "run")],
                   check=True, capture_output=True, text=True, timeout=600)
    members = sorted((tmp_path / "run" / "members").glob("*.safetensors"))
    assert len(members) == 4
    game = pyspiel.load_game("leduc_poker")
    for path in members:
        done = subprocess.run([str(CLI), "exploitability", "--game", "leduc_poker", "--policy", str(path), "--json"],
                              check=True, capture_output=True, text=True, timeout=120)
        ours = json.loads(done.stdout)["nash_conv"]
        tabular = NetworkPolicy(game, load_file(str(path)), observation=False).to_tabular()
        assert abs(ours - exploitability.nash_conv(game, tabular)) < 1e-5, path.name
