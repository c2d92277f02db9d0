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
fn nfg_payoff_limit_is_named_in_one_line_and_raised_from_the_library() {
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
    assert!(!err.contains("::"), "a CLI message names no Rust function: {err}");
    let err = nfg::from_nfg_str(&text).unwrap_err();
    assert!(
        matches!(
            err,
            Error::LimitExceeded {
                limit: NfgLimits::DEFAULT_MAX_PAYOFFS,
                raise: "`nfg::NfgLimits::with_max_payoffs`",
                ..
            }
        ),
        "{err}"
    );
}

#[test]
fn nfg_reads_are_capped() {
    let err = capped_error(&["solve", "/dev/zero", "--solver", "lp"]);
    assert!(err.contains("/dev/zero: more than the limit of 1073741824 bytes"), "{err}");
    let dir = temp_dir("hostile-nfg-cap");
    let file = write(&dir, "g.nfg", &format!("{}1 2 3 4\n", two_players("1 2")));
    let small = NfgLimits::default().with_max_file_bytes(20);
    let err = nfg::read_nfg_with_limits(Path::new(&file), &small).unwrap_err().to_string();
    assert!(err.ends_with("bytes): more than the limit of 20 bytes"), "{err}");
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
    // game-info answers without building a tree past the limit (issue 38), and says so.
    for spec in ["kuhn_poker(players=10)", "leduc_poker(players=4)", "kuhn_poker(players=7)"] {
        let out = capped(&["game-info", "--game", spec]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{spec}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(text.contains("more than the limit of 10000000 nodes (--max-nodes)"), "{text}");
        assert!(!text.contains("::"), "a CLI message names no Rust function: {text}");
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
    assert!(!err.contains("::"), "a CLI message names no Rust function: {err}");
    let tree = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
    let fixture =
        format!("{}/tests/fixtures/openspiel/leduc_poker_random_0.json", env!("CARGO_MANIFEST_DIR"));
    assert!(TabularPolicy::read_openspiel_json(&tree, Path::new(&fixture)).is_ok());
    assert!(TabularPolicy::read_openspiel_json_with_limit(&tree, Path::new(&fixture), 1000).is_err());
}

// Issue 14 items 2-4: populations without duplicates, run folders one run at a time with
// complete files, checkpoints checked as data.

mod run_folders {
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    use metagame::games::{GameTree, InfosetId, PlayerId, registry};
    use metagame::populations::{
        ExactBestResponse, IterationReport, Psro, PsroConfig, PsroState, RunLimits, checkpoint, run_loop,
    };
    use metagame::solvers::uniform::Uniform;
    use metagame::{RunCheckpoint, RunReport};
    use serde_json::{Value, json};

    use super::{capped, write};
    use crate::cli::{metagame, one_line_error, temp_dir};

    fn path(p: &Path) -> &str {
        p.to_str().unwrap()
    }

    fn example(name: &str) -> String {
        format!("{}/examples/{name}.toml", env!("CARGO_MANIFEST_DIR"))
    }

    /// A run that must succeed.
    fn ok(args: &[&str]) {
        let out = metagame(args);
        assert!(out.status.success(), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }

    /// Player `p`'s rows of `member`'s policy as bits.
    fn rows(tree: &GameTree, state: &PsroState, p: usize, member: usize) -> Vec<u64> {
        let policy = &state.population.members(PlayerId(p))[member].policy;
        tree.infosets_of(PlayerId(p))
            .flat_map(|i| policy.as_table().unwrap().row(InfosetId(i)).iter().map(|x| x.to_bits()))
            .collect()
    }

    fn saved_psro(dir: &Path) -> PsroState {
        let saved = RunCheckpoint::read(dir).unwrap();
        serde_json::from_value(saved.state).unwrap()
    }

    /// Every member of every player is distinct (its player's rows, bit for bit).
    fn assert_distinct(tree: &GameTree, state: &PsroState) {
        for p in 0..2 {
            let all: Vec<Vec<u64>> =
                (0..state.population.sizes()[p]).map(|k| rows(tree, state, p, k)).collect();
            for (k, r) in all.iter().enumerate() {
                assert!(!all[..k].contains(r), "player {p}: member {k} is a copy");
            }
        }
    }

    #[test]
    fn rectified_psro_holds_only_distinct_members_and_stays_small() {
        // The case: 10 iterations made 1024 members per player (34 s, 500 MB).
        let dir = temp_dir("hostile-rectified");
        let cfg = write(
            &dir,
            "rect.toml",
            "game = \"matrix_rps\"\nalgorithm = \"psro\"\nmeta_solver = \"uniform\"\nrectified = true\nconvergence_tolerance = 0\nmax_iterations = 10\n",
        );
        let run = dir.join("run");
        // Bounded by the memory cap of `capped` and the member count below, not by wall time.
        let out = capped(&["run", &cfg, "--out", path(&run), "--json"]);
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        let tree = GameTree::build(&registry::load("matrix_rps").unwrap()).unwrap();
        let state = saved_psro(&run);
        assert_distinct(&tree, &state);
        // The initial uniform policy and the three pure strategies at most.
        assert!(state.population.sizes().iter().all(|&s| s <= 4), "{:?}", state.population.sizes());
        // Every response is accounted for: reused members list the iterations that found them.
        let reuses: usize = (0..2)
            .flat_map(|p| state.population.members(PlayerId(p)).iter().map(|m| m.provenance.reused.len()))
            .sum();
        assert!(reuses >= 10, "{reuses}");
        let report: Value = serde_json::from_slice(&std::fs::read(run.join("report.json")).unwrap()).unwrap();
        let last = report["iterations"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last["iteration"], 10);
        assert_eq!(last["population_sizes"], json!(state.population.sizes()));
        assert_eq!(report["meta_game_shape"], json!(state.population.sizes()));
        assert!(std::fs::read_to_string(run.join("lineage.dot")).unwrap().contains("reused it"));
    }

    #[test]
    fn a_response_identical_to_a_member_is_counted_as_it() {
        // Fictitious play on Kuhn poker (uniform meta-solver, exact best responses) finds
        // members again from iteration 3 on; a found member weighs once per response, so the
        // run stays XFP (tests/it/psro.rs) with distinct members only.
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let config = PsroConfig::builder().warm_start(false).build().unwrap();
        let mut psro = Psro::new(
            &tree,
            config,
            Box::new(Uniform),
            Box::new(ExactBestResponse::default()),
            Box::new(metagame::games::ExactEvaluator),
        )
        .unwrap();
        run_loop(&mut psro, &RunLimits::iterations(12), &mut ()).unwrap();
        let state = psro.state();
        assert_distinct(&tree, state);
        for p in 0..2 {
            let members = state.population.members(PlayerId(p));
            let responses: usize = members.iter().map(|m| m.provenance.multiplicity()).sum();
            assert_eq!(responses, 13, "player {p}");
            assert!(members.len() < 13, "player {p}: no response was found twice");
            // The meta-mixture weighs each member by its responses, as fictitious play does.
            for (m, w) in members.iter().zip(&state.meta_strategies[p]) {
                assert!((w - m.provenance.multiplicity() as f64 / 13.0).abs() < 1e-12);
            }
        }
        assert_eq!(state.table.shape(), state.population.sizes().as_slice());
        // A member's reuse is listed once per response that found it, with what it answered.
        let reused = state.population.members(PlayerId(1)).iter().flat_map(|m| &m.provenance.reused);
        assert!(reused.clone().all(|r| r.iteration >= 1 && r.iteration <= 12 && !r.answered.is_empty()));
    }

    /// `dir` copied to `to` (a fresh folder).
    fn copy_dir(dir: &Path, to: &Path) {
        let _ = std::fs::remove_dir_all(to);
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(dir).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
        }
    }

    /// Every file of `dir` by name.
    fn contents(dir: &Path) -> BTreeMap<String, Vec<u8>> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| {
                let e = e.unwrap();
                (e.file_name().to_string_lossy().into_owned(), std::fs::read(e.path()).unwrap())
            })
            .collect()
    }

    #[test]
    fn edited_checkpoints_are_refused_on_resume() {
        let dir = temp_dir("hostile-edited-checkpoint");
        let cfg = write(
            &dir,
            "kuhn.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmeta_solver = \"nash\"\nevaluator = \"exact\"\nmax_iterations = 3\n",
        );
        let base = dir.join("base");
        ok(&["run", &cfg, "--out", path(&base), "--json"]);
        let cp = base.join("checkpoint.json");
        let file: Value = serde_json::from_slice(&std::fs::read(&cp).unwrap()).unwrap();
        type Edit = fn(&mut Value);
        let edits: [(&str, Edit, &str); 2] = [
            (
                "meta-strategy",
                |s| s["state"]["meta_strategies"][0] = json!([2.0, 0.0, 0.0, 0.0]),
                "player 0's meta-strategy sums to 2, not 1",
            ),
            (
                "payoff",
                |s| s["state"]["table"]["entries"][0]["mean"] = json!([1e308, -1e308]),
                "payoff entry [0, 0] holds [1e308, -1e308], outside the game's payoffs",
            ),
        ];
        for (name, edit, semantic) in edits {
            let mut payload = file["payload"].clone();
            edit(&mut payload);
            // Edited in place (the checksum no longer matches), then by someone who also
            // wrote a matching checksum: the checks of the state itself refuse it.
            let careless = {
                let mut f = file.clone();
                f["payload"] = payload.clone();
                serde_json::to_vec(&f).unwrap()
            };
            let careful = checkpoint::to_bytes(&cp, &payload).unwrap();
            for (bytes, expected) in [(careless, "does not match its checksum"), (careful, semantic)] {
                let run = dir.join(format!("edited-{name}"));
                copy_dir(&base, &run);
                std::fs::write(run.join("checkpoint.json"), &bytes).unwrap();
                let before = contents(&run);
                let err = one_line_error(&metagame(&["run", "--resume", path(&run)]));
                assert!(err.contains(expected) && err.contains("checkpoint"), "{name}: {err}");
                assert!(!err.contains("invalid config"), "{err}");
                assert_eq!(contents(&run), before, "{name}: the folder changed");
            }
        }
        // The history log's records: edited in place, or with a matching checksum (the
        // loop's check of its reports refuses it); cut short of what the checkpoint covers.
        let log = std::fs::read_to_string(base.join("history.jsonl")).unwrap();
        let mut lines: Vec<String> = log.lines().map(str::to_string).collect();
        // NashConv 123, written in as many characters as the value it replaces (a record of
        // another length is refused sooner, as shorter or longer than the checkpoint says).
        let record: Value = serde_json::from_str(&lines[3]).unwrap();
        let was = record["report"]["nash_conv"].to_string();
        assert!(was.len() >= 4, "{was}");
        let edited = format!("123.{}", "0".repeat(was.len() - 4));
        let careless = lines[3].replace(&format!("\"nash_conv\":{was}"), &format!("\"nash_conv\":{edited}"));
        assert_ne!(careless, lines[3]);
        let report_json = serde_json::from_str::<Value>(&careless).unwrap()["report"].to_string();
        let report_text =
            careless.split_once("\"report\":").unwrap().1.strip_suffix('}').unwrap().to_string();
        let careful =
            careless.replace(record["checksum"].as_str().unwrap(), &checkpoint::checksum(&report_text));
        assert_eq!(serde_json::from_str::<Value>(&report_text).unwrap().to_string(), report_json);
        let cut = log[..log.len() - 10].to_string();
        let cases = [
            (
                "careless",
                {
                    lines[3] = careless;
                    lines.join("\n") + "\n"
                },
                "record 4 does not match its checksum",
            ),
            (
                "careful",
                {
                    lines[3] = careful;
                    lines.join("\n") + "\n"
                },
                "the report of iteration 3 says NashConv 123",
            ),
            ("cut", cut, "fewer than the"),
        ];
        for (name, text, expected) in cases {
            let run = dir.join(format!("edited-log-{name}"));
            copy_dir(&base, &run);
            std::fs::write(run.join("history.jsonl"), text).unwrap();
            let before = contents(&run);
            let err = one_line_error(&metagame(&["run", "--resume", path(&run)]));
            assert!(err.contains(expected), "{name}: {err}");
            assert!(err.contains("history.jsonl") || err.contains("checkpoint"), "{name}: {err}");
            assert_eq!(contents(&run), before, "{name}: the folder changed");
        }
        // Records past the checkpoint's mark (appended by a run killed before its checkpoint,
        // the last one torn) are cut off by the resume.
        let run = dir.join("log-ahead");
        copy_dir(&base, &run);
        let ahead = format!("{log}{}\n{{\"checksum\":\"fnv1a64:00", lines[1]);
        std::fs::write(run.join("history.jsonl"), ahead).unwrap();
        ok(&["run", "--resume", path(&run), "--json"]);
        assert_eq!(std::fs::read_to_string(run.join("history.jsonl")).unwrap(), log);
        // The untouched checkpoint resumes (to the iteration it is at).
        ok(&["run", "--resume", path(&base), "--json"]);
    }

    #[test]
    fn resuming_with_fewer_iterations_than_done_is_an_error() {
        let dir = temp_dir("hostile-fewer-iterations");
        let text = "game = \"kuhn_poker\"\nalgorithm = \"xfp\"\nmax_iterations = ";
        let cfg = write(&dir, "long.toml", &format!("{text}6\n"));
        let short = write(&dir, "short.toml", &format!("{text}2\n"));
        let run = dir.join("run");
        ok(&["run", &cfg, "--out", path(&run), "--json"]);
        let before = contents(&run);
        let err = one_line_error(&metagame(&["run", &short, "--resume", path(&run)]));
        assert!(err.contains("the checkpoint is at iteration 6, past max_iterations = 2"), "{err}");
        assert!(err.contains("checkpoint.json"), "{err}");
        assert_eq!(contents(&run), before);
        // As many as done: the report is written again, the same.
        let same = write(&dir, "same.toml", &format!("{text}6\n"));
        ok(&["run", &same, "--resume", path(&run), "--json"]);
        let report: RunReport =
            serde_json::from_slice(&std::fs::read(run.join("report.json")).unwrap()).unwrap();
        assert_eq!(report.iterations.len(), 7);
    }

    /// Wait up to 20 s for `file` to exist.
    fn wait_for(file: &Path) {
        let started = Instant::now();
        while !file.exists() {
            assert!(started.elapsed() < Duration::from_secs(20), "{} never appeared", file.display());
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    /// Names in `dir` that a run leaves only when killed: its lock and temporary files.
    fn leftovers(dir: &Path) -> Vec<String> {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect()
    }

    #[test]
    fn a_second_run_into_a_folder_in_use_fails_and_the_first_finishes() {
        let dir = temp_dir("hostile-concurrent");
        let run = dir.join("run");
        let _ = std::fs::remove_dir_all(&run);
        // Leduc PSRO: about a second of iterations, long enough to be caught running.
        let psro = example("leduc_psro");
        let mut first = Command::new(env!("CARGO_BIN_EXE_metagame"))
            .args(["run", &psro, "--out", path(&run), "--json"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for(&run.join("checkpoint.json"));
        let pid = first.id().to_string();
        // Another config over it, and a resume of it: both refused while it runs.
        for args in [
            vec!["run", &example("leduc_xfp"), "--out", path(&run), "--overwrite"],
            vec!["run", "--resume", path(&run)],
        ] {
            let err = one_line_error(&metagame(&args));
            assert!(err.contains("is in use by another metagame run") && err.contains(&pid), "{err}");
        }
        let status = first.wait().unwrap();
        assert!(status.success());
        // One run's folder: its config, a report and checkpoint of that config that agree.
        let config = std::fs::read_to_string(run.join("config.toml")).unwrap();
        assert!(config.contains("algorithm = \"psro\""), "{config}");
        let saved = RunCheckpoint::read(&run).unwrap();
        let report: RunReport =
            serde_json::from_slice(&std::fs::read(run.join("report.json")).unwrap()).unwrap();
        assert_eq!(saved.config, report.config);
        assert_eq!(saved.config.to_toml(), config);
        let _: PsroState = serde_json::from_value(saved.state).unwrap();
        assert_eq!(saved.reports, report.iterations);
        assert!(leftovers(&run).is_empty(), "{:?}", leftovers(&run));
    }

    #[test]
    fn a_stale_lock_is_taken_over_and_a_live_one_is_not() {
        let dir = temp_dir("hostile-stale-lock");
        let cfg = write(&dir, "xfp.toml", "game = \"kuhn_poker\"\nalgorithm = \"xfp\"\nmax_iterations = 3\n");
        // A lock of a process that no longer exists (pids stay below 2^22 on Linux), with the
        // temporary files of a killed run: a fresh run takes the folder over and cleans it.
        let run = dir.join("stale");
        let _ = std::fs::remove_dir_all(&run);
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join(".metagame.lock"), "4000000000 1\n").unwrap();
        std::fs::write(run.join(".checkpoint.json.tmp-4000000000"), "{\"format\":").unwrap();
        ok(&["run", &cfg, "--out", path(&run), "--json"]);
        assert!(leftovers(&run).is_empty(), "{:?}", leftovers(&run));
        // A lock of a live process (this test's): the folder is in use.
        std::fs::write(run.join(".metagame.lock"), format!("{}\n", std::process::id())).unwrap();
        let err = one_line_error(&metagame(&["run", "--resume", path(&run)]));
        assert!(err.contains("in use") && err.contains(&std::process::id().to_string()), "{err}");
        std::fs::remove_file(run.join(".metagame.lock")).unwrap();
    }

    /// The reference run's files a killed run must match: every file by name, and its report
    /// without timing fields.
    struct Reference {
        files: BTreeMap<String, Vec<u8>>,
        report: RunReport,
    }

    fn report_of(bytes: &[u8]) -> RunReport {
        let report: RunReport = serde_json::from_slice(bytes).unwrap();
        report.without_times()
    }

    /// Every file in `run` is complete: the reference's, or for the checkpoint a previous
    /// version of it (a prefix of the reference's iterations); figures and the HTML report
    /// whole (they show wall times, which vary).
    /// Temporary files and the lock may be left by the kill; the next run removes them.
    fn assert_complete(run: &Path, reference: &Reference) {
        let Ok(entries) = std::fs::read_dir(run) else { return };
        for entry in entries {
            let entry = entry.unwrap();
            let name = entry.file_name().to_string_lossy().into_owned();
            let bytes = std::fs::read(entry.path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            match name.as_str() {
                "checkpoint.json" => {
                    let saved = RunCheckpoint::read(run).unwrap();
                    let reports: Vec<IterationReport> =
                        saved.reports.iter().map(IterationReport::without_times).collect();
                    assert!(!reports.is_empty());
                    assert_eq!(
                        reports[..],
                        reference.report.iterations[..reports.len()],
                        "{}",
                        run.display()
                    );
                }
                "report.json" => assert_eq!(report_of(&bytes), reference.report, "{}", run.display()),
                // Appended before the checkpoint that covers it: complete lines are a prefix
                // of the reference's, the last may be torn (resuming cuts it off).
                "history.jsonl" => {
                    let whole = &reference.files["history.jsonl"];
                    let complete = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |k| k + 1);
                    let lines = |b: &[u8]| -> Vec<IterationReport> {
                        String::from_utf8_lossy(b)
                            .lines()
                            .map(|l| {
                                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                                serde_json::from_value::<IterationReport>(v["report"].clone())
                                    .unwrap()
                                    .without_times()
                            })
                            .collect()
                    };
                    let ours = lines(&bytes[..complete]);
                    assert_eq!(ours[..], lines(whole)[..ours.len()], "{}", run.display());
                }
                _ if name.ends_with(".html") => {
                    assert!(
                        text.starts_with("<!DOCTYPE html>") && text.trim_end().ends_with("</html>"),
                        "{name}"
                    )
                }
                _ if name.ends_with(".svg") => {
                    assert!(text.starts_with("<svg") && text.trim_end().ends_with("</svg>"), "{name}")
                }
                _ if name.starts_with('.') => {
                    assert!(name == ".metagame.lock" || name.contains(".tmp-"), "{name}")
                }
                _ => assert!(reference.files.get(&name) == Some(&bytes), "{}: {name} differs", run.display()),
            }
        }
    }

    #[test]
    fn a_run_killed_at_any_moment_leaves_only_complete_files() {
        let dir = temp_dir("hostile-kill");
        // Fictitious play on Kuhn poker: 200 iterations (about 0.1 s, with a checkpoint after
        // each) that find members again.
        let cfg = write(
            &dir,
            "fp.toml",
            "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmeta_solver = \"uniform\"\nevaluator = \"exact\"\nmax_iterations = 200\n",
        );
        let whole = dir.join("whole");
        let _ = std::fs::remove_dir_all(&whole);
        let started = Instant::now();
        ok(&["run", &cfg, "--out", path(&whole), "--json"]);
        let took = started.elapsed();
        let files = contents(&whole);
        let reference = Reference { report: report_of(&files["report.json"]), files };

        let kills = 24;
        for k in 0..kills {
            let run = dir.join(format!("killed-{k}"));
            let _ = std::fs::remove_dir_all(&run);
            let mut child = Command::new(env!("CARGO_BIN_EXE_metagame"))
                .args(["run", &cfg, "--out", path(&run), "--json"])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            // From the start to past the end of the whole run.
            std::thread::sleep(took.mul_f64(1.3 * k as f64 / kills as f64));
            child.kill().unwrap();
            child.wait().unwrap();
            assert_complete(&run, &reference);
            // It resumes (or starts again, when killed before writing its config) to the
            // reference's report, and leaves no lock or temporary file.
            if run.join("config.toml").exists() {
                ok(&["run", "--resume", path(&run), "--json"]);
            } else {
                ok(&["run", &cfg, "--out", path(&run), "--json"]);
            }
            assert_complete(&run, &reference);
            assert_eq!(report_of(&std::fs::read(run.join("report.json")).unwrap()), reference.report);
            assert!(leftovers(&run).is_empty(), "{:?}", leftovers(&run));
        }

        // Killed before its first checkpoint: the config, a lock and a temporary file. It
        // resumes from iteration 0 to the same report.
        let run = dir.join("before-first-checkpoint");
        let _ = std::fs::remove_dir_all(&run);
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("config.toml"), &reference.files["config.toml"]).unwrap();
        std::fs::write(run.join(".metagame.lock"), "4000000000 1\n").unwrap();
        std::fs::write(run.join(".checkpoint.json.tmp-4000000000"), "{").unwrap();
        ok(&["run", "--resume", path(&run), "--json"]);
        assert_eq!(report_of(&std::fs::read(run.join("report.json")).unwrap()), reference.report);
        assert!(leftovers(&run).is_empty(), "{:?}", leftovers(&run));
        // Killed before writing its config: a fresh run takes the folder.
        let run: PathBuf = dir.join("before-config");
        let _ = std::fs::remove_dir_all(&run);
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join(".metagame.lock"), "4000000000 1\n").unwrap();
        ok(&["run", &cfg, "--out", path(&run), "--json"]);
        assert_eq!(report_of(&std::fs::read(run.join("report.json")).unwrap()), reference.report);
    }
}
