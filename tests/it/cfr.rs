//! The CFR family as a training loop: resuming a saved state continues bit for bit, saved
//! states that do not fit are refused, n-player runs, settings validation. (The OpenSpiel
//! reference values are the unit tests of `populations/src/loops/cfr.rs`.)

use metagame::games::{GameTree, registry};
use metagame::populations::loops::cfr::{Cfr, CfrConfig, CfrConfigBuilder, CfrReport, CfrState, CfrVariant};
use metagame::populations::{Error, IterationReport, RunLimits, TrainingLoop, run_loop};

fn tree(game: &str) -> GameTree {
    GameTree::build(&registry::load(game).unwrap()).unwrap()
}

fn configs() -> Vec<CfrConfig> {
    let mut out = Vec::new();
    for variant in [CfrVariant::Cfr, CfrVariant::CfrPlus, CfrVariant::Linear, CfrVariant::Discounted] {
        for alternating in [true, false] {
            out.push(CfrConfig::builder().variant(variant).alternating(alternating).build().unwrap());
        }
    }
    out.push(
        CfrConfig::builder()
            .variant(CfrVariant::Discounted)
            .alpha(2.0)
            .beta(-1.0)
            .gamma(0.5)
            .build()
            .unwrap(),
    );
    out
}

fn bits(xs: &[f64]) -> Vec<u64> {
    xs.iter().map(|x| x.to_bits()).collect()
}

fn assert_same_run(
    (a, ra): (&Cfr<'_>, &[IterationReport]),
    (b, rb): (&Cfr<'_>, &[IterationReport]),
    what: &str,
) {
    let (sa, sb) = (a.state(), b.state());
    assert_eq!(sa.iteration, sb.iteration, "{what}");
    assert_eq!(bits(&sa.regrets), bits(&sb.regrets), "{what}: regrets");
    assert_eq!(bits(&sa.cumulative_policy), bits(&sb.cumulative_policy), "{what}: cumulative policy");
    let strip = |r: &[IterationReport]| r.iter().map(|r| r.without_times()).collect::<Vec<_>>();
    assert_eq!(strip(ra), strip(rb), "{what}: reports and their CFR parts");
    assert_eq!(a.average_policy(), b.average_policy(), "{what}: average policy");
    assert_eq!(a.current_policy(), b.current_policy(), "{what}: current policy");
}

#[test]
fn a_resumed_run_continues_bit_for_bit() {
    for (game, first, then) in [("kuhn_poker", 10, 10), ("leduc_poker", 3, 3)] {
        let tree = tree(game);
        for config in configs() {
            let what = format!("{game} {config:?}");
            let mut straight = Cfr::new(&tree, config.clone()).unwrap();
            let whole =
                run_loop(&mut straight, &RunLimits::iterations(first + then), &mut ()).unwrap().reports;

            let mut before = Cfr::new(&tree, config.clone()).unwrap();
            let mut reports = run_loop(&mut before, &RunLimits::iterations(first), &mut ()).unwrap().reports;
            let json = serde_json::to_string(before.state()).unwrap();
            let state: CfrState = serde_json::from_str(&json).unwrap();
            assert_eq!(&state, before.state(), "{what}: the JSON round trip");
            let mut resumed = Cfr::resume(&tree, config.clone(), state, &reports).unwrap();
            for _ in 0..then {
                reports.push(resumed.step().unwrap().clone());
            }
            assert_same_run((&straight, &whole), (&resumed, &reports), &what);
        }
    }
}

#[test]
fn saved_states_that_do_not_fit_are_refused() {
    let kuhn = tree("kuhn_poker");
    let plus = CfrConfig::builder().variant(CfrVariant::CfrPlus).build().unwrap();
    let mut cfr = Cfr::new(&kuhn, CfrConfig::default()).unwrap();
    let mut reports = vec![cfr.last_report().clone()];
    for _ in 0..5 {
        reports.push(cfr.step().unwrap().clone());
    }
    let good = cfr.state().clone();
    assert!(good.regrets.iter().any(|&r| r < 0.0), "vanilla CFR keeps negative regrets");
    let refused_with = |state: CfrState, config: &CfrConfig, tree: &GameTree, reports: &[IterationReport]| {
        match Cfr::resume(tree, config.clone(), state, reports) {
            Err(e @ Error::SavedState(_)) => e.to_string(),
            Err(e) => panic!("another error: {e}"),
            Ok(_) => panic!("accepted"),
        }
    };
    let refused =
        |state: CfrState, config: &CfrConfig, tree: &GameTree| refused_with(state, config, tree, &reports);
    let default = CfrConfig::default();
    let mut s = good.clone();
    s.regrets.pop();
    assert!(refused(s, &default, &kuhn).contains("regrets have 23 entries"));
    let mut s = good.clone();
    s.cumulative_policy[3] = f64::NAN;
    assert!(refused(s, &default, &kuhn).contains("cumulative policy hold NaN at sequence 3"));
    let mut s = good.clone();
    s.cumulative_policy[0] = -1.0;
    assert!(refused(s, &default, &kuhn).contains("-1 at sequence 0"));
    // Vanilla CFR's negative regrets cannot be CFR+'s.
    assert!(refused(good.clone(), &plus, &kuhn).contains("below cfr+'s floor"));
    let mut partless = reports.clone();
    partless.last_mut().unwrap().details = Default::default();
    let why = refused_with(good.clone(), &default, &kuhn, &partless);
    assert!(why.contains("the report of iteration 5 has no CFR part"), "{why}");
    refused_with(good.clone(), &default, &kuhn, &reports[..5]);
    let mut s = good.clone();
    s.cumulative_policy.iter_mut().for_each(|x| *x *= 1.0 + (*x).fract());
    assert!(refused(s, &default, &kuhn).contains("says NashConv"));
    // A Kuhn state on Leduc.
    assert!(refused(good.clone(), &default, &tree("leduc_poker")).contains("the tree 2184 sequences"));
    // The good state resumes.
    Cfr::resume(&kuhn, default, good, &reports).unwrap();
}

#[test]
fn three_player_kuhn_approaches_equilibrium() {
    let tree = tree("kuhn_poker(players=3)");
    for variant in [CfrVariant::Cfr, CfrVariant::CfrPlus, CfrVariant::Discounted] {
        let config = CfrConfig::builder().variant(variant).build().unwrap();
        let mut cfr = Cfr::new(&tree, config).unwrap();
        let cfr_run = run_loop(&mut cfr, &RunLimits::iterations(60), &mut ()).unwrap();
        let nash_conv: Vec<f64> = cfr_run.reports.iter().map(|r| r.nash_conv.unwrap()).collect();
        assert!(
            nash_conv[60] < nash_conv[10] && nash_conv[10] < nash_conv[0] / 2.0,
            "{variant:?}: {nash_conv:?}"
        );
        let last = cfr_run.reports.last().unwrap();
        assert_eq!(last.population_sizes, vec![1; 3]);
        assert_eq!(last.exploitability, None, "NashConv / 2 is only for 2 players");
        assert!(cfr.current_nash_conv().is_finite());
        cfr.average_policy().validate(&tree).unwrap();
        cfr.current_policy().validate(&tree).unwrap();
    }
}

#[test]
fn the_loop_reports_through_the_training_loop_trait() {
    let tree = tree("kuhn_poker");
    let mut cfr =
        Cfr::new(&tree, CfrConfig::builder().variant(CfrVariant::CfrPlus).build().unwrap()).unwrap();
    assert_eq!(TrainingLoop::name(&cfr), "cfr");
    let limits = RunLimits::builder().max_iterations(1000).target_nash_conv(0.01).build().unwrap();
    let cfr_run = run_loop(&mut cfr, &limits, &mut ()).unwrap();
    let last = cfr_run.reports.last().unwrap();
    assert!(last.nash_conv.unwrap() <= 0.01 && last.iteration < 100, "{last:?}");
    assert_eq!(last.exploitability, Some(last.nash_conv.unwrap() / 2.0));
    assert_eq!(cfr.iteration(), last.iteration);
    assert!(cfr_run.reports.iter().all(|r| r.details.get::<CfrReport>().is_some()));
    assert!(cfr_run.reports[1..].iter().all(|r| r.times.oracle_s > 0.0 && r.times.nash_conv_s > 0.0));
}

#[test]
fn settings_are_checked() {
    let err = |b: CfrConfigBuilder| b.build().unwrap_err().to_string();
    let dcfr = || CfrConfig::builder().variant(CfrVariant::Discounted);
    assert!(
        err(CfrConfig::builder().alpha(1.0))
            .contains("alpha: only the dcfr variant reads it (variant is cfr)")
    );
    assert!(
        err(CfrConfig::builder().variant(CfrVariant::CfrPlus).gamma(1.0)).contains("gamma: only the dcfr")
    );
    assert!(err(dcfr().alpha(-0.5)).contains("alpha: -0.5"));
    assert!(err(dcfr().alpha(f64::INFINITY)).contains("alpha: inf"));
    assert!(err(dcfr().beta(f64::NAN)).contains("beta: NaN"));
    assert!(err(dcfr().gamma(-1.0)).contains("gamma: -1"));
    dcfr().alpha(0.0).beta(-3.0).gamma(0.0).build().unwrap();

    let parse = |json: &str| serde_json::from_str::<CfrConfig>(json);
    let c = parse(r#"{"variant": "cfr+", "alternating": false}"#).unwrap();
    assert_eq!((c.variant(), c.alternating()), (CfrVariant::CfrPlus, false));
    let c = parse(r#"{"variant": "dcfr", "alpha": 2.5}"#).unwrap();
    assert_eq!((c.alpha(), c.beta(), c.gamma()), (2.5, 0.0, 2.0));
    assert_eq!(parse(r#"{"variant": "linear"}"#).unwrap().variant(), CfrVariant::Linear);
    assert!(parse(r#"{"variant": "cfr_plus"}"#).is_err());
    assert!(parse(r#"{"alternate": true}"#).unwrap_err().to_string().contains("unknown field"));
    assert!(parse(r#"{"variant": "cfr", "beta": 0.5}"#).unwrap_err().to_string().contains("beta: only"));
    // Serialised configs validate again (no α, β, γ written for other variants).
    for c in configs() {
        assert_eq!(parse(&serde_json::to_string(&c).unwrap()).unwrap(), c);
    }
    assert_eq!(CfrConfigBuilder::FIELDS, &["variant", "alternating", "alpha", "beta", "gamma"]);
}

/// On goofspiel(num_cards=4), whose strings forget the order of a player's own bids, CFR
/// walks histories keyed by string as OpenSpiel's does: the average policy's NashConv after
/// each of the first three iterations is OpenSpiel 2.0.2's
/// (`g = pyspiel.load_game_as_turn_based("goofspiel(num_cards=4)")`,
/// `s = pyspiel.CFRSolver(g)`, then `s.evaluate_and_update_policy()` and
/// `pyspiel.nash_conv(g, s.average_policy())`).
#[test]
fn cfr_on_imperfect_recall_is_openspiels() {
    let tree = tree("goofspiel(num_cards=4)");
    assert!(!tree.has_perfect_recall());
    let mut cfr = Cfr::new(&tree, CfrConfig::default()).unwrap();
    for want in [1.4930555555555556, 1.3266639120952854, 1.0372164233197492] {
        let got = cfr.step().unwrap().nash_conv.unwrap();
        assert!((got - want).abs() < 1e-12, "{got} vs OpenSpiel's {want}");
    }
}
