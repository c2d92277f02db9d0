#!/usr/bin/env python3
"""Peer benchmark: PSRO with learned (RL) best responses on Leduc poker,
OpenSpiel 2.0.2 psro_v2 + RLOracle vs `metagame run` (oracle = "q-learning" /
"actor-critic").

Usage (from anywhere; plain python3 is fine, the script bootstraps its venv):

    python3 benches/peers/psro_rl.py                         # both sides, 3 iterations
    python3 benches/peers/psro_rl.py --iterations 5 --seed 1 --no-metagame
    python3 benches/peers/psro_rl.py --metagame-config examples/leduc_psro_rl.toml --build
    python3 benches/peers/psro_rl.py --no-openspiel          # metagame side only
    python3 benches/peers/psro_rl.py --no-metagame --json /tmp/os.json
    python3 benches/peers/psro_rl.py --openspiel-from /tmp/os.json   # reuse it
    python3 benches/peers/psro_rl.py --no-metagame --save benches/peers/results/psro_rl-openspiel.txt
    python3 benches/peers/psro_rl.py --oracle DQN --minutes 20 --iterations 40 --no-metagame \
        --json benches/peers/results/psro_rl-openspiel-dqn.json   # 20 minutes of psro_v2
    python3 benches/peers/psro_rl.py --openspiel-from benches/peers/results/psro_rl-openspiel-dqn.json \
        --metagame-config examples/leduc_psro_ppo.toml --metagame-iterations 20 \
        --metagame-episodes-per-response 10000    # then: when metagame reaches its lowest NashConv

OpenSpiel side: open_spiel/python/examples/psro_v2_example.py's RL-oracle path,
with that example's flag defaults unless stated:
  * game = pyspiel.load_game_as_turn_based("leduc_poker", {"players": 2}),
    env = rl_environment.Environment(game), np.random.seed(--seed) (the
    example's only seeding; default 1 as its --seed flag),
  * oracle_type "PG" (--oracle PG, default) -> rl_policy.PGPolicy, i.e.
    open_spiel.python.jax.policy_gradient.PolicyGradient (JAX/haiku/optax/
    rlax; OpenSpiel 2.0.2's rl_policy imports the JAX agents, no TensorFlow)
    with loss_str "qpg", hidden_layers_sizes [256] * 4, entropy_cost 0.001,
    critic_learning_rate 1e-2, pi_learning_rate 1e-3, num_critic_before_pi 8,
    optimizer_str "adam", agent seed = the class default 42 (the example
    passes none), lambda 1, no L2, no gradient clipping;
    --oracle DQN -> rl_policy.DQNPolicy (open_spiel.python.jax.dqn.DQN, flax
    nnx) with hidden_layers_sizes [256] * 4, batch_size 32, learning_rate
    1e-2, update_target_network_every 1000, learn_every 10, optimizer "adam"
    (other DQN arguments at their class defaults),
  * rl_oracle.RLOracle(env, agent_class, agent_kwargs,
    number_training_episodes=1e4, self_play_proportion=0.0, sigma=0.0): each
    new policy trains until BOTH players' new policies have more than 1e4
    episodes (about 2e4 training episodes per PSRO iteration),
  * initial policies: one frozen, untrained agent per player (as the example),
  * PSROSolver(game, oracle, initial_policies=agents,
    training_strategy_selector="probabilistic", rectifier="",
    sims_per_entry=1000, number_policies_selected=1,
    meta_strategy_method=--meta-solver, prd_iterations=50000,
    prd_gamma=1e-10, sample_from_marginals=True, symmetric_game=False).
    The example's default meta_strategy_method is "alpharank"; this script
    defaults to "nash" (in the example's list for the paper's runs, and what
    a 2-player zero-sum comparison wants); --meta-solver alpharank gives the
    example's default.
  * after every solver.iteration(): PolicyAggregator mixes the policies with
    the meta-strategies and exploitability.nash_conv scores the mixture
    exactly, as the example does. Iteration 0 = the initial population.
  * Timing: "total" = setup (incl. the initial 1x1 meta-game, 1000
    simulations) + solver.iteration() + the NashConv evaluations, cumulative;
    "train" = the same without the NashConv evaluations. "train ep" = oracle
    training episodes (RLOracle rollouts), "sim ep" = meta-game simulation
    episodes (sims_per_entry per new payoff entry); both "this iteration /
    cumulative".
  * OpenSpiel's iteration-0 population is an untrained network per player
    (not the uniform policy), so its iteration-0 NashConv differs from
    metagame's uniform start.
metagame side (--metagame-config, default examples/leduc_psro_rl.toml): the
  config is copied with top-level max_iterations = --iterations (and seed =
  --seed unless --keep-metagame-seed), run as
  `metagame run CFG --out DIR --json`; per-iteration `nash_conv`,
  `elapsed_s`, `episodes` (per iteration; the table adds them up) come from
  its JSON lines / report.json.

Measured here (2 cores, another build running; summarised in docs/src/speed.md):
PG at these settings is about 3 minutes an iteration (20 000 training
episodes at ~5 ms each after JIT compilation, plus 1000 simulations per new
meta-game entry and a 6-20 s exact NashConv), so the default 3 iterations take
about 10 minutes. Runs are not bit-reproducible: two --seed 1 runs gave
NashConv 5.21/5.53/3.76/4.14 and 5.21/5.09/2.83/2.83 at iterations 0-3
(XLA's multi-threaded CPU arithmetic; RL training amplifies the differences).

Prints per-iteration lines as they come (stderr) and a side-by-side table
(stdout) with the wall-time ratio. --save FILE writes the stdout (command
line first) to FILE as well. Exit status 0, or 2 on setup failure.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
REPO_ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
RESULTS = os.path.join(HERE, "results")

# --------------------------------------------------------------------------
# venv bootstrap (stdlib only above this point)
from peer_venv import ensure_venv  # noqa: E402

# open_spiel 2.0.2's open_spiel/python/algorithms/psro_v2/rl_policy.py imports
# open_spiel.python.jax.dqn (flax.nnx, orbax, etils) and jax.policy_gradient
# (haiku, optax, rlax, chex): all CPU wheels on PyPI. cvxpy/ecos: the "nash" meta-solver's LP.
REQUIREMENTS = ["open_spiel==2.0.2", "numpy", "scipy", "cvxpy", "ecos",
                "matplotlib", "jax", "dm-haiku", "optax", "rlax", "chex",
                "flax", "orbax-checkpoint", "networkx"]
PROBE = ("numpy, scipy, pyspiel, cvxpy, ecos, matplotlib, jax, haiku, optax, "
         "rlax, chex, flax.nnx, orbax.checkpoint, networkx")

if __name__ == "__main__":
    ensure_venv(__file__, REQUIREMENTS, PROBE, {"open_spiel": "2.0.2"})

# --------------------------------------------------------------------------
import argparse  # noqa: E402
import contextlib  # noqa: E402
import io  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import shlex  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import tomllib  # noqa: E402

DEFAULT_ITERATIONS = 3


def log(msg):
    print(msg, file=sys.stderr, flush=True)


class Tee:
    """stdout that is also written to a file (--save)."""

    def __init__(self, stream, path, header):
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        self._stream = stream
        self._file = open(path, "w")
        self._file.write(header)

    def write(self, s):
        self._stream.write(s)
        self._file.write(s)

    def flush(self):
        self._stream.flush()
        self._file.flush()

    def close(self):
        self._file.close()


# --------------------------------------------------------------------------
# OpenSpiel psro_v2 with the RL oracle
# --------------------------------------------------------------------------
def example_settings(oracle_type, meta_solver, training_episodes,
                     sims_per_entry):
    """psro_v2_example.py's flag defaults (meta solver: see the docstring)."""
    s = {"game": "leduc_poker", "players": 2, "oracle_type": oracle_type,
         "meta_strategy_method": meta_solver,
         "number_training_episodes": int(training_episodes),
         "sims_per_entry": sims_per_entry, "self_play_proportion": 0.0,
         "sigma": 0.0, "number_policies_selected": 1,
         "training_strategy_selector": "probabilistic", "rectifier": "",
         "prd_iterations": 50000, "prd_gamma": 1e-10,
         "sample_from_marginals": True, "symmetric_game": False}
    if oracle_type == "PG":
        s["agent_kwargs"] = {
            "loss_str": "qpg", "loss_class": False,
            "hidden_layers_sizes": [256] * 4, "entropy_cost": 0.001,
            "critic_learning_rate": 1e-2, "pi_learning_rate": 1e-3,
            "num_critic_before_pi": 8, "optimizer_str": "adam"}
    else:
        s["agent_kwargs"] = {
            "hidden_layers_sizes": [256] * 4, "batch_size": 32,
            "learning_rate": 1e-2, "update_target_network_every": 1000,
            "learn_every": 10, "optimizer_str": "adam"}
    return s


def run_openspiel(settings, iterations, seed, minutes=None):
    """Runs psro_v2 + RLOracle; returns a dict with one record per iteration
    (iteration 0 = the initial population). With `minutes`, stops after the
    first iteration that ends past that much wall time (at most
    `iterations`)."""
    import numpy as np
    import pyspiel
    from open_spiel.python import rl_environment
    from open_spiel.python.algorithms import exploitability
    from open_spiel.python.algorithms import policy_aggregator
    from open_spiel.python.algorithms.psro_v2 import psro_v2
    from open_spiel.python.algorithms.psro_v2 import rl_oracle
    from open_spiel.python.algorithms.psro_v2 import rl_policy

    counts = {"train": 0, "sim": 0}

    class CountingRLOracle(rl_oracle.RLOracle):
        def _rollout(self, game, agents, **kwargs):
            counts["train"] += 1
            return super()._rollout(game, agents, **kwargs)

    class CountingPSROSolver(psro_v2.PSROSolver):
        def sample_episodes(self, policies, num_episodes):
            counts["sim"] += num_episodes
            return super().sample_episodes(policies, num_episodes)

    rec = {"settings": settings, "seed": seed, "iterations": [],
           "minutes": minutes}
    t_start = time.perf_counter()
    cpu_start = time.process_time()
    np.random.seed(seed)
    game = pyspiel.load_game_as_turn_based(settings["game"],
                                           {"players": settings["players"]})
    env = rl_environment.Environment(game)
    info_state_size = env.observation_spec()["info_state"][0]
    num_actions = env.action_spec()["num_actions"]
    kwargs = dict(settings["agent_kwargs"])
    if settings["oracle_type"] == "PG":
        agent_class = rl_policy.PGPolicy
        kwargs.update(info_state_size=info_state_size, num_actions=num_actions)
    else:
        agent_class = rl_policy.DQNPolicy
        kwargs.update(state_representation_size=info_state_size,
                      num_actions=num_actions)
    oracle = CountingRLOracle(
        env, agent_class, kwargs,
        number_training_episodes=settings["number_training_episodes"],
        self_play_proportion=settings["self_play_proportion"],
        sigma=settings["sigma"])
    agents = [agent_class(env, p, **kwargs) for p in range(game.num_players())]
    for a in agents:
        a.freeze()
    with contextlib.redirect_stdout(io.StringIO()):  # psro_v2 prints settings
        solver = CountingPSROSolver(
            game, oracle, initial_policies=agents,
            training_strategy_selector=settings["training_strategy_selector"],
            rectifier=settings["rectifier"],
            sims_per_entry=settings["sims_per_entry"],
            number_policies_selected=settings["number_policies_selected"],
            meta_strategy_method=settings["meta_strategy_method"],
            prd_iterations=settings["prd_iterations"],
            prd_gamma=settings["prd_gamma"],
            sample_from_marginals=settings["sample_from_marginals"],
            symmetric_game=settings["symmetric_game"])
    rec["setup_s"] = time.perf_counter() - t_start
    eval_cum = 0.0

    def nash_conv():
        aggr = policy_aggregator.PolicyAggregator(game).aggregate(
            range(game.num_players()), solver.get_policies(),
            solver.get_meta_strategies())
        return float(exploitability.nash_conv(game, aggr))

    def record(it, iter_s):
        nonlocal eval_cum
        t0 = time.perf_counter()
        nc = nash_conv()
        eval_s = time.perf_counter() - t0
        eval_cum += eval_s
        total = time.perf_counter() - t_start
        r = {"iteration": it, "nash_conv": nc,
             "population_sizes": [len(p) for p in solver.get_policies()],
             "meta_strategies": [np.asarray(m).round(4).tolist()
                                 for m in solver.get_meta_strategies()],
             "iter_s": iter_s, "eval_s": eval_s, "total_cum_s": total,
             "train_cum_s": total - eval_cum,
             "cpu_cum_s": time.process_time() - cpu_start,
             "load_average": os.getloadavg()[0],
             "train_episodes": counts["train"], "sim_episodes": counts["sim"]}
        rec["iterations"].append(r)
        log(f"  [openspiel] it {it:3d}  NashConv {nc:.6g}  iter {iter_s:.1f}s"
            f"  eval {eval_s:.1f}s  total {total:.1f}s  train ep "
            f"{counts['train']}  sim ep {counts['sim']}")

    record(0, rec["setup_s"])
    for it in range(1, iterations + 1):
        t0 = time.perf_counter()
        solver.iteration()
        record(it, time.perf_counter() - t0)
        if minutes is not None and rec["iterations"][-1]["total_cum_s"] >= 60 * minutes:
            break
    rec["wall_s"] = time.perf_counter() - t_start
    return rec


# --------------------------------------------------------------------------
# metagame
# --------------------------------------------------------------------------
def override_top_level(text, values):
    """Sets top-level keys of a TOML text (before the first table header)."""
    lines = text.splitlines()
    first_table = next((i for i, l in enumerate(lines)
                        if re.match(r"\s*\[", l)), len(lines))
    keys = "|".join(re.escape(k) for k in values)
    head = [l for l in lines[:first_table]
            if not re.match(rf"\s*({keys})\s*=", l)]
    new = [f"{k} = {json.dumps(v)}" for k, v in values.items()]
    return "\n".join(head + new + lines[first_table:]) + "\n"


def run_metagame(binary, config_path, iterations, seed,
                 episodes_per_response=None):
    rec = {"config_path": config_path, "lines": []}
    with open(config_path) as f:
        text = f.read()
    tomllib.loads(text)  # fail early on a broken file
    if episodes_per_response is not None:
        # The [learner] table's budget (the only key of that name in a config).
        text, n = re.subn(r"(?m)^episodes_per_response\s*=.*$",
                          f"episodes_per_response = {episodes_per_response}",
                          text)
        if n != 1:
            raise SystemExit(f"{config_path}: no single episodes_per_response"
                             " line to override")
    values = {"max_iterations": iterations}
    if seed is not None:
        values["seed"] = seed
    text = override_top_level(text, values)
    cfg_parsed = tomllib.loads(text)
    rec["config"] = cfg_parsed
    tmp = tempfile.mkdtemp(prefix="mg_psro_rl_")
    try:
        cfg = os.path.join(tmp, "config.toml")
        with open(cfg, "w") as f:
            f.write(text)
        out_dir = os.path.join(tmp, "out")
        cmd = [binary, "run", cfg, "--out", out_dir, "--json"]
        rec["command"] = " ".join(shlex.quote(c) for c in cmd)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              cwd=REPO_ROOT)
        rec["wall_s"] = time.perf_counter() - t0
        if proc.returncode != 0:
            rec["error"] = (f"exit {proc.returncode}: "
                            + (proc.stderr.strip() or proc.stdout.strip())
                            [-800:])
            return rec
        lines = []
        for line in proc.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                try:
                    d = json.loads(line)
                except json.JSONDecodeError:
                    continue
                if not d.get("summary"):  # the final summary line is no iteration
                    lines.append(d)
        rep_path = os.path.join(out_dir, "report.json")
        if os.path.exists(rep_path):
            with open(rep_path) as f:
                report = json.load(f)
            rec["stop_reason"] = report.get("stop_reason")
            if not lines:
                lines = report.get("iterations", [])
        rec["lines"] = lines
        for d in lines:
            log(f"  [metagame] it {d.get('iteration'):3d}  NashConv "
                f"{d.get('nash_conv'):.6g}  elapsed {d.get('elapsed_s'):.2f}s"
                f"  episodes {d.get('episodes')}")
    finally:
        subprocess.run(["rm", "-rf", tmp], check=False)
    return rec


# --------------------------------------------------------------------------
def fv(v):
    if v is None:
        return "—"
    return f"{v:.4f}"


def ft(s):
    if s is None:
        return "—"
    if s < 1:
        return f"{s * 1e3:.3g}ms"
    return f"{s:.1f}s"


def fi(n):
    return "—" if n is None else f"{n:,}"


def print_report(args, os_rec, mg_rec):
    print("## PSRO with learned best responses on leduc_poker: OpenSpiel "
          "psro_v2 + RLOracle vs metagame")
    if os_rec is not None:
        s = os_rec["settings"]
        print(f"OpenSpiel 2.0.2: oracle {s['oracle_type']} "
              f"{json.dumps(s['agent_kwargs'])}, number_training_episodes "
              f"{s['number_training_episodes']}, sims_per_entry "
              f"{s['sims_per_entry']}, meta_strategy_method "
              f"{s['meta_strategy_method']}, seed {os_rec['seed']}; "
              f"setup {ft(os_rec['setup_s'])}")
        if os_rec.get("error"):
            print(f"OpenSpiel error: {os_rec['error']}")
    if mg_rec is not None:
        cfg = {k: v for k, v in mg_rec.get("config", {}).items()}
        print(f"metagame: {os.path.relpath(mg_rec['config_path'], REPO_ROOT)}"
              f" with max_iterations/seed overridden: {json.dumps(cfg)}")
        if mg_rec.get("error"):
            print(f"metagame error: {mg_rec['error']}")
        elif mg_rec.get("stop_reason"):
            print(f"metagame stop_reason: {mg_rec['stop_reason']}; process "
                  f"wall {ft(mg_rec.get('wall_s'))}")
    os_it = {r["iteration"]: r for r in (os_rec or {}).get("iterations", [])}
    mg_it = {d.get("iteration"): d for d in (mg_rec or {}).get("lines", [])}
    its = sorted(set(os_it) | set(mg_it))
    print()
    # Episode columns: "this iteration / cumulative". OpenSpiel counts
    # cumulatively; metagame's `episodes` is per iteration (summed here).
    print("| iter | OS NashConv | OS total (train) | OS train ep | OS sim ep "
          "| mg NashConv | mg elapsed_s | mg episodes |")
    print("|---|---|---|---|---|---|---|---|")
    prev_train = prev_sim = 0
    mg_cum = 0
    for i in its:
        o, m = os_it.get(i), mg_it.get(i)
        os_cols = "— | — | —"
        if o:
            os_cols = (f"{ft(o['total_cum_s'])} ({ft(o['train_cum_s'])}) | "
                       f"{fi(o['train_episodes'] - prev_train)} / "
                       f"{fi(o['train_episodes'])} | "
                       f"{fi(o['sim_episodes'] - prev_sim)} / "
                       f"{fi(o['sim_episodes'])}")
            prev_train, prev_sim = o["train_episodes"], o["sim_episodes"]
        mg_ep = "—"
        if m and m.get("episodes") is not None:
            mg_cum += m["episodes"]
            mg_ep = f"{fi(m['episodes'])} / {fi(mg_cum)}"
        print(f"| {i} | {fv(o and o['nash_conv'])} | {os_cols} | "
              f"{fv(m and m.get('nash_conv'))} | "
              f"{ft(m and m.get('elapsed_s'))} | {mg_ep} |")
    if os_it and mg_it:
        last = max(set(os_it) & set(mg_it), default=None)
        if last is not None:
            o, m = os_it[last], mg_it[last]
            mg_s = m.get("elapsed_s")
            if mg_s:
                print(f"\nwall time to iteration {last}: OpenSpiel "
                      f"{ft(o['total_cum_s'])} total / {ft(o['train_cum_s'])} "
                      f"without NashConv evaluation; metagame {ft(mg_s)} "
                      f"(process {ft(mg_rec.get('wall_s'))}); ratio "
                      f"OpenSpiel/metagame {o['total_cum_s'] / mg_s:.3g}x "
                      f"(train only {o['train_cum_s'] / mg_s:.3g}x)")
            print(f"final NashConv at iteration {last}: OpenSpiel "
                  f"{o['nash_conv']:.4f}, metagame {m.get('nash_conv'):.4f}")
        time_to_reach(os_rec, mg_rec)


def time_to_reach(os_rec, mg_rec):
    """The lowest NashConv OpenSpiel reached in its run, when it first got
    there, and when metagame first got at least as low: the speed-up in
    wall time to the same exact NashConv."""
    its = os_rec["iterations"]
    best = min(its, key=lambda r: (r["nash_conv"], r["total_cum_s"]))
    target = best["nash_conv"]
    print(f"\nOpenSpiel's lowest NashConv in {ft(its[-1]['total_cum_s'])}: "
          f"{target:.4f} at iteration {best['iteration']}, reached after "
          f"{ft(best['total_cum_s'])} ({ft(best['train_cum_s'])} without its "
          f"NashConv evaluations; process CPU {ft(best.get('cpu_cum_s'))}; "
          f"1-min load average then {best.get('load_average', float('nan')):.2f})")
    hit = next((d for d in mg_rec.get("lines", [])
                if d.get("nash_conv") is not None
                and d["nash_conv"] <= target), None)
    if hit is None:
        print(f"metagame did not reach {target:.4f} in its "
              f"{len(mg_rec.get('lines', [])) - 1} iterations")
        return
    mg_s = max(hit["elapsed_s"], 1e-9)
    print(f"metagame reached it at iteration {hit['iteration']} "
          f"(NashConv {hit['nash_conv']:.4f}) after {ft(mg_s)}: "
          f"{best['total_cum_s'] / mg_s:.3g}x sooner "
          f"({best['train_cum_s'] / mg_s:.3g}x against OpenSpiel without "
          f"its evaluations)")


def main():
    ap = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--iterations", type=int, default=DEFAULT_ITERATIONS,
                    help="PSRO iterations on both sides (OpenSpiel PG: about "
                         "1 to 2 minutes an iteration on 2 cores)")
    ap.add_argument("--minutes", type=float,
                    help="OpenSpiel: stop after the first iteration that "
                         "ends past this many minutes (--iterations caps it)")
    ap.add_argument("--metagame-iterations", type=int,
                    help="metagame's max_iterations (default --iterations)")
    ap.add_argument("--metagame-episodes-per-response", type=int,
                    help="override the config's [learner] "
                         "episodes_per_response (psro_v2's RLOracle: 1e4)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--oracle", choices=["PG", "DQN"], default="PG")
    ap.add_argument("--meta-solver", default="nash",
                    help="psro_v2 meta_strategy_method (example default: "
                         "alpharank)")
    ap.add_argument("--training-episodes", type=int, default=10_000,
                    help="RLOracle number_training_episodes (example: 1e4)")
    ap.add_argument("--sims-per-entry", type=int, default=1000)
    ap.add_argument("--no-openspiel", action="store_true")
    ap.add_argument("--no-metagame", action="store_true")
    ap.add_argument("--metagame-config",
                    default=os.path.join(REPO_ROOT, "examples",
                                         "leduc_psro_rl.toml"))
    ap.add_argument("--keep-metagame-seed", action="store_true",
                    help="keep the config's seed instead of --seed")
    ap.add_argument("--metagame-bin",
                    default=os.path.join(REPO_ROOT, "target", "release",
                                         "metagame"))
    ap.add_argument("--build", action="store_true",
                    help="cargo build --release before measuring")
    ap.add_argument("--save", metavar="FILE",
                    help="also write stdout (command line first) to FILE, "
                         "e.g. benches/peers/results/psro_rl-openspiel.txt")
    ap.add_argument("--json", metavar="FILE", help="raw records as JSON")
    ap.add_argument("--openspiel-from", metavar="FILE",
                    help="reuse the OpenSpiel record of an earlier --json "
                         "run instead of running OpenSpiel again")
    args = ap.parse_args()

    tee = None
    if args.save:
        argv = " ".join(shlex.quote(a) for a in sys.argv[1:])
        header = (f"$ python3 benches/peers/psro_rl.py {argv}\n"
                  f"# {time.strftime('%Y-%m-%d %H:%M:%S')}, {os.cpu_count()}"
                  f" CPUs, load average "
                  f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}\n\n")
        tee = Tee(sys.stdout, args.save, header)
        sys.stdout = tee

    if args.build:
        log("[build] cargo build --release")
        subprocess.run(["cargo", "build", "--release"], cwd=REPO_ROOT,
                       check=False)

    os_rec = None
    if args.openspiel_from:
        with open(args.openspiel_from) as f:
            os_rec = json.load(f)["openspiel"]
        log(f"[openspiel] record from {args.openspiel_from}")
        if len(os_rec["iterations"]) - 1 < args.iterations:
            log(f"  (it has {len(os_rec['iterations']) - 1} iterations)")
    elif not args.no_openspiel:
        settings = example_settings(args.oracle, args.meta_solver,
                                    args.training_episodes,
                                    args.sims_per_entry)
        log(f"[openspiel] psro_v2 + RLOracle ({args.oracle}), "
            f"{args.iterations} iterations")
        try:
            os_rec = run_openspiel(settings, args.iterations, args.seed,
                                   args.minutes)
        except Exception as e:  # pylint: disable=broad-except
            os_rec = {"settings": settings, "seed": args.seed,
                      "iterations": [], "setup_s": None,
                      "error": f"{type(e).__name__}: {e}"}
            log(f"  [openspiel] ERROR {os_rec['error']}")

    mg_rec = None
    if not args.no_metagame:
        binary = os.path.abspath(args.metagame_bin)
        cfg = os.path.abspath(args.metagame_config)
        if not os.access(binary, os.X_OK):
            log(f"[metagame] {binary} not found (build it, or --build)")
        elif not os.path.exists(cfg):
            log(f"[metagame] {cfg} not found: OpenSpiel side only")
        else:
            mg_iterations = args.metagame_iterations or args.iterations
            log(f"[metagame] {cfg}, {mg_iterations} iterations")
            mg_rec = run_metagame(binary, cfg, mg_iterations,
                                  None if args.keep_metagame_seed
                                  else args.seed,
                                  args.metagame_episodes_per_response)

    print_report(args, os_rec, mg_rec)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"openspiel": os_rec, "metagame": mg_rec}, f, indent=1)
    if tee is not None:
        sys.stdout = tee._stream
        tee.close()
        log(f"[results] {args.save}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
