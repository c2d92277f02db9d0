//! `ExternalGame`: a game whose rules live outside this crate (an OpenSpiel game played
//! through pyspiel, a PettingZoo environment), played on its states like a built-in game,
//! without enumerating it.
//!
//! The rules and states are trait objects an embedder implements. Their calls cannot fail
//! by the [`State`] contract, yet foreign code can: a state whose call failed records why in
//! the game's failure slot and becomes terminal with zero returns, and whoever played it
//! asks [`ExternalGame::take_failure`] after the call and reports that instead of the
//! results.

use std::sync::{Arc, Mutex};

use crate::game::{ActionId, Game, PlayerId, State, TensorShape, Turn};

/// The rules of an external game.
pub trait ExternalRules: Send + Sync {
    /// The game's name (a pyspiel game string, a PettingZoo environment's name).
    fn name(&self) -> String;
    /// Number of players.
    fn num_players(&self) -> usize;
    /// Number of distinct actions (the width of an action mask).
    fn num_distinct_actions(&self) -> usize;
    /// The initial state; `failure` is where its calls record why they failed.
    fn new_initial_state(&self, failure: &Failure) -> Box<dyn ExternalState>;
    /// The sum of the players' returns when it is constant.
    fn utility_sum(&self) -> Option<f64>;
    /// The smallest and largest utility, where the game states them.
    fn utility_range(&self) -> Option<(f64, f64)> {
        None
    }
    /// The shape of the tensor a policy reads, if any.
    fn tensor_shape(&self) -> Option<TensorShape>;
}

/// A state of an external game: [`State`]'s calls, on a box.
pub trait ExternalState: Send + Sync {
    /// Who moves next.
    fn turn(&self) -> Turn;
    /// Legal actions of the player to move, ascending.
    fn legal_actions(&self) -> Vec<ActionId>;
    /// Chance outcomes with their probabilities.
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)>;
    /// Apply an action or chance outcome.
    fn apply_action(&mut self, action: ActionId);
    /// Utilities at a terminal.
    fn returns(&self) -> Vec<f64>;
    /// The information-state string for `player` (what the state can give).
    fn information_state_string(&self, player: PlayerId) -> String;
    /// The actions and outcomes applied so far.
    fn history(&self) -> &[ActionId];
    /// `player`'s tensor, flattened.
    fn write_tensor(&self, player: PlayerId, out: &mut [f32]);
    /// A copy of the state.
    fn boxed_clone(&self) -> Box<dyn ExternalState>;
}

/// Where the states of one external game record the first failure of their calls.
#[derive(Clone, Default)]
pub struct Failure(Arc<Mutex<Option<String>>>);

impl Failure {
    /// Record `why`, unless a failure is already recorded (the first one says the most).
    pub fn record(&self, why: String) {
        let mut slot = self.0.lock().unwrap_or_else(|p| p.into_inner());
        if slot.is_none() {
            *slot = Some(why);
        }
    }
    /// True once a failure is recorded.
    pub fn failed(&self) -> bool {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).is_some()
    }
    /// The recorded failure, cleared.
    pub fn take(&self) -> Option<String> {
        self.0.lock().unwrap_or_else(|p| p.into_inner()).take()
    }
}

/// A game played through an embedder's [`ExternalRules`].
#[derive(Clone)]
pub struct ExternalGame {
    rules: Arc<dyn ExternalRules>,
    failure: Failure,
}

impl std::fmt::Debug for ExternalGame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalGame").field("name", &self.rules.name()).finish()
    }
}

impl ExternalGame {
    /// A game on `rules`.
    pub fn new(rules: Arc<dyn ExternalRules>) -> Self {
        Self { rules, failure: Failure::default() }
    }

    /// Why a call of one of this game's states failed since the last time asked, if one
    /// did: the results of the play that met it are not to be used.
    pub fn take_failure(&self) -> Option<String> {
        self.failure.take()
    }
}

/// A state of an [`ExternalGame`].
pub struct ExternalGameState(Box<dyn ExternalState>);

impl Clone for ExternalGameState {
    fn clone(&self) -> Self {
        Self(self.0.boxed_clone())
    }
}

impl std::fmt::Debug for ExternalGameState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ExternalGameState").field("history", &self.0.history()).finish()
    }
}

impl Game for ExternalGame {
    type State = ExternalGameState;
    fn name(&self) -> String {
        self.rules.name()
    }
    fn num_players(&self) -> usize {
        self.rules.num_players()
    }
    fn num_distinct_actions(&self) -> usize {
        self.rules.num_distinct_actions()
    }
    fn new_initial_state(&self) -> ExternalGameState {
        ExternalGameState(self.rules.new_initial_state(&self.failure))
    }
    fn utility_sum(&self) -> Option<f64> {
        self.rules.utility_sum()
    }
    fn utility_range(&self) -> Option<(f64, f64)> {
        self.rules.utility_range()
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        self.rules.tensor_shape()
    }
}

impl State for ExternalGameState {
    fn turn(&self) -> Turn {
        self.0.turn()
    }
    fn legal_actions(&self) -> Vec<ActionId> {
        self.0.legal_actions()
    }
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        self.0.chance_outcomes()
    }
    fn apply_action(&mut self, action: ActionId) {
        self.0.apply_action(action);
    }
    fn returns(&self) -> Vec<f64> {
        self.0.returns()
    }
    fn information_state_string(&self, player: PlayerId) -> String {
        self.0.information_state_string(player)
    }
    fn history(&self) -> &[ActionId] {
        self.0.history()
    }
    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        self.0.write_tensor(player, out);
    }
}
