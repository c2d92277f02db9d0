//! Fictitious Cross-Play (FXP; Xu et al. 2023, arXiv:2310.03354) on a
//! 2-player zero-sum game.
//!
//! One population holds every policy the run makes, each playing both seats: the initial
//! (uniform) policy, the checkpoints of one main policy and a population of counters. Each
//! iteration ([`Fxp::step`]), as the authors' matrix-game code does:
//!
//! 1. the population's Nash mixture `coeff` is the meta-solver's answer on the population's
//!    symmetric meta-game (entries exact with the exact evaluator, each pair played at both
//!    seats), computed at the end of the previous iteration;
//! 2. the main policy best-responds to η·(itself) + (1 − η)·Σ_j coeff_j·(member j), η =
//!    [`FxpConfig::eta`] (default 0.3), and the response is checkpointed into the population
//!    as the new main policy; η = 1 is pure self-play (best response to itself);
//! 3. a fresh counter best-responds to the Nash mixture over the main checkpoints (past
//!    versions, not the live policy), taken from the restricted game of main checkpoints
//!    (rows) against counters (columns, the initial policy counting as the first counter),
//!    and joins the population;
//! 4. the population Nash is solved again; the report's core `nash_conv` is the exact
//!    NashConv of that mixture aggregated into one behaviour policy, and
//!    [`FxpReport::main_policy_nash_conv`] the current main policy's.
//!
//! Responses come from an [`Oracle`] (exact best responses by default), one request per seat:
//! a population member's seat-0 rows play seat 0 and its seat-1 rows seat 1.
//!
//! Config (the `fxp` algorithm's section; every field optional, defaults shown):
//!
//! ```toml
//! eta = 0.3   # weight of self-play in the main policy's target, in [0, 1]
//! seed = 0    # seed of sampled responses and evaluations
//! ```
//!
//! # Examples
//!
//! ```
//! use metagame_games::{registry, GameTree};
//! use metagame_populations::{run_loop, Fxp, FxpConfig, FxpReport, RunLimits};
//!
//! let tree = GameTree::build(&registry::load("matrix_team_rps")?)?;
//! let mut fxp = Fxp::exact(&tree, FxpConfig::default())?;
//! let run = run_loop(&mut fxp, &RunLimits::iterations(3), &mut ())?;
//! let last = run.reports.last().unwrap();
//! assert!(last.nash_conv < 1e-9); // the population's Nash mixture
//! let part: FxpReport = last.details.get().unwrap();
//! assert_eq!(part.main_policy_nash_conv, 2.0); // one pure hand
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

use metagame_games::{
    ExactEvaluator, GameTree, MatchEvaluator, NormalFormGame, PlayerId, TabularPolicy, aggregate,
    nash_conv_report,
};
use metagame_solvers::MetaSolver;
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::oracle::{ExactBestResponse, Oracle, ResponseRequest, response_gap};
use crate::payoff_table::PayoffTable;
use crate::population::{PolicyId, WeightedMember};
use crate::report::{Details, IterationReport, MetaGameReport, PhaseTimes};
use crate::settings::{built_by, setters};
use crate::training_loop::TrainingLoop;
use metagame_solvers::nash::Nash;

/// FXP settings; always valid (built by [`FxpConfig::builder`] or deserialised through it).
///
/// How long a run lasts is every loop's [`RunLimits`](crate::RunLimits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "FxpConfigBuilder", into = "FxpConfigBuilder")]
pub struct FxpConfig {
    eta: f64,
    seed: u64,
}

/// Builder and serde form of [`FxpConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FxpConfigBuilder {
    /// The paper's η: the weight of the main policy itself in its best-response target, the
    /// rest going to the population's Nash mixture; in [0, 1]. 1 is pure self-play. Default
    /// 0.3 (the authors' matrix games).
    pub eta: Option<f64>,
    /// Seed of sampled responses and evaluations (keyed with the iteration and request).
    /// Default 0.
    pub seed: Option<u64>,
}

impl FxpConfigBuilder {
    /// The names of the fields, as configs spell them.
    pub const FIELDS: &'static [&'static str] = &["eta", "seed"];

    setters!(eta: f64, seed: u64);

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
        Ok(FxpConfig { eta, seed: self.seed.unwrap_or(0) })
    }
}

built_by!(FxpConfig, FxpConfigBuilder);

impl From<FxpConfig> for FxpConfigBuilder {
    fn from(c: FxpConfig) -> Self {
        FxpConfigBuilder { eta: Some(c.eta), seed: Some(c.seed) }
    }
}

impl FxpConfig {
    /// Weight of self-play in the main policy's target.
    pub fn eta(&self) -> f64 {
        self.eta
    }
    /// Seed of sampled responses and evaluations.
    pub fn seed(&self) -> u64 {
        self.seed
    }
}

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

/// One policy of the population (it plays both seats).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FxpMember {
    /// What it is.
    pub role: FxpRole,
    /// The iteration that added it (0 for the initial policy).
    pub iteration: usize,
    /// The policy, both seats' rows.
    pub policy: TabularPolicy,
    /// The mixture it answered: `(member index, weight)` of every member with positive weight.
    pub answered: Vec<(usize, f64)>,
}

/// FXP's part of an iteration's report.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct FxpReport {
    /// Exact NashConv of the current main policy (both seats): what self-play alone would
    /// output.
    pub main_policy_nash_conv: f64,
    /// The population Nash mixture's total probability on counters.
    pub counter_mass: f64,
}

/// Everything an FXP run needs to continue: what a checkpoint stores.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FxpState {
    /// Iterations done.
    pub iteration: usize,
    /// The population in the order added: the initial policy, then per iteration a main
    /// checkpoint and a counter.
    pub members: Vec<FxpMember>,
    /// Payoffs of member `i` at seat 0 against member `j` at seat 1.
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
    config: FxpConfig,
    meta_solver: Box<dyn MetaSolver>,
    oracle: Box<dyn Oracle>,
    evaluator: Box<dyn MatchEvaluator>,
    state: FxpState,
    /// The last committed iteration's report.
    last: IterationReport,
}

/// A response computed this iteration, before it joins the population.
struct Responded {
    policy: TabularPolicy,
    answered: Vec<(usize, f64)>,
    episodes: u64,
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

/// A seed per iteration and stream, so that requests and evaluations stay reproducible.
fn keyed_seed(seed: u64, iteration: usize, stream: u64) -> u64 {
    (seed ^ stream.wrapping_mul(0xD1B5_4A32_D192_ED03))
        ^ (iteration as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

impl<'t> Fxp<'t> {
    /// Sampled evaluators' episodes per payoff entry (exact evaluators ignore it).
    pub const EPISODES_PER_ENTRY: u64 = 1000;

    /// Start a run from the uniform policy, with its payoff entry and iteration 0's report.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a game that is not 2-player zero-sum (constant-sum); evaluator
    /// and meta-solver errors.
    pub fn new(
        tree: &'t GameTree,
        config: FxpConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
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
        let placeholder = IterationReport::new(0, vec![1; 2], 0.0, None);
        let mut fxp = Self::with_state(tree, config, meta_solver, oracle, evaluator, state, placeholder)?;
        let t = Instant::now();
        let mut table = PayoffTable::new(2);
        let policies = vec![&fxp.state.members[0].policy];
        let (new_entries, episodes) = fxp.fill(&mut table, &policies, 0)?;
        let evaluation_s = t.elapsed().as_secs_f64();
        let (nash, meta_solve_s) = fxp.population_nash(&table, new_entries)?;
        let times = PhaseTimes { evaluation_s, meta_solve_s, ..PhaseTimes::default() };
        let mut report = fxp.report(0, &policies, &nash, episodes, Vec::new(), times)?;
        report.elapsed_s = started.elapsed().as_secs_f64();
        fxp.state.table = table;
        fxp.state.coeff = nash.coeff;
        fxp.last = report;
        Ok(fxp)
    }

    /// [`Fxp::new`] with exact components: the `nash` meta-solver, exact best responses and
    /// exact payoffs.
    ///
    /// # Errors
    ///
    /// As [`Fxp::new`].
    pub fn exact(tree: &'t GameTree, config: FxpConfig) -> Result<Self> {
        Self::new(
            tree,
            config,
            Box::new(Nash),
            Box::new(ExactBestResponse::default()),
            Box::new(ExactEvaluator),
        )
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
        oracle: Box<dyn Oracle>,
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
        Self::with_state(tree, config, meta_solver, oracle, evaluator, state, last)
    }

    fn with_state(
        tree: &'t GameTree,
        config: FxpConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
        evaluator: Box<dyn MatchEvaluator>,
        state: FxpState,
        last: IterationReport,
    ) -> Result<Self> {
        if tree.num_players() != 2 || tree.utility_sum().is_none() {
            return Err(Error::Config(format!(
                "fxp needs a 2-player zero-sum (constant-sum) game; {} is not one",
                tree.name()
            )));
        }
        Ok(Self { tree, config, meta_solver, oracle, evaluator, state, last })
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
    /// The current main policy (both seats).
    pub fn main_policy(&self) -> &TabularPolicy {
        &self.state.members[self.state.main_index()].policy
    }

    /// The population's Nash mixture as one behaviour policy (both seats).
    ///
    /// # Errors
    ///
    /// Aggregation errors (none on a valid state).
    pub fn population_policy(&self) -> Result<TabularPolicy> {
        let policies: Vec<&TabularPolicy> = self.state.members.iter().map(|m| &m.policy).collect();
        Ok(mixture(self.tree, &policies, &self.state.coeff)?)
    }

    /// One FXP iteration: the main policy's response and checkpoint, a counter, the new
    /// payoff entries, the population Nash and the NashConvs. Nothing is committed unless
    /// all of them succeed.
    ///
    /// # Errors
    ///
    /// [`Error::AtIteration`] wrapping an oracle, evaluator, meta-solver or NashConv failure;
    /// the state is then the one before the call.
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let iteration = self.state.iteration + 1;
        let Staged { new_members, table, coeff, report } =
            self.stage(iteration).map_err(|e| Error::AtIteration { iteration, source: Box::new(e) })?;
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

        // (2) The main policy answers η·itself + (1 − η)·the population Nash.
        let t = Instant::now();
        let main = main_index(members);
        let mut target: Vec<f64> = self.state.coeff.iter().map(|c| (1.0 - eta) * c).collect();
        target[main] += eta;
        let old: Vec<&TabularPolicy> = members.iter().map(|m| &m.policy).collect();
        let warm = &members[main].policy;
        let main_response = respond(
            self.tree,
            self.oracle.as_mut(),
            &old,
            &target,
            Some(warm),
            keyed_seed(self.config.seed, iteration, 1),
        )?;
        times.oracle_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        let mut table = self.state.table.clone();
        let mut policies = old.clone();
        policies.push(&main_response.policy);
        let (mut new_entries, mut episodes) = self.fill(&mut table, &policies, iteration)?;
        times.evaluation_s += t.elapsed().as_secs_f64();

        // (3) A fresh counter answers the Nash mixture of the main checkpoints against the
        // counters.
        let t = Instant::now();
        let mut roles: Vec<FxpRole> = members.iter().map(|m| m.role).collect();
        roles.push(FxpRole::Main);
        let main_mixture = self.main_checkpoint_nash(&table, &roles)?;
        times.meta_solve_s += t.elapsed().as_secs_f64();
        let t = Instant::now();
        let counter = respond(
            self.tree,
            self.oracle.as_mut(),
            &policies,
            &main_mixture,
            None,
            keyed_seed(self.config.seed, iteration, 2),
        )?;
        times.oracle_s += t.elapsed().as_secs_f64();

        let t = Instant::now();
        policies.push(&counter.policy);
        let (entries, sampled) = self.fill(&mut table, &policies, iteration)?;
        new_entries += entries;
        episodes += sampled + main_response.episodes + counter.episodes;
        times.evaluation_s += t.elapsed().as_secs_f64();

        // (1) for the next iteration, (4) for this one's report: the population Nash.
        let (nash, meta_solve_s) = self.population_nash(&table, new_entries)?;
        times.meta_solve_s += meta_solve_s;
        let gaps = main_response.gaps.iter().chain(&counter.gaps).copied().collect();
        let report = self.report(iteration, &policies, &nash, episodes, gaps, times)?;
        debug_assert_eq!(policies.len(), k + 2);

        let new_members = vec![
            FxpMember {
                role: FxpRole::Main,
                iteration,
                policy: main_response.policy,
                answered: main_response.answered,
            },
            FxpMember {
                role: FxpRole::Counter,
                iteration,
                policy: counter.policy,
                answered: counter.answered,
            },
        ];
        Ok(Staged { new_members, table, coeff: nash.coeff, report })
    }

    /// Grow `table` to `policies` and evaluate its missing entries (member `i` at seat 0
    /// against member `j` at seat 1); returns (entries, sampled episodes).
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
        let seed = keyed_seed(self.config.seed, iteration, 3) ^ table.shape()[0] as u64;
        // Both seats index the one list of members.
        let (tree, evaluator) = (self.tree, self.evaluator.as_ref());
        table.fill_missing(tree, evaluator, policies, &[0, 0], Self::EPISODES_PER_ENTRY, seed)
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

    /// The Nash mixture of the whole population (both seats' answers averaged: the
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
    fn report(
        &self,
        iteration: usize,
        policies: &[&TabularPolicy],
        nash: &PopulationNash,
        episodes: u64,
        response_gap: Vec<f64>,
        mut times: PhaseTimes,
    ) -> Result<IterationReport> {
        let t = Instant::now();
        let population = mixture(self.tree, policies, &nash.coeff)?;
        let r = nash_conv_report(self.tree, &[&population, &population])?;
        let main = policies[if iteration == 0 { 0 } else { policies.len() - 2 }];
        let main_policy_nash_conv = nash_conv_report(self.tree, &[main, main])?.nash_conv;
        times.nash_conv_s = t.elapsed().as_secs_f64();
        let counter_mass = if iteration == 0 {
            0.0
        } else {
            // Counters sit at even indices from 2 on: initial, main, counter, main, counter, …
            nash.coeff.iter().enumerate().filter(|&(i, _)| i >= 2 && i % 2 == 0).map(|(_, w)| w).sum()
        };
        let mut report =
            IterationReport::new(iteration, vec![policies.len(); 2], r.nash_conv, r.exploitability);
        report.episodes = episodes;
        report.response_gap = response_gap;
        report.times = times;
        report.meta_game = Some(nash.report.clone());
        report.details = Details::of(&FxpReport { main_policy_nash_conv, counter_mass });
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
    /// payoff averaged over the two seats.
    fn meta_game(&self) -> Result<Option<NormalFormGame>> {
        Ok(Some(NormalFormGame::zero_sum(symmetric_payoffs(&self.state.table)?)?))
    }
    fn lineage_dot(&self, _reports: &[IterationReport]) -> Option<String> {
        Some(Fxp::lineage_dot(self))
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
/// (half the difference of the two seats' returns, so constant-sum games count as zero-sum).
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

/// The members with positive weight mixed into one behaviour policy (both seats).
fn mixture(
    tree: &GameTree,
    policies: &[&TabularPolicy],
    weights: &[f64],
) -> metagame_games::Result<TabularPolicy> {
    let (used, w): (Vec<&TabularPolicy>, Vec<f64>) =
        policies.iter().zip(weights).filter(|(_, w)| **w > 0.0).map(|(p, w)| (*p, *w)).unzip();
    aggregate(tree, &used, &w)
}

/// A response of both seats to the mixture of `policies` with `weights` (one request per
/// seat; seat `p`'s rows of the answer come from seat `p`'s request).
fn respond(
    tree: &GameTree,
    oracle: &mut dyn Oracle,
    policies: &[&TabularPolicy],
    weights: &[f64],
    warm_start: Option<&TabularPolicy>,
    seed: u64,
) -> Result<Responded> {
    let profile = mixture(tree, policies, weights)?;
    let answered: Vec<(usize, f64)> = weights.iter().copied().enumerate().filter(|&(_, w)| w > 0.0).collect();
    let mut out: Option<TabularPolicy> = None;
    let mut episodes = 0;
    let mut gaps = Vec::new();
    for seat in 0..2 {
        let opponents = answered
            .iter()
            .map(|&(i, w)| WeightedMember::new(PlayerId(1 - seat), PolicyId(i as u32), policies[i], w))
            .collect();
        let mut request =
            ResponseRequest::new(tree, PlayerId(seat), opponents, &profile, seed ^ (seat as u64 + 1));
        if let Some(w) = warm_start {
            request = request.with_warm_start(w);
        }
        let response = oracle.respond(&request)?;
        episodes += response.stats.episodes;
        gaps.push(response_gap(tree, PlayerId(seat), &profile, &response.policy, oracle.is_exact())?);
        match &mut out {
            None => out = Some(response.policy),
            Some(policy) => policy.copy_player_rows(tree, PlayerId(seat), &response.policy),
        }
    }
    // INVARIANT: two seats answered.
    let policy = out.expect("two responses");
    Ok(Responded { policy, answered, episodes, gaps })
}
