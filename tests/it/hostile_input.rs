//! Hostile input and resource limits (issue 14): oversized headers, unbounded reads, overflowing payoffs, each a one-line error with exit 2.
//!
//! Every command runs under a 2 GB address-space cap, so an allocation of gigabytes (what these
//! inputs used to cause) fails the test instead of eating the machine.

use std::path::Path;
use std::process::{Command, Output};

use metagame::games::nfg::{self, NfgLimits};
use metagame::games::{Error, GameTree, NormalFormGame, TabularPolicy, registry};
use ndarray::array;
use serde_json::Value;

use crate::cli::{one_line_error, temp_dir};

/// The child's address-space cap in KiB (`ulimit -v`): about 2 GB.
const MEMORY_CAP_KIB: u64 = 2_000_000;

/// `metagame ARGS` under [`MEMORY_CAP_KIB`], with few threads so that thread stacks and
/// allocator arenas do not count against the cap.
fn capped(args: &[&str]) -> Output {
    Command::new("sh")
        .arg("-c")
        .arg(format!("ulimit -v {MEMORY_CAP_KIB} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_metagame"))
        .args(args)
        .env("RAYON_NUM_THREADS", "2")
        .env("MALLOC_ARENA_MAX", "2")
        .output()
        .expect("run metagame under a memory cap")
}

/// A command that must fail cleanly: exit 2, one line, no panic, no failed allocation.
fn capped_error(args: &[&str]) -> String {
    let out = capped(args);
    let err = one_line_error(&out);
    assert!(!err.contains("memory allocation") && !err.contains("out of memory"), "{err}");
    err
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_string_lossy().into_owned()
}

fn two_players(counts: &str) -> String {
    format!("NFG 1 R \"\" {{ \"a\" \"b\" }} {{ {counts} }}\n")
}

#[test]
fn nfg_headers_that_overflow_or_outgrow_the_file_are_one_line_errors() {
    let dir = temp_dir("hostile-nfg-headers");
    let players: String = (0..64).map(|p| format!("\"{p}\" ")).collect();
    let cases = [
        (format!("{}1 2\n", two_players("1000000 1000000")), "promise 2000000000000 payoffs"),
        (
            format!("{}{{ {{ \"\" 1 2 }} }}\n1 1\n", two_players("1000000 1000000")),
            "promise 1000000000000 outcome numbers",
        ),
        (
            format!("{}1 2\n", two_players("18446744073709551615 18446744073709551615")),
            "{ 18446744073709551615 18446744073709551615 } give more payoffs than fit in 64 bits",
        ),
        // 2^64 profiles: wrapped to 0 before.
        (
            format!("NFG 1 R \"\" {{ {players}}} {{ {} }}\n1 2\n", "2 ".repeat(64)),
            "(64 players) } give more payoffs than fit in 64 bits",
        ),
    ];
    for (k, (text, expected)) in cases.iter().enumerate() {
        let file = write(&dir, &format!("h{k}.nfg"), text);
        let err = capped_error(&["solve", &file, "--solver", "lp"]);
        assert!(err.contains("malformed .nfg at line 1") && err.contains(expected), "{err}");
        assert!(nfg::from_nfg_str(text).is_err());
    }
}

#[test]
fn nfg_payoff_limit_is_named_with_how_to_raise_it() {
    // 100 players, 20 of them with 2 strategies: 2^20 profiles × 100 = 104 857 600 payoffs,
    // in a 2 MB outcome-list file.
    let players: String = (0..100).map(|p| format!("\"{p}\" ")).collect();
    let counts = format!("{}{}", "2 ".repeat(20), "1 ".repeat(80));
    let zeros: String = (0..100).map(|_| "0 ").collect();
    let text = format!(
        "NFG 1 R \"\" {{ {players}}} {{ {counts}}}\n{{ {{ \"\" {zeros}}} }}\n{}",
        "1 ".repeat(1 << 20)
    );
    let file = write(&temp_dir("hostile-nfg-limit"), "many.nfg", &text);
    let err = capped_error(&["solve", &file, "--solver", "uniform"]);
    assert!(err.contains("104857600 payoffs: more than the limit of 100000000 payoffs"), "{err}");
    assert!(err.contains("with_max_payoffs"), "{err}");
    let err = nfg::from_nfg_str(&text).unwrap_err();
    assert!(matches!(err, Error::LimitExceeded { limit: NfgLimits::DEFAULT_MAX_PAYOFFS, .. }), "{err}");
}

#[test]
fn nfg_reads_are_capped() {
    let err = capped_error(&["solve", "/dev/zero", "--solver", "lp"]);
    assert!(err.contains("/dev/zero: more than the limit of 1073741824 bytes"), "{err}");
    let dir = temp_dir("hostile-nfg-cap");
    let file = write(&dir, "g.nfg", &format!("{}1 2 3 4\n", two_players("1 2")));
    let small = NfgLimits::default().with_max_file_bytes(20);
    let err = nfg::read_nfg_with_limits(Path::new(&file), &small).unwrap_err().to_string();
    assert!(err.contains("bytes): more than the limit of 20 bytes; raise it with"), "{err}");
    assert_eq!(nfg::read_nfg(Path::new(&file)).unwrap().shape(), &[1, 2]);
}

#[test]
fn non_finite_payoffs_are_typed_errors() {
    let dir = temp_dir("hostile-nfg-inf");
    for (k, value) in ["inf", "NaN", "1e400", "-1e309"].iter().enumerate() {
        let text = format!("{}1 2 3 {value}\n", two_players("1 2"));
        let file = write(&dir, &format!("inf{k}.nfg"), &text);
        let err = capped_error(&["solve", &file, "--solver", "lp"]);
        assert!(err.contains(&format!("`{value}` is not finite")), "{err}");
    }
    let err = NormalFormGame::zero_sum(array![[1.0, f64::INFINITY]]).unwrap_err();
    assert!(
        matches!(err, Error::NonFinitePayoff { player: 0, ref profile, .. } if profile == &[0, 1]),
        "{err}"
    );
}

#[test]
fn oversized_game_trees_fail_before_building() {
    for spec in ["kuhn_poker(players=10)", "leduc_poker(players=4)", "kuhn_poker(players=7)"] {
        let err = capped_error(&["game-info", "--game", spec]);
        assert!(
            err.contains(&format!("the game tree of {spec}: more than the limit of 10000000 nodes")),
            "{err}"
        );
        assert!(err.contains("GameTree::build_with_limit"), "{err}");
    }
    let err = capped_error(&["exploitability", "--game", "leduc_poker(players=4)", "--policy", "uniform"]);
    assert!(err.contains("limit of 10000000 nodes"), "{err}");
    // The limit counts nodes exactly: Kuhn poker has 58.
    let kuhn = registry::load("kuhn_poker").unwrap();
    assert!(GameTree::build_with_limit(&kuhn, 57).is_err());
    assert_eq!(GameTree::build_with_limit(&kuhn, 58).unwrap().num_nodes(), 58);
}

#[test]
fn pure_profile_counts_do_not_overflow() {
    let leduc = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
    let err = NormalFormGame::from_tree(&leduc).unwrap_err().to_string();
    assert!(err.contains("the normal form of leduc_poker has at least 2^64 pure profiles"), "{err}");
    assert!(!err.contains("18446744073709551615"), "{err}");
    let kuhn = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    assert!(NormalFormGame::from_tree_with_limit(&kuhn, 4095).is_err());
    assert_eq!(NormalFormGame::from_tree_with_limit(&kuhn, 4096).unwrap().shape(), &[64, 64]);

    let dir = temp_dir("hostile-double-oracle");
    let config =
        write(&dir, "do.toml", "game = \"leduc_poker\"\nalgorithm = \"double-oracle\"\nmax_iterations = 2\n");
    let out = dir.join("out");
    let err = capped_error(&["run", &config, "--out", out.to_str().unwrap()]);
    assert!(err.contains("at least 2^64 pure profiles"), "{err}");
}

#[test]
fn payoffs_near_the_largest_float_give_finite_answers_or_one_line_errors() {
    let dir = temp_dir("hostile-huge-payoffs");
    let games = [
        // Matching pennies times 1e308, zero-sum.
        "1e308 -1e308 -1e308 1e308 -1e308 1e308 1e308 -1e308",
        // Zero-sum, one row 1e308 apart.
        "1e308 -1e308 0 0 0 0 1e308 -1e308",
        // Not constant-sum: a coordination game at 1e308.
        "1e308 1e308 -1e308 0 0 -1e308 1e308 1e308",
        // Constant-sum at 2e308, past f64::MAX.
        "1e308 1e308 1e308 1e308 1.5e308 0.5e308 1e308 1e308",
    ];
    for (k, body) in games.iter().enumerate() {
        let file = write(&dir, &format!("huge{k}.nfg"), &format!("{}{body}\n", two_players("2 2")));
        let game = nfg::read_nfg(Path::new(&file)).unwrap();
        let scale = game.payoff_scale();
        assert!(scale.is_finite() && scale > 1e307, "{scale}");
        for solver in ["lp", "lemke-howson"] {
            let out = capped(&["solve", &file, "--solver", solver, "--json"]);
            if out.status.code() == Some(2) {
                one_line_error(&out);
                continue;
            }
            assert!(out.status.success(), "{file} {solver}: {}", String::from_utf8_lossy(&out.stderr));
            let v: Value = serde_json::from_slice(&out.stdout).unwrap();
            let strategies: Vec<Vec<f64>> = serde_json::from_value(v["equilibria"][0].clone()).unwrap();
            for s in &strategies {
                assert!(s.iter().all(|&p| (0.0..=1.0).contains(&p)), "{file} {solver}: {s:?}");
                assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-9, "{file} {solver}: {s:?}");
            }
            let reported = v["nash_conv"].as_f64().unwrap_or(f64::NAN);
            let nash_conv = game.nash_conv(&strategies);
            assert!(reported.is_finite() && nash_conv.is_finite(), "{file} {solver}: {v}");
            if v["status"] == "solved" {
                assert!(nash_conv <= 1e-6 * scale, "{file} {solver}: NashConv {nash_conv}: {v}");
            }
        }
    }
    let pennies = nfg::read_nfg(&dir.join("huge0.nfg")).unwrap();
    assert_eq!(pennies.constant_sum(0.0), Some(0.0));
    let past_max = nfg::read_nfg(&dir.join("huge3.nfg")).unwrap();
    assert_eq!(past_max.constant_sum(0.0), None);
    let three = NormalFormGame::new(vec![
        array![[[1e308]]].into_dyn(),
        array![[[1e308]]].into_dyn(),
        array![[[-1e308]]].into_dyn(),
    ])
    .unwrap();
    assert_eq!(three.constant_sum(0.0), Some(1e308));
}

#[test]
fn duplicate_policy_keys_are_errors() {
    let uniform = std::fs::read_to_string(format!(
        "{}/tests/fixtures/openspiel/kuhn_poker_uniform.json",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap();
    let text = uniform.replacen('{', "{\"0pb\": [[0, 1.0], [1, 0.0]],", 1);
    let dir = temp_dir("hostile-policy");
    let file = write(&dir, "dup.json", &text);
    let err = capped_error(&["exploitability", "--game", "kuhn_poker", "--policy", &file]);
    assert!(err.contains("information state \"0pb\" is listed twice"), "{err}");
    let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
    assert!(TabularPolicy::from_openspiel_json(&tree, &uniform).is_ok());
    let err = TabularPolicy::from_openspiel_json(&tree, &text).unwrap_err();
    assert!(matches!(err, Error::PolicyFormat(_)), "{err}");
}

#[test]
fn policy_reads_are_capped() {
    let err = capped_error(&["exploitability", "--game", "kuhn_poker", "--policy", "/dev/zero"]);
    assert!(err.contains("/dev/zero: more than the limit of"), "{err}");
    assert!(err.contains("read_openspiel_json_with_limit"), "{err}");
    let tree = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
    let fixture =
        format!("{}/tests/fixtures/openspiel/leduc_poker_random_0.json", env!("CARGO_MANIFEST_DIR"));
    assert!(TabularPolicy::read_openspiel_json(&tree, Path::new(&fixture)).is_ok());
    assert!(TabularPolicy::read_openspiel_json_with_limit(&tree, Path::new(&fixture), 1000).is_err());
}
