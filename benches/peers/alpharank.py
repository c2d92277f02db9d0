#!/usr/bin/env python3
"""Peer benchmark: two-population alpha-Rank, OpenSpiel vs metagame.

Usage (plain python3 is fine, the script bootstraps benches/peers/.venv):

    python3 benches/peers/alpharank.py                 # N = 10, 50
    python3 benches/peers/alpharank.py --full          # also N = 100 (OpenSpiel: ~7 min)
    python3 benches/peers/alpharank.py --metagame-bin target/release/metagame

Games (PEERS.md §5/§6): A uniform in [0, 1] from numpy default_rng(0), drawn for
N = 10, 50, 100 in that order (the first three draws of the LP benchmark's
generator, which continues with 200 and 500); payoff_tables = [A, -A].

For each N it runs OpenSpiel's `alpharank.compute(payoff_tables)` with its
defaults (m = 50, alpha = 100; for two tables this is the multi-population
model, whose pi is over the N*N joint profiles, id = row * N + column, i.e. the
last population changes fastest) in a child process with a timeout (600 s with
--full), and `metagame solve FILE.nfg --solver alpha-rank --json` on the same
game written as a Gambit .nfg (payoff-list format, player 1's strategy changing
fastest). metagame's Populations::Auto picks the multi-population model too
(the game is not symmetric). It prints both times, their ratio and the largest
|pi difference| over the profiles.

Exit status: 0 when every compared pi agrees to --tol (default 1e-8) or
metagame is unavailable, 1 on a mismatch, 2 on setup failure.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))


from peer_venv import ensure_venv  # noqa: E402

if __name__ == "__main__":
    # open_spiel 2.0.2 imports matplotlib and networkx from egt.alpharank without declaring them.
    ensure_venv(__file__, ["open_spiel==2.0.2", "numpy", "matplotlib", "networkx"], "numpy, pyspiel, matplotlib, networkx", {"open_spiel": "2.0.2"})

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402


def games():
    rng = np.random.default_rng(0)
    return {n: rng.uniform(0.0, 1.0, size=(n, n)) for n in (10, 50, 100)}


def _openspiel_child(a, queue):
    warnings.simplefilter("ignore")
    from open_spiel.python.egt import alpharank
    start = time.perf_counter()
    _, _, pi, _, _ = alpharank.compute([a, -a])
    queue.put((time.perf_counter() - start, np.asarray(pi, dtype=float)))


def run_openspiel(a, timeout):
    queue = mp.Queue()
    proc = mp.Process(target=_openspiel_child, args=(a, queue))
    proc.start()
    proc.join(timeout)
    if proc.is_alive():
        proc.terminate()
        proc.join()
        return None, f"timeout ({timeout} s)"
    if queue.empty():
        return None, f"failed (exit code {proc.exitcode})"
    return queue.get(), None


def write_nfg(a, path):
    n = a.shape[0]
    values = []
    for j in range(n):          # player 2's strategy: slowest
        for i in range(n):      # player 1's strategy: fastest
            values.append(repr(float(a[i, j])))
            values.append(repr(float(-a[i, j])))
    with open(path, "w") as f:
        f.write(f'NFG 1 R "alpharank N={n}" {{ "Row" "Column" }} {{ {n} {n} }}\n')
        f.write(" ".join(values) + "\n")


def find_key(obj, key):
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for v in obj.values():
            found = find_key(v, key)
            if found is not None:
                return found
    elif isinstance(obj, list):
        for v in obj:
            found = find_key(v, key)
            if found is not None:
                return found
    return None


def run_metagame(binary, path):
    cmd = [binary, "solve", path, "--solver", "alpha-rank", "--json"]
    start = time.perf_counter()
    out = subprocess.run(cmd, capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    if out.returncode != 0:
        return None, f"`{' '.join(cmd)}` failed: {out.stderr.strip()[:200]}"
    try:
        data = json.loads(out.stdout)
    except json.JSONDecodeError as e:
        return None, f"metagame printed no JSON ({e})"
    stationary = find_key(data, "stationary")
    if not stationary:
        return None, "no `stationary` in metagame's JSON"
    pi = np.asarray(stationary[0] if isinstance(stationary[0], list) else stationary, dtype=float)
    seconds = find_key(data, "seconds")
    return (elapsed if seconds is None else float(seconds), pi), None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--full", action="store_true", help="also N = 100 (OpenSpiel takes minutes)")
    ap.add_argument("--metagame-bin", default=os.path.join(REPO_ROOT, "target", "release", "metagame"))
    ap.add_argument("--no-metagame", action="store_true")
    ap.add_argument("--tol", type=float, default=1e-8)
    args = ap.parse_args()

    sizes = [10, 50, 100] if args.full else [10, 50]
    timeout = 600 if args.full else 300
    have_metagame = not args.no_metagame and os.path.exists(args.metagame_bin)
    if not have_metagame and not args.no_metagame:
        print(f"[metagame] {args.metagame_bin} not found (cargo build --release); OpenSpiel only")
    mats = games()
    status = 0
    print(f"{'N':>4} {'profiles':>8} {'A[0,0]':>10} {'sha256':>10} {'openspiel s':>12} "
          f"{'metagame s':>11} {'ratio':>8} {'max |dpi|':>10}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in sizes:
            a = mats[n]
            digest = hashlib.sha256(a.tobytes()).hexdigest()[:8]
            os_result, os_err = run_openspiel(a, timeout)
            mg_result, mg_err = None, None
            if have_metagame:
                path = os.path.join(tmp, f"alpharank_{n}.nfg")
                write_nfg(a, path)
                mg_result, mg_err = run_metagame(args.metagame_bin, path)
            os_t = f"{os_result[0]:.4g}" if os_result else os_err
            mg_t = f"{mg_result[0]:.4g}" if mg_result else (mg_err or "-")
            ratio, diff = "-", "-"
            if os_result and mg_result:
                ratio = f"{os_result[0] / mg_result[0]:.3g}"
                d = float(np.abs(os_result[1] - mg_result[1]).max())
                diff = f"{d:.2e}"
                if d > args.tol:
                    status = 1
            print(f"{n:>4} {n * n:>8} {a[0, 0]:>10.6f} {digest:>10} {os_t:>12} {mg_t:>11} "
                  f"{ratio:>8} {diff:>10}")
            if mg_err:
                print(f"     metagame: {mg_err}")
    return status


if __name__ == "__main__":
    sys.exit(main())
