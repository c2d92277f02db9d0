//! The README's "Use it from Rust" program, compiled unchanged in a new crate outside the
//! workspace that depends on `metagame` by path (as a user's crate would), and run.

use std::path::Path;
use std::process::Command;

use crate::cli::temp_dir;

/// The first ```` ```rust ```` block after the README's "Use it from Rust" heading.
fn readme_program(readme: &str) -> String {
    let section = &readme[readme.find("## Use it from Rust").expect("the section")..];
    let start = section.find("```rust\n").expect("a rust block") + "```rust\n".len();
    let end = start + section[start..].find("\n```").expect("its end");
    section[start..end].to_string() + "\n"
}

/// The `[profile.release]` table of a manifest, header and keys.
fn release_profile(manifest: &str) -> String {
    let start = manifest.find("[profile.release]").expect("the workspace sets its release profile");
    let body = &manifest[start..];
    let end = body[1..].find("\n[").map_or(body.len(), |i| i + 2);
    body[..end].to_string()
}

#[test]
fn the_readme_program_compiles_and_runs_in_a_crate_of_its_own() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let dir = temp_dir("library-guide");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    // The workspace's release profile too: with another one every dependency's build hash
    // differs and the whole tree is compiled again (eight minutes of CI's two cores).
    let workspace_manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap();
    let release = release_profile(&workspace_manifest);
    let manifest = format!(
        "[package]\nname = \"uses-metagame\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nmetagame = {{ path = {:?} }}\n\n{release}\n[workspace]\n",
        root.display().to_string()
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/main.rs"), readme_program(&readme)).unwrap();
    // The workspace's lock file and build folder: the same versions, already built.
    std::fs::copy(root.join("Cargo.lock"), dir.join("Cargo.lock")).unwrap();
    let target = root.join("target");
    let out = Command::new(env!("CARGO"))
        .args(["run", "--release", "--offline", "--quiet", "--manifest-path"])
        .arg(dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .output()
        .expect("cargo runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}\n{stdout}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("iteration  0  NashConv 9.167e-1"), "{stdout}");
    assert!(stdout.lines().last().unwrap_or_default().contains("after"), "{stdout}");
}
