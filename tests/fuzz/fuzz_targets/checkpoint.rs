//! The checkpoint reader, in memory: the bytes as a whole checkpoint (envelope, version,
//! checksum, payload), and the bytes as a payload wrapped in an envelope with the right
//! checksum (so that the fuzzer reaches the payload's parsing and checks). A payload that
//! parses has its state checked as a resume would (XFP on the Kuhn and Leduc trees).
#![no_main]

use std::path::Path;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use metagame::RunCheckpoint;
use metagame_games::{GameTree, registry};
use metagame_populations::{Xfp, XfpState, checkpoint};

fn trees() -> &'static [GameTree] {
    static TREES: OnceLock<Vec<GameTree>> = OnceLock::new();
    TREES.get_or_init(|| {
        ["kuhn_poker", "leduc_poker"]
            .iter()
            .map(|spec| GameTree::build(&registry::load(spec).expect("game")).expect("tree"))
            .collect()
    })
}

fn check(saved: RunCheckpoint) {
    let _ = saved.config.same_run_as(&saved.config);
    if let Ok(state) = serde_json::from_value::<XfpState>(saved.state) {
        for tree in trees() {
            let _ = Xfp::resume(tree, state.clone(), &saved.reports);
        }
    }
}

fuzz_target!(|data: &[u8]| {
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
