//! `Oracle`: produces a new policy for a player against a (aggregated) opponent profile.

use metagame_games::{GameTree, TabularPolicy, TieBreak, best_response_with};

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

/// The exact best response on the game tree; `tie_break` chooses among equally good
/// actions (default: the lowest action, as OpenSpiel).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExactBestResponse {
    /// How ties (and information sets the opponents never reach) are decided.
    pub tie_break: TieBreak,
}

impl ExactBestResponse {
    /// Ties broken against trembling opponents (see [`TieBreak::Trembling`]).
    pub fn trembling(tremble: f64) -> Self {
        Self { tie_break: TieBreak::Trembling(tremble) }
    }
}

impl Oracle for ExactBestResponse {
    fn name(&self) -> &'static str {
        match self.tie_break {
            TieBreak::LowestAction => "exact-br",
            TieBreak::Trembling(_) => "exact-br-trembling",
        }
    }

    fn respond(&self, tree: &GameTree, player: usize, profile: &[&TabularPolicy]) -> Result<TabularPolicy> {
        Ok(best_response_with(tree, player, profile, self.tie_break)?.0)
    }
}
