"""PettingZoo environments as metagame games: ``from_env(env_fn)`` plays any turn-based
(AEC) environment on its states, move by move (a parallel one through PettingZoo's own
``parallel_to_aec``), with observations and action masks as PettingZoo's classic games give
them; ``walk=True`` enumerates a small one into a ``Game`` for the exact algorithms.

The environment is driven through the same contract as a pyspiel game (this module wraps
it in one), so everything that takes a ``PlayedGame`` or a ``Game`` takes it: ``matches``,
``VecEnv``, ``ResponseRequest``, and on a walked game ``nash_conv`` and the rest.

- Players are ``possible_agents`` in order; actions are the agents' ``Discrete`` actions.
- A policy reads the acting agent's observation, flattened to float32: a dict
  observation's ``"observation"`` (its ``"action_mask"`` gives the legal actions), a
  ``Discrete`` one as one-hot, a ``Box`` one as it is (all actions legal).
- A player's return is the sum of its rewards over the episode; the episode ends when
  every live agent is terminated or truncated.
- Randomness: PettingZoo draws it in ``reset(seed)``. With ``chance_seeds=0`` (the
  default, for deterministic games such as connect four) every episode starts from
  ``reset(seed=seed)``; with ``chance_seeds=N`` a chance node at the root draws one of N
  seeds uniformly, so that games dealt at random (``leduc_holdem_v4``) are.
- States are copied attribute by attribute through the wrappers (``copy.deepcopy`` makes
  a fresh PettingZoo environment: they pickle as their constructor's arguments); a rollout
  copies the reset environment once per episode, a walk once per node.
"""

from __future__ import annotations

import copy
from typing import Any, Callable, Union

import numpy as _np

from ._metagame import Game, PlayedGame, play_pyspiel, walk_pyspiel


def from_env(
    env_fn: Callable[[], Any],
    chance_seeds: int = 0,
    seed: int = 0,
    walk: bool = False,
    max_nodes: int = 1_000_000,
    name: str | None = None,
) -> Union[PlayedGame, Game]:
    """A metagame game from ``env_fn`` (a function making a PettingZoo AEC environment,
    ``connect_four_v3.env`` say): a ``PlayedGame``, or with ``walk=True`` a ``Game``
    enumerated from it (ValueError past ``max_nodes`` nodes). See the module's docstring."""
    if chance_seeds < 0:
        raise ValueError(f"chance_seeds must be 0 or more, got {chance_seeds}")
    game = _Game(env_fn, chance_seeds, seed, name)
    return walk_pyspiel(game, max_nodes, False) if walk else play_pyspiel(game)


def _aec(env: Any) -> Any:
    """The AEC form of ``env`` (a parallel environment converted by PettingZoo), or a
    TypeError for anything else."""
    from pettingzoo.utils.env import AECEnv, ParallelEnv

    if isinstance(env, AECEnv):
        return env
    if isinstance(env, ParallelEnv):
        from pettingzoo.utils.conversions import parallel_to_aec

        return parallel_to_aec(env)
    raise TypeError(f"from_env: env_fn must make a PettingZoo environment (AEC or parallel), got {type(env).__name__}")


class _Kind:
    """The ``pyspiel.GameType`` fields ``play_pyspiel`` and ``walk_pyspiel`` read."""

    class dynamics:
        name = "SEQUENTIAL"

    class utility:
        name = "GENERAL_SUM"

    class information:
        name = "IMPERFECT_INFORMATION"

    provides_information_state_string = True
    provides_information_state_tensor = True
    provides_observation_tensor = False


class _Game:
    """A PettingZoo environment behind the pyspiel ``Game`` calls metagame makes."""

    def __init__(self, env_fn: Callable[[], Any], chance_seeds: int, seed: int, name: str | None) -> None:
        env = _aec(env_fn())
        self.env_fn, self.chance_seeds, self.seed = env_fn, chance_seeds, seed
        self.agents = list(env.possible_agents)
        spaces = [env.action_space(a) for a in self.agents]
        if not all(hasattr(s, "n") for s in spaces):
            raise ValueError("from_env: every agent's action space must be Discrete")
        self.num_actions = max(int(s.n) for s in spaces)
        self.obs_size = _observation(env.observation_space(self.agents[0]).sample(), env.observation_space(self.agents[0])).size
        self.obs_space = {a: env.observation_space(a) for a in self.agents}
        self.name = name or f"pettingzoo:{getattr(env, 'metadata', {}).get('name', type(env).__name__)}"

    def __str__(self) -> str:
        return self.name

    def get_type(self) -> _Kind:
        return _Kind()

    def num_players(self) -> int:
        return len(self.agents)

    def num_distinct_actions(self) -> int:
        return self.num_actions

    def information_state_tensor_shape(self) -> list[int]:
        return [self.obs_size]

    def new_initial_state(self) -> "_State":
        env = _aec(self.env_fn())
        if self.chance_seeds == 0:
            env.reset(seed=self.seed)
        return _State(self, env, reset=self.chance_seeds == 0)


def _observation(obs: Any, space: Any) -> _np.ndarray:
    """A PettingZoo observation as the flat float32 tensor a policy reads."""
    if isinstance(obs, dict):
        obs = obs["observation"]
    if hasattr(space, "spaces") and "observation" in getattr(space, "spaces", {}):
        space = space["observation"]
    if hasattr(space, "n") and _np.ndim(obs) == 0:
        one_hot = _np.zeros(int(space.n), dtype=_np.float32)
        one_hot[int(obs)] = 1.0
        return one_hot
    return _np.asarray(obs, dtype=_np.float32).reshape(-1)


def _copy_env(env: Any, memo: dict) -> Any:
    """A copy of ``env`` in its current state. ``copy.deepcopy`` will not do: PettingZoo's
    environments pickle (and so copy) as their constructor's arguments (``EzPickle``), a
    fresh environment. Each layer of wrappers is copied attribute by attribute instead."""
    if id(env) in memo:
        return memo[id(env)]
    new = object.__new__(type(env))
    memo[id(env)] = new
    for key, value in vars(env).items():
        if hasattr(value, "__dict__") and hasattr(value, "_ezpickle_args") or key == "env":
            setattr(new, key, _copy_env(value, memo))
        else:
            try:
                setattr(new, key, copy.deepcopy(value, memo))
            except TypeError:
                # What cannot be copied (a pygame surface for rendering) is not the game's
                # state: shared.
                setattr(new, key, value)
    return new


class _State:
    """An episode in progress: the environment, the returns so far and the history."""

    def __init__(self, game: _Game, env: Any, reset: bool) -> None:
        self.game, self.env, self.reset = game, env, reset
        self.returns_ = [0.0] * len(game.agents)
        self.seen: list[list[str]] = [[] for _ in game.agents]

    def is_chance_node(self) -> bool:
        return not self.reset

    def chance_outcomes(self) -> list[tuple[int, float]]:
        n = self.game.chance_seeds
        return [(i, 1.0 / n) for i in range(n)]

    def is_terminal(self) -> bool:
        env = self.env
        return self.reset and (not env.agents or all(env.terminations[a] or env.truncations[a] for a in env.agents))

    def current_player(self) -> int:
        # pyspiel's ids: -1 chance (the reset's seed), -4 terminal.
        if not self.reset:
            return -1
        if self.is_terminal():
            return -4
        return self.game.agents.index(self.env.agent_selection)

    def _observed(self) -> Any:
        return self.env.observe(self.env.agent_selection)

    def legal_actions(self) -> list[int]:
        obs = self._observed()
        if isinstance(obs, dict) and "action_mask" in obs:
            return [int(a) for a in _np.flatnonzero(obs["action_mask"])]
        return list(range(int(self.env.action_space(self.env.agent_selection).n)))

    def apply_action(self, action: int) -> None:
        if not self.reset:
            self.env.reset(seed=int(action))
            self.reset = True
            return
        player = self.current_player()
        self.seen[player].append(f"{self._observed_key()}>{action}")
        self.env.step(int(action))
        for agent, reward in self.env.rewards.items():
            self.returns_[self.game.agents.index(agent)] += float(reward)

    def _observed_key(self) -> str:
        return self._tensor(self.current_player()).tobytes().hex()

    def returns(self) -> list[float]:
        return list(self.returns_)

    def _tensor(self, player: int) -> _np.ndarray:
        agent = self.game.agents[player]
        return _observation(self.env.observe(agent), self.game.obs_space[agent])

    def information_state_tensor(self, player: int) -> list[float]:
        return self._tensor(player).tolist()

    def is_simultaneous_node(self) -> bool:
        return False

    def information_state_string(self, player: int) -> str:
        # What the player observed at each of its turns and what it did: perfect recall
        # from its own observations.
        return f"{player}|" + "|".join(self.seen[player] + [self._observed_key()])

    def clone(self) -> "_State":
        return copy.deepcopy(self)

    def child(self, action: int) -> "_State":
        state = self.clone()
        state.apply_action(action)
        return state

    def __deepcopy__(self, memo: dict) -> "_State":
        state = _State.__new__(_State)
        state.game, state.reset = self.game, self.reset
        state.env = _copy_env(self.env, memo)
        state.returns_ = list(self.returns_)
        state.seen = [list(s) for s in self.seen]
        return state
