//! # metagame-learners
//!
//! Learned best responses: reinforcement learning of one seat of a game from sampled
//! episodes, for oracles (PSRO's trained responses) and leagues (exploiters).
//!
//! - [`Learner`]: trains a seat against an [`OpponentSampler`] (a distribution over
//!   opponent policies, one drawn per seat and episode) within a budget of episodes; hands
//!   out its policy as a [`TabularPolicy`](metagame_games::TabularPolicy) for exact
//!   evaluation, its action values as a [`ValueTable`], and [`TrainingStats`].
//! - [`QLearner`]: tabular Q-learning over information states (ε-greedy, [`Schedule`]s for
//!   ε and the step size, the target at the learner's next decision point).
//! - [`ActorCritic`]: a softmax policy trained by policy gradient against a learned critic,
//!   current or average policy out.
//! - [`MinimaxExploiter`]: wraps a learner and shapes its reward with a frozen main agent's
//!   values ([`MinimaxShaping`]; Bairamian et al. 2024, arXiv:2311.17190); α = 0 is the plain
//!   learner. The values are the main agent's own learned critic ([`ValueTable::learned`], the
//!   paper's) or its exact values ([`ValueTable::exact`]), as [`Critic`] names them; the shift
//!   of the term follows the paper's rule ([`Shift`]).
//! - [`Ppo`] and [`Dqn`]: networks trained on any game's tensors through a vectorised
//!   environment ([`VecEnv`](metagame_games::VecEnv)), gradients by candle; as
//!   [`NetworkLearner`]s they answer with the network as a frozen member, and [`OnTree`]
//!   makes either a tree learner (leagues, `metagame respond`).
//! - [`LEARNERS`]: the one list of learners, one line each; a learner's settings are a
//!   [`LearnerConfig`] (chosen by name in configs as a [`LearnerChoice`]), a league's learner
//!   a [`SeatLearner`] that saves itself tagged with its name ([`SavedLearner`]).
//!
//! Episodes are played on the game's flat tree with all randomness from Philox keyed by
//! (seed, seat, episode), in parallel batches applied in episode order: a run is
//! bit-identical on any number of threads (see [`episodes`]).
//!
//! # Example
//!
//! ```
//! use metagame_games::{best_response, expected_returns, registry, GameTree, PlayerId, TabularPolicy};
//! use metagame_learners::{ActorCritic, ActorCriticConfig, Learner, OpponentSampler, Start};
//!
//! let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
//! let uniform = TabularPolicy::uniform(&tree);
//! let mut learner = ActorCritic::new(&tree, 1, 3, ActorCriticConfig::default(), Start::Fresh)?;
//! learner.train(&tree, &OpponentSampler::fixed(&uniform), 50_000)?;
//! let (_, best) = best_response(&tree, PlayerId(1), &[&uniform, &uniform])?;
//! let learned = expected_returns(&tree, &[&uniform, &learner.policy()])?[1];
//! assert!(best - learned < 0.04);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod actor_critic;
mod critic;
mod dqn;
pub mod episodes;
mod error;
mod learner;
mod learner_config;
mod minimax;
mod minimax_q;
mod network_learner;
mod network_shaping;
mod on_tree;
mod params;
mod ppo;
mod q_learning;
mod registry;
mod saved_learner;
mod schedule;
mod shaping;
mod values;

pub use actor_critic::{ActorCritic, ActorCriticConfig, ActorCriticState, PolicyOutput};
pub use critic::Critic;
pub use dqn::{Dqn, DqnConfig, DqnState};
pub use episodes::{Opponent, OpponentSampler};
pub use error::{Error, Result};
pub use learner::{Learner, PhaseSeconds, ShapedLearner, Start, TrainingStats};
pub use learner_config::{LearnerConfig, Registrable, SeatLearner, from_fields, type_str};
pub use minimax::MinimaxExploiter;
pub use minimax_q::MinimaxQConfig;
pub use network_learner::NetworkLearner;
pub use network_shaping::{FrozenCritic, NetworkShaping};
pub use on_tree::OnTree;
pub use ppo::{Ppo, PpoConfig, PpoState};
pub use q_learning::{QLearner, QLearnerState, QLearningConfig};
pub use registry::{LEARNERS, LearnerChoice, LearnerEntry, entry, learner_entry, restore, restore_network};
pub use saved_learner::{DEFAULT_LEARNER, SavedLearner};
pub use schedule::Schedule;
pub use shaping::{MinimaxConfig, MinimaxShaping, Shift};
pub use values::ValueTable;
