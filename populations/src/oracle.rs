//! `Oracle`: produces a new policy for a player against a (aggregated) opponent profile.

use metagame_games::{GameTree, TabularPolicy, best_response};

use crate::error::Result;

/// Something that trains or computes a response for one player.
///
/// Dyn-compatible so that configs choose it at run time.
pub trait Oracle: Send + Sync {
    /// Short stable name used in configs and provenance ("exact-br").
    fn name(&self) -> &'static str;

    /// A new policy for `player` against the others in `profile` (player `q` plays
    /// `profile[q]`; `profile[player]` is ignored).
    ///
    /// # Errors
    ///
    /// A profile of the wrong shape, or a failure of the training method.
    fn respond(&self, tree: &GameTree, player: usize, profile: &[&TabularPolicy]) -> Result<TabularPolicy>;
}

/// The exact best response on the game tree (ties towards the lowest action).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExactBestResponse;

impl Oracle for ExactBestResponse {
    fn name(&self) -> &'static str {
        "exact-br"
    }

    fn respond(&self, tree: &GameTree, player: usize, profile: &[&TabularPolicy]) -> Result<TabularPolicy> {
        Ok(best_response(tree, player, profile)?.0)
    }
}
