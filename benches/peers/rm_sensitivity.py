"""How far one ulp moves OpenSpiel's regret matching, and how far ours is from it.

Run (from the repository root, after `cargo build --release`):

    python3 benches/peers/rm_sensitivity.py [--size 6] [--seed 3]
        [--iterations 1000 100000] [--metagame-bin target/release/metagame]

(plain python3 is fine: the script bootstraps benches/peers/.venv with open_spiel 2.0.2.)

On a random zero-sum game (payoffs in {-1, -0.8, ..., 1}), OpenSpiel's
`regret_matching.regret_matching([a, -a], iterations=N, gamma=1e-6)` (what psro_v2's `rm`
meta-strategy calls) is run on the game and on the same game with one payoff moved by one
ulp; the largest change of a probability is its own sensitivity. metagame's
`metagame solve FILE --solver rm --iterations N` on the unperturbed game is compared with
OpenSpiel's answer. Where the sensitivity is far above the rounding of either side, no
implementation can follow OpenSpiel's answer (nor a PSRO-rm curve built on it) closer than
that; where it is at rounding level, the two answers should agree to rounding.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from peer_venv import REPO_ROOT, ensure_venv  # noqa: E402

if __name__ == "__main__":
    ensure_venv(__file__, ["open_spiel==2.0.2", "numpy"], "numpy, pyspiel", {"open_spiel": "2.0.2"})

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402

import numpy as np  # noqa: E402
from open_spiel.python.algorithms import regret_matching  # noqa: E402

from machine import cpu_model  # noqa: E402


def openspiel_rm(a, iterations):
    return regret_matching.regret_matching([a, -a], iterations=iterations, gamma=1e-6)


def write_nfg(path, a):
    m, n = a.shape
    with open(path, "w") as f:
        f.write(f'NFG 1 R "rm sensitivity" {{ "P1" "P2" }} {{ {m} {n} }}\n\n')
        # Outcomes in .nfg order: the first player's strategy varies fastest.
        f.write(" ".join(f"{float(a[i, j])!r} {float(-a[i, j])!r}" for j in range(n) for i in range(m)))
        f.write("\n")


def metagame_rm(binary, a, iterations):
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "game.nfg")
        write_nfg(path, a)
        out = subprocess.run([binary, "solve", path, "--solver", "rm", "--iterations", str(iterations),
                              "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        fail(f"metagame solve failed: {out.stderr.strip()}")
    answer = json.loads(out.stdout)
    # An answer that does not certify as an equilibrium is listed apart.
    return (answer["equilibria"] or answer["uncertified"])[0]


def fail(why):
    print(f"rm_sensitivity: {why}", file=sys.stderr)
    sys.exit(2)


def largest_difference(x, y):
    return max(float(np.max(np.abs(np.asarray(p) - np.asarray(q)))) for p, q in zip(x, y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--size", type=int, default=6)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--iterations", type=int, nargs="*", default=[1000, 100_000])
    ap.add_argument("--metagame-bin", default=os.path.join(REPO_ROOT, "target", "release", "metagame"))
    args = ap.parse_args()
    if args.size < 2 or args.size > 200 or any(n < 1 for n in args.iterations):
        fail("--size must be 2..200 and every --iterations at least 1")
    if not os.access(args.metagame_bin, os.X_OK):
        fail(f"no metagame binary at {args.metagame_bin} (cargo build --release)")
    rng = np.random.default_rng(args.seed)
    a = rng.integers(-5, 6, size=(args.size, args.size)).astype(float) / 5
    moved = a.copy()
    moved[2 % args.size, 3 % args.size] = np.nextafter(moved[2 % args.size, 3 % args.size], 10.0)
    print(f"CPU {cpu_model()}; random {args.size}x{args.size} zero-sum game, seed {args.seed}")
    print(f"{'iterations':>10} {'OpenSpiel, 1 ulp moved':>24} {'metagame vs OpenSpiel':>22}")
    for iterations in args.iterations:
        theirs = openspiel_rm(a, iterations)
        sensitivity = largest_difference(theirs, openspiel_rm(moved, iterations))
        ours = metagame_rm(args.metagame_bin, a, iterations)
        print(f"{iterations:>10} {sensitivity:>24.3e} {largest_difference(ours, theirs):>22.3e}")


if __name__ == "__main__":
    main()
