//! League training after AlphaStar (Vinyals et al. 2019, Nature 575, and its pseudocode `multiagent.py`): main agents, main exploiters and
//! league exploiters learn from sampled episodes (tabular Q-learning, one learner per seat),
//! each round against opponents chosen by their role's rule with prioritised fictitious
//! self-play (PFSP); snapshots of them join the league as frozen historical players.
//!
//! One [`League::step`] is one round of `episodes_per_round` training episodes per learning
//! agent, played as matches of `episodes_per_match` episodes (half at each seat). In every
//! match each learning agent draws a fresh opponent from its role's distribution over the
//! league as it stands (randomness from Philox keyed by (seed, round, match, agent)) and
//! trains against it, the agents in parallel (rayon) and independently of the thread count;
//! then, in agent order, each match's result updates the win rates (AlphaStar's 0.99 decay,
//! per match as in the pseudocode) and the online Elo ratings, and agents that are ready
//! take a snapshot (main exploiters reset at every snapshot, league exploiters with
//! probability `league_exploiter_reset`; a reset agent's win rates start again from the
//! prior). A match's result is exact: the agent's expected outcome against its opponent
//! after the match's training, averaged over the two seats, read off the tree — with
//! `outcome = "payoff"` the expected utility mapped to [0, 1] over the game's utility range,
//! with `outcome = "win"` the win probability (ties ½), the learners then rewarded with the
//! win/loss outcome instead of the game's returns. The same result feeds every rule: the
//! learners' reward, win rates, PFSP, online and batch Elo and the snapshot rule. (AlphaStar's
//! StarCraft II returns are a win, a loss or a draw, where the two coincide.)
//!
//! What a round costs beyond its episodes: per match and learning agent, O(members) for
//! the opponent draw (the candidates' win rates) and the snapshot rule (the reference set's),
//! and O(policy size) for the match's exact result; the win-rate table holds only the pairs
//! that have played (O(agents · members)); the main agents' average policies are running
//! sums (O(policy size) per round, not per snapshot). What grows as members²: the evaluation
//! table every `eval_every` rounds (payoff entries among all members, batch Elo fitted on
//! them) and with it the checkpoint; `eval_every = 0` goes without it.
//!
//! AlphaStar keeps every historical player, and so does this league by default, growing
//! without bound (a 5 000-round Kuhn league had 2 497 members). `max_members` caps it: when a
//! snapshot makes the league one larger than the cap, one frozen snapshot is evicted — the
//! one the learning agents' PFSP draws from history give the least probability (the
//! eviction that changes matchmaking least), ties to the oldest, never the snapshot just
//! taken nor a main agent's only snapshot (the rule, and why not "the least chosen so far":
//! `eviction.rs`). Its win rates, Elo rating and payoff entries go with it; the
//! main agents' average policies keep every snapshot ever taken. Members keep their ids
//! ([`LeagueMember::id`], the order they joined, never reused), which reports name them by;
//! tables index the members as they stand ([`LeagueState::members`] order).
//!
//! Main exploiters are Minimax Exploiters when `exploiter_alpha > 0`: their reward is shaped
//! by the action values of the main agent they target — its own learned Q-values by default,
//! or the exact values of its policy — discounted by `exploiter_discount` and shifted by the
//! paper's rule (Bairamian et al. 2024, arXiv:2311.17190, Eq. 3–4).
//!
//! Config (the `league` algorithm's section; every field optional, defaults shown):
//!
//! ```toml
//! main_agents = 1
//! main_exploiters = 1
//! league_exploiters = 1
//! episodes_per_round = 20000        # per learning agent, half at each seat
//! episodes_per_match = 2048         # 2 × learner.batch_size, at most episodes_per_round
//! outcome = "payoff"                # or "win"
//! snapshot_min_episodes = 200000    # AlphaStar's 2e9 steps, scaled to the game
//! snapshot_max_episodes = 400000    # AlphaStar's 4e9
//! snapshot_win_rate = 0.7
//! league_exploiter_reset = 0.25
//! exploiter_alpha = 0.0             # > 0: Minimax main exploiters
//! exploiter_discount = 0.995        # their shaping discount
//! exploiter_critic = "learned"      # or "exact"
//! exploiter_shift = "auto"          # or "reward-min", "value-min"
//! seed = 0
//! eval_every = 10                   # rounds between evaluation points (0: none)
//! episodes_per_entry = 1000         # sampled evaluators only
//! # max_members = 200               # a cap on members (default: none)
//! [learner]                         # Q-learning settings (episodes_per_response unused)
//! ```

mod eviction;
pub mod matchmaking;
pub mod rating;
pub mod win_rates;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Instant;

use metagame_games::philox::derive_seed;
use metagame_games::{
    Arena, ExactEvaluator, GameTree, MatchEvaluator, Matchup, MixtureSum, NormalFormGame, PlayerId, Policy,
    TabularPolicy,
};
use metagame_learners::{
    Critic, Learner, MinimaxConfig, MinimaxShaping, OpponentSampler, QLearner, QLearnerState,
    QLearningConfig, ShapedLearner, Shift, Start, ValueTable,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::{Details, IterationReport, PhaseTimes, StopReason};
use crate::settings::{built_by, setters};
use crate::training_loop::{Cutoff, TrainingLoop};
use matchmaking::{MatchRequest, Matchmaker, MatchmakingConfig, MatchmakingRng, Pfsp, PfspWeighting};
use rating::{BatchElo, BatchEloConfig, Elo, EloConfig, MatchResult, OnlineRating, Rating};
use win_rates::{WinRates, WinRatesConfig};

/// A league member's role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Role {
    /// Trains against the whole league (PFSP, verification, self-play).
    MainAgent,
    /// Trains against the current main agents, to find their weaknesses.
    MainExploiter,
    /// Trains against the whole league's history.
    LeagueExploiter,
}

impl Role {
    /// The name reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::MainAgent => "main-agent",
            Role::MainExploiter => "main-exploiter",
            Role::LeagueExploiter => "league-exploiter",
        }
    }
}

/// The league's settings (see the module docs for the config shape); always valid (built by
/// [`LeagueConfig::builder`] or deserialised through it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "LeagueConfigBuilder", into = "LeagueConfigBuilder")]
pub struct LeagueConfig {
    main_agents: usize,
    main_exploiters: usize,
    league_exploiters: usize,
    episodes_per_round: u64,
    episodes_per_match: Option<u64>,
    outcome: Outcome,
    snapshot_min_episodes: u64,
    snapshot_max_episodes: u64,
    snapshot_win_rate: f64,
    league_exploiter_reset: f64,
    exploiter_alpha: f64,
    exploiter_discount: f64,
    exploiter_critic: Critic,
    exploiter_shift: Shift,
    seed: u64,
    eval_every: usize,
    episodes_per_entry: u64,
    max_members: Option<usize>,
    learner: QLearningConfig,
    matchmaking: RoleMatchmaking,
}

/// Builder and serde form of [`LeagueConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeagueConfigBuilder {
    /// Main agents (at least 1). Default 1.
    pub main_agents: Option<usize>,
    /// Main exploiters. Default 1.
    pub main_exploiters: Option<usize>,
    /// League exploiters. Default 1.
    pub league_exploiters: Option<usize>,
    /// Training episodes per learning agent per round, half at each seat (at least 2).
    /// Default 20 000.
    pub episodes_per_round: Option<u64>,
    /// Training episodes per match, half at each seat (at least 2, at most
    /// `episodes_per_round`): each match draws a fresh opponent and its result enters the win
    /// rates before the next is drawn. A round's last match takes what is left. Default one
    /// learner batch per seat (`2 × learner.batch_size`), or `episodes_per_round` when that
    /// is smaller.
    pub episodes_per_match: Option<u64>,
    /// What a match's result is, for everything that uses one (the learners' reward, win
    /// rates, PFSP, online and batch Elo, the snapshot rule): `"payoff"`, the expected
    /// utility mapped to [0, 1] over the game's utility range, or `"win"`, the win
    /// probability (ties ½). Default `"payoff"`; the two coincide on games whose returns
    /// are a win, a loss or a draw.
    pub outcome: Option<Outcome>,
    /// Episodes since an agent's last snapshot before it may take another. Default 200 000.
    pub snapshot_min_episodes: Option<u64>,
    /// Episodes since the last snapshot after which an agent takes one whatever its win
    /// rates. Default 400 000.
    pub snapshot_max_episodes: Option<u64>,
    /// An agent past `snapshot_min_episodes` snapshots once it beats every member of its
    /// reference set with at least this win rate, in (0, 1]. Default 0.7.
    pub snapshot_win_rate: Option<f64>,
    /// Probability that a league exploiter resets to its initial policy at a snapshot, in
    /// [0, 1]. Default 0.25.
    pub league_exploiter_reset: Option<f64>,
    /// Minimax shaping weight α of the main exploiters, in [0, 1]; 0 is plain Q-learning.
    /// Default 0.
    pub exploiter_alpha: Option<f64>,
    /// The Minimax Exploiter's shaping discount γ, in [0, 1]. Default 0.995 (the paper's).
    pub exploiter_discount: Option<f64>,
    /// Where the Minimax Exploiter's critic comes from: `"learned"`, the main agent's own
    /// Q-values (the paper's), or `"exact"`, the exact action values of the policy it plays.
    /// Against a frozen snapshot, which keeps no learner, the critic is that policy's exact
    /// values either way. Default `"learned"`.
    pub exploiter_critic: Option<Critic>,
    /// The shift of the shaping term: `"auto"` (the paper's rule: `|R_min|` for win/loss
    /// returns, the main agent's smallest value otherwise), `"reward-min"` or `"value-min"`.
    /// Default `"auto"`.
    pub exploiter_shift: Option<Shift>,
    /// Seed of every random draw. Default 0.
    pub seed: Option<u64>,
    /// Rounds between evaluation points, where the payoff table among all members is filled
    /// through the match evaluator (only entries that are missing or involve a learning
    /// agent) and batch Elo is refitted on it; 0 turns them off. Default 10.
    pub eval_every: Option<usize>,
    /// Episodes per payoff entry when the evaluator samples (exact evaluators ignore it).
    /// Default 1000.
    pub episodes_per_entry: Option<u64>,
    /// The most members (learning agents and snapshots) the league holds: a snapshot that
    /// makes it one more evicts a frozen snapshot, the one the learning agents' PFSP draws
    /// from history give the least probability (ties to the oldest), never the snapshot just
    /// taken nor a main agent's only snapshot (see the module docs). At least the learning
    /// agents + one snapshot per main agent + 1. Default none: every snapshot stays
    /// (AlphaStar's league).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_members: Option<usize>,
    /// The learners' settings (a `[learner]` table). Default Q-learning's defaults.
    pub learner: Option<QLearningConfig>,
    /// Per role, a matchmaker that replaces AlphaStar's rule for that role's opponents
    /// (`[matchmaking.main_exploiter] kind = "elo"`, …). Default: the rule for every role.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub matchmaking: Option<RoleMatchmaking>,
}

impl LeagueConfigBuilder {
    /// The names of the fields, as configs spell them.
    pub const FIELDS: &'static [&'static str] = &[
        "main_agents",
        "main_exploiters",
        "league_exploiters",
        "episodes_per_round",
        "episodes_per_match",
        "outcome",
        "snapshot_min_episodes",
        "snapshot_max_episodes",
        "snapshot_win_rate",
        "league_exploiter_reset",
        "exploiter_alpha",
        "exploiter_discount",
        "exploiter_critic",
        "exploiter_shift",
        "seed",
        "eval_every",
        "episodes_per_entry",
        "max_members",
        "learner",
        "matchmaking",
    ];

    setters!(
        main_agents: usize,
        main_exploiters: usize,
        league_exploiters: usize,
        episodes_per_round: u64,
        episodes_per_match: u64,
        outcome: Outcome,
        snapshot_min_episodes: u64,
        snapshot_max_episodes: u64,
        snapshot_win_rate: f64,
        league_exploiter_reset: f64,
        exploiter_alpha: f64,
        exploiter_discount: f64,
        exploiter_critic: Critic,
        exploiter_shift: Shift,
        seed: u64,
        eval_every: usize,
        episodes_per_entry: u64,
        max_members: usize,
        learner: QLearningConfig,
        matchmaking: RoleMatchmaking,
    );

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range; [`Error::Learner`] for learner
    /// settings out of range.
    pub fn build(self) -> Result<LeagueConfig> {
        let config = LeagueConfig {
            main_agents: self.main_agents.unwrap_or(1),
            main_exploiters: self.main_exploiters.unwrap_or(1),
            league_exploiters: self.league_exploiters.unwrap_or(1),
            episodes_per_round: self.episodes_per_round.unwrap_or(20_000),
            episodes_per_match: self.episodes_per_match,
            outcome: self.outcome.unwrap_or_default(),
            snapshot_min_episodes: self.snapshot_min_episodes.unwrap_or(200_000),
            snapshot_max_episodes: self.snapshot_max_episodes.unwrap_or(400_000),
            snapshot_win_rate: self.snapshot_win_rate.unwrap_or(0.7),
            league_exploiter_reset: self.league_exploiter_reset.unwrap_or(0.25),
            exploiter_alpha: self.exploiter_alpha.unwrap_or(0.0),
            exploiter_discount: self.exploiter_discount.unwrap_or(0.995),
            exploiter_critic: self.exploiter_critic.unwrap_or_default(),
            exploiter_shift: self.exploiter_shift.unwrap_or_default(),
            seed: self.seed.unwrap_or(0),
            eval_every: self.eval_every.unwrap_or(10),
            episodes_per_entry: self.episodes_per_entry.unwrap_or(1000),
            max_members: self.max_members,
            learner: self.learner.unwrap_or_default(),
            matchmaking: self.matchmaking.unwrap_or_default(),
        };
        config.validate()?;
        Ok(config)
    }
}

built_by!(LeagueConfig, LeagueConfigBuilder);

impl From<LeagueConfig> for LeagueConfigBuilder {
    fn from(c: LeagueConfig) -> Self {
        LeagueConfigBuilder {
            main_agents: Some(c.main_agents),
            main_exploiters: Some(c.main_exploiters),
            league_exploiters: Some(c.league_exploiters),
            episodes_per_round: Some(c.episodes_per_round),
            episodes_per_match: c.episodes_per_match,
            outcome: Some(c.outcome),
            snapshot_min_episodes: Some(c.snapshot_min_episodes),
            snapshot_max_episodes: Some(c.snapshot_max_episodes),
            snapshot_win_rate: Some(c.snapshot_win_rate),
            league_exploiter_reset: Some(c.league_exploiter_reset),
            exploiter_alpha: Some(c.exploiter_alpha),
            exploiter_discount: Some(c.exploiter_discount),
            exploiter_critic: Some(c.exploiter_critic),
            exploiter_shift: Some(c.exploiter_shift),
            seed: Some(c.seed),
            eval_every: Some(c.eval_every),
            episodes_per_entry: Some(c.episodes_per_entry),
            max_members: c.max_members,
            learner: Some(c.learner),
            // The default (AlphaStar's rule for every role) is written as no table.
            matchmaking: (!c.matchmaking.is_default()).then_some(c.matchmaking),
        }
    }
}

/// Most matches per learning agent in one round (each match is a synchronisation point of
/// the agents' training; the matchmaking streams are keyed by round and match below it).
pub const MAX_MATCHES_PER_ROUND: u64 = 1 << 20;

/// What a league match's result is (the `outcome` field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Outcome {
    /// The expected utility, mapped to [0, 1] over the game's utility range; the learners
    /// are rewarded with the game's own returns.
    #[default]
    Payoff,
    /// The win probability, ties counting ½; the learners are rewarded +1 for a win, 0 for
    /// a tie and −1 for a loss ([`GameTree::with_win_outcomes`]).
    Win,
}

impl Outcome {
    /// The tree a league with this outcome trains and plays on: `tree` itself for payoffs,
    /// its win/loss copy for wins (a copy of the tree, O(nodes)).
    pub fn match_tree(self, tree: &GameTree) -> std::borrow::Cow<'_, GameTree> {
        match self.own_tree(tree) {
            Some(own) => std::borrow::Cow::Owned(own),
            None => std::borrow::Cow::Borrowed(tree),
        }
    }

    /// The tree of its own this outcome needs, if any (the win/loss copy for wins).
    fn own_tree(self, tree: &GameTree) -> Option<GameTree> {
        (self == Outcome::Win).then(|| tree.with_win_outcomes())
    }
}

/// A matchmaker per role of learning agent; `None` keeps AlphaStar's rule for the role (the
/// main agent's 50/15/35 branches, the exploiters' PFSP).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct RoleMatchmaking {
    /// The main agents' matchmaker, over every historical player and the main agents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub main_agent: Option<MatchmakingConfig>,
    /// The main exploiters' matchmaker, over the main agents and their snapshots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub main_exploiter: Option<MatchmakingConfig>,
    /// The league exploiters' matchmaker, over every historical player and the main agents.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub league_exploiter: Option<MatchmakingConfig>,
}

impl RoleMatchmaking {
    /// The matchmaker configured for `role`, if any.
    pub fn of(&self, role: Role) -> Option<&MatchmakingConfig> {
        match role {
            Role::MainAgent => self.main_agent.as_ref(),
            Role::MainExploiter => self.main_exploiter.as_ref(),
            Role::LeagueExploiter => self.league_exploiter.as_ref(),
        }
    }

    fn is_default(&self) -> bool {
        *self == RoleMatchmaking::default()
    }
}

impl LeagueConfig {
    /// Main agents.
    pub fn main_agents(&self) -> usize {
        self.main_agents
    }
    /// Main exploiters.
    pub fn main_exploiters(&self) -> usize {
        self.main_exploiters
    }
    /// League exploiters.
    pub fn league_exploiters(&self) -> usize {
        self.league_exploiters
    }
    /// Training episodes per learning agent per round.
    pub fn episodes_per_round(&self) -> u64 {
        self.episodes_per_round
    }
    /// Training episodes per match (see [`LeagueConfigBuilder::episodes_per_match`]).
    pub fn episodes_per_match(&self) -> u64 {
        let batch = 2 * self.learner.batch_size as u64;
        self.episodes_per_match.unwrap_or(self.episodes_per_round.min(batch))
    }
    /// Matches per learning agent per round.
    pub fn matches_per_round(&self) -> u64 {
        self.episodes_per_round.div_ceil(self.episodes_per_match())
    }
    /// What a match's result is.
    pub fn outcome(&self) -> Outcome {
        self.outcome
    }
    /// Rounds between evaluation points (0: none).
    pub fn eval_every(&self) -> usize {
        self.eval_every
    }
    /// Seed of every random draw.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// The most members the league holds (`None`: no cap).
    pub fn max_members(&self) -> Option<usize> {
        self.max_members
    }
    /// Learning agents of every role.
    pub fn num_agents(&self) -> usize {
        self.main_agents + self.main_exploiters + self.league_exploiters
    }
    /// The learners' settings.
    pub fn learner(&self) -> &QLearningConfig {
        &self.learner
    }
    /// The matchmaker per role.
    pub fn matchmaking(&self) -> &RoleMatchmaking {
        &self.matchmaking
    }

    /// Check every field (the builder does, once).
    fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(Error::Config(m));
        if self.main_agents == 0 {
            return bad("main_agents: a league needs at least one main agent".into());
        }
        if self.num_agents() > 64 {
            return bad(
                "main_agents + main_exploiters + league_exploiters: at most 64 learning agents".into()
            );
        }
        let cap = metagame_games::MAX_EPISODES;
        if self.episodes_per_entry == 0 || self.episodes_per_entry > cap {
            return bad(format!("episodes_per_entry: must be in 1..={cap}, got {}", self.episodes_per_entry));
        }
        if self.episodes_per_round < 2 {
            return bad(format!("episodes_per_round: {} is below 2 (one per seat)", self.episodes_per_round));
        }
        if self.episodes_per_round > cap {
            return bad(format!(
                "episodes_per_round: {} is more than the cap of {cap}",
                self.episodes_per_round
            ));
        }
        if let Some(m) = self.episodes_per_match
            && !(2..=self.episodes_per_round).contains(&m)
        {
            return bad(format!(
                "episodes_per_match: {m} is not in 2..={} (one episode per seat, at most a round)",
                self.episodes_per_round
            ));
        }
        if self.matches_per_round() > MAX_MATCHES_PER_ROUND {
            return bad(format!(
                "episodes_per_match: {} matches per round is more than {MAX_MATCHES_PER_ROUND}; raise it",
                self.matches_per_round()
            ));
        }
        // The learning agents and each main agent's only snapshot stay, and so does the
        // snapshot just taken: one more leaves a snapshot to evict.
        let least = self.num_agents() + self.main_agents + 1;
        if let Some(cap) = self.max_members
            && cap < least
        {
            return bad(format!(
                "max_members: {cap} leaves no snapshot to evict; it must be at least {least} \
                 (the {} learning agents, a snapshot per main agent and one more)",
                self.num_agents()
            ));
        }
        if self.snapshot_max_episodes < self.snapshot_min_episodes {
            return bad("snapshot_max_episodes: below snapshot_min_episodes".into());
        }
        if !(self.snapshot_win_rate > 0.0 && self.snapshot_win_rate <= 1.0) {
            return bad(format!("snapshot_win_rate: {} is not in (0, 1]", self.snapshot_win_rate));
        }
        for (name, v) in [
            ("league_exploiter_reset", self.league_exploiter_reset),
            ("exploiter_alpha", self.exploiter_alpha),
            ("exploiter_discount", self.exploiter_discount),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(format!("{name}: {v} is not in [0, 1]"));
            }
        }
        self.learner.validate().map_err(Error::Learner)
    }
}

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
    /// A snapshot's policy (both seats); `None` for a learning agent. Shared, so that a
    /// checkpoint's copy of the state costs O(members), not O(members · policy).
    pub policy: Option<Arc<TabularPolicy>>,
}

/// A learning agent: one Q-learner per seat.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AgentState {
    role: Role,
    /// Its member id.
    member: usize,
    learners: Vec<QLearnerState>,
    episodes_since_snapshot: u64,
    /// Resets so far (each starts fresh learners with new seeds).
    generation: u64,
}

/// The league's state: what a checkpoint saves.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct LeagueState {
    round: usize,
    members: Vec<LeagueMember>,
    agents: Vec<AgentState>,
    win_rates: WinRates,
    elo: Elo,
    matches_by_role: BTreeMap<Role, u64>,
    /// Mean payoff of member `i` against member `j` (both seats averaged) from the last
    /// evaluation point; `None` where not evaluated since the members last changed. Shared:
    /// it changes at evaluation points only, and a checkpoint's copy of the state should
    /// not copy members² numbers every round.
    #[serde(default)]
    payoffs: Arc<Vec<Vec<Option<f64>>>>,
    /// Members evicted so far (`max_members`); the next member's id is members + this.
    #[serde(default)]
    evicted: usize,
    /// Per learning agent, for main agents, the running sum of every snapshot's policy it
    /// has taken, evicted ones included (its average policy without re-aggregating them each
    /// round); `None` for exploiters. Empty in checkpoints from before the cap, which had
    /// every snapshot among their members to rebuild it from.
    #[serde(default)]
    snapshot_sums: Vec<Option<Arc<MixtureSum>>>,
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
    /// The id the next member to join gets.
    fn next_id(&self) -> usize {
        self.members.len() + self.evicted
    }
}

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
    /// Its member id ([`LeagueMember::id`]).
    pub member: usize,
    /// The opponent's member id ([`LeagueMember::id`]).
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

fn one() -> u64 {
    1
}

fn is_zero(n: &usize) -> bool {
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
type Draw = Option<(f64, f64, f64)>;

/// What happened in a round besides training.
#[derive(Default)]
struct RoundEvents {
    matches: Vec<LeagueMatch>,
    snapshots: Vec<usize>,
    win_rate_snapshots: Vec<usize>,
    resets: Vec<usize>,
    evicted: Vec<usize>,
    hardness: Option<PfspHardness>,
    batch_elo: Vec<f64>,
    evaluated_entries: usize,
}

impl RoundEvents {
    /// Count one match of `agent` against `opponent`, merging it into the line of the same
    /// agent, opponent and branch.
    fn add_match(&mut self, m: LeagueMatch) {
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

    fn add_draw(&mut self, draw: Draw) {
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
    /// [`LeagueState::members`] order (ids in `member_ids`), at round 0 and at evaluation
    /// points only (every round it would make the reports grow as rounds × members); empty
    /// between them. [`LeagueState::elo`] has the current ratings.
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

/// An AlphaStar league on a 2-player game's tree.
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, GameTree};
/// use metagame_populations::{run_loop, League, LeagueConfig, LeagueReport, RunLimits};
///
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let config = LeagueConfig::builder().episodes_per_round(2000).episodes_per_match(500).seed(1).build()?;
/// let mut league = League::new(&tree, config)?;
/// let run = run_loop(&mut league, &RunLimits::iterations(5), &mut ())?;
/// let last: LeagueReport = run.reports.last().unwrap().details.get().unwrap();
/// // Four matches per learning agent and round.
/// assert_eq!(last.matches.iter().map(|m| m.count).sum::<u64>(), 3 * 4);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct League<'t> {
    tree: &'t GameTree,
    /// The tree matches are played, learned and scored on: `tree` with win/loss returns
    /// when `outcome = "win"`, else `None` (the game's own).
    wins: Option<GameTree>,
    config: LeagueConfig,
    state: LeagueState,
    learners: Vec<[QLearner; 2]>,
    evaluator: Box<dyn MatchEvaluator>,
    trainer: Box<dyn LeagueTrainer>,
    /// When a round in progress gives up (checked between matches).
    cutoff: Cutoff,
    /// The last committed round's report.
    last: IterationReport,
}

/// Learning agent `agent`'s matchmaking stream in match `k` of `round` (Philox, keyed; see
/// [`MatchmakingRng`]). Its uniforms by purpose: the first the main agent's branch, the
/// second the main agent chosen, the third the matchmaker's draw, the fourth the reset.
fn agent_rng(seed: u64, round: usize, k: u64, agent: usize) -> MatchmakingRng {
    MatchmakingRng::new(seed, ((round as u64) << 20) | k, agent as u32)
}

/// The fourth uniform of `agent`'s stream in match `k` of `round`: whether a league
/// exploiter resets.
fn reset_draw(seed: u64, round: usize, k: u64, agent: usize) -> f64 {
    let mut rng = agent_rng(seed, round, k, agent);
    (0..3).for_each(|_| {
        rng.next_uniform();
    });
    rng.next_uniform()
}

/// The purpose of the learners' seeds ([`learner_seed`]).
const LEARNERS: u32 = u32::from_be_bytes(*b"lrnr");

/// The purpose of the seeds of an evaluation point's payoff entries ([`derive_seed`] with
/// the round).
const ENTRIES: u32 = u32::from_be_bytes(*b"entr");

/// The seed of learning agent `agent`'s learner at `seat` after `generation` resets (0 for
/// the agent's first learners): [`derive_seed`] of the league's seed with these three.
pub fn learner_seed(seed: u64, agent: usize, seat: usize, generation: u64) -> u64 {
    derive_seed(seed, LEARNERS, &[agent as u64, seat as u64, generation])
}

/// The smallest and largest utility of any player of `tree`: the range match results are
/// mapped from.
fn result_range(tree: &GameTree) -> (f64, f64) {
    (0..tree.num_players())
        .map(|p| tree.utility_range(PlayerId(p)))
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (l, h)| (lo.min(l), hi.max(h)))
}

/// `u` mapped from `range` to [0, 1].
fn to_score(u: f64, range: (f64, f64)) -> f64 {
    ((u - range.0) / (range.1 - range.0).max(f64::MIN_POSITIVE)).clamp(0.0, 1.0)
}

/// `a`'s result against `b` on `tree` (the match tree): its expected utility at each seat
/// mapped from `range` (the tree's [`result_range`]) to [0, 1], averaged over the seats.
fn score(tree: &GameTree, range: (f64, f64), a: &TabularPolicy, b: &TabularPolicy) -> Result<f64> {
    let first = metagame_games::expected_returns(tree, &[a, b])?[0];
    let second = metagame_games::expected_returns(tree, &[b, a])?[1];
    Ok(0.5 * (to_score(first, range) + to_score(second, range)))
}

impl<'t> League<'t> {
    /// A new league: the learning agents with fresh learners, and a snapshot of each main
    /// agent's initial (uniform) policy as the first historical players.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for settings out of range or a game that is not 2-player.
    pub fn new(tree: &'t GameTree, config: LeagueConfig) -> Result<Self> {
        // Iteration 0 is the construction: its wall time is the report's.
        let started = Instant::now();
        config.validate()?;
        if tree.num_players() != 2 {
            return Err(Error::Config(format!(
                "a league needs a 2-player game, {} has {}",
                tree.name(),
                tree.num_players()
            )));
        }
        let wins = config.outcome.own_tree(tree);
        let play = wins.as_ref().unwrap_or(tree);
        let roles = std::iter::repeat_n(Role::MainAgent, config.main_agents)
            .chain(std::iter::repeat_n(Role::MainExploiter, config.main_exploiters))
            .chain(std::iter::repeat_n(Role::LeagueExploiter, config.league_exploiters));
        let mut members = Vec::new();
        let mut agents = Vec::new();
        let mut learners = Vec::new();
        for (i, role) in roles.enumerate() {
            members.push(LeagueMember { id: i, role, agent: i, snapped_at: None, policy: None });
            let pair = fresh_learners(play, &config, i, 0)?;
            agents.push(AgentState {
                role,
                member: i,
                learners: pair.iter().map(QLearner::save).collect(),
                episodes_since_snapshot: 0,
                generation: 0,
            });
            learners.push(pair);
        }
        let uniform = TabularPolicy::uniform(tree);
        for (i, a) in agents.iter().enumerate() {
            if a.role == Role::MainAgent {
                members.push(LeagueMember {
                    id: members.len(),
                    role: Role::MainAgent,
                    agent: i,
                    snapped_at: Some(0),
                    policy: Some(Arc::new(uniform.clone())),
                });
            }
        }
        let win_rates = WinRates::new(WinRatesConfig::default(), members.len());
        let mut state = LeagueState {
            round: 0,
            elo: Elo::new(EloConfig::default(), members.len()),
            members,
            agents,
            win_rates,
            matches_by_role: BTreeMap::new(),
            payoffs: Arc::default(),
            evicted: 0,
            snapshot_sums: Vec::new(),
        };
        state.snapshot_sums = snapshot_sums_of_members(tree, &state)?;
        let last = IterationReport::new(0, vec![state.members.len()], 0.0, None);
        let mut league = Self::with_parts(tree, wins, config, state, learners, last)?;
        let mut report = league.report(0, 0, PhaseTimes::default(), RoundEvents::default())?;
        report.elapsed_s = started.elapsed().as_secs_f64();
        league.last = report;
        Ok(league)
    }

    /// Continue from a saved state and the run's reports so far.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the state does not fit the tree or the config;
    /// [`Error::SavedState`] for reports that are not the rounds 0 to the state's.
    pub fn resume(
        tree: &'t GameTree,
        config: LeagueConfig,
        mut state: LeagueState,
        reports: &[IterationReport],
    ) -> Result<Self> {
        config.validate()?;
        crate::checkpoint::check_reports(reports, 0, state.round)?;
        // INVARIANT: check_reports saw round + 1 ≥ 1 reports.
        let last = reports.last().expect("a report").clone();
        let n = state.members.len();
        if state.agents.len() != config.num_agents()
            || n < state.agents.len()
            || state.elo.num_members() != n
            || state.win_rates.num_members() != n
            || state.agents.iter().enumerate().any(|(a, x)| x.member != a || state.members[a].agent != a)
        {
            return Err(Error::Config("the saved league has other agents than the config".into()));
        }
        if let Some(cap) = config.max_members
            && n > cap
        {
            return Err(Error::Config(format!(
                "the saved league has {n} members, more than max_members = {cap}"
            )));
        }
        if state.evicted == 0 {
            // Without evictions ids are positions (checkpoints from before ids have none).
            state.members.iter_mut().enumerate().for_each(|(i, m)| m.id = i);
        } else if state.members.windows(2).any(|w| w[0].id >= w[1].id)
            || state.members.last().is_some_and(|m| m.id >= state.next_id())
        {
            return Err(Error::Config(
                "the saved league's member ids are not in the order they joined".into(),
            ));
        }
        if state.snapshot_sums.is_empty() {
            if state.evicted > 0 {
                return Err(Error::Config(
                    "the saved league has evicted members but no snapshot sums".into(),
                ));
            }
            state.snapshot_sums = snapshot_sums_of_members(tree, &state)?;
        }
        let sums_fit = state.snapshot_sums.len() == state.agents.len()
            && state.agents.iter().zip(&state.snapshot_sums).all(|(a, sum)| match sum {
                Some(sum) => a.role == Role::MainAgent && sum.fits(tree),
                None => a.role != Role::MainAgent,
            });
        if !sums_fit {
            return Err(Error::Config(
                "the saved league's snapshot sums do not fit its agents and game".into(),
            ));
        }
        let wins = config.outcome.own_tree(tree);
        let play = wins.as_ref().unwrap_or(tree);
        let learners = state
            .agents
            .iter()
            .map(|a| {
                let mut it =
                    a.learners.iter().cloned().map(|s| QLearner::restore(play, s).map_err(Error::Learner));
                Ok([
                    it.next().ok_or_else(|| Error::Config("a saved agent without learners".into()))??,
                    it.next().ok_or_else(|| Error::Config("a saved agent without learners".into()))??,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        Self::with_parts(tree, wins, config, state, learners, last)
    }

    /// A league of these parts with the default evaluator and trainer.
    fn with_parts(
        tree: &'t GameTree,
        wins: Option<GameTree>,
        config: LeagueConfig,
        state: LeagueState,
        learners: Vec<[QLearner; 2]>,
        last: IterationReport,
    ) -> Result<Self> {
        let (evaluator, trainer) = (Box::new(ExactEvaluator), Box::new(LocalTrainer));
        let cutoff = Cutoff::default();
        Ok(Self { tree, wins, config, state, learners, evaluator, trainer, cutoff, last })
    }

    /// The tree matches are trained, played and scored on (see [`Outcome`]).
    pub fn match_tree(&self) -> &GameTree {
        self.wins.as_ref().unwrap_or(self.tree)
    }

    /// The win-rate table among all members, in [`LeagueState::members`] order: entry
    /// `[i][j]` is how often member `i` beats member `j` (ties ½), `None` for pairs that
    /// never played.
    pub fn win_rate_table(&self) -> Vec<Vec<Option<f64>>> {
        let w = &self.state.win_rates;
        let n = self.state.members.len();
        (0..n).map(|i| (0..n).map(|j| (w.games(i, j) > 0.0).then(|| w.win_rate(i, j))).collect()).collect()
    }

    /// The state (what a checkpoint saves).
    pub fn state(&self) -> &LeagueState {
        &self.state
    }

    /// The last committed round's report (round 0's at the start).
    pub fn last_report(&self) -> &IterationReport {
        &self.last
    }

    /// The current policy of learning agent `agent` (its seat-0 learner's rows at seat 0,
    /// its seat-1 learner's at seat 1).
    pub fn agent_policy(&self, agent: usize) -> TabularPolicy {
        combined(self.tree, &self.learners[agent])
    }

    fn member_policy<'a>(&'a self, current: &'a [TabularPolicy], member: usize) -> &'a TabularPolicy {
        let m = &self.state.members[member];
        match &m.policy {
            Some(p) => p.as_ref(),
            None => &current[m.agent],
        }
    }

    /// Member ids of the historical players, optionally only of one role or one agent.
    fn historical(&self, role: Option<Role>, agent: Option<usize>) -> Vec<usize> {
        (0..self.state.members.len())
            .filter(|&i| {
                let m = &self.state.members[i];
                m.snapped_at.is_some()
                    && role.is_none_or(|r| m.role == r)
                    && agent.is_none_or(|a| m.agent == a)
            })
            .collect()
    }

    fn main_agent_members(&self) -> Vec<usize> {
        self.state.agents.iter().filter(|a| a.role == Role::MainAgent).map(|a| a.member).collect()
    }

    /// PFSP over `candidates` with `weighting`, drawn from `rng`, and the draw's hardness.
    fn pfsp(
        &self,
        me: usize,
        candidates: &[usize],
        weighting: PfspWeighting,
        rng: &mut MatchmakingRng,
    ) -> (usize, Draw) {
        let request = MatchRequest::new(me, candidates, &self.state.win_rates);
        self.weighted_draw(&Pfsp::new(weighting), &request, rng)
    }

    /// One draw of `matchmaker` for `request` and its hardness: `me`'s win rate against the
    /// opponent chosen, its expected win rate under the draw's distribution, and its mean
    /// win rate against the candidates.
    fn weighted_draw(
        &self,
        matchmaker: &dyn Matchmaker,
        request: &MatchRequest<'_>,
        rng: &mut MatchmakingRng,
    ) -> (usize, Draw) {
        // As `Matchmaker::choose` with one draw, keeping the probabilities.
        let probabilities = matchmaker.probabilities(request);
        let candidates = request.candidates();
        let chosen = candidates[rng.sample(&probabilities)];
        let rates = request.learner_win_rates();
        let expected = probabilities.iter().zip(&rates).map(|(p, x)| p * x).sum();
        let mean = rates.iter().sum::<f64>() / rates.len().max(1) as f64;
        let me = request.learner();
        (chosen, Some((self.state.win_rates.win_rate(me, chosen), expected, mean)))
    }

    /// The opponent (a member id) of learning agent `agent` in match `k` of this round, by
    /// its role's rule, the branch of the rule that chose it, and the draw's hardness when a
    /// weighted rule drew it.
    fn choose_opponent(&self, agent: usize, k: u64) -> (usize, Branch, Draw) {
        let (seed, round) = (self.config.seed, self.state.round);
        let me = self.state.agents[agent].member;
        let mut rng = agent_rng(seed, round, k, agent);
        let coin = rng.next_uniform();
        let main_draw = rng.next_uniform();
        let wr = |other| self.state.win_rates.win_rate(me, other);
        let mains = self.main_agent_members();
        let random_main = mains[((main_draw * mains.len() as f64) as usize).min(mains.len() - 1)];
        let role = self.state.agents[agent].role;
        if let Some(config) = self.config.matchmaking.of(role) {
            let (chosen, draw) = self.configured_choice(me, role, config, &mut rng);
            return (chosen, Branch::Configured, draw);
        }
        match role {
            Role::MainAgent => {
                let all = self.historical(None, None);
                if coin < 0.5 && !all.is_empty() {
                    let (chosen, draw) = self.pfsp(me, &all, PfspWeighting::Squared, &mut rng);
                    return (chosen, Branch::Pfsp, draw);
                }
                let main_agent = self.state.members[random_main].agent;
                let branch = if coin < 0.5 {
                    // No history yet: the PFSP branch has nobody to choose from.
                    Branch::SelfPlay
                } else if coin < 0.65 {
                    // Verification: historical main exploiters that beat us.
                    let exploiters = self.historical(Some(Role::MainExploiter), None);
                    if !exploiters.is_empty() && exploiters.iter().map(|&e| wr(e)).fold(1.0, f64::min) < 0.3 {
                        let (chosen, draw) = self.pfsp(me, &exploiters, PfspWeighting::Squared, &mut rng);
                        return (chosen, Branch::Verification, draw);
                    }
                    // Forgetting: the chosen main agent's snapshots up to the last one our win
                    // rate increased at (AlphaStar's remove_monotonic_suffix: none if it never does).
                    let mut snaps = self.historical(Some(Role::MainAgent), Some(main_agent));
                    let keep = (1..snaps.len())
                        .rev()
                        .find(|&i| wr(snaps[i - 1]) < wr(snaps[i]))
                        .map_or(0, |i| i + 1);
                    snaps.truncate(keep);
                    if !snaps.is_empty() && snaps.iter().map(|&s| wr(s)).fold(1.0, f64::min) < 0.7 {
                        let (chosen, draw) = self.pfsp(me, &snaps, PfspWeighting::Squared, &mut rng);
                        return (chosen, Branch::Verification, draw);
                    }
                    Branch::Verification
                } else {
                    Branch::SelfPlay
                };
                // Self-play against the chosen main agent, or its snapshots when it beats us.
                let snaps = self.historical(Some(Role::MainAgent), Some(main_agent));
                if wr(random_main) > 0.3 || snaps.is_empty() {
                    (random_main, branch, None)
                } else {
                    let (chosen, draw) = self.pfsp(me, &snaps, PfspWeighting::Variance, &mut rng);
                    (chosen, branch, draw)
                }
            }
            Role::MainExploiter => {
                let snaps =
                    self.historical(Some(Role::MainAgent), Some(self.state.members[random_main].agent));
                if wr(random_main) > 0.1 || snaps.is_empty() {
                    (random_main, Branch::Exploit, None)
                } else {
                    let (chosen, draw) = self.pfsp(me, &snaps, PfspWeighting::Variance, &mut rng);
                    (chosen, Branch::Exploit, draw)
                }
            }
            Role::LeagueExploiter => {
                let all = self.historical(None, None);
                if all.is_empty() {
                    (random_main, Branch::History, None)
                } else {
                    let (chosen, draw) = self.pfsp(me, &all, PfspWeighting::LinearCapped, &mut rng);
                    (chosen, Branch::History, draw)
                }
            }
        }
    }

    /// The opponent a configured matchmaker draws for `me` (a learning agent of `role`)
    /// among the role's candidates: every historical player and the main agents for main
    /// agents and league exploiters; the main agents and their snapshots for main
    /// exploiters. Elo matchmaking predicts with the league's online Elo.
    fn configured_choice(
        &self,
        me: usize,
        role: Role,
        config: &MatchmakingConfig,
        rng: &mut MatchmakingRng,
    ) -> (usize, Draw) {
        let candidates = self.configured_candidates(role);
        let request = MatchRequest::new(me, &candidates, &self.state.win_rates).with_ratings(&self.state.elo);
        self.weighted_draw(config.matchmaker().as_ref(), &request, rng)
    }

    /// The candidates of a configured matchmaker for a learning agent of `role` (see
    /// [`League::configured_choice`]), in member order.
    fn configured_candidates(&self, role: Role) -> Vec<usize> {
        let mains = self.main_agent_members();
        let mut candidates: Vec<usize> = match role {
            Role::MainExploiter => {
                let agents: Vec<usize> = mains.iter().map(|&m| self.state.members[m].agent).collect();
                (0..self.state.members.len())
                    .filter(|&i| {
                        let m = &self.state.members[i];
                        m.role == Role::MainAgent && agents.contains(&m.agent)
                    })
                    .collect()
            }
            _ => mains.iter().copied().chain(self.historical(None, None)).collect(),
        };
        candidates.sort_unstable();
        candidates.dedup();
        candidates
    }

    /// One round (see the module docs): `matches_per_round` matches per learning agent.
    /// Nothing is committed unless the whole round succeeds.
    ///
    /// # Errors
    ///
    /// Learner or game errors, wrapped in [`Error::AtIteration`].
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let round = self.state.round + 1;
        // What the round changes, to put back if it fails: the win rates keep a journal, and
        // the rest is small (O(agents + members); policies, payoffs and sums are shared).
        let backup = (
            self.state.round,
            self.state.agents.clone(),
            self.state.elo.clone(),
            self.state.matches_by_role.clone(),
            self.state.members.clone(),
            self.learners.clone(),
            self.state.snapshot_sums.clone(),
            self.state.payoffs.clone(),
            self.state.evicted,
        );
        let evaluates = self.config.eval_every > 0 && round.is_multiple_of(self.config.eval_every);
        self.state.win_rates.open_journal();
        match self.play_round(round, evaluates) {
            Ok(report) => {
                self.state.win_rates.close_journal();
                self.last = report.after(Some(&self.last));
                Ok(&mut self.last)
            }
            Err(e) => {
                self.state.win_rates.roll_back();
                let (r, agents, elo, by_role, members, learners, sums, payoffs, evicted) = backup;
                self.state.round = r;
                self.state.agents = agents;
                self.state.elo = elo;
                self.state.matches_by_role = by_role;
                self.state.members = members;
                self.learners = learners;
                self.state.snapshot_sums = sums;
                self.state.payoffs = payoffs;
                self.state.evicted = evicted;
                match e {
                    Error::CutOff => Err(e),
                    e => Err(Error::AtIteration { iteration: round, source: Box::new(e) }),
                }
            }
        }
    }

    /// The round's matches, then its evaluation point when `evaluates`, then its report;
    /// changes the state as it goes (the caller rolls back on error).
    fn play_round(&mut self, round: usize, evaluates: bool) -> Result<IterationReport> {
        let t = Instant::now();
        self.state.round = round;
        let mut events = RoundEvents::default();
        let per_match = self.config.episodes_per_match();
        let mut left = self.config.episodes_per_round;
        let mut k = 0;
        while left > 0 {
            // A round is many matches: the time budget is honoured between them.
            if k > 0 && self.cutoff.passed() {
                return Err(Error::CutOff);
            }
            let episodes = per_match.min(left);
            left -= episodes;
            self.play_match(round, k, episodes, &mut events)?;
            k += 1;
        }
        for (agent, pair) in self.state.agents.iter_mut().zip(&self.learners) {
            agent.learners = pair.iter().map(QLearner::save).collect();
        }
        let mut times = PhaseTimes { oracle_s: t.elapsed().as_secs_f64(), ..PhaseTimes::default() };
        if evaluates {
            let t = Instant::now();
            let (entries, batch_elo) = self.evaluate(round)?;
            events.evaluated_entries = entries;
            events.batch_elo = batch_elo;
            times.evaluation_s = t.elapsed().as_secs_f64();
        }
        let episodes = self.config.episodes_per_round * self.learners.len() as u64;
        self.report(round, episodes, times, events)
    }

    /// A Minimax main exploiter's shaping against member `opponent`: the critic for each
    /// exploiter seat is the opponent's values at the other seat — a live main agent's
    /// learned Q-values (`exploiter_critic = "learned"`), else the exact values of the policy
    /// it plays.
    fn minimax_training(
        &self,
        play: &GameTree,
        current: &[TabularPolicy],
        opponent: usize,
    ) -> Result<MinimaxTraining> {
        let member = &self.state.members[opponent];
        let policy = self.member_policy(current, opponent);
        let critic = |seat: usize| -> Result<ValueTable> {
            let main = 1 - seat;
            match (self.config.exploiter_critic, &member.policy) {
                (Critic::Learned, None) => Ok(ValueTable::learned(&self.learners[member.agent][main])),
                _ => ValueTable::exact(play, main, &[policy, policy]).map_err(Error::Learner),
            }
        };
        let config = MinimaxConfig::new(self.config.exploiter_alpha)
            .with_discount(self.config.exploiter_discount)
            .with_shift(self.config.exploiter_shift);
        Ok(MinimaxTraining { config, critics: [critic(0)?, critic(1)?] })
    }

    /// Match `k` of `round`: every learning agent draws an opponent from the league as it
    /// stands, trains `episodes` episodes against it (half at each seat; the agents in
    /// parallel), and then, in agent order, its result enters the win rates and the online
    /// Elo, and it takes a snapshot (and maybe resets) when its rule says so.
    fn play_match(&mut self, round: usize, k: u64, episodes: u64, events: &mut RoundEvents) -> Result<()> {
        let play = match &self.wins {
            Some(t) => t,
            None => self.tree,
        };
        let n = self.learners.len();
        let current: Vec<TabularPolicy> = self.learners.iter().map(|pair| combined(play, pair)).collect();
        let choices: Vec<(usize, Branch, Draw)> = (0..n).map(|a| self.choose_opponent(a, k)).collect();
        let half = episodes / 2;
        let jobs: Vec<TrainingJob> = (0..n)
            .map(|a| {
                let opponent = choices[a].0;
                let minimax = (self.state.agents[a].role == Role::MainExploiter
                    && self.config.exploiter_alpha > 0.0)
                    .then(|| self.minimax_training(play, &current, opponent))
                    .transpose()?;
                Ok(TrainingJob {
                    learners: self.learners[a].clone(),
                    opponent: self.member_policy(&current, opponent).clone(),
                    minimax,
                    episodes: [half, episodes - half],
                    outcome: self.config.outcome,
                })
            })
            .collect::<Result<_>>()?;
        let trained = self.trainer.train_until(play, jobs, &self.cutoff)?;
        if trained.len() != n {
            return Err(Error::Config(format!(
                "the trainer returned {} learning agents for {n}",
                trained.len()
            )));
        }
        let new_policies: Vec<TabularPolicy> = trained.iter().map(|pair| combined(play, pair)).collect();
        let range = result_range(play);
        for (a, &(opponent, branch, draw)) in choices.iter().enumerate() {
            let me = self.state.agents[a].member;
            let s = score(play, range, &new_policies[a], self.member_policy(&current, opponent))?;
            // INVARIANT: a score in [0, 1] (to_score clamps).
            let result = MatchResult::new(me, opponent, s).expect("a score in [0, 1]");
            self.state.win_rates.record(&result);
            self.state.elo.update(&result);
            let ids = (self.state.members[me].id, self.state.members[opponent].id);
            events.add_match(LeagueMatch {
                agent: a,
                member: ids.0,
                opponent: ids.1,
                branch,
                score: s,
                count: 1,
            });
            events.add_draw(draw);
            *self.state.matches_by_role.entry(self.state.agents[a].role).or_default() += 1;
        }
        self.learners = trained;
        for (a, policy) in new_policies.into_iter().enumerate() {
            let agent = &mut self.state.agents[a];
            agent.episodes_since_snapshot += episodes;
            let (me, role, since) = (agent.member, agent.role, agent.episodes_since_snapshot);
            let members = &self.state.members;
            let min_rate = match role {
                Role::MainExploiter => self
                    .state
                    .agents
                    .iter()
                    .filter(|x| x.role == Role::MainAgent)
                    .map(|x| self.state.win_rates.win_rate(me, x.member))
                    .fold(1.0, f64::min),
                _ => (0..members.len())
                    .filter(|&i| members[i].snapped_at.is_some())
                    .map(|i| self.state.win_rates.win_rate(me, i))
                    .fold(1.0, f64::min),
            };
            let by_win_rate = min_rate > self.config.snapshot_win_rate;
            if since < self.config.snapshot_min_episodes
                || !(by_win_rate || since >= self.config.snapshot_max_episodes)
            {
                continue;
            }
            events.snapshots.push(a);
            if by_win_rate {
                events.win_rate_snapshots.push(a);
            }
            if let Some(sum) = &mut self.state.snapshot_sums[a] {
                Arc::make_mut(sum).add(self.tree, &policy, 1.0)?;
            }
            let id = self.state.next_id();
            self.state.members.push(LeagueMember {
                id,
                role,
                agent: a,
                snapped_at: Some(round),
                policy: Some(Arc::new(policy)),
            });
            self.state.win_rates.add_member();
            self.state.elo.add_member();
            if let Some(cap) = self.config.max_members
                && self.state.members.len() > cap
            {
                let newest = self.state.members.len() - 1;
                // validate() keeps a candidate: a cap of at least the agents, a snapshot per
                // main agent and one more.
                let victim = self
                    .eviction_choice(newest)
                    .ok_or_else(|| Error::Config(format!("max_members = {cap}: no snapshot to evict")))?;
                events.evicted.push(self.state.evict(victim));
            }
            let agent = &mut self.state.agents[a];
            agent.episodes_since_snapshot = 0;
            let reset = match role {
                Role::MainAgent => false,
                Role::MainExploiter => true,
                Role::LeagueExploiter => {
                    reset_draw(self.config.seed, round, k, a) < self.config.league_exploiter_reset
                }
            };
            if reset {
                events.resets.push(a);
                agent.generation += 1;
                let generation = agent.generation;
                // A reset agent is a new player: its win rates start again from the prior
                // (AlphaStar's pseudocode keeps the old player's payoff row; here the old
                // rates describe a policy that is gone). Its Elo carries on.
                self.state.win_rates.clear_member(me);
                self.learners[a] = fresh_learners(play, &self.config, a, generation)?;
            }
        }
        Ok(())
    }

    /// The same league with payoff entries evaluated by `evaluator` (default: exact).
    pub fn with_evaluator(mut self, evaluator: Box<dyn MatchEvaluator>) -> Self {
        self.evaluator = evaluator;
        self
    }

    /// The same league with its agents' training run by `trainer` (default [`LocalTrainer`]).
    pub fn with_trainer(mut self, trainer: Box<dyn LeagueTrainer>) -> Self {
        self.trainer = trainer;
        self
    }

    /// An evaluation point on `state`: fill the payoff table among all members through the
    /// evaluator (entries never evaluated, and every entry of a learning agent, whose policy
    /// has changed; `current` holds the learning agents' policies), then fit batch Elo on it.
    /// Returns the ordered entries evaluated and the batch-Elo ratings.
    fn evaluate(&mut self, round: usize) -> Result<(usize, Vec<f64>)> {
        let play = match &self.wins {
            Some(t) => t,
            None => self.tree,
        };
        let current: Vec<TabularPolicy> = self.learners.iter().map(|pair| combined(play, pair)).collect();
        let state = &mut self.state;
        let n = state.members.len();
        let table = Arc::make_mut(&mut state.payoffs);
        table.resize(n, Vec::new());
        for row in table.iter_mut() {
            row.resize(n, None);
        }
        for m in (0..n).filter(|&m| state.members[m].snapped_at.is_none()) {
            table[m].fill(None);
            for row in table.iter_mut() {
                row[m] = None;
            }
        }
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| table[i][j].is_none())
            .collect();
        if !pairs.is_empty() {
            let policies: Vec<&TabularPolicy> =
                state.members.iter().map(|m| m.policy.as_deref().unwrap_or(&current[m.agent])).collect();
            let matchups: Vec<Matchup> = pairs
                .iter()
                .flat_map(|&(i, j)| [Matchup { seats: vec![i, j] }, Matchup { seats: vec![j, i] }])
                .collect();
            let seed = derive_seed(self.config.seed, ENTRIES, &[round as u64]);
            let policies: Vec<&dyn Policy> = policies.iter().map(|&p| p as &dyn Policy).collect();
            let totals = self.evaluator.evaluate_until(
                Arena::tree(play),
                &policies,
                &matchups,
                self.config.episodes_per_entry,
                seed,
                &self.cutoff,
            )?;
            let table = Arc::make_mut(&mut state.payoffs);
            for (k, &(i, j)) in pairs.iter().enumerate() {
                let (a, b) = (totals[2 * k].mean(), totals[2 * k + 1].mean());
                table[i][j] = Some(0.5 * (a[0] + b[1]));
                table[j][i] = Some(0.5 * (a[1] + b[0]));
            }
        }
        // Payoffs as results in [0, 1], as matches score them, one "game" per pair.
        let range = result_range(play);
        let mut results = ndarray::Array2::<f64>::zeros((n, n));
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                results[[i, j]] = to_score(state.payoffs[i][j].unwrap_or(0.0), range);
            }
        }
        let batch = BatchElo::fit(&BatchEloConfig::default(), results.view(), None)?;
        Ok((2 * pairs.len(), batch.ratings().to_vec()))
    }

    fn report(
        &self,
        round: usize,
        episodes: u64,
        mut times: PhaseTimes,
        events: RoundEvents,
    ) -> Result<IterationReport> {
        let t = Instant::now();
        let mut main_nash_conv = Vec::new();
        let mut main_average_nash_conv = Vec::new();
        let mut exploitability = None;
        let mains = self.state.agents.iter().enumerate().filter(|(_, a)| a.role == Role::MainAgent);
        for a in mains.map(|(i, _)| i) {
            let policy = self.agent_policy(a);
            let r = metagame_games::nash_conv_report(self.tree, &[&policy, &policy])?;
            main_nash_conv.push(r.nash_conv);
            // Its snapshots' running sum plus its current policy, uniformly: O(policy size)
            // however many snapshots it has.
            let mut sum = match &self.state.snapshot_sums[a] {
                Some(sum) => MixtureSum::clone(sum),
                None => MixtureSum::new(self.tree),
            };
            sum.add(self.tree, &policy, 1.0)?;
            let average = sum.policy(self.tree)?;
            let r = metagame_games::nash_conv_report(self.tree, &[&average, &average])?;
            if exploitability.is_none() {
                exploitability = r.exploitability;
            }
            main_average_nash_conv.push(r.nash_conv);
        }
        times.nash_conv_s = t.elapsed().as_secs_f64();
        let evaluated = !events.batch_elo.is_empty();
        let listed = round == 0 || evaluated;
        let mut report = IterationReport::new(
            round,
            vec![self.state.members.len()],
            main_average_nash_conv[0],
            exploitability,
        );
        report.episodes = episodes;
        report.times = times;
        report.details = Details::of(&LeagueReport {
            main_nash_conv,
            main_average_nash_conv,
            elo: if listed { self.state.elo.ratings().to_vec() } else { Vec::new() },
            agent_elo: self.state.agents.iter().map(|a| self.state.elo.ratings()[a.member]).collect(),
            matches_by_role: self.state.matches_by_role.clone(),
            members: self.state.members.len(),
            member_ids: if listed && self.state.evicted > 0 {
                self.state.members.iter().map(|m| m.id).collect()
            } else {
                Vec::new()
            },
            evicted: events.evicted,
            evictions: self.state.evicted,
            matches: events.matches,
            pfsp: events.hardness,
            snapshots: events.snapshots,
            win_rate_snapshots: events.win_rate_snapshots,
            resets: events.resets,
            batch_elo: events.batch_elo,
            evaluated_entries: events.evaluated_entries,
        });
        Ok(report)
    }
}

/// Per learning agent, the running sum of its snapshots among `state`'s members (main agents
/// only), added in member order, as the league adds them: exact while no snapshot has been
/// evicted.
fn snapshot_sums_of_members(tree: &GameTree, state: &LeagueState) -> Result<Vec<Option<Arc<MixtureSum>>>> {
    let mut sums: Vec<Option<MixtureSum>> =
        state.agents.iter().map(|a| (a.role == Role::MainAgent).then(|| MixtureSum::new(tree))).collect();
    for m in &state.members {
        if let (Some(policy), Some(Some(sum))) = (&m.policy, sums.get_mut(m.agent)) {
            sum.add(tree, policy, 1.0)?;
        }
    }
    Ok(sums.into_iter().map(|s| s.map(Arc::new)).collect())
}

/// Fresh learners for both seats of agent `agent` at reset `generation`.
fn fresh_learners(
    tree: &GameTree,
    config: &LeagueConfig,
    agent: usize,
    generation: u64,
) -> Result<[QLearner; 2]> {
    let make = |seat| {
        QLearner::new(
            tree,
            seat,
            learner_seed(config.seed, agent, seat, generation),
            config.learner.clone(),
            Start::Fresh,
        )
        .map_err(Error::Learner)
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
    pub learners: [QLearner; 2],
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
/// [`LeagueConfigBuilder::exploiter_critic`]).
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
    /// The learners, saved.
    pub learners: [QLearnerState; 2],
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
    pub fn run(self, tree: &GameTree) -> Result<[QLearner; 2]> {
        self.run_until(tree, &Cutoff::never())
    }

    /// [`run`](TrainingJob::run), giving up with [`Error::CutOff`] once `cutoff` has passed
    /// (checked before each of the learners' batches).
    ///
    /// # Errors
    ///
    /// Learner errors; [`Error::CutOff`].
    pub fn run_until(mut self, tree: &GameTree, cutoff: &Cutoff) -> Result<[QLearner; 2]> {
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
    /// Learners of another game.
    pub fn restore(tree: &GameTree, data: TrainingJobData) -> Result<Self> {
        let [a, b] = data.learners;
        Ok(TrainingJob {
            learners: [
                QLearner::restore(tree, a).map_err(Error::Learner)?,
                QLearner::restore(tree, b).map_err(Error::Learner)?,
            ],
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
    fn train(&self, tree: &GameTree, jobs: Vec<TrainingJob>) -> Result<Vec<[QLearner; 2]>>;

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
    ) -> Result<Vec<[QLearner; 2]>> {
        let _ = cutoff;
        self.train(tree, jobs)
    }
}

/// Every job on the current rayon pool.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalTrainer;

impl LeagueTrainer for LocalTrainer {
    fn train(&self, tree: &GameTree, jobs: Vec<TrainingJob>) -> Result<Vec<[QLearner; 2]>> {
        self.train_until(tree, jobs, &Cutoff::never())
    }

    fn train_until(
        &self,
        tree: &GameTree,
        jobs: Vec<TrainingJob>,
        cutoff: &Cutoff,
    ) -> Result<Vec<[QLearner; 2]>> {
        jobs.into_par_iter().map(|job| job.run_until(tree, cutoff)).collect()
    }
}

/// One policy from a pair of seat learners.
fn combined(tree: &GameTree, pair: &[QLearner; 2]) -> TabularPolicy {
    let mut policy = pair[0].policy();
    policy.copy_player_rows(tree, PlayerId(1), &pair[1].policy());
    policy
}

impl TrainingLoop for League<'_> {
    type State = LeagueState;

    fn name(&self) -> &'static str {
        "league"
    }
    fn step(&mut self) -> Result<&mut IterationReport> {
        League::step(self)
    }
    fn state(&self) -> &LeagueState {
        &self.state
    }
    fn last_report(&self) -> Option<&IterationReport> {
        Some(&self.last)
    }
    fn stop_reason(&self) -> Option<StopReason> {
        None
    }
    fn set_cutoff(&mut self, cutoff: Cutoff) {
        self.cutoff = cutoff;
    }
    /// Members as nodes by id (learning agents as boxes, snapshots as ellipses with their
    /// round, evicted snapshots dotted), snapshot edges (dashed) from each agent to its
    /// snapshots, and for each agent the opponents it trained against with the number of
    /// matches; resets in the agents' labels.
    /// The payoff table among all members from the last evaluation point (member `i`'s mean
    /// payoff against member `j`, both seats averaged), when it covers every member; `None`
    /// without evaluation points or when members joined after the last one.
    fn meta_game(&self) -> Result<Option<NormalFormGame>> {
        let n = self.state.members.len();
        let table = &self.state.payoffs;
        let complete = table.len() == n && table.iter().all(|row| row.len() == n);
        let entry = |i: usize, j: usize| if i == j { Some(0.0) } else { table[i][j] };
        if !complete || (0..n).any(|i| (0..n).any(|j| entry(i, j).is_none())) {
            return Ok(None);
        }
        // INVARIANT: every entry checked above.
        let at = |i: usize, j: usize| entry(i, j).expect("an evaluated entry");
        let a = ndarray::Array2::from_shape_fn((n, n), |(i, j)| at(i, j));
        let b = ndarray::Array2::from_shape_fn((n, n), |(i, j)| at(j, i));
        Ok(Some(NormalFormGame::bimatrix(a, b)?))
    }
    fn lineage_dot(&self, reports: &[IterationReport]) -> Option<String> {
        use std::fmt::Write;
        let mut dot = String::from("digraph league {\n  rankdir=LR;\n");
        for m in &self.state.members {
            let id = m.id;
            let label = match m.snapped_at {
                None => {
                    let resets = self.state.agents[m.agent].generation;
                    format!("{} {} (agent {}; {resets} resets)", m.role.as_str(), id, m.agent)
                }
                Some(r) => format!("{} {} (snapshot of agent {} at round {r})", m.role.as_str(), id, m.agent),
            };
            let shape = if m.snapped_at.is_none() { "box" } else { "ellipse" };
            let _ = writeln!(dot, "  m{id} [label=\"{label}\", shape={shape}];");
            if m.snapped_at.is_some() {
                let _ = writeln!(dot, "  m{} -> m{id} [style=dashed];", self.state.agents[m.agent].member);
            }
        }
        let mut trained: BTreeMap<(usize, usize), u64> = BTreeMap::new();
        let mut evicted = std::collections::BTreeSet::new();
        for l in reports.iter().filter_map(|r| r.details.get::<LeagueReport>()) {
            for m in &l.matches {
                *trained.entry((m.member, m.opponent)).or_default() += m.count;
            }
            evicted.extend(l.evicted);
        }
        // Opponents evicted since: the reports name them, the state has them no more.
        let opponents: std::collections::BTreeSet<usize> = trained.keys().map(|&(_, b)| b).collect();
        for id in evicted.intersection(&opponents) {
            let _ = writeln!(dot, "  m{id} [label=\"member {id} (evicted)\", shape=ellipse, style=dotted];");
        }
        for ((a, b), n) in trained {
            let _ = writeln!(dot, "  m{a} -> m{b} [label=\"{n}\", color=gray40];");
        }
        dot.push_str("}\n");
        Some(dot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagame_games::registry;

    /// With history in the league and no check triggering (every win rate at the 0.5
    /// prior), the main agent's branches come 50/15/35 over many rounds, and the 15%
    /// verification branch falls through to self-play against the main agent.
    #[test]
    fn main_agent_branches_are_50_15_35_when_no_check_triggers() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let mut league = League::new(&tree, LeagueConfig::default()).unwrap();
        // Historical players: the initial snapshot, plus a main-exploiter snapshot.
        league.state.members.push(LeagueMember {
            role: Role::MainExploiter,
            agent: 1,
            snapped_at: Some(0),
            policy: Some(Arc::new(TabularPolicy::uniform(&tree))),
            id: 4,
        });
        league.state.win_rates.add_member();
        let n = 20_000;
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for round in 0..n {
            league.state.round = round;
            let (opponent, branch, _) = league.choose_opponent(0, 0);
            let name = match branch {
                Branch::Pfsp => "pfsp",
                Branch::Verification => {
                    assert_eq!(opponent, 0, "no check triggers: verification plays the main agent");
                    "verification"
                }
                Branch::SelfPlay => {
                    assert_eq!(opponent, 0);
                    "self-play"
                }
                other => panic!("a main agent took branch {other:?}"),
            };
            *counts.entry(name).or_default() += 1;
        }
        for (name, share) in [("pfsp", 0.5), ("verification", 0.15), ("self-play", 0.35)] {
            let f = counts[name] as f64 / n as f64;
            // 4 standard deviations of a binomial share at n = 20 000 is below 0.015.
            assert!((f - share).abs() < 0.015, "{name}: {f} (expected {share})");
        }
    }

    #[test]
    fn squared_pfsp_never_picks_an_opponent_we_always_beat() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let mut league = League::new(&tree, LeagueConfig::default()).unwrap();
        // Member 3 is the initial snapshot; add two more and make us always beat member 3.
        for _ in 0..2 {
            league.state.members.push(LeagueMember {
                role: Role::MainAgent,
                agent: 0,
                snapped_at: Some(0),
                policy: Some(Arc::new(TabularPolicy::uniform(&tree))),
                id: league.state.next_id(),
            });
            league.state.win_rates.add_member();
        }
        for _ in 0..50 {
            league.state.win_rates.record(&MatchResult::win(0, 3));
        }
        for round in 0..5_000 {
            league.state.round = round;
            let (opponent, branch, _) = league.choose_opponent(0, 0);
            if branch == Branch::Pfsp {
                assert_ne!(opponent, 3);
            }
        }
    }
}
