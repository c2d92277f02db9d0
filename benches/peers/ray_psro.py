#!/usr/bin/env python3
"""Leduc PSRO with sampled payoffs (evaluator "cpu", 10 000 episodes per entry), locally
and on a local Ray cluster (2 worker processes), side by side in one run; the two reports
must be equal bit for bit. Prints the wall times, Ray's overhead, and what an iteration
sends to its tasks (entries per iteration, bytes per task) for planning a many-machine run.

Run with the venv scripts/test makes (it holds metagame, ray):

    target/python-venv/bin/python benches/peers/ray_psro.py [--iterations 10] [--episodes 10000]

As root it re-runs itself in a network namespace with only loopback (unshare --net), so
Ray's sockets stay on this machine.
"""

from __future__ import annotations

import argparse
import os
import pickle
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def cpu_model() -> str:
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            return line.split(":", 1)[1].strip()
    return platform.processor()


def in_loopback_namespace() -> bool:
    lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    return [line.split(":")[0].strip() for line in lines] == ["lo"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    if not in_loopback_namespace():
        if os.geteuid() == 0 and shutil.which("unshare") and shutil.which("ip"):
            script = f'ip link set lo up && exec "$@"'
            os.execvp("unshare", ["unshare", "--net", "--pid", "--fork", "--mount-proc", "bash", "-c", script, "bench",
                                  sys.executable, *sys.argv])
        sys.exit("run as root (for a loopback-only network namespace) or inside one")
    os.environ.update({"RAY_AUTH_MODE": "disabled", "RAY_USAGE_STATS_ENABLED": "0",
                       "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/", "http_proxy": "http://127.0.0.1:9",
                       "https_proxy": "http://127.0.0.1:9", "no_proxy": "127.0.0.1,localhost,::1"})
    import numpy as np
    import ray

    import metagame
    import metagame.distributed

    config = {"game": "leduc_poker", "algorithm": "psro", "evaluator": "cpu", "episodes_per_entry": args.episodes,
              "max_iterations": args.iterations, "seed": 0}
    out = Path(tempfile.mkdtemp(prefix="metagame-ray-bench-"))
    print(f"CPU: {cpu_model()} ({os.cpu_count()} cores); metagame {metagame.__version__}, ray {ray.__version__}")
    print(f"Leduc PSRO, nash meta-solver, exact best responses, {args.episodes} sampled episodes per entry, "
          f"{args.iterations} iterations")

    t = time.perf_counter()
    local = metagame.run(config, out=out / "local")
    local_s = time.perf_counter() - t

    t = time.perf_counter()
    ray.init(num_cpus=args.workers, include_dashboard=False, log_to_driver=False,
             _temp_dir=tempfile.mkdtemp(prefix="ray", dir="/tmp"))
    start_s = time.perf_counter() - t
    t = time.perf_counter()
    spread = metagame.distributed.run(config, out=out / "ray", address=None)
    ray_s = time.perf_counter() - t
    ray.shutdown()

    def strip(r):
        return [{k: v for k, v in it.items() if k not in ("elapsed_s", "times")} for it in r["iterations"]]

    equal = strip(local) == strip(spread)
    eval_local = sum(it["times"]["evaluation_s"] for it in local["iterations"])
    eval_ray = sum(it["times"]["evaluation_s"] for it in spread["iterations"])
    entries = [it.get("new_entries", 0) for it in local["iterations"]]
    game = metagame.load_game("leduc_poker")
    policy_bytes = len(pickle.dumps(np.zeros((game.num_infosets, game.num_actions))))
    last = local["iterations"][-1]
    members = sum(last["population_sizes"])
    print()
    print(f"| run | wall s | of it evaluating entries s |")
    print(f"|---|---|---|")
    print(f"| local (rayon, {os.cpu_count()} threads) | {local_s:.2f} | {eval_local:.2f} |")
    print(f"| Ray, {args.workers} worker processes | {ray_s:.2f} (+ {start_s:.2f} starting Ray) | {eval_ray:.2f} |")
    print()
    print(f"reports equal bit for bit: {equal}; final NashConv {last['nash_conv']:.6f}")
    print(f"entries per iteration: {entries}")
    print(f"per task: the policies of every member ({members} at the end, {policy_bytes} bytes each pickled), "
          f"once per iteration through the object store; its matchups and 4 numbers per seat back")
    shutil.rmtree(out, ignore_errors=True)
    if not equal:
        sys.exit("the distributed report differs from the local one")


if __name__ == "__main__":
    main()
