#!/usr/bin/env python3
"""Peer benchmark of metagame's Python API: metagame (pyo3 wheel) vs OpenSpiel, nashpy
and scipy, side by side in one process, on the same inputs.

Run it with a Python that has the metagame package built in and the test requirements
(python/requirements-test.txt: open_spiel, nashpy, scipy, numpy), e.g.:

    cd /work/main   # the repository root
    python3 -m venv target/bench-venv
    target/bench-venv/bin/pip install -q -r python/requirements-test.txt
    PATH=$PWD/target/bench-venv/bin:$PATH CARGO_TARGET_DIR=$PWD/target \\
        target/bench-venv/bin/python -m pip install -q --no-build-isolation --no-deps ./python
    target/bench-venv/bin/python benches/peers/python_api.py [--quick] [--skip-ttt]

(Unlike the other peer scripts it does not bootstrap benches/peers/.venv: the metagame
wheel has to be built into the interpreter that runs it.)

What it measures. Times are medians over repeats. Fast calls first get untimed warm-up
calls (3, or 1 for a call over 0.1 s). The implementations of one group are timed
round-robin, one call each per round (a call far shorter than the round makes several
individually timed calls, up to ~20 ms of them, per round), so that load from other
processes on the machine hits all of them alike.

0. The spread of a tiny call's time, at the start and at the end of the run, to show the
   load: metagame.nash_conv and pyspiel.nash_conv on kuhn_poker, and a bare Python thread
   start + join (each metagame call runs on a thread of its own).
1. NashConv of a tabular policy (the uniform policy, and a seeded random one built as
   make_fixtures.py builds its fixtures: default_rng(0), for each information state in
   sorted key order w = dirichlet(ones(#legal))) on leduc_poker and tic_tac_toe:
   * metagame, the game read through pyspiel: `metagame.openspiel.from_pyspiel(game)`
     ("walk", timed on its own), then `metagame.nash_conv(mg_game, policy)` with the
     OpenSpiel `TabularPolicy` as the argument ("eval(TabularPolicy)": the conversion of
     the policy is inside the call) and with a `metagame.Policy` converted beforehand
     ("eval(Policy)"); "total" = walk + eval(TabularPolicy) (sum of the medians);
   * metagame's built-in Leduc, `metagame.load_game("leduc_poker")` (same three rows);
   * OpenSpiel C++ `pyspiel.nash_conv(game, tabular_policy.to_dict())` (the dict is
     made once, outside the timing; the C++ side converts it and walks its own tree on
     every call);
   * OpenSpiel Python `exploitability.nash_conv(game, tabular_policy)`. On tic_tac_toe
     it runs once only, with a time cap (--ttt-python-cap, default 120 s).
   The ratio columns are the peer's median divided by the row's median (> 1: the row is
   faster). All values of one (game, policy) are compared (max |difference|).
2. The zero-sum LP on a 200x200 matrix game, payoffs uniform in [0, 1): the 200x200 matrix
   of solvers.py / PEERS.md section 5 (default_rng(0), matrices for N = 10, 50, 100, 200
   drawn in that order):
   * `metagame.solve(A, "lp")` (numpy array in: the NormalFormGame built in the call) and
     `metagame.solve(metagame.NormalFormGame(A), "lp")` (game built beforehand);
   * nashpy `Game(A).linear_program()` (two scipy `linprog` calls, one per player, with
     scipy's default method, HiGHS; the nashpy Game built beforehand);
   * scipy `linprog(method="highs")` on the maxmin LP of the row player (max v s.t.
     A^T x >= v 1, sum x = 1, x >= 0); the column strategy from the constraint duals.
   Each answer's NashConv is `metagame.NormalFormGame(A).nash_conv([x, y])` (the answer
   clipped at 0 and renormalised first if it is off the simplex; "simplex viol." shows by
   how much) and, independently, max(A y) - min(x^T A) in numpy.

Results: a text table on stdout; JSON (every repeat's time) and markdown in
benches/peers/results/python_api.{json,md}. Exit status 0, or 1 if values disagree by
more than --tol (NashConv) / --lp-tol (LP value).
"""

import argparse
import hashlib
import importlib.metadata as md
import json
import os
import platform
import signal
import statistics
import sys
import time

from machine import cpu_model  # the script's folder is on sys.path

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")
SETUP = """\
  cd <repo root> && python3 -m venv target/bench-venv && \\
  target/bench-venv/bin/pip install -q -r python/requirements-test.txt && \\
  PATH=$PWD/target/bench-venv/bin:$PATH CARGO_TARGET_DIR=$PWD/target \\
    target/bench-venv/bin/python -m pip install -q --no-build-isolation --no-deps ./python
  target/bench-venv/bin/python benches/peers/python_api.py"""

try:
    import numpy as np
    import pyspiel
    import nashpy
    from scipy.optimize import linprog
    from open_spiel.python import policy as policy_lib
    from open_spiel.python.algorithms import exploitability
    import metagame
    import metagame.openspiel
except ImportError as e:
    print(f"[setup] {e}\nThis script needs the metagame Python package and the test "
          f"requirements in the running interpreter:\n{SETUP}", file=sys.stderr)
    sys.exit(2)


# --------------------------------------------------------------------------
# machine and versions
# --------------------------------------------------------------------------
def versions():
    out = {"python": platform.python_version(), "metagame": metagame.__version__}
    for dist in ["open_spiel", "nashpy", "scipy", "numpy"]:
        try:
            out[dist] = md.version(dist)
        except md.PackageNotFoundError:
            out[dist] = None
    return out


def loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


# --------------------------------------------------------------------------
# timing
# --------------------------------------------------------------------------
class TimeCap(Exception):
    pass


def _alarm(signum, frame):
    raise TimeCap()


def call_capped(fn, cap_s):
    """fn() under a SIGALRM time cap (works for Python code; a C++ call is interrupted
    only once it returns). Returns (seconds, value); value is None after the cap."""
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, cap_s)
    t0 = time.perf_counter()
    try:
        value = fn()
        return time.perf_counter() - t0, value
    except TimeCap:
        return time.perf_counter() - t0, None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def bench(cands, warmup, min_runs, max_runs, budget_s):
    """Times every (key, fn) of `cands` round-robin: an optional untimed warm-up call of
    each, then rounds of one call each until every fn has `min_runs` times and `budget_s`
    has been spent in the rounds, or `max_runs`. Returns {key: {"times", "value"}}."""
    out = {k: {"times": [], "value": None, "warmup": warmup, "calls_per_round": 1}
           for k, _ in cands}
    if warmup:
        for k, fn in cands:
            # Up to 3 warm-up calls (1 for a call over 0.1 s); their fastest sets how many
            # (each timed) calls a round makes: a call much faster than the round gets
            # several, up to ~20 ms of them, so its median rests on more samples.
            best = float("inf")
            for _ in range(3):
                t0 = time.perf_counter()
                out[k]["value"] = fn()
                best = min(best, time.perf_counter() - t0)
                if best > 0.1:
                    break
            out[k]["calls_per_round"] = max(1, min(50, int(0.02 / max(best, 1e-6))))
    start = time.perf_counter()
    for r in range(max_runs):
        # Rotate the order every round so no implementation always runs first.
        order = cands[r % len(cands):] + cands[:r % len(cands)]
        for k, fn in order:
            for _ in range(out[k]["calls_per_round"]):
                t0 = time.perf_counter()
                value = fn()
                out[k]["times"].append(time.perf_counter() - t0)
            out[k]["value"] = value
        if r + 1 >= min_runs and time.perf_counter() - start >= budget_s:
            break
    return out


def stats(times):
    if not times:
        return {"median": None, "min": None, "max": None, "runs": 0, "spread": None}
    return {"median": statistics.median(times), "min": min(times), "max": max(times),
            "runs": len(times), "spread": max(times) / min(times) if min(times) > 0 else None}


# --------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------
def fmt_t(s):
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.2f} ms"
    return f"{s * 1e6:.1f} us"


def fmt_ratio(num, den):
    if num is None or den is None or den <= 0:
        return "-"
    r = num / den
    return f"{r:.3g}x" if r < 1000 else f"{r:,.0f}x"


def fmt_x(r):
    if r is None:
        return "-"
    return f"{r:.3g}x" if r < 1000 else f"{r:,.0f}x"


def fmt_v(v, digits=15):
    return "-" if v is None else f"{v:.{digits}g}"


def fmt_e(v):
    return "-" if v is None else f"{v:.3e}"


def text_table(header, rows):
    widths = [max(len(str(r[i])) for r in rows + [header]) for i in range(len(header))]
    lines = ["  ".join(str(h).ljust(w) for h, w in zip(header, widths))]
    lines.append("-" * len(lines[0]))
    lines += ["  ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    return "\n".join(lines)


def md_table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(lines)


# --------------------------------------------------------------------------
# 1. NashConv
# --------------------------------------------------------------------------
def random_policy(game, seed):
    """make_fixtures.py's random policy: default_rng(seed), sorted keys, dirichlet rows."""
    pol = policy_lib.TabularPolicy(game)
    rng = np.random.default_rng(seed)
    for key in sorted(pol.state_lookup):
        row = pol.state_lookup[key]
        mask = pol.legal_actions_mask[row].astype(bool)
        weights = rng.dirichlet(np.ones(int(mask.sum())))
        probs = np.zeros(pol.action_probability_array.shape[1])
        probs[mask] = weights / weights.sum()
        pol.action_probability_array[row] = probs
    return pol


def nash_conv_case(name, cfg, args, log):
    """All NashConv measurements on one game. Returns (rows of dicts, notes)."""
    setup = {}
    t0 = time.perf_counter()
    game = pyspiel.load_game(name)
    tabs = {"uniform": policy_lib.TabularPolicy(game)}
    setup["TabularPolicy(game) s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    tabs["random_0"] = random_policy(game, 0)
    setup["random policy s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    dicts = {k: p.to_dict() for k, p in tabs.items()}
    setup["to_dict() s (both policies)"] = (time.perf_counter() - t0)
    log(f"[{name}] setup: " + ", ".join(f"{k} {v:.3f}" for k, v in setup.items()))

    # Tree builds (once per game).
    builds = [("mg_walk", lambda: metagame.openspiel.from_pyspiel(game, progress=False))]
    if cfg["builtin"]:
        builds.append(("mg_builtin_load", lambda: metagame.load_game(cfg["builtin"])))
    b = bench(builds, **cfg["build"])
    mg_game = b["mg_walk"]["value"]
    games = {"mg": mg_game}
    if cfg["builtin"]:
        games["mg_builtin"] = b["mg_builtin_load"]["value"]
    log(f"[{name}] metagame tree: {mg_game!r}; walk median "
        f"{fmt_t(stats(b['mg_walk']['times'])['median'])}")
    tree = {"num_nodes": mg_game.num_nodes, "num_infosets": mg_game.num_infosets}

    rows = []
    for pname, tab in tabs.items():
        pols = {g: metagame.Policy(mg, tab) for g, mg in games.items()}
        cands = [("mg_eval_tab", lambda: metagame.nash_conv(games["mg"], tab)),
                 ("mg_eval_pol", lambda: metagame.nash_conv(games["mg"], pols["mg"]))]
        if cfg["builtin"]:
            cands += [("mg_builtin_eval_tab", lambda: metagame.nash_conv(games["mg_builtin"], tab)),
                      ("mg_builtin_eval_pol",
                       lambda: metagame.nash_conv(games["mg_builtin"], pols["mg_builtin"]))]
        d = dicts[pname]
        cpp = [("os_cpp", lambda: pyspiel.nash_conv(game, d))]
        py = [("os_python", lambda: float(exploitability.nash_conv(game, tab)))]
        res = {}
        if cfg["peers_with_mg"]:
            res.update(bench(cands + cpp + py, **cfg["eval"]))
        else:
            res.update(bench(cands, **cfg["eval"]))
            res.update(bench(cpp, **cfg["cpp"]))
            log(f"[{name}/{pname}] OpenSpiel Python exploitability.nash_conv: one run, "
                f"cap {args.ttt_python_cap:g} s ...")
            sec, val = call_capped(py[0][1], args.ttt_python_cap)
            res["os_python"] = {"times": [sec] if val is not None else [], "value": val,
                                "warmup": False, "capped_at": None if val is not None else sec}
        res.update({k: v for k, v in b.items()})

        st = {k: stats(v["times"]) for k, v in res.items()}
        med = {k: s["median"] for k, s in st.items()}
        if "mg_walk" in med:
            med["mg_total"] = med["mg_walk"] + med["mg_eval_tab"]
        if "mg_builtin_load" in med:
            med["mg_builtin_total"] = med["mg_builtin_load"] + med["mg_builtin_eval_tab"]
        values = {k: float(v["value"]) for k, v in res.items()
                  if v["value"] is not None and k.startswith(("os_", "mg_eval", "mg_builtin_eval"))}
        spread = max(values.values()) - min(values.values()) if values else None
        labels = [
            ("mg_walk", "metagame from_pyspiel (walk)"),
            ("mg_eval_tab", "metagame nash_conv(TabularPolicy)"),
            ("mg_eval_pol", "metagame nash_conv(Policy)"),
            ("mg_total", "metagame walk + nash_conv(TabularPolicy)"),
            ("mg_builtin_load", "metagame load_game (built-in build)"),
            ("mg_builtin_eval_tab", "metagame built-in nash_conv(TabularPolicy)"),
            ("mg_builtin_eval_pol", "metagame built-in nash_conv(Policy)"),
            ("mg_builtin_total", "metagame built-in load_game + nash_conv(TabularPolicy)"),
            ("os_cpp", "OpenSpiel C++ pyspiel.nash_conv(dict)"),
            ("os_python", "OpenSpiel Python exploitability.nash_conv"),
        ]
        for key, label in labels:
            if key not in med:
                continue
            s = st.get(key)
            r = res.get(key, {})
            rows.append({
                "game": name, "policy": pname, "impl": key, "label": label,
                "nash_conv": values.get(key),
                "median_s": med[key],
                "min_s": s["min"] if s else None, "max_s": s["max"] if s else None,
                "runs": s["runs"] if s else None, "spread": s["spread"] if s else None,
                "warmup": r.get("warmup"), "capped_at_s": r.get("capped_at"),
                "times_s": r.get("times"),
                "cpp_over_this": (med["os_cpp"] / med[key]) if med.get("os_cpp") and med[key] else None,
                "python_over_this": (med["os_python"] / med[key])
                if med.get("os_python") and med[key] else None,
                "max_abs_diff_all": spread,
            })
        log(f"[{name}/{pname}] values: " + ", ".join(f"{k}={v!r}" for k, v in values.items())
            + f"; max |diff| {fmt_e(spread)}")
    return rows, {"setup_s": setup, "tree": tree}


# --------------------------------------------------------------------------
# 2. zero-sum LP
# --------------------------------------------------------------------------
def zero_sum_matrix(n_wanted=200):
    """solvers.py's zero-sum games: default_rng(0), N = 10, 50, 100, 200 in that order."""
    rng = np.random.default_rng(0)
    for n in [10, 50, 100, 200, 500]:
        a = rng.random((n, n))
        if n == n_wanted:
            return a
    raise ValueError(n_wanted)


def scipy_highs(a):
    m, n = a.shape
    # Variables (x_1..x_m, v); minimise -v s.t. v - (A^T x)_j <= 0, sum x = 1, x >= 0.
    c = np.zeros(m + 1)
    c[-1] = -1.0
    a_ub = np.hstack([-a.T, np.ones((n, 1))])
    a_eq = np.hstack([np.ones((1, m)), np.zeros((1, 1))])
    res = linprog(c, A_ub=a_ub, b_ub=np.zeros(n), A_eq=a_eq, b_eq=[1.0],
                  bounds=[(0, None)] * m + [(None, None)], method="highs")
    x = res.x[:m]
    y = -res.ineqlin.marginals
    y = y / y.sum()
    return x, y, -res.fun


def lp_case(args, log):
    a = zero_sum_matrix(args.lp_n)
    info = {"n": args.lp_n, "sha256_prefix": hashlib.sha256(a.tobytes()).hexdigest()[:16],
            "A00": float(a[0, 0])}
    nfg = metagame.NormalFormGame(a)
    np_game = nashpy.Game(a, -a)
    cands = [
        ("mg_solve_array", lambda: metagame.solve(a, "lp")),
        ("mg_solve_nfg", lambda: metagame.solve(nfg, "lp")),
        ("nashpy_linear_program", lambda: np_game.linear_program()),
        ("scipy_highs_1lp_duals", lambda: scipy_highs(a)),
    ]
    res = bench(cands, **args.lp_bench)
    st = {k: stats(v["times"]) for k, v in res.items()}
    labels = {
        "mg_solve_array": 'metagame.solve(A, "lp")',
        "mg_solve_nfg": 'metagame.solve(NormalFormGame(A), "lp")',
        "nashpy_linear_program": "nashpy Game(A).linear_program()",
        "scipy_highs_1lp_duals": 'scipy linprog(method="highs"), y from duals',
    }
    rows = []
    for key, r in res.items():
        v = r["value"]
        if key.startswith("mg_"):
            x, y = (np.asarray(s, dtype=float) for s in v.strategies)
            value, cert = v.value, v.nash_conv
        elif key == "nashpy_linear_program":
            x, y = (np.asarray(s, dtype=float) for s in v)
            value, cert = float(x @ a @ y), None
        else:
            x, y, value = v
            cert = None
        viol = max(float(max(-x.min(), 0.0)), float(max(-y.min(), 0.0)),
                   abs(float(x.sum()) - 1.0), abs(float(y.sum()) - 1.0))
        xc, yc = np.clip(x, 0, None), np.clip(y, 0, None)
        xc, yc = xc / xc.sum(), yc / yc.sum()
        nc_mg = nfg.nash_conv([xc, yc])
        nc_np = float((a @ y).max() - (x @ a).min())
        rows.append({"impl": key, "label": labels[key], "value": value,
                     "x_A_y": float(x @ a @ y), "nash_conv_metagame": nc_mg,
                     "nash_conv_numpy": nc_np, "certificate_nash_conv": cert,
                     "simplex_violation": viol, **st[key], "median_s": st[key]["median"],
                     "times_s": r["times"]})
    ref = next(r for r in rows if r["impl"] == "scipy_highs_1lp_duals")
    mg = next(r for r in rows if r["impl"] == "mg_solve_array")
    for r in rows:
        r["value_minus_highs"] = r["value"] - ref["value"]
        r["this_over_mg"] = r["median_s"] / mg["median_s"]
    log(f"[lp {args.lp_n}x{args.lp_n}] sha256 {info['sha256_prefix']}, A[0,0]={info['A00']!r}")
    return rows, info


# --------------------------------------------------------------------------
# 0. per-call overhead under the machine's current load
# --------------------------------------------------------------------------
def overhead_probe(calls=300):
    """p10/p50/p90 of a tiny call: metagame.nash_conv on kuhn_poker (the work is ~10 us;
    each metagame call runs on a thread of its own), pyspiel.nash_conv on kuhn_poker (runs
    on the calling thread), and a bare Python thread start + join. On a loaded machine a
    hand-off to a fresh thread waits for the scheduler, which shows up here."""
    import queue
    import threading
    game = pyspiel.load_game("kuhn_poker")
    d = policy_lib.TabularPolicy(game).to_dict()
    mg = metagame.load_game("kuhn_poker")
    pol = metagame.Policy.uniform(mg)

    def thread_hop():
        q = queue.SimpleQueue()
        t = threading.Thread(target=lambda: q.put(1))
        t.start()
        q.get()
        t.join()

    fns = [("metagame.nash_conv(kuhn_poker)", lambda: metagame.nash_conv(mg, pol)),
           ("pyspiel.nash_conv(kuhn_poker)", lambda: pyspiel.nash_conv(game, d)),
           ("Python thread start + join", thread_hop)]
    times = {k: [] for k, _ in fns}
    for _ in range(calls):
        for k, fn in fns:
            t0 = time.perf_counter()
            fn()
            times[k].append(time.perf_counter() - t0)
    out = []
    for k, ts in times.items():
        ts.sort()
        q = lambda f: ts[min(len(ts) - 1, int(f * len(ts)))]
        out.append({"call": k, "p10_s": q(0.1), "p50_s": q(0.5), "p90_s": q(0.9),
                    "max_s": ts[-1], "calls": len(ts)})
    return out


# --------------------------------------------------------------------------
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer repeats (about 1 minute)")
    ap.add_argument("--skip-ttt", action="store_true", help="leduc_poker only")
    ap.add_argument("--ttt-python-cap", type=float, default=120.0,
                    help="time cap in s of the single OpenSpiel Python run on tic_tac_toe")
    ap.add_argument("--lp-n", type=int, default=200, choices=[10, 50, 100, 200, 500])
    ap.add_argument("--tol", type=float, default=1e-9, help="NashConv agreement tolerance")
    ap.add_argument("--lp-tol", type=float, default=1e-8, help="LP value agreement tolerance")
    ap.add_argument("--out", default=os.path.join(RESULTS, "python_api"),
                    help="output path without extension (.json and .md are written)")
    args = ap.parse_args()
    q = args.quick
    args.lp_bench = dict(warmup=True, min_runs=3 if q else 7, max_runs=10 if q else 30,
                         budget_s=2.0 if q else 8.0)
    cases = {
        "leduc_poker": {
            "builtin": "leduc_poker", "peers_with_mg": True,
            "build": dict(warmup=True, min_runs=3 if q else 7, max_runs=30, budget_s=1.0 if q else 4.0),
            "eval": dict(warmup=True, min_runs=3 if q else 7, max_runs=40, budget_s=2.0 if q else 8.0),
        },
        "tic_tac_toe": {
            "builtin": None, "peers_with_mg": False,
            "build": dict(warmup=False, min_runs=1 if q else 3, max_runs=1 if q else 3, budget_s=0),
            "eval": dict(warmup=True, min_runs=3 if q else 5, max_runs=20, budget_s=1.0 if q else 3.0),
            "cpp": dict(warmup=False, min_runs=1 if q else 3, max_runs=1 if q else 3, budget_s=0),
        },
    }
    if args.skip_ttt:
        del cases["tic_tac_toe"]

    def log(msg):
        print(msg, file=sys.stderr, flush=True)

    t_start = time.perf_counter()
    meta = {"cpu": cpu_model(), "cpus": os.cpu_count(),
            "affinity": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
            "versions": versions(), "loadavg_start": loadavg(),
            "metagame_module": os.path.dirname(metagame.__file__),
            "argv": sys.argv[1:]}
    log(f"CPU: {meta['cpu']} ({meta['cpus']} logical CPUs, {meta['affinity']} usable); "
        f"load average {meta['loadavg_start']}")
    log("versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()))

    probe = overhead_probe()
    probe_end = None
    nc_rows, nc_info, load_during = [], {}, []
    for name, cfg in cases.items():
        rows, info = nash_conv_case(name, cfg, args, log)
        nc_rows += rows
        nc_info[name] = info
        load_during.append((name, loadavg()))
    lp_rows, lp_info = lp_case(args, log)
    load_during.append(("lp", loadavg()))
    probe_end = overhead_probe()
    meta["loadavg_end"] = loadavg()
    meta["loadavg_after_each_part"] = load_during
    meta["wall_s"] = time.perf_counter() - t_start

    # ---- tables ----
    nc_header = ["game", "policy", "implementation", "NashConv", "median", "min..max", "runs",
                 "C++/this", "Py/this"]
    nc_table = []
    for r in nc_rows:
        if r["impl"] in ("mg_total", "mg_builtin_total"):
            runs, mm = "sum", "-"
        elif r["capped_at_s"] is not None:
            runs, mm = f"capped at {r['capped_at_s']:.0f} s", "-"
        else:
            runs = f"{r['runs']}" + ("" if r["warmup"] else " (no warm-up)")
            mm = f"{fmt_t(r['min_s'])}..{fmt_t(r['max_s'])}"
        nc_table.append([r["game"], r["policy"], r["label"], fmt_v(r["nash_conv"], 16),
                         fmt_t(r["median_s"]), mm, runs,
                         fmt_x(r["cpp_over_this"]), fmt_x(r["python_over_this"])])
    agree = {}
    for r in nc_rows:
        agree[(r["game"], r["policy"])] = r["max_abs_diff_all"]
    agree_lines = [f"{g}/{p}: max |NashConv difference| over all implementations = {fmt_e(d)}"
                   for (g, p), d in agree.items()]

    lp_header = ["implementation", "value (row player)", "value - HiGHS", "NashConv",
                 "NashConv (numpy)", "simplex viol.", "median", "min..max", "runs", "this/metagame"]
    lp_table = [[r["label"], fmt_v(r["value"], 17), fmt_e(r["value_minus_highs"]),
                 fmt_e(r["nash_conv_metagame"]), fmt_e(r["nash_conv_numpy"]),
                 fmt_e(r["simplex_violation"]), fmt_t(r["median_s"]),
                 f"{fmt_t(r['min'])}..{fmt_t(r['max'])}", r["runs"],
                 fmt_ratio(r["median_s"], next(x for x in lp_rows if x["impl"] == "mg_solve_array")["median_s"])]
                for r in lp_rows]

    def noise_of(rows, what):
        sp = [r["spread"] for r in rows if r.get("spread") and (r.get("runs") or 0) >= 3]
        if not sp:
            return f"{what}: n/a"
        return (f"{what} ({len(sp)} measurements): median {statistics.median(sp):.2f}, "
                f"worst {max(sp):.2f}")

    measured = [r for r in nc_rows + lp_rows if r.get("median_s") is not None]
    noise = ("noise, max/min over the repeats of one measurement (those with >= 3 runs): "
             + noise_of([r for r in measured if r["median_s"] < 0.01], "calls under 10 ms")
             + "; " + noise_of([r for r in measured if r["median_s"] >= 0.01], "calls of 10 ms or more"))
    head = [f"CPU: {meta['cpu']} ({meta['cpus']} logical CPUs); load average at start "
            f"{meta['loadavg_start']}, at end {meta['loadavg_end']}",
            "versions: " + ", ".join(f"{k} {v}" for k, v in meta["versions"].items()),
            f"metagame package: {meta['metagame_module']}",
            f"whole run {meta['wall_s']:.0f} s"]
    trees = [f"{g}: metagame tree {i['tree']['num_nodes']} nodes, {i['tree']['num_infosets']} "
             f"information states; setup (untimed in the table): "
             + ", ".join(f"{k} {v:.3f}" for k, v in i["setup_s"].items())
             for g, i in nc_info.items()]
    lp_line = (f"{lp_info['n']}x{lp_info['n']} zero-sum game, A uniform [0,1) from default_rng(0) "
               f"(after N = 10, 50, 100), sha256 {lp_info['sha256_prefix']}, A[0,0] = {lp_info['A00']!r}")
    notes = ["C++/this, Py/this: the OpenSpiel C++ / Python median divided by this row's "
             "median (> 1: this row is faster). 'walk + nash_conv' rows add the two medians.",
             "OpenSpiel Python on tic_tac_toe: a single run under a time cap, no warm-up.",
             "this/metagame: the row's median over metagame.solve(A, \"lp\")'s (> 1: metagame faster)."]

    probe_header = ["tiny call (at start / at end)", "p10", "p50", "p90", "max", "calls"]
    probe_table = [[a["call"]] + [f"{fmt_t(a[k])} / {fmt_t(b[k])}" for k in
                                  ("p10_s", "p50_s", "p90_s", "max_s")] + [a["calls"]]
                   for a, b in zip(probe, probe_end)]
    probe_note = ("Per-call overhead, interleaved calls at the start and at the end of the run. "
                  "metagame runs each call on a new thread (Ctrl-C stays responsive); "
                  "pyspiel runs on the caller's.")
    text = "\n".join(head) + "\n\n0. " + probe_note + "\n" + text_table(probe_header, probe_table) \
        + "\n\n1. NashConv of a tabular policy\n" + "\n".join(trees) + "\n" \
        + text_table(nc_header, nc_table) + "\n" + "\n".join(agree_lines) \
        + "\n\n2. Zero-sum LP: " + lp_line + "\n" + text_table(lp_header, lp_table) + "\n\n" \
        + noise + "\n" + "\n".join(notes)
    print(text)

    md_text = ("# metagame Python API vs peers (benches/peers/python_api.py)\n\n"
               + "\n".join(f"- {h}" for h in head)
               + "\n\n## 0. Call overhead\n\n" + probe_note + "\n\n" + md_table(probe_header, probe_table)
               + "\n\n## 1. NashConv of a tabular policy\n\n" + "\n".join(f"- {t}" for t in trees)
               + "\n\n" + md_table(nc_header, nc_table) + "\n\n"
               + "\n".join(f"- {x}" for x in agree_lines)
               + "\n\n## 2. Zero-sum LP\n\n" + lp_line + "\n\n" + md_table(lp_header, lp_table)
               + "\n\n## Notes\n\n" + "\n".join(f"- {x}" for x in [noise] + notes) + "\n")

    os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
    with open(args.out + ".json", "w") as f:
        json.dump({"meta": meta, "overhead": {"start": probe, "end": probe_end}, "nash_conv": {"info": nc_info, "rows": nc_rows},
                   "lp": {"info": lp_info, "rows": lp_rows}}, f, indent=1, default=float)
    with open(args.out + ".md", "w") as f:
        f.write(md_text)
    print(f"\nraw results: {os.path.abspath(args.out)}.json, .md")

    bad = [k for k, d in agree.items() if d is None or d > args.tol]
    lp_bad = [r["impl"] for r in lp_rows if abs(r["value_minus_highs"]) > args.lp_tol]
    if bad or lp_bad:
        print(f"DISAGREEMENT: NashConv {bad}, LP value {lp_bad}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
