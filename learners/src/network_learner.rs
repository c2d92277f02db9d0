//! `NetworkLearner`: a learner that trains a network on any game, through its tensors and a
//! vectorised environment ([`VecEnv`](metagame_games::VecEnv)), the game's tree not needed;
//! its answer is the network as a frozen member ([`Mlp`]).

use metagame_games::{Arena, Cutoff, GameTree, SeatMixture};
use metagame_networks::Mlp;

use crate::error::Result;
use crate::learner::{PhaseSeconds, TrainingStats};
use crate::network_shaping::{FrozenCritic, NetworkShaping};
use crate::saved_learner::SavedLearner;
use crate::values::ValueTable;

/// Trains one seat's network from batched episodes against opponents of any kind.
pub trait NetworkLearner: Send + Sync + std::fmt::Debug {
    /// The learner's registered name (`ppo`).
    fn name(&self) -> &'static str;

    /// The seat it learns to play.
    fn seat(&self) -> usize;

    /// Train on `episodes` more episodes of the arena's game against `opponents` (one
    /// mixture per other seat, a policy drawn per seat and episode), checking `cutoff`
    /// between updates. Episode numbers continue from earlier calls.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroBudget`](crate::Error::ZeroBudget); a game without tensors or whose
    /// tensors or actions do not fit the network ([`Error::Network`](crate::Error::Network));
    /// opponents that do not fit the game or fail; [`Error::Diverged`](crate::Error::Diverged)
    /// when a loss or weight is no longer finite (the learner keeps its last finite
    /// weights); [`Error::CutOff`](crate::Error::CutOff).
    fn train_in(
        &mut self,
        arena: Arena<'_>,
        opponents: &[SeatMixture<'_>],
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()>;

    /// The policy network as a frozen member.
    ///
    /// # Errors
    ///
    /// [`Error::Network`](crate::Error::Network) if the weights cannot make one.
    fn network(&self) -> Result<Mlp>;

    /// Training statistics so far.
    fn stats(&self) -> &TrainingStats;

    /// Where its training time went, for learners that keep the split (not saved).
    fn phase_seconds(&self) -> Option<PhaseSeconds> {
        None
    }

    /// Its value estimates at the seat's information sets of `tree` (a critic of state
    /// values gives each legal action its state's value).
    ///
    /// # Errors
    ///
    /// A tree whose tensors do not fit the networks.
    fn values_on(&self, tree: &GameTree) -> Result<ValueTable>;

    /// Its critic as a frozen value network of its seat, for a learner that has one (PPO's
    /// value head): what a Minimax Exploiter facing it reads. Default `None`.
    ///
    /// # Errors
    ///
    /// Weights that no longer make a network.
    fn critic(&self) -> Option<Result<FrozenCritic>> {
        None
    }

    /// Train from now on with the Minimax Exploiter's `shaping` (`None`: the game's rewards).
    /// Not saved: whoever shapes a learner sets it before each training call.
    ///
    /// # Errors
    ///
    /// [`Error::Config`](crate::Error::Config) from a learner that does not shape its rewards
    /// (the default), or shaping whose main seat is the learner's.
    fn set_reward_shaping(&mut self, shaping: Option<NetworkShaping>) -> Result<()> {
        match shaping {
            None => Ok(()),
            Some(_) => {
                Err(crate::Error::Config(format!("learner {} does not take reward shaping", self.name())))
            }
        }
    }

    /// Everything training has changed, tagged with the learner's registered name.
    fn save(&self) -> SavedLearner;

    /// A copy.
    fn clone_box(&self) -> Box<dyn NetworkLearner>;
}

/// The index of the action drawn by `u` from `probs` over the legal actions.
pub(crate) fn sample(probs: &[f32], legal: &[bool], u: f64) -> usize {
    let mut acc = 0.0f64;
    let mut last = 0;
    for (k, (&p, &l)) in probs.iter().zip(legal).enumerate() {
        if !l {
            continue;
        }
        last = k;
        acc += f64::from(p);
        if u < acc {
            return k;
        }
    }
    last
}
