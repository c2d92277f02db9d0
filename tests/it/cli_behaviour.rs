//! The CLI around the numbers: closed pipes, `--resume DIR` alone, run folders that are never
//! replaced silently, configs checked before the first iteration, output in words, errors
//! said once, progress without a terminal.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::Value;

use crate::cli::{metagame, one_line_error, temp_dir};
use crate::run_cli::{json_lines, report};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_metagame"))
}

fn example(name: &str) -> String {
    format!("{}/examples/{name}", env!("CARGO_MANIFEST_DIR"))
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// `args` with stdout a pipe whose reading end is already closed: every write to stdout
/// fails with EPIPE, as behind `| head -1` once head has exited.
fn with_closed_stdout(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    bin().args(args).stdout(writer).stderr(Stdio::piped()).output().unwrap()
}

/// `args` with stdout read for one line, then closed (`| head -1`).
fn with_one_line_read(args: &[&str]) -> (String, Output) {
    let mut child = bin().args(args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    (line, child.wait_with_output().unwrap())
}

fn quiet_success(what: &str, o: &Output) {
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!err.contains("panicked") && !err.contains("Broken pipe"), "{what}: {err}");
    assert_eq!(o.status.code(), Some(0), "{what}: {err}");
}

/// `kuhn_psro_sampled.toml` (sampled payoffs: it never converges early) with 8 iterations.
fn sampled_config(dir: &Path) -> String {
    let text = std::fs::read_to_string(example("kuhn_psro_sampled.toml")).unwrap();
    let text: String = text
        .lines()
        .map(|l| if l.starts_with("max_iterations") { "max_iterations = 8".into() } else { l.to_string() })
        .map(|l| l + "\n")
        .collect();
    write(dir, "c.toml", &text)
}

#[test]
fn commands_end_quietly_when_stdout_is_closed() {
    let dir = temp_dir("closed-stdout");
    let policy = dir.join("policy.json");
    let policy = policy.to_str().unwrap();
    let commands: &[&[&str]] = &[
        &["game-info", "--game", "leduc_poker"],
        &["game-info", "--game", "leduc_poker", "--json"],
        &["exploitability", "--game", "kuhn_poker", "--policy", "uniform"],
        &["solve", "--game", "matrix_rps", "--solver", "nash"],
        &["solve", "--game", "matrix_rps", "--solver", "alpha-rank", "--json"],
        &["matches", "--game", "kuhn_poker", "--policies", "uniform", "first-action"],
        &[
            "respond",
            "--game",
            "kuhn_poker",
            "--against",
            "uniform",
            "--seat",
            "1",
            "--learner",
            "q-learning",
            "--episodes",
            "2000",
            "--out",
            policy,
        ],
        &["--help"],
    ];
    for args in commands {
        quiet_success(&args.join(" "), &with_closed_stdout(args));
    }
    // `respond --out F | head -1` still writes F.
    let text = std::fs::read_to_string(policy).unwrap();
    assert!(text.starts_with('{') && text.contains("\"0\""), "{text}");
    let (line, o) = with_one_line_read(&["game-info", "--game", "leduc_poker"]);
    assert!(line.contains("leduc_poker"), "{line}");
    quiet_success("game-info | head -1", &o);
}

/// `metagame run CFG --json | head -1`: the run finishes and writes its folder, whose report
/// is the uninterrupted run's, and `--resume DIR` of it (no config) ends with that report.
#[test]
fn a_run_whose_stdout_closes_finishes_its_folder() {
    let dir = temp_dir("run-closed-stdout");
    let cfg = sampled_config(&dir);
    let whole = dir.join("whole");
    let o = metagame(&["run", &cfg, "--out", whole.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));

    let headed = dir.join("headed");
    let (line, o) = with_one_line_read(&["run", &cfg, "--out", headed.to_str().unwrap(), "--json"]);
    let first: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(first["iteration"], 0);
    quiet_success("run --json | head -1", &o);
    let closed = dir.join("closed");
    quiet_success(
        "run --json >closed",
        &with_closed_stdout(&["run", &cfg, "--out", closed.to_str().unwrap(), "--json"]),
    );
    let text_closed = dir.join("text-closed");
    quiet_success("run >closed", &with_closed_stdout(&["run", &cfg, "--out", text_closed.to_str().unwrap()]));

    for run in [&headed, &closed, &text_closed] {
        for file in ["config.toml", "checkpoint.json", "report.json", "exploitability.svg"] {
            assert!(run.join(file).is_file(), "{}: {file}", run.display());
        }
        assert_eq!(report(run), report(&whole), "{}", run.display());
        let o = metagame(&["run", "--resume", run.to_str().unwrap(), "--json"]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        assert_eq!(report(run), report(&whole), "{} resumed", run.display());
    }
}

/// `--resume DIR` alone reads DIR's config.toml; a resumed run prints only the iterations it
/// computes (not the checkpoint's again), in JSON lines and in progress lines alike.
#[test]
fn resume_dir_alone_continues_from_the_checkpoint() {
    let dir = temp_dir("resume-alone");
    let cfg = sampled_config(&dir);
    let whole = dir.join("whole");
    assert!(metagame(&["run", &cfg, "--out", whole.to_str().unwrap(), "--json"]).status.success());
    for (stop_after, json) in [("0", true), ("3", true), ("0", false), ("3", false)] {
        let killed = dir.join(format!("killed-{stop_after}-{json}"));
        let o =
            metagame(&["run", &cfg, "--out", killed.to_str().unwrap(), "--json", "--stop-after", stop_after]);
        assert_eq!(o.status.code(), Some(130));
        let mut args = vec!["run", "--resume", killed.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let o = metagame(&args);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let next = stop_after.parse::<usize>().unwrap() + 1;
        if json {
            let (lines, summary) = json_lines(&o.stdout);
            assert_eq!(lines[0]["iteration"], next, "{stop_after}");
            assert_eq!(lines.len(), 8 + 1 - next);
            assert_eq!(summary["iterations"], 8);
        } else {
            let err = String::from_utf8(o.stderr).unwrap();
            let first = err.lines().next().unwrap_or_default();
            assert!(first.starts_with(&format!("iteration {next}/8 ")), "{err}");
        }
        assert_eq!(report(&killed), report(&whole), "{stop_after}");
    }
    // A folder without a run says which file it lacks, once.
    let err = one_line_error(&metagame(&["run", "--resume", dir.join("nothing").to_str().unwrap()]));
    assert!(err.contains("config.toml") && err.matches("os error 2").count() == 1, "{err}");
}

#[test]
fn an_existing_run_folder_is_replaced_only_with_overwrite() {
    let dir = temp_dir("overwrite");
    let out = dir.join("run");
    let out_s = out.to_str().unwrap();
    let psro = example("kuhn_psro.toml");
    assert!(metagame(&["run", &psro, "--out", out_s, "--json"]).status.success());
    std::fs::write(out.join("notes.txt"), "mine").unwrap();
    let before = std::fs::read(out.join("report.json")).unwrap();

    let err = one_line_error(&metagame(&["run", &psro, "--out", out_s]));
    assert!(err.contains("already holds a run") && err.contains("--overwrite"), "{err}");
    assert!(err.contains(&format!("--resume {out_s}")), "{err}");
    assert_eq!(std::fs::read(out.join("report.json")).unwrap(), before);

    // A config that cannot start replaces nothing, even with --overwrite.
    let bad = write(
        &dir,
        "bad.toml",
        "game = \"kuhn_poker(players=3)\"\nalgorithm = \"psro\"\nmeta_solver = \"lp\"\n",
    );
    one_line_error(&metagame(&["run", &bad, "--out", out_s, "--overwrite"]));
    assert_eq!(std::fs::read(out.join("report.json")).unwrap(), before);

    // --overwrite with XFP: the PSRO run's meta-game, payoffs and lineage go, other files stay.
    let xfp = write(&dir, "xfp.toml", "game = \"kuhn_poker\"\nalgorithm = \"xfp\"\nmax_iterations = 3\n");
    let o = metagame(&["run", &xfp, "--out", out_s, "--overwrite", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    for gone in ["payoffs.svg", "meta_game.nfg", "lineage.dot"] {
        assert!(!out.join(gone).exists(), "{gone}");
    }
    assert_eq!(std::fs::read_to_string(out.join("notes.txt")).unwrap(), "mine");
    assert!(std::fs::read_to_string(out.join("config.toml")).unwrap().contains("xfp"));

    // A non-empty folder that holds no run is refused, --overwrite or not.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("data.csv"), "1,2").unwrap();
    for extra in [&[][..], &["--overwrite"]] {
        let mut args = vec!["run", &xfp, "--out", other.to_str().unwrap()];
        args.extend(extra);
        let err = one_line_error(&metagame(&args));
        assert!(err.contains("holds no run"), "{err}");
    }
    assert_eq!(std::fs::read_dir(&other).unwrap().count(), 1);
    // An empty folder is fine.
    let empty = dir.join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    assert!(metagame(&["run", &xfp, "--out", empty.to_str().unwrap()]).status.success());
}

/// Each check that can be made before the first iteration is made then: one line naming
/// the problem once, exit 2, and no run folder.
#[test]
fn configs_that_cannot_run_fail_before_the_first_iteration() {
    let dir = temp_dir("cannot-run");
    let mut cases: Vec<(String, String, &[&str])> = Vec::new();
    for solver in ["lp", "lemke-howson", "support-enumeration", "vertex-enumeration"] {
        cases.push((
            format!("{solver}.toml"),
            format!("game = \"kuhn_poker(players=3)\"\nalgorithm = \"psro\"\nmeta_solver = \"{solver}\"\n"),
            &["needs 2 players", "the game has 3"],
        ));
    }
    #[cfg(not(feature = "cuda"))]
    cases.push((
        "gpu.toml".into(),
        "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nevaluator = \"gpu\"\n".into(),
        &["`gpu`", "cuda feature"],
    ));
    cases.push((
        "players.toml".into(),
        "game = \"kuhn_poker(players=1)\"\nalgorithm = \"xfp\"\n".into(),
        &["players must be in"],
    ));
    cases.push((
        "param.toml".into(),
        "game = \"leduc_poker(size=3)\"\nalgorithm = \"psro\"\n".into(),
        &["unknown parameter `size`"],
    ));
    cases.push((
        "tree.toml".into(),
        "game = \"kuhn_poker(players=9)\"\nalgorithm = \"xfp\"\n".into(),
        &["more than the limit of"],
    ));
    cases.push((
        "do-3p.toml".into(),
        "game = \"kuhn_poker(players=3)\"\nalgorithm = \"double-oracle\"\n".into(),
        &["algorithm `double-oracle` takes a 2-player game, kuhn_poker(players=3) has 3 players"],
    ));
    cases.push((
        "do-bos.toml".into(),
        "game = \"matrix_bos\"\nalgorithm = \"double-oracle\"\n".into(),
        &["zero-sum"],
    ));
    for (name, text, needles) in cases {
        let cfg = write(&dir, &name, &text);
        let out = dir.join(format!("out-{name}"));
        let err = one_line_error(&metagame(&["run", &cfg, "--out", out.to_str().unwrap()]));
        for needle in needles {
            assert_eq!(err.matches(needle).count(), 1, "{name}: said once: {needle}: {err}");
        }
        assert!(!out.exists(), "{name}: no run folder");
    }
}

/// A TOML syntax error: one line naming file, line and column, quoting the line of the
/// file. No folder is made.
#[test]
fn toml_syntax_errors_name_the_place_in_one_line() {
    let dir = temp_dir("toml-syntax");
    let cfg = write(&dir, "syntax.toml", "game = \"kuhn_poker\"\nalgorithm = psro\nmax_iterations = 3\n");
    let out = dir.join("out");
    let err = one_line_error(&metagame(&["run", &cfg, "--out", out.to_str().unwrap()]));
    let head = err.strip_prefix(&format!("error: {cfg}:")).unwrap_or_else(|| panic!("{err}"));
    let mut place = head.split(':');
    let line: usize = place.next().unwrap().parse().unwrap();
    let column: usize = place.next().unwrap().parse().unwrap();
    assert_eq!((line, column), (2, 13), "{err}");
    assert!(err.trim_end().ends_with("(line 2: `algorithm = psro`)"), "{err}");
    assert!(!out.exists());
}

#[test]
fn errors_say_an_os_error_once_and_name_a_policy_of_another_game() {
    let dir = temp_dir("errors-once");
    let missing = dir.join("missing.json");
    let err = one_line_error(&metagame(&[
        "exploitability",
        "--game",
        "kuhn_poker",
        "--policy",
        missing.to_str().unwrap(),
    ]));
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
    let err = one_line_error(&metagame(&["run", dir.join("missing.toml").to_str().unwrap()]));
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");

    let kuhn = format!("{}/tests/fixtures/openspiel/kuhn_poker_uniform.json", env!("CARGO_MANIFEST_DIR"));
    let err = one_line_error(&metagame(&["exploitability", "--game", "leduc_poker", "--policy", &kuhn]));
    assert!(err.contains("is not a policy of leduc_poker"), "{err}");
}

/// The run's last line speaks as papers do; without a terminal and without `--json`, stderr
/// gets progress lines with an ETA (every 5 s or tenth of the run).
#[test]
fn run_output_uses_human_names_and_progress_lines() {
    let dir = temp_dir("human-names");
    let cases = [
        (example("kuhn_psro.toml"), "kuhn_poker PSRO after", "(converged)"),
        (example("rps_double_oracle.toml"), "matrix_rps Double Oracle after 3 iterations", "(converged)"),
        (example("leduc_xfp.toml"), "leduc_poker XFP after 100 iterations", "(max iterations)"),
    ];
    for (k, (cfg, head, tail)) in cases.iter().enumerate() {
        let out = dir.join(format!("run{k}"));
        let o = metagame(&["run", cfg, "--out", out.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let stdout = String::from_utf8(o.stdout).unwrap();
        assert_eq!(stdout.lines().count(), 1, "{stdout}");
        assert!(stdout.starts_with(head) && stdout.contains(tail), "{stdout}");
        assert!(!stdout.contains("e0") && !stdout.contains("Psro") && !stdout.contains("Max"), "{stdout}");
        if k == 0 {
            // Kuhn PSRO converges to an exact equilibrium: NashConv at rounding level.
            let value: f64 =
                stdout.split("NashConv ").nth(1).unwrap().split(' ').next().unwrap().parse().unwrap();
            assert!(value < 1e-15, "{stdout}");
        }
        let stderr = String::from_utf8(o.stderr).unwrap();
        let lines: Vec<&str> = stderr.lines().collect();
        assert!(!lines.is_empty(), "progress lines without a terminal");
        for line in &lines {
            assert!(
                line.starts_with("iteration ") && line.contains("NashConv") && line.contains("ETA"),
                "{line}"
            );
            assert!(line.len() <= 80, "{line}");
        }
        if cfg.contains("leduc_xfp") {
            // 100 fast iterations: the first, then one per tenth.
            assert!(lines[0].starts_with("iteration 0/100 "), "{stderr}");
            assert!((11..=40).contains(&lines.len()), "{stderr}");
        }
    }
}
