//! What a league's checkpoint holds: the members ([`LeagueMember`]), the learning agents'
//! learners, win rates, ratings and payoffs ([`LeagueState`]).

use std::collections::BTreeMap;
use std::sync::Arc;

use metagame_games::{GameTree, MixtureSum};
use metagame_learners::{FrozenCritic, SavedLearner};
use serde::{Deserialize, Serialize};

use super::config::Role;
use super::member_payoffs::MemberPayoffs;
use super::rating::Elo;
use super::snapshot_policy::SnapshotPolicy;
use super::win_rates::WinRates;
use crate::error::Result;

/// A member of the league: a learning agent or a frozen snapshot of one.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LeagueMember {
    /// Its id: members are numbered in the order they joined and an id is never reused, so
    /// reports name a member by the same id in every round, evictions or not
    /// (`max_members`). With no eviction it is the member's position in
    /// [`LeagueState::members`].
    #[serde(default)]
    pub id: usize,
    /// Its role (a snapshot keeps its agent's role).
    pub role: Role,
    /// The learning agent it is or was snapped from.
    pub agent: usize,
    /// The round it was snapped at; `None` for the learning agent itself.
    pub snapped_at: Option<usize>,
    /// A snapshot's policy (both seats: a table, or two seat networks); `None` for a
    /// learning agent.
    pub policy: Option<SnapshotPolicy>,
}
/// A learning agent: one learner per seat, saved with its kind (checkpoints from before
/// learners had kinds hold bare Q-learners, read as `q-learning`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(super) struct AgentState {
    pub(super) role: Role,
    /// Its member id.
    pub(super) member: usize,
    pub(super) learners: Vec<SavedLearner>,
    pub(super) episodes_since_snapshot: u64,
    /// Resets so far (each starts fresh learners with new seeds).
    pub(super) generation: u64,
    /// A Minimax main exploiter's critics in a league of networks: per learning agent (in
    /// order), a main agent's critic at each seat as it was when this exploiter's
    /// generation started (`None` for other agents); empty otherwise.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(super) critics: Vec<Option<[FrozenCritic; 2]>>,
}
/// The league's state: what a checkpoint saves.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LeagueState {
    pub(super) round: usize,
    pub(super) members: Vec<LeagueMember>,
    pub(super) agents: Vec<AgentState>,
    pub(super) win_rates: WinRates,
    pub(super) elo: Elo,
    pub(super) matches_by_role: BTreeMap<Role, u64>,
    /// Mean payoff of member `i` against member `j` (both seats averaged) from the last
    /// evaluation point; `None` where not evaluated since the members last changed. Shared:
    /// it changes at evaluation points only, and a checkpoint's copy of the state should
    /// not copy members² numbers every round. Not written into checkpoints: the snapshots'
    /// entries are in the run folder's payoff log (`payoff_log.rs`), the learning agents' in
    /// `agent_payoffs`; read from checkpoints written before the log.
    #[serde(default, skip_serializing)]
    pub(super) payoffs: Arc<MemberPayoffs>,
    /// Records of the payoff log this state covers.
    #[serde(default)]
    pub(super) payoffs_logged: u64,
    /// Per learning agent (in order), its row and its column of the payoff table, which
    /// change at every evaluation point and so are not logged.
    #[serde(default)]
    pub(super) agent_payoffs: Vec<[Vec<Option<f64>>; 2]>,
    /// Members evicted so far (`max_members`); the next member's id is members + this.
    #[serde(default)]
    pub(super) evicted: usize,
    /// Per learning agent, for main agents, the running sum of every snapshot's policy it
    /// has taken, evicted ones included (its average policy without re-aggregating them each
    /// round); `None` for exploiters. Empty in checkpoints from before the cap, which had
    /// every snapshot among their members to rebuild it from.
    #[serde(default)]
    pub(super) snapshot_sums: Vec<Option<Arc<MixtureSum>>>,
}
impl LeagueState {
    /// The members, learning agents first.
    pub fn members(&self) -> &[LeagueMember] {
        &self.members
    }
    /// Win rates per ordered pair of members.
    pub fn win_rates(&self) -> &WinRates {
        &self.win_rates
    }
    /// The online Elo ratings per member.
    pub fn elo(&self) -> &Elo {
        &self.elo
    }
    /// Completed rounds.
    pub fn round(&self) -> usize {
        self.round
    }
    /// Members evicted so far (`max_members`).
    pub fn evicted(&self) -> usize {
        self.evicted
    }
    /// Records of the run folder's payoff log (`League::PAYOFF_LOG_FILE`) this state
    /// covers: 0 where it needs none.
    pub fn payoffs_logged(&self) -> u64 {
        self.payoffs_logged
    }
    /// The snapshots' network files, to load them before [`League::resume_on`](super::League::resume_on).
    pub fn stored_mut(&mut self) -> impl Iterator<Item = &mut crate::member_policy::StoredPolicy> {
        self.members.iter_mut().filter_map(|m| m.policy.as_mut()).flat_map(SnapshotPolicy::stored_mut)
    }
    /// The id the next member to join gets.
    pub(super) fn next_id(&self) -> usize {
        self.members.len() + self.evicted
    }
    /// Take the learning agents' rows and columns of the payoff table (learning agents are
    /// the first members) into `agent_payoffs`, where checkpoints keep them.
    pub(super) fn keep_agent_payoffs(&mut self) {
        let table = &self.payoffs;
        self.agent_payoffs =
            (0..self.agents.len().min(table.len())).map(|a| [table.row(a), table.column(a)]).collect();
    }
}
/// Per learning agent, the running sum of its snapshots among `state`'s members (main agents
/// only), added in member order, as the league adds them: exact while no snapshot has been
/// evicted.
pub(super) fn snapshot_sums_of_members(
    tree: &GameTree,
    state: &LeagueState,
) -> Result<Vec<Option<Arc<MixtureSum>>>> {
    let mut sums: Vec<Option<MixtureSum>> =
        state.agents.iter().map(|a| (a.role == Role::MainAgent).then(|| MixtureSum::new(tree))).collect();
    for m in &state.members {
        if let (Some(policy), Some(Some(sum))) =
            (m.policy.as_ref().and_then(SnapshotPolicy::as_table), sums.get_mut(m.agent))
        {
            sum.add(tree, policy, 1.0)?;
        }
    }
    Ok(sums.into_iter().map(|s| s.map(Arc::new)).collect())
}
