//! Learned responses as a user runs them (issue 11): PSRO with the `q-learning`,
//! `actor-critic` and `minimax-q` oracles from configs, their `response_gap`, and
//! `metagame respond`.

use std::path::Path;

use metagame::populations::{IterationReport, RunLimits};
use metagame::{ExperimentConfig, RunOptions, run_experiment};
use serde_json::Value;

use crate::cli::{metagame, one_line_error, temp_dir};

fn example(name: &str) -> String {
    format!("{}/examples/{name}.toml", env!("CARGO_MANIFEST_DIR"))
}

fn config(text: &str) -> ExperimentConfig {
    ExperimentConfig::from_toml_str(text, Path::new("<test>")).unwrap()
}

fn run(config: &ExperimentConfig, name: &str) -> Vec<IterationReport> {
    let options = RunOptions::new(temp_dir(name));
    let report = run_experiment(config, &options, &mut |_| std::ops::ControlFlow::Continue(())).unwrap();
    report.unwrap().iterations
}

/// The report without its timing fields.
fn timeless(reports: &[IterationReport]) -> Vec<IterationReport> {
    reports.iter().map(IterationReport::without_times).collect()
}

#[test]
fn kuhn_psro_with_learned_responses_reaches_an_equilibrium_and_reports_its_gaps() {
    let config = ExperimentConfig::read(Path::new(&example("kuhn_psro_rl"))).unwrap();
    let reports = run(&config, "kuhn-psro-rl");
    for r in &reports[1..] {
        assert_eq!(r.episodes, 2 * 20_000, "iteration {}: two responses of 20 000 episodes", r.iteration);
        assert_eq!(r.response_gap.len(), 2);
        // Kuhn's payoffs span [-2, 2]: each learned response within 1% of the range.
        assert!(r.response_gap.iter().all(|&g| (0.0..0.04).contains(&g)), "{:?}", r.response_gap);
    }
    assert!(reports[0].response_gap.is_empty());
    let last = reports.last().unwrap();
    assert!(last.nash_conv.unwrap() < 1e-3, "final NashConv {}", last.nash_conv.unwrap());
}

#[test]
fn leduc_psro_with_learned_responses_improves_and_its_gaps_are_measured() {
    let config = ExperimentConfig::read(Path::new(&example("leduc_psro_rl"))).unwrap();
    let config = config.with_limits(RunLimits::iterations(20));
    let reports = run(&config, "leduc-psro-rl");
    assert_eq!(reports.len(), 21);
    let gaps: Vec<f64> = reports[1..].iter().flat_map(|r| r.response_gap.iter().copied()).collect();
    assert_eq!(gaps.len(), 40);
    // Leduc's payoffs span [-13, 13]: every learned response within 5% of the range, and
    // they are learned, not exact (some gap is positive).
    assert!(gaps.iter().all(|&g| (0.0..1.3).contains(&g)), "{gaps:?}");
    assert!(gaps.iter().any(|&g| g > 1e-6), "{gaps:?}");
    assert!(
        reports[20].nash_conv.unwrap() < 0.6 * reports[0].nash_conv.unwrap(),
        "{} -> {}",
        reports[0].nash_conv.unwrap(),
        reports[20].nash_conv.unwrap()
    );
}

#[test]
fn minimax_q_with_alpha_zero_is_q_learning_bit_for_bit_and_shaping_changes_the_run() {
    let base = "game = \"leduc_poker\"\nalgorithm = \"psro\"\nmax_iterations = 4\nseed = 3\n";
    let plain = config(&format!("{base}oracle = \"q-learning\"\n[learner]\nepisodes_per_response = 20000\n"));
    let minimax = |alpha: f64| {
        config(&format!(
            "{base}oracle = \"minimax-q\"\n[learner]\nepisodes_per_response = 20000\n[learner.shaping]\nalpha = {alpha}\n"
        ))
    };
    let a = timeless(&run(&plain, "mmq-plain"));
    let b = timeless(&run(&minimax(0.0), "mmq-zero"));
    assert_eq!(a, b);
    // With α > 0 every response but the first is shaped by the values of the other seat's
    // newest response (in iteration 1, seat 1's by seat 0's, trained just before it).
    let c = timeless(&run(&minimax(0.5), "mmq-half"));
    assert_eq!(a[1].response_gap[0], c[1].response_gap[0], "seat 0 has no main-agent values yet");
    assert_ne!(a[1].response_gap[1], c[1].response_gap[1]);
    assert_ne!(a[2..], c[2..]);
}

#[test]
fn actor_critic_oracle_runs_from_a_config() {
    let c = config(
        "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmax_iterations = 3\noracle = \"actor-critic\"\n\
         [learner]\nepisodes_per_response = 5000\noutput = \"average\"\n",
    );
    let reports = run(&c, "ac-psro");
    assert_eq!(reports.len(), 4);
    assert!(reports[1..].iter().all(|r| r.episodes == 10_000 && r.response_gap.len() == 2));
}

#[test]
fn bad_learner_tables_name_the_field() {
    let base = "game = \"kuhn_poker\"\nalgorithm = \"psro\"\n";
    for (extra, expected) in [
        ("oracle = \"exact-br\"\n[learner]\nepisodes_per_response = 5\n", "not read by oracle `exact-br`"),
        ("oracle = \"q-learning\"\n[learner]\nepisodes_per_response = 0\n", "episodes_per_response"),
        ("oracle = \"q-learning\"\n[learner]\nepsiodes = 5\n", "unknown field `epsiodes`"),
        ("oracle = \"minimax-q\"\n[learner.shaping]\nalpha = 1.5\n", "alpha: 1.5 is not in [0, 1]"),
        ("oracle = \"q-learning\"\nlearner = 3\n", "learner: expected a table"),
        ("oracle = \"sarsa\"\n", "unknown oracle `sarsa`"),
    ] {
        let err =
            ExperimentConfig::from_toml_str(&format!("{base}{extra}"), Path::new("bad.toml")).unwrap_err();
        assert!(err.to_string().contains(expected), "{extra}: {err}");
        assert_eq!(err.to_string().lines().count(), 1);
    }
}

fn json_lines(out: &std::process::Output) -> Vec<Value> {
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8_lossy(&out.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect()
}

#[test]
fn respond_scores_a_learned_response_against_the_exact_one() {
    let dir = temp_dir("respond");
    let policy = dir.join("policy.json");
    let lines = json_lines(&metagame(&[
        "respond",
        "--game",
        "leduc_poker",
        "--against",
        "uniform",
        "--seat",
        "1",
        "--learner",
        "q-learning",
        "--episodes",
        "200000",
        "--points",
        "4",
        "--seed",
        "5",
        "--json",
        "--out",
        policy.to_str().unwrap(),
    ]));
    assert_eq!(lines.len(), 5, "4 points and a summary");
    let episodes: Vec<u64> = lines[..4].iter().map(|l| l["episodes"].as_u64().unwrap()).collect();
    assert_eq!(episodes, [50_000, 100_000, 150_000, 200_000]);
    let summary = &lines[4];
    assert_eq!(summary["summary"], true);
    let gap = summary["gap"].as_f64().unwrap();
    let best = summary["best_response_value"].as_f64().unwrap();
    assert!((summary["value"].as_f64().unwrap() + gap - best).abs() < 1e-9);
    assert!(summary["gap_fraction_of_range"].as_f64().unwrap() < 0.05, "{summary}");

    // The written policy plays as well as the summary says.
    let v = json_lines(&metagame(&[
        "exploitability",
        "--game",
        "leduc_poker",
        "--policy",
        policy.to_str().unwrap(),
        "--json",
    ]));
    assert_eq!(v.len(), 1);

    // minimax-q shapes with the main policy's values; α = 0 is plain Q-learning.
    let run = |learner: &str, extra: &[&str]| {
        let mut args = vec![
            "respond",
            "--game",
            "kuhn_poker",
            "--against",
            "uniform",
            "--learner",
            learner,
            "--episodes",
            "3000",
            "--points",
            "1",
            "--json",
        ];
        args.extend_from_slice(extra);
        json_lines(&metagame(&args))[0]["value"].as_f64().unwrap()
    };
    assert_eq!(run("q-learning", &[]), run("minimax-q", &["--alpha", "0"]));
}

#[test]
fn respond_rejects_bad_input_in_one_line() {
    let dir = temp_dir("respond-bad");
    let leduc = dir.join("leduc.json");
    let o = metagame(&[
        "respond",
        "--game",
        "leduc_poker",
        "--against",
        "uniform",
        "--learner",
        "q-learning",
        "--episodes",
        "10",
        "--points",
        "1",
        "--json",
        "--out",
        leduc.to_str().unwrap(),
    ]);
    assert!(o.status.success());
    let base = ["respond", "--game", "kuhn_poker", "--against", "uniform"];
    for (extra, expected) in [
        (vec!["--learner", "sarsa", "--episodes", "10"], "unknown learner `sarsa`"),
        (vec!["--learner", "minimax-q", "--episodes", "10", "--alpha", "2"], "alpha: 2 is not in [0, 1]"),
        (vec!["--learner", "minimax-q", "--episodes", "10", "--alpha", "-0.5"], "is not in [0, 1]"),
        (
            vec!["--learner", "q-learning", "--episodes", "10", "--alpha", "0.2"],
            "only by --learner minimax-q",
        ),
        (vec!["--learner", "minimax-q", "--episodes", "10", "--main", leduc.to_str().unwrap()], "--main"),
        (vec!["--learner", "q-learning", "--episodes", "10", "--seat", "2"], "--seat 2 does not exist"),
    ] {
        let mut args = base.to_vec();
        args.extend(extra.iter().copied());
        let err = one_line_error(&metagame(&args));
        assert!(err.contains(expected), "{extra:?}: {err}");
    }
    // A zero budget is refused by the argument parser (exit 2, no panic).
    let o = metagame(&[
        "respond",
        "--game",
        "kuhn_poker",
        "--against",
        "uniform",
        "--learner",
        "q-learning",
        "--episodes",
        "0",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("'0'"));
}

#[test]
fn plot_draws_seeds_of_one_config_as_a_mean_with_a_band_beside_another_config() {
    let dir = temp_dir("plot");
    let mut runs = Vec::new();
    for seed in 0..3 {
        let cfg = dir.join(format!("seed{seed}.toml"));
        let text = std::fs::read_to_string(example("kuhn_psro_sampled")).unwrap();
        let text: String = text
            .lines()
            .map(|l| if l.starts_with("seed") { format!("seed = {seed}") } else { l.to_string() })
            .map(|l| if l.starts_with("max_iterations") { "max_iterations = 4".to_string() } else { l })
            .collect::<Vec<_>>()
            .join("\n");
        std::fs::write(&cfg, text).unwrap();
        let out = dir.join(format!("run{seed}"));
        let o = metagame(&["run", cfg.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        runs.push(out);
    }
    let exact = dir.join("exact");
    let o = metagame(&["run", &example("kuhn_psro"), "--out", exact.to_str().unwrap(), "--json"]);
    assert!(o.status.success());
    let figure = dir.join("cmp.svg");
    let mut args: Vec<&str> = vec!["plot"];
    args.extend(runs.iter().map(|r| r.to_str().unwrap()));
    args.extend([exact.to_str().unwrap(), "--out", figure.to_str().unwrap()]);
    let o = metagame(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains(": 3 run(s)") && stdout.contains(": 1 run(s)"), "{stdout}");
    let svg = std::fs::read_to_string(&figure).unwrap();
    assert!(svg.contains("mean of 3; band: their range"), "the seeds are one curve with a band");
    assert!(svg.contains("<polygon"), "the band is drawn");
    // Not a run folder: one line, exit 2.
    let err = one_line_error(&metagame(&["plot", dir.to_str().unwrap()]));
    assert!(err.contains("no report.json"), "{err}");
}
