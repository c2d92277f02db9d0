//! What a learner gives the list of learners: its settings as a [`LearnerConfig`] (built
//! into a [`SeatLearner`]), the list's needs of the settings type ([`Registrable`]), and a
//! learner saved with its name ([`SavedLearner`]).

use std::fmt;

use metagame_games::{Arena, GameTree};
use metagame_networks::Mlp;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::learner::{ShapedLearner, Start};
use crate::network_learner::NetworkLearner;
use crate::saved_learner::SavedLearner;
use crate::shaping::MinimaxConfig;

/// A learner a league keeps from round to round: it trains, takes reward shaping, copies
/// itself and saves itself with its kind's name.
pub trait SeatLearner: ShapedLearner + Sync + fmt::Debug {
    /// A copy.
    fn clone_box(&self) -> Box<dyn SeatLearner>;
    /// Everything training has changed, tagged with the learner's registered name.
    fn save(&self) -> SavedLearner;
}

impl Clone for Box<dyn SeatLearner> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

/// A learner's settings, whichever learner: what configs, oracles and leagues ask of them.
///
/// Dyn-compatible, so that a config chooses the learner at run time.
pub trait LearnerConfig: Send + Sync + fmt::Debug {
    /// The learner's registered name ("q-learning").
    fn name(&self) -> &'static str;
    /// Check every field's range.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the first field out of range.
    fn validate(&self) -> Result<()>;
    /// The fields as a JSON object (a `[learner]` table without `kind`), defaults written out
    /// and no null fields (an absent field is `None`).
    fn to_value(&self) -> Value;
    /// Episodes per trained response when a request sets no budget.
    fn episodes_per_response(&self) -> u64;
    /// Whether a trained response starts from the request's warm-start policy.
    fn warm_start(&self) -> bool;
    /// Episodes per batch (a league's default match length is two batches).
    fn batch_size(&self) -> usize;
    /// The Minimax Exploiter's shaping, for a learner whose rewards are shaped by a main
    /// agent's values (it then needs them to train); `None` for a plain learner.
    fn shaping(&self) -> Option<&MinimaxConfig> {
        None
    }
    /// [`shaping`](LearnerConfig::shaping), to change.
    fn shaping_mut(&mut self) -> Option<&mut MinimaxConfig> {
        None
    }
    /// A fresh learner for `seat` of `tree` with these settings, episodes keyed by `seed`,
    /// without reward shaping (who has the main agent's values sets it).
    ///
    /// # Errors
    ///
    /// Settings out of range; [`Error::Seat`]; a start policy of another game.
    fn build(
        &self,
        tree: &GameTree,
        seat: usize,
        seed: u64,
        start: Start<'_>,
    ) -> Result<Box<dyn SeatLearner>>;
    /// Whether [`build_network`](LearnerConfig::build_network) builds one (the network
    /// learners); false for the tabular learners.
    fn trains_networks(&self) -> bool {
        false
    }
    /// For a learner that trains a network on any game ([`NetworkLearner`]): a fresh one for
    /// `seat` of the arena's game, episodes keyed by `seed`, starting from `warm` where its
    /// sizes fit (the caller decides whether to warm start: a trained response by
    /// [`warm_start`](LearnerConfig::warm_start), a league's reset by its own rule). `None` for the tabular learners, which play a
    /// tree ([`LearnerConfig::build`]).
    fn build_network(
        &self,
        arena: Arena<'_>,
        seat: usize,
        seed: u64,
        warm: Option<&Mlp>,
    ) -> Option<Result<Box<dyn NetworkLearner>>> {
        let _ = (arena, seat, seed, warm);
        None
    }
    /// A copy.
    fn clone_box(&self) -> Box<dyn LearnerConfig>;
}

/// What the list needs of a learner's settings type beyond [`LearnerConfig`].
pub trait Registrable: LearnerConfig + Default + Sized + 'static {
    /// The name configs spell.
    const NAME: &'static str;
    /// One line on what it is.
    const ABOUT: &'static str;
    /// A learner saved by [`SeatLearner::save`] (its `state`), on `tree`.
    ///
    /// # Errors
    ///
    /// A state that does not parse or does not fit the tree.
    fn restore(tree: &GameTree, state: Value) -> Result<Box<dyn SeatLearner>>;
    /// A network learner saved by [`NetworkLearner::save`] (its `state`), on any game: `None`
    /// (the default) for the tabular learners, which need a tree.
    ///
    /// # Errors
    ///
    /// A state that does not parse, or weights that do not make a network.
    fn restore_network(state: Value) -> Option<Result<Box<dyn NetworkLearner>>> {
        let _ = state;
        None
    }
    /// The settings from their fields (a `[learner]` table without `kind`), not yet
    /// validated ([`from_fields`] reads the type's serde form).
    ///
    /// # Errors
    ///
    /// A message naming the field: unknown fields, wrong types.
    fn parse(fields: Value) -> std::result::Result<Self, String>;
}

/// `fields` read as `T` by serde, messages prefixed with `prefix` ("learner").
///
/// # Errors
///
/// The serde message: unknown fields, wrong types.
pub fn from_fields<T: DeserializeOwned>(fields: Value, prefix: &str) -> std::result::Result<T, String> {
    serde_json::from_value(fields).map_err(|e| format!("{prefix}: {e}"))
}

/// `value` without its null fields, at any depth: settings as a table, where an absent field
/// is its default (`None`) and TOML has no null.
pub(crate) fn without_nulls(value: Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(
            map.into_iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k, without_nulls(v))).collect(),
        ),
        Value::Array(items) => Value::Array(items.into_iter().map(without_nulls).collect()),
        other => other,
    }
}

/// The TOML name of a value's type ("string", "table"), for messages about settings tables.
pub fn type_str(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "table",
    }
}

/// A saved learner's state read back as `T`.
pub(crate) fn state_of<T: DeserializeOwned>(name: &str, state: Value) -> Result<T> {
    serde_json::from_value(state).map_err(|e| Error::Values(format!("a saved {name} learner: {e}")))
}

/// [`LearnerConfig`]'s plain methods for a settings type with these fields.
macro_rules! plain_config {
    ($config:ty, $learner:ty) => {
        fn name(&self) -> &'static str {
            <$config as $crate::learner_config::Registrable>::NAME
        }
        fn validate(&self) -> $crate::Result<()> {
            <$config>::validate(self)
        }
        fn to_value(&self) -> serde_json::Value {
            // INVARIANT: settings are scalars and schedule tables.
            $crate::learner_config::without_nulls(
                serde_json::to_value(self).expect("learner settings serialise"),
            )
        }
        fn episodes_per_response(&self) -> u64 {
            self.episodes_per_response
        }
        fn warm_start(&self) -> bool {
            self.warm_start
        }
        fn batch_size(&self) -> usize {
            self.batch_size
        }
        fn build(
            &self,
            tree: &metagame_games::GameTree,
            seat: usize,
            seed: u64,
            start: $crate::learner::Start<'_>,
        ) -> $crate::Result<Box<dyn $crate::learner_config::SeatLearner>> {
            Ok(Box::new(<$learner>::new(tree, seat, seed, self.clone(), start)?))
        }
        fn clone_box(&self) -> Box<dyn $crate::learner_config::LearnerConfig> {
            Box::new(self.clone())
        }
    };
}
pub(crate) use plain_config;
