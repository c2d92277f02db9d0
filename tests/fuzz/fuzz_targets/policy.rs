//! The OpenSpiel policy reader on the Kuhn (2 and 3 players) and Leduc trees: any text is a
//! policy or a typed error, never a panic; a policy read is valid and reads back the same.
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use metagame_games::{GameTree, TabularPolicy, registry};

fn trees() -> &'static [GameTree] {
    static TREES: OnceLock<Vec<GameTree>> = OnceLock::new();
    TREES.get_or_init(|| {
        ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker"]
            .iter()
            .map(|spec| GameTree::build(&registry::load(spec).expect("game")).expect("tree"))
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for tree in trees() {
        if let Ok(policy) = TabularPolicy::from_openspiel_json(tree, text) {
            assert!(policy.validate(tree).is_ok(), "a policy read is not valid");
            let again = TabularPolicy::from_openspiel_json(tree, &policy.to_openspiel_json(tree))
                .expect("a policy's own JSON is refused");
            assert_eq!(again.as_slice(), policy.as_slice(), "a policy's JSON reads back different");
        }
    }
});
