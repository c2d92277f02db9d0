"""OpenSpiel interop: any pyspiel game as a metagame ``Game``, and policies to and from
OpenSpiel's ``TabularPolicy``.

``from_pyspiel`` walks the game's tree once through pyspiel (sequential games with
information-state strings; any number of players, chance, general-sum), then every exact
algorithm runs on it: ``nash_conv``, ``best_response``, PSRO, XFP, CFR, the league.
``from_pyspiel(game, walk=False)`` plays a game of any size on pyspiel's states instead,
with its tensors: ``matches``, ``VecEnv`` and ``ResponseRequest`` take it.
"""

from __future__ import annotations

from typing import Any, Union

from ._metagame import Game, PlayedGame, Policy, play_pyspiel, walk_pyspiel

#: The default node limit of ``from_pyspiel`` (as ``load_game``'s): 10 million nodes.
DEFAULT_MAX_NODES = 10_000_000


def from_pyspiel(
    game: Any, max_nodes: int = DEFAULT_MAX_NODES, progress: bool = True, walk: bool = True
) -> Union[Game, PlayedGame]:
    """A metagame ``Game`` from a ``pyspiel.Game`` (or its game string).

    Simultaneous-move games need ``pyspiel.convert_to_turn_based(game)`` first. Raises
    ValueError for a game without information-state strings, and for a tree of more than
    ``max_nodes`` nodes (a tree far past it is refused before the walk, from random
    playouts). ``progress`` shows a progress line on stderr (at a terminal) for trees of
    more than 100 000 nodes; Ctrl-C stops the walk.

    ``walk=False`` walks nothing: the answer is a ``PlayedGame``, played move by move on
    pyspiel's states (any size: connect four, breakthrough), policies reading OpenSpiel's
    information-state tensor (or the observation tensor of a perfect-information game). A
    pyspiel call that raises during play is a ValueError of the call that played it.
    """
    if isinstance(game, str):
        import pyspiel

        try:
            game = pyspiel.load_game(game)
        except pyspiel.SpielError as e:
            # OpenSpiel's message goes on to list every registered game, one a line.
            raise ValueError(f"from_pyspiel: {str(e).splitlines()[0]}") from None
    if not hasattr(game, "new_initial_state") or not hasattr(game, "get_type"):
        raise TypeError(f"from_pyspiel: a pyspiel.Game or a game string, not {type(game).__name__}")
    if not walk:
        return play_pyspiel(game)
    if max_nodes < 1:
        raise ValueError(f"max_nodes must be at least 1, got {max_nodes}")
    # Only sequential games have a tree; walk_pyspiel says so for the rest.
    sequential = game.get_type().dynamics.name == "SEQUENTIAL"
    estimate = estimated_nodes(game) if sequential else 0.0
    if estimate > 2 * max_nodes:
        raise ValueError(
            f"the game tree of {game} has about {estimate:.2g} nodes (estimated from {_PROBES} random "
            f"playouts), more than the limit of {max_nodes}; pass max_nodes= to raise the limit, or walk=False "
            "to play it on its states"
        )
    return walk_pyspiel(game, max_nodes, progress)


#: Random playouts behind ``estimated_nodes``.
_PROBES = 200


def estimated_nodes(game: Any, probes: int = _PROBES, seed: int = 0) -> float:
    """The number of histories of ``game``'s tree, estimated from random playouts without
    walking it (Knuth 1975: each playout's sum of the products of the branching factors
    along its path is an unbiased estimate). Heavy-tailed on unbalanced trees, where it
    tends to be low; enough to refuse a tree thousands of times past a limit at once."""
    import random

    rng = random.Random(seed)
    total = 0.0
    for _ in range(probes):
        state = game.new_initial_state()
        weight, nodes = 1.0, 1.0
        while not state.is_terminal():
            if state.is_chance_node():
                actions = [a for a, _ in state.chance_outcomes()]
            elif state.is_simultaneous_node():
                return 1.0  # walk_pyspiel refuses these with its own message
            else:
                actions = state.legal_actions()
            weight *= len(actions)
            nodes += weight
            state = state.child(rng.choice(actions))
        total += nodes
    return total / probes


def to_tabular_policy(policy: Union[Policy, Any], pyspiel_game: Any, game: Game | None = None):
    """An OpenSpiel ``TabularPolicy`` of ``pyspiel_game`` holding ``policy`` (a ``Policy``,
    or any policy form with ``game`` given), for OpenSpiel's own algorithms."""
    from open_spiel.python import policy as os_policy

    if not isinstance(policy, Policy):
        if game is None:
            raise TypeError("to_tabular_policy: pass game= for a policy that is not a metagame.Policy")
        policy = Policy(game, policy)
    tabular = os_policy.TabularPolicy(pyspiel_game)
    rows = policy.array
    index = {key: i for i, key in enumerate(policy.game.infosets())}
    # Every key found is not enough: kuhn_poker(players=3) has all of kuhn_poker's
    # information-state strings (and more), with other meanings.
    if tabular.action_probability_array.shape != rows.shape:
        raise ValueError(
            f"to_tabular_policy: the OpenSpiel game has {len(tabular.state_lookup)} information states "
            f"and {tabular.action_probability_array.shape[1]} actions, the policy's game {policy.game.name} "
            f"{rows.shape[0]} and {rows.shape[1]}: a policy of another game"
        )
    for key, row in tabular.state_lookup.items():
        if key not in index:
            raise ValueError(
                f"to_tabular_policy: the OpenSpiel game has the information state {key!r}, which the policy's game {policy.game.name} lacks"
            )
        tabular.action_probability_array[row] = rows[index[key]]
    return tabular


def from_tabular_policy(game: Game, tabular: Any) -> Policy:
    """A ``Policy`` of ``game`` from an OpenSpiel ``TabularPolicy`` (or its ``to_dict()``)."""
    return Policy(game, tabular)
