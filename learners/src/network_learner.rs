//! `NetworkLearner`: a learner that trains a network on any game, through its tensors and a
//! vectorised environment ([`VecEnv`](metagame_games::VecEnv)), the game's tree not needed;
//! its answer is the network as a frozen member ([`Mlp`]).

use metagame_games::{Arena, Cutoff, SeatMixture};
use metagame_networks::Mlp;

use crate::error::Result;
use crate::learner::TrainingStats;

/// Trains one seat's network from batched episodes against opponents of any kind.
pub trait NetworkLearner: Send {
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
}
