//! The one list of learners ([`LEARNERS`]) and what a learner's settings give it
//! ([`LearnerConfig`]): configs, oracles and leagues choose a learner by name from here.
//!
//! Adding a learner is its file (the learner, its settings, [`LearnerConfig`] and
//! [`Registrable`] for the settings, [`SeatLearner`] for the learner) and one line in
//! [`LEARNERS`].

use std::fmt;

use metagame_games::GameTree;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::actor_critic::{ActorCritic, ActorCriticConfig, ActorCriticState};
use crate::error::{Error, Result};
use crate::learner::{ShapedLearner, Start};
use crate::minimax_q::MinimaxQConfig;
use crate::q_learning::{QLearner, QLearnerState, QLearningConfig};
use crate::shaping::MinimaxConfig;

/// Every learner, in the order names are listed: one line each.
pub const LEARNERS: &[LearnerEntry] =
    &[entry::<QLearningConfig>(), entry::<ActorCriticConfig>(), entry::<MinimaxQConfig>()];

/// The learner configs and the league choose when none is named.
pub const DEFAULT_LEARNER: &str = "q-learning";

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

/// One registered learner.
#[derive(Clone, Copy)]
pub struct LearnerEntry {
    /// The name configs spell.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
    defaults: fn() -> Box<dyn LearnerConfig>,
    parse: fn(Value) -> std::result::Result<Box<dyn LearnerConfig>, String>,
    restore: fn(&GameTree, Value) -> Result<Box<dyn SeatLearner>>,
}

impl fmt::Debug for LearnerEntry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LearnerEntry").field("name", &self.name).finish_non_exhaustive()
    }
}

/// The entry of the learner whose settings are `C`.
pub const fn entry<C: Registrable>() -> LearnerEntry {
    LearnerEntry {
        name: C::NAME,
        about: C::ABOUT,
        defaults: || Box::new(C::default()),
        parse: |fields| C::parse(fields).map(|c| Box::new(c) as Box<dyn LearnerConfig>),
        restore: C::restore,
    }
}

/// The entry called `name`.
///
/// # Errors
///
/// [`Error::UnknownLearner`] listing the names.
pub fn learner_entry(name: &str) -> Result<&'static LearnerEntry> {
    LEARNERS.iter().find(|e| e.name == name).ok_or_else(|| Error::UnknownLearner {
        name: name.to_string(),
        known: LEARNERS.iter().map(|e| e.name).collect::<Vec<_>>().join(", "),
    })
}

/// A learner restored from its saved state, whichever kind saved it.
///
/// # Errors
///
/// [`Error::UnknownLearner`] for a kind no learner is registered as; the kind's errors for a
/// state that does not fit `tree`.
pub fn restore(tree: &GameTree, saved: &SavedLearner) -> Result<Box<dyn SeatLearner>> {
    (learner_entry(&saved.kind)?.restore)(tree, saved.state.clone())
}

/// A learner as data: its registered name and its state ([`SeatLearner::save`]).
///
/// Reads, too, a bare Q-learner's state (what leagues saved before learners were tagged) as
/// a `q-learning` learner.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SavedLearner {
    /// The learner's registered name.
    pub kind: String,
    /// Its state, as the kind saves it.
    pub state: Value,
}

impl SavedLearner {
    /// `state` tagged as a learner of kind `kind`.
    ///
    /// # Panics
    ///
    /// If `state` does not serialise to JSON (the learners' states are numbers and strings).
    #[track_caller]
    pub fn new(kind: &str, state: &impl Serialize) -> Self {
        // INVARIANT: learners' states are plain numbers, strings and vectors of them.
        let state = serde_json::to_value(state).expect("a learner's state serialises");
        Self { kind: kind.to_string(), state }
    }
}

impl<'de> Deserialize<'de> for SavedLearner {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        match value {
            Value::Object(mut map)
                if map.len() == 2 && map.contains_key("kind") && map.contains_key("state") =>
            {
                let kind = match map.remove("kind") {
                    Some(Value::String(kind)) => kind,
                    _ => return Err(serde::de::Error::custom("a saved learner's `kind` is not a string")),
                };
                Ok(SavedLearner { kind, state: map.remove("state").unwrap_or(Value::Null) })
            }
            // Untagged: a Q-learner saved before learners were tagged.
            state @ Value::Object(_) => Ok(SavedLearner { kind: DEFAULT_LEARNER.into(), state }),
            other => Err(serde::de::Error::custom(format!("a saved learner is an object, not {other}"))),
        }
    }
}

/// A learner's settings, whichever learner was chosen: in a config, the `[learner]` table
/// with `kind = "NAME"` (default `q-learning`) and the learner's own fields.
///
/// Serialised as that table; `kind` is left out for `q-learning`, so configs written before
/// learners had kinds read and write as they did.
#[derive(Debug)]
pub struct LearnerChoice(Box<dyn LearnerConfig>);

impl LearnerChoice {
    /// The settings `config`.
    pub fn new(config: impl LearnerConfig + 'static) -> Self {
        Self(Box::new(config))
    }

    /// The default settings of the learner called `name`.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownLearner`] listing the names.
    pub fn defaults(name: &str) -> Result<Self> {
        Ok(Self((learner_entry(name)?.defaults)()))
    }

    /// The settings of the learner called `name` from its fields (an object), checked.
    ///
    /// # Errors
    ///
    /// [`Error::UnknownLearner`]; [`Error::Fields`] naming a field that does not read
    /// (unknown, wrong type); [`Error::Config`] naming a value out of range.
    pub fn parse(name: &str, fields: Value) -> Result<Self> {
        let config = (learner_entry(name)?.parse)(fields).map_err(Error::Fields)?;
        config.validate()?;
        Ok(Self(config))
    }

    /// The settings.
    pub fn config(&self) -> &dyn LearnerConfig {
        &*self.0
    }

    /// The settings, to change (check them with [`LearnerConfig::validate`] after).
    pub fn config_mut(&mut self) -> &mut dyn LearnerConfig {
        &mut *self.0
    }

    /// The learner's name.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }
}

impl Default for LearnerChoice {
    /// Q-learning's defaults.
    fn default() -> Self {
        Self::new(QLearningConfig::default())
    }
}

impl Clone for LearnerChoice {
    fn clone(&self) -> Self {
        Self(self.0.clone_box())
    }
}

impl PartialEq for LearnerChoice {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name() && self.0.to_value() == other.0.to_value()
    }
}

impl Serialize for LearnerChoice {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut map = Map::new();
        if self.name() != DEFAULT_LEARNER {
            map.insert("kind".into(), Value::String(self.name().into()));
        }
        if let Value::Object(fields) = self.0.to_value() {
            map.extend(fields);
        }
        map.serialize(s)
    }
}

impl<'de> Deserialize<'de> for LearnerChoice {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let mut fields = Map::deserialize(d)?;
        let kind = match fields.remove("kind") {
            None => DEFAULT_LEARNER.to_string(),
            Some(Value::String(kind)) => kind,
            Some(other) => {
                return Err(serde::de::Error::custom(format!(
                    "kind: expected a string, got {}",
                    type_str(&other)
                )));
            }
        };
        LearnerChoice::parse(&kind, Value::Object(fields)).map_err(serde::de::Error::custom)
    }
}

/// [`LearnerConfig`]'s plain methods for a settings type with these fields.
macro_rules! plain_config {
    ($config:ty, $learner:ty) => {
        fn name(&self) -> &'static str {
            <$config as $crate::registry::Registrable>::NAME
        }
        fn validate(&self) -> $crate::Result<()> {
            <$config>::validate(self)
        }
        fn to_value(&self) -> serde_json::Value {
            // INVARIANT: settings are scalars and schedule tables.
            $crate::registry::without_nulls(serde_json::to_value(self).expect("learner settings serialise"))
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
            tree: &GameTree,
            seat: usize,
            seed: u64,
            start: Start<'_>,
        ) -> $crate::Result<Box<dyn SeatLearner>> {
            Ok(Box::new(<$learner>::new(tree, seat, seed, self.clone(), start)?))
        }
        fn clone_box(&self) -> Box<dyn LearnerConfig> {
            Box::new(self.clone())
        }
    };
}

impl LearnerConfig for QLearningConfig {
    plain_config!(QLearningConfig, QLearner);
}

impl Registrable for QLearningConfig {
    const NAME: &'static str = "q-learning";
    const ABOUT: &'static str = "tabular Q-learning over information states (epsilon-greedy)";
    fn restore(tree: &GameTree, state: Value) -> Result<Box<dyn SeatLearner>> {
        Ok(Box::new(QLearner::restore(tree, state_of::<QLearnerState>(Self::NAME, state)?)?))
    }
    fn parse(fields: Value) -> std::result::Result<Self, String> {
        from_fields(fields, "learner")
    }
}

impl SeatLearner for QLearner {
    fn clone_box(&self) -> Box<dyn SeatLearner> {
        Box::new(self.clone())
    }
    fn save(&self) -> SavedLearner {
        SavedLearner::new(QLearningConfig::NAME, &QLearner::save(self))
    }
}

impl LearnerConfig for ActorCriticConfig {
    plain_config!(ActorCriticConfig, ActorCritic);
}

impl Registrable for ActorCriticConfig {
    const NAME: &'static str = "actor-critic";
    const ABOUT: &'static str = "tabular actor-critic: a softmax policy trained against a learned critic";
    fn restore(tree: &GameTree, state: Value) -> Result<Box<dyn SeatLearner>> {
        Ok(Box::new(ActorCritic::restore(tree, state_of::<ActorCriticState>(Self::NAME, state)?)?))
    }
    fn parse(fields: Value) -> std::result::Result<Self, String> {
        from_fields(fields, "learner")
    }
}

impl SeatLearner for ActorCritic {
    fn clone_box(&self) -> Box<dyn SeatLearner> {
        Box::new(self.clone())
    }
    fn save(&self) -> SavedLearner {
        SavedLearner::new(ActorCriticConfig::NAME, &ActorCritic::save(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every registered learner's settings survive the table form, kind included.
    #[test]
    fn every_learner_round_trips_its_settings() {
        for e in LEARNERS {
            let choice = LearnerChoice::defaults(e.name).unwrap();
            assert_eq!(choice.name(), e.name);
            let text = serde_json::to_string(&choice).unwrap();
            let back: LearnerChoice = serde_json::from_str(&text).unwrap();
            assert_eq!(back, choice, "{}: {text}", e.name);
            assert_eq!(back.config().to_value(), choice.config().to_value());
            assert!(!text.contains("null"), "{}: a table has no nulls: {text}", e.name);
        }
        let mut shaped = LearnerChoice::defaults("minimax-q").unwrap();
        shaped.config_mut().shaping_mut().unwrap().main_seat = Some(1);
        let back: LearnerChoice = serde_json::from_str(&serde_json::to_string(&shaped).unwrap()).unwrap();
        assert_eq!(back.config().shaping().unwrap().main_seat, Some(1));
    }

    /// Every registered learner saved (through JSON) and restored trains on exactly as the
    /// one that was not saved, and says its kind.
    #[test]
    fn every_learner_saves_and_restores_to_the_same_training() {
        use metagame_games::{TabularPolicy, registry};

        use crate::episodes::OpponentSampler;
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let sampler = OpponentSampler::fixed(&uniform);
        for e in LEARNERS {
            let choice = LearnerChoice::defaults(e.name).unwrap();
            let mut learner = choice.config().build(&tree, 1, 3, Start::Fresh).unwrap();
            learner.train(&tree, &sampler, 2048).unwrap();
            let saved = learner.save();
            let text = serde_json::to_string(&saved).unwrap();
            let back: SavedLearner = serde_json::from_str(&text).unwrap();
            assert_eq!(back, saved);
            let mut restored = restore(&tree, &back).unwrap();
            assert_eq!(restored.policy(), learner.policy(), "{}", e.name);
            learner.train(&tree, &sampler, 2048).unwrap();
            restored.train(&tree, &sampler, 2048).unwrap();
            assert_eq!(restored.values(), learner.values(), "{}", e.name);
            assert_eq!(restored.policy(), learner.policy(), "{}", e.name);
            assert_eq!(restored.stats(), learner.stats(), "{}", e.name);
            let other = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
            assert!(restore(&other, &saved).is_err(), "{}: a state of another game", e.name);
        }
        let unknown = SavedLearner { kind: "sarsa".into(), state: Value::Null };
        assert!(matches!(restore(&tree, &unknown), Err(Error::UnknownLearner { .. })));
    }

    #[test]
    fn an_unknown_kind_is_one_line_listing_the_learners() {
        let err = serde_json::from_str::<LearnerChoice>(r#"{"kind": "sarsa"}"#).unwrap_err().to_string();
        assert!(
            err.contains("unknown learner `sarsa`; learners: q-learning, actor-critic, minimax-q"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");
        let typo = serde_json::from_str::<LearnerChoice>(r#"{"kind": "actor-critic", "epsilom": 0.1}"#)
            .unwrap_err()
            .to_string();
        assert!(typo.contains("epsilom"), "{typo}");
    }

    #[test]
    fn an_untagged_saved_learner_is_a_q_learner() {
        let saved: SavedLearner = serde_json::from_str(r#"{"game": "kuhn_poker", "seat": 0}"#).unwrap();
        assert_eq!(saved.kind, "q-learning");
        let tagged: SavedLearner = serde_json::from_str(r#"{"kind": "actor-critic", "state": {}}"#).unwrap();
        assert_eq!(tagged.kind, "actor-critic");
        assert!(serde_json::from_str::<SavedLearner>("[1]").is_err());
    }
}
