//! Issue 10: one `TrainingLoop` driver for every algorithm, atomic steps, the `Oracle`
//! request, and reports equal to the ones made before the change (tests/fixtures/reports).

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use metagame::games::{ExactEvaluator, GameTree, MatchEvaluator, MatchTotals, Matchup, PlayerId, registry};
use metagame::populations::{
    ExactBestResponse, Oracle, Psro, PsroConfig, Response, ResponseRequest, RunLimits, StopReason,
    TrainingStats, run_loop,
};
use metagame::{
    Components, ExperimentConfig, RunCheckpoint, RunOptions, RunReport, run_experiment, run_experiment_with,
};
use serde_json::Value;

use crate::cli::temp_dir;

fn example(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples").join(format!("{name}.toml"))
}

fn options(dir: &Path) -> RunOptions {
    RunOptions::new(dir)
}

fn run(config: &ExperimentConfig, dir: &Path) -> RunReport {
    run_experiment(config, &options(dir), &mut |_| ControlFlow::Continue(())).unwrap().unwrap()
}

/// Equal numbers up to the last bits (the solvers' answers may move by rounding while they
/// are being reworked); everything else exactly.
fn assert_close(path: &str, old: &Value, new: &Value) {
    match (old, new) {
        (Value::Number(a), Value::Number(b)) => {
            let (a, b) = (a.as_f64().unwrap(), b.as_f64().unwrap());
            assert!((a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0), "{path}: {a} before, {b} now");
        }
        (Value::Array(a), Value::Array(b)) => {
            assert_eq!(a.len(), b.len(), "{path}: length");
            for (k, (x, y)) in a.iter().zip(b).enumerate() {
                assert_close(&format!("{path}[{k}]"), x, y);
            }
        }
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                assert_close(
                    &format!("{path}.{k}"),
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
            }
        }
        _ => assert_eq!(old, new, "{path}"),
    }
}

#[test]
fn every_example_reports_what_it_reported_before_issue_10() {
    // (example, the iteration cap its fixture was made with: tests/fixtures/reports/make.sh)
    for (name, cap) in [
        ("kuhn_psro", 12),
        ("kuhn_psro_sampled", 12),
        ("leduc_psro", 10),
        ("leduc_xfp", 40),
        ("rps_double_oracle", 20),
    ] {
        let config = ExperimentConfig::read(&example(name)).unwrap().with_limits(RunLimits::iterations(cap));
        let dir = temp_dir(&format!("fixture-{name}"));
        let report = serde_json::to_value(run(&config, &dir).without_times()).unwrap();
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("tests/fixtures/reports/{name}.json"));
        let mut old: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        // The sampled fixture was made again when per-loop seeds became keys of the
        // counter-based stream (tests/fixtures/reports/README.md): today's layout, compared
        // as it is.
        if name == "kuhn_psro_sampled" {
            responses_found_again_keep_kuhn_psro_sampled_small(&report);
            let mut new = report.clone();
            // The entries' standard errors came after the fixture: laid out as the meta-game.
            let stderr = new.as_object_mut().unwrap().remove("meta_game_stderr").unwrap();
            let shape = |v: &Value| {
                v.as_array().unwrap().iter().map(|p| p.as_array().unwrap().len()).collect::<Vec<_>>()
            };
            assert_eq!(shape(&stderr), shape(&new["meta_game"]));
            members_rated_as_the_meta_game_is_laid_out(name, &mut new);
            for it in new["iterations"].as_array_mut().unwrap() {
                // Timing fields were stripped from the fixtures.
                let it = it.as_object_mut().unwrap();
                it.remove("elapsed_s");
                it.remove("times");
            }
            assert_close(name, &old, &new);
            continue;
        }

        // The config: the fields the algorithm reads, with the values they had (`iterations`
        // is now `max_iterations`; the other algorithms' fields are gone).
        let mut old_config = old["config"].take();
        old_config["max_iterations"] = old_config["iterations"].take();
        for (field, value) in report["config"].as_object().unwrap() {
            assert_eq!(&old_config[field], value, "{name}: config field {field}");
        }
        // A loop without a meta-game no longer writes a meta-game certificate nobody
        // computed (XFP wrote meta_nash_conv 0, meta_status solved, no strategies, no entries).
        if name.ends_with("xfp") {
            for it in old["iterations"].as_array_mut().unwrap() {
                let it = it.as_object_mut().unwrap();
                assert_eq!(it.remove("meta_nash_conv"), Some(Value::from(0.0)));
                assert_eq!(it.remove("meta_status"), Some(Value::from("solved")));
                assert_eq!(it.remove("meta_strategies"), Some(Value::Array(Vec::new())));
                assert_eq!(it.remove("new_entries"), Some(Value::from(0)));
            }
        }
        let mut new = report.clone();
        new.as_object_mut().unwrap().remove("config");
        members_rated_as_the_meta_game_is_laid_out(name, &mut new);
        // Issue 24: Double Oracle's run folder has its meta-game, the restricted game it
        // solved (RPS: all three strategies, in the order added: 0, 1, 2).
        if name == "rps_double_oracle" {
            assert_eq!(old["meta_game"], Value::Null);
            assert_eq!(new["meta_game_shape"], serde_json::json!([3, 3]), "{name}");
            let a = &new["meta_game"][0];
            assert_eq!(a, &serde_json::json!([0.0, -1.0, 1.0, 1.0, 0.0, -1.0, -1.0, 1.0, 0.0]), "{name}");
            new["meta_game"] = Value::Null;
            new["meta_game_shape"] = old["meta_game_shape"].clone();
        }
        for it in new["iterations"].as_array_mut().unwrap() {
            // Timing fields were stripped from the fixtures.
            let it = it.as_object_mut().unwrap();
            it.remove("elapsed_s");
            it.remove("times");
            // Added with learned oracles (issue 11): exact oracles' responses have gap 0.
            if let Some(gaps) = it.remove("response_gap") {
                assert!(gaps.as_array().unwrap().iter().all(|g| g.as_f64() == Some(0.0)), "{name}: {gaps}");
            }
        }
        assert_close(name, &old, &new);
    }
}

/// `member_elo` came after the fixtures: PSRO's reports rate each player's members (as many
/// as the meta-game has strategies), the lowest at 0; taken out to compare the rest.
fn members_rated_as_the_meta_game_is_laid_out(name: &str, report: &mut Value) {
    let Some(elo) = report.as_object_mut().unwrap().remove("member_elo") else {
        assert!(!name.contains("psro"), "{name}: a PSRO report without member_elo");
        return;
    };
    let sizes: Vec<usize> = elo.as_array().unwrap().iter().map(|p| p.as_array().unwrap().len()).collect();
    let shape: Vec<usize> =
        report["meta_game_shape"].as_array().unwrap().iter().map(|n| n.as_u64().unwrap() as usize).collect();
    assert_eq!(sizes, shape, "{name}");
    let lowest = elo.as_array().unwrap().iter().flat_map(|p| p.as_array().unwrap()).filter_map(Value::as_f64);
    assert_eq!(lowest.fold(f64::INFINITY, f64::min), 0.0, "{name}");
}

/// Issue 14: a response identical to a member (the same rows, bit for bit) is counted as
/// that member instead of being added again. Of the fixtures only `kuhn_psro_sampled` finds
/// a member again (a best response at iteration 7 is a member; from iteration 8 on every
/// best response is one). Before, each copy got a row of freshly sampled payoff entries
/// (whose noise moved the meta-mixture; the run of commit c28b863 grew to 13 members per
/// player by iteration 12, NashConv between 0.0015 and 0.0093 from iteration 7); now the
/// copies share the member's entries, no episodes are spent on them, and once every response
/// is a member the meta-game no longer changes, so NashConv stays at what the table's
/// sampling error leaves (below 0.01). Iterations 0 to 6 add a member per player each.
fn responses_found_again_keep_kuhn_psro_sampled_small(report: &Value) {
    const FIRST_REUSE: usize = 7;
    let iterations = report["iterations"].as_array().unwrap();
    let sizes = |r: &Value| -> Vec<u64> {
        r["population_sizes"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect()
    };
    for (k, it) in iterations.iter().enumerate().take(FIRST_REUSE) {
        assert_eq!(sizes(it), vec![k as u64 + 1; 2], "{it}");
    }
    // The run of commit c28b863 (no reuse): k + 1 members per player at iteration k.
    for (k, it) in iterations.iter().enumerate().skip(FIRST_REUSE) {
        let (new_sizes, old_sizes) = (sizes(it), vec![k as u64 + 1; 2]);
        assert!(new_sizes.iter().zip(&old_sizes).all(|(a, b)| a <= b), "{new_sizes:?} vs {old_sizes:?}");
        assert!(new_sizes.iter().all(|&s| s >= 7), "{new_sizes:?}");
        assert!(it["new_entries"].as_u64().unwrap() <= 2 * k as u64 + 1, "{it}");
        assert!(it["nash_conv"].as_f64().unwrap() < 0.01, "{it}");
    }
    assert!(sizes(&iterations[FIRST_REUSE]).iter().any(|&s| s < FIRST_REUSE as u64 + 1), "no reuse at 7");
    // The final meta-game is the distinct members' table.
    let last = sizes(iterations.last().unwrap());
    assert_eq!(report["meta_game_shape"], serde_json::json!(last));
}

#[test]
fn every_example_config_round_trips_through_toml_and_json() {
    for name in [
        "kuhn_psro",
        "kuhn_psro_sampled",
        "kuhn_psro_rl",
        "kuhn_league",
        "leduc_league",
        "leduc_psro",
        "leduc_psro_rl",
        "leduc_xfp",
        "rps_double_oracle",
    ] {
        let config = ExperimentConfig::read(&example(name)).unwrap();
        let again = ExperimentConfig::from_toml_str(&config.to_toml(), Path::new("<again>")).unwrap();
        assert_eq!(config, again, "{name}");
        let json = serde_json::to_string(&config).unwrap();
        assert_eq!(serde_json::from_str::<ExperimentConfig>(&json).unwrap(), config, "{name}");
    }
}

/// An evaluator that works until its k-th call (call 0 fills iteration 0's entry), then fails.
struct FailsAt {
    calls: Arc<AtomicUsize>,
    fail_at: usize,
}

impl MatchEvaluator for FailsAt {
    fn name(&self) -> &'static str {
        "fails-at"
    }
    fn evaluate(
        &self,
        arena: metagame::games::Arena<'_>,
        policies: &[&dyn metagame::games::Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> metagame::games::Result<Vec<MatchTotals>> {
        if self.calls.fetch_add(1, Ordering::SeqCst) == self.fail_at {
            return Err(metagame::games::Error::Unsupported("the backend went away".into()));
        }
        ExactEvaluator.evaluate(arena, policies, matchups, episodes, seed)
    }
}

#[test]
fn a_failing_step_leaves_a_checkpoint_that_resumes_to_the_uninterrupted_report() {
    let text = "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmeta_solver = \"nash\"\nmax_iterations = 6\nconvergence_tolerance = 0\n";
    let config = ExperimentConfig::from_toml_str(text, Path::new("<test>")).unwrap();
    let whole = run(&config, &temp_dir("fail-whole"));

    let dir = temp_dir("fail-resume");
    let calls = Arc::new(AtomicUsize::new(0));
    let failing =
        Components::default().with_evaluator(Box::new(FailsAt { calls: calls.clone(), fail_at: 4 }));
    let err = run_experiment_with(&config, &options(&dir), failing, &mut |_| ControlFlow::Continue(()))
        .unwrap_err()
        .to_string();
    assert!(err.contains("iteration 4") && err.contains("the backend went away"), "{err}");
    // The checkpoint is the last committed iteration's, and nothing else was written.
    let saved = RunCheckpoint::read(&dir).unwrap();
    assert_eq!(saved.state["iteration"], 3);
    assert_eq!(saved.reports.len(), 4);
    assert!(!dir.join("report.json").exists());

    let resume = options(&dir).resume(true);
    let resumed = run_experiment(&config, &resume, &mut |_| ControlFlow::Continue(())).unwrap().unwrap();
    assert_eq!(resumed.without_times(), whole.without_times());
}

#[test]
fn a_failed_step_changes_nothing_and_the_loop_goes_on() {
    let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    let config = PsroConfig::builder().convergence_tolerance(0.0).build().unwrap();
    let calls = Arc::new(AtomicUsize::new(0));
    let oracle = Box::new(ExactBestResponse::default());
    let evaluator = Box::new(FailsAt { calls, fail_at: 2 });
    let mut psro = Psro::new(
        &tree,
        config.clone(),
        Box::new(metagame::solvers::nash::Nash::default()),
        oracle,
        evaluator,
    )
    .unwrap();
    let mut reports = vec![psro.last_report().clone()];
    reports.push(psro.step().unwrap().clone());
    let before = psro.state().clone();
    assert!(psro.step().is_err());
    assert_eq!(psro.state(), &before, "a failed step commits nothing");
    // The same loop steps again (the evaluator fails only once) as if nothing had happened.
    reports.push(psro.step().unwrap().clone());
    let mut straight = Psro::new(
        &tree,
        config,
        Box::new(metagame::solvers::nash::Nash::default()),
        Box::new(ExactBestResponse::default()),
        Box::new(ExactEvaluator),
    )
    .unwrap();
    let straight_run = run_loop(&mut straight, &RunLimits::iterations(2), &mut ()).unwrap();
    let strip = |r: &[metagame::populations::IterationReport]| {
        r.iter().map(|r| r.without_times()).collect::<Vec<_>>()
    };
    assert_eq!(strip(&reports), strip(&straight_run.reports));
}

/// An oracle that checks what it is asked and answers with the exact best response,
/// reporting made-up training statistics as a learner would.
struct Inspecting {
    seeds: Vec<u64>,
}

impl Oracle for Inspecting {
    fn name(&self) -> &'static str {
        "inspecting"
    }
    fn respond(&mut self, request: &ResponseRequest<'_>) -> metagame::populations::Result<Response> {
        assert!(request.opponents.iter().all(|m| m.player != request.player && m.weight > 0.0));
        for seat in (0..request.arena.num_players()).map(PlayerId).filter(|&q| q != request.player) {
            let total: f64 = request.opponents.iter().filter(|m| m.player == seat).map(|m| m.weight).sum();
            assert!((total - 1.0).abs() < 1e-9, "weights of seat {seat:?} sum to {total}");
        }
        assert!(request.warm_start.is_some(), "the player's newest member is the warm start");
        self.seeds.push(request.seed);
        let mut exact = ExactBestResponse::default();
        let mut response = exact.respond(request)?;
        let mut stats = TrainingStats::default();
        stats.episodes = 10;
        response.stats = stats;
        Ok(response)
    }
}

#[test]
fn an_oracle_gets_members_weights_and_distinct_seeds_and_its_episodes_are_reported() {
    let text = "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmax_iterations = 3\nconvergence_tolerance = 0\n";
    let config = ExperimentConfig::from_toml_str(text, Path::new("<test>")).unwrap();
    let dir = temp_dir("inspecting-oracle");
    let components = Components::default().with_oracle(Box::new(Inspecting { seeds: Vec::new() }));
    let report = run_experiment_with(&config, &options(&dir), components, &mut |_| ControlFlow::Continue(()))
        .unwrap()
        .unwrap();
    // Two requests per iteration, 10 episodes each; the results are the exact oracle's.
    assert!(report.iterations[1..].iter().all(|r| r.episodes == 20));
    let exact = run(&config, &temp_dir("exact-oracle"));
    for (a, b) in report.iterations.iter().zip(&exact.iterations) {
        assert_eq!(a.nash_conv, b.nash_conv);
        assert_eq!(a.meta_game, b.meta_game);
    }
}

#[test]
fn an_observer_break_stops_double_oracle_and_the_time_budget_stops_xfp() {
    let config = ExperimentConfig::read(&example("rps_double_oracle")).unwrap();
    let dir = temp_dir("do-observer");
    let mut seen = 0;
    let report = run_experiment(&config, &options(&dir), &mut |_| {
        seen += 1;
        ControlFlow::Break(())
    })
    .unwrap()
    .unwrap();
    assert_eq!(seen, 1);
    assert_eq!(report.iterations.len(), 1);
    assert_eq!(report.stop_reason, StopReason::Observer);

    // A budget smaller than any iteration: XFP stops after its initial report.
    let text =
        "game = \"kuhn_poker\"\nalgorithm = \"xfp\"\nmax_iterations = 50\ntime_budget_seconds = 1e-12\n";
    let config = ExperimentConfig::from_toml_str(text, Path::new("<test>")).unwrap();
    let report = run(&config, &temp_dir("xfp-budget"));
    assert_eq!(report.stop_reason, StopReason::TimeBudget);
    assert_eq!(report.iterations.len(), 1);
}

#[test]
fn xfp_reports_carry_no_meta_game_part() {
    let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    let mut xfp = metagame::populations::Xfp::new(&tree).unwrap();
    let xfp_run = run_loop(&mut xfp, &RunLimits::iterations(2), &mut ()).unwrap();
    assert!(xfp_run.reports.iter().all(|r| r.meta_game.is_none()));
    let json = serde_json::to_value(&xfp_run.reports[1]).unwrap();
    assert!(json.get("meta_status").is_none() && json.get("meta_nash_conv").is_none(), "{json}");
}
