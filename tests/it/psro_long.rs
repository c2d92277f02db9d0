//! PSRO over hundreds of iterations, where the meta-games become degenerate and full of
//! near-duplicate strategies: the run must keep its certified meta-solves, stop as converged
//! once it has found an equilibrium, and stop with an error rather than continue from a
//! meta-solve that failed.

use std::sync::atomic::{AtomicUsize, Ordering};

use metagame::games::{ExactEvaluator, GameTree, NormalFormGame, registry};
use metagame::populations::{Error, ExactBestResponse, Psro, PsroConfig, RunLimits, StopReason, run_loop};
use metagame::solvers::nash::Nash;
use metagame::solvers::{MetaSolver, Solution, SolveError, Status};

fn tree(spec: &str) -> GameTree {
    GameTree::build(&registry::load(spec).unwrap()).unwrap()
}

#[test]
fn leduc_psro_nash_stays_at_its_equilibrium_and_stops_converged() {
    let t = tree("leduc_poker");
    let oracle = ExactBestResponse::trembling(1e-2);
    let mut p = Psro::new(
        &t,
        PsroConfig::default(),
        Box::new(Nash::default()),
        Box::new(oracle),
        Box::new(ExactEvaluator),
    )
    .unwrap();
    let p_run = run_loop(&mut p, &RunLimits::iterations(400), &mut ()).unwrap();
    let reason = p_run.stop_reason;
    assert_eq!(reason, StopReason::Converged);
    let curve: Vec<f64> = p_run.reports.iter().map(|r| r.nash_conv.unwrap()).collect();
    let reached = curve.iter().position(|&x| x <= 1e-9).expect("NashConv reaches 1e-9");
    assert!(curve[reached..].iter().all(|&x| x <= 1e-9), "NashConv rose again after iteration {reached}");
    assert!(p_run.reports.len() < 400, "converged runs stop early");
    for r in &p_run.reports {
        let meta = r.meta_game.as_ref().unwrap();
        assert_eq!(meta.meta_status, Status::Solved, "iteration {}", r.iteration);
        assert!(meta.meta_nash_conv <= 1e-9 * 13.0, "iteration {}: {}", r.iteration, meta.meta_nash_conv);
    }
}

/// A meta-solver that works until its k-th call, then finds nothing it can certify.
struct FailsAt {
    call: AtomicUsize,
    fail_at: usize,
}

impl MetaSolver for FailsAt {
    fn name(&self) -> &'static str {
        "fails-at"
    }
    fn solve(&self, game: &NormalFormGame) -> metagame::solvers::Result<Solution> {
        if self.call.fetch_add(1, Ordering::SeqCst) == self.fail_at {
            return Err(SolveError::Numerical { solver: "fails-at", reason: "nothing certified".into() });
        }
        Nash::default().solve(game)
    }
}

#[test]
fn a_failed_meta_solve_stops_the_run_with_its_iteration() {
    let t = tree("kuhn_poker");
    let config = PsroConfig::builder().convergence_tolerance(0.0).build().unwrap();
    // Call 0 is iteration 0's solve; call 3 is iteration 3's.
    let meta = FailsAt { call: AtomicUsize::new(0), fail_at: 3 };
    let mut p = Psro::new(
        &t,
        config,
        Box::new(meta),
        Box::new(ExactBestResponse::default()),
        Box::new(ExactEvaluator),
    )
    .unwrap();
    let err = run_loop(&mut p, &RunLimits::iterations(10), &mut ()).unwrap_err();
    match &err {
        Error::AtIteration { iteration, .. } => assert_eq!(*iteration, 3),
        other => panic!("unexpected error {other}"),
    }
    let message = err.to_string();
    assert!(message.contains("iteration 3") && message.contains("nothing certified"), "{message}");
}

/// The exact evaluator under another name: PSRO evaluates it as any evaluator, without
/// the members' kept parts.
struct StatelessExact;

impl metagame::games::MatchEvaluator for StatelessExact {
    fn name(&self) -> &'static str {
        "stateless-exact"
    }
    fn evaluate(
        &self,
        arena: metagame::games::Arena<'_>,
        policies: &[&dyn metagame::games::Policy],
        matchups: &[metagame::games::Matchup],
        episodes: u64,
        seed: u64,
    ) -> metagame::games::Result<Vec<metagame::games::MatchTotals>> {
        ExactEvaluator.evaluate(arena, policies, matchups, episodes, seed)
    }
}

/// PSRO's exact entries through the members' parts kept between iterations are the
/// stateless exact evaluator's, bit for bit, over a long Leduc run (and so is everything
/// the run reports).
#[test]
fn kept_member_parts_give_the_stateless_exact_run() {
    use metagame::games::MatchEvaluator;
    let t = tree("leduc_poker");
    let run = |evaluator: Box<dyn MatchEvaluator>| {
        let oracle = ExactBestResponse::trembling(1e-2);
        let mut p =
            Psro::new(&t, PsroConfig::default(), Box::new(Nash::default()), Box::new(oracle), evaluator)
                .unwrap();
        let reports = run_loop(&mut p, &RunLimits::iterations(60), &mut ()).unwrap().reports;
        let table = p.state().table.clone();
        (reports.into_iter().map(|r| r.without_times()).collect::<Vec<_>>(), table)
    };
    let (kept, kept_table) = run(Box::new(ExactEvaluator));
    let (stateless, stateless_table) = run(Box::new(StatelessExact));
    assert_eq!(kept.len(), 61);
    assert_eq!(kept, stateless);
    assert_eq!(kept_table, stateless_table);
}
