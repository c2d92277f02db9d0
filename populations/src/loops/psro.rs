//! Policy-Space Response Oracles (Lanctot et al. 2017, arXiv:1711.00832).
//!
//! Each iteration: an oracle answers every player's opponents' meta-mixture (aggregated
//! into one behaviour policy per player by realisation weighting); the new members join the
//! population; only the new payoff entries are evaluated; the meta-game is solved again;
//! the meta-mixture's exact NashConv is reported. With the `uniform` meta-solver and exact
//! best responses PSRO is fictitious play (XFP); with `nash` on a 2-player zero-sum game it
//! is Double Oracle.
//!
//! # Duplicates
//!
//! A response identical to a member of its player (the player's rows, bit for bit) is not
//! added again: the member is reused, and its provenance lists the iteration and what that
//! response answered ([`Reuse`]). The payoff table gets no new row or column for it and no
//! entry is evaluated. The meta-solver still sees one strategy per response, as it would have
//! without the check (a reused member appears once per response that produced it, its
//! copies sharing the table's entries), and the mixture over the copies is summed onto the
//! member: so `uniform` stays fictitious play (a best response found twice weighs twice) and
//! exact runs report what they reported before. Rectified PSRO asks one response per distinct
//! member with positive probability, so its population (which used to double every
//! iteration with copies) holds only distinct members.

use std::borrow::Cow;
use std::sync::Mutex;
use std::time::Instant;

use metagame_games::philox::derive_seed;
use metagame_games::{
    Arena, ExactEvaluator, GameTree, InfosetId, MatchEvaluator, NodeKind, NormalFormGame, PlayerId, Policy,
    SeatMixture, SequenceValueCache, TabularPolicy, aggregate_into,
};
use metagame_solvers::{Copies, MetaSolver, Solution, SolverMemory};
use serde::{Deserialize, Serialize};

use super::member_values::MemberValues;
use crate::approximate::EstimateSettings;
use crate::error::{Error, Result};
use crate::member_policy::MemberPolicy;
use crate::oracle::{Oracle, ResponseRequest, response_gap};
use crate::payoff_table::PayoffTable;
use crate::population::{PolicyId, Population, Provenance, Reuse, same_rows};
use crate::report::{Details, IterationReport, MetaGameReport, PhaseTimes, StopReason};
use crate::settings::{built_by, setters};
use crate::training_loop::{Cutoff, TrainingLoop};

/// PSRO settings; always valid (built by [`PsroConfig::builder`] or deserialised through it).
///
/// How long a run lasts (iterations, target NashConv, wall time) is not PSRO's but every
/// loop's: [`RunLimits`](crate::RunLimits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PsroConfigBuilder", into = "PsroConfigBuilder")]
pub struct PsroConfig {
    episodes_per_entry: u64,
    entry_stderr_target: Option<f64>,
    max_episodes_per_entry: u64,
    seed: u64,
    rectified: bool,
    symmetric: bool,
    convergence_tolerance: f64,
    warm_start: bool,
    approximate: Option<EstimateSettings>,
}

/// Builder and serde form of [`PsroConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PsroConfigBuilder {
    /// Episodes per payoff entry for sampled evaluators (exact ones ignore it); ≥ 1.
    /// Default 1000 (OpenSpiel's `sims_per_entry` in its example).
    pub episodes_per_entry: Option<u64>,
    /// Sampled evaluators: sample each entry again, `episodes_per_entry` episodes at a time,
    /// until every player's standard error of its mean is at most this or the entry has
    /// `max_episodes_per_entry` episodes. Default: none (every entry `episodes_per_entry`).
    pub entry_stderr_target: Option<f64>,
    /// The cap of `entry_stderr_target`'s sampling. Default 16 × `episodes_per_entry` (at
    /// most the episode cap).
    pub max_episodes_per_entry: Option<u64>,
    /// Seed of every sampled episode and response (keyed with the iteration and entry).
    /// Default 0.
    pub seed: Option<u64>,
    /// PSRO-rN (Balduzzi et al. 2019, arXiv:1901.08106): each member with positive
    /// meta-probability answers only the opponents it beats or ties. 2-player games only.
    /// Default false.
    pub rectified: Option<bool>,
    /// One population shared by all seats (symmetric one-shot games only). Default false.
    pub symmetric: Option<bool>,
    /// Stop as converged once the meta-mixture's exact NashConv is at most this times the
    /// game's payoff scale (its largest absolute terminal utility): the meta-mixture is then
    /// an equilibrium of the whole game, and with exact best responses further iterations
    /// could only add duplicates. 0 turns the check off. Default 1e-12.
    pub convergence_tolerance: Option<f64>,
    /// Start each meta-solve from the previous iteration's meta-mixture, extended to the new
    /// members (iterative meta-solvers only; the others ignore it). `false` starts every solve
    /// from scratch, as OpenSpiel's psro_v2 does. Default true.
    pub warm_start: Option<bool>,
    /// Estimate the meta-mixture's NashConv by trained best responses (Timbers et al. 2022;
    /// a lower bound up to its standard error) after iteration 0, every this many iterations
    /// and the run's last: the only NashConv of a game whose tree is not built, and beside
    /// the exact one where it is. ≥ 1; default none (no estimate).
    pub approximate_every: Option<u64>,
    /// Training episodes per seat's response of the estimate. Default the learner's
    /// `episodes_per_response`.
    pub approximate_budget: Option<u64>,
    /// Evaluation episodes per seat of the estimate. Default 20 000.
    pub approximate_episodes: Option<u64>,
    /// The network learner that trains the estimate's responses, with its default settings.
    /// Default `ppo`.
    pub approximate_learner: Option<String>,
}

impl PsroConfigBuilder {
    /// The names of the fields, as configs spell them.
    pub const FIELDS: &'static [&'static str] = &[
        "episodes_per_entry",
        "entry_stderr_target",
        "max_episodes_per_entry",
        "seed",
        "rectified",
        "symmetric",
        "convergence_tolerance",
        "warm_start",
        "approximate_every",
        "approximate_budget",
        "approximate_episodes",
        "approximate_learner",
    ];

    setters!(
        episodes_per_entry: u64,
        entry_stderr_target: f64,
        max_episodes_per_entry: u64,
        seed: u64,
        rectified: bool,
        symmetric: bool,
        convergence_tolerance: f64,
        warm_start: bool,
        approximate_every: u64,
        approximate_budget: u64,
        approximate_episodes: u64,
        approximate_learner: String,
    );

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<PsroConfig> {
        let episodes_per_entry = self.episodes_per_entry.unwrap_or(1000);
        if episodes_per_entry == 0 || episodes_per_entry > metagame_games::MAX_EPISODES {
            return Err(Error::Config(format!(
                "episodes_per_entry must be in 1..={}, got {episodes_per_entry}",
                metagame_games::MAX_EPISODES
            )));
        }
        if let Some(t) = self.entry_stderr_target
            && !(t > 0.0 && t.is_finite())
        {
            return Err(Error::Config(format!("entry_stderr_target must be a finite number > 0, got {t}")));
        }
        let max_episodes_per_entry = self
            .max_episodes_per_entry
            .unwrap_or(episodes_per_entry.saturating_mul(16).min(metagame_games::MAX_EPISODES));
        if max_episodes_per_entry < episodes_per_entry
            || max_episodes_per_entry > metagame_games::MAX_EPISODES
        {
            return Err(Error::Config(format!(
                "max_episodes_per_entry must be in episodes_per_entry..={}, got {max_episodes_per_entry}",
                metagame_games::MAX_EPISODES
            )));
        }
        let convergence_tolerance = self.convergence_tolerance.unwrap_or(1e-12);
        if !(convergence_tolerance.is_finite() && convergence_tolerance >= 0.0) {
            return Err(Error::Config(format!(
                "convergence_tolerance must be a finite number ≥ 0, got {convergence_tolerance}"
            )));
        }
        let approximate = match self.approximate_every {
            Some(every) => Some(EstimateSettings::new(
                every,
                self.approximate_budget,
                self.approximate_episodes,
                self.approximate_learner.as_deref(),
            )?),
            None => {
                let set = [
                    ("approximate_budget", self.approximate_budget.is_some()),
                    ("approximate_episodes", self.approximate_episodes.is_some()),
                    ("approximate_learner", self.approximate_learner.is_some()),
                ];
                if let Some((field, _)) = set.iter().find(|(_, given)| *given) {
                    return Err(Error::Config(format!(
                        "{field} is read only with approximate_every (how often to estimate)"
                    )));
                }
                None
            }
        };
        Ok(PsroConfig {
            episodes_per_entry,
            entry_stderr_target: self.entry_stderr_target,
            max_episodes_per_entry,
            seed: self.seed.unwrap_or(0),
            rectified: self.rectified.unwrap_or(false),
            symmetric: self.symmetric.unwrap_or(false),
            convergence_tolerance,
            warm_start: self.warm_start.unwrap_or(true),
            approximate,
        })
    }
}

built_by!(PsroConfig, PsroConfigBuilder);

impl From<PsroConfig> for PsroConfigBuilder {
    fn from(c: PsroConfig) -> Self {
        PsroConfigBuilder {
            episodes_per_entry: Some(c.episodes_per_entry),
            entry_stderr_target: c.entry_stderr_target,
            max_episodes_per_entry: c.entry_stderr_target.map(|_| c.max_episodes_per_entry),
            seed: Some(c.seed),
            rectified: Some(c.rectified),
            symmetric: Some(c.symmetric),
            convergence_tolerance: Some(c.convergence_tolerance),
            warm_start: Some(c.warm_start),
            approximate_every: c.approximate.as_ref().map(EstimateSettings::every),
            approximate_budget: c.approximate.as_ref().map(EstimateSettings::budget),
            approximate_episodes: c.approximate.as_ref().map(EstimateSettings::episodes),
            approximate_learner: c.approximate.as_ref().map(|a| a.learner().to_string()),
        }
    }
}

impl PsroConfig {
    /// Episodes per payoff entry (sampled evaluators).
    pub fn episodes_per_entry(&self) -> u64 {
        self.episodes_per_entry
    }
    /// The standard error sampled entries are refined to, if any.
    pub fn entry_stderr_target(&self) -> Option<f64> {
        self.entry_stderr_target
    }
    /// The cap of that refinement, in episodes per entry.
    pub fn max_episodes_per_entry(&self) -> u64 {
        self.max_episodes_per_entry
    }
    /// Seed of sampled episodes and responses.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// PSRO-rN.
    pub fn rectified(&self) -> bool {
        self.rectified
    }
    /// One shared population.
    pub fn symmetric(&self) -> bool {
        self.symmetric
    }
    /// Stop as converged at NashConv ≤ this × the payoff scale (0: never).
    pub fn convergence_tolerance(&self) -> f64 {
        self.convergence_tolerance
    }
    /// Meta-solves start from the previous meta-mixture.
    pub fn warm_start(&self) -> bool {
        self.warm_start
    }
    /// The NashConv estimate's schedule and budget, if any.
    pub fn approximate(&self) -> Option<&EstimateSettings> {
        self.approximate.as_ref()
    }
}

/// Everything a PSRO run needs to continue: what a checkpoint stores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PsroState {
    /// Iterations done.
    pub iteration: usize,
    /// The population.
    pub population: Population,
    /// The empirical meta-game.
    pub table: PayoffTable,
    /// The current meta-mixture per player.
    pub meta_strategies: Vec<Vec<f64>>,
    /// What the meta-solver carries to its next solve ([`MetaSolver::memory`]: the warm LP's
    /// tableau), so that a resumed run solves as the uninterrupted one; absent in older
    /// checkpoints and for solvers that carry nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_solver_memory: Option<SolverMemory>,
}

impl PsroState {
    /// Check that the state is one PSRO on `tree` could have saved: the population, payoff
    /// table and meta-mixtures agree in shape; every policy's rows are distributions and no
    /// player holds two identical members; every payoff entry is estimated, finite and
    /// within the game's range of terminal utilities; the meta-mixtures are distributions;
    /// the reports are those of iterations 0 to `iteration`, the last one with this
    /// population, these meta-mixtures and the NashConv they have (recomputed).
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] naming the first thing that is wrong.
    ///
    /// # Complexity
    ///
    /// One exact NashConv of the meta-mixture, plus a pass over the population and table.
    pub fn check(&self, arena: Arena<'_>, reports: &[IterationReport]) -> Result<()> {
        let bad = |why: String| Error::SavedState(why);
        let n = arena.num_players();
        let tree = arena.game_tree();
        let pop = &self.population;
        if pop.num_players() != n {
            return Err(bad(format!(
                "{} players in the population, {} in {}",
                pop.num_players(),
                n,
                arena.name()
            )));
        }
        let sizes = pop.sizes();
        if sizes.contains(&0) {
            return Err(bad("a player without members".into()));
        }
        if self.table.shape() != sizes {
            return Err(bad(format!(
                "a payoff table of shape {:?} for populations of {sizes:?}",
                self.table.shape()
            )));
        }
        let mut ids = std::collections::HashSet::new();
        for p in players(n) {
            let members = pop.members(p);
            for (k, m) in members.iter().enumerate() {
                let who = format!("member {} of player {}", m.id.0, p.0);
                if m.player != p || !ids.insert(m.id) {
                    return Err(bad(format!("{who} is listed twice or under another player")));
                }
                match (m.policy.as_table(), tree) {
                    (Some(table), Some(tree)) => {
                        table.validate(tree).map_err(|e| bad(format!("{who}: {e}")))?
                    }
                    (Some(_), None) => {
                        return Err(bad(format!("{who} is a table, and the game has no tree")));
                    }
                    (None, _) => {
                        m.policy.policy().map_err(|e| bad(format!("{who}: {e}")))?;
                    }
                }
                let prov = &m.provenance;
                let iterations =
                    std::iter::once(prov.iteration).chain(prov.reused.iter().map(|r| r.iteration));
                if iterations.clone().any(|t| t > self.iteration)
                    || prov.reused.iter().any(|r| r.iteration < prov.iteration)
                {
                    return Err(bad(format!("{who} has a provenance from iterations that did not happen")));
                }
                // Copies are looked for among tables only (as the loop does).
                let copy = match (m.policy.as_table(), tree) {
                    (Some(table), Some(tree)) => pop.position_of(p, table, tree.infosets_of(PlayerId(p.0))),
                    _ => None,
                };
                if let Some(j) = copy.filter(|&j| j < k) {
                    return Err(bad(format!("{who} is a copy of member {}", members[j].id.0)));
                }
            }
        }
        let range = tree.map_or_else(|| vec![(f64::NEG_INFINITY, f64::INFINITY); n], payoff_range);
        let tolerance = crate::checkpoint::STATE_TOLERANCE * tree.map_or(1.0, payoff_scale);
        if let Some(profile) = self.table.missing().first() {
            return Err(bad(format!("payoff entry {profile:?} is not estimated")));
        }
        let mut profile = vec![0; n];
        for flat in 0..sizes.iter().product::<usize>() {
            let mut rem = flat;
            for axis in (0..n).rev() {
                profile[axis] = rem % sizes[axis];
                rem /= sizes[axis];
            }
            // INVARIANT: no entry is missing (checked above) and `profile` is in range.
            let e = self.table.get(&profile).expect("estimated entry");
            let fits = e.mean.len() == n
                && e.variance.len() == n
                && e.mean
                    .iter()
                    .zip(&range)
                    .all(|(u, (lo, hi))| u.is_finite() && *u >= lo - tolerance && *u <= hi + tolerance)
                && e.variance.iter().all(|v| v.is_finite() && *v >= 0.0);
            if !fits {
                return Err(bad(format!(
                    "payoff entry {profile:?} holds {:?}, outside the game's payoffs {range:?}",
                    e.mean
                )));
            }
        }
        if self.meta_strategies.len() != n {
            return Err(bad(format!("{} meta-strategies for {n} players", self.meta_strategies.len())));
        }
        for (p, s) in self.meta_strategies.iter().enumerate() {
            crate::checkpoint::check_distribution(&format!("player {p}'s meta-strategy"), s, sizes[p])?;
        }
        crate::checkpoint::check_reports(reports, 0, self.iteration)?;
        let mut before = vec![1; n];
        for r in reports {
            let grows = r.population_sizes.len() == n
                && r.population_sizes.iter().zip(&before).zip(&sizes).all(|((s, b), all)| b <= s && s <= all);
            if !grows {
                return Err(bad(format!(
                    "the report of iteration {} has populations of {:?}",
                    r.iteration, r.population_sizes
                )));
            }
            let mixtures = r.meta_game.as_ref().map(|m| m.meta_strategies.as_slice()).unwrap_or_default();
            if mixtures.len() != n {
                return Err(bad(format!("the report of iteration {} has no meta-strategies", r.iteration)));
            }
            for (p, s) in mixtures.iter().enumerate() {
                let what = format!("player {p}'s meta-strategy in the report of iteration {}", r.iteration);
                crate::checkpoint::check_distribution(&what, s, r.population_sizes[p])?;
            }
            before.clone_from(&r.population_sizes);
        }
        // INVARIANT: check_reports saw iteration + 1 ≥ 1 reports.
        let last = reports.last().expect("a report");
        if last.population_sizes != sizes {
            return Err(bad(format!(
                "the last report has populations of {:?}, the state {sizes:?}",
                last.population_sizes
            )));
        }
        if last.meta_game.as_ref().map(|m| &m.meta_strategies) != Some(&self.meta_strategies) {
            return Err(bad("the last report's meta-strategies are not the state's".into()));
        }
        let Some(tree) = tree else {
            return match last.nash_conv {
                None => Ok(()),
                Some(x) => Err(bad(format!("the last report has NashConv {x}, and the game has no tree"))),
            };
        };
        let tables = member_tables(tree, pop)?;
        let policy = aggregated(tree, &views(&tables), &self.meta_strategies)?;
        let computed = metagame_games::nash_conv_report(tree, &vec![&policy; n])?.nash_conv;
        crate::checkpoint::check_nash_conv(self.iteration, last.nash_conv, computed, payoff_scale(tree))
    }
}

/// A response produced this iteration, before it joins the population.
struct NewMember {
    player: PlayerId,
    policy: MemberPolicy,
    /// The opponents it answered, with their weights.
    answered: Vec<(PolicyId, f64)>,
}

/// An iteration computed but not yet committed.
struct Staged {
    /// The responses that are new members, distinct from every member and from each other.
    members: Vec<NewMember>,
    /// The responses identical to a member: `(player, index of the member in the player's
    /// list once `members` are added, the reuse)`.
    reuses: Vec<(PlayerId, usize, Reuse)>,
    table: PayoffTable,
    meta_strategies: Vec<Vec<f64>>,
    /// The meta-mixture as one policy, where the tree was built (the NashConv's).
    profile: Option<TabularPolicy>,
    report: IterationReport,
}

/// A PSRO run: the loop state plus its components.
///
/// # Examples
///
/// PSRO with the `uniform` meta-solver and exact best responses is fictitious play:
///
/// ```
/// use metagame_games::{nash_conv, registry, ExactEvaluator, GameTree};
/// use metagame_populations::{run_loop, ExactBestResponse, Psro, PsroConfig, RunLimits};
/// use metagame_solvers::uniform::Uniform;
///
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let oracle = Box::new(ExactBestResponse::default());
/// let mut psro = Psro::new(&tree, PsroConfig::default(), Box::new(Uniform), oracle, Box::new(ExactEvaluator))?;
/// let run = run_loop(&mut psro, &RunLimits::iterations(10), &mut ())?;
/// assert_eq!(run.reports.len(), 11); // iteration 0, then one per iteration
/// // Best responses found again are not added twice: fewer distinct members than responses.
/// assert!(psro.state().population.sizes().iter().all(|&n| n <= 11));
/// assert!(run.reports[10].nash_conv < run.reports[0].nash_conv);
/// // The answer: the meta-mixture as one behaviour policy, whose NashConv the report gave.
/// let policy = psro.aggregated_policy()?;
/// assert!((nash_conv(&tree, &[&policy, &policy])? - run.reports[10].nash_conv.unwrap()).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub struct Psro<'t> {
    arena: Arena<'t>,
    config: PsroConfig,
    meta_solver: Box<dyn MetaSolver>,
    oracle: Box<dyn Oracle>,
    evaluator: Box<dyn MatchEvaluator>,
    state: PsroState,
    /// The last committed iteration's report.
    last: IterationReport,
    /// The game's largest absolute terminal utility, for `convergence_tolerance` (1 where the
    /// tree was not built: NashConv is then not computed).
    payoff_scale: f64,
    /// When a step (or the construction) in progress gives up.
    cutoff: Cutoff,
    /// The run's last iteration, where known: its NashConv is always estimated (when the
    /// config estimates).
    last_iteration: Option<usize>,
    /// The members' parts of exact two-player entries, kept between iterations
    /// ([`MemberValues`]); rebuilt as needed after a resume, to the same bits.
    member_values: Mutex<SequenceValueCache>,
    /// The committed meta-mixture as one policy and its iteration: the last NashConv's, which
    /// the next iteration's oracles answer (computed again after a resume, to the same bits).
    profile: Option<(usize, TabularPolicy)>,
}

/// The purpose of the seeds of an iteration's payoff entries ([`derive_seed`] with the
/// iteration), so that entries evaluated in different iterations use different streams while
/// staying reproducible.
const ENTRIES: u32 = u32::from_be_bytes(*b"entr");

/// The purpose of the seeds of an iteration's NashConv estimate ([`derive_seed`] with the
/// iteration).
const ESTIMATE: u32 = u32::from_be_bytes(*b"estm");

/// The purpose of the seeds of response requests ([`derive_seed`] with the iteration and the
/// request's index in it): streams apart from the evaluation's.
const RESPONSES: u32 = u32::from_be_bytes(*b"resp");

/// Check that a 2-player tree is a symmetric one-shot game (one infoset per player with the
/// same actions, symmetric payoffs), as `symmetric` mode needs.
fn check_symmetric(tree: &GameTree) -> Result<()> {
    let why = |reason: String| Error::Config(format!("symmetric = true needs a symmetric game: {reason}"));
    if tree.num_players() != 2 {
        return Err(why(format!("{} has {} players", tree.name(), tree.num_players())));
    }
    let one_shot = (0..2).all(|p| tree.infosets_of(PlayerId(p)).len() == 1)
        && tree.legal_actions(InfosetId(tree.infosets_of(PlayerId(0)).start))
            == tree.legal_actions(InfosetId(tree.infosets_of(PlayerId(1)).start));
    if !one_shot {
        return Err(why(format!(
            "{} is not a one-shot game with the same actions for both players",
            tree.name()
        )));
    }
    let game = NormalFormGame::from_tree(tree)?;
    if !game.is_symmetric(1e-12 * game.payoff_scale()) {
        return Err(why(format!("{}'s payoffs are not symmetric", tree.name())));
    }
    Ok(())
}

fn players(n: usize) -> impl Iterator<Item = PlayerId> {
    (0..n).map(PlayerId)
}

impl<'t> Psro<'t> {
    /// Start a run: one uniform policy per player, its payoff entry, iteration 0's report.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for `symmetric` on a game that is not symmetric or `rectified` on a
    /// game that is not 2-player; evaluation and meta-solver errors.
    pub fn new(
        tree: &'t GameTree,
        config: PsroConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
        evaluator: Box<dyn MatchEvaluator>,
    ) -> Result<Self> {
        Self::new_until(Arena::tree(tree), config, meta_solver, oracle, evaluator, Cutoff::never())
    }

    /// [`Psro::new`], whose evaluation of the initial entry gives up once `cutoff` has passed
    /// (an entry of many sampled episodes is as long as a step); the steps then keep it until
    /// [`TrainingLoop::set_cutoff`] sets another.
    ///
    /// # Errors
    ///
    /// As [`Psro::new`]; [`Error::CutOff`] when the cutoff passed first.
    pub fn new_until(
        arena: impl Into<Arena<'t>>,
        config: PsroConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
        evaluator: Box<dyn MatchEvaluator>,
        cutoff: Cutoff,
    ) -> Result<Self> {
        // Iteration 0 is the construction: its wall time is the report's.
        let started = Instant::now();
        let arena = arena.into();
        let n = arena.num_players();
        // Uniform: a table where the tree is built (the exact algorithms read it), else the
        // policy of any game.
        let uniform = match arena.game_tree() {
            Some(tree) => MemberPolicy::from(TabularPolicy::uniform(tree)),
            None => MemberPolicy::new(std::sync::Arc::new(metagame_games::Uniform))?,
        };
        let state = PsroState {
            iteration: 0,
            population: Population::new(vec![uniform; n]),
            table: PayoffTable::new(n),
            meta_strategies: vec![vec![1.0]; n],
            meta_solver_memory: None,
        };
        let placeholder = IterationReport::new(0, vec![1; n], Some(0.0), None);
        let mut psro = Self::with_state(arena, config, meta_solver, oracle, evaluator, state, placeholder)?;
        psro.cutoff = cutoff;
        let mut table = PayoffTable::new(n);
        for p in players(n) {
            table.grow(p);
        }
        let policies: Vec<Vec<&dyn Policy>> =
            players(n).map(|p| psro.state.population.policies(p)).collect::<Result<_>>()?;
        let copies: Vec<Vec<usize>> = players(n).map(|p| psro.state.population.responses(p)).collect();
        let (meta_strategies, profile, mut report) =
            psro.evaluate_and_solve(&mut table, &policies, &copies, 0, 0, PhaseTimes::default())?;
        report.elapsed_s = started.elapsed().as_secs_f64();
        psro.state.table = table;
        psro.state.meta_strategies = meta_strategies;
        psro.profile = profile.map(|p| (0, p));
        psro.state.meta_solver_memory = psro.meta_solver.memory();
        psro.last = report;
        Ok(psro)
    }

    /// Continue a run from a saved state and the run's reports so far (see
    /// [`crate::checkpoint`]), after checking that they are ones this loop could have written:
    /// see [`PsroState::check`].
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] when the state does not belong to this tree or contradicts
    /// itself; [`Error::Config`] as [`Psro::new`].
    pub fn resume(
        arena: impl Into<Arena<'t>>,
        config: PsroConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
        evaluator: Box<dyn MatchEvaluator>,
        state: PsroState,
        reports: &[IterationReport],
    ) -> Result<Self> {
        let arena = arena.into();
        state.check(arena, reports)?;
        if let Some(memory) = &state.meta_solver_memory {
            let solver = meta_solver.name();
            let game = state.table.to_normal_form()?;
            meta_solver
                .restore_memory(&game, memory)
                .map_err(|source| Error::MetaSolver { solver, source })?;
        }
        // INVARIANT: the check saw iteration + 1 ≥ 1 reports.
        let last = reports.last().expect("a report").clone();
        Self::with_state(arena, config, meta_solver, oracle, evaluator, state, last)
    }

    fn with_state(
        arena: Arena<'t>,
        config: PsroConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
        evaluator: Box<dyn MatchEvaluator>,
        state: PsroState,
        last: IterationReport,
    ) -> Result<Self> {
        if config.symmetric {
            check_symmetric(arena.need_tree("symmetric = true")?)?;
        }
        if config.rectified && arena.num_players() != 2 {
            return Err(Error::Config("rectified = true needs a 2-player game".into()));
        }
        if config.rectified {
            arena.need_tree("rectified = true")?;
        }
        Ok(Self {
            arena,
            config,
            meta_solver,
            oracle,
            evaluator,
            state,
            last,
            payoff_scale: arena.game_tree().map_or(1.0, payoff_scale),
            cutoff: Cutoff::never(),
            last_iteration: None,
            member_values: Mutex::default(),
            profile: None,
        })
    }

    /// The loop state (what a checkpoint saves).
    pub fn state(&self) -> &PsroState {
        &self.state
    }
    /// The last committed iteration's report (iteration 0's at the start).
    pub fn last_report(&self) -> &IterationReport {
        &self.last
    }
    /// The settings.
    pub fn config(&self) -> &PsroConfig {
        &self.config
    }
    /// The meta-solver's name.
    pub fn meta_solver_name(&self) -> &'static str {
        self.meta_solver.name()
    }

    /// The meta-mixture as one behaviour policy holding every player's rows.
    ///
    /// # Errors
    ///
    /// Aggregation errors (a meta-mixture that is not a distribution).
    pub fn aggregated_policy(&self) -> Result<TabularPolicy> {
        let tree = self.arena.need_tree("the aggregated meta-mixture")?;
        let tables = member_tables(tree, &self.state.population)?;
        aggregated(tree, &views(&tables), &self.state.meta_strategies)
    }

    /// One PSRO iteration: oracles, new payoff entries, meta-solve, NashConv. Nothing is
    /// committed unless all of them succeed. The oracle's requests carry the loop's cutoff,
    /// and the evaluator gets it: a learned response checks it between its batches, the
    /// sampled evaluator between chunks of blocks.
    ///
    /// # Errors
    ///
    /// [`Error::AtIteration`] wrapping an oracle, evaluator or meta-solver failure;
    /// [`Error::CutOff`] once the cutoff has passed; the state is then the one before the call.
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let iteration = self.state.iteration + 1;
        let staged = self.stage(iteration).map_err(|e| {
            // The members this iteration added are not kept: their keys are the next ones'.
            let cache = self.member_values.get_mut().unwrap_or_else(|poisoned| poisoned.into_inner());
            for (seat, size) in self.state.population.sizes().into_iter().enumerate() {
                cache.forget_from(seat, size);
            }
            match e {
                Error::CutOff => e,
                e => Error::AtIteration { iteration, source: Box::new(e) },
            }
        })?;
        // Commit: nothing below can fail.
        let Staged { members, reuses, table, meta_strategies, profile, report } = staged;
        for NewMember { player, policy, answered } in members {
            let provenance = Provenance::new(iteration, answered, self.oracle.name());
            self.state.population.add(player, policy, provenance);
        }
        for (player, index, reuse) in reuses {
            self.state.population.reuse(player, index, reuse);
        }
        debug_assert_eq!(table.shape(), self.state.population.sizes().as_slice());
        self.state.table = table;
        self.state.meta_strategies = meta_strategies;
        self.state.meta_solver_memory = self.meta_solver.memory();
        self.state.iteration = iteration;
        self.profile = profile.map(|p| (iteration, p));
        self.last = report.after(Some(&self.last));
        Ok(&mut self.last)
    }

    /// Iteration `iteration` computed into locals.
    fn stage(&mut self, iteration: usize) -> Result<Staged> {
        let t = Instant::now();
        let profile = self.profile.as_ref().filter(|(at, _)| *at == self.state.iteration).map(|(_, p)| p);
        let Responses { members: responses, episodes: oracle_episodes, gaps } = respond(
            self.arena,
            &self.config,
            &self.state,
            profile,
            self.oracle.as_mut(),
            iteration,
            &self.cutoff,
        )?;
        let times = PhaseTimes { oracle_s: t.elapsed().as_secs_f64(), ..PhaseTimes::default() };

        let n = self.arena.num_players();
        let pop = &self.state.population;
        // Each response is a new member, or a reuse of a member (an old one or one this
        // iteration added), whose index is recorded in `placed` for the meta-game's copies.
        let mut members: Vec<NewMember> = Vec::new();
        let mut reuses = Vec::new();
        let mut placed: Vec<Vec<usize>> = vec![Vec::new(); n];
        for response in responses {
            let player = response.player;
            let old = pop.members(player).len();
            // Duplicates are found among tables only (a network is never a copy).
            let index = match (response.policy.as_table(), self.arena.game_tree()) {
                (Some(table), Some(tree)) => {
                    let infosets = tree.infosets_of(PlayerId(player.0));
                    let mut mine = members.iter().filter(|m| m.player == player);
                    match pop.position_of(player, table, infosets.clone()) {
                        Some(k) => Some(k),
                        None => mine
                            .position(|m| {
                                m.policy.as_table().is_some_and(|t| same_rows(t, table, infosets.clone()))
                            })
                            .map(|j| old + j),
                    }
                }
                _ => None,
            };
            match index {
                Some(k) => {
                    reuses.push((player, k, Reuse::new(iteration, response.answered)));
                    placed[player.0].push(k);
                }
                None => {
                    placed[player.0].push(old + members.iter().filter(|m| m.player == player).count());
                    members.push(response);
                }
            }
        }

        let mut table = self.state.table.clone();
        let mut policies: Vec<Vec<&dyn Policy>> =
            players(n).map(|p| pop.policies(p)).collect::<Result<_>>()?;
        for m in &members {
            table.grow(m.player);
            policies[m.player.0].push(m.policy.policy()?);
        }
        // This iteration's responses come after every earlier one, ordered by member as
        // `Population::responses` orders them.
        let copies: Vec<Vec<usize>> = players(n)
            .map(|p| {
                let mut now = std::mem::take(&mut placed[p.0]);
                now.sort_unstable();
                let mut all = pop.responses(p);
                all.extend(now);
                all
            })
            .collect();
        let (meta_strategies, profile, mut report) =
            self.evaluate_and_solve(&mut table, &policies, &copies, iteration, oracle_episodes, times)?;
        report.response_gap = gaps;
        Ok(Staged { members, reuses, table, meta_strategies, profile, report })
    }

    /// Fill `table`'s missing entries, solve it, and measure the meta-mixture's NashConv;
    /// `policies[p]` are player `p`'s members, new ones included; `copies[p]` the member of
    /// each of player `p`'s responses (see [`Population::responses`]). Returns the
    /// meta-mixture, as one policy too where the tree was built, and the report.
    fn evaluate_and_solve(
        &self,
        table: &mut PayoffTable,
        policies: &[Vec<&dyn Policy>],
        copies: &[Vec<usize>],
        iteration: usize,
        oracle_episodes: u64,
        mut times: PhaseTimes,
    ) -> Result<(Vec<Vec<f64>>, Option<TabularPolicy>, IterationReport)> {
        let t = Instant::now();
        let (new_entries, episodes) = self.fill_missing(table, policies, iteration)?;
        times.evaluation_s = t.elapsed().as_secs_f64();

        let t = Instant::now();
        let (meta_strategies, solution) =
            table.with_normal_form(|meta_game| self.meta_solve(meta_game, copies))??;
        times.meta_solve_s = t.elapsed().as_secs_f64();

        // Exact NashConv where the tree was built (members that are not tables tabulated over
        // it); none where it was not.
        let t = Instant::now();
        let (nash_conv, exploitability, profile) = match self.arena.game_tree() {
            Some(tree) => {
                let tables: Vec<Vec<Cow<'_, TabularPolicy>>> = policies
                    .iter()
                    .map(|list| list.iter().map(|&p| TabularPolicy::of(tree, p)).collect())
                    .collect::<std::result::Result<_, _>>()?;
                let policy = aggregated(tree, &views(&tables), &meta_strategies)?;
                let report = metagame_games::nash_conv_report(tree, &vec![&policy; tree.num_players()])?;
                (Some(report.nash_conv), report.exploitability, Some(policy))
            }
            None => (None, None, None),
        };
        let estimate = match self.config.approximate() {
            Some(settings) if settings.due(iteration, self.last_iteration) => {
                Some(self.estimate(settings, policies, &meta_strategies, iteration)?)
            }
            _ => None,
        };
        times.nash_conv_s = t.elapsed().as_secs_f64();
        let report = IterationReport {
            iteration,
            population_sizes: table.shape().to_vec(),
            nash_conv,
            exploitability,
            nash_conv_estimate: estimate.map(|e| e.0),
            nash_conv_estimate_stderr: estimate.map(|e| e.1),
            episodes: episodes + oracle_episodes,
            response_gap: Vec::new(),
            elapsed_s: 0.0,
            times,
            details: Details::default(),
            meta_game: Some(MetaGameReport::new(
                meta_strategies.clone(),
                solution.certificate.nash_conv,
                solution.status,
                new_entries,
            )),
        };
        Ok((meta_strategies, profile, report))
    }

    /// The meta-mixture's NashConv estimated by trained best responses, with its standard
    /// error; `policies[p]` are player `p`'s members, `meta_strategies[p]` their weights.
    fn estimate(
        &self,
        settings: &EstimateSettings,
        policies: &[Vec<&dyn Policy>],
        meta_strategies: &[Vec<f64>],
        iteration: usize,
    ) -> Result<(f64, f64)> {
        let seats: Vec<SeatMixture<'_>> = policies
            .iter()
            .zip(meta_strategies)
            .enumerate()
            .map(|(seat, (list, weights))| SeatMixture {
                seat,
                members: list.iter().zip(weights).filter(|(_, w)| **w > 0.0).map(|(&p, &w)| (p, w)).collect(),
            })
            .collect();
        let seed = derive_seed(self.config.seed, ESTIMATE, &[iteration as u64]);
        let got = settings.estimate(self.arena, &seats, seed, &self.cutoff)?;
        Ok((got.nash_conv_estimate, got.stderr))
    }

    /// Evaluate every missing payoff entry of `table`; returns (entries, episodes).
    fn fill_missing(
        &self,
        table: &mut PayoffTable,
        policies: &[Vec<&dyn Policy>],
        iteration: usize,
    ) -> Result<(usize, u64)> {
        let mut flat: Vec<&dyn Policy> = Vec::new();
        let mut offsets = Vec::with_capacity(policies.len());
        for list in policies {
            offsets.push(flat.len());
            flat.extend(list.iter().copied());
        }
        let seed = derive_seed(self.config.seed, ENTRIES, &[iteration as u64]);
        let episodes = self.config.episodes_per_entry;
        // The exact evaluator (the one named so) of two players' members, through their kept
        // parts.
        let by_member;
        let evaluator: &dyn MatchEvaluator = match offsets[..] {
            [_, second] if self.evaluator.name() == ExactEvaluator.name() => {
                by_member = MemberValues { cache: &self.member_values, second };
                &by_member
            }
            _ => self.evaluator.as_ref(),
        };
        let (filled, mut played) =
            table.fill_missing(self.arena, evaluator, &flat, &offsets, episodes, seed, &self.cutoff)?;
        // Adaptive counts: more episodes for the entries still too uncertain, round by round.
        if let Some(target) = self.config.entry_stderr_target {
            let cap = self.config.max_episodes_per_entry;
            for round in 1.. {
                let seed = derive_seed(self.config.seed, ENTRIES, &[iteration as u64, round]);
                let (refined, more) = table.refine(
                    self.arena,
                    self.evaluator.as_ref(),
                    &flat,
                    &offsets,
                    (target, cap, episodes),
                    seed,
                    &self.cutoff,
                )?;
                played += more;
                if refined == 0 {
                    break;
                }
            }
        }
        Ok((filled, played))
    }

    /// The meta-solve of `meta_game` (one strategy per member) as the meta-game of one
    /// strategy per response (`copies[p]`: the member of each of player `p`'s responses),
    /// warm-started from the current mixture when configured; returns the cleaned mixtures
    /// over the members (copies summed, distributions, averaged in symmetric mode) and the
    /// solver's answer.
    ///
    /// The solver sees the members with their multiplicities
    /// ([`MetaSolver::solve_collapsed`]): the iterative solvers run on the members (the
    /// expanded game's trajectory at the collapsed game's cost), the others on the expanded game.
    fn meta_solve(
        &self,
        meta_game: &NormalFormGame,
        copies: &[Vec<usize>],
    ) -> Result<(Vec<Vec<f64>>, Solution)> {
        let solver = self.meta_solver.name();
        let copies = Copies::new(meta_game.shape(), copies.to_vec())
            .map_err(|source| Error::MetaSolver { solver, source })?;
        let start = self.config.warm_start.then(|| {
            // The last mixture over the members, with each new response given the share a
            // uniform mixture over the responses would give it (replicator dynamics cannot
            // raise a strategy that starts at 0): a member's old weight scaled down, plus
            // 1/K per new response that is a copy of it. The solver splits each member's
            // start evenly over its copies.
            players(self.arena.num_players())
                .zip(copies.expanded_shape())
                .map(|(p, k)| {
                    let old = &self.state.meta_strategies[p.0];
                    let added = (k - self.state.population.responses(p).len()) as f64 / k as f64;
                    let total: f64 = old.iter().sum();
                    let keep = if total > 0.0 { (1.0 - added) / total } else { 0.0 };
                    let mut start: Vec<f64> = old.iter().map(|&x| x * keep).collect();
                    start.resize(meta_game.num_strategies(p.0), 0.0);
                    for &m in &copies.of(p.0)[self.state.population.responses(p).len()..] {
                        start[m] += 1.0 / k as f64;
                    }
                    start
                })
                .collect::<Vec<_>>()
        });
        let solution = self
            .meta_solver
            .solve_collapsed(meta_game, &copies, start.as_deref())
            .map_err(|source| Error::MetaSolver { solver, source })?;
        let mut strategies = solution.strategies.clone();
        if self.config.symmetric {
            // One shared population: both seats play the average of the two mixtures.
            let avg: Vec<f64> =
                strategies[0].iter().zip(&strategies[1]).map(|(a, b)| 0.5 * (a + b)).collect();
            strategies = vec![avg.clone(), avg];
        }
        for s in strategies.iter_mut() {
            // Clean rounding noise so that aggregation sees a distribution.
            for x in s.iter_mut() {
                *x = x.max(0.0);
            }
            let total: f64 = s.iter().sum();
            if total.is_nan() || total <= 0.0 {
                return Err(Error::MetaSolver {
                    solver: self.meta_solver.name(),
                    source: metagame_solvers::SolveError::Numerical {
                        solver: self.meta_solver.name(),
                        reason: "meta-strategy has no positive mass".into(),
                    },
                });
            }
            for x in s.iter_mut() {
                *x /= total;
            }
        }
        Ok((strategies, solution))
    }
}

impl TrainingLoop for Psro<'_> {
    type State = PsroState;

    fn name(&self) -> &'static str {
        "psro"
    }
    fn step(&mut self) -> Result<&mut IterationReport> {
        Psro::step(self)
    }
    fn state(&self) -> &PsroState {
        &self.state
    }
    fn last_report(&self) -> Option<&IterationReport> {
        Some(&self.last)
    }
    /// Converged: the meta-mixture's NashConv is within `convergence_tolerance` × the
    /// game's payoff scale.
    fn stop_reason(&self) -> Option<StopReason> {
        let last = &self.last;
        (self.config.convergence_tolerance > 0.0
            && last.nash_conv.is_some_and(|x| x <= self.config.convergence_tolerance * self.payoff_scale))
        .then_some(StopReason::Converged)
    }
    fn meta_game(&self) -> Result<Option<NormalFormGame>> {
        self.state.table.to_normal_form().map(Some)
    }
    fn member_elo(&self) -> Option<Vec<Vec<f64>>> {
        let range = match self.arena.game_tree() {
            Some(tree) => tree.utility_bounds(),
            None => metagame_games::Game::utility_range(self.arena.game_rules()?)?,
        };
        self.state.table.member_elo(range)
    }
    fn set_last_iteration(&mut self, iteration: usize) {
        self.last_iteration = Some(iteration);
    }
    fn meta_game_stderr(&self) -> Option<Vec<Vec<f64>>> {
        self.state.table.stderr()
    }
    fn lineage_dot(&self, _reports: &[IterationReport]) -> Option<String> {
        Some(self.state.population.lineage_dot())
    }
    /// Checked by the oracle's learned responses between batches and by the sampled
    /// evaluator between chunks of blocks.
    fn set_cutoff(&mut self, cutoff: Cutoff) {
        self.cutoff = cutoff;
    }
    /// The members that are not tables, made this run.
    fn member_files(&self) -> Vec<(&str, &[u8])> {
        self.state.population.pending_files().collect()
    }
}

/// The responses of one iteration.
struct Responses {
    /// The new members.
    members: Vec<NewMember>,
    /// Episodes their training played.
    episodes: u64,
    /// Each request's response gap, in request order.
    gaps: Vec<f64>,
}

/// The new members of iteration `iteration`, the episodes their training played and their
/// response gaps.
fn respond(
    arena: Arena<'_>,
    config: &PsroConfig,
    state: &PsroState,
    profile: Option<&TabularPolicy>,
    oracle: &mut dyn Oracle,
    iteration: usize,
    cutoff: &Cutoff,
) -> Result<Responses> {
    let n = arena.num_players();
    let pop = &state.population;
    let sigma = &state.meta_strategies;
    // Where the tree was built: the members as tables of it and their aggregate, for exact
    // oracles and the response gaps.
    let tree = arena.game_tree();
    let tables = tree.map(|tree| member_tables(tree, pop)).transpose()?;
    // The last iteration's NashConv made it already, except after a resume.
    let made;
    let profile = match (profile, tree, &tables) {
        (Some(profile), _, _) => Some(profile),
        (None, Some(tree), Some(tables)) => {
            made = aggregated(tree, &views(tables), sigma)?;
            Some(&made)
        }
        _ => None,
    };
    let mut requests = 0;
    let mut episodes = 0;
    let mut gaps = Vec::new();
    // One request for `player` against the opponents weighted by `weights[q]` (seat q),
    // whose aggregate is `profile`.
    let mut ask = |player: PlayerId,
                   weights: &[&[f64]],
                   profile: Option<&TabularPolicy>|
     -> Result<NewMember> {
        let mut opponents = Vec::new();
        for q in players(n).filter(|&q| q != player) {
            opponents.extend(pop.weighted_members(q, weights[q.0])?);
        }
        let answered = opponents.iter().map(|m| (m.id, m.weight)).collect();
        let mut request = ResponseRequest::in_arena(
            arena,
            player,
            opponents,
            profile,
            derive_seed(config.seed, RESPONSES, &[iteration as u64, requests as u64]),
        )
        .with_cutoff(cutoff.clone());
        if let Some(last) = pop.members(player).last() {
            request = request.with_warm_start(last.policy.policy()?);
        }
        requests += 1;
        let response = oracle.respond(&request).map_err(|e| match e {
            Error::Learner(_) => {
                Error::Training { player: player.0, member: pop.members(player).len(), source: Box::new(e) }
            }
            other => other,
        })?;
        episodes += response.stats.episodes;
        if let (Some(tree), Some(profile)) = (tree, profile) {
            let answer = TabularPolicy::of(tree, response.policy.policy()?)?;
            gaps.push(response_gap(tree, player, profile, &answer, oracle.is_exact())?);
        }
        Ok(NewMember { player, policy: response.policy, answered })
    };
    let full: Vec<&[f64]> = sigma.iter().map(Vec::as_slice).collect();
    let mut out = Vec::new();
    if config.symmetric {
        // One response, mirrored into the other seat (a one-shot game: its tree is built).
        let tree = arena.need_tree("symmetric = true")?;
        let first = ask(PlayerId(0), &full, profile)?;
        let mirrored = MemberPolicy::from(mirror_one_shot(
            tree,
            TabularPolicy::of(tree, first.policy.policy()?)?.as_ref(),
        ));
        let answered = first.answered;
        out.push(NewMember { player: PlayerId(0), policy: mirrored.clone(), answered: answered.clone() });
        out.push(NewMember { player: PlayerId(1), policy: mirrored, answered });
        return Ok(Responses { members: out, episodes, gaps });
    }
    for player in players(n) {
        if !config.rectified {
            out.push(ask(player, &full, profile)?);
            continue;
        }
        // INVARIANT: rectified runs are checked at construction to have a tree.
        let (tree, tables) =
            (arena.need_tree("rectified = true")?, tables.as_ref().expect("tables of the tree"));
        // PSRO-rN for a 2-player game: every member `k` of `player` with positive meta
        // probability answers the opponents' mixture restricted to members it beats or ties
        // (`u_player(k, j) ≥ u_other(k, j)`). If no member beats anyone, answer the full
        // mixture.
        let other = PlayerId(1 - player.0);
        let before = out.len();
        for (k, &wk) in sigma[player.0].iter().enumerate() {
            if wk <= 0.0 {
                continue;
            }
            let beaten: Vec<f64> = sigma[other.0]
                .iter()
                .enumerate()
                .map(|(j, &w)| {
                    let mut entry = [0; 2];
                    entry[player.0] = k;
                    entry[other.0] = j;
                    // INVARIANT: every entry is filled before the meta-solve.
                    let e = state.table.get(&entry).expect("filled entry");
                    if e.mean[player.0] >= e.mean[other.0] { w } else { 0.0 }
                })
                .collect();
            let total: f64 = beaten.iter().sum();
            if total <= 0.0 {
                continue;
            }
            let mut restricted = TabularPolicy::uniform(tree);
            let others: Vec<&TabularPolicy> = tables[other.0].iter().map(AsRef::as_ref).collect();
            aggregate_into(tree, PlayerId(other.0), &others, &beaten, &mut restricted)?;
            let mut weights = full.clone();
            weights[other.0] = &beaten;
            out.push(ask(player, &weights, Some(&restricted))?);
        }
        if out.len() == before {
            out.push(ask(player, &full, profile)?);
        }
    }
    Ok(Responses { members: out, episodes, gaps })
}

/// The largest absolute terminal utility of the game (1 for a game whose payoffs are all 0).
fn payoff_scale(tree: &GameTree) -> f64 {
    let max = (0..tree.num_nodes())
        .filter(|&node| tree.node_kind(node) == NodeKind::Terminal)
        .flat_map(|node| tree.terminal_utilities(node).iter().map(|u| u.abs()))
        .fold(0.0, f64::max);
    if max > 0.0 { max } else { 1.0 }
}

/// Each player's smallest and largest terminal utility.
fn payoff_range(tree: &GameTree) -> Vec<(f64, f64)> {
    let mut range = vec![(f64::INFINITY, f64::NEG_INFINITY); tree.num_players()];
    for node in (0..tree.num_nodes()).filter(|&node| tree.node_kind(node) == NodeKind::Terminal) {
        for ((lo, hi), &u) in range.iter_mut().zip(tree.terminal_utilities(node)) {
            *lo = lo.min(u);
            *hi = hi.max(u);
        }
    }
    range
}

/// Every player's members as tables of `tree`: borrowed where they are tables, tabulated
/// where not.
///
/// # Errors
///
/// A member not loaded from the run folder; a member that fails to answer.
fn member_tables<'p>(tree: &GameTree, pop: &'p Population) -> Result<Vec<Vec<Cow<'p, TabularPolicy>>>> {
    players(pop.num_players())
        .map(|p| pop.policies(p)?.into_iter().map(|policy| Ok(TabularPolicy::of(tree, policy)?)).collect())
        .collect()
}

/// Tables as the borrowed lists the aggregation takes.
fn views<'a>(tables: &'a [Vec<Cow<'_, TabularPolicy>>]) -> Vec<Vec<&'a TabularPolicy>> {
    tables.iter().map(|list| list.iter().map(AsRef::as_ref).collect()).collect()
}

/// Every player's members (`policies[p]`) mixed with its meta-strategy, in one policy.
fn aggregated(
    tree: &GameTree,
    policies: &[Vec<&TabularPolicy>],
    sigma: &[Vec<f64>],
) -> Result<TabularPolicy> {
    let mut out = TabularPolicy::uniform(tree);
    for (p, weights) in sigma.iter().enumerate() {
        aggregate_into(tree, PlayerId(p), &policies[p], weights, &mut out)?;
    }
    Ok(out)
}

/// In a one-shot symmetric game, give player 1 the same strategy as player 0.
fn mirror_one_shot(tree: &GameTree, policy: &TabularPolicy) -> TabularPolicy {
    let mut out = policy.clone();
    let from = InfosetId(tree.infosets_of(PlayerId(0)).start);
    let to = InfosetId(tree.infosets_of(PlayerId(1)).start);
    let row = policy.row(from).to_vec();
    out.row_mut(to).copy_from_slice(&row);
    out
}
