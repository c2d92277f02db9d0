//! One learning agent's training in a match as a job that can run anywhere
//! ([`TrainingJob`]), what runs a round's jobs ([`LeagueTrainer`], [`LocalTrainer`]), and
//! the learners' seeds.

use metagame_games::philox::derive_seed;
use metagame_games::{GameTree, PlayerId, TabularPolicy};
use metagame_learners::{
    MinimaxConfig, MinimaxShaping, OpponentSampler, SavedLearner, SeatLearner, Start, ValueTable,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::config::{LeagueConfig, Outcome};
use crate::error::{Error, Result};
use crate::training_loop::Cutoff;

/// The purpose of the learners' seeds ([`learner_seed`]).
pub(super) const LEARNERS: u32 = u32::from_be_bytes(*b"lrnr");
/// The seed of learning agent `agent`'s learner at `seat` after `generation` resets (0 for
/// the agent's first learners): [`derive_seed`] of the league's seed with these three.
pub fn learner_seed(seed: u64, agent: usize, seat: usize, generation: u64) -> u64 {
    derive_seed(seed, LEARNERS, &[agent as u64, seat as u64, generation])
}
/// A learning agent's learners: seat 0's and seat 1's, of the league's learner kind.
pub type SeatLearners = [Box<dyn SeatLearner>; 2];
/// Fresh learners for both seats of agent `agent` at reset `generation`, starting from
/// `start`'s rows where given (an exploiter reset to a main agent), from scratch otherwise.
pub(super) fn fresh_learners(
    tree: &GameTree,
    config: &LeagueConfig,
    agent: usize,
    generation: u64,
    start: Option<&TabularPolicy>,
) -> Result<SeatLearners> {
    let make = |seat| {
        let seed = learner_seed(config.seed, agent, seat, generation);
        let start = start.map_or(Start::Fresh, Start::From);
        config.learner.config().build(tree, seat, seed, start).map_err(Error::Learner)
    };
    Ok([make(0)?, make(1)?])
}
/// One learning agent's training in a match: its two seat learners (a copy), the member it
/// plays, the Minimax Exploiter's shaping (main exploiters with `exploiter_alpha > 0`), and
/// the episodes per seat. [`TrainingJob::run`] is the whole computation, so that a
/// job can run anywhere (another process, a Ray task) and give the same learners.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TrainingJob {
    /// The agent's learners, seat 0 and seat 1.
    pub learners: SeatLearners,
    /// The opponent's policy.
    pub opponent: TabularPolicy,
    /// A Minimax Exploiter's shaping, if any.
    pub minimax: Option<MinimaxTraining>,
    /// Episodes per seat.
    pub episodes: [u64; 2],
    /// What the match's result is: the job must run on the tree it names
    /// ([`Outcome::match_tree`]).
    pub outcome: Outcome,
}
/// A Minimax Exploiter's shaping in a [`TrainingJob`]: its settings and, per exploiter
/// seat `s`, the critic — the main agent's values at seat `1 − s` (see
/// [`LeagueConfigBuilder::exploiter_critic`](super::LeagueConfigBuilder::exploiter_critic)).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MinimaxTraining {
    /// α, the shaping discount and the shift rule.
    pub config: MinimaxConfig,
    /// The critic for the exploiter at seat 0 and at seat 1.
    pub critics: [ValueTable; 2],
}
/// A [`TrainingJob`] as data (the learners saved), for sending to another process.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainingJobData {
    /// The learners, saved (tagged with their kind; a bare Q-learner's state reads as
    /// `q-learning`).
    pub learners: [SavedLearner; 2],
    /// The opponent's policy.
    pub opponent: TabularPolicy,
    /// A Minimax Exploiter's shaping, if any.
    pub minimax: Option<MinimaxTraining>,
    /// Episodes per seat.
    pub episodes: [u64; 2],
    /// What the match's result is.
    #[serde(default)]
    pub outcome: Outcome,
}
impl TrainingJob {
    /// Train both seats' learners against the opponent.
    ///
    /// # Errors
    ///
    /// Learner errors.
    pub fn run(self, tree: &GameTree) -> Result<SeatLearners> {
        self.run_until(tree, &Cutoff::never())
    }

    /// [`run`](TrainingJob::run), giving up with [`Error::CutOff`] once `cutoff` has passed
    /// (checked before each of the learners' batches).
    ///
    /// # Errors
    ///
    /// Learner errors; [`Error::CutOff`].
    pub fn run_until(mut self, tree: &GameTree, cutoff: &Cutoff) -> Result<SeatLearners> {
        let opponent = &self.opponent;
        for (seat, learner) in self.learners.iter_mut().enumerate() {
            if let Some(minimax) = &self.minimax {
                let shaping = MinimaxShaping::new(tree, seat, &minimax.critics[seat], &minimax.config)
                    .map_err(Error::Learner)?;
                learner.set_reward_shaping(Some(shaping));
            }
            learner
                .train_until(tree, &OpponentSampler::fixed(opponent), self.episodes[seat], cutoff)
                .map_err(|e| match e {
                    metagame_learners::Error::CutOff => Error::CutOff,
                    e => Error::Learner(e),
                })?;
            learner.set_reward_shaping(None);
        }
        Ok(self.learners)
    }

    /// The job as data.
    pub fn save(&self) -> TrainingJobData {
        TrainingJobData {
            learners: [self.learners[0].save(), self.learners[1].save()],
            opponent: self.opponent.clone(),
            minimax: self.minimax.clone(),
            episodes: self.episodes,
            outcome: self.outcome,
        }
    }

    /// A job from its data.
    ///
    /// # Errors
    ///
    /// Learners of another game or of a kind no learner is registered as.
    pub fn restore(tree: &GameTree, data: TrainingJobData) -> Result<Self> {
        Ok(TrainingJob {
            learners: restore_pair(tree, &data.learners)?,
            opponent: data.opponent,
            minimax: data.minimax,
            episodes: data.episodes,
            outcome: data.outcome,
        })
    }
}
/// Runs a round's [`TrainingJob`]s: [`LocalTrainer`] on this machine's threads, or another
/// (Ray tasks from Python) elsewhere; each job's learners must be [`TrainingJob::run`]'s.
pub trait LeagueTrainer: Send {
    /// The trained learners, one pair per job, in the jobs' order.
    ///
    /// # Errors
    ///
    /// Learner errors, or the failure of wherever the jobs ran.
    fn train(&self, tree: &GameTree, jobs: Vec<TrainingJob>) -> Result<Vec<SeatLearners>>;

    /// [`train`](LeagueTrainer::train), giving up with [`Error::CutOff`] once `cutoff` has
    /// passed (the time budget, Ctrl-C). The default ignores it: jobs that run elsewhere
    /// (Ray tasks) finish, and the round stops at its next match.
    ///
    /// # Errors
    ///
    /// As [`train`](LeagueTrainer::train); [`Error::CutOff`].
    fn train_until(
        &self,
        tree: &GameTree,
        jobs: Vec<TrainingJob>,
        cutoff: &Cutoff,
    ) -> Result<Vec<SeatLearners>> {
        let _ = cutoff;
        self.train(tree, jobs)
    }
}
/// Every job on the current rayon pool.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalTrainer;
impl LeagueTrainer for LocalTrainer {
    fn train(&self, tree: &GameTree, jobs: Vec<TrainingJob>) -> Result<Vec<SeatLearners>> {
        self.train_until(tree, jobs, &Cutoff::never())
    }

    fn train_until(
        &self,
        tree: &GameTree,
        jobs: Vec<TrainingJob>,
        cutoff: &Cutoff,
    ) -> Result<Vec<SeatLearners>> {
        jobs.into_par_iter().map(|job| job.run_until(tree, cutoff)).collect()
    }
}
/// A pair of seat learners from their saved states, whichever kind saved them.
///
/// # Errors
///
/// Learners of another game or of a kind no learner is registered as.
pub fn restore_pair(tree: &GameTree, saved: &[SavedLearner]) -> Result<SeatLearners> {
    let [a, b] = saved else {
        return Err(Error::Config(format!("a learning agent has 2 saved learners, not {}", saved.len())));
    };
    let restore = |s| metagame_learners::restore(tree, s).map_err(Error::Learner);
    Ok([restore(a)?, restore(b)?])
}
/// One policy from a pair of seat learners.
pub(super) fn combined(tree: &GameTree, pair: &SeatLearners) -> TabularPolicy {
    let mut policy = pair[0].policy();
    policy.copy_player_rows(tree, PlayerId(1), &pair[1].policy());
    policy
}
