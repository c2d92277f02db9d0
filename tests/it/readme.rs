//! Every ```` ```sh ```` block of README.md and of every chapter of the book (`docs/src/`, in
//! `SUMMARY.md`'s order), run with bash as written, in order, from a scratch folder that
//! links the repository's files (so the runs they make land in the scratch folder's
//! `runs/`, not the repository's). `cargo run --release --` is replaced by the test's
//! `metagame` binary, which is also first in `PATH`; nothing else is changed, and a block
//! fails the test if any of its commands fails (`set -eo pipefail`).
//!
//! Blocks marked `<!-- slow -->` on the line before their fence are skipped; there are 13,
//! [`SLOW_BLOCKS`]: the whole test suite (`scripts/test` in the README, which would run this
//! test again), the Tic-Tac-Toe Minimax Exploiter studies (`docs/src/league.md` and
//! `docs/src/minimax_exploiter_league.md`, cargo examples of minutes, run at tiny sizes by
//! `minimax_ttt_study` and `minimax_league_study`), the 30 s benchmark
//! grid with OpenSpiel's side (`docs/src/bench.md`, half an hour; `tests/it/bench.rs` runs
//! small grids), and the connect-four run, the two studies and the two peer comparisons of
//! `docs/src/neural-psro.md` (a minute, half an hour of neural PSRO runs, the
//! approximate-against-exact example, OpenSpiel's psro_v2 for twenty minutes, and PyTorch,
//! which the test venv does not hold; `tests/it/neural_psro.rs` runs the first three at
//! small sizes), and its sweep of the approximate estimate's budget (17 s;
//! `tests/it/neural_psro.rs` runs the command), and the connect-four league of networks, its
//! study against fixed opponents and its Minimax Exploiter study (`docs/src/neural-league.md`,
//! a minute to twenty; `tests/it/neural_league.rs` runs the league and both studies at tiny
//! sizes). Every other block runs.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::book::{Page, pages};
use super::cli::temp_dir;

/// How many blocks are marked slow and skipped (see the module docs for which).
const SLOW_BLOCKS: usize = 13;

/// One fenced `sh` block: its first line number in the file, its text and whether it is
/// marked slow.
struct Block {
    line: usize,
    text: String,
    slow: bool,
}

fn sh_blocks(page: &Page) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut current: Option<Block> = None;
    let mut previous = "";
    for (i, line) in page.text.lines().enumerate() {
        match &mut current {
            Some(block) if line.trim_start().starts_with("```") => {
                blocks.push(std::mem::replace(block, Block { line: 0, text: String::new(), slow: false }));
                current = None;
            }
            Some(block) => {
                block.text.push_str(line);
                block.text.push('\n');
            }
            None if line.trim() == "```sh" => {
                current = Some(Block {
                    line: i + 1,
                    text: String::new(),
                    slow: previous.trim() == "<!-- slow -->",
                });
            }
            None => {}
        }
        if !line.trim().is_empty() {
            previous = line;
        }
    }
    assert!(current.is_none(), "{} ends inside a code block", page.path.display());
    blocks
}

/// A scratch folder whose entries link the repository's (except `target`, `runs` and
/// `.git`), and a `bin/` folder holding `metagame`.
fn scratch(root: &Path) -> (PathBuf, PathBuf) {
    let dir = temp_dir("readme");
    let work = dir.join("work");
    let bin = dir.join("bin");
    for d in [&work, &bin] {
        if d.exists() {
            std::fs::remove_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(d).unwrap();
    }
    for entry in std::fs::read_dir(root).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if ["target", "runs", ".git"].iter().any(|n| name == *n) {
            continue;
        }
        std::os::unix::fs::symlink(entry.path(), work.join(&name)).unwrap();
    }
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_metagame"), bin.join("metagame")).unwrap();
    (work, bin)
}

#[test]
fn every_sh_block_of_the_readme_and_the_book_runs_as_written() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let pages = pages();
    let blocks: Vec<(&Page, Block)> =
        pages.iter().flat_map(|p| sh_blocks(p).into_iter().map(move |b| (p, b))).collect();
    let in_readme = blocks.iter().filter(|(p, _)| p.path == Path::new("README.md")).count();
    assert!(in_readme >= 2, "README.md has only {in_readme} sh blocks: the two commands at least");
    assert!(blocks.len() >= 8, "the README and the book have only {} sh blocks", blocks.len());
    let slow = blocks.iter().filter(|(_, b)| b.slow).count();
    assert_eq!(slow, SLOW_BLOCKS, "slow blocks changed: update SLOW_BLOCKS and the module docs");
    let (work, bin) = scratch(root);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap_or_default());
    for (page, block) in blocks.iter().filter(|(_, b)| !b.slow) {
        let script =
            format!("set -eo pipefail\n{}", block.text.replace("cargo run --release --", "metagame"));
        let out = Command::new("bash")
            .arg("-c")
            .arg(&script)
            .current_dir(&work)
            .env("PATH", &path)
            .output()
            .expect("run bash");
        assert!(
            out.status.success(),
            "{} line {}: the block failed ({})\n{}\nstdout:\n{}\nstderr:\n{}",
            page.path.display(),
            block.line,
            out.status,
            block.text,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    std::fs::remove_dir_all(work.parent().unwrap()).unwrap();
}

#[test]
fn config_examples_print_configs_that_parse() {
    for algorithm in metagame::Algorithm::ALL.iter().map(|a| a.as_str()) {
        let out = super::cli::metagame(&["config", "--example", algorithm]);
        assert!(out.status.success(), "{algorithm}: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let config = metagame::ExperimentConfig::from_toml_str(&text, Path::new("example.toml"))
            .unwrap_or_else(|e| panic!("{algorithm}: {e}"));
        assert_eq!(config.algorithm().algorithm().as_str(), algorithm);
    }
}

#[test]
fn the_readme_and_the_book_name_only_files_a_clone_has() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut missing = Vec::new();
    for page in pages() {
        for outside in ["PEERS.md", "../shared", "REFERENCE.md"] {
            assert!(
                !page.text.contains(outside),
                "{} names {outside}, which a clone lacks",
                page.path.display()
            );
        }
        // Every examples/, tests/, benches/, scripts/, docs/ or python/ path a page names
        // (relative to the repository, in the book too).
        for word in page.text.split(|c: char| c.is_whitespace() || "()`,;:[]".contains(c)) {
            let word = word.trim_end_matches(['.', '\'', '"']);
            let tracked = ["examples/", "tests/", "benches/", "scripts/", "docs/", "python/"]
                .iter()
                .any(|p| word.starts_with(p));
            if tracked && !word.contains('*') && !word.contains('$') && !root.join(word).exists() {
                missing.push(format!("{}: {word}", page.path.display()));
            }
        }
    }
    assert!(missing.is_empty(), "the README and the book name files that do not exist: {missing:?}");
}

#[test]
fn the_license_file_is_the_license_cargo_toml_names() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    assert!(manifest.contains("license = \"Apache-2.0\""), "Cargo.toml's license changed: update LICENSE");
    let license = std::fs::read_to_string(root.join("LICENSE")).unwrap();
    assert!(license.contains("Apache License") && license.contains("Version 2.0, January 2004"));
    assert!(license.contains("END OF TERMS AND CONDITIONS"), "LICENSE is not the full text");
}

/// `report.html` in a run folder: one page that needs nothing else (no URL, no script, no
/// linked file), with its figures inline and a row per iteration.
#[test]
fn run_folders_hold_a_self_contained_report_html() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for (config, figures) in [("kuhn_psro.toml", 4), ("rps_double_oracle.toml", 3)] {
        let out = temp_dir(&format!("report-html-{config}"));
        let run = super::cli::metagame(&[
            "run",
            root.join("examples").join(config).to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
            "--overwrite",
            "--json",
        ]);
        assert!(run.status.success(), "{config}: {}", String::from_utf8_lossy(&run.stderr));
        let html = std::fs::read_to_string(out.join("report.html")).unwrap();
        assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"), "{config}");
        for outside in ["http:", "https:", "<script", "src=", "href=", "<link", "@import", "url("] {
            assert!(!html.contains(outside), "{config}: report.html has {outside}");
        }
        // The curves, the meta-game and mixtures (PSRO), the lineage: inline SVG.
        assert_eq!(html.matches("<svg").count(), figures, "{config}");
        assert!(html.contains("algorithm = "), "{config}: the config");
        let report: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("report.json")).unwrap()).unwrap();
        let iterations = report["iterations"].as_array().unwrap().len();
        assert_eq!(html.matches("<tr>").count(), iterations + 1, "{config}: a row per iteration");
        std::fs::remove_dir_all(&out).unwrap();
    }
}
