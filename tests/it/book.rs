//! The book under `docs/` (mdBook) and the README that links into it: every page is in
//! `SUMMARY.md`, every relative link and image of the README and of the book resolves to a
//! file (mdBook itself does not check), every `{{#include}}` names a file and anchor that
//! exist, and `mdbook build` succeeds without a warning.
//!
//! `mdbook` is looked for on `PATH`, then in `$METAGAME_VENV/bin` and
//! `target/python-venv/bin` (where `scripts/test` installs it from
//! `python/requirements-docs.txt`). Without it the build test fails when `CI=true` and
//! otherwise says on stderr that it skipped.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::cli::temp_dir;

/// A page of the README or the book: its path relative to the repository and its text.
pub struct Page {
    pub path: PathBuf,
    pub text: String,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The chapters `docs/src/SUMMARY.md` links, in its order (draft chapters, `()`, left out).
fn summary_chapters() -> Vec<String> {
    let summary = std::fs::read_to_string(root().join("docs/src/SUMMARY.md")).expect("docs/src/SUMMARY.md");
    links(&summary).into_iter().filter(|l| !l.is_empty()).collect()
}

/// README.md, then every chapter of the book in `SUMMARY.md`'s order.
pub fn pages() -> Vec<Page> {
    std::iter::once("README.md".to_string())
        .chain(summary_chapters().into_iter().map(|c| format!("docs/src/{c}")))
        .map(|path| {
            let text = std::fs::read_to_string(root().join(&path)).unwrap_or_else(|e| panic!("{path}: {e}"));
            Page { path: PathBuf::from(path), text }
        })
        .collect()
}

/// The page at `path` (relative to the repository), which must be one of [`pages`].
pub fn page(path: &str) -> Page {
    pages().into_iter().find(|p| p.path == Path::new(path)).unwrap_or_else(|| panic!("{path}: not a page"))
}

/// The text outside fenced code blocks.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if !fenced {
            out.push_str(line);
            out.push('\n');
        }
    }
    out
}

/// The targets of the Markdown links and images `[text](target)` outside code blocks.
fn links(text: &str) -> Vec<String> {
    let prose = prose(text);
    let mut targets = Vec::new();
    let mut rest = prose.as_str();
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        targets.push(after[..end].trim().to_string());
        rest = &after[end..];
    }
    targets
}

/// The `{{#include FILE}}` and `{{#include FILE:ANCHOR}}` directives: (file, anchor).
fn includes(text: &str) -> Vec<(String, Option<String>)> {
    let mut found = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("{{#include ") {
        let after = &rest[at + "{{#include ".len()..];
        let end = after.find("}}").expect("an include ends with }}");
        let spec = after[..end].trim();
        let (file, anchor) = match spec.split_once(':') {
            Some((file, anchor)) => (file.to_string(), Some(anchor.to_string())),
            None => (spec.to_string(), None),
        };
        found.push((file, anchor));
        rest = &after[end..];
    }
    found
}

#[test]
fn every_page_of_the_book_is_in_its_summary() {
    let chapters = summary_chapters();
    assert!(chapters.len() >= 10, "SUMMARY.md lists only {} chapters", chapters.len());
    let mut files: Vec<String> = std::fs::read_dir(root().join("docs/src"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md") && n != "SUMMARY.md")
        .collect();
    files.sort();
    let mut listed = chapters.clone();
    listed.sort();
    listed.dedup();
    assert_eq!(listed.len(), chapters.len(), "SUMMARY.md lists a chapter twice");
    assert_eq!(files, listed, "docs/src/*.md and the chapters SUMMARY.md lists differ");
    assert!(chapters.iter().any(|c| c == "bench.md"), "SUMMARY.md lists no Benchmarks chapter");
}

#[test]
fn every_relative_link_of_the_readme_and_the_book_resolves() {
    let src = root().join("docs/src");
    let mut broken = Vec::new();
    for page in pages() {
        let dir = root().join(page.path.parent().unwrap());
        let in_book = page.path.starts_with("docs/src");
        for target in links(&page.text) {
            let external = ["http://", "https://", "mailto:"].iter().any(|s| target.starts_with(s));
            if external || target.starts_with('#') {
                continue;
            }
            let file = target.split('#').next().unwrap();
            let resolved = dir.join(file);
            if file.is_empty() || !resolved.exists() {
                broken.push(format!("{}: ({target}) names no file", page.path.display()));
            } else if in_book && !resolved.canonicalize().unwrap().starts_with(src.canonicalize().unwrap()) {
                // mdBook copies only docs/src into the built book: a link out of it breaks there.
                broken.push(format!("{}: ({target}) leaves docs/src", page.path.display()));
            }
        }
        for (file, anchor) in includes(&page.text) {
            let Ok(text) = std::fs::read_to_string(dir.join(&file)) else {
                broken.push(format!("{}: {{{{#include {file}}}}} names no file", page.path.display()));
                continue;
            };
            if let Some(anchor) = anchor {
                let start = text.lines().filter(|l| l.contains(&format!("ANCHOR: {anchor}"))).count();
                let end = text.lines().filter(|l| l.contains(&format!("ANCHOR_END: {anchor}"))).count();
                if (start, end) != (1, 1) {
                    broken.push(format!("{}: {file} has no one anchor `{anchor}`", page.path.display()));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

/// `mdbook` on PATH, in `$METAGAME_VENV/bin` or in `target/python-venv/bin`.
fn mdbook() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> =
        std::env::var_os("PATH").map(|p| std::env::split_paths(&p).collect()).unwrap_or_default();
    if let Some(venv) = std::env::var_os("METAGAME_VENV") {
        dirs.push(PathBuf::from(venv).join("bin"));
    }
    dirs.push(root().join("target/python-venv/bin"));
    dirs.into_iter().map(|d| d.join("mdbook")).find(|p| p.is_file())
}

#[test]
fn the_book_builds_with_mdbook() {
    let Some(bin) = mdbook() else {
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but `mdbook` is not on PATH, in $METAGAME_VENV/bin or target/python-venv/bin");
        }
        // Written to the process's stderr itself, past the test harness's capture, so that
        // the skip shows in the test output and is not taken for a pass.
        use std::io::Write as _;
        let _ = writeln!(
            std::io::stderr(),
            "SKIPPED book::the_book_builds_with_mdbook: no `mdbook` (pip install -r python/requirements-docs.txt)"
        );
        return;
    };
    let dest = temp_dir("book");
    let _ = std::fs::remove_dir_all(&dest);
    let out = Command::new(&bin)
        .arg("build")
        .arg(root().join("docs"))
        .arg("--dest-dir")
        .arg(&dest)
        .output()
        .expect("run mdbook");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "mdbook build docs failed ({}):\n{stderr}", out.status);
    let warnings: Vec<&str> = stderr.lines().filter(|l| l.contains("WARN") || l.contains("ERROR")).collect();
    assert!(warnings.is_empty(), "mdbook build docs warned:\n{}", warnings.join("\n"));
    for chapter in summary_chapters() {
        let html = dest.join(chapter.replace(".md", ".html"));
        let text = std::fs::read_to_string(&html).unwrap_or_else(|e| panic!("{}: {e}", html.display()));
        assert!(!text.contains("{{#include"), "{chapter}: an include was not expanded");
    }
    // The figures the chapters show are copied into the built book.
    for page in pages().iter().filter(|p| p.path.starts_with("docs/src")) {
        for target in links(&page.text).into_iter().filter(|t| t.starts_with("figures/")) {
            assert!(
                dest.join(&target).is_file(),
                "{}: {target} is not in the built book",
                page.path.display()
            );
        }
    }
    std::fs::remove_dir_all(&dest).unwrap();
}
