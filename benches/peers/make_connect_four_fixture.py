#!/usr/bin/env python3
"""Record random connect_four games played by OpenSpiel, step by step.

Run inside a venv that has open_spiel==2.0.2 (see tests/fixtures/openspiel/README.md):

    benches/peers/.venv/bin/python benches/peers/make_connect_four_fixture.py

Writes tests/fixtures/openspiel/connect_four_playouts.json (relative to the
repository root). Its games: the first 100 games of uniformly random play
(`rng = numpy.random.default_rng(0)`, each move `legal[rng.integers(len(legal))]`),
then, continuing the same stream, the first two draws and the first game won
on the 42nd move (draws are ~0.15% of random games). The output is
deterministic.

The file: `game`, `open_spiel_version`, `num_random_games`, and `games`, each
`{"index", "actions", "returns", "steps"}`: `index` is the game's place in the
random stream, `actions` every move, `returns` the final returns. `steps` has
one entry per state, the initial and the terminal state included, so that
step k is the state after `actions[:k]` (the generator checks that this is
pyspiel's `state.history()`):

  player   `state.current_player()` (-4 at the terminal)
  legal    `state.legal_actions()`
  info     `state.information_state_string(p)`, the same for both players (checked)
  board    `str(state)`
  planes   `state.observation_tensor(p)` of the player to move (player 0 at the
           terminal), shape [3, 6, 7]: 42 characters, cell `r * 7 + c` holding the
           plane whose value at (r, c) is 1. The generator checks that every value
           is 0 or 1 and each cell has exactly one 1, so the string is the tensor.
  other    at every fifth step and at the terminal: the other player's tensor
           (player 1 at the terminal), written the same way.
"""

import argparse
import importlib.metadata
import json
import os

import numpy as np
import pyspiel

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "openspiel")
NUM_RANDOM_GAMES = 100
NUM_DRAWS = 2
NUM_FULL_BOARD_WINS = 1
OTHER_EVERY = 5
SEED = 0


def planes(state, player):
    """The observation tensor as 42 plane digits, checking it is one-hot per cell."""
    t = np.array(state.observation_tensor(player)).reshape(3, 6, 7)
    if not np.all((t == 0.0) | (t == 1.0)) or not np.all(t.sum(axis=0) == 1.0):
        raise RuntimeError(f"tensor not one-hot per cell: {state.history()}")
    return "".join(str(int(p)) for p in t.argmax(axis=0).reshape(-1))


def record(game, actions):
    """Replay `actions` and record every state on the way."""
    state = game.new_initial_state()
    steps = []
    for k in range(len(actions) + 1):
        if state.history() != actions[:k]:
            raise RuntimeError(f"history {state.history()} != {actions[:k]}")
        info = state.information_state_string(0)
        if info != state.information_state_string(1):
            raise RuntimeError(f"players' information states differ at {actions[:k]}")
        player = state.current_player()
        me = 0 if state.is_terminal() else player
        step = {"player": player, "legal": list(state.legal_actions()),
                "info": info, "board": str(state), "planes": planes(state, me)}
        if state.is_terminal() or k % OTHER_EVERY == 0:
            step["other"] = planes(state, 1 - me)
        steps.append(step)
        if k < len(actions):
            state.apply_action(actions[k])
    if not state.is_terminal():
        raise RuntimeError(f"game {actions} did not end")
    return steps, list(state.returns())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    game = pyspiel.load_game("connect_four")
    rng = np.random.default_rng(SEED)
    games = []
    draws = full_board_wins = 0
    index = 0
    while (index < NUM_RANDOM_GAMES or draws < NUM_DRAWS
           or full_board_wins < NUM_FULL_BOARD_WINS):
        state = game.new_initial_state()
        while not state.is_terminal():
            legal = state.legal_actions()
            state.apply_action(int(legal[rng.integers(len(legal))]))
        actions = list(state.history())
        returns = state.returns()
        keep = index < NUM_RANDOM_GAMES
        if returns[0] == 0.0 and draws < NUM_DRAWS:
            draws += 1
            keep = True
        if len(actions) == 42 and returns[0] != 0.0 and full_board_wins < NUM_FULL_BOARD_WINS:
            full_board_wins += 1
            keep = True
        if keep:
            steps, final = record(game, actions)
            games.append({"index": index, "actions": actions, "returns": final,
                          "steps": steps})
        index += 1

    path = os.path.join(args.out, "connect_four_playouts.json")
    header = {"game": "connect_four",
              "generator": "benches/peers/make_connect_four_fixture.py",
              "open_spiel_version": importlib.metadata.version("open_spiel"),
              "numpy_version": np.__version__,
              "seed": SEED, "num_random_games": NUM_RANDOM_GAMES}
    with open(path, "w") as f:
        # One game per line: small, and a regenerated file diffs by game.
        f.write(json.dumps(header, separators=(",", ":"))[:-1] + ',"games":[\n')
        f.write(",\n".join(json.dumps(g, separators=(",", ":")) for g in games))
        f.write("\n]}\n")
    with open(path) as f:
        if json.load(f)["games"] != games:
            raise RuntimeError("the written file does not read back")
    wins = sum(1 for g in games if g["returns"][0] == 1.0)
    print(f"wrote {len(games)} games ({wins} x wins, {draws} draws) to {path}, "
          f"{os.path.getsize(path)} bytes")


if __name__ == "__main__":
    main()
