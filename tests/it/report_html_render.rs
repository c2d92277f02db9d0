//! `report.html` rendered by headless Chromium (Debian's `chromium` package): the page logs
//! nothing to the console, its figures have a non-zero size, and the screenshot is not blank.
//!
//! Without `chromium` on PATH the test says so on stderr and passes, unless `CI=true` or
//! `METAGAME_REQUIRE_CHROMIUM=1` is set, in which case it fails.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::cli::{metagame, temp_dir};

fn chromium() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path).map(|d| d.join("chromium")).find(|p| p.is_file())
}

/// Runs headless Chromium on `page` with `extra` arguments; kills it after two minutes.
fn run_chromium(bin: &Path, profile: &Path, page: &Path, extra: &[String]) -> Output {
    let child = Command::new(bin)
        .args(["--headless=new", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr"])
        .args(["--v=0", "--no-first-run", "--hide-scrollbars"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(extra)
        .arg(format!("file://{}", page.display()))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start chromium");
    let id = child.id();
    let start = Instant::now();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(child.wait_with_output()));
    loop {
        if let Ok(out) = rx.recv_timeout(Duration::from_secs(1)) {
            return out.expect("wait for chromium");
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            panic!("chromium did not finish within 120 s");
        }
    }
}

/// Console messages Chromium logged (`...:CONSOLE(...)] "..."`) and uncaught exceptions.
fn console_lines(stderr: &[u8]) -> Vec<String> {
    String::from_utf8_lossy(stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("Uncaught"))
        .map(str::to_owned)
        .collect()
}

/// The value of attribute `name` in the tag text `tag` (`name="..."`).
fn attr<'a>(tag: &'a str, name: &str) -> Option<&'a str> {
    let key = format!(" {name}=\"");
    let from = tag.find(&key)? + key.len();
    tag[from..].split('"').next()
}

#[test]
fn report_html_renders_without_errors_in_headless_chromium() {
    let Some(bin) = chromium() else {
        if std::env::var("METAGAME_REQUIRE_CHROMIUM").as_deref() == Ok("1") {
            panic!("METAGAME_REQUIRE_CHROMIUM=1 but `chromium` is not on PATH");
        }
        if std::env::var("CI").as_deref() == Ok("true") {
            panic!("CI=true but `chromium` is not on PATH (CI installs it: .ci/run)");
        }
        // Written to the process's stderr itself, past the test harness's capture, so that
        // the skip shows in the test output and is not taken for a pass.
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), "SKIPPED report_html_render: `chromium` is not on PATH");
        return;
    };
    let tmp = temp_dir("report-html-render");
    let run = tmp.join("run");
    let config = format!("{}/examples/kuhn_psro.toml", env!("CARGO_MANIFEST_DIR"));
    let out = metagame(&["run", &config, "--out", run.to_str().unwrap(), "--overwrite", "--json"]);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let page = run.join("report.html");
    assert!(page.is_file(), "no report.html in {}", run.display());

    // The DOM as Chromium built it, and everything the page logged.
    let dom = run_chromium(&bin, &tmp.join("profile-dom"), &page, &["--dump-dom".to_owned()]);
    assert!(dom.status.success(), "chromium --dump-dom: {}", String::from_utf8_lossy(&dom.stderr));
    let console = console_lines(&dom.stderr);
    assert!(console.is_empty(), "console messages:\n{}", console.join("\n"));
    let html = String::from_utf8_lossy(&dom.stdout);
    let svgs: Vec<&str> =
        html.match_indices("<svg").map(|(i, _)| &html[i..i + html[i..].find('>').unwrap()]).collect();
    // Curves, final meta-game, mixtures, lineage.
    assert!(svgs.len() >= 4, "expected at least 4 figures, DOM has {}", svgs.len());
    for tag in &svgs {
        for dim in ["width", "height"] {
            let v: f64 = attr(tag, dim)
                .unwrap_or_else(|| panic!("no {dim} on {tag}"))
                .trim_end_matches("px")
                .parse()
                .unwrap_or_else(|e| panic!("{dim} of {tag}: {e}"));
            assert!(v > 0.0, "{dim} = {v} on {tag}");
        }
    }

    // The screenshot: a 1280-wide PNG with content (a blank page of this size is ~14 KB).
    let png = tmp.join("report.png");
    let shot = run_chromium(
        &bin,
        &tmp.join("profile-shot"),
        &page,
        &[format!("--screenshot={}", png.display()), "--window-size=1280,2400".to_owned()],
    );
    assert!(shot.status.success(), "chromium --screenshot: {}", String::from_utf8_lossy(&shot.stderr));
    let console = console_lines(&shot.stderr);
    assert!(console.is_empty(), "console messages:\n{}", console.join("\n"));
    let bytes = std::fs::read(&png).expect("screenshot written");
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    assert_eq!(&bytes[12..16], b"IHDR");
    let width = u32::from_be_bytes(bytes[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(bytes[20..24].try_into().unwrap());
    assert_eq!((width, height), (1280, 2400));
    assert!(bytes.len() > 40_000, "screenshot is {} bytes: blank?", bytes.len());

    let _ = std::fs::remove_dir_all(&tmp);
}
