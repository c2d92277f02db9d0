//! Helpers shared by the cuda crate's test binaries.

use metagame_games::philox::{philox4x32_10, uniform_f64};
use metagame_games::{GameTree, TabularPolicy};

/// A policy with every legal action's probability in (0, 1), reproducible from `salt`.
pub fn random_policy(tree: &GameTree, salt: u32) -> TabularPolicy {
    let mut k = 0u32;
    TabularPolicy::from_fn(tree, |id| {
        let w: Vec<f64> = tree
            .legal_actions(id)
            .iter()
            .map(|_| {
                k += 1;
                0.02 + uniform_f64(philox4x32_10([k, salt, 0, 0], [17, 4])[0])
            })
            .collect();
        let s: f64 = w.iter().sum();
        w.iter().map(|x| x / s).collect()
    })
    .unwrap()
}
