//! What a round reports: its matches ([`LeagueMatch`], each opponent's [`Branch`]), how
//! hard its PFSP draws were ([`PfspHardness`]), and the round's part of the report
//! ([`LeagueReport`]), gathered while the round runs (`RoundEvents`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::config::Role;

/// Which branch of its role's rule chose an agent's opponent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Branch {
    /// Main agent, 50%: PFSP-squared over every historical player.
    Pfsp,
    /// Main agent, 15%: verification (historical main exploiters that beat it, or
    /// snapshots it forgets how to beat), self-play when neither check triggers.
    Verification,
    /// Main agent, 35% (and the PFSP share while the league has no history): a main agent,
    /// or its snapshots by PFSP-variance when it beats us.
    SelfPlay,
    /// Main exploiter: a main agent, or its snapshots by PFSP-variance.
    Exploit,
    /// League exploiter: PFSP-linear-capped over every historical player.
    History,
    /// The role's configured matchmaker (`[matchmaking]` in the league's config) instead of
    /// AlphaStar's rule.
    Configured,
}
/// One line of a round's matches: a learning agent's matches against one opponent chosen
/// by one branch, with their mean result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LeagueMatch {
    /// The learning agent.
    pub agent: usize,
    /// Its member id ([`LeagueMember::id`](super::LeagueMember::id)).
    pub member: usize,
    /// The opponent's member id ([`LeagueMember::id`](super::LeagueMember::id)).
    pub opponent: usize,
    /// How the opponent was chosen.
    pub branch: Branch,
    /// The agent's mean score over these matches, each taken after the match's training:
    /// its expected outcome against the opponent in [0, 1] (the `outcome` setting: payoff
    /// mapped over the utility range, or win probability with ties ½), averaged over the
    /// seats.
    pub score: f64,
    /// How many matches this line stands for.
    #[serde(default = "one")]
    pub count: u64,
}
pub(super) fn one() -> u64 {
    1
}
pub(super) fn is_zero(n: &usize) -> bool {
    *n == 0
}
/// How hard the opponents that win-rate-weighted draws (PFSP, or a configured matchmaker)
/// chose were in a round: the learner's mean win rate against the chosen opponents, and
/// against all the candidates of those draws (what uniform choice would give). PFSP works
/// when the first is below the second.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PfspHardness {
    /// Draws from a weighted rule this round.
    pub draws: u64,
    /// Mean win rate of the learner against the opponent each draw chose.
    pub chosen_win_rate: f64,
    /// Mean over the draws of the learner's expected win rate under the draw's
    /// distribution (what `chosen_win_rate` estimates, without the sampling noise).
    pub expected_win_rate: f64,
    /// Mean over the draws of the learner's mean win rate against the draw's candidates.
    pub candidate_win_rate: f64,
}
/// A draw's hardness: the chosen opponent's, the expected and the candidates' mean win rate.
pub(super) type Draw = Option<(f64, f64, f64)>;
/// What happened in a round besides training.
#[derive(Default)]
pub(super) struct RoundEvents {
    pub(super) matches: Vec<LeagueMatch>,
    pub(super) snapshots: Vec<usize>,
    pub(super) win_rate_snapshots: Vec<usize>,
    pub(super) resets: Vec<usize>,
    pub(super) evicted: Vec<usize>,
    pub(super) hardness: Option<PfspHardness>,
    pub(super) batch_elo: Vec<f64>,
    pub(super) evaluated_entries: usize,
    /// Network learners' seconds by phase in the round's matches.
    pub(super) learner_seconds: metagame_learners::PhaseSeconds,
}
impl RoundEvents {
    /// Count one match of `agent` against `opponent`, merging it into the line of the same
    /// agent, opponent and branch.
    pub(super) fn add_match(&mut self, m: LeagueMatch) {
        match self
            .matches
            .iter_mut()
            .find(|x| x.agent == m.agent && x.opponent == m.opponent && x.branch == m.branch)
        {
            Some(line) => {
                let n = line.count as f64;
                line.score = (line.score * n + m.score) / (n + 1.0);
                line.count += 1;
            }
            None => self.matches.push(m),
        }
    }

    pub(super) fn add_draw(&mut self, draw: Draw) {
        if let Some((chosen, expected, candidates)) = draw {
            let h = self.hardness.get_or_insert_with(PfspHardness::default);
            let n = h.draws as f64;
            h.chosen_win_rate = (h.chosen_win_rate * n + chosen) / (n + 1.0);
            h.expected_win_rate = (h.expected_win_rate * n + expected) / (n + 1.0);
            h.candidate_win_rate = (h.candidate_win_rate * n + candidates) / (n + 1.0);
            h.draws += 1;
        }
    }
}
/// The per-round part of a league's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LeagueReport {
    /// Exact NashConv of each main agent's current policy (both seats), in agent order.
    pub main_nash_conv: Vec<f64>,
    /// Exact NashConv of each main agent's average policy: the uniform mixture of every
    /// snapshot it has taken (evicted ones included) and its current policy, mixed as
    /// behaviour (reach-weighted, as fictitious self-play averages). A greedy learner's
    /// current policy is pure and stays exploitable in poker; its average is what approaches
    /// an equilibrium.
    pub main_average_nash_conv: Vec<f64>,
    /// Online Elo rating per member (updated after every match, K = 32), in
    /// [`LeagueState::members`](super::LeagueState::members) order (ids in `member_ids`), at round 0 and at evaluation
    /// points only (every round it would make the reports grow as rounds × members); empty
    /// between them. [`LeagueState::elo`](super::LeagueState::elo) has the current ratings.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub elo: Vec<f64>,
    /// Online Elo rating of each learning agent, in agent order, every round.
    #[serde(default)]
    pub agent_elo: Vec<f64>,
    /// Matches played so far, per role of the learning agent.
    pub matches_by_role: BTreeMap<Role, u64>,
    /// Members (learning agents and snapshots).
    pub members: usize,
    /// Where `elo` and `batch_elo` are listed, once a member has been evicted: the id of
    /// each of their entries' members. Empty while the ids are `0..members`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub member_ids: Vec<usize>,
    /// The ids of the snapshots evicted this round (`max_members`), in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evicted: Vec<usize>,
    /// Snapshots evicted so far.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub evictions: usize,
    /// This round's matches, one line per agent, opponent and branch, in the order first
    /// played.
    pub matches: Vec<LeagueMatch>,
    /// How hard this round's PFSP-chosen opponents were; `None` when no draw was weighted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pfsp: Option<PfspHardness>,
    /// Learning agents that added a snapshot this round (an agent can snapshot after any of
    /// its matches, so it may appear more than once).
    pub snapshots: Vec<usize>,
    /// The snapshots among them that the win-rate rule took (the agent beat its whole
    /// reference set by `snapshot_win_rate`), not the `snapshot_max_episodes` timer.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub win_rate_snapshots: Vec<usize>,
    /// Learning agents that reset to fresh learners this round.
    pub resets: Vec<usize>,
    /// At evaluation points: batch Elo per member, fitted on the payoff table (payoffs
    /// mapped to scores in [0, 1] over the game's utility range); empty between them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub batch_elo: Vec<f64>,
    /// At evaluation points: the payoff entries (ordered pairs of members) the evaluator
    /// filled this time; 0 between them.
    #[serde(default)]
    pub evaluated_entries: usize,
}
