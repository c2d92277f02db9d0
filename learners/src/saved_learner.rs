//! A learner as data: its registered name and its state ([`SavedLearner`]), as leagues'
//! checkpoints keep it; and the learner chosen when none is named ([`DEFAULT_LEARNER`]).

use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

/// The learner configs and the league choose when none is named.
pub const DEFAULT_LEARNER: &str = "q-learning";

/// A learner as data: its registered name and its state ([`SeatLearner::save`](crate::SeatLearner::save)).
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
