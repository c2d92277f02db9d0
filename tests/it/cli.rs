//! The `metagame` binary as a user runs it: game-info, exploitability, and what `solve`
//! calls its answer.

use std::path::PathBuf;
use std::process::{Command, Output};

use serde_json::Value;

pub fn metagame(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metagame")).args(args).output().expect("run metagame")
}

/// The one JSON object a `--json` command prints.
pub fn json_of(out: &Output) -> Value {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.trim().lines().count(), 1, "one JSON line: {text}");
    serde_json::from_str(text.trim()).unwrap()
}

/// A failing command: exit code 2 and exactly one line on stderr, no panic.
pub fn one_line_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

pub fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("metagame-test-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn fixture(name: &str) -> String {
    format!("{}/tests/fixtures/openspiel/{name}", env!("CARGO_MANIFEST_DIR"))
}

#[test]
fn game_info_json_has_openspiel_counts() {
    let v = json_of(&metagame(&["game-info", "--game", "leduc_poker", "--json"]));
    assert_eq!(v["game"], "leduc_poker");
    assert_eq!(v["num_histories"], 9457);
    assert_eq!(v["num_terminals"], 5520);
    assert_eq!(v["infosets_per_player"], serde_json::json!([468, 468]));
    let v = json_of(&metagame(&["game-info", "--game", "kuhn_poker(players=3)", "--json"]));
    assert_eq!(v["num_histories"], 617);
    assert_eq!(v["infosets_per_player"], serde_json::json!([16, 16, 16]));
}

#[test]
fn exploitability_json_of_builtin_and_file_policies() {
    let v = json_of(&metagame(&["exploitability", "--game", "kuhn_poker", "--policy", "uniform", "--json"]));
    assert!((v["nash_conv"].as_f64().unwrap() - 11.0 / 12.0).abs() < 1e-12);
    assert!((v["exploitability"].as_f64().unwrap() - 11.0 / 24.0).abs() < 1e-12);
    assert_eq!(v["best_response_values"].as_array().unwrap().len(), 2);
    assert_eq!(v["expected_returns"].as_array().unwrap().len(), 2);
    let v = json_of(&metagame(&[
        "exploitability",
        "--game",
        "leduc_poker",
        "--policy",
        "first-action",
        "--json",
    ]));
    assert!((v["nash_conv"].as_f64().unwrap() - 2.0).abs() < 1e-12);
    let file = fixture("kuhn_poker_3p_random_0.json");
    let v = json_of(&metagame(&[
        "exploitability",
        "--game",
        "kuhn_poker(players=3)",
        "--policy",
        &file,
        "--json",
    ]));
    assert!(v["exploitability"].is_null(), "3-player: no exploitability");
    assert!(v["nash_conv"].as_f64().unwrap() > 0.0);
}

/// goofspiel(num_cards=4)'s strings forget the order of a player's own bids: the commands
/// run on it, say it has imperfect recall, and give OpenSpiel's NashConv
/// (`pyspiel.nash_conv(g, pyspiel.UniformRandomPolicy(g))` with
/// `g = pyspiel.load_game_as_turn_based("goofspiel(num_cards=4)")`, OpenSpiel 2.0.2); what
/// needs perfect recall refuses it in one line.
#[test]
fn imperfect_recall_games_run_and_say_so() {
    let args = ["exploitability", "--game", "goofspiel(num_cards=4)", "--policy", "uniform"];
    let out = metagame(&args);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.lines().any(|l| l == "nash_conv          1.4930555555555556"), "{text}");
    let recall: Vec<&str> = text.lines().filter(|l| l.starts_with("recall ")).collect();
    assert_eq!(recall.len(), 1, "{text}");
    assert!(recall[0].contains("imperfect: 1056 of 6056 information states"), "{text}");
    let v = json_of(&metagame(&[&args[..], &["--json"]].concat()));
    assert_eq!(v["nash_conv"].as_f64(), Some(1.4930555555555556));
    assert_eq!(
        (v["perfect_recall"].as_bool(), v["imperfect_recall_infosets"].as_u64()),
        (Some(false), Some(1056))
    );
    // Perfect recall: no recall line, and the JSON says perfect.
    let text = String::from_utf8(
        metagame(&["exploitability", "--game", "kuhn_poker", "--policy", "uniform"]).stdout,
    )
    .unwrap();
    assert!(!text.contains("recall"), "{text}");
    let v = json_of(&metagame(&["game-info", "--game", "goofspiel(num_cards=4)", "--json"]));
    assert_eq!(
        (v["perfect_recall"].as_bool(), v["imperfect_recall_infosets"].as_u64()),
        (Some(false), Some(1056))
    );
    let v = json_of(&metagame(&["game-info", "--game", "leduc_poker", "--json"]));
    assert_eq!(
        (v["perfect_recall"].as_bool(), v["imperfect_recall_infosets"].as_u64()),
        (Some(true), Some(0))
    );
    let text =
        String::from_utf8(metagame(&["game-info", "--game", "goofspiel(num_cards=4)"]).stdout).unwrap();
    assert!(text.lines().any(|l| l.starts_with("recall               imperfect: 1056 of 6056")), "{text}");
    let err = one_line_error(&metagame(&["solve", "--game", "goofspiel(num_cards=4)"]));
    assert!(err.contains("imperfect recall") && err.contains("sequence form needs perfect recall"), "{err}");
}

#[test]
fn bad_input_gives_one_line_and_exit_code_2() {
    let err = one_line_error(&metagame(&["exploitability", "--game", "chess", "--policy", "uniform"]));
    assert!(err.contains("unknown game") && err.contains("kuhn_poker"), "{err}");
    let err = one_line_error(&metagame(&["game-info", "--game", "kuhn_poker(players=1)"]));
    assert!(err.contains("players"), "{err}");
    let err = one_line_error(&metagame(&["game-info", "--game", "kuhn_poker(size=3)"]));
    assert!(err.contains("unknown parameter"), "{err}");

    let dir = temp_dir("bad-policies");
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    let run = |file: &str| metagame(&["exploitability", "--game", "kuhn_poker", "--policy", file]);
    let err = one_line_error(&run(&write("malformed.json", "{\"0\": [[0, 0.5]")));
    assert!(err.contains("malformed policy"), "{err}");
    let uniform: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("kuhn_poker_uniform.json")).unwrap()).unwrap();
    let mut bad = uniform.clone();
    bad["0"] = serde_json::json!([[0, 0.7], [1, 0.7]]);
    let err = one_line_error(&run(&write("unnormalised.json", &bad.to_string())));
    assert!(err.contains("sum to") && err.contains("\"0\""), "{err}");
    let mut bad = uniform.clone();
    bad["0"] = serde_json::json!([[0, 1.5], [1, -0.5]]);
    let err = one_line_error(&run(&write("negative.json", &bad.to_string())));
    assert!(err.contains("\"0\""), "{err}");
    let mut bad = uniform.clone();
    bad["7pb"] = serde_json::json!([[0, 0.5], [1, 0.5]]);
    let err = one_line_error(&run(&write("unknown.json", &bad.to_string())));
    assert!(err.contains("unknown information state") && err.contains("7pb"), "{err}");
    let mut bad = uniform.clone();
    bad["0"] = serde_json::json!([[0, 0.5], [1, 0.25], [2, 0.25]]);
    let err = one_line_error(&run(&write("illegal.json", &bad.to_string())));
    assert!(err.contains("action 2"), "{err}");
    let err = one_line_error(&run(&dir.join("missing.json").to_string_lossy()));
    assert!(err.contains("missing.json"), "{err}");
}

/// `solve` labels an answer by what it is: Nash solvers' mixed profiles as `equilibria`, a
/// CE/CCE's `joint` distribution and alpha-Rank's `stationary` distributions each with their
/// `marginals` (never called equilibria).
#[test]
fn solve_labels_joint_and_stationary_distributions() {
    let v = json_of(&metagame(&["solve", "--game", "matrix_rps", "--solver", "ce", "--json"]));
    assert!(v.get("equilibria").is_none(), "{v}");
    assert_eq!(v["joint"].as_array().unwrap().len(), 3, "{v}");
    assert_eq!(v["marginals"].as_array().unwrap().len(), 2, "{v}");
    assert!(v["max_violation"].as_f64().unwrap() < 1e-8);
    let text = metagame(&["solve", "--game", "matrix_rps", "--solver", "ce"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("joint ") && text.contains("marginals ") && !text.contains("equilibria"), "{text}");

    let v = json_of(&metagame(&["solve", "--game", "matrix_rps", "--solver", "alpha-rank", "--json"]));
    assert!(v.get("equilibria").is_none(), "{v}");
    assert_eq!(v["stationary"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(v["marginals"].as_array().unwrap().len(), 2, "{v}");
    let text = metagame(&["solve", "--game", "matrix_rps", "--solver", "alpha-rank"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("stationary ") && !text.contains("equilibria"), "{text}");

    let v = json_of(&metagame(&["solve", "--game", "matrix_rps", "--solver", "rm+", "--json"]));
    assert_eq!(v["equilibria"].as_array().unwrap().len(), 1, "{v}");
    assert!(v.get("marginals").is_none() && v.get("joint").is_none(), "{v}");
}

/// A 3-player CCE's joint distribution nests as the payoff tensor does (player 0 outermost):
/// summing it over the other axes gives each player's marginal.
#[test]
fn solve_nests_a_three_player_joint_distribution_by_player() {
    let shape = [2usize, 3, 2];
    let payoffs: Vec<String> = (0..12 * 3).map(|k| ((k * 7 + 3) % 11).to_string()).collect();
    let text = format!("NFG 1 R \"x\" {{ \"a\" \"b\" \"c\" }} {{ 2 3 2 }}\n{}\n", payoffs.join(" "));
    let path = temp_dir("solve-joint").join("three.nfg");
    std::fs::write(&path, text).unwrap();
    let v = json_of(&metagame(&["solve", path.to_str().unwrap(), "--solver", "cce", "--json"]));
    let joint = &v["joint"];
    let mut sums = [vec![0.0; 2], vec![0.0; 3], vec![0.0; 2]];
    for i in 0..shape[0] {
        assert_eq!(joint[i].as_array().unwrap().len(), shape[1], "{joint}");
        for j in 0..shape[1] {
            assert_eq!(joint[i][j].as_array().unwrap().len(), shape[2], "{joint}");
            for k in 0..shape[2] {
                let w = joint[i][j][k].as_f64().unwrap();
                sums[0][i] += w;
                sums[1][j] += w;
                sums[2][k] += w;
            }
        }
    }
    for (p, sum) in sums.iter().enumerate() {
        for (s, total) in sum.iter().enumerate() {
            let marginal = v["marginals"][p][s].as_f64().unwrap();
            assert!((total - marginal).abs() < 1e-12, "player {p} strategy {s}: {total} vs {marginal}");
        }
    }
}

/// An answer the certificate does not bound is not called an equilibrium: fictitious play
/// on Shapley's game (it cycles) ends with NashConv 0.287 and "none found"; the JSON lists
/// it under `uncertified`, not `equilibria`.
#[test]
fn solve_counts_only_certified_equilibria() {
    let shapley = format!("{}/examples/nfg/shapley.nfg", env!("CARGO_MANIFEST_DIR"));
    let args = ["solve", shapley.as_str(), "--solver", "fictitious-play", "--iterations", "10000"];
    let out = metagame(&args);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("equilibria   none found (status max_iterations, NashConv 0.28"), "{text}");
    let mut json_args = args.to_vec();
    json_args.push("--json");
    let v = json_of(&metagame(&json_args));
    assert_eq!(v["equilibria"].as_array().unwrap().len(), 0, "{v}");
    assert_eq!(v["uncertified"].as_array().unwrap().len(), 1, "{v}");
    let v = json_of(&metagame(&["solve", shapley.as_str(), "--solver", "lemke-howson", "--json"]));
    assert_eq!(v["equilibria"].as_array().unwrap().len(), 1, "{v}");
}

#[test]
fn the_minimax_policy_is_a_named_policy_of_games_of_perfect_information() {
    let v = json_of(&metagame(&["exploitability", "--game", "tic_tac_toe", "--policy", "minimax", "--json"]));
    assert_eq!(v["nash_conv"].as_f64(), Some(0.0));
    let out = metagame(&["exploitability", "--game", "kuhn_poker", "--policy", "minimax"]);
    assert_eq!(out.status.code(), Some(2));
    let line = one_line_error(&out);
    assert!(line.contains("minimax needs a game of perfect information"), "{line}");
}

/// Episode counts past the documented cap (10^12) are refused before any work, in one line
/// naming the field: a typo cannot start a step that never ends.
#[test]
fn episode_counts_past_the_cap_are_refused_up_front() {
    let dir = temp_dir("episode-cap");
    for (name, fields, says) in [
        (
            "psro",
            "algorithm = \"psro\"\nevaluator = \"cpu\"\nepisodes_per_entry = 9223372036854775807\n",
            "episodes_per_entry must be in 1..=1000000000000",
        ),
        (
            "league",
            "algorithm = \"league\"\nepisodes_per_round = 1000000000000000000\n",
            "episodes_per_round: 1000000000000000000 is more than the cap",
        ),
        (
            "learner",
            "algorithm = \"psro\"\noracle = \"q-learning\"\n[learner]\nepisodes_per_response = 2000000000000\n",
            "episodes_per_response: must be in 1..=1000000000000",
        ),
    ] {
        let config = dir.join(format!("{name}.toml"));
        std::fs::write(&config, format!("game = \"kuhn_poker\"\n{fields}")).unwrap();
        let out = metagame(&["run", config.to_str().unwrap(), "--out", dir.join(name).to_str().unwrap()]);
        let line = one_line_error(&out);
        assert!(line.contains(says), "{name}: {line}");
        assert!(!dir.join(name).exists(), "{name}: nothing written");
    }
}

/// Usage errors are one line too (clap's several lines folded), exit code 2.
#[test]
fn usage_errors_are_one_line() {
    for (args, says) in [
        (
            &[
                "respond",
                "--game",
                "kuhn_poker",
                "--against",
                "uniform",
                "--learner",
                "q-learning",
                "--episodes",
                "0",
            ][..],
            "0 is not in 1..=1000000000000",
        ),
        (
            &[
                "respond",
                "--game",
                "kuhn_poker",
                "--against",
                "uniform",
                "--learner",
                "q-learning",
                "--episodes",
                "9",
                "--seat",
                "-1",
            ][..],
            "unexpected argument '-1'",
        ),
        (&["run"][..], "required arguments were not provided: <CONFIG>"),
    ] {
        let line = one_line_error(&metagame(args));
        assert!(line.contains(says) && line.trim_end().ends_with("(see --help)"), "{args:?}: {line}");
    }
    assert!(metagame(&["--help"]).status.success());
}

/// Checks that need no work come before it: a loop's player count before the tree is built,
/// `respond --out`'s folder before training.
#[test]
fn checks_come_before_the_work() {
    let dir = temp_dir("checks-first");
    let config = dir.join("league3.toml");
    std::fs::write(&config, "game = \"leduc_poker(players=3)\"\nalgorithm = \"league\"\n").unwrap();
    let line = one_line_error(&metagame(&[
        "run",
        config.to_str().unwrap(),
        "--out",
        dir.join("l").to_str().unwrap(),
    ]));
    assert!(
        line.contains("algorithm `league` takes a 2-player game, leduc_poker(players=3) has 3 players"),
        "{line}"
    );
    assert!(!dir.join("l").exists());
    let line = one_line_error(&metagame(&[
        "respond",
        "--game",
        "leduc_poker",
        "--against",
        "uniform",
        "--learner",
        "q-learning",
        "--episodes",
        "1000000000",
        "--out",
        "/nonexistent/x.json",
    ]));
    assert!(line.contains("--out /nonexistent/x.json: the folder /nonexistent does not exist"), "{line}");
}
