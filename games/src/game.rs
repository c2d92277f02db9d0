//! The `Game` and `State` traits: n-player, turn-based, with chance and imperfect information.
//!
//! The contracts are OpenSpiel's: legal actions are sorted ascending, unique and non-empty
//! unless the state is terminal; chance outcome probabilities sum to 1; information-state
//! strings are the same strings OpenSpiel prints for the same game, so tabular policies can
//! be exchanged with it. `games::testing::check_game` checks all of this.

use serde::{Deserialize, Serialize};

/// A player's index, `0..num_players`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PlayerId(pub usize);

/// An action's id within a game, `0..num_distinct_actions` (chance outcomes are ids too).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ActionId(pub usize);

/// Which of OpenSpiel's tensors a game's policies read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TensorKind {
    /// OpenSpiel's `information_state_tensor`: what the player knows, its own past included
    /// (games of imperfect information).
    InformationState,
    /// OpenSpiel's `observation_tensor`: the state as the player sees it now (games of
    /// perfect information, which give no information-state tensor in OpenSpiel).
    Observation,
}

/// The tensor a game's states give its policies: OpenSpiel's kind and shape, so that a
/// network trained on OpenSpiel's features reads the same numbers here.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TensorShape {
    /// Which tensor.
    pub kind: TensorKind,
    /// Its dimensions as OpenSpiel gives them (`[11]` for Kuhn, `[3, 6, 7]` for connect
    /// four); states write it flattened in row-major order.
    pub dims: Vec<usize>,
}

impl TensorShape {
    /// A tensor of `kind` with dimensions `dims`.
    pub fn new(kind: TensorKind, dims: Vec<usize>) -> Self {
        Self { kind, dims }
    }
    /// Number of values, the product of the dimensions.
    pub fn size(&self) -> usize {
        self.dims.iter().product()
    }
}

/// Who moves next.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Turn {
    /// A player decides.
    Player(PlayerId),
    /// Nature draws one of [`State::chance_outcomes`].
    Chance,
    /// The game is over; [`State::returns`] holds the utilities.
    Terminal,
}

/// A game: its rules and its initial state.
///
/// Generic (not dyn) because it is the hot path of tree building; tabular algorithms then
/// work on the flat [`crate::GameTree`] and never on states.
pub trait Game: Send + Sync {
    /// The state type of this game.
    type State: State;

    /// The OpenSpiel-style game string that loads this game (`kuhn_poker(players=3)`).
    fn name(&self) -> String;
    /// Number of players.
    fn num_players(&self) -> usize;
    /// Number of distinct player actions: the width of a tabular policy row.
    fn num_distinct_actions(&self) -> usize;
    /// The state before anything happens.
    fn new_initial_state(&self) -> Self::State;
    /// `Some(c)` when every terminal's utilities sum to `c` (zero-sum is `Some(0.0)`).
    fn utility_sum(&self) -> Option<f64>;
    /// The smallest and largest utility any player can get (OpenSpiel's `min_utility` and
    /// `max_utility`), where the game states them without building its tree; `None` (the
    /// default) otherwise ([`GameTree::utility_range`](crate::GameTree::utility_range) has
    /// them for a built tree).
    fn utility_range(&self) -> Option<(f64, f64)> {
        None
    }
    /// The number of histories (nodes of the game tree, chance and terminal nodes included)
    /// when the game can count them without building the tree; once the count passes
    /// `at_most`, any larger number. [`GameTree::build`](crate::GameTree::build) checks it
    /// against its node limit before allocating. `None` (the default): the build checks the
    /// size as the tree grows.
    fn count_histories(&self, at_most: u64) -> Option<u64> {
        let _ = at_most;
        None
    }
    /// The tensor its states give a policy ([`State::write_tensor`]), as OpenSpiel lays it
    /// out; `None` (the default) for a game that gives none, which networks then cannot
    /// play. Every registered game gives one (the conformance check holds it to that).
    fn tensor_shape(&self) -> Option<TensorShape> {
        None
    }
}

/// A game state. Cloning must be cheap enough to enumerate small games.
pub trait State: Clone + Send {
    /// Who moves next.
    fn turn(&self) -> Turn;
    /// Legal actions of the player to move, ascending; empty only at terminals and chance nodes.
    fn legal_actions(&self) -> Vec<ActionId>;
    /// Chance outcomes with their probabilities (summing to 1); empty unless `turn()` is `Chance`.
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)>;
    /// Apply a legal action or chance outcome.
    ///
    /// # Panics
    ///
    /// If `action` is not legal here (a caller bug).
    fn apply_action(&mut self, action: ActionId);
    /// Utilities at a terminal, one per player (zeros elsewhere).
    fn returns(&self) -> Vec<f64>;
    /// OpenSpiel's information-state string for `player`.
    fn information_state_string(&self, player: PlayerId) -> String;
    /// The actions and outcomes applied so far.
    fn history(&self) -> &[ActionId];
    /// Write `player`'s tensor, flattened row-major as [`Game::tensor_shape`] lays it out, into
    /// `out` (of exactly that size), overwriting every value. A game without a tensor shape
    /// is never asked; the default writes nothing.
    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let _ = (player, out);
    }

    /// [`State::legal_actions`] written into `out`, replacing its contents. A tree build asks
    /// every node and reuses one buffer; a game overrides it to skip the allocation.
    fn write_legal_actions(&self, out: &mut Vec<ActionId>) {
        *out = self.legal_actions();
    }
    /// [`State::chance_outcomes`] written into `out`, replacing its contents (as
    /// [`State::write_legal_actions`]).
    fn write_chance_outcomes(&self, out: &mut Vec<(ActionId, f64)>) {
        *out = self.chance_outcomes();
    }
    /// [`State::returns`] written into `out`, replacing its contents (as
    /// [`State::write_legal_actions`]).
    fn write_returns(&self, out: &mut Vec<f64>) {
        *out = self.returns();
    }
    /// [`State::information_state_string`] written into `out`, replacing its contents (as
    /// [`State::write_legal_actions`]).
    fn write_information_state_string(&self, player: PlayerId, out: &mut String) {
        *out = self.information_state_string(player);
    }

    /// Convenience: `turn() == Turn::Terminal`.
    fn is_terminal(&self) -> bool {
        self.turn() == Turn::Terminal
    }
}
