//! The one list of learners ([`LEARNERS`]), and a learner chosen from it by name
//! ([`LearnerChoice`]): configs, oracles and leagues choose a learner here.
//!
//! Adding a learner is its file (the learner, its settings with
//! [`LearnerConfig`](crate::LearnerConfig) and [`Registrable`], the learner as a
//! [`SeatLearner`] that saves and restores itself) and one line in [`LEARNERS`].

use std::fmt;

use metagame_games::GameTree;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::actor_critic::ActorCriticConfig;
use crate::dqn::DqnConfig;
use crate::error::{Error, Result};
use crate::learner_config::{LearnerConfig, Registrable, SeatLearner, type_str};
use crate::minimax_q::MinimaxQConfig;
use crate::network_learner::NetworkLearner;
use crate::ppo::PpoConfig;
use crate::q_learning::QLearningConfig;
use crate::saved_learner::{DEFAULT_LEARNER, SavedLearner};

/// Every learner, in the order names are listed: one line each.
pub const LEARNERS: &[LearnerEntry] = &[
    entry::<QLearningConfig>(),
    entry::<ActorCriticConfig>(),
    entry::<MinimaxQConfig>(),
    entry::<PpoConfig>(),
    entry::<DqnConfig>(),
];

/// How a registered learner restores its saved state as a network learner (`None`: a tabular one).
type RestoreNetwork = fn(Value) -> Option<Result<Box<dyn NetworkLearner>>>;

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
    restore_network: RestoreNetwork,
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
        restore_network: C::restore_network,
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

/// A network learner restored from its saved state on any game (no tree), whichever kind
/// saved it.
///
/// # Errors
///
/// [`Error::UnknownLearner`] for a kind no learner is registered as; [`Error::Config`] for a
/// tabular kind (it needs the game's tree); the kind's errors for a state it cannot read.
pub fn restore_network(saved: &SavedLearner) -> Result<Box<dyn NetworkLearner>> {
    (learner_entry(&saved.kind)?.restore_network)(saved.state.clone()).unwrap_or_else(|| {
        Err(Error::Config(format!("a {} learner is a table over the game's tree, not a network", saved.kind)))
    })
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::learner::Start;

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
            err.contains("unknown learner `sarsa`; learners: q-learning, actor-critic, minimax-q, ppo, dqn"),
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
