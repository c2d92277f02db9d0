"""The tensors networks read (``Game.tensor_shape``, ``Game.infoset_tensors``), compared
value for value with pyspiel's on every decision node of each game: OpenSpiel's
``information_state_tensor`` for games of imperfect information (goofspiel and the matrix
games in OpenSpiel's turn-based form, ``load_game_as_turn_based``, the form whose
information states metagame's are), its ``observation_tensor`` for tic-tac-toe."""

from __future__ import annotations

import numpy as np
import pytest

import metagame

from conftest import require

pyspiel = require("pyspiel")

# (game string, whether pyspiel loads it through load_game_as_turn_based). The goofspiel
# settings are the registry's examples; its default (13 cards) has no tree to compare.
GAMES = [
    ("kuhn_poker", False),
    ("kuhn_poker(players=3)", False),
    ("leduc_poker", False),
    ("liars_dice", False),
    ("liars_dice(dice_sides=3)", False),
    ("liars_dice(numdice=2,dice_sides=2)", False),
    ("goofspiel(num_cards=3)", True),
    ("goofspiel(imp_info=True,num_cards=4,points_order=descending)", True),
    ("goofspiel(imp_info=True,num_cards=4)", True),
    ("goofspiel(imp_info=True,num_cards=3,players=3,returns_type=point_difference)", True),
    ("goofspiel(imp_info=True,num_cards=5,points_order=ascending,returns_type=total_points)", True),
    ("matrix_rps", True),
    ("matrix_pd", True),
    ("tic_tac_toe", False),
]


def load_pyspiel(name: str, turn_based: bool):
    return pyspiel.load_game_as_turn_based(name) if turn_based else pyspiel.load_game(name)


def pyspiel_shape(game) -> tuple[str, list[int]]:
    """The tensor metagame should give: the information-state tensor where OpenSpiel gives
    one, else the observation tensor."""
    if game.get_type().provides_information_state_tensor:
        return "information_state", list(game.information_state_tensor_shape())
    return "observation", list(game.observation_tensor_shape())


def walk_decision_nodes(game, observation: bool):
    """Every decision node of pyspiel's tree, depth first: (information-state string of the
    player to move, that player's tensor)."""
    stack = [game.new_initial_state()]
    while stack:
        state = stack.pop()
        if state.is_terminal():
            continue
        if state.is_chance_node():
            stack.extend(state.child(a) for a, _ in state.chance_outcomes())
            continue
        player = state.current_player()
        tensor = state.observation_tensor(player) if observation else state.information_state_tensor(player)
        yield state.information_state_string(player), tensor
        stack.extend(state.child(a) for a in state.legal_actions())


@pytest.mark.parametrize("name, turn_based", GAMES, ids=[g[0] for g in GAMES])
def test_tensors_equal_pyspiels_at_every_decision_node(name, turn_based):
    theirs = load_pyspiel(name, turn_based)
    ours = metagame.load_game(name)
    kind, dims = pyspiel_shape(theirs)
    assert ours.tensor_shape == (kind, dims)
    tensors = ours.infoset_tensors()
    assert tensors.dtype == np.float32
    assert tensors.shape == (ours.num_infosets, int(np.prod(dims)))
    rows = {key: i for i, key in enumerate(ours.infosets())}

    # Compared in chunks of nodes: one numpy comparison per chunk, not per node.
    seen = np.zeros(ours.num_infosets, dtype=bool)
    nodes = 0
    chunk_rows: list[int] = []
    chunk_keys: list[str] = []
    chunk_values: list[float] = []

    def compare_chunk():
        if not chunk_rows:
            return
        expected = np.array(chunk_values, dtype=np.float32).reshape(len(chunk_rows), -1)
        got = tensors[chunk_rows]
        wrong = np.flatnonzero((got != expected).any(axis=1))
        if wrong.size:
            k = wrong[0]
            diff = np.flatnonzero(got[k] != expected[k])
            pytest.fail(f"{name}: {chunk_keys[k]!r}: ours {got[k][diff]} at {diff}, pyspiel's {expected[k][diff]}")
        seen[chunk_rows] = True
        chunk_rows.clear()
        chunk_keys.clear()
        chunk_values.clear()

    for key, tensor in walk_decision_nodes(theirs, observation=kind == "observation"):
        chunk_rows.append(rows[key])
        chunk_keys.append(key)
        chunk_values.extend(tensor)
        nodes += 1
        if len(chunk_rows) == 4096:
            compare_chunk()
    compare_chunk()
    # The two trees have the same information states: each of ours was met.
    assert seen.all(), [k for k, i in rows.items() if not seen[i]][:5]
    assert nodes >= ours.num_infosets


def test_shapes_without_a_pyspiel_counterpart_or_a_tree():
    # team_rps has no OpenSpiel game: its own tensor, the player and its own choice.
    team = metagame.load_game("team_rps")
    assert team.tensor_shape == ("information_state", [6])
    expected = np.zeros((team.num_infosets, 6), dtype=np.float32)
    for i, key in enumerate(team.infosets()):
        expected[i, team.infoset_player(key)] = 1.0
    np.testing.assert_array_equal(team.infoset_tensors(), expected)
    # A game read from pyspiel gives the tensors pyspiel gives (test_openspiel.py compares
    # them value by value with the built-in games').
    from metagame import openspiel as mos

    walked = mos.from_pyspiel(pyspiel.load_game("kuhn_poker"), progress=False)
    assert walked.tensor_shape == ("information_state", [11])
    goofspiel = pyspiel.convert_to_turn_based(pyspiel.load_game("goofspiel(num_cards=3,imp_info=True)"))
    walked = mos.from_pyspiel(goofspiel, progress=False)
    assert walked.tensor_shape == ("information_state", goofspiel.information_state_tensor_shape())
    assert walked.infoset_tensors().shape == (walked.num_infosets, goofspiel.information_state_tensor_size())
