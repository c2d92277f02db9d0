//! `metagame bench`: a small grid's bench.json equals what `metagame run` of each cell's
//! config reports, its figures and table are there, a peer file is drawn beside ours, Ctrl-C
//! writes what was done, and bad input is refused in one line before any work.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cli::{metagame, one_line_error, temp_dir};

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `metagame bench ARGS --out DIR` into a fresh scratch folder `name`, which is returned;
/// it succeeds, and its stdout is returned too.
fn bench_in(name: &str, args: &[&str]) -> (std::path::PathBuf, String) {
    let dir = temp_dir(name);
    let _ = std::fs::remove_dir_all(&dir);
    let mut all = vec!["bench"];
    all.extend_from_slice(args);
    all.extend(["--out", dir.to_str().unwrap()]);
    let out = metagame(&all);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    (dir, String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Kuhn poker × cfr+, mccfr-outcome, psro-nash for 4 iterations, 2 seeds, into `dir`.
fn small_grid(dir: &Path, extra: &[&str]) -> std::process::Output {
    let mut args = vec![
        "bench",
        "--games",
        "kuhn_poker",
        "--algorithms",
        "cfr+,mccfr-outcome,psro-nash",
        "--budget",
        "4",
        "--seeds",
        "2",
        "--out",
        dir.to_str().unwrap(),
    ];
    args.extend(extra);
    metagame(&args)
}

#[test]
fn a_small_grid_records_what_run_reports_with_figures_and_a_table() {
    let dir = temp_dir("bench-grid");
    let _ = std::fs::remove_dir_all(&dir);
    let out = small_grid(&dir, &["--keep-runs"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("cfr+ is deterministic: one run per game, not 2"), "{stdout}");
    assert!(stdout.contains("psro-nash is deterministic"), "{stdout}");

    let bench = read_json(&dir.join("bench.json"));
    assert_eq!(bench["format"], "metagame-bench/1");
    assert_eq!(bench["budget"], json!({"kind": "iterations", "value": 4}));
    assert!(bench["machine"]["cores"].as_u64().unwrap() >= 1);
    let cells = bench["cells"].as_array().unwrap();
    let names: Vec<(String, u64)> = cells
        .iter()
        .map(|c| (c["algorithm"].as_str().unwrap().to_string(), c["seed"].as_u64().unwrap()))
        .collect();
    let expected = [("cfr+", 0), ("mccfr-outcome", 0), ("mccfr-outcome", 1), ("psro-nash", 0)];
    assert_eq!(names, expected.map(|(a, s)| (a.to_string(), s)).to_vec());
    let records = bench["records"].as_array().unwrap();
    // Iterations 0..=4 of each of the 4 cells (nothing thinned at this length).
    assert_eq!(records.len(), 4 * 5);

    // Each cell's records are what `metagame run` of its config reports, NashConv for NashConv.
    for cell in cells {
        assert_eq!(cell["status"], "finished");
        let run_dir = dir.join(cell["run_dir"].as_str().unwrap());
        let again = dir.join(format!("again-{}-{}", cell["algorithm"].as_str().unwrap(), cell["seed"]));
        let o = metagame(&[
            "run",
            run_dir.join("config.toml").to_str().unwrap(),
            "--out",
            again.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let report = read_json(&again.join("report.json"));
        let theirs: Vec<(u64, f64)> = report["iterations"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| (r["iteration"].as_u64().unwrap(), r["nash_conv"].as_f64().unwrap()))
            .collect();
        let ours: Vec<(u64, f64)> = records
            .iter()
            .filter(|r| r["algorithm"] == cell["algorithm"] && r["seed"] == cell["seed"])
            .map(|r| (r["iteration"].as_u64().unwrap(), r["nash_conv"].as_f64().unwrap()))
            .collect();
        assert_eq!(ours, theirs, "{}", cell["algorithm"]);
    }
    // The two MCCFR seeds are different runs.
    let last = |seed: u64| {
        records.iter().rfind(|r| r["algorithm"] == "mccfr-outcome" && r["seed"] == seed).unwrap()["nash_conv"]
            .as_f64()
            .unwrap()
    };
    assert_ne!(last(0), last(1));

    let figure = dir.join("kuhn_poker.svg");
    let size = std::fs::metadata(&figure).unwrap().len();
    assert!(size > 1_000 && size < 300_000, "{size}");
    let svg = std::fs::read_to_string(&figure).unwrap();
    assert!(svg.contains("median of 2 seeds; band: their range"), "the MCCFR band's label");
    let table = std::fs::read_to_string(dir.join("bench.md")).unwrap();
    let rows: Vec<&str> = table.lines().filter(|l| l.starts_with("| kuhn_poker |")).collect();
    assert_eq!(rows.len(), 3, "{table}");
    assert!(
        table.contains("| game | algorithm | iterations | NashConv at 1 it. | NashConv at 4 it. |"),
        "{table}"
    );
    // cfr+'s row: NashConv at iteration 4, as its record says, to 4 digits.
    let cfr4 = records.iter().find(|r| r["algorithm"] == "cfr+" && r["iteration"] == 4).unwrap();
    let cfr_row = rows.iter().find(|r| r.contains("| cfr+ |")).unwrap();
    let last_column = cfr_row.trim_end_matches(" |").rsplit(" | ").next().unwrap();
    let shown: f64 = last_column.parse().unwrap();
    let exact = cfr4["nash_conv"].as_f64().unwrap();
    assert!((shown - exact).abs() <= 5e-4 * exact.max(1e-3), "{shown} vs {exact}");
}

#[test]
fn a_peer_file_is_drawn_dashed_and_gets_its_columns() {
    let dir = temp_dir("bench-compare");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let record = |it: u64, s: f64, nc: f64| json!({"algorithm": "cfr+", "game": "kuhn_poker", "seed": 0, "iteration": it, "seconds": s, "nash_conv": nc});
    let peer = json!({
        "format": "metagame-bench/1", "tool": "OpenSpiel", "version": "2.0.2",
        "machine": {"cpu": "hand-made", "cores": 1, "os": "linux"},
        "budget": {"kind": "iterations", "value": 4}, "seeds": 1,
        "games": ["kuhn_poker"], "algorithms": ["cfr+"], "started": 0,
        "cells": [{"algorithm": "cfr+", "game": "kuhn_poker", "seed": 0, "seeded": false,
                   "status": "finished", "iterations": 4, "seconds": 0.4}],
        "records": [record(0, 0.01, 0.9), record(1, 0.1, 0.5), record(4, 0.4, 0.123456)],
    });
    let peer_path = dir.join("peer.json");
    std::fs::write(&peer_path, peer.to_string()).unwrap();
    let grid = dir.join("grid");
    let out = metagame(&[
        "bench",
        "--games",
        "kuhn_poker",
        "--algorithms",
        "cfr+",
        "--budget",
        "4",
        "--out",
        grid.to_str().unwrap(),
        "--compare",
        peer_path.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(grid.join("kuhn_poker.svg")).unwrap();
    assert!(svg.contains("OpenSpiel cfr+"), "the peer's legend entry");
    let table = std::fs::read_to_string(grid.join("bench.md")).unwrap();
    assert!(table.contains("| OpenSpiel iterations | OpenSpiel at 1 it. | OpenSpiel at 4 it. |"), "{table}");
    let row = table.lines().find(|l| l.starts_with("| kuhn_poker | cfr+ |")).unwrap();
    assert!(row.ends_with("| 4 | 0.5000 | 0.1235 |"), "{row}");

    // --redraw runs nothing: the figures and table again from bench.json, here without the peer.
    let before = std::fs::read_to_string(grid.join("bench.json")).unwrap();
    let out = metagame(&["bench", "--redraw", "--out", grid.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(std::fs::read_to_string(grid.join("bench.json")).unwrap(), before);
    assert!(!std::fs::read_to_string(grid.join("kuhn_poker.svg")).unwrap().contains("OpenSpiel"));
    assert!(!std::fs::read_to_string(grid.join("bench.md")).unwrap().contains("OpenSpiel"));
}

#[test]
fn ctrl_c_writes_the_cells_done_and_exits_130() {
    let dir = temp_dir("bench-interrupt");
    let _ = std::fs::remove_dir_all(&dir);
    let child = Command::new(env!("CARGO_BIN_EXE_metagame"))
        .args(["bench", "--games", "leduc_poker", "--algorithms", "cfr,xfp", "--budget", "60s"])
        .args(["--out", dir.to_str().unwrap()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let checkpoint = dir.join("runs/leduc_poker/cfr/seed0/checkpoint.json");
    while !checkpoint.exists() && started.elapsed() < Duration::from_secs(30) {
        std::thread::sleep(Duration::from_millis(10));
    }
    std::thread::sleep(Duration::from_millis(300));
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{}", String::from_utf8_lossy(&out.stderr));
    let bench = read_json(&dir.join("bench.json"));
    let cells = bench["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 1, "xfp never started");
    assert_eq!(cells[0]["status"], "interrupted");
    assert!(!bench["records"].as_array().unwrap().is_empty());
    assert!(dir.join("leduc_poker.svg").is_file() && dir.join("bench.md").is_file());
    assert!(std::fs::read_to_string(dir.join("bench.md")).unwrap().contains("was interrupted"));
}

#[test]
fn an_algorithm_that_does_not_apply_is_skipped_in_one_line() {
    let (dir, stdout) = bench_in(
        "bench-skip",
        &["--games", "kuhn_poker(players=3)", "--algorithms", "fxp,cfr", "--budget", "2"],
    );
    let skipped: Vec<&str> =
        stdout.lines().filter(|l| l.starts_with("skipped fxp on kuhn_poker(players=3)")).collect();
    assert_eq!(skipped.len(), 1, "{stdout}");
    let bench = read_json(&dir.join("bench.json"));
    assert_eq!(bench["cells"][0]["status"], "skipped");
    assert_eq!(bench["cells"][1]["status"], "finished");
    assert!(dir.join("kuhn_poker_players_3_.svg").is_file());
}

/// A game whose tree is not built (`--max-nodes` below Kuhn's 58 histories): learned PSRO
/// runs on its states and its NashConv is estimated (each record with its standard error, a
/// lower bound on the exact value up to it), the table marks the estimates, the figure's
/// legend says so, and the algorithms that need the tree are skipped.
#[test]
fn learned_psro_on_a_game_without_its_tree_is_benched_by_estimates() {
    let args =
        ["--games", "kuhn_poker", "--algorithms", "psro-nash:ppo,cfr+", "--budget", "1", "--max-nodes", "10"];
    let (dir, stdout) = bench_in("bench-estimates", &args);
    assert!(stdout.lines().any(|l| l.starts_with("skipped cfr+ on kuhn_poker")), "{stdout}");
    let bench = read_json(&dir.join("bench.json"));
    let records = bench["records"].as_array().unwrap();
    let iterations: Vec<u64> = records.iter().map(|r| r["iteration"].as_u64().unwrap()).collect();
    assert_eq!(iterations, [0, 1], "{records:?}");
    // Iteration 0 is uniform play, whose exact NashConv is 11/12.
    let (estimate, stderr) =
        (records[0]["nash_conv"].as_f64().unwrap(), records[0]["stderr"].as_f64().unwrap());
    assert!(stderr > 0.0 && stderr < 0.05, "{stderr}");
    assert!(estimate <= 11.0 / 12.0 + 3.0 * stderr && estimate > 0.6, "{estimate} ± {stderr}");
    assert!(records.iter().all(|r| r["algorithm"] == "psro-nash:ppo" && r["stderr"].is_f64()));
    let table = std::fs::read_to_string(dir.join("bench.md")).unwrap();
    let row = table.lines().find(|l| l.starts_with("| kuhn_poker | psro-nash:ppo |")).unwrap();
    assert!(row.contains("≥ "), "{row}");
    assert!(table.contains("estimated by best responses trained"), "{table}");
    let svg = std::fs::read_to_string(dir.join("kuhn_poker.svg")).unwrap();
    assert!(svg.contains("psro-nash:ppo (estimated, a lower bound)"), "{svg}");
}

#[test]
fn bad_input_is_refused_in_one_line_before_any_work() {
    let dir = temp_dir("bench-bad");
    let peer = dir.join("bad-peer.json");
    std::fs::write(&peer, "{\"format\": \"metagame-bench/1\", \"records\": 3}").unwrap();
    let out_dir = dir.join("out");
    let out = out_dir.to_str().unwrap();
    let cases: &[(&[&str], &str)] = &[
        (&["--games", "kuhn_poker", "--algorithms", "cfr++", "--budget", "2"], "unknown algorithm `cfr++`"),
        (&["--games", "kuhn_poker", "--algorithms", "psro-bogus", "--budget", "2"], "meta-solver `bogus`"),
        (&["--games", "kuhn_poker", "--algorithms", "psro-nash:bogus", "--budget", "2"], "oracle"),
        (&["--games", "kuhn_pokr", "--algorithms", "cfr", "--budget", "2"], "kuhn_pokr"),
        (&["--games", "kuhn_poker", "--algorithms", "cfr", "--budget", "0"], "at least 1"),
        (&["--games", "kuhn_poker", "--algorithms", "cfr", "--budget", "0s"], "more than 0 seconds"),
        (&["--games", "kuhn_poker", "--algorithms", "cfr", "--budget", "ten"], "budget `ten`"),
        (
            &[
                "--games",
                "kuhn_poker",
                "--algorithms",
                "cfr",
                "--budget",
                "2",
                "--compare",
                peer.to_str().unwrap(),
            ],
            "not a bench.json",
        ),
    ];
    for (args, expected) in cases {
        let mut all = vec!["bench"];
        all.extend_from_slice(args);
        all.extend(["--out", out]);
        let err = one_line_error(&metagame(&all));
        assert!(err.contains(expected), "{args:?}: {err}");
        assert!(!out_dir.exists(), "{args:?}: no work before the check");
    }
    // An out folder that cannot be written: a file in the way.
    let blocked = dir.join("a-file");
    std::fs::write(&blocked, "x").unwrap();
    let inside = blocked.join("bench");
    let err = one_line_error(&metagame(&[
        "bench",
        "--games",
        "kuhn_poker",
        "--algorithms",
        "cfr",
        "--budget",
        "2",
        "--out",
        inside.to_str().unwrap(),
    ]));
    assert!(err.contains("cannot be created"), "{err}");
}

/// Without `--keep-runs` each cell's run folder is removed once its records are in
/// bench.json (a fast algorithm's folder grows by a report per iteration), and the cells
/// name none.
#[test]
fn run_folders_are_removed_unless_kept() {
    let dir = temp_dir("bench-no-runs");
    let _ = std::fs::remove_dir_all(&dir);
    let out = small_grid(&dir, &[]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bench = read_json(&dir.join("bench.json"));
    let cells = bench["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4);
    assert!(cells.iter().all(|c| c.get("run_dir").is_none()), "{cells:?}");
    assert!(!dir.join("runs").exists(), "{:?}", walk(&dir.join("runs")));
    assert_eq!(bench["records"].as_array().unwrap().len(), 4 * 5);
}

/// Every file below `dir` (none when it does not exist).
fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Vec::new() };
    entries.flatten().flat_map(|e| if e.path().is_dir() { walk(&e.path()) } else { vec![e.path()] }).collect()
}

/// `--target`: each cell stops at its first evaluated NashConv at or below the target, the
/// file keeps the target, and the table says when each cell reached it; predictive CFR+
/// gets there on Kuhn in far fewer iterations than CFR+.
#[test]
fn a_target_stops_the_cells_and_the_table_says_when_each_reached_it() {
    let dir = temp_dir("bench-target");
    let _ = std::fs::remove_dir_all(&dir);
    let out = metagame(&[
        "bench",
        "--games",
        "kuhn_poker",
        "--algorithms",
        "cfr+,pcfr+",
        "--budget",
        "100000",
        "--target",
        "1e-4",
        "--out",
        dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let bench = read_json(&dir.join("bench.json"));
    assert_eq!(bench["target"], json!(1e-4));
    let mut reached = Vec::new();
    for cell in bench["cells"].as_array().unwrap() {
        assert_eq!(cell["note"], "target_reached", "{cell}");
        let algorithm = cell["algorithm"].as_str().unwrap();
        let records: Vec<&Value> =
            bench["records"].as_array().unwrap().iter().filter(|r| r["algorithm"] == algorithm).collect();
        let last = records.last().unwrap();
        assert!(last["nash_conv"].as_f64().unwrap() <= 1e-4, "{last}");
        assert_eq!(last["iteration"], cell["iterations"]);
        // The first record at or below the target is the last one: the cell stopped there.
        let first = records.iter().position(|r| r["nash_conv"].as_f64().unwrap() <= 1e-4).unwrap();
        assert_eq!(first, records.len() - 1, "{algorithm}");
        reached.push(cell["iterations"].as_u64().unwrap());
    }
    assert!(reached[1] * 10 < reached[0], "pcfr+ {} iterations, cfr+ {}", reached[1], reached[0]);
    let table = std::fs::read_to_string(dir.join("bench.md")).unwrap();
    assert!(table.contains("| time to NashConv ≤ 1e-4 |"), "{table}");
    let row = table.lines().find(|l| l.starts_with("| kuhn_poker | pcfr+ |")).unwrap();
    assert!(row.contains(&format!(" s ({} it.) |", reached[1])), "{row}");
}
