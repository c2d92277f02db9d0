#!/usr/bin/env python3
"""Generate OpenSpiel reference fixtures for metagame.

Run inside the venv that has open_spiel==2.0.2 (benches/peers/.venv; the
exploitability.py script creates it, or see tests/fixtures/openspiel/README.md):

    benches/peers/.venv/bin/python benches/peers/make_fixtures.py

Writes into tests/fixtures/openspiel/ (relative to the repository root):

  <name>_infosets.json      full-tree counts + every infoset per player
  <name>_random_<seed>.json random TabularPolicy, TabularPolicy.to_dict() format
  <name>_uniform.json       uniform TabularPolicy, same format
  expected.json             NashConv / best-response values / expected returns
  README.md                 how the fixtures were made, info-state formats

The output is deterministic (numpy default_rng(seed), fixed iteration order).
"""

import argparse
import importlib.metadata
import json
import os
import sys

import numpy as np
import pyspiel
from open_spiel.python import policy as policy_lib
from open_spiel.python.algorithms import best_response as best_response_lib
from open_spiel.python.algorithms import expected_game_score
from open_spiel.python.algorithms import exploitability

REPO_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DEFAULT_OUT = os.path.join(REPO_ROOT, "tests", "fixtures", "openspiel")

# (fixture base name, OpenSpiel game spec)
GAMES = [
    ("kuhn_poker", "kuhn_poker"),
    ("kuhn_poker_3p", "kuhn_poker(players=3)"),
    ("leduc_poker", "leduc_poker"),
    ("liars_dice", "liars_dice"),
    ("liars_dice_2d2s", "liars_dice(numdice=2,dice_sides=2)"),
    ("leduc_poker_3p", "leduc_poker(players=3)"),
    # Goofspiel is simultaneous-move: these are its turn-based form
    # (pyspiel.load_game_as_turn_based), the game OpenSpiel's CFR and NashConv
    # walk. Specs are metagame's canonical names (OpenSpiel's parameter order).
    ("goofspiel_3", "goofspiel(num_cards=3)"),
    ("goofspiel_4_imp_desc",
     "goofspiel(imp_info=True,num_cards=4,points_order=descending)"),
    ("goofspiel_4_imp", "goofspiel(imp_info=True,num_cards=4)"),
    ("goofspiel_3p", "goofspiel(imp_info=True,num_cards=3,players=3,"
                     "returns_type=point_difference)"),
    ("goofspiel_5_imp_asc_total", "goofspiel(imp_info=True,num_cards=5,"
                                  "points_order=ascending,returns_type=total_points)"),
    ("goofspiel_4", "goofspiel(num_cards=4)"),
]
SEEDS = [0, 1, 2]

# Games whose fixtures differ from the default (all seeds, every infoset):
# `seeds` for the random policies, `sample_every` to keep every k-th infoset
# (in sorted order) of each player instead of all of them, `uniform_file`
# False to evaluate the uniform policy without writing its file. liars_dice has
# 12288 infosets per player and 13 actions: a policy file would be ~8 MB.
#
# `evaluate` False writes the infosets file only: goofspiel(num_cards=4)'s
# perfect-information strings have imperfect recall, so its file compares
# counts, strings and legal actions (its NashConv values are measured in
# tests/it/openspiel_fixtures.rs, with the pyspiel calls named there);
# `imperfect_recall` in its file counts the information states whose histories
# differ in the player's own earlier information states and actions.
# `python_nash_conv` False skips OpenSpiel's Python best response, which takes
# too long on leduc_poker(players=3) (1.8 M histories): its C++ NashConv and
# best responses are kept, the Python fields are null.
GAME_OPTIONS = {
    "liars_dice": {"seeds": [], "sample_every": 64, "uniform_file": False},
    "liars_dice_2d2s": {"seeds": [0]},
    "leduc_poker_3p": {"seeds": [], "sample_every": 256, "uniform_file": False,
                       "python_nash_conv": False},
    "goofspiel_3": {"seeds": [0]},
    "goofspiel_4_imp_desc": {"seeds": [0]},
    "goofspiel_4_imp": {"seeds": [], "sample_every": 16, "uniform_file": False},
    "goofspiel_3p": {"seeds": [0], "sample_every": 4, "uniform_file": False},
    "goofspiel_5_imp_asc_total": {"seeds": [], "sample_every": 64,
                                  "uniform_file": False},
    "goofspiel_4": {"seeds": [], "sample_every": 32, "evaluate": False},
}

# Known closed-form / published uniform-policy NashConvs (sanity checks).
UNIFORM_REFERENCE = {
    "kuhn_poker": 11.0 / 12.0,
    "kuhn_poker_3p": 33.0 / 16.0,
    "leduc_poker": 4.747222222222222,
    # liars_dice: no independent value; Python and C++ must agree.
}


def walk_tree(game):
    """Walks the full tree; returns counts and per-player infoset dicts."""
    counts = {"num_histories": 0, "num_terminals": 0, "num_decision": 0,
              "num_chance": 0}
    infosets = [dict() for _ in range(game.num_players())]

    def rec(state):
        counts["num_histories"] += 1
        if state.is_terminal():
            counts["num_terminals"] += 1
            return
        if state.is_chance_node():
            counts["num_chance"] += 1
            for action, _ in state.chance_outcomes():
                rec(state.child(action))
            return
        counts["num_decision"] += 1
        player = state.current_player()
        key = state.information_state_string(player)
        legal = [int(a) for a in state.legal_actions()]
        prev = infosets[player].setdefault(key, legal)
        if prev != legal:
            raise RuntimeError(f"inconsistent legal actions at {key!r}")
        for action in legal:
            rec(state.child(action))

    rec(game.new_initial_state())
    return counts, infosets


def count_imperfect_recall(game):
    """Information states reached with different own histories of their player.

    A player's own history is the sequence of (information state, action) of
    their earlier decisions; perfect recall means one per information state.
    """
    own_history = {}
    bad = set()

    def rec(state, own):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                rec(state.child(action), own)
            return
        player = state.current_player()
        key = state.information_state_string(player)
        if own_history.setdefault(key, own[player]) != own[player]:
            bad.add(key)
        for action in state.legal_actions():
            child_own = list(own)
            child_own[player] = own[player] + ((key, int(action)),)
            rec(state.child(action), tuple(child_own))

    rec(game.new_initial_state(), tuple(() for _ in range(game.num_players())))
    return len(bad)


def policy_to_json_dict(tabular_policy):
    """Exactly TabularPolicy.to_dict(), with numpy types made plain Python."""
    out = {}
    for key, pairs in tabular_policy.to_dict().items():
        out[key] = [[int(a), float(p)] for a, p in pairs]
    return out


def random_policy(game, seed):
    pol = policy_lib.TabularPolicy(game)
    rng = np.random.default_rng(seed)
    # Iterate in sorted key order so the draw order is documented and stable.
    for key in sorted(pol.state_lookup):
        row = pol.state_lookup[key]
        mask = pol.legal_actions_mask[row].astype(bool)
        weights = rng.dirichlet(np.ones(int(mask.sum())))
        probs = np.zeros(pol.action_probability_array.shape[1])
        probs[mask] = weights / weights.sum()
        pol.action_probability_array[row] = probs
    return pol


def evaluate(game, pol, python_nash_conv=True):
    n = game.num_players()
    root = game.new_initial_state()
    nash_conv_py, improvements, br_values = None, None, None
    if python_nash_conv:
        nc_full = exploitability.nash_conv(game, pol,
                                           return_only_nash_conv=False)
        nash_conv_py = float(nc_full.nash_conv)
        improvements = [float(x) for x in nc_full.player_improvements]
        br_values = [float(best_response_lib.BestResponsePolicy(game, p, pol)
                           .value(root)) for p in range(n)]
    expected = [float(x) for x in
                expected_game_score.policy_value(root, [pol] * n)]
    cpp_policy = policy_lib.python_policy_to_pyspiel_policy(pol)
    nash_conv_cpp = float(pyspiel.nash_conv(game, cpp_policy))
    nash_conv_cpp_dict = float(pyspiel.nash_conv(game, pol.to_dict()))
    br_values_cpp = [float(pyspiel.TabularBestResponse(game, p, cpp_policy)
                           .value(root.history_str())) for p in range(n)]
    constant_sum = game.get_type().utility in (
        pyspiel.GameType.Utility.ZERO_SUM, pyspiel.GameType.Utility.CONSTANT_SUM)
    expl_os = (float(exploitability.exploitability(game, pol))
               if n == 2 and constant_sum and python_nash_conv else None)
    if nash_conv_py is None:
        nash_conv_py_or_cpp = nash_conv_cpp
    else:
        nash_conv_py_or_cpp = nash_conv_py
    return {
        "nash_conv": nash_conv_py,
        "nash_conv_cpp": nash_conv_cpp,
        "nash_conv_cpp_from_dict": nash_conv_cpp_dict,
        "exploitability": nash_conv_py_or_cpp / n,
        "exploitability_openspiel": expl_os,
        "best_response_values": br_values,
        "best_response_values_cpp": br_values_cpp,
        "player_improvements": improvements,
        "expected_returns": expected,
    }


def dump_json(path, obj):
    # json uses float.__repr__, i.e. shortest round-trip representation.
    with open(path, "w") as f:
        json.dump(obj, f, indent=1, sort_keys=False)
        f.write("\n")


def collect_examples(game, max_per_bucket=4):
    """Leduc example info-state strings grouped by situation.

    Every distinct info state is bucketed; from each bucket we keep
    `max_per_bucket` evenly spaced entries (in sorted-key order) for variety.
    """
    buckets = {}

    def add(bucket, item):
        buckets.setdefault(bucket, {}).setdefault(item["key"], item)

    def rec(state):
        if state.is_terminal():
            return
        if state.is_chance_node():
            for action, _ in state.chance_outcomes():
                rec(state.child(action))
            return
        p = state.current_player()
        s = state.information_state_string(p)
        legal = [int(a) for a in state.legal_actions()]
        hist = [int(a) for a in state.history()]
        item = {"history": hist, "player": p, "legal_actions": legal,
                "key": s}
        rnd = "round 1" if "[Round 1]" in s else "round 2"
        opening = s.endswith("[Round1: ][Round2: ]") or (
            rnd == "round 2" and s.endswith("[Round2: ]"))
        add(f"{rnd} a: opening (no action yet this round)" if opening
            else f"{rnd} b: after some betting", item)
        # terminal-adjacent: some legal action ends the game immediately
        if any(state.child(a).is_terminal() for a in legal):
            add(f"{rnd} c: terminal-adjacent", item)
        for a in legal:
            rec(state.child(a))

    rec(game.new_initial_state())
    out = {}
    for bucket in sorted(buckets):
        items = [buckets[bucket][k] for k in sorted(buckets[bucket])]
        m = min(max_per_bucket, len(items))
        idx = sorted(set(round(i * (len(items) - 1) / max(m - 1, 1))
                         for i in range(m)))
        out[bucket] = [items[i] for i in idx]
    return out


README_TEMPLATE = """# OpenSpiel reference fixtures

Generated by `benches/peers/make_fixtures.py` with open_spiel {osv} (PyPI wheel),
numpy {npv}, Python {pyv}:

```sh
python3 -m venv benches/peers/.venv
benches/peers/.venv/bin/pip install open_spiel==2.0.2 numpy
benches/peers/.venv/bin/python benches/peers/make_fixtures.py
```

Games (file base name: OpenSpiel game string; goofspiel, a simultaneous-move
game, in its turn-based form `pyspiel.load_game_as_turn_based(spec)`, the game
OpenSpiel's CFR and NashConv walk):

{games_list}

## Files

* `<name>_infosets.json`: `game` (spec), `num_histories` (every node of the full
  tree: chance + decision + terminal), `num_terminals`, `num_decision`,
  `num_chance`, `num_infosets` (per player), `infosets`: one list per player of
  `{{"key": information_state_string(player), "legal_actions": [...]}}` sorted by key
  (Python string sort = byte order). For large games only every k-th key of
  each player's sorted list is kept, and `infosets_sample_every` is k
  ({sampling}); `num_infosets` still counts them all. `goofspiel_4`'s strings
  have imperfect recall: its file has `imperfect_recall`, the number of
  information states reached with different earlier (information state,
  action) pairs of their player, and it has no policies or NashConv.
* `<name>_random_<seed>.json` (seeds 0, 1, 2, except {seeds}) and
  `<name>_uniform.json` (not for {no_uniform}, whose policy files would be
  large: their `expected.json` entries have `"file": null`): exactly
  `open_spiel.python.policy.TabularPolicy.to_dict()`: info-state string ->
  list of `[action, probability]` for **every** action `0..num_distinct_actions-1`
  (illegal ones with probability 0). Floats are written with Python `repr`
  (shortest round-trip), so parsing gives the exact f64 OpenSpiel used.
  Random policies: `rng = numpy.random.default_rng(seed)`; for each info state in
  sorted key order, `w = rng.dirichlet(ones(#legal))`, `probs[legal] = w / w.sum()`.
  Probabilities may sum to 1 only up to ~1e-16; do not renormalise if you want
  bit-for-bit agreement (renormalising changes values by ~1e-16 only).
* `expected.json`: for every policy file: `nash_conv` (Python
  `exploitability.nash_conv`), `nash_conv_cpp` (`pyspiel.nash_conv` on
  `policy.python_policy_to_pyspiel_policy(p)`), `nash_conv_cpp_from_dict`
  (`pyspiel.nash_conv(game, p.to_dict())`), `best_response_values` (Python
  `BestResponsePolicy(game, player, p).value(root)`), `best_response_values_cpp`
  (`pyspiel.TabularBestResponse`), `player_improvements` (= BR value - on-policy
  value, from `nash_conv(..., return_only_nash_conv=False)`), `expected_returns`
  (`expected_game_score.policy_value(root, [p]*n)`), `exploitability`
  (= nash_conv / num_players; `exploitability_openspiel` is OpenSpiel's
  `exploitability()` which only exists for 2-player constant-sum games, null
  otherwise). `nash_conv = sum(best_response_values) - sum(expected_returns)`.
  For `leduc_poker(players=3)` OpenSpiel's Python best response is skipped (too
  slow on 1.8 M histories): `nash_conv`, `best_response_values` and
  `player_improvements` are null, the C++ values are there.
* `connect_four_playouts.json`: written by `benches/peers/make_connect_four_fixture.py`
  (same venv), not by `make_fixtures.py`: `connect_four` has no tree to walk, so the file
  holds 100 random games OpenSpiel played (numpy `default_rng(0)`), then two draws
  and a game won with the 42nd stone from the same stream, with each state's
  player, legal actions, information-state string, `str(state)` and observation
  tensor; the script's docstring describes the fields.

## Tree sizes

| game | histories | terminals | decision | chance | infosets per player |
|---|---|---|---|---|---|
{tree_rows}

## Uniform-policy NashConv

| game | Python nash_conv | C++ nash_conv | reference |
|---|---|---|---|
{uniform_rows}

## Information-state string formats (inferred and checked on every infoset)

### Kuhn poker (2p and 3p)

`<card><history>`: the acting player's private card as a decimal digit
(`0..num_players`, i.e. 0=J,1=Q,2=K for 2p; 0..3 for 3p), immediately followed by
one character per betting action taken so far by all players, `p` = pass
(action 0), `b` = bet (action 1). No separators, no spaces, no chance outcomes.
Actions: 0 = Pass, 1 = Bet; both always legal.

Examples: {kuhn_examples}

3p examples: {kuhn3_examples}

### Leduc poker (2p, default params)

```
[Observer: P][Private: C][Round R][Player: Q][Pot: X][Money: M0 M1][Public: B][Round1: a a ...][Round2: a a ...]
```

* No spaces between bracket groups; inside a group, `Name: value` (colon + one
  space). Fields in exactly this order.
* `Observer`: the player the string is for (= acting player in these fixtures).
* `Private`: that player's card 0..5 (card // 2 is the rank: 0,1 = J; 2,3 = Q;
  4,5 = K; card % 2 is the suit). Cards are the raw deck indices, since
  `suit_isomorphism=false`.
* `Round`: `1` or `2` (separated from the number by a space, no colon).
* `Player`: the current player to act (equal to Observer here).
* `Pot`: total chips in pot including the antes (starts at 2).
* `Money`: remaining stack of each player, space-separated, starting at 99
  (100 minus ante 1). Round-1 raise = 2, round-2 raise = 4, max 2 raises per round.
* `[Public: B]` appears only once the public card is dealt (round 2); it is
  absent (not empty) in round 1.
* `Round1:` / `Round2:`: betting actions of that round as integers separated by
  single spaces (0 = Fold, 1 = Call/Check, 2 = Raise). An empty round is written
  `[Round1: ]` (colon, one space, nothing). Both groups always present.
* Legal actions: Fold (0) only when facing a bet; Call (1) always; Raise (2)
  if fewer than 2 raises this round.
* Player 0 acts first in both rounds (starting_player=0).

Examples by situation (history = OpenSpiel action history incl. chance deals):

{leduc_examples}

### Liar's dice (2p, `bidding_rule=reset-face`)

`<own dice><bids>`: the player's dice faces `1..dice_sides` without separators
(`-1` for a die not yet rolled; sorted once every die of both players is
rolled, so while player 1 rolls, player 0's dice are in roll order), then for
each bid so far ` <quantity>-<face>` and ` Liar` for the call. Chance outcome
`i` is face `i + 1`; player 0 rolls all of its dice first. Action `b <
total_dice * dice_sides` bids quantity `b // dice_sides + 1` of face
`b % dice_sides + 1`; action `total_dice * dice_sides` calls liar (legal once a
bid was made). The highest face is wild. Returns: +1 to the bidder and -1 to
the caller if at least `quantity` dice show `face` or the wild face, else the
reverse.

Examples (`liars_dice`): {liars_examples}

Examples (`liars_dice(numdice=2,dice_sides=2)`): {liars2_examples}

### Goofspiel, turn-based (OpenSpiel's `goofspiel` through `turn_based_simultaneous_game`)

Lines, each ending in `\\n`; lists print every number followed by a space:

* `Current player: P` (the turn-based state's: `-1` at chance, `-4` at
  terminals), then, for a player who has already bid this turn,
  `Observer's action this turn: A`.
* With `imp_info=True`: `P<p> hand: ` (the player's card values), `P<p> action
  sequence: ` (their earlier bids as action ids), `Point card sequence: `
  (values), `Win sequence: ` (the winner of each turn, `-3` for a tie),
  `Points: ` (every player's), `Terminal?: 0|1`.
* With `imp_info=False`: `Point card sequence: `, `P<q> hand: ` for every
  player, `Win sequence: `, `Points: `.

Action `c` bids card `c + 1`; chance outcome `c` reveals point card `c + 1`
(uniform among those left, `points_order=random`). Within a turn players bid in
order 0, 1, ...; the single highest bid takes the point card's value, a tie for
the highest discards it. The last turn is played without a choice and is not in
the history.

Examples (`goofspiel(imp_info=True,num_cards=4,points_order=descending)`):

{goof_examples}
"""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)

    expected = {
        "generator": "benches/peers/make_fixtures.py",
        "open_spiel_version": importlib.metadata.version("open_spiel"),
        "numpy_version": np.__version__,
        "notes": {},
        "uniform": [],
        "policies": [],
    }
    tree_rows, uniform_rows = [], []
    examples = {}

    for name, spec in GAMES:
        # The game itself for turn-based games, the turn-based form of a
        # simultaneous-move one (goofspiel).
        game = pyspiel.load_game_as_turn_based(spec)
        n = game.num_players()
        options = GAME_OPTIONS.get(name, {})
        every = options.get("sample_every", 1)
        counts, infosets = walk_tree(game)
        info_json = {"game": spec, **counts,
                     "num_infosets": [len(d) for d in infosets],
                     "infosets": [[{"key": k, "legal_actions": d[k]}
                                   for k in sorted(d)[::every]]
                                  for d in infosets]}
        if every > 1:
            info_json["infosets_sample_every"] = every
        if not options.get("evaluate", True):
            info_json["imperfect_recall"] = count_imperfect_recall(game)
        dump_json(os.path.join(args.out, f"{name}_infosets.json"), info_json)
        tree_rows.append(
            f"| `{spec}` | {counts['num_histories']} | {counts['num_terminals']}"
            f" | {counts['num_decision']} | {counts['num_chance']} | "
            f"{[len(d) for d in infosets]} |")
        examples[name] = [k for d in infosets for k in sorted(d)]

        # Check the TabularPolicy covers exactly the infosets we found.
        probe = policy_lib.TabularPolicy(game)
        all_keys = set(k for d in infosets for k in d)
        if set(probe.state_lookup) != all_keys:
            raise RuntimeError(f"{spec}: TabularPolicy keys != tree infosets")

        if not options.get("evaluate", True):
            continue
        pols = [("uniform", None, policy_lib.TabularPolicy(game))]
        pols += [(f"random_{s}", s, random_policy(game, s))
                 for s in options.get("seeds", SEEDS)]
        for tag, seed, pol in pols:
            fname = f"{name}_{tag}.json"
            if seed is None and not options.get("uniform_file", True):
                fname = None
            else:
                pdict = policy_to_json_dict(pol)
                dump_json(os.path.join(args.out, fname), pdict)
                # Round-trip check: what we wrote is bit-identical to to_dict().
                with open(os.path.join(args.out, fname)) as f:
                    back = json.load(f)
                ref = pol.to_dict()
                assert back.keys() == ref.keys()
                for k, pairs in ref.items():
                    assert [(a, p) for a, p in back[k]] == [
                        (int(a), float(p)) for a, p in pairs], k
            ev = evaluate(game, pol, options.get("python_nash_conv", True))
            entry = {"game": spec, "file": fname, "seed": seed,
                     "num_players": n, **ev}
            if (ev["nash_conv"] is not None
                    and abs(ev["nash_conv"] - ev["nash_conv_cpp"]) > 1e-9):
                raise RuntimeError(f"python/C++ NashConv mismatch: {entry}")
            if seed is None:
                ref_nc = UNIFORM_REFERENCE.get(name)
                entry["reference_nash_conv"] = ref_nc
                if ref_nc is not None and abs(ev["nash_conv"] - ref_nc) > 1e-9:
                    raise RuntimeError(f"uniform NashConv off: {entry}")
                expected["uniform"].append(entry)
                uniform_rows.append(
                    f"| `{spec}` | "
                    f"{'-' if ev['nash_conv'] is None else repr(ev['nash_conv'])} | "
                    f"{ev['nash_conv_cpp']!r} | "
                    f"{'-' if ref_nc is None else repr(ref_nc)} |")
            else:
                expected["policies"].append(entry)
            print(f"{fname or name + ' (uniform)':32s} nash_conv={ev['nash_conv']!r:24s} "
                  f"cpp={ev['nash_conv_cpp']!r}")

    leduc = pyspiel.load_game("leduc_poker")
    buckets = collect_examples(leduc)
    kuhn_ex = examples["kuhn_poker"]
    kuhn3_ex = examples["kuhn_poker_3p"]
    expected["notes"] = {
        "kuhn_poker_format":
            "<card digit><one char per action so far: p=pass(0), b=bet(1)>; "
            "no separators. e.g. '0', '1p', '2b', '0pb'.",
        "kuhn_poker_examples": kuhn_ex[:12],
        "kuhn_poker_3p_examples": kuhn3_ex[::4],
        "leduc_poker_format":
            "[Observer: P][Private: C][Round R][Player: Q][Pot: X][Money: M0 M1]"
            "[Public: B (round 2 only)][Round1: a a ...][Round2: a a ...]; "
            "actions 0=fold 1=call 2=raise, space separated; empty round -> "
            "'[Round1: ]'; cards 0..5, rank=card//2; money starts at 99.",
        "leduc_poker_examples": {k: [e["key"] for e in v]
                                 for k, v in buckets.items()},
        "nash_conv_definition":
            "sum_p (BR value of p vs others' policy) - (on-policy value of p)",
    }
    dump_json(os.path.join(args.out, "expected.json"), expected)

    leduc_md = []
    for bucket in sorted(buckets):
        leduc_md.append(f"**{bucket}**\n")
        for e in buckets[bucket]:
            leduc_md.append(f"* history `{e['history']}`, legal "
                            f"`{e['legal_actions']}`:\n  `{e['key']}`")
        leduc_md.append("")
    readme = README_TEMPLATE.format(
        osv=expected["open_spiel_version"], npv=np.__version__,
        pyv=sys.version.split()[0],
        tree_rows="\n".join(tree_rows), uniform_rows="\n".join(uniform_rows),
        kuhn_examples=", ".join(f"`{k}`" for k in kuhn_ex),
        kuhn3_examples=", ".join(f"`{k}`" for k in kuhn3_ex[::4]),
        leduc_examples="\n".join(leduc_md),
        liars_examples=", ".join(f"`{k}`" for k in examples["liars_dice"][::1024]),
        liars2_examples=", ".join(
            f"`{k}`" for k in examples["liars_dice_2d2s"][::64]),
        goof_examples="\n".join(
            f"* `{k!r}`" for k in examples["goofspiel_4_imp_desc"][::40]),
        games_list="\n".join(f"* `{name}`: `{spec}`" for name, spec in GAMES),
        sampling=", ".join(
            f"`{name}` {o['sample_every']}" for name, o in GAME_OPTIONS.items()
            if "sample_every" in o),
        seeds=", ".join(
            f"`{name}` {o['seeds'] or 'none'}" for name, o in GAME_OPTIONS.items()
            if "seeds" in o),
        no_uniform=", ".join(
            f"`{name}`" for name, o in GAME_OPTIONS.items()
            if not o.get("uniform_file", True)))
    with open(os.path.join(args.out, "README.md"), "w") as f:
        f.write(readme)
    print(f"wrote fixtures to {args.out}")


if __name__ == "__main__":
    main()
