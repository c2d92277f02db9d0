//! League training after AlphaStar (Vinyals et al. 2019, Nature 575, and its pseudocode `multiagent.py`): main agents, main exploiters and
//! league exploiters learn from sampled episodes (tabular Q-learning, one learner per seat),
//! each round against opponents chosen by their role's rule with prioritised fictitious
//! self-play (PFSP); snapshots of them join the league as frozen historical players.
//!
//! One [`League::step`] is one round: every learning agent picks its opponent from the
//! round-start league (randomness from Philox keyed by (seed, round, agent)), trains
//! `episodes_per_round` episodes against it (half at each seat), in parallel (rayon) and
//! independently of the thread count; then, in agent order, the results update the win
//! rates (AlphaStar's 0.99 decay) and the online Elo ratings, and agents that are ready take
//! a snapshot (main exploiters reset at every snapshot, league exploiters with probability
//! `league_exploiter_reset`). A match result is exact: the probability that the agent wins
//! (a tie counting ½) against its opponent, averaged over the two seats, read off the tree.
//!
//! Main exploiters are Minimax Exploiters when `exploiter_alpha > 0`: their reward is shaped
//! by the exact action values of the main agent they target (Bairamian et al. 2024, arXiv:2311.17190, Eq. 3–4).
//!
//! Config (the `league` algorithm's section; every field optional, defaults shown):
//!
//! ```toml
//! main_agents = 1
//! main_exploiters = 1
//! league_exploiters = 1
//! episodes_per_round = 20000        # per learning agent, half at each seat
//! snapshot_min_episodes = 200000    # AlphaStar's 2e9 steps, scaled to the game
//! snapshot_max_episodes = 400000    # AlphaStar's 4e9
//! snapshot_win_rate = 0.7
//! league_exploiter_reset = 0.25
//! exploiter_alpha = 0.0             # > 0: Minimax main exploiters
//! seed = 0
//! eval_every = 10                   # rounds between evaluation points (0: none)
//! episodes_per_entry = 1000         # sampled evaluators only
//! [learner]                         # Q-learning settings (episodes_per_response unused)
//! ```

pub mod matchmaking;
pub mod rating;
pub mod win_rates;

use std::collections::BTreeMap;
use std::time::Instant;

use metagame_games::{
    ExactEvaluator, GameTree, MatchEvaluator, Matchup, NodeKind, NormalFormGame, PlayerId, TabularPolicy,
    reach_probabilities,
};
use metagame_learners::{
    Learner, MinimaxConfig, MinimaxShaping, OpponentSampler, QLearner, QLearnerState, QLearningConfig,
    ShapedLearner, Start, ValueTable,
};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::{Details, IterationReport, PhaseTimes, StopReason};
use crate::settings::{built_by, setters};
use crate::training_loop::TrainingLoop;
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
    snapshot_min_episodes: u64,
    snapshot_max_episodes: u64,
    snapshot_win_rate: f64,
    league_exploiter_reset: f64,
    exploiter_alpha: f64,
    seed: u64,
    eval_every: usize,
    episodes_per_entry: u64,
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
    /// Seed of every random draw. Default 0.
    pub seed: Option<u64>,
    /// Rounds between evaluation points, where the payoff table among all members is filled
    /// through the match evaluator (only entries that are missing or involve a learning
    /// agent) and batch Elo is refitted on it; 0 turns them off. Default 10.
    pub eval_every: Option<usize>,
    /// Episodes per payoff entry when the evaluator samples (exact evaluators ignore it).
    /// Default 1000.
    pub episodes_per_entry: Option<u64>,
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
        "snapshot_min_episodes",
        "snapshot_max_episodes",
        "snapshot_win_rate",
        "league_exploiter_reset",
        "exploiter_alpha",
        "seed",
        "eval_every",
        "episodes_per_entry",
        "learner",
        "matchmaking",
    ];

    setters!(
        main_agents: usize,
        main_exploiters: usize,
        league_exploiters: usize,
        episodes_per_round: u64,
        snapshot_min_episodes: u64,
        snapshot_max_episodes: u64,
        snapshot_win_rate: f64,
        league_exploiter_reset: f64,
        exploiter_alpha: f64,
        seed: u64,
        eval_every: usize,
        episodes_per_entry: u64,
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
            snapshot_min_episodes: self.snapshot_min_episodes.unwrap_or(200_000),
            snapshot_max_episodes: self.snapshot_max_episodes.unwrap_or(400_000),
            snapshot_win_rate: self.snapshot_win_rate.unwrap_or(0.7),
            league_exploiter_reset: self.league_exploiter_reset.unwrap_or(0.25),
            exploiter_alpha: self.exploiter_alpha.unwrap_or(0.0),
            seed: self.seed.unwrap_or(0),
            eval_every: self.eval_every.unwrap_or(10),
            episodes_per_entry: self.episodes_per_entry.unwrap_or(1000),
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
            snapshot_min_episodes: Some(c.snapshot_min_episodes),
            snapshot_max_episodes: Some(c.snapshot_max_episodes),
            snapshot_win_rate: Some(c.snapshot_win_rate),
            league_exploiter_reset: Some(c.league_exploiter_reset),
            exploiter_alpha: Some(c.exploiter_alpha),
            seed: Some(c.seed),
            eval_every: Some(c.eval_every),
            episodes_per_entry: Some(c.episodes_per_entry),
            learner: Some(c.learner),
            // The default (AlphaStar's rule for every role) is written as no table.
            matchmaking: (!c.matchmaking.is_default()).then_some(c.matchmaking),
        }
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
    /// Rounds between evaluation points (0: none).
    pub fn eval_every(&self) -> usize {
        self.eval_every
    }
    /// Seed of every random draw.
    pub fn seed(&self) -> u64 {
        self.seed
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
        if self.main_agents + self.main_exploiters + self.league_exploiters > 64 {
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
        if self.snapshot_max_episodes < self.snapshot_min_episodes {
            return bad("snapshot_max_episodes: below snapshot_min_episodes".into());
        }
        if !(self.snapshot_win_rate > 0.0 && self.snapshot_win_rate <= 1.0) {
            return bad(format!("snapshot_win_rate: {} is not in (0, 1]", self.snapshot_win_rate));
        }
        for (name, v) in [
            ("league_exploiter_reset", self.league_exploiter_reset),
            ("exploiter_alpha", self.exploiter_alpha),
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
    /// Its role (a snapshot keeps its agent's role).
    pub role: Role,
    /// The learning agent it is or was snapped from.
    pub agent: usize,
    /// The round it was snapped at; `None` for the learning agent itself.
    pub snapped_at: Option<usize>,
    /// A snapshot's policy (both seats); `None` for a learning agent.
    pub policy: Option<TabularPolicy>,
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
    /// evaluation point; `None` where not evaluated since the members last changed.
    #[serde(default)]
    payoffs: Vec<Vec<Option<f64>>>,
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

/// One match of a round: a learning agent's training opponent and the exact result.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LeagueMatch {
    /// The learning agent.
    pub agent: usize,
    /// Its member id.
    pub member: usize,
    /// The opponent's member id.
    pub opponent: usize,
    /// How the opponent was chosen.
    pub branch: Branch,
    /// The agent's score after training: its win probability against the opponent, ties
    /// ½, averaged over the seats.
    pub score: f64,
}

/// What happened in a round besides training.
#[derive(Default)]
struct RoundEvents {
    matches: Vec<LeagueMatch>,
    snapshots: Vec<usize>,
    resets: Vec<usize>,
    batch_elo: Vec<f64>,
    evaluated_entries: usize,
}

/// The per-round part of a league's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct LeagueReport {
    /// Exact NashConv of each main agent's current policy (both seats), in agent order.
    pub main_nash_conv: Vec<f64>,
    /// Exact NashConv of each main agent's average policy: the uniform mixture of its
    /// snapshots and its current policy, mixed as behaviour (reach-weighted, as fictitious
    /// self-play averages). A greedy learner's current policy is pure and stays exploitable
    /// in poker; its average is what approaches an equilibrium.
    pub main_average_nash_conv: Vec<f64>,
    /// Online Elo rating per member id (AlphaStar-style exact match results, K = 32).
    pub elo: Vec<f64>,
    /// Matches played so far, per role of the learning agent.
    pub matches_by_role: BTreeMap<Role, u64>,
    /// Members (learning agents and snapshots).
    pub members: usize,
    /// This round's matches, in agent order.
    pub matches: Vec<LeagueMatch>,
    /// Learning agents that added a snapshot this round.
    pub snapshots: Vec<usize>,
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
/// let config = LeagueConfig::builder().episodes_per_round(2000).seed(1).build()?;
/// let mut league = League::new(&tree, config)?;
/// let run = run_loop(&mut league, &RunLimits::iterations(5), &mut ())?;
/// let last: LeagueReport = run.reports.last().unwrap().details.get().unwrap();
/// assert_eq!(last.matches.len(), 3); // one match per learning agent and round
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct League<'t> {
    tree: &'t GameTree,
    config: LeagueConfig,
    state: LeagueState,
    learners: Vec<[QLearner; 2]>,
    evaluator: Box<dyn MatchEvaluator>,
    trainer: Box<dyn LeagueTrainer>,
    /// The last committed round's report.
    last: IterationReport,
}

/// Learning agent `agent`'s matchmaking stream in `round` (Philox, keyed; see
/// [`MatchmakingRng`]). Its uniforms by purpose: the first the main agent's branch, the
/// second the main agent chosen, the third the matchmaker's draw, the fourth the reset.
fn agent_rng(seed: u64, round: usize, agent: usize) -> MatchmakingRng {
    MatchmakingRng::new(seed, round as u64, agent as u32)
}

/// The fourth uniform of `agent`'s stream in `round`: whether a league exploiter resets.
fn reset_draw(seed: u64, round: usize, agent: usize) -> f64 {
    let mut rng = agent_rng(seed, round, agent);
    (0..3).for_each(|_| {
        rng.next_uniform();
    });
    rng.next_uniform()
}

fn learner_seed(seed: u64, agent: usize, seat: usize, generation: u64) -> u64 {
    seed ^ ((agent as u64) << 40) ^ ((seat as u64) << 56) ^ generation.wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// The probability that `seat` wins (a tie counting ½) when `profile` is played.
fn win_probability(tree: &GameTree, profile: &[&TabularPolicy], seat: usize) -> Result<f64> {
    let reach = reach_probabilities(tree, profile, None)?;
    let mut p = 0.0;
    for (node, &r) in reach.iter().enumerate() {
        if tree.node_kind(node) == NodeKind::Terminal {
            let u = tree.terminal_utilities(node);
            let other = u[1 - seat];
            p += r * if u[seat] > other {
                1.0
            } else if u[seat] == other {
                0.5
            } else {
                0.0
            };
        }
    }
    Ok(p)
}

/// `a`'s score against `b`: its win probability averaged over the two seats.
fn score(tree: &GameTree, a: &TabularPolicy, b: &TabularPolicy) -> Result<f64> {
    Ok(0.5 * (win_probability(tree, &[a, b], 0)? + win_probability(tree, &[b, a], 1)?))
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
        let roles = std::iter::repeat_n(Role::MainAgent, config.main_agents)
            .chain(std::iter::repeat_n(Role::MainExploiter, config.main_exploiters))
            .chain(std::iter::repeat_n(Role::LeagueExploiter, config.league_exploiters));
        let mut members = Vec::new();
        let mut agents = Vec::new();
        let mut learners = Vec::new();
        for (i, role) in roles.enumerate() {
            members.push(LeagueMember { role, agent: i, snapped_at: None, policy: None });
            let pair = fresh_learners(tree, &config, i, 0)?;
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
                    role: Role::MainAgent,
                    agent: i,
                    snapped_at: Some(0),
                    policy: Some(uniform.clone()),
                });
            }
        }
        let win_rates = WinRates::new(WinRatesConfig::default(), members.len());
        let state = LeagueState {
            round: 0,
            elo: Elo::new(EloConfig::default(), members.len()),
            members,
            agents,
            win_rates,
            matches_by_role: BTreeMap::new(),
            payoffs: Vec::new(),
        };
        let last = IterationReport::new(0, vec![state.members.len()], 0.0, None);
        let mut league = Self::with_parts(tree, config, state, learners, last);
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
        state: LeagueState,
        reports: &[IterationReport],
    ) -> Result<Self> {
        config.validate()?;
        crate::checkpoint::check_reports(reports, 0, state.round)?;
        // INVARIANT: check_reports saw round + 1 ≥ 1 reports.
        let last = reports.last().expect("a report").clone();
        let expected = config.main_agents + config.main_exploiters + config.league_exploiters;
        if state.agents.len() != expected || state.elo.num_members() != state.members.len() {
            return Err(Error::Config("the saved league has other agents than the config".into()));
        }
        let learners = state
            .agents
            .iter()
            .map(|a| {
                let mut it =
                    a.learners.iter().cloned().map(|s| QLearner::restore(tree, s).map_err(Error::Learner));
                Ok([
                    it.next().ok_or_else(|| Error::Config("a saved agent without learners".into()))??,
                    it.next().ok_or_else(|| Error::Config("a saved agent without learners".into()))??,
                ])
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::with_parts(tree, config, state, learners, last))
    }

    /// A league of these parts with the default evaluator and trainer.
    fn with_parts(
        tree: &'t GameTree,
        config: LeagueConfig,
        state: LeagueState,
        learners: Vec<[QLearner; 2]>,
        last: IterationReport,
    ) -> Self {
        let (evaluator, trainer) = (Box::new(ExactEvaluator), Box::new(LocalTrainer));
        Self { tree, config, state, learners, evaluator, trainer, last }
    }

    /// The win-rate table among all members: entry `[i][j]` is how often member `i` beats
    /// member `j` (ties ½), `None` for pairs that never played.
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
            Some(p) => p,
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

    /// PFSP over `candidates` with `weighting`, drawn from `rng`.
    fn pfsp(
        &self,
        me: usize,
        candidates: &[usize],
        weighting: PfspWeighting,
        rng: &mut MatchmakingRng,
    ) -> usize {
        let request = MatchRequest::new(me, candidates, &self.state.win_rates);
        Pfsp::new(weighting).choose(&request, rng, 1)[0]
    }

    /// The opponent (a member id) of learning agent `agent` this round, by its role's rule,
    /// and the branch of the rule that chose it.
    fn choose_opponent(&self, agent: usize) -> (usize, Branch) {
        let (seed, round) = (self.config.seed, self.state.round);
        let me = self.state.agents[agent].member;
        let mut rng = agent_rng(seed, round, agent);
        let coin = rng.next_uniform();
        let main_draw = rng.next_uniform();
        let wr = |other| self.state.win_rates.win_rate(me, other);
        let mains = self.main_agent_members();
        let random_main = mains[((main_draw * mains.len() as f64) as usize).min(mains.len() - 1)];
        let role = self.state.agents[agent].role;
        if let Some(config) = self.config.matchmaking.of(role) {
            return (self.configured_choice(me, role, config, &mut rng), Branch::Configured);
        }
        match role {
            Role::MainAgent => {
                let all = self.historical(None, None);
                if coin < 0.5 && !all.is_empty() {
                    return (self.pfsp(me, &all, PfspWeighting::Squared, &mut rng), Branch::Pfsp);
                }
                let main_agent = self.state.members[random_main].agent;
                let branch = if coin < 0.5 {
                    // No history yet: the PFSP branch has nobody to choose from.
                    Branch::SelfPlay
                } else if coin < 0.65 {
                    // Verification: historical main exploiters that beat us.
                    let exploiters = self.historical(Some(Role::MainExploiter), None);
                    if !exploiters.is_empty() && exploiters.iter().map(|&e| wr(e)).fold(1.0, f64::min) < 0.3 {
                        return (
                            self.pfsp(me, &exploiters, PfspWeighting::Squared, &mut rng),
                            Branch::Verification,
                        );
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
                        return (
                            self.pfsp(me, &snaps, PfspWeighting::Squared, &mut rng),
                            Branch::Verification,
                        );
                    }
                    Branch::Verification
                } else {
                    Branch::SelfPlay
                };
                // Self-play against the chosen main agent, or its snapshots when it beats us.
                let snaps = self.historical(Some(Role::MainAgent), Some(main_agent));
                if wr(random_main) > 0.3 || snaps.is_empty() {
                    (random_main, branch)
                } else {
                    (self.pfsp(me, &snaps, PfspWeighting::Variance, &mut rng), branch)
                }
            }
            Role::MainExploiter => {
                let snaps =
                    self.historical(Some(Role::MainAgent), Some(self.state.members[random_main].agent));
                if wr(random_main) > 0.1 || snaps.is_empty() {
                    (random_main, Branch::Exploit)
                } else {
                    (self.pfsp(me, &snaps, PfspWeighting::Variance, &mut rng), Branch::Exploit)
                }
            }
            Role::LeagueExploiter => {
                let all = self.historical(None, None);
                if all.is_empty() {
                    (random_main, Branch::History)
                } else {
                    (self.pfsp(me, &all, PfspWeighting::LinearCapped, &mut rng), Branch::History)
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
    ) -> usize {
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
        let request = MatchRequest::new(me, &candidates, &self.state.win_rates).with_ratings(&self.state.elo);
        config.matchmaker().choose(&request, rng, 1)[0]
    }

    /// One round (see the module docs). Nothing is committed unless the whole round succeeds.
    ///
    /// # Errors
    ///
    /// Learner or game errors, wrapped in [`Error::AtIteration`].
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let round = self.state.round + 1;
        let t = Instant::now();
        let current: Vec<TabularPolicy> = (0..self.learners.len()).map(|a| self.agent_policy(a)).collect();
        let (opponents, branches): (Vec<usize>, Vec<Branch>) =
            (0..self.learners.len()).map(|a| self.choose_opponent(a)).unzip();
        // Minimax main exploiters: shaped by the exact action values of the main agent they play.
        let alpha = self.config.exploiter_alpha;
        let tree = self.tree;
        let half = self.config.episodes_per_round / 2;
        let rest = self.config.episodes_per_round - half;
        let opponent_policies: Vec<&TabularPolicy> =
            opponents.iter().map(|&o| self.member_policy(&current, o)).collect();
        let jobs: Vec<TrainingJob> = self
            .state
            .agents
            .iter()
            .zip(&opponent_policies)
            .zip(&self.learners)
            .map(|((agent, &opponent), pair)| TrainingJob {
                learners: pair.clone(),
                opponent: opponent.clone(),
                minimax_alpha: (agent.role == Role::MainExploiter && alpha > 0.0).then_some(alpha),
                episodes: [half, rest],
            })
            .collect();
        let trained = self
            .trainer
            .train(tree, jobs)
            .map_err(|e| Error::AtIteration { iteration: round, source: Box::new(e) })?;
        if trained.len() != self.learners.len() {
            return Err(Error::AtIteration {
                iteration: round,
                source: Box::new(Error::Config(format!(
                    "the trainer returned {} learning agents for {}",
                    trained.len(),
                    self.learners.len()
                ))),
            });
        }
        let oracle_s = t.elapsed().as_secs_f64();

        // Results, win rates, Elo and snapshots in agent order.
        let mut state = self.state.clone();
        state.round = round;
        let mut elo = state.elo.clone();
        let new_policies: Vec<TabularPolicy> = trained.iter().map(|pair| combined(tree, pair)).collect();
        let mut matches = Vec::with_capacity(opponents.len());
        for (a, &opp) in opponents.iter().enumerate() {
            let me = state.agents[a].member;
            let s = score(tree, &new_policies[a], opponent_policies[a])
                .map_err(|e| Error::AtIteration { iteration: round, source: Box::new(e) })?;
            // INVARIANT: a probability clamped to [0, 1].
            let result = MatchResult::new(me, opp, s.clamp(0.0, 1.0)).expect("a score in [0, 1]");
            state.win_rates.record(&result);
            elo.update(&result);
            matches.push(LeagueMatch { agent: a, member: me, opponent: opp, branch: branches[a], score: s });
            *state.matches_by_role.entry(state.agents[a].role).or_default() += 1;
        }
        let mut learners = trained;
        let (mut snapshots, mut resets) = (Vec::new(), Vec::new());
        for a in 0..learners.len() {
            let agent = &mut state.agents[a];
            agent.episodes_since_snapshot += self.config.episodes_per_round;
            let me = agent.member;
            let role = agent.role;
            let reference: Vec<usize> = match role {
                Role::MainExploiter => {
                    state.agents.iter().filter(|x| x.role == Role::MainAgent).map(|x| x.member).collect()
                }
                _ => (0..state.members.len()).filter(|&i| state.members[i].snapped_at.is_some()).collect(),
            };
            let agent = &state.agents[a];
            let min_rate = reference.iter().map(|&r| state.win_rates.win_rate(me, r)).fold(1.0, f64::min);
            let ready = agent.episodes_since_snapshot >= self.config.snapshot_min_episodes
                && (min_rate > self.config.snapshot_win_rate
                    || agent.episodes_since_snapshot >= self.config.snapshot_max_episodes);
            if !ready {
                continue;
            }
            snapshots.push(a);
            state.members.push(LeagueMember {
                role,
                agent: a,
                snapped_at: Some(round),
                policy: Some(new_policies[a].clone()),
            });
            state.win_rates.add_member();
            elo.add_member();
            let agent = &mut state.agents[a];
            agent.episodes_since_snapshot = 0;
            let reset = match role {
                Role::MainAgent => false,
                Role::MainExploiter => true,
                Role::LeagueExploiter => {
                    reset_draw(self.config.seed, round, a) < self.config.league_exploiter_reset
                }
            };
            if reset {
                resets.push(a);
                agent.generation += 1;
                learners[a] = fresh_learners(tree, &self.config, a, agent.generation)
                    .map_err(|e| Error::AtIteration { iteration: round, source: Box::new(e) })?;
            }
        }
        for (agent, pair) in state.agents.iter_mut().zip(&learners) {
            agent.learners = pair.iter().map(QLearner::save).collect();
        }
        state.elo = elo;
        let mut times = PhaseTimes { oracle_s, ..PhaseTimes::default() };
        let mut events = RoundEvents { matches, snapshots, resets, ..RoundEvents::default() };
        if self.config.eval_every > 0 && round.is_multiple_of(self.config.eval_every) {
            let t = Instant::now();
            let current: Vec<TabularPolicy> = learners.iter().map(|pair| combined(tree, pair)).collect();
            let (entries, batch_elo) = self
                .evaluate(&mut state, &current, round)
                .map_err(|e| Error::AtIteration { iteration: round, source: Box::new(e) })?;
            events.evaluated_entries = entries;
            events.batch_elo = batch_elo;
            times.evaluation_s = t.elapsed().as_secs_f64();
        }
        let old_learners = std::mem::replace(&mut self.learners, learners);
        let old_state = std::mem::replace(&mut self.state, state);
        let episodes = self.config.episodes_per_round * self.learners.len() as u64;
        match self.report(round, episodes, times, events) {
            Ok(report) => {
                self.last = report.after(Some(&self.last));
                Ok(&mut self.last)
            }
            Err(e) => {
                self.learners = old_learners;
                self.state = old_state;
                Err(Error::AtIteration { iteration: round, source: Box::new(e) })
            }
        }
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
    fn evaluate(
        &self,
        state: &mut LeagueState,
        current: &[TabularPolicy],
        round: usize,
    ) -> Result<(usize, Vec<f64>)> {
        let n = state.members.len();
        state.payoffs.resize(n, Vec::new());
        for row in &mut state.payoffs {
            row.resize(n, None);
        }
        for m in (0..n).filter(|&m| state.members[m].snapped_at.is_none()) {
            for k in 0..n {
                state.payoffs[m][k] = None;
                state.payoffs[k][m] = None;
            }
        }
        let policies: Vec<&TabularPolicy> =
            state.members.iter().map(|m| m.policy.as_ref().unwrap_or(&current[m.agent])).collect();
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| state.payoffs[i][j].is_none())
            .collect();
        if !pairs.is_empty() {
            let matchups: Vec<Matchup> = pairs
                .iter()
                .flat_map(|&(i, j)| [Matchup { seats: vec![i, j] }, Matchup { seats: vec![j, i] }])
                .collect();
            let seed = self.config.seed ^ (round as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let totals = self.evaluator.evaluate(
                self.tree,
                &policies,
                &matchups,
                self.config.episodes_per_entry,
                seed,
            )?;
            for (k, &(i, j)) in pairs.iter().enumerate() {
                let (a, b) = (totals[2 * k].mean(), totals[2 * k + 1].mean());
                state.payoffs[i][j] = Some(0.5 * (a[0] + b[1]));
                state.payoffs[j][i] = Some(0.5 * (a[1] + b[0]));
            }
        }
        // Payoffs as scores in [0, 1] over the game's utility range, one "game" per pair.
        let range = (0..self.tree.num_players())
            .map(|p| self.tree.utility_range(PlayerId(p)))
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), (l, h)| (lo.min(l), hi.max(h)));
        let mut wins = ndarray::Array2::<f64>::zeros((n, n));
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let x = state.payoffs[i][j].unwrap_or(0.0);
                wins[[i, j]] = ((x - range.0) / (range.1 - range.0).max(f64::MIN_POSITIVE)).clamp(0.0, 1.0);
            }
        }
        let batch = BatchElo::fit(&BatchEloConfig::default(), wins.view(), None)?;
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
            let mut history: Vec<&TabularPolicy> = self
                .state
                .members
                .iter()
                .filter(|m| m.agent == a)
                .filter_map(|m| m.policy.as_ref())
                .collect();
            history.push(&policy);
            let weights = vec![1.0 / history.len() as f64; history.len()];
            let average = metagame_games::aggregate(self.tree, &history, &weights)?;
            let r = metagame_games::nash_conv_report(self.tree, &[&average, &average])?;
            if exploitability.is_none() {
                exploitability = r.exploitability;
            }
            main_average_nash_conv.push(r.nash_conv);
        }
        times.nash_conv_s = t.elapsed().as_secs_f64();
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
            elo: self.state.elo.ratings().to_vec(),
            matches_by_role: self.state.matches_by_role.clone(),
            members: self.state.members.len(),
            matches: events.matches,
            snapshots: events.snapshots,
            resets: events.resets,
            batch_elo: events.batch_elo,
            evaluated_entries: events.evaluated_entries,
        });
        Ok(report)
    }
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

/// One learning agent's training in a round: its two seat learners (a copy), the member it
/// plays, the Minimax Exploiter's shaping weight (main exploiters with `exploiter_alpha >
/// 0`), and the episodes per seat. [`TrainingJob::run`] is the whole computation, so that a
/// job can run anywhere (another process, a Ray task) and give the same learners.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct TrainingJob {
    /// The agent's learners, seat 0 and seat 1.
    pub learners: [QLearner; 2],
    /// The opponent's policy.
    pub opponent: TabularPolicy,
    /// The reward shaping weight of a Minimax Exploiter, if any.
    pub minimax_alpha: Option<f64>,
    /// Episodes per seat.
    pub episodes: [u64; 2],
}

/// A [`TrainingJob`] as data (the learners saved), for sending to another process.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TrainingJobData {
    /// The learners, saved.
    pub learners: [QLearnerState; 2],
    /// The opponent's policy.
    pub opponent: TabularPolicy,
    /// The Minimax Exploiter's weight.
    pub minimax_alpha: Option<f64>,
    /// Episodes per seat.
    pub episodes: [u64; 2],
}

impl TrainingJob {
    /// Train both seats' learners against the opponent.
    ///
    /// # Errors
    ///
    /// Learner errors.
    pub fn run(mut self, tree: &GameTree) -> Result<[QLearner; 2]> {
        let opponent = &self.opponent;
        for (seat, learner) in self.learners.iter_mut().enumerate() {
            if let Some(alpha) = self.minimax_alpha {
                let values =
                    ValueTable::exact(tree, 1 - seat, &[opponent, opponent]).map_err(Error::Learner)?;
                let shaping = MinimaxShaping::new(tree, seat, &values, &MinimaxConfig::new(alpha))
                    .map_err(Error::Learner)?;
                learner.set_reward_shaping(Some(shaping));
            }
            learner
                .train(tree, &OpponentSampler::fixed(opponent), self.episodes[seat])
                .map_err(Error::Learner)?;
            learner.set_reward_shaping(None);
        }
        Ok(self.learners)
    }

    /// The job as data.
    pub fn save(&self) -> TrainingJobData {
        TrainingJobData {
            learners: [self.learners[0].save(), self.learners[1].save()],
            opponent: self.opponent.clone(),
            minimax_alpha: self.minimax_alpha,
            episodes: self.episodes,
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
            minimax_alpha: data.minimax_alpha,
            episodes: data.episodes,
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
}

/// Every job on the current rayon pool.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalTrainer;

impl LeagueTrainer for LocalTrainer {
    fn train(&self, tree: &GameTree, jobs: Vec<TrainingJob>) -> Result<Vec<[QLearner; 2]>> {
        jobs.into_par_iter().map(|job| job.run(tree)).collect()
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
    /// Members as nodes (learning agents as boxes, snapshots as ellipses with their round),
    /// snapshot edges (dashed) from each agent to its snapshots, and for each agent the
    /// opponents it trained against with the number of rounds; resets in the agents' labels.
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
        for (id, m) in self.state.members.iter().enumerate() {
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
        let mut trained: BTreeMap<(usize, usize), usize> = BTreeMap::new();
        for r in reports {
            for m in r.details.get::<LeagueReport>().iter().flat_map(|l| &l.matches) {
                *trained.entry((m.member, m.opponent)).or_default() += 1;
            }
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
            policy: Some(TabularPolicy::uniform(&tree)),
        });
        league.state.win_rates.add_member();
        let n = 20_000;
        let mut counts: BTreeMap<&'static str, usize> = BTreeMap::new();
        for round in 0..n {
            league.state.round = round;
            let (opponent, branch) = league.choose_opponent(0);
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
                policy: Some(TabularPolicy::uniform(&tree)),
            });
            league.state.win_rates.add_member();
        }
        for _ in 0..50 {
            league.state.win_rates.record(&MatchResult::win(0, 3));
        }
        for round in 0..5_000 {
            league.state.round = round;
            let (opponent, branch) = league.choose_opponent(0);
            if branch == Branch::Pfsp {
                assert_ne!(opponent, 3);
            }
        }
    }
}
