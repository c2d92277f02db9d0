//! Policies and information sets produced by OpenSpiel 2.0.2 (benches/peers/make_fixtures.py).

use std::path::Path;

use metagame::games::{GameTree, InfosetId, NodeKind, PlayerId, TabularPolicy, nash_conv_report, registry};
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
    ] {
        let t = GameTree::build(&registry::load(spec).unwrap()).unwrap();
        let expected = read_json(file);
        let count = |key: &str| expected[key].as_u64().unwrap() as usize;
        assert_eq!(count("num_histories"), t.num_nodes(), "{spec}");
        assert_eq!(count("num_terminals"), t.num_terminals(), "{spec}");
        assert_eq!(count("num_decision"), t.count(NodeKind::Decision), "{spec}");
        assert_eq!(count("num_chance"), t.count(NodeKind::Chance), "{spec}");
        // Large games keep every k-th infoset of each player's sorted list (liars_dice: 64th).
        let every = expected["infosets_sample_every"].as_u64().unwrap_or(1) as usize;
        let per_player = expected["infosets"].as_array().unwrap();
        assert_eq!(per_player.len(), t.num_players());
        for (p, infosets) in per_player.iter().enumerate() {
            let infosets = infosets.as_array().unwrap();
            let num_infosets = t.infosets_of(PlayerId(p)).len();
            assert_eq!(expected["num_infosets"][p].as_u64().unwrap() as usize, num_infosets, "{spec} {p}");
            assert_eq!(infosets.len(), num_infosets.div_ceil(every), "{spec} player {p}");
            for info in infosets {
                let key = info["key"].as_str().unwrap();
                let id = t.infoset_by_key(key).unwrap_or_else(|| panic!("{spec}: no infoset {key:?}"));
                assert_eq!(t.infoset_player(id), p);
                let legal: Vec<usize> = t.legal_actions(id).iter().map(|a| a.0).collect();
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
        for (got, want) in
            report.best_response_values.iter().zip(case["best_response_values"].as_array().unwrap())
        {
            assert!((got - want.as_f64().unwrap()).abs() < 1e-9);
        }
        for (got, want) in report.expected_returns.iter().zip(case["expected_returns"].as_array().unwrap()) {
            assert!((got - want.as_f64().unwrap()).abs() < 1e-9);
        }
        checked += 1;
    }
    assert_eq!(checked, 10);
}

/// OpenSpiel's NashConv of the uniform policy (Python and C++), including liars_dice, whose
/// uniform policy file is not stored (8 MB): the uniform policy is built here.
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
        for key in ["nash_conv", "nash_conv_cpp"] {
            let want = case[key].as_f64().unwrap();
            assert!((report.nash_conv - want).abs() < 1e-9, "{spec} {key}: {} vs {want}", report.nash_conv);
        }
        for (got, want) in
            report.best_response_values.iter().zip(case["best_response_values"].as_array().unwrap())
        {
            assert!((got - want.as_f64().unwrap()).abs() < 1e-9, "{spec}");
        }
        for (got, want) in report.expected_returns.iter().zip(case["expected_returns"].as_array().unwrap()) {
            assert!((got - want.as_f64().unwrap()).abs() < 1e-9, "{spec}");
        }
        games.push(spec.to_string());
    }
    for spec in ["kuhn_poker", "leduc_poker", "liars_dice", "liars_dice(numdice=2,dice_sides=2)"] {
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
