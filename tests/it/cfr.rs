//! The CFR family as a training loop: resuming a saved state continues bit for bit, saved
//! states that do not fit are refused, n-player runs, settings validation. (The OpenSpiel
//! reference values are the unit tests of `populations/src/loops/cfr.rs`.)

use metagame::games::{GameTree, registry};
use metagame::populations::loops::cfr::{
    Cfr, CfrConfig, CfrConfigBuilder, CfrReport, CfrState, CfrVariant, NashConvSchedule,
};
use metagame::populations::{Error, IterationReport, RunLimits, TrainingLoop, run_loop};

fn tree(game: &str) -> GameTree {
    GameTree::build(&registry::load(game).unwrap()).unwrap()
}

fn configs() -> Vec<CfrConfig> {
    let mut out = Vec::new();
    for variant in CfrVariant::ALL {
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
    assert_eq!(bits(&sa.predictions), bits(&sb.predictions), "{what}: predictions");
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
    // Predictions only for pcfr+, one per sequence, finite.
    let mut s = good.clone();
    s.predictions = vec![0.0; 24];
    assert!(refused(s, &default, &kuhn).contains("the predictions have 24 entries, cfr wants 0"));
    let predictive = CfrConfig::builder().variant(CfrVariant::Predictive).build().unwrap();
    let mut p = Cfr::new(&kuhn, predictive.clone()).unwrap();
    let mut p_reports = vec![p.last_report().clone()];
    for _ in 0..5 {
        p_reports.push(p.step().unwrap().clone());
    }
    let p_good = p.state().clone();
    let mut s = p_good.clone();
    s.predictions.clear();
    let why = refused_with(s, &predictive, &kuhn, &p_reports);
    assert!(why.contains("the predictions have 0 entries, pcfr+ wants 24"), "{why}");
    let mut s = p_good.clone();
    s.predictions[2] = f64::INFINITY;
    let why = refused_with(s, &predictive, &kuhn, &p_reports);
    assert!(why.contains("the predictions hold inf at sequence 2"), "{why}");
    Cfr::resume(&kuhn, predictive, p_good, &p_reports).unwrap();
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
        let nash_conv: Vec<Option<f64>> = cfr_run.reports.iter().map(|r| r.nash_conv).collect();
        let at = |t: usize| nash_conv[t].unwrap();
        assert!(at(60) < at(10) && at(10) < at(0) / 2.0, "{variant:?}: {nash_conv:?}");
        let last = cfr_run.reports.last().unwrap();
        assert_eq!(last.population_sizes, vec![1; 3]);
        assert_eq!(last.exploitability, None, "NashConv / 2 is only for 2 players");
        assert!(cfr.current_nash_conv().unwrap().is_finite(), "the last iteration is evaluated");
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
    assert!(cfr_run.reports[1..].iter().all(|r| r.times.oracle_s > 0.0));
    // NashConv on the schedule only: every iteration up to 20, then about 5% apart.
    for r in &cfr_run.reports {
        const SCHEDULED: [usize; 26] = [
            21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 44, 47, 50, 53, 56, 59, 62, 66, 70, 74, 78, 82, 87,
            92, 97,
        ];
        let evaluated = r.iteration <= 20 || SCHEDULED.contains(&r.iteration);
        assert_eq!(r.nash_conv.is_some(), evaluated, "{r:?}");
        assert_eq!(r.times.nash_conv_s > 0.0, evaluated, "{r:?}");
        let part = r.details.get::<CfrReport>().unwrap();
        assert_eq!(part.current_nash_conv.is_some(), evaluated, "{r:?}");
    }
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
    assert_eq!(
        CfrConfigBuilder::FIELDS,
        &["variant", "alternating", "alpha", "beta", "gamma", "nash_conv_every", "walk"]
    );
    // The walk: history by default and not written; vectors written and read back.
    let c = parse(r#"{"variant": "cfr+", "walk": "vectors"}"#).unwrap();
    assert_eq!(c.walk(), metagame::populations::loops::cfr::CfrWalk::Vectors);
    assert!(serde_json::to_string(&c).unwrap().contains(r#""walk":"vectors""#));
    assert!(!serde_json::to_string(&parse("{}").unwrap()).unwrap().contains("walk"));
    assert!(parse(r#"{"walk": "lanes"}"#).is_err());
    assert_eq!(parse(r#"{"variant": "pcfr+"}"#).unwrap().variant(), CfrVariant::Predictive);
    let every = parse(r#"{"nash_conv_every": 10}"#).unwrap();
    assert_eq!(every.nash_conv_schedule(), NashConvSchedule::Every(10));
    assert_eq!(CfrConfig::default().nash_conv_schedule(), NashConvSchedule::Auto);
    assert!(err(CfrConfig::builder().nash_conv_every(0)).contains("nash_conv_every: 0 would never evaluate"));
}

/// A run's last iteration is evaluated whatever the schedule, the others on it only; with
/// `nash_conv_every = 1` every one is, as before the schedule.
#[test]
fn nash_conv_is_evaluated_on_the_schedule_and_at_the_end() {
    let tree = tree("kuhn_poker");
    let run = |builder: CfrConfigBuilder, iterations: usize| {
        let mut cfr = Cfr::new(&tree, builder.build().unwrap()).unwrap();
        run_loop(&mut cfr, &RunLimits::iterations(iterations), &mut ()).unwrap().reports
    };
    let evaluated = |reports: &[IterationReport]| {
        reports.iter().filter(|r| r.nash_conv.is_some()).map(|r| r.iteration).collect::<Vec<_>>()
    };
    let every_7 = run(CfrConfig::builder().nash_conv_every(7), 30);
    assert_eq!(evaluated(&every_7), vec![0, 7, 14, 21, 28, 30]);
    let auto = run(CfrConfig::builder(), 45);
    let mut want: Vec<usize> = (0..=20).collect();
    want.extend([21, 23, 25, 27, 29, 31, 33, 35, 37, 39, 41, 44, 45]);
    assert_eq!(evaluated(&auto), want);
    let all = run(CfrConfig::builder().nash_conv_every(1), 45);
    assert_eq!(evaluated(&all), (0..=45).collect::<Vec<_>>());
    // The schedule changes the reports, never the tables: the evaluated values agree.
    for r in &auto {
        if let Some(x) = r.nash_conv {
            assert_eq!(
                x.to_bits(),
                all[r.iteration].nash_conv.unwrap().to_bits(),
                "iteration {}",
                r.iteration
            );
        }
    }
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

/// `walk = "vectors"` from a config, as a user runs it: Leduc CFR+ with hand vectors runs,
/// its run folder resumes to the uninterrupted run, and on a game it does not take (three
/// players) it is one line and exit 2, nothing written.
#[test]
fn the_vector_walk_runs_from_a_config_and_resumes() {
    use crate::cli::{metagame, one_line_error, temp_dir};
    let dir = temp_dir("cfr-vectors");
    let config = dir.join("leduc.toml");
    std::fs::write(
        &config,
        "game = \"leduc_poker\"\nalgorithm = \"cfr\"\nvariant = \"cfr+\"\nwalk = \"vectors\"\nmax_iterations = 60\n",
    )
    .unwrap();
    let whole = dir.join("whole");
    let out = metagame(&["run", config.to_str().unwrap(), "--out", whole.to_str().unwrap(), "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let history = |d: &std::path::Path| {
        std::fs::read_to_string(d.join("history.jsonl"))
            .unwrap()
            .lines()
            .map(|l| {
                let mut v: serde_json::Value = serde_json::from_str(l).unwrap();
                let report = v["report"].as_object_mut().unwrap();
                report.remove("times");
                report.remove("elapsed_s");
                v["report"].clone()
            })
            .collect::<Vec<_>>()
    };
    let reports = history(&whole);
    assert_eq!(reports.len(), 61);
    let last = reports.last().unwrap()["nash_conv"].as_f64().unwrap();
    assert!(last < 0.1, "NashConv {last} after 60 iterations");
    // Stopped after 30 iterations and resumed: the same reports.
    let half = dir.join("half");
    std::fs::write(dir.join("short.toml"), std::fs::read_to_string(&config).unwrap().replace("60", "30"))
        .unwrap();
    let short = dir.join("short.toml");
    assert!(metagame(&["run", short.to_str().unwrap(), "--out", half.to_str().unwrap()]).status.success());
    let out = metagame(&["run", config.to_str().unwrap(), "--resume", half.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // The same reports, but for NashConv at iteration 30: a run evaluates its last iteration
    // whatever the schedule, and the short run's last was 30.
    let without_30 = |mut r: Vec<serde_json::Value>| {
        for key in ["nash_conv", "current_nash_conv", "exploitability"] {
            r[30][key] = serde_json::Value::Null;
        }
        r
    };
    assert_eq!(without_30(history(&half)), without_30(reports));
    // Three players: refused in one line.
    let three = dir.join("three.toml");
    std::fs::write(&three, "game = \"kuhn_poker(players=3)\"\nalgorithm = \"cfr\"\nwalk = \"vectors\"\n")
        .unwrap();
    let refused = dir.join("refused");
    let err =
        one_line_error(&metagame(&["run", three.to_str().unwrap(), "--out", refused.to_str().unwrap()]));
    assert!(err.contains("walk: \"vectors\" needs a two-player game"), "{err}");
}
