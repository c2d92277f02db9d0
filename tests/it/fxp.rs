//! Fictitious Cross-Play (issues 12 item 5, 20 item 7; Xu et al. 2023, arXiv:2310.03354): on the
//! FXP paper's decentralised team game and on Kuhn poker, the population's Nash mixture reaches
//! an equilibrium while self-play (η = 1) stays at a local one; one full step is best-response
//! self-play; atomic steps and resumes; the CLI, its refusals and the config round trip.

use std::ops::ControlFlow;
use std::path::Path;

use metagame::ExperimentConfig;
use metagame::games::{
    GameTree, MatchEvaluator, MatchTotals, Matchup, PlayerId, TabularPolicy, best_response, registry,
};
use metagame::populations::{
    Cutoff, Fxp, FxpConfig, FxpReport, FxpRole, FxpState, IterationReport, RunLimits, run_loop, run_loop_with,
};
use metagame::solvers::nash::Nash;

fn tree(game: &str) -> GameTree {
    GameTree::build(&registry::load(game).unwrap()).unwrap()
}

fn run(tree: &GameTree, eta: f64, iterations: usize) -> (Fxp<'_>, Vec<IterationReport>) {
    let mut fxp = Fxp::exact(tree, FxpConfig::builder().eta(eta).build().unwrap()).unwrap();
    let reports = run_loop(&mut fxp, &RunLimits::iterations(iterations), &mut ()).unwrap().reports;
    (fxp, reports)
}

fn main_nash_conv(r: &IterationReport) -> f64 {
    part(r).main_policy_nash_conv
}

/// Self-play by exact best responses: each seat answers the previous policy at the other
/// seat, from the uniform policy.
fn self_play(tree: &GameTree, iterations: usize) -> Vec<TabularPolicy> {
    let mut policy = TabularPolicy::uniform(tree);
    let mut out = Vec::new();
    for _ in 0..iterations {
        let mut next = best_response(tree, PlayerId(0), &[&policy, &policy]).unwrap().0;
        next.copy_player_rows(
            tree,
            PlayerId(1),
            &best_response(tree, PlayerId(1), &[&policy, &policy]).unwrap().0,
        );
        out.push(next.clone());
        policy = next;
    }
    out
}

fn main_checkpoints(state: &FxpState) -> Vec<&TabularPolicy> {
    state.members.iter().filter(|m| m.role == FxpRole::Main).map(|m| &m.policy).collect()
}

fn part(r: &IterationReport) -> FxpReport {
    r.details.get::<FxpReport>().unwrap()
}

/// Decentralised team rock-paper-scissors (team_rps): the population's Nash mixture of team
/// policies is the global equilibrium from iteration 1 on, while self-play (η = 1) settles
/// where both members always pick 1 (Scissors): no member gains alone, the team gains 1 by
/// playing Rock together.
#[test]
fn on_the_team_game_fxp_reaches_the_equilibrium_and_self_play_does_not() {
    let tree = tree("team_rps");
    let (fxp, fxp_reports) = run(&tree, 0.3, 10);
    assert!((fxp_reports[0].nash_conv.unwrap() - 0.5).abs() < 1e-12, "uniform: Scissors gains 1/4 per team");
    for r in &fxp_reports[1..] {
        assert!(
            r.nash_conv.unwrap() < 1e-9,
            "iteration {}: population NashConv {}",
            r.iteration,
            r.nash_conv.unwrap()
        );
    }
    assert!(fxp.population_policy().is_err(), "team policies do not aggregate into one");
    let (sp, sp_reports) = run(&tree, 1.0, 10);
    for r in &sp_reports[1..] {
        assert!(part(r).main_policy_nash_conv > 1.99, "iteration {}", r.iteration);
        assert!(part(r).main_policy_member_nash_conv < 1e-3, "iteration {}", r.iteration);
    }
    let last = sp.main_policy();
    for player in 0..4 {
        let row = last.row(metagame::games::InfosetId(player));
        assert!(row[1] > 1.0 - 1e-12, "player {player} picks 1: {row:?}");
    }
}

/// Kuhn poker, measured: FXP's population NashConv 0.917, 0.334, 0.126, 0.137, then below 1e-5
/// from iteration 4; the main policy moves gradually and stays mixed (NashConv 0.11 to 0.83).
#[test]
fn on_kuhn_fxp_reaches_the_equilibrium_and_the_main_policy_stays_mixed() {
    let tree = tree("kuhn_poker");
    let (_, fxp_reports) = run(&tree, 0.3, 8);
    assert!(
        fxp_reports[4..].iter().all(|r| r.nash_conv.unwrap() < 1e-5),
        "{:?}",
        fxp_reports.iter().map(|r| r.nash_conv).collect::<Vec<_>>()
    );
    assert!(fxp_reports[3].nash_conv.unwrap() > 0.1);
    for r in &fxp_reports[1..] {
        let main = part(r).main_policy_nash_conv;
        assert!(main > 0.1 && main < 0.9, "iteration {}: {main}", r.iteration);
    }
}

/// One full step (`learning_rate = 0.5`, `max_steps = 1`) replaces a 2-player game's main
/// policy by its exact best response: η = 1 is then best-response self-play.
#[test]
fn eta_one_is_self_play() {
    for game in ["matrix_team_rps", "kuhn_poker", "leduc_poker"] {
        let tree = tree(game);
        let n = if game == "leduc_poker" { 4 } else { 8 };
        let config = FxpConfig::builder().eta(1.0).learning_rate(0.5).max_steps(1).build().unwrap();
        let mut fxp = Fxp::exact(&tree, config).unwrap();
        let fxp_reports = run_loop(&mut fxp, &RunLimits::iterations(n), &mut ()).unwrap().reports;
        let expected = self_play(&tree, n);
        let mains = main_checkpoints(fxp.state());
        assert_eq!(mains.len(), n);
        for (k, (main, sp)) in mains.iter().zip(&expected).enumerate() {
            assert_eq!(*main, sp, "{game}: main checkpoint {k}");
        }
        // Each main answered only the live main policy, which it then became.
        for (k, m) in fxp.state().members.iter().filter(|m| m.role == FxpRole::Main).enumerate() {
            assert_eq!(m.answered, vec![(2 * k + 1, 1.0)], "{game}: main {k}");
        }
        for r in &fxp_reports[1..] {
            let main = &expected[r.iteration - 1];
            let nash_conv = metagame::games::nash_conv(&tree, &[main, main]).unwrap();
            assert_eq!(main_nash_conv(r), nash_conv, "{game}: iteration {}", r.iteration);
        }
    }
}

#[test]
fn counters_answer_the_main_checkpoints_and_the_population_grows_by_two() {
    let tree = tree("kuhn_poker");
    let (fxp, fxp_reports) = run(&tree, 0.3, 5);
    let members = &fxp.state().members;
    assert_eq!(members.len(), 11);
    assert_eq!(members[0].role, FxpRole::Initial);
    for (i, m) in members.iter().enumerate().skip(1) {
        assert_eq!(m.role, if i % 2 == 1 { FxpRole::Main } else { FxpRole::Counter }, "member {i}");
        assert_eq!(m.iteration, i.div_ceil(2));
        let total: f64 = m.answered.iter().map(|(_, w)| w).sum();
        assert!((total - 1.0).abs() < 1e-9, "member {i} answered a distribution: {total}");
        if m.role == FxpRole::Counter {
            // Only main checkpoints, never a counter or the initial policy.
            assert!(m.answered.iter().all(|&(j, _)| j % 2 == 1 && j < i), "{:?}", m.answered);
        }
    }
    for r in &fxp_reports {
        assert_eq!(r.population_sizes, vec![1 + 2 * r.iteration; 2]);
        let meta = r.meta_game.as_ref().unwrap();
        assert!((meta.meta_strategies[0].iter().sum::<f64>() - 1.0).abs() < 1e-12);
    }
}

/// An evaluator that fails once, at its `fail_at`-th call.
struct FailsOnce {
    calls: std::sync::atomic::AtomicUsize,
    fail_at: usize,
}

impl MatchEvaluator for FailsOnce {
    fn name(&self) -> &'static str {
        "fails-once"
    }
    fn evaluate(
        &self,
        arena: metagame::games::Arena<'_>,
        policies: &[&dyn metagame::games::Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> metagame::games::Result<Vec<MatchTotals>> {
        if self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == self.fail_at {
            return Err(metagame::games::Error::Unsupported("the backend went away".into()));
        }
        metagame::games::ExactEvaluator.evaluate(arena, policies, matchups, episodes, seed)
    }
}

#[test]
fn a_failed_step_commits_nothing_and_a_saved_state_resumes_to_the_same_run() {
    let tree = tree("kuhn_poker");
    let strip = |r: &[IterationReport]| r.iter().map(|r| r.without_times()).collect::<Vec<_>>();
    let (whole, whole_reports) = run(&tree, 0.3, 6);

    // Call 0 fills iteration 0, calls 1 and 2 iteration 1, call 4 is iteration 2's second.
    let evaluator = Box::new(FailsOnce { calls: 0.into(), fail_at: 4 });
    let mut fxp = Fxp::new(&tree, FxpConfig::default(), Box::new(Nash::default()), evaluator).unwrap();
    let mut reports = vec![fxp.last_report().clone()];
    reports.push(fxp.step().unwrap().clone());
    let before = fxp.state().clone();
    let err = fxp.step().unwrap_err().to_string();
    assert!(err.contains("iteration 2") && err.contains("the backend went away"), "{err}");
    assert_eq!(fxp.state(), &before, "a failed step commits nothing");
    reports.push(fxp.step().unwrap().clone());

    // Through JSON, as a checkpoint.
    let saved: FxpState = serde_json::from_str(&serde_json::to_string(fxp.state()).unwrap()).unwrap();
    assert_eq!(&saved, fxp.state());
    let exact = Box::new(metagame::games::ExactEvaluator);
    let mut resumed =
        Fxp::resume(&tree, FxpConfig::default(), Box::new(Nash::default()), exact, saved, &reports).unwrap();
    let limits = RunLimits::iterations(6);
    run_loop_with(&mut resumed, &mut reports, &limits, &Cutoff::never(), &mut (), &mut |_, _| {
        Ok(ControlFlow::Continue(()))
    })
    .unwrap();
    assert_eq!(strip(&reports), strip(&whole_reports));
    assert_eq!(resumed.state().members, whole.state().members);
}

#[test]
fn fxp_refuses_games_that_are_not_two_player_zero_sum_and_bad_settings() {
    for game in ["matrix_pd", "kuhn_poker(players=3)"] {
        let tree = tree(game);
        let err = Fxp::exact(&tree, FxpConfig::default()).err().unwrap().to_string();
        assert!(err.contains("two sides with opposed returns"), "{game}: {err}");
    }
    for eta in [-0.1, 1.5, f64::NAN] {
        let err = FxpConfig::builder().eta(eta).build().unwrap_err().to_string();
        assert!(err.contains("eta"), "{err}");
    }
    assert_eq!(FxpConfig::default().eta(), 0.3);
}

#[test]
fn the_fxp_example_runs_from_the_cli_with_json_lines() {
    use crate::cli::{metagame, temp_dir};
    let out = temp_dir("fxp-team");
    let config = format!("{}/examples/fxp_team.toml", env!("CARGO_MANIFEST_DIR"));
    let o = metagame(&["run", &config, "--out", out.to_str().unwrap(), "--overwrite", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lines: Vec<serde_json::Value> =
        String::from_utf8_lossy(&o.stdout).lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let iterations: Vec<&serde_json::Value> = lines.iter().filter(|l| l.get("summary").is_none()).collect();
    assert_eq!(iterations.len(), 11);
    let last = iterations[10];
    for field in ["nash_conv", "main_policy_nash_conv", "counter_mass", "meta_strategies"] {
        assert!(last.get(field).is_some(), "{field} in {last}");
    }
    assert!(last["nash_conv"].as_f64().unwrap() < 1e-12);
    // The local equilibrium the main policy settles at: no member gains alone, the team does.
    assert!(last["main_policy_nash_conv"].as_f64().unwrap() > 1.99);
    assert!(last["main_policy_member_nash_conv"].as_f64().unwrap() < 1e-3);
    for file in ["checkpoint.json", "report.json", "lineage.dot"] {
        assert!(out.join(file).is_file(), "{file}");
    }
    let config = ExperimentConfig::read(Path::new(&config)).unwrap();
    let again = ExperimentConfig::from_toml_str(&config.to_toml(), Path::new("<again>")).unwrap();
    assert_eq!(config, again);
}

#[test]
fn bad_fxp_configs_fail_in_one_line() {
    use crate::cli::{metagame, one_line_error, temp_dir};
    let dir = temp_dir("fxp-bad");
    for (game, extra, expected) in [
        ("matrix_team_rps", "eta = 1.5", "eta: 1.5 is not in [0, 1]"),
        ("matrix_team_rps", "eta = -0.2", "eta: -0.2 is not in [0, 1]"),
        ("matrix_team_rps", "eta = \"high\"", "invalid type: string \"high\", expected f64"),
        ("matrix_team_rps", "counters = 2", "unknown field `counters`"),
        ("matrix_team_rps", "meta_solver = \"nash\"", "not read by algorithm `fxp`"),
        ("matrix_pd", "eta = 0.3", "needs two sides with opposed returns"),
        ("kuhn_poker(players=3)", "eta = 0.3", "kuhn_poker(players=3) is neither"),
        ("team_rps", "learning_rate = 0", "learning_rate: 0 is not in (0, 0.5]"),
        ("team_rps", "learning_rate = 0.75", "learning_rate: 0.75 is not in (0, 0.5]"),
        ("team_rps", "max_steps = 0", "max_steps: 0 is not at least 1"),
        ("team_rps", "max_steps = -3", "invalid value: integer `-3`, expected usize"),
        ("team_rps", "oracle = \"exact-br\"", "not read by algorithm `fxp`"),
    ] {
        let path = dir.join("bad.toml");
        std::fs::write(&path, format!("game = \"{game}\"\nalgorithm = \"fxp\"\n{extra}\n")).unwrap();
        let out = dir.join("out");
        let err = one_line_error(&metagame(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]));
        assert!(err.contains(expected), "{extra}: {err}");
        assert!(!out.exists(), "no run folder is left behind");
    }
}

/// A team game given to a loop that treats every player alone: one line, exit 2, no folder.
#[test]
fn a_team_game_is_refused_by_the_loops_that_do_not_play_teams() {
    use crate::cli::{metagame, one_line_error, temp_dir};
    let dir = temp_dir("fxp-team-refused");
    for (algorithm, expected) in [
        (
            "psro",
            "team_rps is a team game (players 0, 1 against 2, 3), and algorithm `psro` treats every player alone; the loops that play teams: fxp",
        ),
        ("xfp", "algorithm `xfp` treats every player alone"),
        ("cfr", "algorithm `cfr` treats every player alone"),
        ("league", "algorithm `league` takes a 2-player game, team_rps has 4 players"),
        ("double-oracle", "algorithm `double-oracle` takes a 2-player game, team_rps has 4 players"),
    ] {
        let path = dir.join(format!("{algorithm}.toml"));
        std::fs::write(&path, format!("game = \"team_rps\"\nalgorithm = \"{algorithm}\"\n")).unwrap();
        let out = dir.join(format!("out-{algorithm}"));
        let o = metagame(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{algorithm}");
        let err = one_line_error(&o);
        assert_eq!(err.matches(expected).count(), 1, "{algorithm}: {err}");
        assert!(!out.exists(), "{algorithm}: no run folder");
    }
}

/// The config's FXP fields survive a TOML round trip, and `config --example fxp` names them.
#[test]
fn fxp_fields_round_trip_and_the_example_names_them() {
    use crate::cli::metagame;
    let text = "game = \"team_rps\"\nalgorithm = \"fxp\"\neta = 0.5\nlearning_rate = 0.25\nmax_steps = 7\nseed = 3\n";
    let config = ExperimentConfig::from_toml_str(text, Path::new("<fxp>")).unwrap();
    let written = config.to_toml();
    for line in ["eta = 0.5", "learning_rate = 0.25", "max_steps = 7", "seed = 3"] {
        assert!(written.contains(line), "{line} in\n{written}");
    }
    assert_eq!(ExperimentConfig::from_toml_str(&written, Path::new("<again>")).unwrap(), config);
    let o = metagame(&["config", "--example", "fxp"]);
    assert!(o.status.success());
    let example = String::from_utf8_lossy(&o.stdout);
    for field in ["eta = 0.3", "learning_rate = 0.1", "max_steps = 1000", "seed = 0"] {
        assert!(example.contains(field), "{field} in the example");
    }
}
