//! A learning agent of a league on a game whose tree is not built: one network learner per
//! seat (`ppo`, `dqn`, any registered learner that trains networks), trained in a match by
//! batched episodes against its opponent's policy, its result the mean of those episodes'
//! returns (as AlphaStar's matches are the games its agents train on).

use std::sync::Arc;

use metagame_games::{Arena, Policy, SeatMixture};
use metagame_learners::{FrozenCritic, NetworkLearner, NetworkShaping, PhaseSeconds, SavedLearner};
use metagame_networks::Mlp;
use rayon::prelude::*;

use super::config::{LeagueConfig, Role};
use super::jobs::learner_seed;
use super::snapshot_policy::{SeatPolicies, SnapshotPolicy};
use super::state::AgentState;
use crate::error::{Error, Result};
use crate::member_policy::MemberPolicy;
use crate::trained_response::learner_error;
use crate::training_loop::Cutoff;

/// A learning agent's network learners, seat 0's and seat 1's.
pub type NetworkPair = [Box<dyn NetworkLearner>; 2];

/// A copy of a pair (the learners are boxed trait objects).
pub(super) fn copy_pair(pair: &NetworkPair) -> NetworkPair {
    [pair[0].clone_box(), pair[1].clone_box()]
}

/// Fresh network learners for both seats of agent `agent` at reset `generation`, starting
/// from `start[seat]` where given (an exploiter reset to a main agent).
///
/// # Errors
///
/// [`Error::Config`] for a learner that trains no network (a table needs the game's tree);
/// the learner's errors (a game without tensors).
pub(super) fn fresh_networks(
    arena: Arena<'_>,
    config: &LeagueConfig,
    agent: usize,
    generation: u64,
    start: Option<&[Mlp; 2]>,
) -> Result<NetworkPair> {
    let make = |seat: usize| {
        let seed = learner_seed(config.seed, agent, seat, generation);
        let warm = start.map(|networks| &networks[seat]);
        config.learner.config().build_network(arena, seat, seed, warm).unwrap_or_else(|| {
            Err(metagame_learners::Error::Config(format!(
                "learner.kind: `{}` learns a table over the game's tree, and {} has none built; \
                 a league on it needs a network learner (ppo, dqn)",
                config.learner.name(),
                arena.name()
            )))
        })
    };
    Ok([make(0).map_err(learner_error)?, make(1).map_err(learner_error)?])
}

/// The pair's networks as they are, seat 0's and seat 1's.
///
/// # Errors
///
/// Weights that no longer make a network.
pub(super) fn networks_of(pair: &NetworkPair) -> Result<[Mlp; 2]> {
    Ok([pair[0].network().map_err(Error::Learner)?, pair[1].network().map_err(Error::Learner)?])
}

/// A pair of network learners from their saved states.
///
/// # Errors
///
/// A learner of a tabular kind, of no registered kind, or whose weights make no network.
pub(super) fn restore_networks(saved: &[SavedLearner]) -> Result<NetworkPair> {
    let [a, b] = saved else {
        return Err(Error::Config(format!("a learning agent has 2 saved learners, not {}", saved.len())));
    };
    let restore = |s| metagame_learners::restore_network(s).map_err(Error::Learner);
    Ok([restore(a)?, restore(b)?])
}

/// The pair's current networks, played as one policy.
///
/// # Errors
///
/// Weights that no longer make a network.
pub(super) fn playing(pair: &NetworkPair) -> Result<Arc<dyn Policy>> {
    let network = |l: &dyn NetworkLearner| -> Result<Arc<dyn Policy>> {
        Ok(Arc::new(l.network().map_err(Error::Learner)?))
    };
    Ok(Arc::new(SeatPolicies([network(&*pair[0])?, network(&*pair[1])?])))
}

/// A snapshot of the pair: its two networks as members kept in files named by their hash.
///
/// # Errors
///
/// Weights that no longer make a network; a network that cannot be written.
pub(super) fn snapshot(pair: &NetworkPair) -> Result<SnapshotPolicy> {
    let member = |l: &dyn NetworkLearner| -> Result<MemberPolicy> {
        MemberPolicy::new(Arc::new(l.network().map_err(Error::Learner)?))
    };
    Ok(SnapshotPolicy::Seats(Box::new([member(&*pair[0])?, member(&*pair[1])?])))
}

/// Per learning agent, a main agent's critics at both seats as they are now (`None` for
/// the other agents): what a Minimax main exploiter's generation reads.
///
/// # Errors
///
/// [`Error::Config`] for a learner without a critic; weights that no longer make one.
pub(super) fn main_critics(
    agents: &[AgentState],
    networks: &[NetworkPair],
) -> Result<Vec<Option<[FrozenCritic; 2]>>> {
    agents
        .iter()
        .zip(networks)
        .map(|(agent, pair)| {
            if agent.role != Role::MainAgent {
                return Ok(None);
            }
            let critic = |l: &dyn NetworkLearner| -> Result<FrozenCritic> {
                match l.critic() {
                    Some(c) => c.map_err(Error::Learner),
                    None => Err(Error::Config(format!(
                        "exploiter_alpha > 0: learner {} has no critic for a Minimax Exploiter to read",
                        l.name()
                    ))),
                }
            };
            Ok(Some([critic(&*pair[0])?, critic(&*pair[1])?]))
        })
        .collect()
}

/// One agent's training in a match: `pair` against `opponent`, `episodes[s]` episodes at
/// seat `s` (seat 0's learner against the opponent at seat 1, and the other way round).
pub(super) struct NetworkJob {
    /// The agent's member id and role, for its errors.
    pub(super) member: usize,
    pub(super) role: Role,
    pub(super) pair: NetworkPair,
    pub(super) opponent: Arc<dyn Policy>,
    /// A Minimax Exploiter's shaping per seat, if any.
    pub(super) shaping: [Option<NetworkShaping>; 2],
    pub(super) episodes: [u64; 2],
}

/// Every job, the agents in parallel: each trained pair with the mean return of its
/// training episodes at each seat (the match's result before scoring) and the seconds its
/// learners spent by phase.
///
/// # Errors
///
/// The first job's error in agent order: a learner that diverged, a game without tensors,
/// [`Error::CutOff`].
pub(super) fn train_jobs(
    arena: Arena<'_>,
    jobs: Vec<NetworkJob>,
    cutoff: &Cutoff,
) -> Result<Vec<(NetworkPair, [f64; 2], PhaseSeconds)>> {
    jobs.into_par_iter()
        .map(|mut job| {
            let mut means = [0.0; 2];
            let mut phases = PhaseSeconds::default();
            for (seat, learner) in job.pair.iter_mut().enumerate() {
                let clock = learner.phase_seconds().unwrap_or_default();
                let before = learner.stats().clone();
                let opponents = [SeatMixture { seat: 1 - seat, members: vec![(&*job.opponent, 1.0)] }];
                let shaping = job.shaping[seat].take();
                let shaped = shaping.is_some();
                learner
                    .set_reward_shaping(shaping)
                    .and_then(|()| learner.train_in(arena, &opponents, job.episodes[seat], cutoff))
                    .and_then(|()| if shaped { learner.set_reward_shaping(None) } else { Ok(()) })
                    .map_err(|e| match learner_error(e) {
                        Error::CutOff => Error::CutOff,
                        e => Error::AgentTraining {
                            member: job.member,
                            role: job.role.as_str().to_string(),
                            seat,
                            source: Box::new(e),
                        },
                    })?;
                phases = phases.plus(&learner.phase_seconds().unwrap_or_default().since(&clock));
                let after = learner.stats();
                let played = after.episodes - before.episodes;
                let mean = (after.return_sum - before.return_sum) / played.max(1) as f64;
                means[seat] = mean;
            }
            Ok((job.pair, means, phases))
        })
        .collect()
}
