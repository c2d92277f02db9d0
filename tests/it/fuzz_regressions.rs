//! The fuzz targets' inputs replayed (issue 14): every file of `tests/fuzz/regressions/<target>/`
//! (inputs that once crashed a target) and of the seed corpora `tests/fuzz/corpus/<target>/`
//! goes through the same entry points and checks as the `cargo fuzz` target of that name
//! (`tests/fuzz/fuzz_targets/`), without a panic. This is how CI runs the fuzz corpora: it
//! needs neither nightly nor cargo-fuzz.

use std::path::{Path, PathBuf};

use metagame::games::nfg::{from_nfg_str, to_nfg_string};
use metagame::games::{GameTree, TabularPolicy, registry};
use metagame::populations::{Xfp, XfpState, checkpoint};
use metagame::{ExperimentConfig, RunCheckpoint};

/// The files of `tests/fuzz/{regressions,corpus}/<target>/`, sorted (a folder that is missing
/// holds none).
fn inputs(target: &str) -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fuzz");
    let mut files: Vec<PathBuf> = ["regressions", "corpus"]
        .iter()
        .filter_map(|dir| std::fs::read_dir(root.join(dir).join(target)).ok())
        .flat_map(|entries| entries.map(|e| e.expect("a folder entry").path()))
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Feed every input of `target` to `check`; fails naming the inputs that panicked.
fn replay(target: &str, min_inputs: usize, check: impl Fn(&[u8]) + std::panic::RefUnwindSafe) {
    let files = inputs(target);
    assert!(files.len() >= min_inputs, "{target}: {} inputs, expected at least {min_inputs}", files.len());
    let failed: Vec<String> = files
        .iter()
        .filter(|path| {
            // A file gone since it was listed (a fuzzer running on the corpus) is skipped.
            let Ok(data) = std::fs::read(path) else { return false };
            std::panic::catch_unwind(|| check(&data)).is_err()
        })
        .map(|path| path.display().to_string())
        .collect();
    assert!(failed.is_empty(), "{target}: these inputs panic: {failed:?}");
}

fn trees(specs: &[&str]) -> Vec<GameTree> {
    specs.iter().map(|spec| GameTree::build(&registry::load(spec).expect("game")).expect("tree")).collect()
}

#[test]
fn nfg_inputs_do_not_panic() {
    replay("nfg", 5, |data| {
        let Ok(text) = std::str::from_utf8(data) else { return };
        if let Ok(game) = from_nfg_str(text) {
            assert!(from_nfg_str(&to_nfg_string(&game)).is_ok(), "a game's own .nfg text is refused");
        }
    });
}

#[test]
fn policy_inputs_do_not_panic() {
    let trees = trees(&["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"]);
    replay("policy", 5, |data| {
        let Ok(text) = std::str::from_utf8(data) else { return };
        for tree in &trees {
            if let Ok(policy) = TabularPolicy::from_openspiel_json(tree, text) {
                assert!(policy.validate(tree).is_ok(), "a policy read is not valid");
                let again = TabularPolicy::from_openspiel_json(tree, &policy.to_openspiel_json(tree))
                    .expect("a policy's own JSON is refused");
                assert_eq!(again.as_slice(), policy.as_slice(), "a policy's JSON reads back different");
            }
        }
    });
}

#[test]
fn config_inputs_do_not_panic() {
    replay("config", 5, |data| {
        let Ok(text) = std::str::from_utf8(data) else { return };
        let path = Path::new("fuzz.toml");
        if let Ok(config) = ExperimentConfig::from_toml_str(text, path) {
            let again = ExperimentConfig::from_toml_str(&config.to_toml(), path)
                .expect("a config's own TOML is refused");
            assert!(again.same_run_as(&config), "a config's own TOML is another run");
        }
    });
}

#[test]
fn checkpoint_inputs_do_not_panic() {
    let trees = trees(&["kuhn_poker", "leduc_poker"]);
    let check = |saved: RunCheckpoint| {
        let _ = saved.config.same_run_as(&saved.config);
        if let Ok(state) = serde_json::from_value::<XfpState>(saved.state) {
            for tree in &trees {
                let _ = Xfp::resume(tree, state.clone(), &saved.reports);
            }
        }
    };
    replay("checkpoint", 4, |data| {
        let path = Path::new("checkpoint.json");
        if let Ok(saved) = checkpoint::from_slice::<RunCheckpoint>(path, data) {
            check(saved);
        }
        let Ok(payload) = std::str::from_utf8(data) else { return };
        let wrapped = format!(
            "{{\"format\":\"metagame-checkpoint\",\"version\":{},\"checksum\":\"{}\",\"payload\":{payload}}}",
            checkpoint::CHECKPOINT_VERSION,
            checkpoint::checksum(payload)
        );
        if let Ok(saved) = checkpoint::from_slice::<RunCheckpoint>(path, wrapped.as_bytes()) {
            check(saved);
        }
    });
}
