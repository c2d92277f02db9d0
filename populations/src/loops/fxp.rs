//! Fictitious Cross-Play (FXP; Xu et al. 2023, arXiv:2310.03354) on a game of two sides:
//! a 2-player zero-sum game, or two teams whose members share their returns (`team_rps`).
//!
//! One population holds every policy the run makes, each playing either side: the initial
//! (uniform) policy, the checkpoints of one main policy and a population of counters. In a
//! team game a member is a *team* policy: one row set per team member, played together (a
//! mixture of members picks one member for the whole team). Each iteration
//! ([`Fxp::step`]) does what the authors' matrix-game code does (zelaix/fxp,
//! `matrix_games/team_rps/run.py`, function `FXP`, called with `eta=0.3, n_iters=1000,
//! lr=0.1`):
//!
//! 1. the population's Nash mixture `coeff` is the meta-solver's answer on the population's
//!    symmetric meta-game, computed at the end of the previous iteration;
//! 2. the main policy π moves *gradually* toward its best response, for up to
//!    [`FxpConfig::max_steps`] steps: each step every team member answers η·(the live π) +
//!    (1 − η)·Σ_j coeff_j·(member j) alone, its teammates playing the live π (the authors'
//!    per-member Q-values and `soft_BR` with `alpha=0`: an exact best response of each member,
//!    all members at once; not a joint best response of the team), and π ← (1 − lr)·π +
//!    lr·BR, member by member as strategies (reach-weighted, [`aggregate_into`]); the member
//!    `step mod team size` takes a double step 2·lr, as the authors' `batch_lr` does (so a
//!    team of one, a 2-player game, always steps by 2·lr). The steps stop early once π has
//!    been within 1e-4 (squared distance, the authors' `isclose`) of its answer for max(5,
//!    step/10) steps in a row after step 50. π is then checkpointed into the population and
//!    goes on from there next iteration; η = 1 is pure self-play;
//! 3. a fresh (uniform) counter moves the same way toward its best response to the Nash
//!    mixture over the main checkpoints, taken from the restricted game of main checkpoints
//!    (rows) against counters (columns, the initial policy counting as the first counter),
//!    for at most as many steps as the main policy took (stopping after max(5, step/10)
//!    close steps, with no minimum), and joins the population;
//! 4. the population Nash is solved again; the report's core `nash_conv` is that mixture's
//!    exact NashConv with each side deviating as a whole team ([`team_nash_conv`]; with teams
//!    of one, the usual NashConv), [`FxpReport::main_policy_nash_conv`] the main policy's,
//!    and [`FxpReport::main_policy_member_nash_conv`] the main policy's with each player
//!    deviating alone (0 at a local equilibrium of a team game).
//!
//! Two departures from the authors' script: the meta-game is solved by the meta-solver (the
//! exact `nash` by default) where the script runs 1000 steps of fictitious play
//! (`matrixNE`), and the answers are exact best responses on the game tree, so FXP asks no
//! oracle. With `learning_rate = 0.5` and `max_steps = 1` a 2-player game's main policy is
//! replaced by its exact best response each iteration, as this loop did before it followed the
//! authors' code.
//!
//! Config (the `fxp` algorithm's section; every field optional, defaults shown):
//!
//! ```toml
//! eta = 0.3            # weight of self-play in the main policy's target, in [0, 1]
//! learning_rate = 0.1  # the authors' lr: step toward the best response, in (0, 0.5]
//! max_steps = 1000     # the authors' n_iters: steps per iteration, at least 1
//! seed = 0             # seed of sampled evaluations
//! ```
//!
//! # Examples
//!
//! ```
//! use metagame_games::{registry, GameTree};
//! use metagame_populations::{run_loop, Fxp, FxpConfig, FxpReport, RunLimits};
//!
//! let tree = GameTree::build(&registry::load("team_rps")?)?;
//! let mut fxp = Fxp::exact(&tree, FxpConfig::default())?;
//! let run = run_loop(&mut fxp, &RunLimits::iterations(3), &mut ())?;
//! let last = run.reports.last().unwrap();
//! assert!(last.nash_conv.is_some_and(|x| x < 1e-3)); // the population's Nash mixture of team policies
//! let part: FxpReport = last.details.get().unwrap();
//! assert!(part.main_policy_nash_conv < 2.0); // a mixed main policy, not one pure hand
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # References
//!
//! Z. Xu, Y. Liang, C. Yu, Y. Wang, Y. Wu, "Fictitious Cross-Play: Learning Global Nash
//! Equilibrium in Mixed Cooperative-Competitive Games", AAMAS 2023, arXiv:2310.03354; the
//! authors' code zelaix/fxp (`matrix_games/*/run.py`, function `FXP`).

use std::fmt::Write as _;
use std::time::Instant;

use metagame_games::philox::derive_seed;
use metagame_games::{
    Arena, ExactEvaluator, GameTree, InfosetId, MatchEvaluator, Matchup, NormalFormGame, PlayerId, Policy,
    TabularPolicy, Teams, aggregate, aggregate_into, best_response_to_mixture, expected_returns,
    nash_conv_report, team_nash_conv,
};
use metagame_solvers::MetaSolver;
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::payoff_table::{Entry, PayoffTable};
use crate::report::{Details, IterationReport, MetaGameReport, PhaseTimes};
use crate::settings::{built_by, setters};
use crate::training_loop::{Cutoff, TrainingLoop};
use metagame_solvers::nash::Nash;

/// FXP settings; always valid (built by [`FxpConfig::builder`] or deserialised through it).
///
/// How long a run lasts is every loop's [`RunLimits`](crate::RunLimits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FxpConfigBuilder", into = "FxpConfigBuilder")]
pub struct FxpConfig {
    eta: f64,
    learning_rate: f64,
    max_steps: usize,
    seed: u64,
}

/// Builder and serde form of [`FxpConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FxpConfigBuilder {
    /// The paper's η: the weight of the live main policy itself in its best-response target,
    /// the rest going to the population's Nash mixture; in [0, 1]. 1 is pure self-play.
    /// Default 0.3 (the authors' matrix games).
    pub eta: Option<f64>,
    /// The authors' `lr`: each step moves a policy this far toward its best response (one
    /// member per step twice as far); in (0, 0.5], so that the double step stays a mixture.
    /// Default 0.1 (the authors' `global_lr`).
    pub learning_rate: Option<f64>,
    /// The authors' `n_iters`: the most steps the main policy takes per iteration (the
    /// counter takes at most as many as the main policy did); at least 1. Default 1000 (the
    /// authors' `global_n_inter`).
    pub max_steps: Option<usize>,
    /// Seed of sampled evaluations (keyed with the iteration). Default 0.
    pub seed: Option<u64>,
}

impl FxpConfigBuilder {
    /// The names of the fields, as configs spell them.
    pub const FIELDS: &'static [&'static str] = &["eta", "learning_rate", "max_steps", "seed"];

    setters!(eta: f64, learning_rate: f64, max_steps: usize, seed: u64);

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<FxpConfig> {
        let eta = self.eta.unwrap_or(0.3);
        if !(0.0..=1.0).contains(&eta) {
            return Err(Error::Config(format!("eta: {eta} is not in [0, 1]")));
        }
        let learning_rate = self.learning_rate.unwrap_or(0.1);
        if !(learning_rate > 0.0 && learning_rate <= 0.5) {
            return Err(Error::Config(format!("learning_rate: {learning_rate} is not in (0, 0.5]")));
        }
        let max_steps = self.max_steps.unwrap_or(1000);
        if max_steps == 0 {
            return Err(Error::Config("max_steps: 0 is not at least 1".into()));
        }
        Ok(FxpConfig { eta, learning_rate, max_steps, seed: self.seed.unwrap_or(0) })
    }
}

built_by!(FxpConfig, FxpConfigBuilder);

impl From<FxpConfig> for FxpConfigBuilder {
    fn from(c: FxpConfig) -> Self {
        FxpConfigBuilder {
            eta: Some(c.eta),
            learning_rate: Some(c.learning_rate),
            max_steps: Some(c.max_steps),
            seed: Some(c.seed),
        }
    }
}

impl FxpConfig {
    /// Weight of self-play in the main policy's target.
    pub fn eta(&self) -> f64 {
        self.eta
    }
    /// Step toward the best response.
    pub fn learning_rate(&self) -> f64 {
        self.learning_rate
    }
    /// The most steps per iteration.
    pub fn max_steps(&self) -> usize {
        self.max_steps
    }
    /// Seed of sampled evaluations.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

/// The authors' `isclose`: a policy counts as at its answer when no row is farther than this
/// (squared distance).
const CLOSE: f64 = 1e-4;
/// The main policy's steps never stop before this many (the authors' `it >= 50`).
const MIN_MAIN_STEPS: usize = 50;

/// What a population member is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum FxpRole {
    /// The starting policy (uniform): where the main policy starts, and the first counter.
    Initial,
    /// A checkpoint of the main policy.
    Main,
    /// A counter, trained fresh against the main checkpoints.
    Counter,
}

impl FxpRole {
    /// The name reports and lineage graphs use.
    pub fn as_str(self) -> &'static str {
        match self {
            FxpRole::Initial => "initial",
            FxpRole::Main => "main",
            FxpRole::Counter => "counter",
        }
    }
}

/// One policy of the population (it plays either side).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FxpMember {
    /// What it is.
    pub role: FxpRole,
    /// The iteration that added it (0 for the initial policy).
    pub iteration: usize,
    /// The policy, both sides' rows.
    pub policy: TabularPolicy,
    /// The mixture it answered: `(member index, weight)` of every member with positive
    /// weight; a main checkpoint's own index stands for the live main policy (weight η).
    pub answered: Vec<(usize, f64)>,
}

/// FXP's part of an iteration's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FxpReport {
    /// Exact NashConv of the current main policy, each side deviating as a whole team: what
    /// self-play alone would output.
    pub main_policy_nash_conv: f64,
    /// Exact NashConv of the current main policy with each player deviating alone (equal to
    /// [`FxpReport::main_policy_nash_conv`] in a 2-player game; 0 at a local equilibrium of
    /// a team game).
    pub main_policy_member_nash_conv: f64,
    /// The population Nash mixture's total probability on counters.
    pub counter_mass: f64,
    /// Steps the main policy took this iteration (0 at iteration 0).
    #[serde(default)]
    pub main_steps: usize,
    /// Steps the counter took this iteration (0 at iteration 0).
    #[serde(default)]
    pub counter_steps: usize,
}

/// Everything an FXP run needs to continue: what a checkpoint stores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FxpState {
    /// Iterations done.
    pub iteration: usize,
    /// The population in the order added: the initial policy, then per iteration a main
    /// checkpoint and a counter. The last main checkpoint is the live main policy.
    pub members: Vec<FxpMember>,
    /// Payoffs of member `i` at side 0 against member `j` at side 1: one mean per side (the
    /// return of the side's first player).
    pub table: PayoffTable,
    /// The population's Nash mixture (one weight per member).
    pub coeff: Vec<f64>,
}

impl FxpState {
    /// Index of the current main policy: the last main checkpoint, or the initial policy
    /// before the first iteration.
    pub fn main_index(&self) -> usize {
        main_index(&self.members)
    }
}

fn main_index(members: &[FxpMember]) -> usize {
    members.iter().rposition(|m| m.role == FxpRole::Main).unwrap_or(0)
}

/// An FXP run: the loop state plus its components.
pub struct Fxp<'t> {
    tree: &'t GameTree,
    teams: Teams,
    config: FxpConfig,
    meta_solver: Box<dyn MetaSolver>,
    evaluator: Box<dyn MatchEvaluator>,
    state: FxpState,
    /// The last committed iteration's report.
    last: IterationReport,
    /// When a step in progress gives up.
    cutoff: Cutoff,
}

/// What a policy's steps toward its best response end with.
struct Trained {
    policy: TabularPolicy,
    steps: usize,
    /// Per side: the largest gain of one member answering alone at the end.
    gaps: Vec<f64>,
}

/// An iteration computed but not yet committed.
struct Staged {
    new_members: Vec<FxpMember>,
    table: PayoffTable,
    coeff: Vec<f64>,
    report: IterationReport,
}

/// The population's meta-solve: the Nash mixture and the solver's verdict.
struct PopulationNash {
    coeff: Vec<f64>,
    report: MetaGameReport,
}

/// When a policy's steps stop early.
#[derive(Clone, Copy)]
struct Stopping {
    max_steps: usize,
    min_steps: usize,
}

/// The purpose of the seeds of payoff entries ([`derive_seed`] with the iteration and the
/// table's size when they are filled), so that evaluations stay reproducible.
const ENTRIES: u32 = u32::from_be_bytes(*b"entr");

impl<'t> Fxp<'t> {
    /// Sampled evaluators' episodes per payoff entry (exact evaluators ignore it).
    pub const EPISODES_PER_ENTRY: u64 = 1000;

    /// Start a run from the uniform policy, with its payoff entry and iteration 0's report.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a game that is not two sides with opposed returns (a 2-player
    /// constant-sum game, or two teams whose members share their returns); evaluator and
    /// meta-solver errors.
    pub fn new(
        tree: &'t GameTree,
        config: FxpConfig,
        meta_solver: Box<dyn MetaSolver>,
        evaluator: Box<dyn MatchEvaluator>,
    ) -> Result<Self> {
        // Iteration 0 is the construction: its wall time is the report's.
        let started = Instant::now();
        let initial = FxpMember {
            role: FxpRole::Initial,
            iteration: 0,
            policy: TabularPolicy::uniform(tree),
            answered: Vec::new(),
        };
        let state =
            FxpState { iteration: 0, members: vec![initial], table: PayoffTable::new(2), coeff: vec![1.0] };
        let placeholder = IterationReport::new(0, vec![1; 2], Some(0.0), None);
        let mut fxp = Self::with_state(tree, config, meta_solver, evaluator, state, placeholder)?;
        let t = Instant::now();
        let mut table = PayoffTable::new(2);
        let policies = vec![&fxp.state.members[0].policy];
        let (new_entries, episodes) = fxp.fill(&mut table, &policies, 0)?;
        let evaluation_s = t.elapsed().as_secs_f64();
        let (nash, meta_solve_s) = fxp.population_nash(&table, new_entries)?;
        let times = PhaseTimes { evaluation_s, meta_solve_s, ..PhaseTimes::default() };
        let mut report = fxp.report(0, &policies, &nash, episodes, Vec::new(), (0, 0), times)?;
        report.elapsed_s = started.elapsed().as_secs_f64();
        fxp.state.table = table;
        fxp.state.coeff = nash.coeff;
        fxp.last = report;
        Ok(fxp)
    }

    /// [`Fxp::new`] with exact components: the `nash` meta-solver and exact payoffs.
    ///
    /// # Errors
    ///
    /// As [`Fxp::new`].
    pub fn exact(tree: &'t GameTree, config: FxpConfig) -> Result<Self> {
        Self::new(tree, config, Box::new(Nash::default()), Box::new(ExactEvaluator))
    }

    /// Continue a run from a saved state and the run's reports so far (see
    /// [`crate::checkpoint`]).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the state does not belong to this game.
    pub fn resume(
        tree: &'t GameTree,
        config: FxpConfig,
        meta_solver: Box<dyn MetaSolver>,
        evaluator: Box<dyn MatchEvaluator>,
        state: FxpState,
        reports: &[IterationReport],
    ) -> Result<Self> {
        let bad = |why: &str| Error::Config(format!("saved state does not fit this run: {why}"));
        let k = state.members.len();
        if k == 0 || state.members[0].role != FxpRole::Initial || k != 1 + 2 * state.iteration {
            return Err(bad("the population is not an initial policy and two members per iteration"));
        }
        for m in &state.members {
            m.policy.validate(tree).map_err(|e| bad(&e.to_string()))?;
        }
        if state.table.shape() != [k, k] || !state.table.missing().is_empty() || state.coeff.len() != k {
            return Err(bad("payoff entries or the Nash mixture do not match the population"));
        }
        crate::checkpoint::check_reports(reports, 0, state.iteration)?;
        // INVARIANT: check_reports saw iteration + 1 ≥ 1 reports.
        let last = reports.last().expect("a report").clone();
        Self::with_state(tree, config, meta_solver, evaluator, state, last)
    }

    fn with_state(
        tree: &'t GameTree,
        config: FxpConfig,
        meta_solver: Box<dyn MetaSolver>,
        evaluator: Box<dyn MatchEvaluator>,
        state: FxpState,
        last: IterationReport,
    ) -> Result<Self> {
        let teams = Teams::of(tree).ok_or_else(|| {
            Error::Config(format!(
                "fxp needs two sides with opposed returns (a 2-player zero-sum game, or two teams \
                 whose members share their returns, such as team_rps); {} is neither",
                tree.name()
            ))
        })?;
        Ok(Self { tree, teams, config, meta_solver, evaluator, state, last, cutoff: Cutoff::never() })
    }

    /// The loop state (what a checkpoint saves).
    pub fn state(&self) -> &FxpState {
        &self.state
    }
    /// The last committed iteration's report (iteration 0's at the start).
    pub fn last_report(&self) -> &IterationReport {
        &self.last
    }
    /// The settings.
    pub fn config(&self) -> &FxpConfig {
        &self.config
    }
    /// The two sides FXP plays (teams of one in a 2-player game).
    pub fn teams(&self) -> &Teams {
        &self.teams
    }
    /// The current main policy (both sides).
    pub fn main_policy(&self) -> &TabularPolicy {
        &self.state.members[self.state.main_index()].policy
    }

    /// The population's Nash mixture as one behaviour policy (both sides).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] in a team game, where one behaviour policy per player would lose
    /// how teammates correlate through the member they play (use [`team_nash_conv`] on the
    /// members and [`FxpState::coeff`]); aggregation errors (none on a valid state).
    pub fn population_policy(&self) -> Result<TabularPolicy> {
        if self.teams.is_team_game() {
            return Err(Error::Config(format!(
                "a mixture of team policies of {} is not one behaviour policy",
                self.tree.name()
            )));
        }
        let policies: Vec<&TabularPolicy> = self.state.members.iter().map(|m| &m.policy).collect();
        Ok(mixture(self.tree, &policies, &self.state.coeff)?)
    }

    /// One FXP iteration: the main policy's steps and checkpoint, a counter, the new payoff
    /// entries, the population Nash and the NashConvs. Nothing is committed unless all of
    /// them succeed.
    ///
    /// # Errors
    ///
    /// [`Error::AtIteration`] wrapping an evaluator, meta-solver or NashConv failure;
    /// [`Error::CutOff`] once the cutoff has passed (checked before each of the policies'
    /// steps and by the evaluator); the state is then the one before the call.
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let iteration = self.state.iteration + 1;
        let Staged { new_members, table, coeff, report } = self.stage(iteration).map_err(|e| match e {
            Error::CutOff => e,
            e => Error::AtIteration { iteration, source: Box::new(e) },
        })?;
        // Commit: nothing below can fail.
        self.state.members.extend(new_members);
        self.state.table = table;
        self.state.coeff = coeff;
        self.state.iteration = iteration;
        self.last = report.after(Some(&self.last));
        Ok(&mut self.last)
    }

    fn stage(&mut self, iteration: usize) -> Result<Staged> {
        let eta = self.config.eta;
        let members = &self.state.members;
        let k = members.len();
        let mut times = PhaseTimes::default();
        let old: Vec<&TabularPolicy> = members.iter().map(|m| &m.policy).collect();

        // (2) The main policy steps toward its answer to η·itself + (1 − η)·the population Nash.
        let t = Instant::now();
        let target: Vec<f64> = self.state.coeff.iter().map(|c| (1.0 - eta) * c).collect();
        let fixed = self.opponents(&old, &target)?;
        let start = members[main_index(members)].policy.clone();
        let stopping = Stopping { max_steps: self.config.max_steps, min_steps: MIN_MAIN_STEPS };
        let main = self.train(start, &fixed, eta, stopping)?;
        times.oracle_s += t.elapsed().as_secs_f64();
        let mut main_answered: Vec<(usize, f64)> =
            target.iter().copied().enumerate().filter(|&(_, w)| w > 0.0).collect();
        if eta > 0.0 {
            main_answered.push((k, eta));
        }

        let t = Instant::now();
        let mut table = self.state.table.clone();
        let mut policies = old.clone();
        policies.push(&main.policy);
        let (mut new_entries, mut episodes) = self.fill(&mut table, &policies, iteration)?;
        times.evaluation_s += t.elapsed().as_secs_f64();

        // (3) A fresh counter steps toward its answer to the Nash mixture of the main
        // checkpoints against the counters, for at most as many steps as the main policy took.
        let t = Instant::now();
        let mut roles: Vec<FxpRole> = members.iter().map(|m| m.role).collect();
        roles.push(FxpRole::Main);
        let main_mixture = self.main_checkpoint_nash(&table, &roles)?;
        times.meta_solve_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let fixed = self.opponents(&policies, &main_mixture)?;
        let stopping = Stopping { max_steps: main.steps, min_steps: 0 };
        let counter = self.train(TabularPolicy::uniform(self.tree), &fixed, 0.0, stopping)?;
        let counter_answered: Vec<(usize, f64)> =
            main_mixture.iter().copied().enumerate().filter(|&(_, w)| w > 0.0).collect();
        times.oracle_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        policies.push(&counter.policy);
        let (entries, sampled) = self.fill(&mut table, &policies, iteration)?;
        new_entries += entries;
        episodes += sampled;
        times.evaluation_s += t.elapsed().as_secs_f64();

        // (1) for the next iteration, (4) for this one's report: the population Nash.
        let (nash, meta_solve_s) = self.population_nash(&table, new_entries)?;
        times.meta_solve_s += meta_solve_s;
        let gaps = main.gaps.iter().chain(&counter.gaps).copied().collect();
        let steps = (main.steps, counter.steps);
        let report = self.report(iteration, &policies, &nash, episodes, gaps, steps, times)?;
        debug_assert_eq!(policies.len(), k + 2);

        let new_members = vec![
            FxpMember { role: FxpRole::Main, iteration, policy: main.policy, answered: main_answered },
            FxpMember {
                role: FxpRole::Counter,
                iteration,
                policy: counter.policy,
                answered: counter_answered,
            },
        ];
        Ok(Staged { new_members, table, coeff: nash.coeff, report })
    }

    /// The fixed part of a target, as opponents with their weights: the members with positive
    /// weight, or with teams of one their mixture as one behaviour policy (the same
    /// opponent for a single player, and one tree walk instead of one per member).
    fn opponents(&self, policies: &[&TabularPolicy], weights: &[f64]) -> Result<Vec<(TabularPolicy, f64)>> {
        let total: f64 = weights.iter().sum();
        if total <= 0.0 {
            return Ok(Vec::new());
        }
        if !self.teams.is_team_game() {
            return Ok(vec![(mixture(self.tree, policies, weights)?, total)]);
        }
        Ok(policies.iter().zip(weights).filter(|(_, w)| **w > 0.0).map(|(p, &w)| ((*p).clone(), w)).collect())
    }

    /// The authors' inner loop: `policy` steps toward every member's exact best response to
    /// (its teammates at the live `policy`, the other side at `self_weight`·the live `policy`
    /// + the `fixed` opponents), until `stopping` says so.
    fn train(
        &self,
        mut policy: TabularPolicy,
        fixed: &[(TabularPolicy, f64)],
        self_weight: f64,
        stopping: Stopping,
    ) -> Result<Trained> {
        let lr = self.config.learning_rate;
        let mut close_in_a_row = 0;
        let mut steps = 0;
        for step in 0..stopping.max_steps {
            // Up to max_steps exact best responses: the time budget is honoured between them.
            if self.cutoff.passed() {
                return Err(Error::CutOff);
            }
            let (answer, _) = self.answer(&policy, fixed, self_weight)?;
            let mut next = policy.clone();
            for s in 0..2 {
                let side = self.teams.side(s);
                for (m, &player) in side.iter().enumerate() {
                    // The authors' batch_lr: lr·(1 + [member == step mod team size]).
                    let rate = if m == step % side.len() { 2.0 * lr } else { lr };
                    aggregate_into(self.tree, player, &[&policy, &answer], &[1.0 - rate, rate], &mut next)?;
                }
            }
            policy = next;
            steps = step + 1;
            if self.distance(&policy, &answer) < CLOSE {
                close_in_a_row += 1;
                // The authors' max(5, 0.1·it), it the step's 0-based index.
                if close_in_a_row as f64 >= (0.1 * step as f64).max(5.0) && step >= stopping.min_steps {
                    break;
                }
            } else {
                close_in_a_row = 0;
            }
        }
        let (_, gaps) = self.answer(&policy, fixed, self_weight)?;
        Ok(Trained { policy, steps, gaps })
    }

    /// Every player's exact best response alone (rows of one policy), and per side the
    /// largest gain of one member over `policy`, against the target of [`Fxp::train`].
    fn answer(
        &self,
        policy: &TabularPolicy,
        fixed: &[(TabularPolicy, f64)],
        self_weight: f64,
    ) -> Result<(TabularPolicy, Vec<f64>)> {
        let mut answer = policy.clone();
        let mut gaps = vec![0.0; 2];
        for (s, gap) in gaps.iter_mut().enumerate() {
            let mut opponents: Vec<&TabularPolicy> = fixed.iter().map(|(p, _)| p).collect();
            let mut weights: Vec<f64> = fixed.iter().map(|(_, w)| *w).collect();
            if self_weight > 0.0 {
                opponents.push(policy);
                weights.push(self_weight);
            }
            let profiles: Vec<Vec<&TabularPolicy>> =
                opponents.iter().map(|o| self.teams.seated(s, policy, o)).collect();
            // Each profile's returns once, for every member of the side.
            let returns: Vec<Vec<f64>> =
                profiles.iter().map(|p| expected_returns(self.tree, p)).collect::<Result<_, _>>()?;
            for &player in self.teams.side(s) {
                let (best, value) = best_response_to_mixture(self.tree, player, &profiles, &weights)?;
                answer.copy_player_rows(self.tree, player, &best);
                let mut own = 0.0;
                for (r, w) in returns.iter().zip(&weights) {
                    own += w * r[player.0];
                }
                *gap = f64::max(*gap, value - own);
            }
        }
        Ok((answer, gaps))
    }

    /// The authors' `isclose` distance: the largest squared distance between two rows.
    fn distance(&self, a: &TabularPolicy, b: &TabularPolicy) -> f64 {
        (0..self.tree.num_infosets())
            .map(|i| {
                let (x, y) = (a.row(InfosetId(i)), b.row(InfosetId(i)));
                x.iter().zip(y).map(|(p, q)| (p - q) * (p - q)).sum::<f64>()
            })
            .fold(0.0, f64::max)
    }

    /// Grow `table` to `policies` and evaluate its missing entries (member `i` at side 0
    /// against member `j` at side 1); returns (entries, sampled episodes).
    fn fill(
        &self,
        table: &mut PayoffTable,
        policies: &[&TabularPolicy],
        iteration: usize,
    ) -> Result<(usize, u64)> {
        while table.shape()[0] < policies.len() {
            table.grow(PlayerId(0));
            table.grow(PlayerId(1));
        }
        let missing = table.missing();
        if missing.is_empty() {
            return Ok((0, 0));
        }
        let seed = derive_seed(self.config.seed, ENTRIES, &[iteration as u64, table.shape()[0] as u64]);
        let n = self.tree.num_players();
        let matchups: Vec<Matchup> = missing
            .iter()
            .map(|e| Matchup { seats: (0..n).map(|p| e[self.teams.side_of(PlayerId(p))]).collect() })
            .collect();
        let policies: Vec<&dyn Policy> = policies.iter().map(|&p| p as &dyn Policy).collect();
        let totals = self.evaluator.evaluate_until(
            Arena::tree(self.tree),
            &policies,
            &matchups,
            Self::EPISODES_PER_ENTRY,
            seed,
            &self.cutoff,
        )?;
        let mut episodes = 0;
        for (e, total) in missing.iter().zip(&totals) {
            if !total.exact {
                episodes += total.episodes;
            }
            // One mean per side: the return of its first player (teammates share theirs).
            let full = Entry::from(total);
            let first = [self.teams.side(0)[0].0, self.teams.side(1)[0].0];
            let entry = Entry {
                mean: first.iter().map(|&p| full.mean[p]).collect(),
                variance: first.iter().map(|&p| full.variance[p]).collect(),
                ..full
            };
            table.set(e, entry);
        }
        Ok((missing.len(), episodes))
    }

    /// The meta-solver's answer on `game`, every strategy cleaned into a distribution.
    fn solve(&self, game: &NormalFormGame) -> Result<(Vec<Vec<f64>>, metagame_solvers::Solution)> {
        let name = self.meta_solver.name();
        let solution =
            self.meta_solver.solve(game).map_err(|source| Error::MetaSolver { solver: name, source })?;
        let mut strategies = solution.strategies.clone();
        for s in &mut strategies {
            clean(s).ok_or_else(|| Error::MetaSolver {
                solver: name,
                source: metagame_solvers::SolveError::Numerical {
                    solver: name,
                    reason: "meta-strategy has no positive mass".into(),
                },
            })?;
        }
        Ok((strategies, solution))
    }

    /// The Nash mixture of the whole population (both sides' answers averaged: the
    /// meta-game is symmetric), with its meta-game report and the solve's seconds.
    fn population_nash(&self, table: &PayoffTable, new_entries: usize) -> Result<(PopulationNash, f64)> {
        let t = Instant::now();
        let game = NormalFormGame::zero_sum(symmetric_payoffs(table)?)?;
        let (strategies, solution) = self.solve(&game)?;
        let mut coeff: Vec<f64> =
            strategies[0].iter().zip(&strategies[1]).map(|(a, b)| 0.5 * (a + b)).collect();
        // INVARIANT: both strategies are distributions, so their average has mass.
        clean(&mut coeff).expect("an average of distributions");
        let report = MetaGameReport::new(
            vec![coeff.clone(), coeff.clone()],
            solution.certificate.nash_conv,
            solution.status,
            new_entries,
        );
        Ok((PopulationNash { coeff, report }, t.elapsed().as_secs_f64()))
    }

    /// Weights over the whole population that put the Nash mixture of the main checkpoints
    /// (rows) against the counters and the initial policy (columns) on the checkpoints.
    fn main_checkpoint_nash(&self, table: &PayoffTable, roles: &[FxpRole]) -> Result<Vec<f64>> {
        let m = symmetric_payoffs(table)?;
        let mains: Vec<usize> = (0..roles.len()).filter(|&i| roles[i] == FxpRole::Main).collect();
        let counters: Vec<usize> = (0..roles.len()).filter(|&i| roles[i] != FxpRole::Main).collect();
        let sub = Array2::from_shape_fn((mains.len(), counters.len()), |(a, b)| m[[mains[a], counters[b]]]);
        let (strategies, _) = self.solve(&NormalFormGame::zero_sum(sub)?)?;
        let mut weights = vec![0.0; roles.len()];
        for (&i, &w) in mains.iter().zip(&strategies[0]) {
            weights[i] = w;
        }
        Ok(weights)
    }

    /// The report of an iteration whose population is `policies` with Nash mixture `nash`.
    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        iteration: usize,
        policies: &[&TabularPolicy],
        nash: &PopulationNash,
        episodes: u64,
        response_gap: Vec<f64>,
        (main_steps, counter_steps): (usize, usize),
        mut times: PhaseTimes,
    ) -> Result<IterationReport> {
        let t = Instant::now();
        let (used, w): (Vec<&TabularPolicy>, Vec<f64>) =
            policies.iter().zip(&nash.coeff).filter(|(_, w)| **w > 0.0).map(|(p, w)| (*p, *w)).unzip();
        let nash_conv = team_nash_conv(self.tree, &self.teams, &used, &w)?;
        let main = policies[if iteration == 0 { 0 } else { policies.len() - 2 }];
        let main_policy_nash_conv = team_nash_conv(self.tree, &self.teams, &[main], &[1.0])?;
        let alone = vec![main; self.tree.num_players()];
        let main_policy_member_nash_conv = nash_conv_report(self.tree, &alone)?.nash_conv;
        times.nash_conv_s = t.elapsed().as_secs_f64();
        let counter_mass = if iteration == 0 {
            0.0
        } else {
            // Counters sit at even indices from 2 on: initial, main, counter, main, counter, …
            nash.coeff.iter().enumerate().filter(|&(i, _)| i >= 2 && i % 2 == 0).map(|(_, w)| w).sum()
        };
        // Two sides of opposed returns: exploitability is half the NashConv, as for 2 players.
        let mut report =
            IterationReport::new(iteration, vec![policies.len(); 2], Some(nash_conv), Some(nash_conv / 2.0));
        report.episodes = episodes;
        report.response_gap = response_gap;
        report.times = times;
        report.meta_game = Some(nash.report.clone());
        report.details = Details::of(&FxpReport {
            main_policy_nash_conv,
            main_policy_member_nash_conv,
            counter_mass,
            main_steps,
            counter_steps,
        });
        Ok(report)
    }

    /// The population's lineage in Graphviz DOT: an edge from every member a response
    /// answered to the response, labelled with its weight.
    pub fn lineage_dot(&self) -> String {
        let mut out = String::from("digraph lineage {\n  rankdir=LR;\n");
        for (i, m) in self.state.members.iter().enumerate() {
            let _ = writeln!(out, "  n{i} [label=\"{} #{i} it{}\"];", m.role.as_str(), m.iteration);
        }
        for (i, m) in self.state.members.iter().enumerate() {
            for (from, w) in &m.answered {
                let _ = writeln!(out, "  n{from} -> n{i} [label=\"{w:.3}\"];");
            }
        }
        out.push_str("}\n");
        out
    }
}

impl TrainingLoop for Fxp<'_> {
    type State = FxpState;

    fn name(&self) -> &'static str {
        "fxp"
    }
    fn step(&mut self) -> Result<&mut IterationReport> {
        Fxp::step(self)
    }
    fn state(&self) -> &FxpState {
        &self.state
    }
    fn last_report(&self) -> Option<&IterationReport> {
        Some(&self.last)
    }
    /// The population's symmetric meta-game: member `i` against member `j`, each pair's
    /// payoff averaged over the two sides.
    fn meta_game(&self) -> Result<Option<NormalFormGame>> {
        Ok(Some(NormalFormGame::zero_sum(symmetric_payoffs(&self.state.table)?)?))
    }
    fn lineage_dot(&self, _reports: &[IterationReport]) -> Option<String> {
        Some(Fxp::lineage_dot(self))
    }
    /// Checked before each of a policy's steps toward its best response and by the
    /// evaluator.
    fn set_cutoff(&mut self, cutoff: Cutoff) {
        self.cutoff = cutoff;
    }
}

/// Clamp rounding below 0 and normalise; `None` when nothing positive is left.
fn clean(s: &mut [f64]) -> Option<()> {
    for x in s.iter_mut() {
        *x = x.max(0.0);
    }
    let total: f64 = s.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    for x in s.iter_mut() {
        *x /= total;
    }
    Some(())
}

/// `M[i][j]`: member `i`'s advantage over member `j`, averaged over the two seatings
/// (half the difference of the two sides' returns, so constant-sum games count as zero-sum).
/// Antisymmetric by construction.
fn symmetric_payoffs(table: &PayoffTable) -> Result<Array2<f64>> {
    let k = table.shape()[0];
    let mut adv = Array2::zeros((k, k));
    for i in 0..k {
        for j in 0..k {
            let e = table
                .get(&[i, j])
                .ok_or_else(|| Error::Config(format!("payoff entry ({i}, {j}) is not estimated")))?;
            adv[[i, j]] = 0.5 * (e.mean[0] - e.mean[1]);
        }
    }
    Ok(Array2::from_shape_fn((k, k), |(i, j)| 0.5 * (adv[[i, j]] - adv[[j, i]])))
}

/// The members with positive weight mixed into one behaviour policy (both sides).
fn mixture(
    tree: &GameTree,
    policies: &[&TabularPolicy],
    weights: &[f64],
) -> metagame_games::Result<TabularPolicy> {
    let (used, w): (Vec<&TabularPolicy>, Vec<f64>) =
        policies.iter().zip(weights).filter(|(_, w)| **w > 0.0).map(|(p, w)| (*p, *w)).unzip();
    aggregate(tree, &used, &w)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RunLimits, run_loop};
    use metagame_games::registry;

    fn tree(name: &str) -> GameTree {
        GameTree::build(&registry::load(name).unwrap()).unwrap()
    }

    fn run(tree: &GameTree, config: FxpConfig, iterations: usize) -> Vec<IterationReport> {
        let mut fxp = Fxp::exact(tree, config).unwrap();
        run_loop(&mut fxp, &RunLimits::iterations(iterations), &mut ()).unwrap().reports
    }

    fn part(r: &IterationReport) -> FxpReport {
        r.details.get().unwrap()
    }

    /// The authors' script (zelaix/fxp `matrix_games/team_rps/run.py`, `FXP(pi_0, game, m=10,
    /// eta=0.3, n_iters=1000, lr=0.1)`, run with numpy and printed after each outer
    /// iteration): iteration 1's main policy takes 51 steps to
    /// [[0.00010849, 0.99989151], [0.00012205, 0.99987795]] (member 0, member 1; the members
    /// differ by the double step), the counter 30 steps to 0.99637792 on action 0 for both.
    /// The same policies here, on both sides.
    #[test]
    fn team_rps_steps_as_the_authors_script() {
        let tree = tree("team_rps");
        let mut fxp = Fxp::exact(&tree, FxpConfig::default()).unwrap();
        let r = fxp.step().unwrap().clone();
        let p = part(&r);
        assert_eq!((p.main_steps, p.counter_steps), (51, 30));
        let (main, counter) = (&fxp.state().members[1].policy, &fxp.state().members[2].policy);
        let zero = |pol: &TabularPolicy, player: usize| {
            pol.row(InfosetId(tree.infosets_of(PlayerId(player)).start))[0]
        };
        for (player, expected) in [(0, 0.00010849), (1, 0.00012205), (2, 0.00010849), (3, 0.00012205)] {
            assert!((zero(main, player) - expected).abs() < 1e-8, "main {player}: {}", zero(main, player));
            assert!((zero(counter, player) - 0.99637792).abs() < 1e-8, "counter {player}");
        }
        // Mixed, next to Scissors: the team loses a little less than 1 to Rock.
        assert!(
            p.main_policy_nash_conv > 1.99 && p.main_policy_nash_conv < 2.0,
            "{}",
            p.main_policy_nash_conv
        );
    }

    /// Decentralised team RPS: the population (initial, mains, counters) holds a mixture of team
    /// policies at the global equilibrium from iteration 1 on (2/3 uniform members, 1/6
    /// Scissors, 1/6 Rock: 1/3 each hand), where self-play (η = 1) drifts to both members
    /// always picking 1 (Scissors): no member gains alone (member NashConv 0, a local
    /// equilibrium), the team gains 1 by playing Rock together (team NashConv 2).
    #[test]
    fn on_decentralised_team_rps_the_population_is_global_and_self_play_local() {
        let tree = tree("team_rps");
        let fxp = run(&tree, FxpConfig::default(), 10);
        assert!((fxp[0].nash_conv.unwrap() - 0.5).abs() < 1e-12);
        for r in &fxp[1..] {
            assert!(
                r.nash_conv.unwrap() < 1e-9,
                "iteration {}: population NashConv {:?}",
                r.iteration,
                r.nash_conv
            );
        }
        let sp = run(&tree, FxpConfig::builder().eta(1.0).build().unwrap(), 10);
        for r in &sp[2..] {
            let p = part(r);
            assert!(
                p.main_policy_nash_conv > 1.999,
                "iteration {}: {}",
                r.iteration,
                p.main_policy_nash_conv
            );
            assert!(p.main_policy_member_nash_conv < 1e-6, "iteration {}", r.iteration);
        }
    }

    /// The centralised team game (`matrix_team_rps`): the main policy no longer jumps to a pure
    /// hand (NashConv 2) but stays mixed.
    #[test]
    fn the_main_policy_is_mixed_on_centralised_team_rps() {
        let tree = tree("matrix_team_rps");
        let reports = run(&tree, FxpConfig::default(), 6);
        for r in &reports[2..] {
            let main = part(r).main_policy_nash_conv;
            assert!(main > 0.1 && main < 1.0, "iteration {}: {main}", r.iteration);
            assert!(r.nash_conv.unwrap() < 1e-9);
        }
    }

    /// With `learning_rate = 0.5` and one step a 2-player game's main policy is its exact best
    /// response: η = 1 is then best-response self-play, a pure hand on matrix_team_rps.
    #[test]
    fn one_full_step_is_the_best_response() {
        let tree = tree("matrix_team_rps");
        let config = FxpConfig::builder().eta(1.0).learning_rate(0.5).max_steps(1).build().unwrap();
        for r in &run(&tree, config, 4)[1..] {
            assert_eq!(part(r).main_policy_nash_conv, 2.0, "iteration {}", r.iteration);
            assert_eq!(part(r).main_steps, 1);
        }
    }

    #[test]
    fn bad_settings_and_games_are_refused() {
        for (builder, field) in [
            (FxpConfig::builder().learning_rate(0.0), "learning_rate"),
            (FxpConfig::builder().learning_rate(0.6), "learning_rate"),
            (FxpConfig::builder().learning_rate(f64::NAN), "learning_rate"),
            (FxpConfig::builder().max_steps(0), "max_steps"),
            (FxpConfig::builder().eta(1.5), "eta"),
        ] {
            let err = builder.build().unwrap_err().to_string();
            assert!(err.contains(&format!("{field}: ")), "{err}");
        }
        let c = FxpConfig::default();
        assert_eq!((c.eta(), c.learning_rate(), c.max_steps(), c.seed()), (0.3, 0.1, 1000, 0));
        for game in ["matrix_pd", "kuhn_poker(players=3)"] {
            let err = Fxp::exact(&tree(game), c.clone()).err().unwrap().to_string();
            assert!(err.contains("two sides with opposed returns") && err.contains(game), "{err}");
        }
    }
}
