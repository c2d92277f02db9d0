#!/usr/bin/env python3
"""Peer benchmark: PSRO (exact payoffs, exact best responses) and XFP,
OpenSpiel 2.0.2 vs `metagame run`.

Usage (from anywhere; plain python3 is fine, the script bootstraps its venv):

    python3 benches/peers/psro.py                          # PSRO + XFP, defaults below
    python3 benches/peers/psro.py --games kuhn_poker --solvers nash,uniform,prd
    python3 benches/peers/psro.py --games leduc_poker --solvers nash,uniform \\
        --leduc-iterations 30 --budget-seconds 120
    python3 benches/peers/psro.py --no-psro --xfp-iterations 100   # XFP only
    python3 benches/peers/psro.py --diagnose                # item-4 diagnostic only
    python3 benches/peers/psro.py --no-openspiel            # metagame side only
    python3 benches/peers/psro.py --metagame-bin target/release/metagame --build

OpenSpiel side (PEERS.md section 4, "exact" mode):
  * game = pyspiel.load_game_as_turn_based(name, {"players": 2}), np.random.seed(1),
  * oracle = best_response_oracle.BestResponseOracle(game=game,
      policy=TabularPolicy(game)) (C++ TabularBestResponse backend),
  * PSROSolver(game, oracle, sims_per_entry=1000, initial_policies=None (uniform),
      rectifier="", training_strategy_selector="probabilistic",
      meta_strategy_method=SOLVER, number_policies_selected=1,
      sample_from_marginals=True, prd_iterations=50000, prd_gamma=1e-10),
    with `sample_episodes` overridden to return the exact expected returns
    (expected_game_score.policy_value) so the meta-game is exact,
  * after every solver.iteration(): PolicyAggregator mixes the meta-strategies
    and exploitability.nash_conv scores the mixture. Iteration 0 = the
    initial (uniform) population.
  * Timing: "total" = setup + solver.iteration() + evaluation (cumulative),
    "train" = solver.iteration() only. A run stops before an iteration that
    its last iteration's duration says would pass --budget-seconds.
metagame side: a temporary config (game, algorithm = "psro", meta_solver,
  evaluator = "exact", max_iterations = what OpenSpiel completed) is run with
  `metagame run CFG --out DIR --json`; the process wall time (median of
  --mg-repeats runs) and the last `elapsed_s` are both reported.
XFP: fictitious_play.XFPSolver on Leduc vs `algorithm = "xfp"`; NashConv of
  the average policy at 1, 2, 5, 10, 20, 50, 100 and per-iteration times
  (OpenSpiel iteration time excludes evaluation).
--diagnose: Leduc, nash, 4 iterations: per-iteration meta-game (player 0),
  meta-strategies and NashConv on both sides, the iteration-2 and -3 meta-game
  comparison, equilibrium multiplicity (LP ranges of each probability over the
  restricted game's equilibrium set), infoset-by-infoset comparison of the
  best responses, and two OpenSpiel variants that remove (a) the
  PolicyAggregator's epsilon = 1e-40 smoothing of the oracle's target and
  (b) the ECOS LP's ~1e-10 weights on unsupported policies.

Raw results go to benches/peers/results/psro.json (entries of earlier runs
that this run did not redo are kept). Exit status 0, or 2 on setup failure.
Needs cvxpy, ecos and matplotlib, which open_spiel 2.0.2 uses but does not
declare; the bootstrap installs them.
"""

import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RESULTS = os.path.join(HERE, "results")


# --------------------------------------------------------------------------
# venv bootstrap (stdlib only above this point)
from peer_venv import ensure_venv  # noqa: E402

if __name__ == "__main__":
    ensure_venv(__file__, ["open_spiel==2.0.2", "numpy", "scipy", "cvxpy", "ecos", "matplotlib", "networkx"], "numpy, scipy, pyspiel, cvxpy, ecos, matplotlib, networkx", {"open_spiel": "2.0.2"})

# --------------------------------------------------------------------------
import argparse  # noqa: E402
import collections  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import shlex  # noqa: E402
import statistics  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import pyspiel  # noqa: E402
from open_spiel.python import policy as policy_lib  # noqa: E402
from open_spiel.python.algorithms import exploitability  # noqa: E402
from open_spiel.python.algorithms import expected_game_score  # noqa: E402
from open_spiel.python.algorithms import fictitious_play  # noqa: E402
from open_spiel.python.algorithms import policy_aggregator  # noqa: E402
from open_spiel.python.algorithms.psro_v2 import best_response_oracle  # noqa: E402,E501
from open_spiel.python.algorithms.psro_v2 import psro_v2  # noqa: E402
from open_spiel.python.algorithms.psro_v2 import utils as psro_utils  # noqa: E402,E501

CHECKPOINTS = (0, 1, 2, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 150,
               200, 300, 500, 1000)
XFP_CHECKPOINTS = (1, 2, 5, 10, 20, 50, 100, 200, 500, 1000)


def log(msg):
    print(msg, file=sys.stderr, flush=True)


# --------------------------------------------------------------------------
# OpenSpiel PSRO
# --------------------------------------------------------------------------
class ExactPSROSolver(psro_v2.PSROSolver):
    """psro_v2 with exact meta-game payoffs (PEERS.md section 4 "exact")."""

    def sample_episodes(self, policies, num_episodes):
        del num_episodes
        return np.asarray(expected_game_score.policy_value(
            self._game.new_initial_state(), policies), dtype=float).reshape(-1)


class _CleanMetaStrategies(ExactPSROSolver):
    """Diagnostic variant: zero meta-strategy weights below 1e-7 (ECOS
    returns ~1e-10 instead of 0 on unsupported policies) and renormalise."""

    def update_meta_strategies(self):
        super().update_meta_strategies()
        out = []
        for m in self._meta_strategy_probabilities:
            m = np.asarray(m, dtype=float)
            m = np.where(m < 1e-7, 0.0, m)
            out.append(m / m.sum())
        self._meta_strategy_probabilities = out


class _NoEpsilonAggregator(policy_aggregator.PolicyAggregator):
    """PolicyAggregator without its epsilon=1e-40 smoothing: exact
    realisation weighting; infosets no policy reaches get uniform play."""

    def _sub_aggregate(self, pid, policies, weights):
        self._policy_pool = policy_aggregator.PolicyPool(policies)
        self._weights = weights
        self._policy = {}
        self._rec_aggregate(pid, self._game.new_initial_state(), weights[:])
        for d in self._policy.values():
            tot = sum(d.values())
            for a in d:
                d[a] = d[a] / tot if tot > 0 else 1.0 / len(d)
        return self._policy


def _no_eps_aggregate(game, total_policies, probabilities):
    return _NoEpsilonAggregator(game).aggregate(
        range(len(probabilities)), total_policies, probabilities)


@contextlib.contextmanager
def _oracle_target_aggregation(no_eps):
    """Temporarily replaces the aggregation the BR oracle uses for its target."""
    saved = best_response_oracle.utils.aggregate_policies
    if no_eps:
        best_response_oracle.utils.aggregate_policies = _no_eps_aggregate
    try:
        yield
    finally:
        best_response_oracle.utils.aggregate_policies = saved


def load_game(spec):
    """`kuhn_poker` or `kuhn_poker(players=3)` (metagame's game strings)."""
    name, players = spec, 2
    if "(" in spec:
        name, params = spec.rstrip(")").split("(", 1)
        for kv in params.split(","):
            key, value = kv.split("=")
            if key.strip() != "players":
                raise ValueError(f"unsupported game parameter {key} in {spec}")
            players = int(value)
    return pyspiel.load_game_as_turn_based(name, {"players": players})


def make_psro(game, solver_name, clean=False):
    """(oracle, solver) exactly as in PEERS.md section 4 (exact payoffs)."""
    oracle = best_response_oracle.BestResponseOracle(
        game=game, policy=policy_lib.TabularPolicy(game))
    cls = _CleanMetaStrategies if clean else ExactPSROSolver
    with contextlib.redirect_stdout(io.StringIO()):  # psro_v2 prints settings
        solver = cls(
            game, oracle, sims_per_entry=1000, initial_policies=None,
            rectifier="", training_strategy_selector="probabilistic",
            meta_strategy_method=solver_name, number_policies_selected=1,
            sample_from_marginals=True, prd_iterations=50000,
            prd_gamma=1e-10)
    return oracle, solver


def psro_nash_conv(game, solver):
    aggr = policy_aggregator.PolicyAggregator(game).aggregate(
        range(game.num_players()), solver.get_policies(),
        solver.get_meta_strategies())
    return float(exploitability.nash_conv(game, aggr))


def run_os_psro(game_name, solver_name, iterations, budget_s, keep_meta_game,
                clean=False, no_eps=False, quiet=False):
    """Runs OpenSpiel PSRO; returns a dict with one record per iteration."""
    np.random.seed(1)
    rec = {"game": game_name, "meta_solver": solver_name,
           "requested_iterations": iterations, "budget_s": budget_s,
           "iterations": [], "stop": "max_iterations"}
    t_start = time.perf_counter()
    try:
        with _oracle_target_aggregation(no_eps):
            game = load_game(game_name)
            _, solver = make_psro(game, solver_name, clean=clean)
            setup_s = time.perf_counter() - t_start
            t0 = time.perf_counter()
            nc = psro_nash_conv(game, solver)
            eval_s = time.perf_counter() - t0
            train_cum = 0.0
            last_step = None

            def record(it, nc, iter_s, eval_s):
                ms = solver.get_meta_strategies()
                r = {"iteration": it,
                     "population_sizes": [len(p) for p in solver.get_policies()],
                     "nash_conv": nc,
                     "meta_strategies": [np.asarray(m).tolist() for m in ms],
                     "iter_s": iter_s, "eval_s": eval_s,
                     "train_cum_s": train_cum,
                     "total_cum_s": time.perf_counter() - t_start}
                if keep_meta_game:
                    r["meta_game"] = [np.asarray(m).tolist()
                                      for m in solver.get_meta_game()]
                rec["iterations"].append(r)
                if not quiet:
                    log(f"  [openspiel {game_name}/{solver_name}] it {it:3d} "
                        f"NashConv {nc:.6g}  total {r['total_cum_s']:.2f}s")

            rec["setup_s"] = setup_s
            record(0, nc, 0.0, eval_s)
            for it in range(1, iterations + 1):
                elapsed = time.perf_counter() - t_start
                if last_step is not None and elapsed + last_step > budget_s:
                    rec["stop"] = (f"budget: stopped before iteration {it} "
                                   f"(elapsed {elapsed:.1f}s of {budget_s:g}s)")
                    break
                t0 = time.perf_counter()
                solver.iteration()
                iter_s = time.perf_counter() - t0
                train_cum += iter_s
                t1 = time.perf_counter()
                nc = psro_nash_conv(game, solver)
                eval_s = time.perf_counter() - t1
                last_step = iter_s + eval_s
                record(it, nc, iter_s, eval_s)
            if not keep_meta_game:
                rec["final_meta_game"] = [np.asarray(m).tolist()
                                          for m in solver.get_meta_game()]
    except Exception as e:  # pylint: disable=broad-except
        rec["error"] = f"{type(e).__name__}: {e}"
        log(f"  [openspiel {game_name}/{solver_name}] ERROR {rec['error']}")
    rec["wall_s"] = time.perf_counter() - t_start
    return rec


# --------------------------------------------------------------------------
# OpenSpiel XFP
# --------------------------------------------------------------------------
def run_os_xfp(game_name, iterations, budget_s):
    rec = {"game": game_name, "requested_iterations": iterations,
           "checkpoints": [], "stop": "max_iterations"}
    t_start = time.perf_counter()
    try:
        game = load_game(game_name)
        solver = fictitious_play.XFPSolver(game)
        rec["setup_s"] = time.perf_counter() - t_start
        iter_cum = 0.0
        eval_cum = 0.0
        for it in range(1, iterations + 1):
            if it > 1 and time.perf_counter() - t_start + iter_cum / (it - 1) \
                    > budget_s:
                rec["stop"] = f"budget: stopped before iteration {it}"
                break
            t0 = time.perf_counter()
            solver.iteration()
            iter_cum += time.perf_counter() - t0
            if it in XFP_CHECKPOINTS or it == iterations:
                t1 = time.perf_counter()
                nc = float(exploitability.nash_conv(game,
                                                    solver.average_policy()))
                eval_cum += time.perf_counter() - t1
                rec["checkpoints"].append(
                    {"iteration": it, "nash_conv": nc, "iter_cum_s": iter_cum,
                     "ms_per_iter": 1000 * iter_cum / it,
                     "eval_cum_s": eval_cum})
                log(f"  [openspiel xfp {game_name}] it {it} NashConv {nc:.6g} "
                    f"{1000 * iter_cum / it:.1f} ms/iter")
    except Exception as e:  # pylint: disable=broad-except
        rec["error"] = f"{type(e).__name__}: {e}"
        log(f"  [openspiel xfp] ERROR {rec['error']}")
    rec["wall_s"] = time.perf_counter() - t_start
    return rec


# --------------------------------------------------------------------------
# metagame
# --------------------------------------------------------------------------
def toml_line(k, v):
    if isinstance(v, bool):
        return f"{k} = {'true' if v else 'false'}"
    if isinstance(v, str):
        return f"{k} = {json.dumps(v)}"
    return f"{k} = {v}"


class Metagame:
    def __init__(self, binary, repeats):
        self.binary = binary
        self.repeats = max(1, repeats)

    def available(self):
        return self.binary is not None and os.access(self.binary, os.X_OK)

    def run(self, config, keep_files=False):
        """Runs `metagame run` (self.repeats times); returns a dict with the
        JSON lines of the last run, process wall times, report.json."""
        rec = {"config": config, "wall_s": [], "lines": []}
        tmp = tempfile.mkdtemp(prefix="mg_psro_")
        cfg = os.path.join(tmp, "config.toml")
        with open(cfg, "w") as f:
            f.write("\n".join(toml_line(k, v) for k, v in config.items())
                    + "\n")
        cmd = None
        for rep in range(self.repeats):
            out_dir = os.path.join(tmp, f"run{rep}")
            cmd = [self.binary, "run", cfg, "--out", out_dir, "--json"]
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                rec["error"] = (f"exit {proc.returncode}: "
                                + (proc.stderr.strip() or proc.stdout.strip())
                                [-800:])
                break
            rec["wall_s"].append(wall)
            lines = []
            for line in proc.stdout.splitlines():
                line = line.strip()
                if line.startswith("{"):
                    try:
                        obj = json.loads(line)
                    except json.JSONDecodeError:
                        continue
                    # The final summary object is not an iteration.
                    if not obj.get("summary"):
                        lines.append(obj)
            rec["lines"] = lines
            rep_path = os.path.join(out_dir, "report.json")
            if os.path.exists(rep_path):
                with open(rep_path) as f:
                    rec["report"] = json.load(f)
            rec["run_dir"] = out_dir
        rec["command"] = " ".join(shlex.quote(c) for c in (cmd or []))
        if rec["wall_s"]:
            rec["wall_median_s"] = statistics.median(rec["wall_s"])
        if rec["lines"]:
            rec["last_elapsed_s"] = rec["lines"][-1].get("elapsed_s")
            rec["last_iteration"] = rec["lines"][-1].get("iteration")
        if not keep_files:
            rec.pop("run_dir", None)
            subprocess.run(["rm", "-rf", tmp], check=False)
        else:
            rec["tmp_dir"] = tmp
        return rec


def mg_curve(mg):
    return {d["iteration"]: d for d in mg.get("lines", [])}


# --------------------------------------------------------------------------
# formatting
# --------------------------------------------------------------------------
def fv(v):
    if v is None:
        return "—"
    if v != 0 and (abs(v) < 1e-3 or abs(v) >= 1e4):
        return f"{v:.3e}"
    return f"{v:.6g}"


def ft(s):
    if s is None:
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.0f}us"
    if s < 1:
        return f"{s * 1e3:.3g}ms"
    return f"{s:.3g}s"


def fr(a, b):
    if a is None or b is None or b <= 0:
        return "—"
    return f"{a / b:.3g}x"


def print_psro_table(os_rec, mg_rec):
    game, solver = os_rec["game"], os_rec["meta_solver"]
    warm = (mg_rec or {}).get("config", {}).get("warm_start")
    print(f"\n### {game} / {solver}  (exact payoffs, exact BR; metagame "
          f"warm_start = {str(warm).lower()})")
    if os_rec.get("error"):
        print(f"OpenSpiel error: {os_rec['error']}")
    if os_rec.get("stop", "").startswith("budget"):
        print(f"OpenSpiel: {os_rec['stop']}")
    if mg_rec is not None and mg_rec.get("error"):
        print(f"metagame error: {mg_rec['error']}")
    os_it = {r["iteration"]: r for r in os_rec.get("iterations", [])}
    mgc = mg_curve(mg_rec) if mg_rec else {}
    last = max(list(os_it) + list(mgc) + [0])
    its = [i for i in CHECKPOINTS if i <= last]
    if last not in its:
        its.append(last)
    print("| iter | OpenSpiel NashConv | metagame NashConv | diff "
          "| OS total (train) | mg elapsed_s |")
    print("|---|---|---|---|---|---|")
    for i in its:
        o, m = os_it.get(i), mgc.get(i)
        onc = o["nash_conv"] if o else None
        mnc = m["nash_conv"] if m else None
        diff = fv(mnc - onc) if (onc is not None and mnc is not None) else "—"
        tot = (f"{ft(o['total_cum_s'])} ({ft(o['train_cum_s'])})"
               if o else "—")
        print(f"| {i} | {fv(onc)} | {fv(mnc)} | {diff} | {tot} "
              f"| {ft(m.get('elapsed_s')) if m else '—'} |")
    n = max(os_it) if os_it else None
    if n is not None and mg_rec and mg_rec.get("wall_s") and n in mgc:
        o = os_it[n]
        wall = mg_rec["wall_median_s"]
        el = mgc[n].get("elapsed_s")
        mg_last = mg_rec.get("last_iteration")
        note = "" if mg_last == n else f" (metagame stopped at it {mg_last})"
        print(f"time at {n} iterations{note}: OpenSpiel total "
              f"{ft(o['total_cum_s'])}, train {ft(o['train_cum_s'])}; "
              f"metagame process {ft(wall)} (median of "
              f"{len(mg_rec['wall_s'])}), elapsed_s {ft(el)} -> ratio "
              f"total/process {fr(o['total_cum_s'], wall)}, total/elapsed "
              f"{fr(o['total_cum_s'], el)}, train/elapsed "
              f"{fr(o['train_cum_s'], el)}")


def print_xfp_table(os_rec, mg_rec):
    print(f"\n### XFP {os_rec['game'] if os_rec else mg_rec['config']['game']}")
    if os_rec and os_rec.get("error"):
        print(f"OpenSpiel error: {os_rec['error']}")
    if mg_rec and mg_rec.get("error"):
        print(f"metagame error: {mg_rec['error']}")
    osc = {c["iteration"]: c for c in (os_rec or {}).get("checkpoints", [])}
    mgc = mg_curve(mg_rec) if mg_rec else {}
    its = sorted(set(osc) | {i for i in mgc if i in XFP_CHECKPOINTS})
    print("| iter | OpenSpiel NashConv | metagame NashConv | OS ms/iter "
          "| mg ms/iter (elapsed_s) | ratio |")
    print("|---|---|---|---|---|---|")
    for i in its:
        o, m = osc.get(i), mgc.get(i)
        o_ms = o["ms_per_iter"] if o else None
        m_ms = 1000 * m["elapsed_s"] / i if (m and m.get("elapsed_s")) else None
        print(f"| {i} | {fv(o['nash_conv']) if o else '—'} "
              f"| {fv(m['nash_conv']) if m else '—'} "
              f"| {fv(o_ms)} | {fv(m_ms)} | {fr(o_ms, m_ms)} |")
    if mg_rec and mg_rec.get("wall_s") and osc:
        n = max(osc)
        print(f"per-iteration time at {n}: OpenSpiel "
              f"{fv(osc[n]['ms_per_iter'])} ms (iteration only); metagame "
              f"process {ft(mg_rec['wall_median_s'])} for "
              f"{mg_rec.get('last_iteration')} iterations -> ratio OS iter "
              f"time / mg process {fr(osc[n]['iter_cum_s'], mg_rec['wall_median_s'])}")


# --------------------------------------------------------------------------
# diagnostic (item 4)
# --------------------------------------------------------------------------
def _maximin_ranges(a):
    """Value of the zero-sum game A (row maximises) and, for each row
    strategy, the [min, max] probability over the row player's maximin set."""
    from scipy.optimize import linprog  # pylint: disable=import-outside-toplevel
    n, m = a.shape
    c = np.zeros(n + 1)
    c[-1] = -1
    a_ub = np.hstack([-a.T, np.ones((m, 1))])
    b_ub = np.zeros(m)
    a_eq = np.hstack([np.ones((1, n)), [[0.0]]])
    bounds = [(0, None)] * n + [(None, None)]
    r = linprog(c, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1], bounds=bounds,
                method="highs")
    v = -r.fun
    ranges = []
    for i in range(n):
        lh = []
        for sgn in (1.0, -1.0):
            c2 = np.zeros(n + 1)
            c2[i] = sgn
            rr = linprog(c2, A_ub=a_ub, b_ub=b_ub, A_eq=a_eq, b_eq=[1],
                         bounds=[(0, None)] * n + [(v - 1e-9, None)],
                         method="highs")
            lh.append(float(sgn * rr.fun))
        ranges.append(lh)
    return float(v), ranges


def _nash_gap(a, x, y):
    x, y = np.asarray(x, float), np.asarray(y, float)
    u = x @ a @ y
    return float(max((a @ y).max() - u, u - (x @ a).min()))


def _mg_matrix(report, player=0):
    shape = report["meta_game_shape"]
    return np.array(report["meta_game"][player], dtype=float).reshape(shape)


def _mg_infoset_keys(game):
    """metagame's infoset numbering: breadth-first discovery order (chance
    outcomes and legal actions in order), then stable-sorted by player."""
    keys, seen, owner = [], set(), {}
    queue = collections.deque([game.new_initial_state()])
    while queue:
        st = queue.popleft()
        if st.is_terminal():
            continue
        if st.is_chance_node():
            for a, _ in st.chance_outcomes():
                queue.append(st.child(a))
            continue
        p = st.current_player()
        k = st.information_state_string(p)
        if k not in seen:
            seen.add(k)
            keys.append(k)
            owner[k] = p
        for a in st.legal_actions():
            queue.append(st.child(a))
    return sorted(keys, key=lambda k: owner[k]), owner


def _compare_brs(game, os_solver, mg_rec, iteration):
    """Infoset-by-infoset comparison of the iteration-`iteration` best
    responses (OpenSpiel vs metagame checkpoint), with the reach of each
    differing infoset under the exact target (no aggregator epsilon) and
    each BR's value against that target."""
    ckpt_path = os.path.join(mg_rec["run_dir"], "checkpoint.json")
    with open(ckpt_path) as f:
        ckpt = json.load(f)
    members = ckpt["payload"]["state"]["population"]["members"]
    keys, owner = _mg_infoset_keys(game)
    states = collections.defaultdict(list)

    def walk(st):
        if st.is_terminal():
            return
        if st.is_chance_node():
            for a, _ in st.chance_outcomes():
                walk(st.child(a))
            return
        p = st.current_player()
        states[st.information_state_string(p)].append(st)
        for a in st.legal_actions():
            walk(st.child(a))
    walk(game.new_initial_state())

    def mg_table(member):
        pol = member["policy"]
        pr = np.array(pol["probs"]).reshape(len(keys), pol["num_actions"])
        return {k: pr[i] for i, k in enumerate(keys)}

    class Table:
        def __init__(self, t):
            self.t = t

        def action_probabilities(self, st):
            row = self.t[st.information_state_string(st.current_player())]
            return {a: float(row[a]) for a in st.legal_actions()}

    pols = os_solver.get_policies()
    hist = os_solver._diag_meta_history  # pylint: disable=protected-access
    # The exact target: the opponent mixture of iteration - 1 with ECOS's
    # ~1e-10 weights on unsupported policies zeroed, no aggregator epsilon.
    target_ms = []
    for m in hist[iteration - 1]:
        m = np.where(np.asarray(m, float) < 1e-7, 0.0, np.asarray(m, float))
        target_ms.append(m / m.sum())
    exact_target = _no_eps_aggregate(
        game, [p[:iteration] for p in pols], target_ms)

    class Target:
        def action_probabilities(self, st):
            return exact_target.action_probabilities(st)

    def value(st, p, br, tgt):
        if st.is_terminal():
            return st.returns()[p]
        if st.is_chance_node():
            return sum(pr * value(st.child(a), p, br, tgt)
                       for a, pr in st.chance_outcomes())
        pol = br if st.current_player() == p else tgt
        return sum(pr * value(st.child(a), p, br, tgt)
                   for a, pr in pol.action_probabilities(st).items() if pr > 0)

    def reach(st, p, tgt):
        s, r = game.new_initial_state(), 1.0
        for a in st.history():
            if s.is_chance_node():
                r *= dict(s.chance_outcomes())[a]
            elif s.current_player() != p:
                r *= tgt.action_probabilities(s).get(a, 0.0)
            s = s.child(a)
        return r

    out = []
    for p in range(2):
        member = [m for m in members[p]
                  if m.get("provenance", {}).get("iteration") == iteration][0]
        mg_br = Table(mg_table(member))
        os_br = pols[p][iteration]
        tgt = Target()
        n_zero = n_tie = n_other = 0
        examples = []
        for k in keys:
            if owner[k] != p:
                continue
            sts = states[k]
            d = os_br.action_probabilities(sts[0])
            a_os = max(d, key=d.get)
            a_mg = int(np.argmax(mg_br.t[k]))
            if a_os == a_mg:
                continue
            rch = [reach(h, p, tgt) for h in sts]
            if sum(rch) == 0:
                n_zero += 1
                continue
            q = {a: sum(r * value(h.child(a), p, mg_br, tgt)
                        for r, h in zip(rch, sts) if r > 0)
                 for a in sts[0].legal_actions()}
            if abs(q[a_os] - q[a_mg]) <= 1e-9 * (1 + abs(q[a_mg])):
                n_tie += 1
            else:
                n_other += 1
            if len(examples) < 3:
                examples.append({"infoset": k, "reach": sum(rch),
                                 "openspiel_action": a_os,
                                 "metagame_action": a_mg,
                                 "q_values": {str(a): float(v) for a, v in q.items()}})
        root = game.new_initial_state()
        out.append({
            "player": p,
            "br_value_vs_exact_target": {
                "openspiel": value(root, p, os_br, tgt),
                "metagame": value(root, p, mg_br, tgt)},
            "differing_infosets": {"zero_reach": n_zero,
                                   "positive_reach_tie": n_tie,
                                   "positive_reach_not_tie": n_other},
            "examples": examples})
    return out


def _lst(m):
    return [round(float(x), 6) for x in m]


def _compare_meta_games(os_its, mg_runs, mg_full, iterations):
    """Per iteration: OpenSpiel vs metagame meta-game (player 0), mixtures,
    and, where the meta-games are equal, the equilibrium set's extent."""
    cmp = []
    mgc = mg_curve(mg_full)
    for it in range(1, iterations + 1):
        a_os = np.array(os_its[it]["meta_game_p0"])
        rep = mg_runs[it]["report"] if it in mg_runs else mg_full["report"]
        a_mg = _mg_matrix(rep)[:a_os.shape[0], :a_os.shape[1]]
        ms_mg = mgc[it]["meta_strategies"]
        ms_os = os_its[it]["meta_strategies"]
        diff = float(np.abs(a_os - a_mg).max())
        entry = {"iteration": it, "meta_game_max_abs_diff": diff,
                 "os_nash_conv": os_its[it]["nash_conv"],
                 "mg_nash_conv": mgc[it]["nash_conv"],
                 "os_mixture": ms_os, "mg_mixture": ms_mg,
                 "os_mix_gap_in_os_game": _nash_gap(a_os, *ms_os),
                 "mg_mix_gap_in_mg_game": _nash_gap(a_mg, *ms_mg)}
        if diff < 1e-9:
            v, rows = _maximin_ranges(a_mg)
            _, cols = _maximin_ranges(-a_mg.T)
            entry.update({"value": v, "row_eq_prob_ranges": rows,
                          "col_eq_prob_ranges": cols,
                          "os_mix_gap_in_mg_game": _nash_gap(a_mg, *ms_os),
                          "multiple_equilibria": bool(
                              max(h - lo for lo, h in rows + cols) > 1e-6)})
        else:
            entry["differing_entries"] = [
                [int(i), int(j), float(a_os[i, j]), float(a_mg[i, j])]
                for i, j in zip(*np.nonzero(np.abs(a_os - a_mg) > 1e-9))]
        cmp.append(entry)
        print(f"\niteration {it}: max |A_os - A_mg| = {diff:.3g}; NashConv "
              f"OS {entry['os_nash_conv']:.10g} vs mg "
              f"{entry['mg_nash_conv']:.10g}")
        print(f"  OS mix: {[_lst(m) for m in ms_os]}  "
              f"mg mix: {[_lst(m) for m in ms_mg]}")
        if "multiple_equilibria" in entry:
            print(f"  same meta-game; equilibrium-set probability ranges row "
                  f"{np.round(entry['row_eq_prob_ranges'], 6).tolist()} col "
                  f"{np.round(entry['col_eq_prob_ranges'], 6).tolist()} -> "
                  f"multiple equilibria: {entry['multiple_equilibria']}; "
                  f"Nash gap of OS mix {entry['os_mix_gap_in_mg_game']:.2g}, "
                  f"of mg mix {entry['mg_mix_gap_in_mg_game']:.2g}")
        else:
            print("  meta-games differ at (row, col, OS, mg): "
                  + ", ".join(f"({i},{j},{x:.6g},{y:.6g})"
                              for i, j, x, y in entry["differing_entries"]))
    return cmp


def diagnose(mg, iterations=4):
    game_name, solver_name = "leduc_poker", "nash"
    print(f"\n## Diagnostic: {game_name} / {solver_name}, exact payoffs, "
          f"{iterations} iterations")
    np.set_printoptions(precision=6, suppress=True, linewidth=140)
    result = {"game": game_name, "meta_solver": solver_name}

    # OpenSpiel default run, recording meta-game + meta-strategies.
    np.random.seed(1)
    game = load_game(game_name)
    _, solver = make_psro(game, solver_name)
    solver._diag_meta_history = [solver.get_meta_strategies()]  # pylint: disable=protected-access
    os_its = [{"iteration": 0, "nash_conv": psro_nash_conv(game, solver),
               "meta_game_p0": solver.get_meta_game()[0].tolist(),
               "meta_strategies": [m.tolist()
                                   for m in solver.get_meta_strategies()]}]
    for it in range(1, iterations + 1):
        solver.iteration()
        solver._diag_meta_history.append(solver.get_meta_strategies())  # pylint: disable=protected-access
        os_its.append({"iteration": it,
                       "nash_conv": psro_nash_conv(game, solver),
                       "meta_game_p0": solver.get_meta_game()[0].tolist(),
                       "meta_strategies": [m.tolist() for m in
                                           solver.get_meta_strategies()]})
    result["openspiel"] = os_its
    for r in os_its:
        print(f"\nOpenSpiel iteration {r['iteration']}: NashConv "
              f"{r['nash_conv']!r}")
        print("meta-game (player 0):")
        print(np.array(r["meta_game_p0"]))
        print("meta-strategies:", [[float(x) for x in m]
                                   for m in r["meta_strategies"]])

    if not mg.available():
        print("\nmetagame binary not available: diagnostic stops here")
        return result
    mg_runs = {}
    for n in sorted({2, 3, iterations}):
        mg_runs[n] = mg.run({"game": game_name, "algorithm": "psro",
                             "meta_solver": solver_name, "evaluator": "exact",
                             "max_iterations": n}, keep_files=True)
    mg_full = mg_runs[iterations]
    if mg_full.get("error"):
        print(f"metagame error: {mg_full['error']}")
        return result
    result["metagame"] = [{k: d.get(k) for k in
                           ("iteration", "nash_conv", "meta_strategies")}
                          for d in mg_full["lines"]]
    print("\nmetagame NashConv per iteration:",
          [(d["iteration"], d["nash_conv"]) for d in mg_full["lines"]])
    cmp = _compare_meta_games(os_its, mg_runs, mg_full, iterations)
    result["comparison"] = cmp

    # Where the meta-games first differ: compare the best responses.
    first = next((c["iteration"] for c in cmp
                  if c["meta_game_max_abs_diff"] >= 1e-9), None)
    if first is not None:
        try:
            brs = _compare_brs(game, solver, mg_full, first)
            result["best_response_comparison"] = {"iteration": first,
                                                  "players": brs}
            print(f"\nbest responses at iteration {first} (target = the "
                  "opponent mixture with weights < 1e-7 zeroed, aggregated "
                  "without PolicyAggregator's epsilon):")
            for b in brs:
                print(f"  player {b['player']}: BR value OS "
                      f"{b['br_value_vs_exact_target']['openspiel']:.12g} "
                      f"mg {b['br_value_vs_exact_target']['metagame']:.12g}; "
                      f"differing infosets {b['differing_infosets']}")
                for ex in b["examples"][:2]:
                    print(f"    e.g. {ex['infoset']} reach {ex['reach']:.3g} "
                          f"OS {ex['openspiel_action']} mg "
                          f"{ex['metagame_action']} q {ex['q_values']}")
        except Exception as e:  # pylint: disable=broad-except
            result["best_response_comparison"] = {"error": repr(e)}
            print(f"  (BR comparison failed: {e!r})")

    # Variants isolating the two perturbations in OpenSpiel's oracle target.
    print("\nOpenSpiel variants (NashConv per iteration):")
    variants = {}
    for name, clean, no_eps in (("default", False, False),
                                ("clean_meta_strategies", True, False),
                                ("no_aggregator_epsilon", False, True),
                                ("clean+no_epsilon", True, True)):
        r = run_os_psro(game_name, solver_name, iterations, 1e9, True,
                        clean=clean, no_eps=no_eps, quiet=True)
        variants[name] = [x["nash_conv"] for x in r["iterations"]]
        if name == "clean+no_epsilon":
            variant_its = [{"iteration": x["iteration"],
                            "nash_conv": x["nash_conv"],
                            "meta_game_p0": x["meta_game"][0],
                            "meta_strategies": x["meta_strategies"]}
                           for x in r["iterations"]]
        print(f"  {name:24s} " + "  ".join(f"{v:.10g}"
                                          for v in variants[name]))
    variants["metagame"] = [d["nash_conv"] for d in mg_full["lines"]]
    print(f"  {'metagame':24s} " + "  ".join(f"{v:.10g}"
                                            for v in variants["metagame"]))
    result["variants"] = variants
    print("\nclean+no_epsilon OpenSpiel variant vs metagame:")
    result["variant_comparison"] = _compare_meta_games(
        variant_its, mg_runs, mg_full, iterations)
    for r in mg_runs.values():
        if r.get("tmp_dir"):
            subprocess.run(["rm", "-rf", r["tmp_dir"]], check=False)
    return result


# --------------------------------------------------------------------------
def build_metagame(cmd):
    log(f"[build] {cmd}")
    proc = subprocess.run(cmd, shell=True, cwd=REPO_ROOT)
    if proc.returncode != 0:
        log("[build] failed; using the existing binary if there is one")


def save_results(path, new):
    data = {}
    if os.path.exists(path):
        try:
            with open(path) as f:
                data = json.load(f)
        except (OSError, json.JSONDecodeError):
            data = {}
    for section in ("psro", "xfp"):
        merged = data.get(section, {})
        merged.update(new.get(section, {}))
        if merged:
            data[section] = merged
    for k, v in new.items():
        if k not in ("psro", "xfp"):
            data[k] = v
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        json.dump(data, f, indent=1)
    log(f"[results] {path}")


def _stamp():
    """When an entry was measured and how busy the machine was."""
    try:
        load = os.getloadavg()
    except OSError:
        load = None
    return {"time": time.strftime("%Y-%m-%d %H:%M:%S"), "load_avg": load}


def strip_lines(mg_rec):
    """Keeps the metagame record small in the JSON file."""
    if mg_rec is None:
        return None
    out = {k: v for k, v in mg_rec.items() if k not in ("lines", "report")}
    out["iterations"] = [
        {k: d.get(k) for k in ("iteration", "nash_conv", "elapsed_s",
                               "population_sizes", "meta_strategies")}
        for d in mg_rec.get("lines", [])]
    if mg_rec.get("report"):
        out["stop_reason"] = mg_rec["report"].get("stop_reason")
    return out


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", default="kuhn_poker,leduc_poker")
    ap.add_argument("--solvers", default="nash,uniform,prd")
    ap.add_argument("--kuhn-iterations", type=int, default=20)
    ap.add_argument("--leduc-iterations", type=int, default=50)
    ap.add_argument("--budget-seconds", type=float, default=300.0,
                    help="per OpenSpiel run (setup + training + evaluation)")
    ap.add_argument("--xfp-iterations", type=int, default=10,
                    help="Leduc XFP iterations (0 = skip XFP); 100 is ~40 s "
                         "of OpenSpiel")
    ap.add_argument("--xfp-budget-seconds", type=float, default=300.0)
    ap.add_argument("--no-psro", action="store_true")
    ap.add_argument("--oracle", default="exact-br",
                    choices=["exact-br", "exact-br-trembling"],
                    help="metagame's oracle (exact-br-trembling is what "
                         "examples/leduc_psro.toml uses)")
    ap.add_argument("--tremble", type=float, default=1e-2)
    ap.add_argument("--diagnose", action="store_true",
                    help="only the item-4 diagnostic (Leduc nash, 4 it.)")
    ap.add_argument("--diagnose-iterations", type=int, default=4)
    ap.add_argument("--no-openspiel", action="store_true")
    ap.add_argument("--no-metagame", action="store_true")
    ap.add_argument("--metagame-bin",
                    default=os.path.join(REPO_ROOT, "target", "release",
                                         "metagame"))
    ap.add_argument("--build", action="store_true",
                    help="run --cargo-cmd before measuring")
    ap.add_argument("--cargo-cmd", default="cargo build --release")
    ap.add_argument("--mg-repeats", type=int, default=3,
                    help="metagame runs per setting (median wall time)")
    ap.add_argument("--keep-meta-game", action="store_true",
                    help="store the OpenSpiel meta-game at every iteration")
    ap.add_argument("--warm-start", choices=["on", "off", "both"], default="off",
                    help="metagame's warm_start: off (cold meta-solves, as "
                         "OpenSpiel), on, or both (two metagame runs)")
    ap.add_argument("--out", default=os.path.join(RESULTS, "psro.json"))
    args = ap.parse_args()

    if args.build:
        build_metagame(args.cargo_cmd)
    mg = Metagame(None if args.no_metagame else os.path.abspath(
        args.metagame_bin), args.mg_repeats)
    if not args.no_metagame and not mg.available():
        log(f"[metagame] {args.metagame_bin} not found: OpenSpiel side only")
    try:
        load_avg = os.getloadavg()
    except OSError:
        load_avg = None
    results = {"meta": {"time": time.strftime("%Y-%m-%d %H:%M:%S"),
                        "open_spiel": "2.0.2", "cpus": os.cpu_count(),
                        "load_avg_at_start": load_avg,
                        "argv": sys.argv[1:]}}
    log(f"[info] load average at start: {load_avg}")

    if args.diagnose:
        results["diagnostic"] = diagnose(mg, args.diagnose_iterations)
        save_results(args.out, results)
        return 0

    iters = {"kuhn_poker": args.kuhn_iterations,
             "leduc_poker": args.leduc_iterations}
    games = [g for g in args.games.split(",") if g]
    solvers = [s for s in args.solvers.split(",") if s]
    pairs = []
    if not args.no_psro:
        results["psro"] = {}
        for game in games:
            n = iters.get(game, args.leduc_iterations)
            for solver in solvers:
                key = f"{game}/{solver}"
                log(f"[psro] {key}: {n} iterations")
                os_rec = None
                if not args.no_openspiel:
                    os_rec = run_os_psro(game, solver, n, args.budget_seconds,
                                         args.keep_meta_game)
                    done = (os_rec["iterations"][-1]["iteration"]
                            if os_rec["iterations"] else n)
                else:
                    os_rec = {"game": game, "meta_solver": solver,
                              "iterations": []}
                    done = n
                warm = {"on": [True], "off": [False],
                        "both": [False, True]}[args.warm_start]
                for warm_start in warm:
                    mg_rec = None
                    if mg.available():
                        mg_config = {"game": game, "algorithm": "psro",
                                     "meta_solver": solver,
                                     "oracle": args.oracle,
                                     "evaluator": "exact",
                                     "max_iterations": done,
                                     "warm_start": warm_start}
                        if args.oracle == "exact-br-trembling":
                            mg_config["tremble"] = args.tremble
                        mg_rec = mg.run(mg_config)
                        log(f"[metagame warm_start={warm_start}] {key}: "
                            + (mg_rec.get("error") or
                               f"{mg_rec.get('last_iteration')} iterations, "
                               f"{ft(mg_rec.get('wall_median_s'))}"))
                    wkey = key + ("" if len(warm) == 1 else
                                  f" warm_start={str(warm_start).lower()}")
                    results["psro"][wkey] = {"openspiel": os_rec,
                                             "metagame": strip_lines(mg_rec),
                                             "measured": _stamp()}
                    pairs.append((os_rec, mg_rec))
    xfp_pair = None
    if args.xfp_iterations > 0:
        log(f"[xfp] leduc_poker: {args.xfp_iterations} iterations")
        os_x = None if args.no_openspiel else run_os_xfp(
            "leduc_poker", args.xfp_iterations, args.xfp_budget_seconds)
        mg_x = None
        if mg.available():
            mg_x = mg.run({"game": "leduc_poker", "algorithm": "xfp",
                           "max_iterations": args.xfp_iterations})
        results["xfp"] = {"leduc_poker": {"openspiel": os_x,
                                          "metagame": strip_lines(mg_x),
                                          "measured": _stamp()}}
        xfp_pair = (os_x, mg_x)
    try:
        results["meta"]["load_avg_at_end"] = os.getloadavg()
    except OSError:
        pass

    print("\n## PSRO: NashConv of the meta-strategy mixture, OpenSpiel "
          "psro_v2 vs metagame")
    for os_rec, mg_rec in pairs:
        print_psro_table(os_rec, mg_rec)
    if xfp_pair is not None:
        print_xfp_table(*xfp_pair)
    save_results(args.out, results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
