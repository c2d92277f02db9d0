//! `metagame matches`: payoff tables by exact and sampled evaluation, through the binary.

use serde_json::Value;

use crate::cli::{json_of, metagame, one_line_error, temp_dir};

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/openspiel/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

fn table(game: &str, policies: &[&str], evaluator: &str, episodes: &str, seed: &str) -> Value {
    let mut args = vec!["matches", "--game", game, "--policies"];
    args.extend_from_slice(policies);
    args.extend_from_slice(&["--evaluator", evaluator, "--episodes", episodes, "--seed", seed, "--json"]);
    json_of(&metagame(&args))
}

#[test]
fn exact_table_of_kuhn_has_every_joint_entry() {
    let out = table("kuhn_poker", &["uniform", "first-action"], "exact", "1", "0");
    let entries = out["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 4);
    let seats: Vec<Vec<u64>> = entries
        .iter()
        .map(|e| e["policies"].as_array().unwrap().iter().map(|s| s.as_u64().unwrap()).collect())
        .collect();
    assert_eq!(seats, vec![vec![0, 0], vec![0, 1], vec![1, 0], vec![1, 1]]);
    // Kuhn, uniform against uniform: player 0 expects +1/8 (exact tree walk).
    let m = floats(&entries[0]["mean"]);
    assert!((m[0] - 0.125).abs() < 1e-12 && (m[1] + 0.125).abs() < 1e-12, "{m:?}");
    assert!(floats(&entries[0]["stderr"]).iter().all(|&s| s == 0.0));
    assert!(out["episodes_per_second"].is_null());
}

#[test]
fn sampled_tables_agree_with_exact_within_four_standard_errors() {
    for (game, policies) in [
        (
            "kuhn_poker",
            vec!["uniform".to_string(), "first-action".into(), fixture("kuhn_poker_random_0.json")],
        ),
        ("leduc_poker", vec!["uniform".to_string(), fixture("leduc_poker_random_1.json")]),
        ("matrix_rps", vec!["uniform".to_string(), "first-action".into()]),
    ] {
        let refs: Vec<&str> = policies.iter().map(String::as_str).collect();
        let exact = table(game, &refs, "exact", "1", "0");
        let cpu = table(game, &refs, "cpu", "200000", "11");
        assert!(cpu["episodes_per_second"].as_f64().unwrap() > 0.0);
        for (e, s) in exact["entries"].as_array().unwrap().iter().zip(cpu["entries"].as_array().unwrap()) {
            assert_eq!(e["policies"], s["policies"]);
            assert_eq!(s["episodes"], 200_000);
            let (want, got, se) = (floats(&e["mean"]), floats(&s["mean"]), floats(&s["stderr"]));
            for p in 0..want.len() {
                assert!(
                    (want[p] - got[p]).abs() <= 4.0 * se[p] + 1e-12,
                    "{game} {}: player {p} sampled {} ± {}, exact {}",
                    e["policies"],
                    got[p],
                    se[p],
                    want[p]
                );
            }
        }
    }
}

#[test]
fn same_seed_same_table() {
    let a = table("leduc_poker", &["uniform", "first-action"], "cpu", "50000", "3");
    let b = table("leduc_poker", &["uniform", "first-action"], "cpu", "50000", "3");
    let c = table("leduc_poker", &["uniform", "first-action"], "cpu", "50000", "4");
    assert_eq!(a["entries"], b["entries"]);
    assert_ne!(a["entries"], c["entries"]);
}

#[test]
fn gpu_without_a_device_says_so_in_one_line() {
    let out = metagame(&[
        "matches",
        "--game",
        "kuhn_poker",
        "--policies",
        "uniform",
        "--evaluator",
        "gpu",
        "--json",
    ]);
    if out.status.success() {
        // Built with `--features cuda` on a machine with a GPU: a normal table.
        assert_eq!(json_of(&out)["entries"].as_array().unwrap().len(), 1);
        return;
    }
    let err = one_line_error(&out);
    assert!(err.contains("no CUDA device"), "{err}");
    assert!(out.stdout.is_empty());
}

#[test]
fn bad_policy_file_is_a_one_line_error() {
    let dir = temp_dir("matches-bad-policy");
    let path = dir.join("bad.json");
    std::fs::write(&path, "{\"0\": [[0, 0.5]]").unwrap();
    let out = metagame(&["matches", "--game", "kuhn_poker", "--policies", "uniform", path.to_str().unwrap()]);
    let err = one_line_error(&out);
    assert!(err.contains("bad.json"), "{err}");
    let missing = metagame(&["matches", "--game", "kuhn_poker", "--policies", "/nonexistent/p.json"]);
    one_line_error(&missing);
    let zero = metagame(&["matches", "--game", "kuhn_poker", "--policies", "uniform", "--episodes", "0"]);
    assert!(one_line_error(&zero).contains("--episodes"));
    // A Leduc policy is not a Kuhn policy.
    let wrong_game =
        metagame(&["matches", "--game", "kuhn_poker", "--policies", &fixture("leduc_poker_uniform.json")]);
    one_line_error(&wrong_game);
}

/// Batch Elo of a two-player table: on tic-tac-toe minimax beats first-action beats uniform;
/// a three-player table has none.
#[test]
fn two_player_tables_rate_their_policies_by_batch_elo() {
    let out = table("tic_tac_toe", &["uniform", "first-action", "minimax"], "rollout", "2000", "0");
    let elo = floats(&out["batch_elo"]);
    assert_eq!(elo[0], 0.0, "the lowest at 0: {elo:?}");
    assert!(elo[2] > elo[1] + 100.0 && elo[1] > elo[0], "{elo:?}");
    let three = table("kuhn_poker(players=3)", &["uniform", "first-action"], "exact", "1", "0");
    assert!(three["batch_elo"].is_null());
    let text = metagame(&[
        "matches",
        "--game",
        "tic_tac_toe",
        "--policies",
        "uniform",
        "minimax",
        "--episodes",
        "500",
    ]);
    let text = String::from_utf8_lossy(&text.stdout).to_string();
    let ranked: Vec<&str> =
        text.lines().skip_while(|l| !l.starts_with("batch Elo")).skip(1).take(2).collect();
    assert!(ranked[0].ends_with("minimax") && ranked[1].ends_with("uniform"), "{text}");
    assert!(ranked[1].trim_start().starts_with("0.0"), "{text}");
}
