//! The league's settings: [`LeagueConfig`] and its builder, the learning agents' [`Role`]s,
//! the match [`Outcome`] and the roles' configured matchmakers ([`RoleMatchmaking`]).

use metagame_games::GameTree;
use metagame_learners::{Critic, LearnerChoice, LearnerConfig, Shift};
use serde::{Deserialize, Serialize};

use super::matchmaking::MatchmakingConfig;
use crate::error::{Error, Result};
use crate::settings::{built_by, setters};

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
    pub(super) main_agents: usize,
    pub(super) main_exploiters: usize,
    pub(super) league_exploiters: usize,
    pub(super) episodes_per_round: u64,
    pub(super) episodes_per_match: Option<u64>,
    pub(super) outcome: Outcome,
    pub(super) snapshot_min_episodes: u64,
    pub(super) snapshot_max_episodes: u64,
    pub(super) snapshot_win_rate: f64,
    pub(super) league_exploiter_reset: f64,
    pub(super) exploiter_reset_to: ResetTo,
    pub(super) exploiter_alpha: f64,
    pub(super) exploiter_discount: f64,
    pub(super) exploiter_critic: Critic,
    pub(super) exploiter_shift: Shift,
    pub(super) seed: u64,
    pub(super) eval_every: usize,
    pub(super) episodes_per_entry: u64,
    pub(super) max_members: Option<usize>,
    pub(super) learner: LearnerChoice,
    pub(super) matchmaking: RoleMatchmaking,
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
    /// What an exploiter resets to: `"blank"`, fresh learners as at the start (AlphaStar's
    /// reset to its initial agent), or `"main-agent"`, learners that start from the policy
    /// of the main agent of highest Elo (the first on ties) as it is at the reset: its table,
    /// or its network at each seat (for `ppo` the policy network; the critic and the
    /// optimiser start fresh). Default `"blank"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exploiter_reset_to: Option<ResetTo>,
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
    /// The learners' settings (a `[learner]` table): `kind`, a registered learner's name
    /// (`"q-learning"`, `"actor-critic"`; not `"minimax-q"`, whose shaping the league does
    /// itself with `exploiter_alpha`), and that learner's fields. Default Q-learning's
    /// defaults.
    pub learner: Option<LearnerChoice>,
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
        "exploiter_reset_to",
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
        exploiter_reset_to: ResetTo,
        exploiter_alpha: f64,
        exploiter_discount: f64,
        exploiter_critic: Critic,
        exploiter_shift: Shift,
        seed: u64,
        eval_every: usize,
        episodes_per_entry: u64,
        max_members: usize,
        matchmaking: RoleMatchmaking,
    );

    /// Set `learner`: any registered learner's settings (`QLearningConfig`, `ActorCriticConfig`).
    pub fn learner(mut self, config: impl LearnerConfig + 'static) -> Self {
        self.learner = Some(LearnerChoice::new(config));
        self
    }

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
            exploiter_reset_to: self.exploiter_reset_to.unwrap_or_default(),
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
            // The default is written as no field, so that configs from before it read the same.
            exploiter_reset_to: (c.exploiter_reset_to != ResetTo::Blank).then_some(c.exploiter_reset_to),
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
/// What an exploiter resets to (the `exploiter_reset_to` field).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum ResetTo {
    /// Fresh learners, as the agent started.
    #[default]
    Blank,
    /// Learners starting from the strongest main agent's policy at the reset.
    MainAgent,
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
    pub(super) fn own_tree(self, tree: &GameTree) -> Option<GameTree> {
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
        let batch = 2 * self.learner.config().batch_size() as u64;
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
    pub fn learner(&self) -> &LearnerChoice {
        &self.learner
    }
    /// The matchmaker per role.
    pub fn matchmaking(&self) -> &RoleMatchmaking {
        &self.matchmaking
    }

    /// Check every field (the builder does, once).
    pub(super) fn validate(&self) -> Result<()> {
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
        if self.learner.config().shaping().is_some() {
            return bad(format!(
                "learner.kind: `{}` is not a league learner (the league shapes its main exploiters itself: exploiter_alpha)",
                self.learner.name()
            ));
        }
        self.learner.config().validate().map_err(Error::Learner)
    }
}
