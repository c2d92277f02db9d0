//! `metagame solve --game SPEC` on extensive-form games: the sequence-form LP's value and
//! certificate, the policies `--out` writes read back by `exploitability --policy` and the
//! library, and one-line refusals.

use metagame::games::{GameTree, TabularPolicy, nash_conv, registry};

use crate::cli::{json_of, metagame, one_line_error, temp_dir};

#[test]
fn kuhn_and_leduc_values_with_certificates() {
    let v = json_of(&metagame(&["solve", "--game", "kuhn_poker", "--json"]));
    assert_eq!(v["solver"], "sequence-form-lp");
    assert_eq!(v["status"], "solved");
    assert!((v["value"].as_f64().unwrap() + 1.0 / 18.0).abs() < 1e-12, "{v}");
    assert!(v["nash_conv"].as_f64().unwrap() < 1e-9, "{v}");
    // OpenSpiel's sequence_form_lp on leduc_poker: −0.0856064240 (docs/src/commands.md).
    let v = json_of(&metagame(&["solve", "--game", "leduc_poker", "--solver", "sequence-form-lp", "--json"]));
    assert!((v["value"].as_f64().unwrap() + 0.0856064240).abs() < 1e-9, "{v}");
    assert!(v["nash_conv"].as_f64().unwrap() < 1e-9, "{v}");
}

#[test]
fn out_writes_policies_that_exploitability_reads_back() {
    let dir = temp_dir("sequence-form-out");
    let v = json_of(&metagame(&["solve", "--game", "kuhn_poker", "--out", dir.to_str().unwrap(), "--json"]));
    let certificate = v["nash_conv"].as_f64().unwrap();
    let profile = dir.join("policy.json");
    let back = json_of(&metagame(&[
        "exploitability",
        "--game",
        "kuhn_poker",
        "--policy",
        profile.to_str().unwrap(),
        "--json",
    ]));
    assert!((back["nash_conv"].as_f64().unwrap() - certificate).abs() < 1e-15, "{back}");
    assert!((back["expected_returns"][0].as_f64().unwrap() - v["value"].as_f64().unwrap()).abs() < 1e-15);
    // Each player's own file: together they are the same equilibrium.
    let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    let read =
        |p: usize| TabularPolicy::read_openspiel_json(&tree, &dir.join(format!("player_{p}.json"))).unwrap();
    let (first, second) = (read(0), read(1));
    assert!((nash_conv(&tree, &[&first, &second]).unwrap() - certificate).abs() < 1e-15);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn other_games_and_options_are_refused_in_one_line() {
    let err = one_line_error(&metagame(&["solve", "--game", "kuhn_poker(players=3)"]));
    assert!(err.contains("3 players, not 2"), "{err}");
    let err = one_line_error(&metagame(&["solve", "--game", "kuhn_poker", "--solver", "lp"]));
    assert!(err.contains("sequence-form-lp"), "{err}");
    one_line_error(&metagame(&["solve", "--game", "kuhn_poker", "--all"]));
    one_line_error(&metagame(&["solve", "--game", "kuhn_poker", "--out", "/nonexistent/folder"]));
    one_line_error(&metagame(&["solve", "--game", "matrix_rps"]));
    one_line_error(&metagame(&["solve", "--game", "matrix_rps", "--solver", "lp", "--out", "/tmp"]));
}
