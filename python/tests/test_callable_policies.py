"""Python callables as policies: ``policy(obs, legal) -> probs`` on numpy batches, taken
everywhere a policy is (exact NashConv through the tree, matches on games with and without
a tree, oracle answers in PSRO), and every bad answer one ValueError naming the callable."""

from __future__ import annotations

import numpy as np
import pytest

import metagame
from conftest import require


def masked_softmax(logits: np.ndarray, legal: np.ndarray) -> np.ndarray:
    logits = np.where(legal, logits, -np.inf)
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    return (e / e.sum(axis=1, keepdims=True)).astype(np.float32)


class NumpyMlp:
    """A two-layer network in numpy: what a researcher's own model looks like here."""

    def __init__(self, inputs: int, actions: int, seed: int, hidden: int = 16):
        rng = np.random.default_rng(seed)
        self.w1 = rng.standard_normal((inputs, hidden)).astype(np.float32)
        self.w2 = rng.standard_normal((hidden, actions)).astype(np.float32)
        self.batches: list[int] = []

    def __call__(self, obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
        assert obs.dtype == np.float32 and legal.dtype == np.bool_
        self.batches.append(len(obs))
        return masked_softmax(np.maximum(obs @ self.w1, 0.0) @ self.w2, legal)


def uniform(obs: np.ndarray, legal: np.ndarray) -> np.ndarray:
    return (legal / legal.sum(axis=1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def leduc() -> metagame.Game:
    return metagame.load_game("leduc_poker")


def test_a_numpy_network_is_a_policy_with_its_exact_nash_conv(leduc):
    mlp = NumpyMlp(leduc.tensor_shape[1][0], leduc.num_actions, seed=3)
    # By hand: the network on every information state's tensor, as a table.
    table = mlp(leduc.infoset_tensors(), np.array([[a in leduc.legal_actions(i) for a in range(leduc.num_actions)]
                                                   for i in range(leduc.num_infosets)]))
    table = table.astype(np.float64)
    expected = metagame.nash_conv(leduc, table / table.sum(axis=1, keepdims=True))
    mlp.batches.clear()
    assert metagame.nash_conv(leduc, mlp) == pytest.approx(expected, abs=1e-6)
    # One batch per player, all of its information states at once.
    assert sorted(mlp.batches) == sorted(len(leduc.infosets(p)) for p in range(2))
    assert metagame.nash_conv(leduc, uniform) == pytest.approx(metagame.nash_conv(leduc, metagame.Policy.uniform(leduc)), abs=1e-12)
    # As one seat of a profile, beside a table.
    assert metagame.expected_returns(leduc, [mlp, metagame.Policy.uniform(leduc)]).shape == (2,)


def test_matches_plays_callables_on_a_game_without_a_tree():
    """connect_four is played on its states; a callable that answers uniform play draws
    exactly what the built-in uniform policy draws from the same seed."""
    named = metagame.matches("connect_four", ["uniform", "first-action"], episodes=500, seed=5, evaluator="rollout")
    called = metagame.matches("connect_four", [uniform, "first-action"], episodes=500, seed=5, evaluator="rollout")
    assert named["tree"] is False and called["tree"] is False
    assert called["policies"] == ["uniform", "first-action"]
    assert [e["policies"] for e in called["entries"]] == [[0, 0], [0, 1], [1, 0], [1, 1]]
    for a, b in zip(named["entries"], called["entries"]):
        assert a["mean"] == b["mean"] and a["stderr"] == b["stderr"] and a["episodes"] == 500
    mlp = NumpyMlp(3 * 6 * 7, 7, seed=1)
    played = metagame.matches("connect_four", [mlp, uniform], episodes=300, seed=0)
    assert all(len(e["mean"]) == 2 for e in played["entries"]) and max(mlp.batches) > 1


def test_matches_on_a_tree_agree_with_the_exact_values(leduc):
    mlp = NumpyMlp(leduc.tensor_shape[1][0], leduc.num_actions, seed=8)
    exact = metagame.matches(leduc, [mlp, "uniform"], evaluator="exact")
    sampled = metagame.matches(leduc, [mlp, "uniform"], episodes=20_000, seed=2)
    assert exact["exact"] and not sampled["exact"]
    for e, s in zip(exact["entries"], sampled["entries"]):
        for mean, estimate, stderr in zip(e["mean"], s["mean"], s["stderr"]):
            assert abs(mean - estimate) <= 5 * stderr + 1e-12
    expected = metagame.expected_returns(leduc, [mlp, metagame.Policy.uniform(leduc)])
    np.testing.assert_allclose(exact["entries"][1]["mean"], expected, atol=1e-6)


def _answer(kind: str):
    def bad(obs, legal):
        p = uniform(obs, legal)
        if kind == "shape":
            return p[:, :-1]
        if kind == "nan":
            p[0, np.argmax(legal[0])] = np.nan
        elif kind == "negative":
            a = np.flatnonzero(legal[0])
            p[0, a[0]], p[0, a[-1]] = -0.5, p[0, a[-1]] + 0.5 + p[0, a[0]]
        elif kind == "sum":
            p = p * 0.5
        elif kind == "illegal":
            r = np.flatnonzero(~legal.all(axis=1))[0]
            p[r] = 0.0
            p[r, np.flatnonzero(~legal[r])[0]] = 1.0
        elif kind == "raise":
            raise RuntimeError("the model fell over")
        elif kind == "none":
            return None
        return p

    bad.__name__ = f"bad_{kind}"
    return bad


@pytest.mark.parametrize(
    "kind, fragment",
    [
        ("shape", "returned an array of shape [5, 2]; expected [5 × 3]"),
        ("nan", "is not a finite non-negative number"),
        ("negative", "probability -0.5 of action"),
        ("sum", "sum to 0.5, not 1"),
        ("illegal", "illegal action"),
        ("raise", "raised RuntimeError: the model fell over"),
        ("none", "returned an array that is not 2-dimensional"),
    ],
)
def test_a_callable_answering_garbage_is_one_value_error_naming_it(tmp_path, kind, fragment):
    """Exact (tabulated), in matches (played), and as an oracle's answer in PSRO, whose
    run stops with the message and resumes from its folder."""
    bad = _answer(kind)
    with pytest.raises(ValueError) as raised:
        metagame.nash_conv(metagame.load_game("leduc_poker"), bad)
    message = str(raised.value)
    assert f"the callable bad_{kind}" in message and "\n" not in message, message
    if kind != "shape":
        assert fragment in message, message
    with pytest.raises(ValueError, match=f"bad_{kind}"):
        metagame.matches("connect_four", [bad, "uniform"], episodes=10, evaluator="rollout")

    class Oracle:
        def __init__(self):
            self.calls = 0

        def respond(self, request):
            self.calls += 1
            if self.calls > 2:
                return bad
            return metagame.best_response(request.game, request.profile, request.player)[0]

    config = {"game": "leduc_poker", "algorithm": "psro", "max_iterations": 3}
    with pytest.raises(ValueError, match=f"bad_{kind}"):
        metagame.run(config, out=tmp_path / "run", oracle=Oracle())
    resumed = metagame.run(config, out=tmp_path / "run", resume=True)
    assert resumed["stop_reason"] == "max_iterations"


def test_shape_message_names_rows_and_actions():
    leduc = metagame.load_game("leduc_poker")
    with pytest.raises(ValueError, match=r"the callable bad_shape returned an array of shape \[\d+, 2\]; expected \[\d+ × 3\]"):
        metagame.nash_conv(leduc, _answer("shape"))


def test_an_oracle_answering_callables_runs_psro_as_with_tables(tmp_path):
    """Each best response handed back as a callable that reads the tensor: the run is the
    one whose oracle hands back the tables themselves."""
    game = metagame.load_game("kuhn_poker")
    tensors = game.infoset_tensors()
    row_of = {t.tobytes(): i for i, t in enumerate(tensors)}
    assert len(row_of) == game.num_infosets

    def as_callable(table: metagame.Policy):
        rows = table.array.astype(np.float32)

        def best_response(obs, legal):
            return rows[[row_of[o.tobytes()] for o in obs]]

        return best_response

    class Tables:
        def respond(self, request):
            return metagame.best_response(request.game, request.profile, request.player)[0]

    class Callables:
        def respond(self, request):
            return as_callable(metagame.best_response(request.game, request.profile, request.player)[0])

    config = {"game": "kuhn_poker", "algorithm": "psro", "max_iterations": 8}
    tables = metagame.run(config, out=tmp_path / "tables", oracle=Tables())
    called = metagame.run(config, out=tmp_path / "callables", oracle=Callables())
    assert [r["nash_conv"] for r in called["iterations"]] == pytest.approx(
        [r["nash_conv"] for r in tables["iterations"]], abs=1e-9
    )
    assert called["iterations"][-1]["nash_conv"] < 0.05


def test_openspiel_policies_that_are_not_tables_say_how_to_convert(leduc):
    class ActionProbabilities:
        def action_probabilities(self, state, player_id=None):
            return {}

        def __call__(self, state, player_id=None):
            return {}

    with pytest.raises(TypeError, match="tabular_policy_from_callable"):
        metagame.nash_conv(leduc, ActionProbabilities())


def test_tabulate_hands_a_three_parameter_callable_the_tensor(leduc):
    seen = []

    def first_with_tensor(info_state, legal, tensor):
        seen.append((info_state, tensor))
        return [1.0] + [0.0] * (len(legal) - 1)

    table = metagame.tabulate(leduc, first_with_tensor)
    assert len(seen) == leduc.num_infosets
    tensors = leduc.infoset_tensors()
    for info_state, tensor in seen:
        assert tensor.dtype == np.float32
        np.testing.assert_array_equal(tensor, tensors[leduc.infoset_index(info_state)])
    # Two parameters: the string and the legal actions only, as before.
    same = metagame.tabulate(leduc, lambda info_state, legal: [1.0] + [0.0] * (len(legal) - 1))
    np.testing.assert_array_equal(table.array, same.array)


def test_a_callable_gets_an_approximate_nash_conv_below_the_exact_one_and_on_connect_four():
    kuhn = metagame.load_game("kuhn_poker")

    def always_first(obs, legal):
        return (np.cumsum(legal, axis=1) == 1) & legal

    exact = metagame.nash_conv(kuhn, always_first)
    got = metagame.approximate_nash_conv("kuhn_poker", always_first, budget=4000, episodes=4000, seed=1)
    assert got["lower_bound"] is True and got["training_episodes"] == 4000 and got["episodes"] == 4000
    # A trained response is at most a best response: never above the exact value by more
    # than sampling error, and here most of it.
    assert got["nash_conv_estimate"] <= exact + 3 * got["stderr"], (got, exact)
    assert got["nash_conv_estimate"] > 0.5 * exact, (got, exact)
    on_states = metagame.approximate_nash_conv("connect_four", always_first, budget=300, episodes=300)
    assert on_states["game"] == "connect_four" and on_states["stderr"] > 0
    with pytest.raises(ValueError, match="the callable broken raised"):
        def broken(obs, legal):
            raise RuntimeError("no")

        metagame.approximate_nash_conv("connect_four", broken, budget=10, episodes=10)


def test_an_approximate_nash_conv_on_a_game_without_tensors_is_one_line():
    pyspiel = require("pyspiel")
    from metagame.openspiel import from_pyspiel

    # OpenSpiel's coordinated matching pennies gives information-state strings, no tensors.
    game = from_pyspiel(pyspiel.load_game("coordinated_mp"))
    with pytest.raises(ValueError, match="ppo reads the game's tensors, and this game gives none") as e:
        metagame.approximate_nash_conv(game, "uniform", budget=10, episodes=10)
    assert "\n" not in str(e.value)
