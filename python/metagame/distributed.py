"""metagame on a Ray cluster: the payoff entries of every iteration, the responses of a
Python oracle and the training of a league's agents run as Ray tasks. On a game too large
for its tree (connect four) with the ``rollout`` evaluator, the entries' tasks receive the
members as their files (networks as safetensors, Python callables pickled), put in Ray's
object store once per call, and the oracle's requests carry the opponents likewise.

    import metagame.distributed
    report = metagame.distributed.run("examples/leduc_psro.toml", address="auto")

Entries are split into one task per CPU of the cluster (``tasks_per_call`` chooses); each
task evaluates its slice of the iteration's matchups with the randomness the whole call
would give them (keyed by seed, matchup and episode), so a distributed run's report equals
the local run's bit for bit. A Python oracle's ``respond`` runs as a task of its own (the
oracle is copied to the workers once per run: state it keeps between requests stays on
them, not in the driver), and so does each response of the config's own oracle where it
keeps nothing between requests: the exact ones (``exact-br``, ``exact-br-trembling``), the
network trainers ``ppo`` and ``dqn`` (a fresh network per response, trained in the task
against the opponents' networks, which travel with the request as their safetensors
files, once per response) and the tabular learners; only ``minimax-q`` shaped by the other
seat's responses reads an earlier response back, and responds in the driver. A league
round on a game tree trains each learning agent in a task of its own (its learners travel
to the task and back, saved), as its threads would. A task whose worker dies is retried (``max_retries``), and the
result does not change. Ray itself comes from ``pip install ray`` (or
``pip install metagame[ray]``).

A real cluster needs what Ray needs: every node started with ``ray start`` (the head with
``--head``), metagame installed on every node, and Ray's authentication (token auth is on
by default from Ray 2.60: share the token, or set ``RAY_AUTH_MODE=disabled`` only on a
private network).
"""

from __future__ import annotations

import functools
from types import SimpleNamespace
from typing import Any, Optional

from . import Experiment as _LocalExperiment
from . import Game, PlayedGame, Policy, _read_config, _run_to_end
from ._metagame import config_oracle as _config_oracle
from ._metagame import evaluate_matchups as _evaluate_matchups
from ._metagame import respond_builtin as _respond_builtin
from ._metagame import train_league_job as _train_league_job

__all__ = ["Experiment", "run"]


def _ray():
    try:
        import ray
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("metagame.distributed needs Ray: pip install ray") from None
    return ray


@functools.lru_cache(maxsize=None)
def _tasks() -> SimpleNamespace:
    """The remote functions, defined once Ray is imported."""
    ray = _ray()

    @ray.remote(max_retries=3)
    def entries(game, policies, matchups, first, episodes, seed, evaluator):
        return _evaluate_matchups(game, policies, matchups, first, episodes, seed, evaluator)

    @ray.remote(max_retries=3)
    def respond(oracle, request):
        answer = oracle.respond(request)
        # A Policy travels back as its array (its game is the request's).
        return answer.array if isinstance(answer, Policy) else answer

    @ray.remote(max_retries=3)
    def train(game, job):
        return _train_league_job(game, job)

    @ray.remote(max_retries=3)
    def respond_builtin(config, request):
        answer, episodes = _respond_builtin(config, request)
        # A Policy travels back as its array (its game is the request's); a network as its file.
        return (answer.array if isinstance(answer, Policy) else answer), episodes

    return SimpleNamespace(entries=entries, respond=respond, train=train, respond_builtin=respond_builtin)


class _RayEvaluator:
    """Hands an iteration's matchups to Ray tasks, one slice per task. ``game`` is the
    game's object-store reference (put once per run, shared by every task)."""

    def __init__(self, game: Any, evaluator: str, tasks_per_call: Optional[int]):
        self._game = game
        self._evaluator = evaluator
        cpus = int(_ray().cluster_resources().get("CPU", 1))
        self._tasks = max(1, tasks_per_call or cpus)

    def __call__(self, policies, matchups, episodes, seed):
        ray = _ray()
        policies_ref = ray.put(policies)
        size = max(1, -(-len(matchups) // self._tasks))
        parts = [
            _tasks().entries.remote(self._game, policies_ref, matchups[i : i + size], i, episodes, seed, self._evaluator)
            for i in range(0, len(matchups), size)
        ]
        return [totals for part in ray.get(parts) for totals in part]


class _RayTrainer:
    """Trains a league round's agents as Ray tasks, one per learning agent."""

    def __init__(self, game: Any):
        self._game = game

    def __call__(self, jobs):
        return _ray().get([_tasks().train.remote(self._game, job) for job in jobs])


class _RayOracle:
    """A Python oracle whose every response is a Ray task."""

    def __init__(self, oracle: Any):
        self._oracle = _ray().put(oracle)

    def respond(self, request):
        return _ray().get(_tasks().respond.remote(self._oracle, request))


class _RayBuiltinOracle:
    """The config's own oracle (one that keeps nothing between requests), each response a
    Ray task: ``(policy, episodes)``."""

    def __init__(self, config: Any):
        self._config = _ray().put(config)

    def respond(self, request):
        return _ray().get(_tasks().respond_builtin.remote(self._config, request))


def _connect(address: Optional[str]) -> None:
    ray = _ray()
    if not ray.is_initialized():
        ray.init(address=address, log_to_driver=False)


class Experiment(_LocalExperiment):
    """``metagame.Experiment`` with the payoff entries (and a Python oracle's responses) as
    Ray tasks. ``address`` is Ray's (``"auto"``, ``"host:port"``; None: an existing
    ``ray.init`` or a new local cluster); ``tasks_per_call`` the number of tasks an
    iteration's entries are split into (default: the cluster's CPUs)."""

    def __init__(
        self,
        config: Any,
        out: Any = None,
        game: Optional[Game] = None,
        oracle: Any = None,
        resume: bool = False,
        overwrite: bool = False,
        address: Optional[str] = None,
        tasks_per_call: Optional[int] = None,
        allow_pickle: bool = False,
    ) -> None:
        if isinstance(game, PlayedGame):
            raise TypeError(
                "metagame.distributed: a PlayedGame is played through this process's Python objects and runs locally "
                "(metagame.run); Ray tasks load a game by its string or its Game"
            )
        _connect(address)
        body, source, _ = _read_config(config)
        if isinstance(body, str):
            import tomllib

            try:
                fields = tomllib.loads(body)
            except tomllib.TOMLDecodeError:
                fields = {}  # the native reader gives the error with its line
        else:
            fields = body
        evaluator = fields.get("evaluator", "exact") if isinstance(fields, dict) else "exact"
        name = fields.get("game") if isinstance(fields, dict) else None
        if game is None and isinstance(name, str):
            from . import load_game

            try:
                game = load_game(name, max_nodes=fields.get("max_nodes"))
            except ValueError:
                # Too large for its tree (or not a game: the run says which): played on
                # its states, the tasks load it by its string.
                game = None
        # The game goes into the object store once; every task of the run shares it.
        game_ref = _ray().put(game) if game is not None else None
        distributed_evaluator = None
        if game is not None and evaluator in ("exact", "cpu"):
            distributed_evaluator = (_RayEvaluator(game_ref, evaluator, tasks_per_call), evaluator)
        elif game is None and isinstance(name, str) and evaluator == "rollout":
            # Members travel as their files (networks, pickled callables), once per call.
            distributed_evaluator = (_RayEvaluator(name, evaluator, tasks_per_call), evaluator)
        builtin = None
        if oracle is None and (game is not None or isinstance(name, str)):
            named = _config_oracle(body, source, game)
            # Exact oracles need the tree; learned ones that keep nothing between requests
            # (ppo, dqn) train in their tasks on the tree or on the states.
            if named is not None and named[2] and (game is not None or not named[1]):
                builtin = _RayBuiltinOracle(body)
        super().__init__(
            config,
            out=out,
            game=game,
            oracle=_RayOracle(oracle) if oracle is not None else None,
            _builtin_oracle=builtin,
            resume=resume,
            overwrite=overwrite,
            allow_pickle=allow_pickle,
            _evaluator=distributed_evaluator,
            _trainer=_RayTrainer(game_ref) if game is not None else None,
        )


def run(
    config: Any,
    out: Any = None,
    game: Optional[Game] = None,
    oracle: Any = None,
    resume: bool = False,
    overwrite: bool = False,
    address: Optional[str] = "auto",
    tasks_per_call: Optional[int] = None,
    allow_pickle: bool = False,
) -> dict:
    """``metagame.run`` on a Ray cluster (``address="auto"``: the one this machine is part
    of): the final report, equal to the local run's."""
    return _run_to_end(
        Experiment(config, out, game, oracle, resume, overwrite, address=address, tasks_per_call=tasks_per_call,
                   allow_pickle=allow_pickle)
    )
