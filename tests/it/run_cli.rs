//! `metagame run` through the binary: run folders, JSON lines, resumption, bad input.

use serde_json::Value;

use crate::cli::{metagame, one_line_error, temp_dir};

fn example(name: &str) -> String {
    format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn write_config(dir: &std::path::Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// The JSON lines of `run --json`: one per iteration, then the summary object.
pub fn json_lines(stdout: &[u8]) -> (Vec<Value>, Value) {
    let mut lines: Vec<Value> =
        String::from_utf8_lossy(stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let summary = lines.pop().expect("a summary line");
    assert_eq!(summary["summary"], true, "{summary}");
    assert!(lines.iter().all(|l| l.get("summary").is_none()));
    (lines, summary)
}

pub fn report(dir: &std::path::Path) -> Value {
    let mut v: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap();
    for it in v["iterations"].as_array_mut().unwrap() {
        it["elapsed_s"] = Value::Null;
        it["times"] = Value::Null;
    }
    v["config"]["max_iterations"] = Value::Null;
    v
}

#[test]
fn kuhn_psro_example_writes_a_run_folder_and_json_lines() {
    let out = temp_dir("kuhn-psro");
    let o = metagame(&["run", &example("kuhn_psro.toml"), "--out", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let (lines, summary) = json_lines(&o.stdout);
    // Kuhn PSRO-nash finds an exact equilibrium and stops as converged before iteration 12.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
    assert_eq!(report["stop_reason"], "converged");
    assert_eq!(summary["stop_reason"], "converged");
    assert_eq!(summary["run_dir"], out.to_str().unwrap());
    assert_eq!(summary["iterations"], lines.len() - 1);
    assert_eq!(summary["nash_conv"], lines.last().unwrap()["nash_conv"]);
    assert_eq!(lines.len(), report["iterations"].as_array().unwrap().len());
    assert!(lines.len() < 13);
    for (k, l) in lines.iter().enumerate() {
        assert_eq!(l["iteration"], k);
        for field in ["population_sizes", "meta_strategies", "nash_conv", "elapsed_s"] {
            assert!(!l[field].is_null(), "{field}");
        }
    }
    assert!(lines.last().unwrap()["nash_conv"].as_f64().unwrap() <= 1e-9);
    for file in
        ["config.toml", "report.json", "checkpoint.json", "exploitability.svg", "payoffs.svg", "lineage.dot"]
    {
        assert!(out.join(file).exists(), "{file}");
    }
    let svg = std::fs::read_to_string(out.join("exploitability.svg")).unwrap();
    assert!(svg.contains("<svg") && svg.contains("NashConv"));
}

#[test]
fn a_killed_run_resumed_ends_with_the_same_report() {
    for config in ["kuhn_psro_sampled.toml", "leduc_xfp.toml", "rps_double_oracle.toml"] {
        let dir = temp_dir(&format!("resume-{config}"));
        let text: String = std::fs::read_to_string(example(config))
            .unwrap()
            .lines()
            .map(|l| {
                if l.starts_with("max_iterations") {
                    "max_iterations = 6\n".to_string()
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let cfg = write_config(&dir, "c.toml", &text);
        let whole = dir.join("whole");
        let o = metagame(&["run", &cfg, "--out", whole.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let killed = dir.join("killed");
        // Double Oracle on RPS converges at iteration 3: stop it before.
        let stop_after = if config.starts_with("rps") { "2" } else { "3" };
        let o =
            metagame(&["run", &cfg, "--out", killed.to_str().unwrap(), "--json", "--stop-after", stop_after]);
        assert_eq!(o.status.code(), Some(130));
        assert!(killed.join("checkpoint.json").exists() && !killed.join("report.json").exists());
        let o = metagame(&["run", &cfg, "--resume", killed.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        // The resumed process prints only the iterations it ran.
        let (printed, _) = json_lines(&o.stdout);
        assert_eq!(printed.len(), if config.starts_with("rps") { 1 } else { 3 }, "{config}");
        assert_eq!(report(&whole), report(&killed), "{config}");
    }
}

#[test]
fn bad_configs_and_checkpoints_give_one_line_and_overwrite_nothing() {
    let dir = temp_dir("bad-configs");
    let cases = [
        ("typo.toml", "game = \"kuhn_poker\"\nalgorithm = \"psro\"\niteratons = 3\n", "iteratons"),
        ("solver.toml", "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmeta_solver = \"magic\"\n", "magic"),
        ("game.toml", "game = \"chess\"\nalgorithm = \"psro\"\n", "chess"),
        ("algo.toml", "game = \"kuhn_poker\"\nalgorithm = \"alphazero\"\n", "alphazero"),
        ("symmetric.toml", "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nsymmetric = true\n", "symmetric"),
        (
            "episodes.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nepisodes_per_entry = 0\n",
            "episodes_per_entry",
        ),
    ];
    for (name, text, needle) in cases {
        let cfg = write_config(&dir, name, text);
        let out = dir.join(format!("out-{name}"));
        let err = one_line_error(&metagame(&["run", &cfg, "--out", out.to_str().unwrap()]));
        assert!(err.contains(needle), "{name}: {err}");
    }

    // A corrupt checkpoint: an error, and the file is left as it was.
    let cfg =
        write_config(&dir, "ok.toml", "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmax_iterations = 2\n");
    let run_dir = dir.join("corrupt");
    assert!(metagame(&["run", &cfg, "--out", run_dir.to_str().unwrap(), "--json"]).status.success());
    let cp = run_dir.join("checkpoint.json");
    let text = std::fs::read_to_string(&cp).unwrap();
    std::fs::write(&cp, &text[..text.len() / 2]).unwrap();
    let before = std::fs::read(&cp).unwrap();
    let report_before = std::fs::read(run_dir.join("report.json")).unwrap();
    let err = one_line_error(&metagame(&["run", &cfg, "--resume", run_dir.to_str().unwrap()]));
    assert!(err.contains("corrupt"), "{err}");
    assert_eq!(std::fs::read(&cp).unwrap(), before);
    assert_eq!(std::fs::read(run_dir.join("report.json")).unwrap(), report_before);

    // A checkpoint of another config is refused.
    let other = write_config(
        &dir,
        "other.toml",
        "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmeta_solver = \"uniform\"\n",
    );
    let run_dir = dir.join("other");
    assert!(metagame(&["run", &cfg, "--out", run_dir.to_str().unwrap(), "--json"]).status.success());
    let err = one_line_error(&metagame(&["run", &other, "--resume", run_dir.to_str().unwrap()]));
    assert!(err.contains("different config"), "{err}");
}

#[test]
fn double_oracle_example_converges_in_three_iterations() {
    let out = temp_dir("do-rps");
    let o = metagame(&["run", &example("rps_double_oracle.toml"), "--out", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success());
    let (lines, summary) = json_lines(&o.stdout);
    assert_eq!(lines.len(), 3);
    assert_eq!(summary["stop_reason"], "converged");
    assert!(lines[2]["nash_conv"].as_f64().unwrap() < 1e-12);
}

#[test]
fn a_field_the_algorithm_does_not_read_is_one_line_naming_field_and_algorithm() {
    let dir = temp_dir("unread-fields");
    let cases = [
        (
            "xfp-meta.toml",
            "game = \"leduc_poker\"\nalgorithm = \"xfp\"\nmeta_solver = \"nash\"\n",
            &["`meta_solver`", "`xfp`"][..],
        ),
        (
            "xfp-evaluator.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"xfp\"\nevaluator = \"cpu\"\n",
            &["`evaluator`", "`xfp`"],
        ),
        ("xfp-seed.toml", "game = \"kuhn_poker\"\nalgorithm = \"xfp\"\nseed = 3\n", &["`seed`", "`xfp`"]),
        (
            "do-rectified.toml",
            "game = \"matrix_rps\"\nalgorithm = \"double-oracle\"\nrectified = true\n",
            &["`rectified`", "`double-oracle`"],
        ),
        (
            "psro-tolerance.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"psro\"\ntolerance = 1e-9\n",
            &["`tolerance`", "`psro`"],
        ),
        (
            "tremble.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"psro\"\ntremble = 0.1\n",
            &["`tremble`", "exact-br"],
        ),
        (
            "episodes.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nepisodes_per_entry = 10\n",
            &["`episodes_per_entry`", "exact"],
        ),
        (
            "renamed.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"psro\"\niterations = 3\n",
            &["`iterations`", "max_iterations"],
        ),
    ];
    for (name, text, needles) in cases {
        let cfg = write_config(&dir, name, text);
        let out = dir.join(format!("out-{name}"));
        let o = metagame(&["run", &cfg, "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let err = one_line_error(&o);
        for needle in needles {
            assert!(err.contains(needle), "{name}: {err}");
        }
        assert!(!out.exists(), "{name}: nothing is written for a bad config");
    }
}

#[test]
fn solve_and_run_use_the_same_meta_solver_names() {
    // `rm` is plain regret matching and `rm+` regret matching+, in configs and `solve` alike.
    let rm = crate::cli::json_of(&metagame(&["solve", "--game", "matrix_rps", "--solver", "rm", "--json"]));
    let plus =
        crate::cli::json_of(&metagame(&["solve", "--game", "matrix_rps", "--solver", "rm+", "--json"]));
    assert_eq!(rm["solver"], "rm");
    assert_eq!(plus["solver"], "rm+");
    let err = one_line_error(&metagame(&["solve", "--game", "matrix_rps", "--solver", "regret-matching"]));
    assert!(err.contains("rm+") && err.contains("plain regret matching"), "{err}");
    let dir = temp_dir("same-names");
    for name in ["rm", "rm+", "nash", "lp"] {
        let text = format!(
            "game = \"matrix_rps\"\nalgorithm = \"psro\"\nmeta_solver = \"{name}\"\nmax_iterations = 2\n"
        );
        let cfg = write_config(&dir, &format!("{name}.toml"), &text);
        let out = dir.join(format!("out-{name}"));
        let o = metagame(&["run", &cfg, "--out", out.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
    }
}

/// Ctrl-C (SIGINT) or SIGTERM at some moment of a long run: the run stops after the step in
/// progress, leaves `report.json`, its figures and `report.html` for what it did, says how
/// to continue, and exits 130 (143 for SIGTERM); `--resume` then ends with the
/// uninterrupted run's report.
#[test]
fn a_signal_stops_a_run_with_its_report_and_the_resume_is_the_uninterrupted_run() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = temp_dir("signal");
    // Leduc PSRO to 400 iterations: seconds, so the signal lands mid-run.
    let text = std::fs::read_to_string(example("leduc_psro.toml")).unwrap();
    let config =
        write_config(&dir, "leduc400.toml", &text.replace("max_iterations = 100", "max_iterations = 400"));
    let whole = dir.join("whole");
    let o = metagame(&["run", &config, "--out", whole.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // A different moment each time the test runs, derived from the clock.
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().subsec_nanos();
    for (signal, code, delay_ms) in [("INT", 130, 200 + u64::from(nanos % 600)), ("TERM", 143, 300)] {
        let run = dir.join(format!("stopped-{signal}"));
        let _ = std::fs::remove_dir_all(&run);
        let child = Command::new(env!("CARGO_BIN_EXE_metagame"))
            .args(["run", &config, "--out", run.to_str().unwrap()])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Once its first checkpoint is there, the run is under way.
        let started = Instant::now();
        while !run.join("checkpoint.json").exists() && started.elapsed() < Duration::from_secs(60) {
            std::thread::sleep(Duration::from_millis(10));
        }
        std::thread::sleep(Duration::from_millis(delay_ms));
        let sent =
            Command::new("kill").args([&format!("-{signal}"), &child.id().to_string()]).status().unwrap();
        assert!(sent.success());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {stderr}");
        assert!(stderr.contains("metagame run --resume"), "{stderr}");
        for file in ["report.json", "report.html", "exploitability.svg", "payoffs.svg", "meta_game.nfg"] {
            assert!(run.join(file).is_file(), "SIG{signal}: {file} missing");
        }
        let stopped = report(&run);
        assert_eq!(stopped["stop_reason"], "interrupted", "SIG{signal}");
        let done = stopped["iterations"].as_array().unwrap().len();
        assert!(done >= 1 && done < report(&whole)["iterations"].as_array().unwrap().len(), "{done}");
        let o = metagame(&["run", "--resume", run.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(report(&run), report(&whole), "SIG{signal}: the resumed run");
    }
}

/// `plot --x episodes` on runs that played no episodes is an error naming them, not a
/// vertical line at 0.
#[test]
fn plot_by_episodes_refuses_runs_without_episodes() {
    let dir = temp_dir("plot-no-episodes");
    let run = dir.join("kuhn");
    let o = metagame(&["run", &example("kuhn_psro.toml"), "--out", run.to_str().unwrap(), "--overwrite"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = dir.join("fig.svg");
    let err = one_line_error(&metagame(&[
        "plot",
        run.to_str().unwrap(),
        "--x",
        "episodes",
        "--out",
        out.to_str().unwrap(),
    ]));
    assert!(err.contains("played no episodes") && err.contains(run.to_str().unwrap()), "{err}");
    assert!(!out.exists());
}

/// `plot` refuses a report with nothing to draw (no iterations, or no NashConv at all) or
/// with a NashConv that is not a value (±1e308) with one line and exit 2, and writes no
/// figure; the same report with finite values draws, leaving out iterations a schedule did
/// not evaluate (null).
#[test]
fn plot_refuses_reports_without_iterations_or_with_non_finite_nash_conv() {
    let dir = temp_dir("plot-refusals");
    let iteration = |k: usize, nash_conv: Value| serde_json::json!({ "iteration": k, "nash_conv": nash_conv, "episodes": 0, "elapsed_s": 0.1 * k as f64 });
    let cases: [(&str, Vec<Value>, &str); 6] = [
        ("empty", vec![], "no iterations to plot"),
        ("huge", vec![iteration(0, 0.5.into()), iteration(1, 1e308.into())], "not a value to plot"),
        ("negative", vec![iteration(0, (-1e308).into()), iteration(1, 0.2.into())], "not a value to plot"),
        ("none", vec![iteration(0, Value::Null), iteration(1, Value::Null)], "no iteration has a NashConv"),
        (
            "scheduled",
            vec![iteration(0, 0.5.into()), iteration(1, Value::Null), iteration(2, 0.2.into())],
            "",
        ),
        ("fine", vec![iteration(0, 0.5.into()), iteration(1, 0.25.into())], ""),
    ];
    for (name, iterations, message) in cases {
        let run = dir.join(name);
        std::fs::create_dir_all(&run).unwrap();
        let report = serde_json::json!({
            "config": { "game": "kuhn_poker", "algorithm": "xfp", "seed": 0 },
            "iterations": iterations,
        });
        std::fs::write(run.join("report.json"), report.to_string()).unwrap();
        let out = dir.join(format!("{name}.svg"));
        let o = metagame(&["plot", run.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        if message.is_empty() {
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            assert!(out.is_file());
            continue;
        }
        let err = one_line_error(&o);
        assert!(err.contains(message) && err.contains("report.json"), "{name}: {err}");
        assert!(!out.exists(), "{name}: a figure was written");
    }
}

/// A run that was killed (or is still going) has no report.json yet; `plot` draws it from
/// its checkpoint.
#[test]
fn plot_draws_a_killed_run_from_its_checkpoint() {
    let dir = temp_dir("plot-killed");
    let run = dir.join("killed");
    let o = metagame(&[
        "run",
        &example("leduc_psro.toml"),
        "--out",
        run.to_str().unwrap(),
        "--overwrite",
        "--stop-after",
        "4",
    ]);
    assert_eq!(o.status.code(), Some(130), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(!run.join("report.json").exists() && run.join("checkpoint.json").exists());
    let out = dir.join("fig.svg");
    let o = metagame(&["plot", run.to_str().unwrap(), "--out", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.starts_with("<svg") || svg.contains("<svg"), "not a figure");
}

/// `--json` lines are a log of committed iterations: when a line is printed, its iteration
/// is already in the checkpoint (checked at every line of a run of fast iterations, where a
/// checkpoint written behind the loop would lag).
#[test]
fn json_lines_are_printed_only_after_their_checkpoint() {
    use std::io::BufRead;
    use std::process::{Command, Stdio};
    let dir = temp_dir("durable-json");
    let config =
        write_config(&dir, "xfp.toml", "game = \"kuhn_poker\"\nalgorithm = \"xfp\"\nmax_iterations = 300\n");
    let run = dir.join("run");
    let _ = std::fs::remove_dir_all(&run);
    let mut child = Command::new(env!("CARGO_BIN_EXE_metagame"))
        .args(["run", &config, "--out", run.to_str().unwrap(), "--json"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
    let mut checked = 0;
    for line in lines {
        let line: Value = serde_json::from_str(&line.unwrap()).unwrap();
        let Some(iteration) = line["iteration"].as_u64() else { continue };
        let saved: Value =
            serde_json::from_slice(&std::fs::read(run.join("checkpoint.json")).unwrap()).unwrap();
        // The checkpoint covers the history log's first `records` iterations.
        let last = saved["payload"]["history"]["records"].as_u64().unwrap() - 1;
        assert!(last >= iteration, "line of iteration {iteration} printed with the checkpoint at {last}");
        checked += 1;
    }
    assert!(child.wait().unwrap().success());
    assert_eq!(checked, 301);
}

/// A 2 000-round league (about 1 000 members) killed with SIGKILL at 20 moments, resumed after
/// each: the report equals the uninterrupted run's. Half the legs print `--json` (each
/// checkpoint waited for), half let the checkpoints lag behind the loop, so kills land
/// between a history record and the checkpoint that covers it, too.
#[test]
fn a_long_league_killed_at_twenty_moments_resumes_to_the_uninterrupted_run() {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = temp_dir("league-kills");
    let cfg = write_config(
        &dir,
        "league.toml",
        "game = \"kuhn_poker\"\nalgorithm = \"league\"\nepisodes_per_round = 200\nepisodes_per_match = 100\n\
         snapshot_min_episodes = 600\nsnapshot_max_episodes = 1200\neval_every = 0\nmax_iterations = 2000\n\
         [learner]\nbatch_size = 50\n",
    );
    let whole = dir.join("whole");
    let o = metagame(&["run", &cfg, "--out", whole.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = dir.join("killed");
    let rounds_logged =
        || std::fs::read(run.join("history.jsonl")).map_or(0, |b| b.iter().filter(|&&c| c == b'\n').count());
    let mut kills = 0;
    for k in 0..20 {
        let target = 50 + 97 * k;
        let mut args = vec!["run".to_string()];
        if k == 0 {
            args.extend([cfg.clone(), "--out".into(), run.to_string_lossy().into_owned()]);
        } else {
            args.extend(["--resume".into(), run.to_string_lossy().into_owned()]);
        }
        if k % 2 == 1 {
            args.push("--json".into());
        }
        let mut child = Command::new(env!("CARGO_BIN_EXE_metagame"))
            .args(&args)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let started = Instant::now();
        while rounds_logged() < target && started.elapsed() < Duration::from_secs(120) {
            if child.try_wait().unwrap().is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        if child.try_wait().unwrap().is_none() {
            child.kill().unwrap();
            kills += 1;
        }
        child.wait().unwrap();
    }
    assert!(kills >= 15, "only {kills} of 20 kills landed before the run ended");
    let o = metagame(&["run", "--resume", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(report(&whole), report(&run));
}

/// A run refreshes its folder's report, figures and page while it goes on (here after every
/// iteration's checkpoint, with no wait): a run killed at iteration 5 leaves a report of its
/// committed iterations marked `running`, which `plot` draws, and `--resume` ends with the
/// uninterrupted run's report.
#[test]
fn a_running_run_refreshes_its_report_and_a_killed_one_keeps_it() {
    use metagame::{ExperimentConfig, RunOptions, run_experiment};
    use std::ops::ControlFlow;
    use std::path::Path;
    let dir = temp_dir("refresh");
    let text = std::fs::read_to_string(example("kuhn_league.toml")).unwrap();
    let config = ExperimentConfig::from_toml_str(&text, Path::new("kuhn_league.toml")).unwrap();
    let whole = dir.join("whole");
    let reference = run_experiment(&config, &RunOptions::new(&whole), &mut |_| ControlFlow::Continue(()))
        .unwrap()
        .unwrap();
    let killed = dir.join("killed");
    let options = RunOptions::new(&killed).refresh_every(Some(std::time::Duration::ZERO)).stop_after(Some(5));
    assert!(run_experiment(&config, &options, &mut |_| ControlFlow::Continue(())).unwrap().is_none());
    let running: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(killed.join("report.json")).unwrap()).unwrap();
    assert_eq!(running["stop_reason"], "running");
    let n = running["iterations"].as_array().unwrap().len();
    assert!((1..=6).contains(&n), "{n} iterations in the refreshed report");
    for file in ["report.html", "exploitability.svg", "win_rates.svg"] {
        assert!(killed.join(file).is_file(), "{file}");
    }
    let o = metagame(&["plot", killed.to_str().unwrap(), "--out", dir.join("p.svg").to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let resumed =
        run_experiment(&config, &RunOptions::new(&killed).resume(true), &mut |_| ControlFlow::Continue(()))
            .unwrap()
            .unwrap();
    assert_eq!(resumed.stop_reason, reference.stop_reason);
    let strip = |r: &metagame::RunReport| {
        r.iterations.iter().map(|i| (i.iteration, i.nash_conv.unwrap().to_bits())).collect::<Vec<_>>()
    };
    assert_eq!(strip(&resumed), strip(&reference));
}

/// A CFR run evaluates NashConv on a schedule (`nash_conv: null` between evaluations) and a
/// PSRO run on connect four only estimates it: `plot` draws both.
#[test]
fn plot_draws_scheduled_and_estimated_runs() {
    let dir = temp_dir("plot-scheduled");
    let configs = [
        ("cfr", "game = \"kuhn_poker\"\nalgorithm = \"cfr\"\nmax_iterations = 60\n"),
        (
            "c4",
            "game = \"connect_four\"\nalgorithm = \"psro\"\noracle = \"ppo\"\nevaluator = \"rollout\"\n\
             episodes_per_entry = 50\nmax_iterations = 1\napproximate_every = 1\napproximate_budget = 100\n\
             approximate_episodes = 100\n[learner]\nepisodes_per_response = 100\n",
        ),
    ];
    for (name, text) in configs {
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(&config, text).unwrap();
        let run = dir.join(name);
        let o = metagame(&["run", config.to_str().unwrap(), "--out", run.to_str().unwrap(), "--overwrite"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = dir.join(format!("{name}.svg"));
        let o = metagame(&["plot", run.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", String::from_utf8_lossy(&o.stderr));
        assert!(out.is_file());
        let said = String::from_utf8_lossy(&o.stderr).to_string();
        assert_eq!(said.contains("plotting its estimates"), name == "c4", "{said}");
    }
}
