//! `minimax-q`: Q-learning whose reward is shaped by a main agent's values (the Minimax
//! Exploiter's), as a registered learner.

use metagame_games::GameTree;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::Result;
use crate::learner::Start;
use crate::learner_config::{LearnerConfig, Registrable, SeatLearner, from_fields, type_str, without_nulls};
use crate::q_learning::QLearningConfig;
use crate::shaping::MinimaxConfig;

/// Settings of Minimax-shaped Q-learning: the Q-learner's and the shaping's. As a
/// `[learner]` table: Q-learning's fields and a `[learner.shaping]` table of
/// [`MinimaxConfig`]'s.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct MinimaxQConfig {
    /// The Q-learner (its `episodes_per_response` and `warm_start` apply).
    pub learner: QLearningConfig,
    /// α, γ and the main agent's seat.
    pub shaping: MinimaxConfig,
}

impl MinimaxQConfig {
    /// Check every field's range.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Config`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        self.learner.validate()?;
        self.shaping.validate()
    }
}

impl LearnerConfig for MinimaxQConfig {
    fn name(&self) -> &'static str {
        Self::NAME
    }
    fn validate(&self) -> Result<()> {
        MinimaxQConfig::validate(self)
    }
    fn to_value(&self) -> Value {
        let mut fields = self.learner.to_value();
        if let Value::Object(map) = &mut fields {
            // INVARIANT: settings are scalars and an enum name.
            let shaping = serde_json::to_value(&self.shaping).expect("shaping serialises");
            map.insert("shaping".into(), without_nulls(shaping));
        }
        fields
    }
    fn episodes_per_response(&self) -> u64 {
        self.learner.episodes_per_response
    }
    fn warm_start(&self) -> bool {
        self.learner.warm_start
    }
    fn batch_size(&self) -> usize {
        self.learner.batch_size
    }
    fn shaping(&self) -> Option<&MinimaxConfig> {
        Some(&self.shaping)
    }
    fn shaping_mut(&mut self) -> Option<&mut MinimaxConfig> {
        Some(&mut self.shaping)
    }
    /// The Q-learner, unshaped: who holds the main agent's values shapes it.
    fn build(
        &self,
        tree: &GameTree,
        seat: usize,
        seed: u64,
        start: Start<'_>,
    ) -> Result<Box<dyn SeatLearner>> {
        self.learner.build(tree, seat, seed, start)
    }
    fn clone_box(&self) -> Box<dyn LearnerConfig> {
        Box::new(self.clone())
    }
}

impl Registrable for MinimaxQConfig {
    const NAME: &'static str = "minimax-q";
    const ABOUT: &'static str =
        "Q-learning with the Minimax Exploiter's reward shaping by the main agent's values";
    /// Its learners are Q-learners (the shaping is not saved).
    fn restore(tree: &GameTree, state: Value) -> Result<Box<dyn SeatLearner>> {
        QLearningConfig::restore(tree, state)
    }
    fn parse(fields: Value) -> std::result::Result<Self, String> {
        let mut fields = fields;
        let shaping = match fields.as_object_mut().and_then(|m| m.remove("shaping")) {
            None => MinimaxConfig::default(),
            Some(table @ Value::Object(_)) => from_fields(table, "learner.shaping")?,
            Some(other) => {
                return Err(format!("learner.shaping: expected a table, got {}", type_str(&other)));
            }
        };
        Ok(Self { learner: from_fields(fields, "learner")?, shaping })
    }
}
