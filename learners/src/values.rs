//! `ValueTable`: a learner's action-value estimates per information state and action.

use metagame_games::{ActionId, GameTree, InfosetId};
use serde::{Deserialize, Serialize};

use crate::episodes::Layout;
use crate::error::{Error, Result};

/// Action-value estimates `Q(s, a)` of one seat with their visit counts, dense over
/// `[infosets × actions]` of one game (other seats' rows and illegal actions hold 0 with no
/// visits). An estimate never updated holds its initial value (0 unless warm started) and
/// 0 visits.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ValueTable {
    game: String,
    seat: usize,
    num_actions: usize,
    values: Vec<f64>,
    visits: Vec<u64>,
}

impl ValueTable {
    /// Build from per-sequence values and visits (the learners' internal layout).
    pub(crate) fn from_sequences(layout: &Layout, seat: usize, q: &[f64], visits: &[u64]) -> Self {
        let na = layout.num_actions;
        let mut values = vec![0.0; layout.num_infosets * na];
        let mut counts = vec![0; layout.num_infosets * na];
        for (i, start, legal) in &layout.infosets {
            for (k, &a) in legal.iter().enumerate() {
                values[i * na + a as usize] = q[*start as usize + k];
                counts[i * na + a as usize] = visits[*start as usize + k];
            }
        }
        Self { game: layout.game.clone(), seat, num_actions: na, values, visits: counts }
    }

    /// The game string of the game it was learned on.
    pub fn game(&self) -> &str {
        &self.game
    }
    /// The seat whose values these are.
    pub fn seat(&self) -> usize {
        self.seat
    }
    /// `Q(infoset, action)`.
    ///
    /// # Panics
    ///
    /// If the infoset or action is out of range of the table.
    #[track_caller]
    pub fn value(&self, infoset: InfosetId, action: ActionId) -> f64 {
        assert!(action.0 < self.num_actions, "action {} out of range", action.0);
        self.values[infoset.0 * self.num_actions + action.0]
    }
    /// How many updates `Q(infoset, action)` received.
    ///
    /// # Panics
    ///
    /// If the infoset or action is out of range of the table.
    #[track_caller]
    pub fn visits(&self, infoset: InfosetId, action: ActionId) -> u64 {
        assert!(action.0 < self.num_actions, "action {} out of range", action.0);
        self.visits[infoset.0 * self.num_actions + action.0]
    }
    /// The dense table, `[infoset * num_actions + action]`.
    pub fn as_slice(&self) -> &[f64] {
        &self.values
    }

    /// Check that the table was made for `tree` and holds finite values.
    ///
    /// # Errors
    ///
    /// [`Error::Values`] naming what does not fit.
    pub fn check(&self, tree: &GameTree) -> Result<()> {
        if self.game != tree.name()
            || self.num_actions != tree.num_actions()
            || self.values.len() != tree.num_infosets() * tree.num_actions()
            || self.visits.len() != self.values.len()
        {
            return Err(Error::Values(format!(
                "values learned on `{}` ({} entries) used on `{}` ({} infosets × {} actions)",
                self.game,
                self.values.len(),
                tree.name(),
                tree.num_infosets(),
                tree.num_actions()
            )));
        }
        if self.seat >= tree.num_players() {
            return Err(Error::Values(format!("seat {} is not a seat of {}", self.seat, tree.name())));
        }
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(Error::Values(format!("entry {i} is not finite ({})", self.values[i])));
        }
        Ok(())
    }

    /// `max_a Q(infoset, a)` over the legal actions.
    pub fn max_value(&self, tree: &GameTree, infoset: InfosetId) -> f64 {
        let row = &self.values[infoset.0 * self.num_actions..(infoset.0 + 1) * self.num_actions];
        tree.legal_actions(infoset).iter().map(|a| row[a.0]).fold(f64::NEG_INFINITY, f64::max)
    }
}
