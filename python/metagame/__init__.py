"""metagame: game-theoretic population training from Python.

PSRO, fictitious play, CFR and AlphaStar-style leagues over populations of tabular
policies; certified Nash (and CE/CCE, alpha-Rank) solvers for normal-form games; the exact
equilibrium of two-player zero-sum games by the sequence-form LP (``solve_sequence_form``); exact
NashConv, best responses and expected returns on any game tree -- the built-in games
(``load_game``) and any OpenSpiel game (``metagame.openspiel.from_pyspiel``).

Every function takes policies in any of these forms: a ``Policy``, a numpy
``[infosets x actions]`` array in ``game.infosets()`` row order, a dict of information
states (OpenSpiel's ``TabularPolicy.to_dict()`` form or rows of probabilities), or an
OpenSpiel ``TabularPolicy``. Bad input raises ``ValueError`` (or ``TypeError`` for a value
of the wrong kind) with the CLI's one-line message.
"""

# Imported under private names, so that dir(metagame) lists only the package's own names.
import functools as _functools
import os as _os
from pathlib import Path as _Path
from typing import Any as _Any
from typing import Iterator as _Iterator
from typing import Mapping as _Mapping
from typing import Optional as _Optional
from typing import Union as _Union

from ._metagame import (
    Game,
    MetagameError,
    NativePolicy,
    NormalFormGame,
    PlayedGame,
    Policy,
    ResponseRequest,
    SequenceFormSolution,
    Solution,
    VecEnv,
    __version__,
    aggregate,
    approximate_nash_conv,
    batch_elo,
    best_response,
    elo,
    expected_returns,
    exploitability,
    games,
    load_game,
    matches,
    melo,
    nash_averaging,
    nash_conv,
    nash_conv_report,
    solve,
    solve_all,
    solve_sequence_form,
    solvers,
    tabulate,
)
from ._metagame import NativeExperiment as _NativeExperiment

__all__ = [
    "Experiment",
    "Game",
    "MetagameError",
    "NativePolicy",
    "NormalFormGame",
    "PlayedGame",
    "Policy",
    "ResponseRequest",
    "SequenceFormSolution",
    "Solution",
    "VecEnv",
    "__version__",
    "aggregate",
    "approximate_nash_conv",
    "batch_elo",
    "best_response",
    "elo",
    "expected_returns",
    "exploitability",
    "games",
    "load_game",
    "matches",
    "melo",
    "nash_averaging",
    "nash_conv",
    "nash_conv_report",
    "run",
    "solve",
    "solve_all",
    "solve_sequence_form",
    "solvers",
    "tabulate",
]

@_functools.lru_cache(maxsize=16)
def _game_from_source(kind: str, name: str) -> Game:
    """A game rebuilt from where it came from (what a pickled Game holds), once per process."""
    if kind == "registry":
        return load_game(name)
    from .openspiel import from_pyspiel

    return from_pyspiel(name, progress=False)


Config = _Union[_Mapping[str, _Any], str, "_os.PathLike[str]"]

_CONFIG_FILE = "config.toml"


def _read_config(config: Config) -> tuple[_Any, _Path, str]:
    """The config as a dict or TOML text, the path messages name, and a run-folder stem."""
    if isinstance(config, _Mapping):
        stem = f"{config.get('algorithm', 'run')}_{config.get('game', 'game')}"
        return dict(config), _Path("<config>"), stem
    if isinstance(config, _os.PathLike) or (
        isinstance(config, str) and "\n" not in config and "=" not in config
    ):
        path = _Path(config)
        try:
            text = path.read_text()
        except OSError as e:
            raise ValueError(f"{path}: cannot read: {e.strerror}") from None
        return text, path, path.stem
    if isinstance(config, str):
        return config, _Path("<config>"), "run"
    raise TypeError(f"config: a dict, TOML text or a path, not {type(config).__name__}")


def _safe_stem(stem: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in stem).strip("_") or "run"


def _check_out_dir(out: _Path, overwrite: bool) -> None:
    """A fresh run goes into a new or empty folder, or replaces a run with overwrite=True."""
    if not out.is_dir():
        return
    entries = [
        e for e in _os.listdir(out) if not e.startswith(".metagame.lock") and ".tmp-" not in e
    ]
    if not entries:
        return
    if not (out / _CONFIG_FILE).is_file():
        raise ValueError(f"{out} is not empty and holds no run (no {_CONFIG_FILE}); choose a new or empty folder")
    if not overwrite:
        raise ValueError(
            f"{out} already holds a run; pass overwrite=True to replace it, or resume=True to continue it"
        )


class Experiment:
    """A training run stepped one iteration at a time.

    ``config`` is a dict, TOML text, or the path of a TOML config (the CLI's configs:
    ``metagame config --example psro``). ``out`` is the run folder (default
    ``runs/<config name>``, as the CLI); ``game`` a ``Game`` to run on instead of the
    registry game the config names (an OpenSpiel game, say: the config's ``game`` may then
    be left out), or a ``PlayedGame`` (a pyspiel game played by ``from_pyspiel(game,
    walk=False)``, a PettingZoo environment by ``metagame.pettingzoo.from_env``), played on
    its states only: PSRO with a learned or Python oracle and the ``rollout`` evaluator,
    for one; a failed call of the game's code stops the run before that iteration is
    checkpointed and is raised as ValueError; ``oracle`` any object with ``respond(request) -> policy`` (a
    ``ResponseRequest``; any policy form) for the loop that asks an oracle (PSRO; the
    others train their own responses and refuse one).
    ``resume=True`` continues the run in ``out`` from its checkpoint; ``overwrite=True``
    replaces a previous run there. ``allow_pickle=True`` lets the run keep an oracle's
    answer pickled when it is a callable that writes no file of its own (``metagame.torch``
    and ``metagame.jax`` policies write theirs), and read such members back when resuming:
    unpickling runs code, so allow it only for run folders that are your own.

    Iterating yields every iteration's report as a dict. Breaking out, ``close()`` or the end
    of a ``with`` block stops the run after the iteration in progress with its folder
    written; Ctrl-C too, then KeyboardInterrupt is raised. An exception raised by the
    oracle stops the run and is raised again; the last checkpoint resumes.
    """

    def __init__(
        self,
        config: Config,
        out: _Optional[_Union[str, "_os.PathLike[str]"]] = None,
        game: _Optional[_Union[Game, PlayedGame]] = None,
        oracle: _Any = None,
        resume: bool = False,
        overwrite: bool = False,
        allow_pickle: bool = False,
        _evaluator: _Any = None,
        _trainer: _Any = None,
        _builtin_oracle: _Any = None,
    ) -> None:
        if game is not None and not isinstance(game, (Game, PlayedGame)):
            raise TypeError(
                "game: a metagame.Game (load_game, or openspiel.from_pyspiel for a pyspiel game) or a PlayedGame "
                f"(openspiel.from_pyspiel(game, walk=False), pettingzoo.from_env), not {type(game).__name__}"
            )
        if resume and config is None:
            raise ValueError("resume: give the config of the run to continue")
        body, source, stem = _read_config(config)
        self.out = _Path(out) if out is not None else _Path("runs") / _safe_stem(stem)
        if not resume:
            _check_out_dir(self.out, overwrite)
        self._native = _NativeExperiment(
            body, source, self.out, game=game, oracle=oracle, resume=resume, evaluator=_evaluator, trainer=_trainer,
            builtin_oracle=_builtin_oracle, allow_pickle=allow_pickle,
        )
        self.reports: list[dict] = []

    def __iter__(self) -> _Iterator[dict]:
        return self

    def __next__(self) -> dict:
        report = next(self._native)
        self.reports.append(report)
        return report

    def close(self) -> _Optional[dict]:
        """Stop after the iteration in progress; the final report (``report.json``)."""
        return self._native.close()

    @property
    def result(self) -> _Optional[dict]:
        """The final report (``report.json``'s content) once the run has ended, else None."""
        return self._native.result

    def __enter__(self) -> "Experiment":
        return self

    def __exit__(self, *exc: _Any) -> None:
        self._native.close()


def run(
    config: Config,
    out: _Optional[_Union[str, "_os.PathLike[str]"]] = None,
    game: _Optional[_Union[Game, PlayedGame]] = None,
    oracle: _Any = None,
    resume: bool = False,
    overwrite: bool = False,
    allow_pickle: bool = False,
) -> dict:
    """Run a config to its end and return the final report (``report.json``'s content).

    The arguments are ``Experiment``'s; the run folder is the CLI's.
    """
    return _run_to_end(
        Experiment(
            config, out=out, game=game, oracle=oracle, resume=resume, overwrite=overwrite, allow_pickle=allow_pickle
        )
    )


def _run_to_end(experiment: Experiment) -> dict:
    """Step ``experiment`` to its end; its final report."""
    for _ in experiment:
        pass
    result = experiment.close()
    if result is None:
        raise MetagameError(f"the run in {experiment.out} ended without a report")
    return result
