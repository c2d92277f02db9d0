//! `ValueTable`: a learner's action-value estimates per information state and action.

use metagame_games::{ActionId, GameTree, InfosetId, NodeKind, PlayerId, TabularPolicy, reach_probabilities};
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
    /// A learner of action values (DQN's Q-network): `value(infoset, action)` at every legal
    /// action of an information state of `seat`, with one visit.
    pub(crate) fn from_action_values(
        tree: &GameTree,
        seat: usize,
        value: impl Fn(InfosetId, usize) -> f64,
    ) -> Self {
        let na = tree.num_actions();
        let mut values = vec![0.0; tree.num_infosets() * na];
        let mut visits = vec![0; tree.num_infosets() * na];
        for i in tree.infosets_of(PlayerId(seat)) {
            for a in tree.legal_actions(InfosetId(i)) {
                values[i * na + a.0] = value(InfosetId(i), a.0);
                visits[i * na + a.0] = 1;
            }
        }
        Self { game: tree.name().to_string(), seat, num_actions: na, values, visits }
    }

    /// A learner of state values (PPO's critic) as action values: every legal action of an
    /// information state of `seat` carries the state's value `value(infoset)`, with one visit.
    pub(crate) fn from_state_values(tree: &GameTree, seat: usize, value: impl Fn(InfosetId) -> f64) -> Self {
        let na = tree.num_actions();
        let mut values = vec![0.0; tree.num_infosets() * na];
        let mut visits = vec![0; tree.num_infosets() * na];
        for i in tree.infosets_of(PlayerId(seat)) {
            let v = value(InfosetId(i));
            for a in tree.legal_actions(InfosetId(i)) {
                values[i * na + a.0] = v;
                visits[i * na + a.0] = 1;
            }
        }
        Self { game: tree.name().to_string(), seat, num_actions: na, values, visits }
    }

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

    /// The exact action values of `seat` when every seat plays `profile`: `Q(s, a)` is the
    /// expected return of taking `a` at information state `s` and following the profile
    /// afterwards, the histories of `s` weighted by their reach under the others' policies
    /// and chance (a perfectly trained critic's estimate). Information states the others
    /// never lead to weigh their histories by their reach under uniform play. Visit counts are 1 for every legal
    /// action of the seat.
    ///
    /// # Errors
    ///
    /// [`Error::Game`] for a profile that does not fit the tree; [`Error::Seat`] for a seat
    /// the game lacks.
    ///
    /// # Complexity
    ///
    /// O(nodes).
    pub fn exact(tree: &GameTree, seat: usize, profile: &[&TabularPolicy]) -> Result<Self> {
        let n = tree.num_players();
        if seat >= n {
            return Err(Error::Seat { seat, num_players: n });
        }
        let reach = reach_probabilities(tree, profile, Some(PlayerId(seat)))?;
        let uniform = TabularPolicy::uniform(tree);
        // Fallback weights for states the others never lead to: the reach when every seat
        // plays uniformly (positive on every history).
        let uniform_reach = reach_probabilities(tree, &vec![&uniform; n], None)?;
        // Node values for `seat`, children after parents in the arena.
        let mut value = vec![0.0; tree.num_nodes()];
        for node in (0..tree.num_nodes()).rev() {
            value[node] = match tree.node_kind(node) {
                NodeKind::Terminal => tree.terminal_utilities(node)[seat],
                NodeKind::Chance => tree.children(node).map(|c| tree.chance_prob(c) * value[c]).sum(),
                NodeKind::Decision => {
                    let player = tree.node_player(node);
                    let row = profile[player].row(tree.node_infoset(node));
                    tree.children(node).map(|c| row[tree.node_action(c).0] * value[c]).sum()
                }
            };
        }
        let na = tree.num_actions();
        let mut sums = vec![0.0; tree.num_infosets() * na];
        let mut weights = vec![0.0; tree.num_infosets()];
        let mut fallback_sums = vec![0.0; tree.num_infosets() * na];
        let mut fallback_weights = vec![0.0; tree.num_infosets()];
        for node in 0..tree.num_nodes() {
            if tree.node_kind(node) != NodeKind::Decision || tree.node_player(node) != seat {
                continue;
            }
            let i = tree.node_infoset(node).0;
            weights[i] += reach[node];
            fallback_weights[i] += uniform_reach[node];
            for c in tree.children(node) {
                let a = tree.node_action(c).0;
                sums[i * na + a] += reach[node] * value[c];
                fallback_sums[i * na + a] += uniform_reach[node] * value[c];
            }
        }
        let mut values = vec![0.0; tree.num_infosets() * na];
        let mut visits = vec![0; tree.num_infosets() * na];
        for i in tree.infosets_of(PlayerId(seat)) {
            let (sum, w) =
                if weights[i] > 0.0 { (&sums, weights[i]) } else { (&fallback_sums, fallback_weights[i]) };
            for a in tree.legal_actions(InfosetId(i)) {
                values[i * na + a.0] = if w > 0.0 { sum[i * na + a.0] / w } else { 0.0 };
                visits[i * na + a.0] = 1;
            }
        }
        Ok(Self { game: tree.name().to_string(), seat, num_actions: na, values, visits })
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
