//! Time budgets honoured inside a step (issue 21 item 4): PSRO's sampled payoff entries and
//! learned responses, FXP's steps toward its best responses, and `metagame respond`'s Ctrl-C,
//! each given up at batch granularity with the state of the last committed iteration; the
//! league's rounds and evaluation points likewise, on the budget or on Ctrl-C.

use std::ops::ControlFlow;
use std::path::Path;
use std::time::{Duration, Instant};

use metagame::games::{GameTree, SampledEvaluator, registry};
use metagame::populations::{Cutoff, ExactBestResponse};
use metagame::populations::{
    Fxp, FxpConfig, IterationReport, Psro, PsroConfig, RunLimits, StopReason, run_loop, run_loop_with,
};
use metagame::solvers::lp::LpNash;
use serde_json::Value;

use crate::cli::{metagame, temp_dir};

/// A budget of 1 s stops well within this, on a loaded 2-core machine.
const GENEROUS: Duration = Duration::from_secs(20);

fn write_config(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn report(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("report.json")).unwrap()).unwrap()
}

/// `metagame run ARGS`, timed.
fn timed_run(args: &[&str]) -> (std::process::Output, Duration) {
    let started = Instant::now();
    let out = metagame(args);
    (out, started.elapsed())
}

/// `metagame ARGS` sent SIGINT 1.5 s after it started; its output, once it has stopped
/// (which must be soon after the signal).
fn interrupted_after_a_moment(args: &[&str]) -> std::process::Output {
    use std::process::{Command, Stdio};
    let child = Command::new(env!("CARGO_BIN_EXE_metagame"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    let sent = Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap();
    assert!(sent.success());
    let started = Instant::now();
    let o = child.wait_with_output().unwrap();
    assert!(started.elapsed() < GENEROUS, "stopped {:?} after the signal", started.elapsed());
    o
}

/// PSRO's initial entry of 10^12 sampled episodes (the cap) under a budget of 1 s: the run
/// stops as time budget with nothing committed (a report without iterations, no
/// checkpoint), and `--resume` starts it again, to the same stop.
#[test]
fn psro_with_sampled_entries_of_the_cap_stops_at_its_time_budget() {
    let dir = temp_dir("budget-psro-cpu");
    let config = write_config(
        &dir,
        "huge.toml",
        "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nevaluator = \"cpu\"\n\
         episodes_per_entry = 1000000000000\ntime_budget_seconds = 1\nmax_iterations = 5\n",
    );
    let run = dir.join("run");
    let (o, took) = timed_run(&["run", &config, "--out", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(took < GENEROUS, "a 1 s budget stopped after {took:?}");
    assert!(String::from_utf8_lossy(&o.stdout).contains("no iteration committed (time budget)"));
    let stopped = report(&run);
    assert_eq!(stopped["stop_reason"], "time_budget");
    assert_eq!(stopped["iterations"].as_array().unwrap().len(), 0, "iteration 0 was cut");
    assert!(!run.join("checkpoint.json").exists());
    let (o, took) = timed_run(&["run", "--resume", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(took < GENEROUS, "the resumed run stopped after {took:?}");
    assert_eq!(report(&run)["stop_reason"], "time_budget");
}

/// PSRO with a learned oracle of 10^12 episodes per response: iteration 0 (no response) is
/// committed, iteration 1's first response is cut; `--resume` continues from that
/// checkpoint and is cut in the same place.
#[test]
fn psro_with_learned_responses_of_the_cap_is_cut_and_resumes() {
    let dir = temp_dir("budget-psro-q");
    let text = "game = \"kuhn_poker\"\nalgorithm = \"psro\"\noracle = \"q-learning\"\n\
                time_budget_seconds = 1\nmax_iterations = 5\n\
                [learner]\nepisodes_per_response = 1000000000000\n";
    let config = write_config(&dir, "huge.toml", text);
    let run = dir.join("run");
    let (o, took) = timed_run(&["run", &config, "--out", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(took < GENEROUS, "a 1 s budget stopped after {took:?}");
    let stopped = report(&run);
    assert_eq!(stopped["stop_reason"], "time_budget");
    assert_eq!(stopped["iterations"].as_array().unwrap().len(), 1, "only iteration 0 was committed");
    assert!(run.join("checkpoint.json").is_file());
    // A longer budget for the resumed run: it continues from iteration 0 and is cut again.
    let longer = write_config(
        &dir,
        "longer.toml",
        &text.replace("time_budget_seconds = 1", "time_budget_seconds = 2"),
    );
    let (o, took) = timed_run(&["run", &longer, "--resume", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(took < GENEROUS, "the resumed run stopped after {took:?}");
    let resumed = report(&run);
    assert_eq!(resumed["stop_reason"], "time_budget");
    assert_eq!(resumed["iterations"], stopped["iterations"]);
}

fn psro<'t>(tree: &'t GameTree, episodes_per_entry: u64) -> Psro<'t> {
    let config = PsroConfig::builder().episodes_per_entry(episodes_per_entry).seed(3).build().unwrap();
    Psro::new(
        tree,
        config,
        Box::new(LpNash::default()),
        Box::new(ExactBestResponse::default()),
        Box::new(SampledEvaluator::new()),
    )
    .unwrap()
}

/// A PSRO step whose new entries are 10^12 sampled episodes each, after two cheap committed
/// iterations: cut within the budget, the state and history as they were, and the state
/// resumes to the run that never met the huge step.
#[test]
fn a_cut_psro_step_leaves_the_state_of_the_last_committed_iteration() {
    let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    let mut cheap = psro(&tree, 2000);
    let run = run_loop(&mut cheap, &RunLimits::iterations(2), &mut ()).unwrap();
    let (state, mut reports) = (cheap.state().clone(), run.reports);
    let config = PsroConfig::builder().episodes_per_entry(1_000_000_000_000).seed(3).build().unwrap();
    let mut huge = Psro::resume(
        &tree,
        config,
        Box::new(LpNash::default()),
        Box::new(ExactBestResponse::default()),
        Box::new(SampledEvaluator::new()),
        state.clone(),
        &reports,
    )
    .unwrap();
    let limits = RunLimits::builder().max_iterations(5).time_budget_seconds(1.0).build().unwrap();
    let started = Instant::now();
    let stop = run_loop_with(&mut huge, &mut reports, &limits, &Cutoff::never(), &mut (), &mut |_, _| {
        Ok(ControlFlow::Continue(()))
    })
    .unwrap();
    assert!(started.elapsed() < GENEROUS, "a 1 s budget stopped after {:?}", started.elapsed());
    assert_eq!(stop, StopReason::TimeBudget);
    assert_eq!(reports.len(), 3, "iterations 0 to 2, nothing of the cut step");
    assert_eq!(huge.state(), &state);
    // The state after the cut goes on as the run that never met it.
    let mut continued = psro(&tree, 2000);
    run_loop(&mut continued, &RunLimits::iterations(3), &mut ()).unwrap();
    let mut resumed = Psro::resume(
        &tree,
        PsroConfig::builder().episodes_per_entry(2000).seed(3).build().unwrap(),
        Box::new(LpNash::default()),
        Box::new(ExactBestResponse::default()),
        Box::new(SampledEvaluator::new()),
        huge.state().clone(),
        &reports,
    )
    .unwrap();
    resumed.step().unwrap();
    assert_eq!(resumed.state(), continued.state());
    let timeless = |r: &IterationReport| r.without_times();
    assert_eq!(timeless(resumed.last_report()), timeless(continued.last_report()));
}

/// FXP whose main policy would take 10^9 tiny steps: the budget cuts them, and the state is
/// iteration 0's.
#[test]
fn a_time_budget_cuts_fxp_between_its_policy_steps() {
    let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    let config = FxpConfig::builder().learning_rate(1e-9).max_steps(1_000_000_000).build().unwrap();
    let mut fxp = Fxp::exact(&tree, config).unwrap();
    let before = fxp.state().clone();
    let limits = RunLimits::builder().max_iterations(3).time_budget_seconds(1.0).build().unwrap();
    let started = Instant::now();
    let run = run_loop(&mut fxp, &limits, &mut ()).unwrap();
    assert!(started.elapsed() < GENEROUS, "a 1 s budget stopped after {:?}", started.elapsed());
    assert_eq!(run.stop_reason, StopReason::TimeBudget);
    assert_eq!(run.reports.len(), 1);
    assert_eq!(fxp.state(), &before);
}

/// Ctrl-C during `metagame respond` of 10^12 episodes: training stops at the next batch, the
/// response learned so far is scored and written, and the command exits 130.
#[test]
fn ctrl_c_stops_respond_between_batches_with_its_response() {
    let dir = temp_dir("budget-respond");
    let out = dir.join("response.json");
    let o = interrupted_after_a_moment(&[
        "respond",
        "--game",
        "kuhn_poker",
        "--against",
        "uniform",
        "--learner",
        "q-learning",
        "--episodes",
        "1000000000000",
        "--json",
        "--out",
        out.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("interrupted after"), "{stderr}");
    let stdout = String::from_utf8_lossy(&o.stdout);
    let summary: Value = serde_json::from_str(stdout.lines().last().unwrap()).unwrap();
    assert_eq!(summary["interrupted"], true);
    let episodes = summary["episodes"].as_u64().unwrap();
    // Whole batches of the default 1024 episodes.
    assert!(episodes > 0 && episodes.is_multiple_of(1024), "{episodes}");
    assert!(summary["gap"].as_f64().unwrap() >= 0.0);
    assert!(out.is_file());
}

fn league_config(dir: &Path, extra: &str) -> String {
    let text = format!("game = \"kuhn_poker\"\nalgorithm = \"league\"\nmax_iterations = 20\n{extra}");
    write_config(dir, "league.toml", &text)
}

/// A league round of 10^12 episodes (the cap) in matches of 10^11 under a budget of 1 s:
/// the first match's training is cut between its learners' batches, so the run stops as
/// time budget with round 0 saved, and `--resume` is cut in the same place.
#[test]
fn a_league_round_of_the_cap_stops_at_its_time_budget_with_the_last_round_saved() {
    let dir = temp_dir("budget-league");
    let config = league_config(
        &dir,
        "episodes_per_round = 1000000000000\nepisodes_per_match = 100000000000\ntime_budget_seconds = 1\n",
    );
    let run = dir.join("run");
    for args in
        [vec!["run", &config, "--out", run.to_str().unwrap()], vec!["run", "--resume", run.to_str().unwrap()]]
    {
        let (o, took) = timed_run(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert!(took < GENEROUS, "a 1 s budget stopped after {took:?}");
        let stopped = report(&run);
        assert_eq!(stopped["stop_reason"], "time_budget");
        assert_eq!(stopped["iterations"].as_array().unwrap().len(), 1, "round 1 was cut");
        assert!(run.join("checkpoint.json").is_file());
    }
}

/// A league whose evaluation point samples 10^12 episodes per entry: the rounds before it are
/// committed, the point itself is cut by the budget, and the run stops with them saved.
#[test]
fn a_league_evaluation_point_is_cut_by_the_time_budget() {
    let dir = temp_dir("budget-league-eval");
    let config = league_config(
        &dir,
        "episodes_per_round = 2000\neval_every = 3\nevaluator = \"cpu\"\n\
         episodes_per_entry = 1000000000000\ntime_budget_seconds = 2\n",
    );
    let run = dir.join("run");
    let (o, took) = timed_run(&["run", &config, "--out", run.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(took < GENEROUS, "a 2 s budget stopped after {took:?}");
    let stopped = report(&run);
    assert_eq!(stopped["stop_reason"], "time_budget");
    // Rounds 0, 1 and 2; round 3's evaluation point was cut.
    assert_eq!(stopped["iterations"].as_array().unwrap().len(), 3);
}

/// Ctrl-C inside a league round of 10^12 episodes: the round in progress is abandoned at
/// its learners' next batch, and the run writes its report and page for round 0 and exits
/// 130.
#[test]
fn ctrl_c_inside_a_league_round_stops_the_run_with_its_report() {
    let dir = temp_dir("budget-league-ctrl-c");
    let config =
        league_config(&dir, "episodes_per_round = 1000000000000\nepisodes_per_match = 100000000000\n");
    let run = dir.join("run");
    let o = interrupted_after_a_moment(&["run", &config, "--out", run.to_str().unwrap()]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(130), "{stderr}");
    assert!(stderr.contains("metagame run --resume"), "{stderr}");
    assert_eq!(report(&run)["stop_reason"], "interrupted");
    assert!(run.join("report.html").is_file());
}
