//! Monte Carlo CFR as a training loop: its NashConv curves lie inside OpenSpiel's spread over
//! seeds, resuming a saved state continues bit for bit, saved states that do not fit are
//! refused, and bad settings are refused in one line.

use metagame::games::{GameTree, registry};
use metagame::populations::loops::mccfr::{
    AverageType, Mccfr, MccfrConfig, MccfrConfigBuilder, MccfrReport, MccfrState, Sampling,
};
use metagame::populations::{Error, IterationReport, RunLimits, TrainingLoop, run_loop};

use crate::cli::{metagame, one_line_error, temp_dir};

fn tree(game: &str) -> GameTree {
    GameTree::build(&registry::load(game).unwrap()).unwrap()
}

fn config(sampling: Sampling, average: Option<AverageType>, per: u64, seed: u64) -> MccfrConfig {
    let mut b = MccfrConfig::builder().sampling(sampling).traversals_per_iteration(per).seed(seed);
    if let Some(average) = average {
        b = b.average(average);
    }
    b.build().unwrap()
}

/// OpenSpiel 2.0.2's C++ MCCFR through pyspiel, seeds 1 to 5: the min and max over the seeds
/// of the average policy's NashConv after 10³, 10⁴ and 10⁵ iterations (an iteration: one
/// traversal per player). Printed by `benches/peers/mccfr_reference.py` (run with
/// `/work/main/target/python-venv/bin/python`, a venv with `pip install open_spiel==2.0.2`):
/// `outcome` = `pyspiel.OutcomeSamplingMCCFRSolver(game, 0.6, seed)`, `external` =
/// `pyspiel.ExternalSamplingMCCFRSolver(game, seed, MCCFRAverageType.SIMPLE)`, `full` the
/// same with `MCCFRAverageType.FULL`.
struct Spread {
    game: &'static str,
    sampling: Sampling,
    average: Option<AverageType>,
    /// (OpenSpiel iterations, min, max).
    at: [(u64, f64, f64); 3],
}

#[rustfmt::skip]
const SPREADS: &[Spread] = &[
    Spread { game: "kuhn_poker", sampling: Sampling::Outcome, average: None,
        at: [(1_000, 0.1749027109909787, 0.23091658790727204), (10_000, 0.028134903063524064, 0.10850872428056069), (100_000, 0.010795392454646058, 0.032378005091055206)] },
    Spread { game: "kuhn_poker", sampling: Sampling::External, average: None,
        at: [(1_000, 0.044128050141329755, 0.07392999659807603), (10_000, 0.015033391570212995, 0.03464899736743915), (100_000, 0.002873849342373447, 0.008621635097986802)] },
    Spread { game: "kuhn_poker", sampling: Sampling::External, average: Some(AverageType::Full),
        at: [(1_000, 0.04759534425952311, 0.06748894707841752), (10_000, 0.015512984354059567, 0.03811057304024662), (100_000, 0.00466579017970753, 0.007891141094721499)] },
    Spread { game: "leduc_poker", sampling: Sampling::Outcome, average: None,
        at: [(1_000, 4.19122808247036, 5.052982103989546), (10_000, 1.9410619005887841, 2.6867416362232586), (100_000, 0.9661725912500043, 1.1885642542368922)] },
    Spread { game: "leduc_poker", sampling: Sampling::External, average: None,
        at: [(1_000, 2.248816463840697, 2.762920580882544), (10_000, 0.4970131187261823, 0.609917426329517), (100_000, 0.11840500317664746, 0.14282526186342348)] },
    Spread { game: "kuhn_poker(players=3)", sampling: Sampling::Outcome, average: None,
        at: [(1_000, 0.3816431553336267, 0.5607228934227533), (10_000, 0.0917791377701308, 0.15351228779413512), (100_000, 0.02032786460412045, 0.037570230467173504)] },
    Spread { game: "kuhn_poker(players=3)", sampling: Sampling::External, average: None,
        at: [(1_000, 0.10144815652522657, 0.1500603142934845), (10_000, 0.022809057349195888, 0.05008307296260214), (100_000, 0.008332238306789808, 0.023733334049278854)] },
];

/// How far from OpenSpiel's range over 5 seeds ours may land. The median of our 5 seeds must
/// lie in `[min / MEDIAN_MARGIN, max × MEDIAN_MARGIN]` and every seed in
/// `[min / SEED_MARGIN, max × SEED_MARGIN]`. Five seeds span less than the distribution: at
/// 10⁵ iterations, OpenSpiel's seeds 6 to 35 of Leduc external sampling spread over
/// 0.126–0.177 (seeds 1 to 5: 0.118–0.143; the 35 average 0.143, ours over seeds 1 to 20
/// 0.147), and its seeds 1 to 20 of 3-player Kuhn external sampling over 0.0055–0.0712
/// (seeds 1 to 5: 0.0083–0.0237). Our streams are not OpenSpiel's.
const MEDIAN_MARGIN: f64 = 1.5;
const SEED_MARGIN: f64 = 3.0;

/// Our NashConv after each of `checkpoints` OpenSpiel iterations. One iteration per
/// checkpoint: the run is resumed with the traversal count that reaches the next one (the
/// streams are keyed by the traversal, so this is the run of one fixed batch size).
fn curve(tree: &GameTree, spread: &Spread, seed: u64, checkpoints: &[u64]) -> Vec<f64> {
    let (mut done, mut state, mut reports, mut out) = (0, None, Vec::new(), Vec::new());
    for &at in checkpoints {
        let c = config(spread.sampling, spread.average, at - done, seed);
        let mut mccfr = match state.take() {
            None => Mccfr::new(tree, c).unwrap(),
            Some(s) => Mccfr::resume(tree, c, s, &reports).unwrap(),
        };
        if reports.is_empty() {
            reports.push(mccfr.last_report().clone());
        }
        let report = mccfr.step().unwrap().clone();
        assert_eq!(report.details.get::<MccfrReport>().unwrap().traversals, at);
        out.push(report.nash_conv.unwrap());
        reports.push(report);
        state = Some(mccfr.state().clone());
        done = at;
    }
    out
}

fn check_spreads(games: &[&str], max_checkpoint: u64) {
    let mut failures = Vec::new();
    for spread in SPREADS.iter().filter(|s| games.contains(&s.game)) {
        let tree = tree(spread.game);
        let at: Vec<_> = spread.at.iter().filter(|a| a.0 <= max_checkpoint).collect();
        let checkpoints: Vec<u64> = at.iter().map(|a| a.0).collect();
        let name = format!("{} {} {:?}", spread.game, spread.sampling.as_str(), spread.average);
        let runs: Vec<Vec<f64>> = (1..=5).map(|seed| curve(&tree, spread, seed, &checkpoints)).collect();
        for (k, &&(it, lo, hi)) in at.iter().enumerate() {
            let mut ours: Vec<f64> = runs.iter().map(|r| r[k]).collect();
            eprintln!("{name} at {it}: ours {ours:.6?}, OpenSpiel {lo:.6}..{hi:.6}");
            ours.sort_by(f64::total_cmp);
            let median = ours[2];
            if !(median >= lo / MEDIAN_MARGIN && median <= hi * MEDIAN_MARGIN) {
                failures
                    .push(format!("{name} at {it}: median {median} outside {lo}..{hi} (× {MEDIAN_MARGIN})"));
            }
            if !(ours[0] >= lo / SEED_MARGIN && ours[4] <= hi * SEED_MARGIN) {
                failures.push(format!("{name} at {it}: {ours:?} outside {lo}..{hi} (× {SEED_MARGIN})"));
            }
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

const ALL_GAMES: &[&str] = &["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"];

#[test]
fn curves_lie_inside_openspiels_spread_up_to_10_000_iterations() {
    check_spreads(ALL_GAMES, 10_000);
}

/// 10^5 iterations per seed and scheme: about 3 s in release (minutes in a debug build).
#[test]
fn curves_lie_inside_openspiels_spread_up_to_100_000_iterations() {
    check_spreads(ALL_GAMES, 100_000);
}

fn configs() -> Vec<MccfrConfig> {
    vec![
        config(Sampling::Outcome, None, 50, 3),
        MccfrConfig::builder()
            .sampling(Sampling::Outcome)
            .epsilon(1.0)
            .traversals_per_iteration(7)
            .seed(u64::MAX)
            .build()
            .unwrap(),
        config(Sampling::External, None, 20, 0),
        config(Sampling::External, Some(AverageType::Full), 5, 11),
    ]
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

#[test]
fn a_resumed_run_continues_bit_for_bit() {
    for (game, first, then) in [("kuhn_poker", 4, 3), ("leduc_poker", 2, 2), ("kuhn_poker(players=3)", 2, 2)]
    {
        let tree = tree(game);
        for config in configs() {
            let what = format!("{game} {config:?}");
            let mut straight = Mccfr::new(&tree, config.clone()).unwrap();
            let whole =
                run_loop(&mut straight, &RunLimits::iterations(first + then), &mut ()).unwrap().reports;

            let mut before = Mccfr::new(&tree, config.clone()).unwrap();
            let mut reports = run_loop(&mut before, &RunLimits::iterations(first), &mut ()).unwrap().reports;
            let json = serde_json::to_string(before.state()).unwrap();
            let state: MccfrState = serde_json::from_str(&json).unwrap();
            assert_eq!(&state, before.state(), "{what}: the JSON round trip");
            let mut resumed = Mccfr::resume(&tree, config.clone(), state, &reports).unwrap();
            for _ in 0..then {
                reports.push(resumed.step().unwrap().clone());
            }
            let (a, b) = (straight.state(), resumed.state());
            assert_eq!((a.iteration, a.traversals), (b.iteration, b.traversals), "{what}");
            assert_eq!(bits(&a.regrets), bits(&b.regrets), "{what}: regrets");
            assert_eq!(bits(&a.cumulative_policy), bits(&b.cumulative_policy), "{what}: cumulative policy");
            let strip = |r: &[IterationReport]| r.iter().map(|r| r.without_times()).collect::<Vec<_>>();
            assert_eq!(strip(&whole), strip(&reports), "{what}: reports");
            assert_eq!(straight.average_policy(), resumed.average_policy(), "{what}");
            assert_eq!(straight.current_policy(), resumed.current_policy(), "{what}");
            // Another seed is another run.
            let other =
                MccfrConfigBuilder::from(config.clone()).seed(config.seed().wrapping_add(1)).build().unwrap();
            let mut other = Mccfr::new(&tree, other).unwrap();
            run_loop(&mut other, &RunLimits::iterations(first + then), &mut ()).unwrap();
            assert_ne!(bits(&other.state().regrets), bits(&a.regrets), "{what}: another seed");
        }
    }
}

/// NashConv is evaluated on CFR's schedule (every iteration up to 20, then about 5% apart)
/// and at the run's last iteration; `nash_conv_every = 1` evaluates every one. The skipped
/// evaluations change nothing else, and a checkpoint whose last iteration was not evaluated
/// resumes to the same run.
#[test]
fn nash_conv_is_evaluated_on_the_schedule_and_the_runs_last_iteration() {
    let kuhn = tree("kuhn_poker");
    let scheduled = config(Sampling::Outcome, None, 10, 2);
    let mut lp = Mccfr::new(&kuhn, scheduled.clone()).unwrap();
    let reports = run_loop(&mut lp, &RunLimits::iterations(30), &mut ()).unwrap().reports;
    let evaluated: Vec<usize> =
        reports.iter().filter(|r| r.nash_conv.is_some()).map(|r| r.iteration).collect();
    let mut want: Vec<usize> = (0..=21).collect();
    want.extend([23, 25, 27, 29, 30]);
    assert_eq!(evaluated, want);
    let every = MccfrConfigBuilder::from(scheduled.clone()).nash_conv_every(1).build().unwrap();
    let mut all = Mccfr::new(&kuhn, every).unwrap();
    let all_reports = run_loop(&mut all, &RunLimits::iterations(30), &mut ()).unwrap().reports;
    assert!(all_reports.iter().all(|r| r.nash_conv.is_some()));
    assert_eq!(bits(&all.state().regrets), bits(&lp.state().regrets));
    for (a, b) in reports.iter().zip(&all_reports).filter(|(a, _)| a.nash_conv.is_some()) {
        assert_eq!(a.nash_conv, b.nash_conv, "iteration {}", a.iteration);
    }
    // Stopped after iteration 22, not evaluated, and resumed.
    let mut first = Mccfr::new(&kuhn, scheduled.clone()).unwrap();
    let mut partial = vec![first.last_report().clone()];
    for _ in 0..22 {
        partial.push(first.step().unwrap().clone());
    }
    assert_eq!(partial[22].nash_conv, None);
    let mut resumed = Mccfr::resume(&kuhn, scheduled, first.state().clone(), &partial).unwrap();
    for _ in 22..30 {
        resumed.step().unwrap();
    }
    assert_eq!(bits(&resumed.state().regrets), bits(&lp.state().regrets));
    let zero = MccfrConfig::builder().nash_conv_every(0).build().unwrap_err().to_string();
    assert!(zero.contains("nash_conv_every: 0 would never evaluate"), "{zero}");
}

#[test]
fn saved_states_that_do_not_fit_are_refused() {
    let kuhn = tree("kuhn_poker");
    let config = config(Sampling::External, None, 10, 1);
    let mut mccfr = Mccfr::new(&kuhn, config.clone()).unwrap();
    let mut reports = vec![mccfr.last_report().clone()];
    for _ in 0..3 {
        reports.push(mccfr.step().unwrap().clone());
    }
    let good = mccfr.state().clone();
    let refused_with = |state: MccfrState, tree: &GameTree, reports: &[IterationReport]| match Mccfr::resume(
        tree,
        config.clone(),
        state,
        reports,
    ) {
        Err(e @ Error::SavedState(_)) => e.to_string(),
        Err(e) => panic!("another error: {e}"),
        Ok(_) => panic!("accepted"),
    };
    let refused = |state: MccfrState| refused_with(state, &kuhn, &reports);
    let mut s = good.clone();
    s.regrets.pop();
    assert!(refused(s).contains("regrets have 23 entries"));
    let mut s = good.clone();
    s.cumulative_policy[3] = f64::INFINITY;
    assert!(refused(s).contains("cumulative policy hold inf at sequence 3"));
    let mut s = good.clone();
    s.cumulative_policy[0] = -1.0;
    assert!(refused(s).contains("-1 at sequence 0"));
    let mut s = good.clone();
    s.traversals = 29;
    let why = refused(s);
    assert!(why.contains("the state has 29 traversals, the report of iteration 3 30"), "{why}");
    let mut partless = reports.clone();
    partless[2].details = Default::default();
    let why = refused_with(good.clone(), &kuhn, &partless);
    assert!(why.contains("the report of iteration 2 has no MCCFR part"), "{why}");
    refused_with(good.clone(), &kuhn, &reports[..3]);
    let mut s = good.clone();
    s.cumulative_policy.iter_mut().enumerate().for_each(|(k, x)| *x *= 1.0 + k as f64);
    assert!(refused(s).contains("says NashConv"));
    assert!(refused_with(good.clone(), &tree("leduc_poker"), &reports).contains("the tree 2184 sequences"));
    Mccfr::resume(&kuhn, config.clone(), good, &reports).unwrap();
}

#[test]
fn the_loop_reports_through_the_training_loop_trait() {
    let three = tree("kuhn_poker(players=3)");
    let mut mccfr = Mccfr::new(&three, config(Sampling::Outcome, None, 200, 5)).unwrap();
    assert_eq!(TrainingLoop::name(&mccfr), "mccfr");
    let run = run_loop(&mut mccfr, &RunLimits::iterations(20), &mut ()).unwrap();
    let nash_conv: Vec<f64> = run.reports.iter().map(|r| r.nash_conv.unwrap()).collect();
    assert!(nash_conv[20] < nash_conv[0] / 4.0, "{nash_conv:?}");
    let last = run.reports.last().unwrap();
    assert_eq!(last.population_sizes, vec![1; 3]);
    assert_eq!(last.exploitability, None, "NashConv / 2 is only for 2 players");
    for (k, r) in run.reports.iter().enumerate() {
        assert_eq!(r.details.get::<MccfrReport>().unwrap().traversals, 200 * k as u64);
    }
    assert!(run.reports[1..].iter().all(|r| r.times.oracle_s > 0.0 && r.times.nash_conv_s > 0.0));
    mccfr.average_policy().validate(&three).unwrap();
    mccfr.current_policy().validate(&three).unwrap();
    let kuhn = tree("kuhn_poker");
    let mut two = Mccfr::new(&kuhn, config(Sampling::External, None, 100, 0)).unwrap();
    let last = run_loop(&mut two, &RunLimits::iterations(2), &mut ()).unwrap().reports.pop().unwrap();
    assert_eq!(last.exploitability, Some(last.nash_conv.unwrap() / 2.0));
}

#[test]
fn settings_are_checked() {
    let err = |b: MccfrConfigBuilder| b.build().unwrap_err().to_string();
    let outcome = || MccfrConfig::builder().sampling(Sampling::Outcome);
    for (epsilon, says) in [
        (0.0, "epsilon: 0 is not in (0, 1]"),
        (-0.5, "epsilon: -0.5 is not in (0, 1]"),
        (1.5, "epsilon: 1.5 is not in (0, 1]"),
        (f64::NAN, "epsilon: NaN is not in (0, 1]"),
    ] {
        assert_eq!(err(outcome().epsilon(epsilon)), format!("invalid config: {says}"));
    }
    outcome().epsilon(1.0).build().unwrap();
    assert!(
        err(MccfrConfig::builder().traversals_per_iteration(0))
            .contains("traversals_per_iteration: 0; at least 1")
    );
    assert!(
        err(MccfrConfig::builder().traversals_per_iteration(1_000_000_000_001)).contains("more than the cap")
    );
    assert!(
        err(MccfrConfig::builder().epsilon(0.5))
            .contains("epsilon: only outcome sampling reads it (sampling is external)")
    );
    assert!(
        err(outcome().average(AverageType::Full))
            .contains("average: only external sampling reads it (sampling is outcome)")
    );

    let parse = |json: &str| serde_json::from_str::<MccfrConfig>(json);
    let c = parse(r#"{"average": "full", "seed": 4}"#).unwrap();
    assert_eq!((c.sampling(), c.average(), c.seed()), (Sampling::External, AverageType::Full, 4));
    let c = parse(r#"{"sampling": "outcome", "epsilon": 0.25, "traversals_per_iteration": 7}"#).unwrap();
    assert_eq!((c.sampling(), c.epsilon(), c.traversals_per_iteration()), (Sampling::Outcome, 0.25, 7));
    assert!(parse(r#"{"sampling": "chance"}"#).is_err());
    assert!(parse(r#"{"traversals": 5}"#).unwrap_err().to_string().contains("unknown field"));
    for c in configs() {
        assert_eq!(parse(&serde_json::to_string(&c).unwrap()).unwrap(), c);
    }
}

/// Bad settings in a config: one line naming the field, exit 2, no run folder.
#[test]
fn bad_settings_are_refused_in_one_line() {
    let dir = temp_dir("mccfr-refused");
    for (name, fields, says) in [
        ("epsilon-0", "sampling = \"outcome\"\nepsilon = 0.0", "epsilon: 0 is not in (0, 1]"),
        ("epsilon-big", "sampling = \"outcome\"\nepsilon = 1.01", "epsilon: 1.01 is not in (0, 1]"),
        ("traversals-0", "traversals_per_iteration = 0", "traversals_per_iteration: 0; at least 1"),
        ("epsilon-external", "epsilon = 0.5", "epsilon: only outcome sampling reads it"),
        ("sampling", "sampling = \"chance\"", "sampling"),
    ] {
        let path = dir.join(format!("{name}.toml"));
        std::fs::write(&path, format!("game = \"kuhn_poker\"\nalgorithm = \"mccfr\"\n{fields}\n")).unwrap();
        let out = dir.join(format!("out-{name}"));
        let err = one_line_error(&metagame(&["run", path.to_str().unwrap(), "--out", out.to_str().unwrap()]));
        assert!(err.contains(says), "{name}: {err}");
        assert!(!out.exists(), "{name}: no run folder");
    }
}
