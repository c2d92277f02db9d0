//! Policies and information sets produced by OpenSpiel 2.0.2 (benches/peers/make_fixtures.py).

use std::path::Path;

use std::collections::{HashMap, HashSet};

use metagame::games::{
    ActionId, Game, GameTree, InfosetId, NashConvReport, NodeKind, PlayerId, State, TabularPolicy, Turn,
    nash_conv_report, registry,
};
use serde_json::Value;

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/openspiel"))
}

fn read_json(name: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(fixtures().join(name)).unwrap()).unwrap()
}

#[test]
fn information_state_strings_and_legal_actions_equal_openspiel() {
    for (spec, file) in [
        ("kuhn_poker", "kuhn_poker_infosets.json"),
        ("kuhn_poker(players=3)", "kuhn_poker_3p_infosets.json"),
        ("leduc_poker", "leduc_poker_infosets.json"),
        ("liars_dice", "liars_dice_infosets.json"),
        ("liars_dice(numdice=2,dice_sides=2)", "liars_dice_2d2s_infosets.json"),
        ("leduc_poker(players=3)", "leduc_poker_3p_infosets.json"),
        // OpenSpiel's turn-based form (load_game_as_turn_based) of a simultaneous game.
        ("goofspiel(num_cards=3)", "goofspiel_3_infosets.json"),
        (
            "goofspiel(imp_info=True,num_cards=4,points_order=descending)",
            "goofspiel_4_imp_desc_infosets.json",
        ),
        ("goofspiel(imp_info=True,num_cards=4)", "goofspiel_4_imp_infosets.json"),
        (
            "goofspiel(imp_info=True,num_cards=3,players=3,returns_type=point_difference)",
            "goofspiel_3p_infosets.json",
        ),
        (
            "goofspiel(imp_info=True,num_cards=5,points_order=ascending,returns_type=total_points)",
            "goofspiel_5_imp_asc_total_infosets.json",
        ),
    ] {
        let t = GameTree::build(&registry::load(spec).unwrap()).unwrap();
        let expected = read_json(file);
        let count = |key: &str| expected[key].as_u64().unwrap() as usize;
        assert_eq!(count("num_histories"), t.num_nodes(), "{spec}");
        assert_eq!(count("num_terminals"), t.num_terminals(), "{spec}");
        assert_eq!(count("num_decision"), t.count(NodeKind::Decision), "{spec}");
        assert_eq!(count("num_chance"), t.count(NodeKind::Chance), "{spec}");
        let num_infosets: Vec<usize> =
            (0..t.num_players()).map(|p| t.infosets_of(PlayerId(p)).len()).collect();
        check_sampled_infosets(spec, &expected, &num_infosets, |key| {
            t.infoset_by_key(key)
                .map(|id| (t.infoset_player(id), t.legal_actions(id).iter().map(|a| a.0).collect()))
        });
    }
}

/// The fixture's information states (every k-th of each player's sorted list for large
/// games: `infosets_sample_every`) against ours: `lookup` gives the player and legal actions
/// of an information state.
fn check_sampled_infosets(
    spec: &str,
    expected: &Value,
    num_infosets: &[usize],
    lookup: impl Fn(&str) -> Option<(usize, Vec<usize>)>,
) {
    let every = expected["infosets_sample_every"].as_u64().unwrap_or(1) as usize;
    let per_player = expected["infosets"].as_array().unwrap();
    assert_eq!(per_player.len(), num_infosets.len(), "{spec}");
    for (p, infosets) in per_player.iter().enumerate() {
        let infosets = infosets.as_array().unwrap();
        assert_eq!(expected["num_infosets"][p].as_u64().unwrap() as usize, num_infosets[p], "{spec} {p}");
        assert_eq!(infosets.len(), num_infosets[p].div_ceil(every), "{spec} player {p}");
        for info in infosets {
            let key = info["key"].as_str().unwrap();
            let (player, legal) = lookup(key).unwrap_or_else(|| panic!("{spec}: no infoset {key:?}"));
            assert_eq!(player, p, "{spec} {key:?}");
            let want: Vec<usize> = info["legal_actions"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_u64().unwrap() as usize)
                .collect();
            assert_eq!(legal, want, "{spec} {key:?}");
        }
    }
}

/// A game walked state by state, apart from the tree: counts, each information
/// state's player and legal actions, and the information states reached with different
/// earlier (information state, action) pairs of their player (imperfect recall).
#[derive(Default)]
struct Walk {
    counts: [usize; 4],
    infosets: HashMap<String, (usize, Vec<usize>)>,
    own_history: HashMap<String, Vec<(String, usize)>>,
    imperfect_recall: HashSet<String>,
}

impl Walk {
    fn visit<S: State>(&mut self, state: &S, own: &[Vec<(String, usize)>]) {
        self.counts[0] += 1;
        match state.turn() {
            Turn::Terminal => self.counts[1] += 1,
            Turn::Chance => {
                self.counts[3] += 1;
                for (a, _) in state.chance_outcomes() {
                    let mut child = state.clone();
                    child.apply_action(a);
                    self.visit(&child, own);
                }
            }
            Turn::Player(PlayerId(p)) => {
                self.counts[2] += 1;
                let key = state.information_state_string(PlayerId(p));
                let legal: Vec<usize> = state.legal_actions().iter().map(|a| a.0).collect();
                self.infosets.entry(key.clone()).or_insert((p, legal.clone()));
                if self.own_history.entry(key.clone()).or_insert_with(|| own[p].clone()) != &own[p] {
                    self.imperfect_recall.insert(key.clone());
                }
                for a in legal {
                    let mut child = state.clone();
                    child.apply_action(ActionId(a));
                    let mut child_own = own.to_vec();
                    child_own[p].push((key.clone(), a));
                    self.visit(&child, &child_own);
                }
            }
        }
    }
}

/// OpenSpiel's goofspiel(num_cards=4), the benchmark spec (random point order,
/// perfect-information strings): its strings forget the order of a player's own bids. The
/// tree builds keyed by the strings, as OpenSpiel's algorithms key it, and says it lacks
/// perfect recall; walked state by state, ours are OpenSpiel's, with the same counts, legal
/// actions and information states of imperfect recall as the tree.
#[test]
fn goofspiel_perfect_information_strings_equal_openspiel_with_imperfect_recall() {
    let spec = "goofspiel(num_cards=4)";
    let game = registry::load(spec).unwrap();
    let tree = GameTree::build(&game).unwrap();
    assert!(!tree.has_perfect_recall());
    let expected = read_json("goofspiel_4_infosets.json");
    assert_eq!(expected["game"], spec);
    let mut walk = Walk::default();
    walk.visit(&game.new_initial_state(), &vec![Vec::new(); game.num_players()]);
    let tree_counts = [
        tree.num_nodes(),
        tree.num_terminals(),
        tree.count(NodeKind::Decision),
        tree.count(NodeKind::Chance),
    ];
    for (i, key) in ["num_histories", "num_terminals", "num_decision", "num_chance"].iter().enumerate() {
        assert_eq!(expected[key].as_u64().unwrap() as usize, walk.counts[i], "{key}");
        assert_eq!(walk.counts[i], tree_counts[i], "{key}");
    }
    let imperfect = expected["imperfect_recall"].as_u64().unwrap() as usize;
    assert_eq!(imperfect, walk.imperfect_recall.len());
    assert_eq!(imperfect, tree.num_imperfect_recall_infosets());
    let num_infosets: Vec<usize> =
        (0..game.num_players()).map(|p| walk.infosets.values().filter(|(q, _)| *q == p).count()).collect();
    check_sampled_infosets(spec, &expected, &num_infosets, |key| walk.infosets.get(key).cloned());
    check_sampled_infosets(spec, &expected, &num_infosets, |key| {
        tree.infoset_by_key(key)
            .map(|id| (tree.infoset_player(id), tree.legal_actions(id).iter().map(|a| a.0).collect()))
    });
}

/// A policy pyspiel and this test both build from the strings alone: at information state
/// `key`, action `a` weighs `1 + (31·Σ bytes(key) + 17·a) mod 10`, normalised over the legal
/// actions.
fn string_weighted_policy(tree: &GameTree) -> TabularPolicy {
    TabularPolicy::from_fn(tree, |i| {
        let s: u64 = tree.infoset_key(i).bytes().map(u64::from).sum();
        let w: Vec<f64> =
            tree.legal_actions(i).iter().map(|a| 1.0 + ((31 * s + 17 * a.0 as u64) % 10) as f64).collect();
        let total: f64 = w.iter().sum();
        w.into_iter().map(|x| x / total).collect()
    })
    .unwrap()
}

/// OpenSpiel 2.0.2's NashConv on goofspiel's imperfect-recall strings, measured with
/// `g = pyspiel.load_game_as_turn_based("goofspiel(num_cards=N)")` and
/// `pyspiel.nash_conv(g, pyspiel.UniformRandomPolicy(g))` (uniform), or
/// `pyspiel.nash_conv(g, table)` with `table` the string-weighted policy's
/// `{information state: [(action, probability)]}` (`string_weighted_policy`). For 4 cards
/// `open_spiel.python.algorithms.exploitability.nash_conv` gives the same numbers (on the
/// simultaneous `load_game("goofspiel(num_cards=4)")` too, for the uniform policy).
fn check_goofspiel_nash_conv(num_cards: usize, uniform: f64, string_weighted: f64) {
    let spec = format!("goofspiel(num_cards={num_cards})");
    let tree = GameTree::build(&registry::load(&spec).unwrap()).unwrap();
    assert!(!tree.has_perfect_recall(), "{spec}");
    for (policy, want) in
        [(TabularPolicy::uniform(&tree), uniform), (string_weighted_policy(&tree), string_weighted)]
    {
        let got = nash_conv_report(&tree, &[&policy, &policy]).unwrap().nash_conv;
        assert!((got - want).abs() < 1e-12, "{spec}: {got} vs pyspiel's {want}");
    }
}

#[test]
fn goofspiel_4_imperfect_recall_nash_conv_is_openspiels() {
    check_goofspiel_nash_conv(4, 1.4930555555555556, 1.699480354879275);
}

#[test]
#[cfg_attr(debug_assertions, ignore = "3.5 million histories: slow unoptimised")]
fn goofspiel_5_imperfect_recall_nash_conv_is_openspiels() {
    check_goofspiel_nash_conv(5, 1.6030555555555557, 1.7916062042985543);
}

/// `best_response_values` (Python) and `best_response_values_cpp`, and `expected_returns`,
/// against ours; the Python values are null where the fixture skipped them.
fn check_values(spec: &str, case: &Value, report: &NashConvReport) {
    for key in ["best_response_values", "best_response_values_cpp"] {
        let Some(want) = case[key].as_array() else { continue };
        for (got, want) in report.best_response_values.iter().zip(want) {
            assert!((got - want.as_f64().unwrap()).abs() < 1e-9, "{spec} {key}");
        }
    }
    for (got, want) in report.expected_returns.iter().zip(case["expected_returns"].as_array().unwrap()) {
        assert!((got - want.as_f64().unwrap()).abs() < 1e-9, "{spec}");
    }
}

#[test]
fn random_openspiel_policies_have_openspiels_nash_conv() {
    let expected = read_json("expected.json");
    let mut checked = 0;
    for case in expected["policies"].as_array().unwrap() {
        let spec = case["game"].as_str().unwrap();
        let t = GameTree::build(&registry::load(spec).unwrap()).unwrap();
        let text = std::fs::read_to_string(fixtures().join(case["file"].as_str().unwrap())).unwrap();
        let policy = TabularPolicy::from_openspiel_json(&t, &text).unwrap();
        let report = nash_conv_report(&t, &vec![&policy; t.num_players()]).unwrap();
        let want = case["nash_conv"].as_f64().unwrap();
        assert!((report.nash_conv - want).abs() < 1e-9, "{spec}: {} vs {want}", report.nash_conv);
        check_values(spec, case, &report);
        checked += 1;
    }
    assert_eq!(checked, 13);
}

/// OpenSpiel's NashConv of the uniform policy (Python and C++; C++ only for
/// leduc_poker(players=3)), including games whose uniform policy file is not stored
/// (liars_dice's would be 8 MB): the uniform policy is built here.
#[test]
fn uniform_policies_have_openspiels_nash_conv() {
    let expected = read_json("expected.json");
    let mut games = Vec::new();
    for case in expected["uniform"].as_array().unwrap() {
        let spec = case["game"].as_str().unwrap();
        let t = GameTree::build(&registry::load(spec).unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&t);
        if let Some(file) = case["file"].as_str() {
            let text = std::fs::read_to_string(fixtures().join(file)).unwrap();
            let theirs = TabularPolicy::from_openspiel_json(&t, &text).unwrap();
            assert_eq!(theirs, uniform, "{spec}");
        }
        let report = nash_conv_report(&t, &vec![&uniform; t.num_players()]).unwrap();
        assert!(case["nash_conv_cpp"].is_f64(), "{spec}");
        for key in ["nash_conv", "nash_conv_cpp"] {
            let Some(want) = case[key].as_f64() else { continue };
            assert!((report.nash_conv - want).abs() < 1e-9, "{spec} {key}: {} vs {want}", report.nash_conv);
        }
        check_values(spec, case, &report);
        games.push(spec.to_string());
    }
    for spec in [
        "kuhn_poker",
        "leduc_poker",
        "liars_dice",
        "liars_dice(numdice=2,dice_sides=2)",
        "leduc_poker(players=3)",
        "goofspiel(num_cards=3)",
        "goofspiel(imp_info=True,num_cards=4,points_order=descending)",
        "goofspiel(imp_info=True,num_cards=4)",
        "goofspiel(imp_info=True,num_cards=3,players=3,returns_type=point_difference)",
        "goofspiel(imp_info=True,num_cards=5,points_order=ascending,returns_type=total_points)",
    ] {
        assert!(games.iter().any(|g| g == spec), "{spec} missing from expected.json");
    }
}

#[test]
fn policy_json_round_trips() {
    let t = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
    let text = std::fs::read_to_string(fixtures().join("leduc_poker_random_1.json")).unwrap();
    let policy = TabularPolicy::from_openspiel_json(&t, &text).unwrap();
    let again = TabularPolicy::from_openspiel_json(&t, &policy.to_openspiel_json(&t)).unwrap();
    assert_eq!(policy, again);
    assert!(policy.row(InfosetId(0)).iter().sum::<f64>() > 0.99);
}

#[test]
fn bad_policies_name_the_information_state() {
    let t = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    let good = TabularPolicy::uniform(&t).to_openspiel_json(&t);
    let unnormalised = good.replacen("0.5", "0.6", 1);
    let err = TabularPolicy::from_openspiel_json(&t, &unnormalised).unwrap_err().to_string();
    assert!(err.contains("sum to"), "{err}");
    let unknown = good.replacen("\"0\"", "\"9\"", 1);
    let err = TabularPolicy::from_openspiel_json(&t, &unknown).unwrap_err().to_string();
    assert!(err.contains("\"9\""), "{err}");
    let negative = good.replacen("0.5", "-0.5", 1);
    assert!(TabularPolicy::from_openspiel_json(&t, &negative).is_err());
    assert!(TabularPolicy::from_openspiel_json(&t, "{\"0\": [[0, 0.5], [1").is_err());
    let lt = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
    // Fold (0) is illegal at the first decision of a round.
    let key = "[Observer: 0][Private: 0][Round 1][Player: 0][Pot: 2][Money: 99 99][Round1: ][Round2: ]";
    let mut map: serde_json::Map<String, Value> =
        serde_json::from_str(&TabularPolicy::uniform(&lt).to_openspiel_json(&lt)).unwrap();
    map.insert(key.into(), serde_json::json!([[0, 0.5], [1, 0.5], [2, 0.0]]));
    let err =
        TabularPolicy::from_openspiel_json(&lt, &Value::Object(map).to_string()).unwrap_err().to_string();
    assert!(err.contains("illegal action 0") && err.contains("Private: 0"), "{err}");
}
