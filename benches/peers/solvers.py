#!/usr/bin/env python3
"""Peer benchmark: normal-form Nash solvers, scipy/nashpy/pygambit vs metagame.

Usage (plain python3 is fine, the script bootstraps benches/peers/.venv):

    python3 benches/peers/solvers.py                       # everything
    python3 benches/peers/solvers.py --only zero_sum       # or: bimatrix
    python3 benches/peers/solvers.py --metagame-bin target/release/metagame
    python3 benches/peers/solvers.py --only zero_sum --metagame-bin OLD NEW   # builds side by side
    python3 benches/peers/solvers.py --nfg FILE.nfg [FILE.nfg ...] [--solvers lp,lemke-howson]

Games (PEERS.md section 5): payoffs uniform in [0, 1) from numpy's
default_rng(0). Zero-sum: one generator, A for N = 10, 50, 100, 200, 500 in that
order (column player gets -A). Bimatrix: a fresh default_rng(0), for N = 5, 10,
20, 50 in that order A then B. Each game is written as a Gambit .nfg file (exact
float repr) under benches/peers/results/nf_games/.

Peers run in child processes with timeouts (120 s for one-equilibrium solvers,
60 s for enumerators, 300 s for zero-sum; a solver that timed out is not tried
at larger N); time = median over up to 5 runs (fewer once 30 s, 10 s for
enumerators, were spent), game construction excluded. metagame is run as
`metagame solve FILE --solver S [--all] --json --repeat R`, whose
`seconds_per_solve` excludes process start and file parsing. With several
`--metagame-bin` builds, each gets its own row after the same peer run (the
solver column names the build), so before/after timings share the machine's load.

"gap" is computed here for both sides in the same way: max over the two players
of (best pure deviation payoff - payoff of the profile), the worst over all
returned equilibria.

--nfg mode: each Gambit .nfg file (payoff-list form, as metagame and Gambit write
it) is read by a small parser here, and metagame's solvers (`--solvers`, default:
lp and lemke-howson for 2-player files, logit for more players) run on it
against the peers that fit the file: scipy HiGHS (one LP, row strategy from the
duals) for 2-player constant-sum files against `lp`; nashpy Lemke-Howson and
pygambit lcp_solve (float, stop_after=1) for 2-player files against
`lemke-howson`; pygambit gnm_solve, simpdiv_solve and logit_solve for files
with 3 or more players against every solver named. A metagame solver with no
fitting peer is still timed. metagame is timed twice: as a whole process
(`metagame solve FILE --solver S --json`, wall clock, median of up to 5 runs,
file parsing and process start included) and in-process (`--repeat R`,
`seconds_per_solve`). Peers are timed in-process (median of up to 5 runs, game
construction and file parsing excluded). NashConv (sum over the players of the
best pure deviation gain) is computed here for both sides from the file's
payoffs, the worst over the returned equilibria. Rows go to
results/solvers_nfg.json.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RESULTS = os.path.join(HERE, "results")


from peer_venv import ensure_venv  # noqa: E402

if __name__ == "__main__":
    ensure_venv(__file__, ["numpy", "scipy", "nashpy==0.0.43", "pygambit==16.7.0"], "numpy, scipy, nashpy, pygambit", {"nashpy": "0.0.43", "pygambit": "16.7.0"})

# --------------------------------------------------------------------------
import argparse  # noqa: E402
import json  # noqa: E402
import multiprocessing as mp  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ZS_SIZES = [10, 50, 100, 200, 500]
BM_SIZES = [5, 10, 20, 50]


def make_games():
    rng = np.random.default_rng(0)
    zero_sum = {n: rng.random((n, n)) for n in ZS_SIZES}
    rng = np.random.default_rng(0)
    bimatrix = {}
    for n in BM_SIZES:
        a = rng.random((n, n))
        b = rng.random((n, n))
        bimatrix[n] = (a, b)
    return zero_sum, bimatrix


def write_nfg(path, a, b, title):
    m, n = a.shape
    lines = [f'NFG 1 R "{title}" {{ "Row" "Column" }} {{ {m} {n} }}', ""]
    for j in range(n):          # player 1 (rows) fastest
        for i in range(m):
            lines.append(f"{float(a[i, j])!r} {float(b[i, j])!r}")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def gap(a, b, eqs):
    worst = 0.0
    for x, y in eqs:
        x = np.asarray(x, dtype=float)
        y = np.asarray(y, dtype=float)
        ay = a @ y
        xb = x @ b
        worst = max(worst, float(ay.max() - x @ ay), float(xb.max() - xb @ y))
    return worst


# ---- peers (run in a child process) ----

def peer_highs(a, b):
    from scipy.optimize import linprog
    m, n = a.shape
    # Column player: min v s.t. A y <= v, sum y = 1, y >= 0; row strategy from the duals.
    c = np.zeros(n + 1)
    c[-1] = 1.0
    a_ub = np.hstack([a, -np.ones((m, 1))])
    a_eq = np.hstack([np.ones((1, n)), np.zeros((1, 1))])
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=[1.0],
                  bounds=[(0, None)] * n + [(None, None)], method="highs")
    y = res.x[:n]
    x = -res.ineqlin.marginals
    x = x / x.sum()
    return [(x, y)]


def peer_nashpy_lh(a, b):
    import nashpy
    x, y = nashpy.Game(a, b).lemke_howson(initial_dropped_label=0)
    return [(x, y)]


def peer_nashpy_se(a, b):
    import nashpy
    return [(x, y) for x, y in nashpy.Game(a, b).support_enumeration(non_degenerate=True)]


def _gambit_game(a, b):
    import pygambit as gbt
    return gbt.Game.from_arrays(a, b)


def _gambit_eqs(result, m):
    out = []
    for eq in result.equilibria:
        flat = [float(v) for v in eq.as_list()] if hasattr(eq, "as_list") else None
        if flat is None:
            players = list(eq.game.players)
            flat = [float(eq[s]) for p in players for s in p.strategies]
        out.append((flat[:m], flat[m:]))
    return out


def peer_gambit_lcp(a, b):
    import pygambit as gbt
    g = _gambit_game(a, b)
    return _gambit_eqs(gbt.nash.lcp_solve(g, rational=False, stop_after=1), a.shape[0])


def peer_gambit_enummixed(a, b):
    import pygambit as gbt
    g = _gambit_game(a, b)
    return _gambit_eqs(gbt.nash.enummixed_solve(g, rational=False), a.shape[0])


PEERS = {
    "scipy_highs_1lp_duals": peer_highs,
    "nashpy_lemke_howson_label0": peer_nashpy_lh,
    "nashpy_support_enumeration_nondegenerate": peer_nashpy_se,
    "pygambit_lcp_float_stop_after_1": peer_gambit_lcp,
    "pygambit_enummixed_float": peer_gambit_enummixed,
}


def _child(name, a, b, budget, queue):
    import warnings
    warnings.filterwarnings("ignore")  # nashpy's 0/0 warnings while it cycles (PEERS.md 5)
    try:
        times = []
        eqs = None
        spent = 0.0
        while len(times) < 5 and (not times or spent < budget):
            t0 = time.perf_counter()
            eqs = PEERS[name](a, b)
            dt = time.perf_counter() - t0
            times.append(dt)
            spent += dt
        queue.put({"seconds": statistics.median(times), "runs": len(times),
                   "eqs": [(list(map(float, x)), list(map(float, y))) for x, y in eqs]})
    except Exception as e:  # noqa: BLE001
        queue.put({"error": f"{type(e).__name__}: {e}"})


def run_peer(name, a, b, timeout, budget):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_child, args=(name, a, b, budget, queue))
    proc.start()
    try:
        result = queue.get(timeout=timeout)
    except Exception:  # noqa: BLE001  (queue.Empty)
        result = {"timeout": timeout}
    proc.terminate()
    proc.join()
    return result


def run_metagame(binary, path, solver, all_eqs, a, b):
    def call(repeat):
        cmd = [binary, "solve", path, "--solver", solver, "--json", "--repeat", str(repeat)]
        if all_eqs:
            cmd.append("--all")
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        if out.returncode != 0:
            return {"error": out.stderr.strip()}
        return json.loads(out.stdout)
    first = call(1)
    if "error" in first:
        return first
    per = first["seconds_per_solve"]
    repeat = max(1, min(1000, int(1.0 / max(per, 1e-7))))
    result = call(repeat) if repeat > 1 else first
    eqs = [(e[0], e[1]) for e in result["equilibria"]]
    return {"seconds": result["seconds_per_solve"], "runs": repeat, "status": result["status"],
            "nash_conv": result["nash_conv"], "eqs": eqs}


def fmt(v, digits=4):
    return "—" if v is None else f"{v:.{digits}g}"


# ---- --nfg mode: any Gambit .nfg file against the peers that fit it ----

def _nfg_tokens(text):
    """Gambit .nfg tokens: quoted strings (with \" escapes), braces and bare words."""
    tokens = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace() or c == ",":
            i += 1
        elif c == '"':
            j = i + 1
            out = []
            while j < n and text[j] != '"':
                if text[j] == "\\" and j + 1 < n:
                    j += 1
                out.append(text[j])
                j += 1
            tokens.append(("str", "".join(out)))
            i = j + 1
        elif c in "{}":
            tokens.append((c, c))
            i += 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in '{}",':
                j += 1
            tokens.append(("word", text[i:j]))
            i = j
    return tokens


def _nfg_number(word):
    from fractions import Fraction
    return float(Fraction(word)) if "/" in word else float(word)


def read_nfg(path):
    """The payoff tensors of a Gambit .nfg file, one numpy array per player, shaped by the
    strategy counts (payoff-list and outcome forms; the first player's strategy changes
    fastest in the file)."""
    with open(path) as f:
        toks = _nfg_tokens(f.read())
    pos = 0

    def take(kind=None):
        nonlocal pos
        tok = toks[pos]
        if kind is not None and tok[0] != kind:
            raise ValueError(f"{path}: expected {kind}, got {tok[1]!r} at token {pos}")
        pos += 1
        return tok

    if take("word")[1] != "NFG":
        raise ValueError(f"{path}: not an NFG file")
    take("word")  # version
    take("word")  # R or D
    take("str")   # title
    take("{")
    players = 0
    while toks[pos][0] == "str":
        take("str")
        players += 1
    take("}")
    take("{")
    counts = []
    if toks[pos][0] == "{":
        for _ in range(players):
            take("{")
            k = 0
            while toks[pos][0] == "str":
                take("str")
                k += 1
            take("}")
            counts.append(k)
    else:
        counts = [int(take("word")[1]) for _ in range(players)]
    take("}")
    if pos < len(toks) and toks[pos][0] == "str":
        take("str")  # comment
    num_profiles = int(np.prod(counts))
    if pos < len(toks) and toks[pos][0] == "{":
        # Outcome form: { "name" u1 u2 ... } ..., then one outcome index per profile.
        outcomes = [np.zeros(players)]
        while pos < len(toks) and toks[pos][0] == "{":
            take("{")
            take("str")
            outcomes.append(np.array([_nfg_number(take("word")[1]) for _ in range(players)]))
            take("}")
        flat = np.array([outcomes[int(take("word")[1])] for _ in range(num_profiles)])
    else:
        values = [_nfg_number(w) for kind, w in toks[pos:] if kind == "word"]
        if len(values) != num_profiles * players:
            raise ValueError(f"{path}: {len(values)} payoffs for {num_profiles} profiles x {players} players")
        flat = np.array(values).reshape(num_profiles, players)
    return [flat[:, p].reshape(counts, order="F") for p in range(players)]


def deviation_payoffs(payoffs, profile):
    """u_p(s, sigma_-p) for every player p and pure strategy s."""
    out = []
    k = len(payoffs)
    for p in range(k):
        t = payoffs[p]
        for q in reversed(range(k)):
            if q != p:
                t = np.tensordot(t, np.asarray(profile[q], dtype=float), axes=([q], [0]))
        out.append(t)
    return out


def nash_conv_of(payoffs, profiles):
    """The worst NashConv over the profiles (sum over the players of the best pure
    deviation gain); None when there is no profile."""
    worst = None
    for profile in profiles:
        dev = deviation_payoffs(payoffs, profile)
        conv = sum(float(d.max() - d @ np.asarray(s, dtype=float)) for d, s in zip(dev, profile))
        worst = conv if worst is None else max(worst, conv)
    return worst


def is_constant_sum(payoffs, rel=1e-9):
    total = sum(payoffs)
    scale = max(float(t.max() - t.min()) for t in payoffs)
    return float(total.max() - total.min()) <= rel * max(scale, 1.0)


def _gambit_profiles(result):
    out = []
    for eq in result.equilibria:
        out.append([[float(eq[s]) for s in player.strategies] for player in eq.game.players])
    return out


def _nfg_setup(name, path, payoffs):
    """What a peer needs before the clock starts: its imports, parsing, game construction."""
    if name.startswith("pygambit"):
        import pygambit as gbt
        return gbt.read_nfg(path)
    if name.startswith("nashpy"):
        import nashpy  # noqa: F401
    if name.startswith("scipy"):
        import scipy.optimize  # noqa: F401
    return payoffs


def _nfg_solve(name, state):
    if name == "scipy_highs_1lp_duals":
        return [[list(x), list(y)] for x, y in peer_highs(state[0], state[1])]
    if name == "nashpy_lemke_howson_label0":
        return [[list(x), list(y)] for x, y in peer_nashpy_lh(state[0], state[1])]
    import pygambit as gbt  # (already imported by _nfg_setup: no cost; the peers above need none)
    if name == "pygambit_lcp_float_stop_after_1":
        return _gambit_profiles(gbt.nash.lcp_solve(state, rational=False, stop_after=1))
    if name == "pygambit_gnm":
        return _gambit_profiles(gbt.nash.gnm_solve(state))
    if name == "pygambit_simpdiv":
        return _gambit_profiles(gbt.nash.simpdiv_solve(state.mixed_strategy_profile(rational=True)))
    if name == "pygambit_logit":
        return _gambit_profiles(gbt.nash.logit_solve(state))
    raise ValueError(name)


def _nfg_child(name, path, payoffs, budget, queue):
    import warnings
    warnings.filterwarnings("ignore")
    try:
        state = _nfg_setup(name, path, payoffs)
        times = []
        eqs = None
        spent = 0.0
        while len(times) < 5 and (not times or spent < budget):
            t0 = time.perf_counter()
            eqs = _nfg_solve(name, state)
            dt = time.perf_counter() - t0
            times.append(dt)
            spent += dt
        queue.put({"seconds": statistics.median(times), "runs": len(times),
                   "eqs": [[list(map(float, s)) for s in eq] for eq in eqs]})
    except Exception as e:  # noqa: BLE001
        queue.put({"error": f"{type(e).__name__}: {e}"})


def run_nfg_peer(name, path, payoffs, timeout, budget):
    ctx = mp.get_context("fork")
    queue = ctx.Queue()
    proc = ctx.Process(target=_nfg_child, args=(name, path, payoffs, budget, queue))
    proc.start()
    try:
        result = queue.get(timeout=timeout)
    except Exception:  # noqa: BLE001  (queue.Empty)
        result = {"timeout": timeout}
    proc.terminate()
    proc.join()
    return result


def run_metagame_nfg(binary, path, solver, budget):
    """metagame on a file: whole-process wall time (median of up to 5 runs within
    `budget` seconds) and in-process seconds_per_solve with --repeat."""
    def call(extra):
        cmd = [binary, "solve", path, "--solver", solver, "--json"] + extra
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        wall = time.perf_counter() - t0
        if out.returncode != 0:
            return {"error": out.stderr.strip().splitlines()[-1] if out.stderr.strip() else f"exit {out.returncode}"}, wall
        return json.loads(out.stdout), wall
    walls = []
    first = None
    while len(walls) < 5 and (not walls or sum(walls) < budget):
        result, wall = call([])
        if "error" in result:
            return result
        first = first or result
        walls.append(wall)
    once, _ = call(["--repeat", "1"])
    per = once.get("seconds_per_solve") or statistics.median(walls)
    repeat = max(1, min(1000, int(1.0 / max(per, 1e-7))))
    result, _ = call(["--repeat", str(repeat)]) if repeat > 1 else (once, None)
    if "error" in result:
        return result
    out = {"seconds": result["seconds_per_solve"], "runs": repeat, "process_seconds": statistics.median(walls),
           "process_runs": len(walls), "status": result["status"], "own_nash_conv": result["nash_conv"]}
    # Nash solvers answer "equilibria"; ce/cce ("joint") and alpha-rank ("stationary") do not.
    if "equilibria" in first:
        out["eqs"] = first["equilibria"]
    return out


def nfg_main(args, binary):
    skip = set(filter(None, args.skip.split(",")))
    chosen = [s for s in args.solvers.split(",") if s] if args.solvers else None
    rows = []
    print("| file | shape | peer | metagame solver | peer s | mg s (in-process) | mg s (process) | "
          "peer/mg in-process | peer/mg process | peer NashConv | mg NashConv | mg status | note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for path in args.nfg:
        payoffs = read_nfg(path)
        shape = "x".join(map(str, payoffs[0].shape))
        k = len(payoffs)
        if k == 2:
            solvers = chosen or ["lp", "lemke-howson"]
        else:
            solvers = chosen or ["logit"]
        zero_sum = k == 2 and is_constant_sum(payoffs)
        for solver in solvers:
            if k == 2 and solver == "lp":
                peers = ["scipy_highs_1lp_duals"] if zero_sum else []
            elif k == 2 and solver == "lemke-howson":
                peers = ["nashpy_lemke_howson_label0", "pygambit_lcp_float_stop_after_1"]
            elif k >= 3:
                peers = ["pygambit_gnm", "pygambit_simpdiv", "pygambit_logit"]
            else:
                peers = []
            if solver == "lp" and not zero_sum:
                print(f"| {os.path.basename(path)} | {shape} | — | lp | | | | | | | | | not 2-player constant-sum: skipped |")
                continue
            mg = run_metagame_nfg(binary, path, solver, args.budget)
            mg_conv = nash_conv_of(payoffs, mg["eqs"]) if "eqs" in mg else None
            for peer in (peers or [None]):
                if peer is None or peer in skip:
                    p = {"skipped": True}
                else:
                    p = run_nfg_peer(peer, path, payoffs, args.timeout, args.budget)
                peer_conv = nash_conv_of(payoffs, p["eqs"]) if p.get("eqs") else None
                note = p.get("error") or (f"peer timeout ({p['timeout']}s)" if "timeout" in p else None) \
                    or (("no equilibrium returned" if "eqs" in p and not p["eqs"] else None)) \
                    or mg.get("error") or ("no fitting peer" if peer is None else None) \
                    or ("skipped" if p.get("skipped") else "")
                ps, ms, mp_ = p.get("seconds"), mg.get("seconds"), mg.get("process_seconds")
                row = {"file": path, "shape": shape, "players": k, "peer": peer, "solver": solver,
                       "peer_seconds": ps, "peer_runs": p.get("runs"), "peer_nash_conv": peer_conv,
                       "mg_seconds": ms, "mg_runs": mg.get("runs"), "mg_process_seconds": mp_,
                       "mg_process_runs": mg.get("process_runs"), "mg_nash_conv": mg_conv,
                       "mg_own_nash_conv": mg.get("own_nash_conv"), "mg_status": mg.get("status"), "note": note}
                rows.append(row)
                ratio_in = ps / ms if ps and ms else None
                ratio_proc = ps / mp_ if ps and mp_ else None
                print(f"| {os.path.basename(path)} | {shape} | {peer or '—'} | {solver} | {fmt(ps)} | {fmt(ms)} | "
                      f"{fmt(mp_)} | {fmt(ratio_in, 3)} | {fmt(ratio_proc, 3)} | {fmt(peer_conv, 3)} | "
                      f"{fmt(mg_conv, 3)} | {mg.get('status', '—')} | {note} |", flush=True)
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, "solvers_nfg.json"), "w") as f:
        json.dump(rows, f, indent=1)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", choices=["zero_sum", "bimatrix"])
    parser.add_argument("--metagame-bin", nargs="+", default=None,
                        help="metagame binaries (default: build target/release/metagame); several are "
                             "timed side by side, one row each (--nfg mode uses the first)")
    parser.add_argument("--skip", default="", help="comma-separated peer names to skip")
    parser.add_argument("--nfg", nargs="+", metavar="FILE",
                        help="time metagame against the fitting peers on these Gambit .nfg files")
    parser.add_argument("--solvers", default=None,
                        help="--nfg: comma-separated metagame solver names (default: lp,lemke-howson "
                             "for 2-player files, logit for more players)")
    parser.add_argument("--timeout", type=float, default=300.0, help="--nfg: seconds per peer run")
    parser.add_argument("--budget", type=float, default=30.0,
                        help="--nfg: seconds of repeated runs per timing (at least one run)")
    args = parser.parse_args()

    binaries = args.metagame_bin
    if binaries is None:
        subprocess.check_call(["cargo", "build", "--release", "--quiet", "--bin", "metagame"], cwd=REPO_ROOT)
        binaries = [os.path.join(REPO_ROOT, "target", "release", "metagame")]
    binary = binaries[0]
    if args.nfg:
        nfg_main(args, binary)
        return
    skip = set(filter(None, args.skip.split(",")))

    zero_sum, bimatrix = make_games()
    game_dir = os.path.join(RESULTS, "nf_games")
    os.makedirs(game_dir, exist_ok=True)
    rows = []

    def compare(kind, n, a, b, peer, peer_timeout, peer_budget, solver, all_eqs, timed_out):
        path = os.path.join(game_dir, f"{kind}_{n}.nfg")
        if peer in skip:
            p = {"skipped": True}
        elif peer in timed_out:
            p = {"skipped_after_timeout": True}
        else:
            p = run_peer(peer, a, b, peer_timeout, peer_budget)
            if "timeout" in p:
                timed_out.add(peer)
        for binary in binaries:
            mg = run_metagame(binary, path, solver, all_eqs, a, b)
            label = solver if len(binaries) == 1 else f"{solver} [{binary}]"
            report(kind, n, a, b, peer, p, solver, label, binary, mg)

    def report(kind, n, a, b, peer, p, solver, label, binary, mg):
        row = {"kind": kind, "n": n, "peer": peer, "solver": solver, "metagame_bin": binary,
               "peer_seconds": p.get("seconds"), "peer_runs": p.get("runs"),
               "peer_eqs": len(p["eqs"]) if "eqs" in p else None,
               "peer_gap": gap(a, b, p["eqs"]) if "eqs" in p else None,
               "peer_note": p.get("error") or (f"timeout ({p['timeout']}s)" if "timeout" in p else None)
               or ("skipped" if p.get("skipped") or p.get("skipped_after_timeout") else None),
               "mg_seconds": mg.get("seconds"), "mg_runs": mg.get("runs"),
               "mg_eqs": len(mg["eqs"]) if "eqs" in mg else None,
               "mg_gap": gap(a, b, mg["eqs"]) if "eqs" in mg else None,
               "mg_status": mg.get("status"), "mg_note": mg.get("error")}
        rows.append(row)
        ratio = (row["peer_seconds"] / row["mg_seconds"]) if row["peer_seconds"] and row["mg_seconds"] else None
        print(f"| {peer} | {label} | {n} | {fmt(row['peer_seconds'])} | {fmt(row['mg_seconds'])} | "
              f"{fmt(ratio, 3)} | {fmt(row['peer_gap'], 3)} | {fmt(row['mg_gap'], 3)} | "
              f"{row['peer_eqs'] if row['peer_eqs'] is not None else '—'} | "
              f"{row['mg_eqs'] if row['mg_eqs'] is not None else '—'} | {row['peer_note'] or row['mg_note'] or ''} |",
              flush=True)

    print("| peer | metagame solver | N | peer s | metagame s | peer/mg | peer gap | mg gap | peer #eq | mg #eq | note |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    if args.only in (None, "zero_sum"):
        timed_out = set()
        for n, a in zero_sum.items():
            write_nfg(os.path.join(game_dir, f"zero_sum_{n}.nfg"), a, -a, f"zero_sum_{n}")
            compare("zero_sum", n, a, -a, "scipy_highs_1lp_duals", 300, 30, "lp", False, timed_out)
    if args.only in (None, "bimatrix"):
        timed_out = set()
        for n, (a, b) in bimatrix.items():
            write_nfg(os.path.join(game_dir, f"bimatrix_{n}.nfg"), a, b, f"bimatrix_{n}")
            compare("bimatrix", n, a, b, "nashpy_lemke_howson_label0", 120, 30, "lemke-howson", False, timed_out)
            compare("bimatrix", n, a, b, "pygambit_lcp_float_stop_after_1", 120, 30, "lemke-howson", False,
                    timed_out)
            if n <= 10:
                compare("bimatrix", n, a, b, "nashpy_support_enumeration_nondegenerate", 60, 10,
                        "support-enumeration", True, timed_out)
            if n <= 20:
                compare("bimatrix", n, a, b, "pygambit_enummixed_float", 60, 10, "vertex-enumeration", True,
                        timed_out)
    # Keep the other kind's rows from an earlier `--only` run.
    out = os.path.join(RESULTS, "solvers.json")
    kinds = {r["kind"] for r in rows}
    try:
        with open(out) as f:
            rows = [r for r in json.load(f) if r["kind"] not in kinds] + rows
    except (OSError, ValueError):
        pass
    with open(out, "w") as f:
        json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
