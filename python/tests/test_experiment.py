"""metagame.run and metagame.Experiment: the CLI's loops, run folders and resume from
Python, on built-in and OpenSpiel games, with a researcher's own oracle."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import metagame
import metagame.openspiel
from conftest import missing, require

ROOT = Path(__file__).resolve().parents[2]
CLI = ROOT / "target" / "release" / "metagame"


def without_times(report: dict) -> dict:
    out = dict(report)
    out["iterations"] = [{k: v for k, v in it.items() if k not in ("elapsed_s", "times")} for it in report["iterations"]]
    return out


class BestResponder:
    def __init__(self):
        self.requests = []

    def respond(self, request):
        self.requests.append((request.player, len(request.opponents), request.seed, request.budget))
        response, _ = metagame.best_response(request.game, request.profile, request.player)
        return response


def test_a_config_file_gives_the_cli_report(tmp_path):
    if not CLI.is_file():
        missing("the release CLI is not built (scripts/test builds it: cargo test --workspace --release)")
    config = ROOT / "examples" / "kuhn_psro.toml"
    subprocess.run([str(CLI), "run", str(config), "--out", str(tmp_path / "cli")], check=True, capture_output=True, timeout=300)
    ours = metagame.run(config, out=tmp_path / "py")
    cli = json.loads((tmp_path / "cli" / "report.json").read_text())
    assert without_times(ours) == without_times(cli)
    assert sorted(os.listdir(tmp_path / "py")) == sorted(os.listdir(tmp_path / "cli"))


def test_neural_psro_on_a_game_without_a_tree_runs_and_resumes_as_from_the_cli(tmp_path):
    """connect_four is too large for its tree: a run with the built-in ppo oracle plays its
    entries by rollouts on the states, keeps its members as safetensors files, and a run
    stopped after one iteration resumes to the uninterrupted one, as the CLI does."""
    config = {"game": "connect_four", "algorithm": "psro", "oracle": "ppo", "evaluator": "rollout",
              "episodes_per_entry": 200, "max_iterations": 2, "learner": {"episodes_per_response": 256}}
    whole = metagame.run(config, out=tmp_path / "whole")
    assert [it["nash_conv"] for it in whole["iterations"]] == [None] * 3
    assert len(os.listdir(tmp_path / "whole" / "members")) >= 2
    with metagame.Experiment(config, out=tmp_path / "cut") as experiment:
        next(experiment)
        next(experiment)
    resumed = metagame.run(config, out=tmp_path / "cut", resume=True)
    assert without_times(resumed)["meta_game"] == without_times(whole)["meta_game"]
    if CLI.is_file():
        subprocess.run([str(CLI), "run", str(tmp_path / "whole" / "config.toml"), "--out", str(tmp_path / "cli")],
                       check=True, capture_output=True, timeout=600)
        cli = json.loads((tmp_path / "cli" / "report.json").read_text())
        assert without_times(cli)["meta_game"] == without_times(whole)["meta_game"]


def test_dict_toml_text_and_path_configs_are_the_same_run(tmp_path):
    fields = {"game": "kuhn_poker", "algorithm": "cfr", "variant": "cfr+", "max_iterations": 30}
    text = "".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items())
    path = tmp_path / "cfr.toml"
    path.write_text(text)
    runs = [metagame.run(c, out=tmp_path / name) for name, c in [("dict", fields), ("text", text), ("path", path)]]
    assert without_times(runs[0]) == without_times(runs[1]) == without_times(runs[2])
    # CFR+ on Kuhn after 30 iterations (OpenSpiel's values: 0.0653742 at 10, 0.00238881 at 100).
    nash_conv = [it["nash_conv"] for it in runs[0]["iterations"]]
    assert 0.00238881 < nash_conv[-1] < 0.0653742


@pytest.mark.parametrize(
    "spelled, canonical",
    [("kuhn_poker(players=2)", "kuhn_poker"),
     ("goofspiel(imp_info=True,num_cards=4,points_order=random)", "goofspiel(imp_info=True,num_cards=4)")],
)
def test_a_game_string_that_spells_out_a_default_runs_as_the_game(tmp_path, spelled, canonical):
    # load_game, the CLI and pyspiel accept such strings; so does run, with the same report.
    config = {"algorithm": "cfr", "max_iterations": 3}
    ours = metagame.run({"game": spelled, **config}, out=tmp_path / "spelled")
    plain = metagame.run({"game": canonical, **config}, out=tmp_path / "plain")
    assert [it["nash_conv"] for it in ours["iterations"]] == [it["nash_conv"] for it in plain["iterations"]]
    given = metagame.run({"game": spelled, **config}, out=tmp_path / "given", game=metagame.load_game(spelled))
    assert [it["nash_conv"] for it in given["iterations"]] == [it["nash_conv"] for it in plain["iterations"]]
    with pytest.raises(ValueError, match=re.escape(f"the config names `leduc_poker`, but the run is on the game `{canonical}`")):
        metagame.run({"game": "leduc_poker", **config}, out=tmp_path / "other", game=metagame.load_game(spelled))


def test_a_python_oracle_is_asked_and_equals_the_built_in_best_response(tmp_path):
    config = {"game": "leduc_poker", "algorithm": "psro", "max_iterations": 4}
    oracle = BestResponder()
    ours = metagame.run(config, out=tmp_path / "py", oracle=oracle)
    built_in = metagame.run(config, out=tmp_path / "rust")
    assert [it["nash_conv"] for it in ours["iterations"]] == [it["nash_conv"] for it in built_in["iterations"]]
    assert len(oracle.requests) == 2 * 4
    assert {player for player, *_ in oracle.requests} == {0, 1}
    assert all(budget is None for *_, budget in oracle.requests)


def test_the_experiment_steps_one_iteration_at_a_time_and_resumes(tmp_path):
    config = {"game": "kuhn_poker", "algorithm": "xfp", "max_iterations": 12}
    whole = metagame.run(config, out=tmp_path / "whole")
    seen = []
    with metagame.Experiment(config, out=tmp_path / "parts") as experiment:
        for report in experiment:
            seen.append(report["iteration"])
            if report["iteration"] == 5:
                break
    assert seen == [0, 1, 2, 3, 4, 5]
    assert experiment.result["stop_reason"] == "observer"
    assert (tmp_path / "parts" / "report.html").is_file()
    rest = metagame.Experiment(config, out=tmp_path / "parts", resume=True)
    assert [r["iteration"] for r in rest] == list(range(6, 13))
    assert without_times(rest.result)["iterations"] == without_times(whole)["iterations"]


def test_a_run_folder_is_not_replaced_without_overwrite(tmp_path):
    config = {"game": "kuhn_poker", "algorithm": "cfr", "max_iterations": 2}
    metagame.run(config, out=tmp_path)
    with pytest.raises(ValueError, match="already holds a run; pass overwrite=True"):
        metagame.run(config, out=tmp_path)
    assert metagame.run(config, out=tmp_path, overwrite=True)["stop_reason"] == "max_iterations"


class Explodes:
    def __init__(self, after: int):
        self.after = after

    def respond(self, request):
        if self.after == 0:
            raise RuntimeError("the GPU fell over")
        self.after -= 1
        return metagame.best_response(request.game, request.profile, request.player)[0]


def test_an_oracle_exception_stops_the_run_and_the_checkpoint_resumes(tmp_path):
    config = {"game": "kuhn_poker", "algorithm": "psro", "max_iterations": 5}
    with pytest.raises(RuntimeError, match="the GPU fell over"):
        metagame.run(config, out=tmp_path, oracle=Explodes(after=4))
    checkpoint = json.loads((tmp_path / "checkpoint.json").read_text())
    assert checkpoint["payload"]["state"]["iteration"] == 2
    history = (tmp_path / "history.jsonl").read_text().splitlines()
    assert checkpoint["payload"]["history"]["records"] == 3
    assert json.loads(history[-1])["report"]["iteration"] == 2
    resumed = metagame.run(config, out=tmp_path, oracle=BestResponder(), resume=True)
    whole = metagame.run(config, out=tmp_path / "whole", oracle=BestResponder())
    assert without_times(resumed)["iterations"] == without_times(whole)["iterations"]


@pytest.mark.parametrize(
    "answer, message",
    [
        ("nope", "not a policy of kuhn_poker"),
        ([[0.5, 0.5]], "shape"),
        (float("nan"), "not a policy"),
    ],
)
def test_an_oracle_returning_garbage_is_a_value_error(tmp_path, answer, message):
    class Garbage:
        def respond(self, request):
            return answer

    with pytest.raises((ValueError, TypeError), match=message):
        metagame.run({"game": "kuhn_poker", "algorithm": "psro"}, out=tmp_path, oracle=Garbage())


def test_bad_configs_and_oracles_are_value_errors(tmp_path):
    with pytest.raises(ValueError, match="not read by algorithm `cfr`"):
        metagame.run({"game": "kuhn_poker", "algorithm": "cfr", "meta_solver": "nash"}, out=tmp_path / "a")
    with pytest.raises(ValueError, match="unknown algorithm `psr`"):
        metagame.run({"game": "kuhn_poker", "algorithm": "psr"}, out=tmp_path / "b")
    with pytest.raises(ValueError, match="<config>:2:13: extra `=`"):
        metagame.run('game = "kuhn_poker"\nalgorithm = = "psro"\n', out=tmp_path / "c")
    with pytest.raises(ValueError, match="takes no oracle"):
        metagame.run({"game": "kuhn_poker", "algorithm": "league"}, out=tmp_path / "d", oracle=BestResponder())
    with pytest.raises(TypeError, match="respond"):
        metagame.run({"game": "kuhn_poker", "algorithm": "psro"}, out=tmp_path / "e", oracle=object())
    with pytest.raises(ValueError, match="cannot read"):
        metagame.run(tmp_path / "missing.toml", out=tmp_path / "f")
    assert not (tmp_path / "a").exists()


def test_loops_run_on_an_openspiel_game(tmp_path):
    pyspiel = require("pyspiel")
    from open_spiel.python import policy as os_policy
    from open_spiel.python.algorithms import exploitability

    game = pyspiel.convert_to_turn_based(pyspiel.load_game("goofspiel(num_cards=3)"))
    ours = metagame.openspiel.from_pyspiel(game)
    for algorithm in ["psro", "xfp", "cfr"]:
        report = metagame.run({"algorithm": algorithm, "max_iterations": 8}, out=tmp_path / algorithm, game=ours)
        assert report["config"]["game"] == ours.name
        assert report["iterations"][-1]["nash_conv"] < report["iterations"][0]["nash_conv"]
    # The league trains its own agents on the OpenSpiel game too.
    league = metagame.run({"algorithm": "league", "max_iterations": 3, "episodes_per_round": 200, "eval_every": 1},
                          out=tmp_path / "league", game=ours)
    assert len(league["iterations"]) == 4
    # PSRO's final NashConv is OpenSpiel's NashConv of the same policy: compare on CFR's average.
    with metagame.Experiment({"algorithm": "cfr", "max_iterations": 20}, out=tmp_path / "cfr2", game=ours) as e:
        last = list(e)[-1]
    assert abs(last["nash_conv"] - [it for it in e.result["iterations"]][-1]["nash_conv"]) == 0
    with pytest.raises(ValueError, match="the config names `kuhn_poker`, but the run is on the game"):
        metagame.run({"game": "kuhn_poker", "algorithm": "psro"}, out=tmp_path / "x", game=ours)
    del os_policy, exploitability


INTERRUPTED = """
import signal, sys, metagame
# Ctrl-C as KeyboardInterrupt even where this test was started with SIGINT ignored (a shell's
# background job), which Python would otherwise keep.
signal.signal(signal.SIGINT, signal.default_int_handler)
experiment = metagame.Experiment({"game": sys.argv[2], "algorithm": sys.argv[3], "max_iterations": 100000},
                                out=sys.argv[1])
try:
    for report in experiment:
        if report["iteration"] == 3:
            print("running", flush=True)
except KeyboardInterrupt:
    # Ctrl-C inside the loop's step stops the run there; in this script's own code, close()
    # stops it (the report then says the caller stopped it).
    print("interrupted", experiment.close()["stop_reason"], flush=True)
"""


# CFR's iterations on Leduc take a few ms, so Ctrl-C mostly lands in the script's own code;
# PSRO's on liar's dice take longer than the 50 ms between the iterator's signal checks, so it
# lands while the iterator waits for the step in progress (which then hands over one more
# report, and must find the stop waiting for it).
@pytest.mark.parametrize("game,algorithm", [("leduc_poker", "cfr"), ("liars_dice", "psro")])
def test_ctrl_c_stops_the_run_with_its_folder_written(tmp_path, game, algorithm):
    child = subprocess.Popen([sys.executable, "-c", INTERRUPTED, str(tmp_path), game, algorithm],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "running"
    time.sleep(0.5)
    child.send_signal(signal.SIGINT)
    out, _ = child.communicate(timeout=60)
    word, reason = out.split()
    assert word == "interrupted" and reason in ("interrupted", "observer")
    report = json.loads((tmp_path / "report.json").read_text())
    assert report["stop_reason"] == reason
    assert (tmp_path / "report.html").is_file()


def test_python_m_metagame_run(tmp_path):
    config = ROOT / "examples" / "kuhn_psro.toml"
    done = subprocess.run([sys.executable, "-m", "metagame", "run", str(config), "--out", str(tmp_path / "a"), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r["iteration"] for r in lines] == list(range(len(lines)))
    assert without_times(json.loads((tmp_path / "a" / "report.json").read_text()))["iterations"] == [
        {k: v for k, v in r.items() if k not in ("elapsed_s", "times")} for r in lines]
    bad = subprocess.run([sys.executable, "-m", "metagame", "run", str(tmp_path / "missing.toml")],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error: ") and "cannot read" in bad.stderr
    assert len(bad.stderr.strip().splitlines()) == 1
