"""metagame.distributed on a real Ray cluster of two nodes (a head and a worker node, one
CPU each) started by the test on 127.0.0.1 only.

Ray opens sockets on the machine's interface address even when told 127.0.0.1, so these
tests run only inside a network namespace that has nothing but loopback (scripts/test
runs pytest in one: `unshare --net`); elsewhere they skip.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

import metagame

from conftest import require

ray = require("ray")
import metagame.distributed  # noqa: E402

# What keeps Ray's helper processes from even trying an address outside loopback (usage
# statistics, cloud metadata look-ups), and Ray 2.60's token authentication off for this
# private test cluster.
RAY_ENV = {
    "RAY_AUTH_MODE": "disabled",
    "RAY_USAGE_STATS_ENABLED": "0",
    "RAY_USAGE_STATS_REPORT_URL": "http://127.0.0.1:9/",
    "http_proxy": "http://127.0.0.1:9",
    "https_proxy": "http://127.0.0.1:9",
    "no_proxy": "127.0.0.1,localhost,::1",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost,::1",
}


def only_loopback() -> bool:
    """True in a network namespace whose only interface is loopback (/proc/net/dev lists
    this namespace's interfaces, /sys/class/net may be the host's)."""
    try:
        lines = Path("/proc/self/net/dev").read_text().splitlines()[2:]
    except OSError:
        return False
    return [line.split(":")[0].strip() for line in lines] == ["lo"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    if not only_loopback():
        pytest.skip("not in a loopback-only network namespace (scripts/test runs pytest in one)")
    os.environ.update(RAY_ENV)
    ray_bin = str(Path(sys.executable).with_name("ray"))
    temp = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # short: Ray's socket paths are limited
    port = free_port()
    common = [
        "--node-ip-address=127.0.0.1",
        "--num-cpus=1",
        "--disable-usage-stats",
        "--object-store-memory=200000000",
        "--min-worker-port=20000",
        "--max-worker-port=20100",
    ]
    address = f"127.0.0.1:{port}"
    # The workers import this module to unpickle its oracles, as a user's workers import theirs.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).parent)}
    subprocess.run([ray_bin, "start", "--head", f"--port={port}", "--include-dashboard=false", f"--temp-dir={temp}", *common],
                   check=True, timeout=180, capture_output=True, env=env)
    try:
        subprocess.run([ray_bin, "start", f"--address={address}", *common], check=True, timeout=180, capture_output=True, env=env)
        ray.init(address=address, log_to_driver=False)
        deadline = time.time() + 60
        while len([n for n in ray.nodes() if n["Alive"]]) < 2:
            assert time.time() < deadline, "the worker node did not join"
            time.sleep(0.5)
        yield address
    finally:
        ray.shutdown()
        subprocess.run([ray_bin, "stop", "--force"], timeout=120, capture_output=True)


def without_times(report: dict) -> dict:
    """A run report without its wall times (what differs between two equal runs)."""
    out = dict(report)
    out["iterations"] = [{k: v for k, v in it.items() if k not in ("elapsed_s", "times")} for it in report["iterations"]]
    return out


SAMPLED_LEDUC = {
    "game": "leduc_poker",
    "algorithm": "psro",
    "evaluator": "cpu",
    "episodes_per_entry": 2000,
    "max_iterations": 4,
    "seed": 3,
}


def test_distributed_psro_equals_the_local_run(cluster, tmp_path):
    local = metagame.run(SAMPLED_LEDUC, out=tmp_path / "local")
    spread = metagame.distributed.run(SAMPLED_LEDUC, out=tmp_path / "ray", address=cluster, tasks_per_call=4)
    assert without_times(spread) == without_times(local)
    # Sampled entries: the totals really came from sampling, not exact values.
    assert local["iterations"][-1]["episodes"] > 0
    assert (tmp_path / "ray" / "report.html").is_file()


class BestResponder:
    """A researcher's oracle: the exact best response, through the Python API."""

    def respond(self, request):
        response, _ = metagame.best_response(request.game, request.profile, request.player)
        return response


class DiesOnce(BestResponder):
    """Kills its worker process in the middle of its first response (a crashed node)."""

    def __init__(self, marker: str):
        self.marker = marker

    def respond(self, request):
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return super().respond(request)


KUHN = {"game": "kuhn_poker", "algorithm": "psro", "max_iterations": 6}


def test_a_python_oracle_on_ray_equals_it_locally(cluster, tmp_path):
    local = metagame.run(KUHN, out=tmp_path / "local", oracle=BestResponder())
    spread = metagame.distributed.run(KUHN, out=tmp_path / "ray", oracle=BestResponder(), address=cluster)
    assert without_times(spread) == without_times(local)
    assert local["iterations"][-1]["nash_conv"] < 1e-9


def test_a_killed_worker_is_retried_and_the_result_does_not_change(cluster, tmp_path):
    marker = tmp_path / "killed"
    local = metagame.run(KUHN, out=tmp_path / "local", oracle=BestResponder())
    spread = metagame.distributed.run(KUHN, out=tmp_path / "ray", oracle=DiesOnce(str(marker)), address=cluster)
    assert marker.is_file(), "the oracle's first task killed its worker"
    assert int(marker.read_text()) != os.getpid()
    assert without_times(spread) == without_times(local)


def test_the_python_cli_runs_a_config_on_ray(cluster, tmp_path):
    config = tmp_path / "leduc.toml"
    config.write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in SAMPLED_LEDUC.items()))
    out = tmp_path / "cli"
    done = subprocess.run(
        [sys.executable, "-m", "metagame", "run", str(config), "--out", str(out), "--ray", cluster],
        capture_output=True, text=True, timeout=300, env={**os.environ, **RAY_ENV},
    )
    assert done.returncode == 0, done.stderr
    assert f"results in {out}" in done.stdout
    local = metagame.run(SAMPLED_LEDUC, out=tmp_path / "local")
    assert without_times(json.loads((out / "report.json").read_text())) == without_times(local)


@pytest.mark.parametrize("oracle", [
    {"oracle": "exact-br-trembling"},
    # A learned oracle that keeps nothing between requests: a fresh Q-learner per response.
    {"oracle": "q-learning", "learner": {"episodes_per_response": 3000}, "seed": 4},
])
def test_a_built_in_oracle_responds_in_ray_tasks(cluster, tmp_path, monkeypatch, oracle):
    config = {"game": "leduc_poker", "algorithm": "psro", "max_iterations": 5, **oracle}
    asked = []
    respond = metagame.distributed._RayBuiltinOracle.respond
    monkeypatch.setattr(metagame.distributed._RayBuiltinOracle, "respond",
                        lambda self, request: asked.append(request.player) or respond(self, request))
    local = metagame.run(config, out=tmp_path / "local")
    spread = metagame.distributed.run(config, out=tmp_path / "ray", address=cluster)
    assert asked == [0, 1] * 5, "every response of the run went through a Ray task"
    assert without_times(spread) == without_times(local)


def test_a_distributed_league_equals_the_local_one(cluster, tmp_path):
    config = {"game": "kuhn_poker", "algorithm": "league", "max_iterations": 6, "episodes_per_round": 400,
              "snapshot_min_episodes": 800, "snapshot_max_episodes": 1600, "eval_every": 2, "seed": 5}
    local = metagame.run(config, out=tmp_path / "local")
    spread = metagame.distributed.run(config, out=tmp_path / "ray", address=cluster)
    assert without_times(spread) == without_times(local)
    assert len(local["iterations"]) == 7


def test_the_readme_ray_block_runs(cluster, tmp_path):
    from test_readme import python_blocks, run_blocks

    blocks = python_blocks("ray")
    assert len(blocks) == 1
    run_blocks(blocks, tmp_path)
    assert (tmp_path / "runs" / "kuhn_psro_ray" / "report.json").is_file()


# Connect four is too large for its tree: its entries are rollouts among network members.
CONNECT_FOUR = {"game": "connect_four", "algorithm": "psro", "evaluator": "rollout", "episodes_per_entry": 150,
                "max_iterations": 2}


def test_native_network_members_on_ray_equal_the_local_run(cluster, tmp_path, monkeypatch):
    config = {**CONNECT_FOUR, "oracle": "ppo", "learner": {"episodes_per_response": 128}}
    asked = []
    respond = metagame.distributed._RayBuiltinOracle.respond
    monkeypatch.setattr(metagame.distributed._RayBuiltinOracle, "respond",
                        lambda self, request: asked.append(request.player) or respond(self, request))
    local = metagame.run(config, out=tmp_path / "local")
    spread = metagame.distributed.run(config, out=tmp_path / "ray", address=cluster, tasks_per_call=3)
    # Every ppo response was trained in a Ray task, its network the one the local run trained.
    assert asked == [0, 1] * 2
    assert without_times(spread) == without_times(local)
    assert [it["episodes"] for it in spread["iterations"]] == [it["episodes"] for it in local["iterations"]]
    assert any(f.endswith(".safetensors") for f in os.listdir(tmp_path / "ray" / "members"))


class DiesOnceReinforce:
    """The numpy REINFORCE oracle of test_python_members, killing its worker in the middle
    of its first response."""

    def __init__(self, marker: str):
        from test_python_members import Reinforce

        self.marker = marker
        self.inner = Reinforce(episodes=96)

    def respond(self, request):
        if not os.path.exists(self.marker):
            Path(self.marker).write_text(str(os.getpid()))
            os.kill(os.getpid(), signal.SIGKILL)
        return self.inner.respond(request)


def test_python_network_members_on_ray_equal_the_local_run_through_a_killed_worker(cluster, tmp_path):
    from test_python_members import Reinforce

    marker = tmp_path / "killed"
    # Its numpy networks are kept pickled, which the runs allow.
    local = metagame.run(CONNECT_FOUR, out=tmp_path / "local", oracle=Reinforce(episodes=96), allow_pickle=True)
    spread = metagame.distributed.run(CONNECT_FOUR, out=tmp_path / "ray", oracle=DiesOnceReinforce(str(marker)),
                                      address=cluster, tasks_per_call=3, allow_pickle=True)
    assert marker.is_file() and int(marker.read_text()) != os.getpid()
    assert without_times(spread) == without_times(local)
    assert local["meta_game_stderr"] is not None
    # The members are the same networks, to the last bits numpy's BLAS leaves alone: it
    # sums in another order in a worker of one CPU (one thread) than in this process.
    import pickle

    import numpy as np

    def weights(run):
        folder = tmp_path / run / "members"
        nets = [pickle.loads((folder / f).read_bytes()) for f in sorted(os.listdir(folder)) if f.endswith(".pkl")]
        return sorted(([n.w1, n.b1, n.w2, n.b2] for n in nets), key=lambda w: float(w[0].sum()))

    for ours, theirs in zip(weights("ray"), weights("local"), strict=True):
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
