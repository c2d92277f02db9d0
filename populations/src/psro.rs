//! Policy-Space Response Oracles (Lanctot et al. 2017, arXiv:1711.00832).
//!
//! Each iteration: an oracle answers every player's opponents' meta-mixture (aggregated
//! into one behaviour policy per player by realisation weighting); the new members join the
//! population; only the new payoff entries are evaluated; the meta-game is solved again;
//! the meta-mixture's exact NashConv is reported. With the `uniform` meta-solver and exact
//! best responses PSRO is fictitious play (XFP); with `nash` on a 2-player zero-sum game it
//! is Double Oracle.

use std::ops::ControlFlow;
use std::time::Instant;

use metagame_games::{
    GameTree, InfosetId, MatchEvaluator, Matchup, NodeKind, NormalFormGame, TabularPolicy, aggregate_into,
};
use metagame_solvers::{MetaSolver, Solution};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::oracle::Oracle;
use crate::payoff_table::{Entry, PayoffTable};
use crate::population::{PolicyId, Population, Provenance};
use crate::report::{IterationReport, Observer, PhaseTimes, StopReason};

/// PSRO settings; always valid (built by [`PsroConfig::builder`] or deserialised through it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "PsroConfigBuilder", into = "PsroConfigBuilder")]
pub struct PsroConfig {
    max_iterations: usize,
    episodes_per_entry: u64,
    seed: u64,
    rectified: bool,
    symmetric: bool,
    target_nash_conv: Option<f64>,
    time_budget_seconds: Option<f64>,
    convergence_tolerance: f64,
    warm_start: bool,
}

/// Builder and serde form of [`PsroConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PsroConfigBuilder {
    /// Iterations after the initial population. Default 20.
    pub max_iterations: Option<usize>,
    /// Episodes per payoff entry for sampled evaluators (exact ones ignore it); ≥ 1.
    /// Default 1000 (OpenSpiel's `sims_per_entry` in its example).
    pub episodes_per_entry: Option<u64>,
    /// Seed of every sampled episode (keyed with the iteration and entry). Default 0.
    pub seed: Option<u64>,
    /// PSRO-rN (Balduzzi et al. 2019, arXiv:1901.08106): each member with positive
    /// meta-probability answers only the opponents it beats or ties. 2-player games only.
    /// Default false.
    pub rectified: Option<bool>,
    /// One population shared by all seats (symmetric one-shot games only). Default false.
    pub symmetric: Option<bool>,
    /// Stop once NashConv ≤ this (≥ 0). Default none.
    pub target_nash_conv: Option<f64>,
    /// Stop after this many seconds of wall time (> 0). Default none.
    pub time_budget_seconds: Option<f64>,
    /// Stop as converged once the meta-mixture's exact NashConv is at most this times the
    /// game's payoff scale (its largest absolute terminal utility): the meta-mixture is then
    /// an equilibrium of the whole game, and with exact best responses further iterations
    /// could only add duplicates. 0 turns the check off. Default 1e-12.
    pub convergence_tolerance: Option<f64>,
    /// Start each meta-solve from the previous iteration's meta-mixture, extended to the new
    /// members (iterative meta-solvers only; the others ignore it). `false` starts every solve
    /// from scratch, as OpenSpiel's psro_v2 does. Default true.
    pub warm_start: Option<bool>,
}

impl PsroConfigBuilder {
    /// Set `max_iterations`.
    pub fn max_iterations(mut self, v: usize) -> Self {
        self.max_iterations = Some(v);
        self
    }
    /// Set `episodes_per_entry`.
    pub fn episodes_per_entry(mut self, v: u64) -> Self {
        self.episodes_per_entry = Some(v);
        self
    }
    /// Set `seed`.
    pub fn seed(mut self, v: u64) -> Self {
        self.seed = Some(v);
        self
    }
    /// Set `rectified`.
    pub fn rectified(mut self, v: bool) -> Self {
        self.rectified = Some(v);
        self
    }
    /// Set `symmetric`.
    pub fn symmetric(mut self, v: bool) -> Self {
        self.symmetric = Some(v);
        self
    }
    /// Set `target_nash_conv`.
    pub fn target_nash_conv(mut self, v: f64) -> Self {
        self.target_nash_conv = Some(v);
        self
    }
    /// Set `time_budget_seconds`.
    pub fn time_budget_seconds(mut self, v: f64) -> Self {
        self.time_budget_seconds = Some(v);
        self
    }
    /// Set `convergence_tolerance`.
    pub fn convergence_tolerance(mut self, v: f64) -> Self {
        self.convergence_tolerance = Some(v);
        self
    }
    /// Set `warm_start`.
    pub fn warm_start(mut self, v: bool) -> Self {
        self.warm_start = Some(v);
        self
    }

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<PsroConfig> {
        let episodes_per_entry = self.episodes_per_entry.unwrap_or(1000);
        if episodes_per_entry == 0 {
            return Err(Error::Config("episodes_per_entry must be at least 1".into()));
        }
        if let Some(t) = self.target_nash_conv
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(Error::Config(format!("target_nash_conv must be a finite number ≥ 0, got {t}")));
        }
        if let Some(t) = self.time_budget_seconds
            && !(t.is_finite() && t > 0.0)
        {
            return Err(Error::Config(format!("time_budget_seconds must be > 0, got {t}")));
        }
        let convergence_tolerance = self.convergence_tolerance.unwrap_or(1e-12);
        if !(convergence_tolerance.is_finite() && convergence_tolerance >= 0.0) {
            return Err(Error::Config(format!(
                "convergence_tolerance must be a finite number ≥ 0, got {convergence_tolerance}"
            )));
        }
        Ok(PsroConfig {
            max_iterations: self.max_iterations.unwrap_or(20),
            episodes_per_entry,
            seed: self.seed.unwrap_or(0),
            rectified: self.rectified.unwrap_or(false),
            symmetric: self.symmetric.unwrap_or(false),
            target_nash_conv: self.target_nash_conv,
            time_budget_seconds: self.time_budget_seconds,
            convergence_tolerance,
            warm_start: self.warm_start.unwrap_or(true),
        })
    }
}

impl TryFrom<PsroConfigBuilder> for PsroConfig {
    type Error = Error;
    fn try_from(b: PsroConfigBuilder) -> Result<Self> {
        b.build()
    }
}

impl From<PsroConfig> for PsroConfigBuilder {
    fn from(c: PsroConfig) -> Self {
        PsroConfigBuilder {
            max_iterations: Some(c.max_iterations),
            episodes_per_entry: Some(c.episodes_per_entry),
            seed: Some(c.seed),
            rectified: Some(c.rectified),
            symmetric: Some(c.symmetric),
            target_nash_conv: c.target_nash_conv,
            time_budget_seconds: c.time_budget_seconds,
            convergence_tolerance: Some(c.convergence_tolerance),
            warm_start: Some(c.warm_start),
        }
    }
}

impl Default for PsroConfig {
    fn default() -> Self {
        // INVARIANT: the defaults are valid.
        PsroConfigBuilder::default().build().expect("defaults are valid")
    }
}

impl PsroConfig {
    /// A builder with every field at its default.
    pub fn builder() -> PsroConfigBuilder {
        PsroConfigBuilder::default()
    }
    /// Iterations after the initial population.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
    /// Episodes per payoff entry (sampled evaluators).
    pub fn episodes_per_entry(&self) -> u64 {
        self.episodes_per_entry
    }
    /// Seed of sampled episodes.
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
    /// Stop at this NashConv.
    pub fn target_nash_conv(&self) -> Option<f64> {
        self.target_nash_conv
    }
    /// Stop after this wall time.
    pub fn time_budget_seconds(&self) -> Option<f64> {
        self.time_budget_seconds
    }
    /// Stop as converged at NashConv ≤ this × the payoff scale (0: never).
    pub fn convergence_tolerance(&self) -> f64 {
        self.convergence_tolerance
    }
    /// Meta-solves start from the previous meta-mixture.
    pub fn warm_start(&self) -> bool {
        self.warm_start
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
    /// Every iteration's report so far.
    pub reports: Vec<IterationReport>,
}

/// A response produced this iteration, before it joins the population.
struct NewMember {
    player: usize,
    policy: TabularPolicy,
    /// The opponents it answered, with their weights.
    answered: Vec<(PolicyId, f64)>,
}

/// A PSRO run: the loop state plus its components.
pub struct Psro<'t> {
    tree: &'t GameTree,
    config: PsroConfig,
    meta_solver: Box<dyn MetaSolver>,
    oracle: Box<dyn Oracle>,
    evaluator: Box<dyn MatchEvaluator>,
    state: PsroState,
    started: Instant,
    elapsed_before: f64,
    /// The game's largest absolute terminal utility, for `convergence_tolerance`.
    payoff_scale: f64,
}

/// A seed per iteration, so that entries evaluated in different iterations use different
/// streams while staying reproducible.
fn iteration_seed(seed: u64, iteration: usize) -> u64 {
    seed ^ (iteration as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15)
}

/// Check that a 2-player tree is a symmetric one-shot game (one infoset per player with the
/// same actions, symmetric payoffs), as `symmetric` mode needs.
fn check_symmetric(tree: &GameTree) -> Result<()> {
    let why = |reason: String| Error::Config(format!("symmetric = true needs a symmetric game: {reason}"));
    if tree.num_players() != 2 {
        return Err(why(format!("{} has {} players", tree.name(), tree.num_players())));
    }
    let one_shot = (0..2).all(|p| tree.infosets_of(p).len() == 1)
        && tree.legal_actions(InfosetId(tree.infosets_of(0).start))
            == tree.legal_actions(InfosetId(tree.infosets_of(1).start));
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
        let n = tree.num_players();
        let state = PsroState {
            iteration: 0,
            population: Population::new(vec![TabularPolicy::uniform(tree); n]),
            table: PayoffTable::new(n),
            meta_strategies: vec![vec![1.0]; n],
            reports: Vec::new(),
        };
        let mut psro = Self::with_state(tree, config, meta_solver, oracle, evaluator, state, 0.0)?;
        for p in 0..n {
            psro.state.table.grow(p);
        }
        let (new_entries, episodes, evaluation_s) = psro.fill_missing()?;
        let mut times = PhaseTimes { evaluation_s, ..PhaseTimes::default() };
        let report = psro.finish_iteration(new_entries, episodes, &mut times)?;
        psro.state.reports.push(report);
        Ok(psro)
    }

    /// Continue a run from a saved state (see [`crate::checkpoint`]).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the state does not belong to this tree or config.
    pub fn resume(
        tree: &'t GameTree,
        config: PsroConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
        evaluator: Box<dyn MatchEvaluator>,
        state: PsroState,
    ) -> Result<Self> {
        let bad = |why: &str| Error::Config(format!("saved state does not fit this run: {why}"));
        if state.population.num_players() != tree.num_players()
            || state.table.shape() != state.population.sizes()
        {
            return Err(bad("population and payoff table disagree with the game"));
        }
        for p in 0..tree.num_players() {
            for m in state.population.members(p) {
                m.policy.validate(tree).map_err(|e| bad(&e.to_string()))?;
            }
        }
        if state.reports.len() != state.iteration + 1 || !state.table.missing().is_empty() {
            return Err(bad("reports or payoff entries are incomplete"));
        }
        let elapsed = state.reports.last().map_or(0.0, |r| r.elapsed_s);
        Self::with_state(tree, config, meta_solver, oracle, evaluator, state, elapsed)
    }

    fn with_state(
        tree: &'t GameTree,
        config: PsroConfig,
        meta_solver: Box<dyn MetaSolver>,
        oracle: Box<dyn Oracle>,
        evaluator: Box<dyn MatchEvaluator>,
        state: PsroState,
        elapsed_before: f64,
    ) -> Result<Self> {
        if config.symmetric {
            check_symmetric(tree)?;
        }
        if config.rectified && tree.num_players() != 2 {
            return Err(Error::Config("rectified = true needs a 2-player game".into()));
        }
        Ok(Self {
            tree,
            config,
            meta_solver,
            oracle,
            evaluator,
            state,
            started: Instant::now(),
            elapsed_before,
            payoff_scale: payoff_scale(tree),
        })
    }

    /// The loop state (what a checkpoint saves).
    pub fn state(&self) -> &PsroState {
        &self.state
    }
    /// Every report so far, iteration 0 first.
    pub fn reports(&self) -> &[IterationReport] {
        &self.state.reports
    }
    /// The settings.
    pub fn config(&self) -> &PsroConfig {
        &self.config
    }
    /// The meta-solver's name.
    pub fn meta_solver_name(&self) -> &'static str {
        self.meta_solver.name()
    }

    fn elapsed(&self) -> f64 {
        self.elapsed_before + self.started.elapsed().as_secs_f64()
    }

    /// The meta-mixture as one behaviour policy holding every player's rows.
    ///
    /// # Errors
    ///
    /// Aggregation errors (a meta-mixture that is not a distribution).
    pub fn aggregated_policy(&self) -> Result<TabularPolicy> {
        aggregated(self.tree, &self.state.population, &self.state.meta_strategies)
    }

    /// One PSRO iteration: oracles, new payoff entries, meta-solve, NashConv.
    ///
    /// # Errors
    ///
    /// [`Error::AtIteration`] wrapping an oracle, evaluator or meta-solver failure.
    pub fn step(&mut self) -> Result<&IterationReport> {
        let iteration = self.state.iteration + 1;
        self.step_inner(iteration).map_err(|e| Error::AtIteration { iteration, source: Box::new(e) })?;
        // INVARIANT: step_inner pushed this iteration's report.
        Ok(self.state.reports.last().expect("a report per iteration"))
    }

    fn step_inner(&mut self, iteration: usize) -> Result<()> {
        let mut times = PhaseTimes::default();

        let t = Instant::now();
        let new_members = self.respond()?;
        times.oracle_s = t.elapsed().as_secs_f64();

        for NewMember { player, policy, answered } in new_members {
            let provenance = Provenance { iteration, answered, oracle: self.oracle.name().to_string() };
            self.state.population.add(player, policy, provenance);
            self.state.table.grow(player);
        }
        debug_assert_eq!(self.state.table.shape(), self.state.population.sizes().as_slice());
        self.state.iteration = iteration;
        let (new_entries, episodes, evaluation_s) = self.fill_missing()?;
        times.evaluation_s = evaluation_s;
        let report = self.finish_iteration(new_entries, episodes, &mut times)?;
        self.state.reports.push(report);
        Ok(())
    }

    /// The new members of this iteration.
    fn respond(&self) -> Result<Vec<NewMember>> {
        let n = self.tree.num_players();
        let pop = &self.state.population;
        let sigma = &self.state.meta_strategies;
        let answered_by = |player: usize, weights: &[Vec<f64>]| -> Vec<(PolicyId, f64)> {
            (0..n).filter(|&q| q != player).flat_map(|q| pop.weighted_ids(q, &weights[q])).collect()
        };
        let profile_policy = aggregated(self.tree, pop, sigma)?;
        let profile: Vec<&TabularPolicy> = vec![&profile_policy; n];
        let mut out = Vec::new();
        if self.config.symmetric {
            let br = self.oracle.respond(self.tree, 0, &profile)?;
            let mirrored = mirror_one_shot(self.tree, &br);
            let answered = answered_by(0, sigma);
            out.push(NewMember { player: 0, policy: mirrored.clone(), answered: answered.clone() });
            out.push(NewMember { player: 1, policy: mirrored, answered });
            return Ok(out);
        }
        for player in 0..n {
            if self.config.rectified {
                out.extend(self.respond_rectified(player, &profile_policy)?);
            } else {
                let br = self.oracle.respond(self.tree, player, &profile)?;
                out.push(NewMember { player, policy: br, answered: answered_by(player, sigma) });
            }
        }
        Ok(out)
    }

    /// PSRO-rN for a 2-player game: every member `k` of `player` with positive meta
    /// probability answers the opponents' mixture restricted to members it beats or ties
    /// (`u_player(k, j) ≥ u_other(k, j)`). If no member beats anyone, answer the full mixture
    /// (`full`, the aggregated meta-mixture).
    fn respond_rectified(&self, player: usize, full: &TabularPolicy) -> Result<Vec<NewMember>> {
        let other = 1 - player;
        let pop = &self.state.population;
        let sigma = &self.state.meta_strategies;
        let mut out = Vec::new();
        for (k, &wk) in sigma[player].iter().enumerate() {
            if wk <= 0.0 {
                continue;
            }
            let weights: Vec<f64> = sigma[other]
                .iter()
                .enumerate()
                .map(|(j, &w)| {
                    let mut profile = [0; 2];
                    profile[player] = k;
                    profile[other] = j;
                    // INVARIANT: every entry is filled before the meta-solve.
                    let e = self.state.table.get(&profile).expect("filled entry");
                    if e.mean[player] >= e.mean[other] { w } else { 0.0 }
                })
                .collect();
            if weights.iter().sum::<f64>() <= 0.0 {
                continue;
            }
            let mut opponents = TabularPolicy::uniform(self.tree);
            aggregate_into(self.tree, other, &pop.policies(other), &weights, &mut opponents)?;
            let br = self.oracle.respond(self.tree, player, &[&opponents, &opponents])?;
            out.push(NewMember { player, policy: br, answered: pop.weighted_ids(other, &weights) });
        }
        if out.is_empty() {
            let br = self.oracle.respond(self.tree, player, &[full, full])?;
            out.push(NewMember { player, policy: br, answered: pop.weighted_ids(other, &sigma[other]) });
        }
        Ok(out)
    }

    /// Evaluate every missing payoff entry; returns (entries, episodes, seconds).
    fn fill_missing(&mut self) -> Result<(usize, u64, f64)> {
        let t = Instant::now();
        let missing = self.state.table.missing();
        if missing.is_empty() {
            return Ok((0, 0, 0.0));
        }
        let n = self.tree.num_players();
        let mut policies: Vec<&TabularPolicy> = Vec::new();
        let mut offsets = Vec::with_capacity(n);
        for p in 0..n {
            offsets.push(policies.len());
            policies.extend(self.state.population.policies(p));
        }
        let matchups: Vec<Matchup> = missing
            .iter()
            .map(|profile| Matchup {
                seats: profile.iter().enumerate().map(|(p, &i)| offsets[p] + i).collect(),
            })
            .collect();
        let seed = iteration_seed(self.config.seed, self.state.iteration);
        let totals =
            self.evaluator.evaluate(self.tree, &policies, &matchups, self.config.episodes_per_entry, seed)?;
        let mut episodes = 0;
        for (profile, total) in missing.iter().zip(&totals) {
            if !total.exact {
                episodes += total.episodes;
            }
            self.state.table.set(profile, Entry::from(total));
        }
        Ok((missing.len(), episodes, t.elapsed().as_secs_f64()))
    }

    /// Meta-solve and measure; returns the iteration's report.
    fn finish_iteration(
        &mut self,
        new_entries: usize,
        episodes: u64,
        times: &mut PhaseTimes,
    ) -> Result<IterationReport> {
        let t = Instant::now();
        let meta_game = self.state.table.to_normal_form()?;
        let solution = if self.config.warm_start {
            // The last mixture, with each new member given the share a uniform mixture would
            // give it (replicator dynamics cannot raise a strategy that starts at 0).
            let start: Vec<Vec<f64>> = self
                .state
                .meta_strategies
                .iter()
                .zip(meta_game.shape())
                .flat_map(|(old, &k)| Solution::extend_start(std::slice::from_ref(old), &[k], 1.0 / k as f64))
                .collect();
            self.meta_solver.solve_from(&meta_game, &start)
        } else {
            self.meta_solver.solve(&meta_game)
        }
        .map_err(|source| Error::MetaSolver { solver: self.meta_solver.name(), source })?;
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
        self.state.meta_strategies = strategies;
        times.meta_solve_s = t.elapsed().as_secs_f64();

        let t = Instant::now();
        let policy = aggregated(self.tree, &self.state.population, &self.state.meta_strategies)?;
        let report = metagame_games::nash_conv_report(self.tree, &vec![&policy; self.tree.num_players()])?;
        times.nash_conv_s = t.elapsed().as_secs_f64();
        Ok(IterationReport {
            iteration: self.state.iteration,
            population_sizes: self.state.population.sizes(),
            meta_strategies: self.state.meta_strategies.clone(),
            nash_conv: report.nash_conv,
            exploitability: report.exploitability,
            meta_nash_conv: solution.certificate.nash_conv,
            meta_status: solution.status,
            new_entries,
            episodes,
            elapsed_s: self.elapsed(),
            times: times.clone(),
        })
    }

    /// Run until `max_iterations`, the target NashConv, the time budget, or the observer
    /// says stop. The observer also sees the report of the current iteration first.
    ///
    /// # Errors
    ///
    /// As [`Psro::step`].
    pub fn run(&mut self, observer: &mut dyn Observer) -> Result<StopReason> {
        if let Some(last) = self.state.reports.last()
            && self.state.iteration == 0
            && observer.on_iteration(last).is_break()
        {
            return Ok(StopReason::Observer);
        }
        loop {
            if let Some(reason) = self.stop_reason() {
                return Ok(reason);
            }
            let report = self.step()?.clone();
            if let ControlFlow::Break(()) = observer.on_iteration(&report) {
                return Ok(StopReason::Observer);
            }
        }
    }

    /// The reason the run should stop now, if any (target reached, iterations or time used).
    pub fn stop_reason(&self) -> Option<StopReason> {
        let last = self.state.reports.last()?;
        if let Some(target) = self.config.target_nash_conv
            && last.nash_conv <= target
        {
            return Some(StopReason::TargetReached);
        }
        if self.config.convergence_tolerance > 0.0
            && last.nash_conv <= self.config.convergence_tolerance * self.payoff_scale
        {
            return Some(StopReason::Converged);
        }
        if self.state.iteration >= self.config.max_iterations {
            return Some(StopReason::MaxIterations);
        }
        if let Some(budget) = self.config.time_budget_seconds
            && self.elapsed() >= budget
        {
            return Some(StopReason::TimeBudget);
        }
        None
    }
}

/// The largest absolute terminal utility of the game (1 for a game whose payoffs are all 0).
fn payoff_scale(tree: &GameTree) -> f64 {
    let max = (0..tree.num_nodes())
        .filter(|&node| tree.node_kind(node) == NodeKind::Terminal)
        .flat_map(|node| tree.terminal_utilities(node).iter().map(|u| u.abs()))
        .fold(0.0, f64::max);
    if max > 0.0 { max } else { 1.0 }
}

/// Every player's rows of the population mixed with its meta-strategy, in one policy.
fn aggregated(tree: &GameTree, population: &Population, sigma: &[Vec<f64>]) -> Result<TabularPolicy> {
    let mut out = TabularPolicy::uniform(tree);
    for (p, weights) in sigma.iter().enumerate() {
        aggregate_into(tree, p, &population.policies(p), weights, &mut out)?;
    }
    Ok(out)
}

/// In a one-shot symmetric game, give player 1 the same strategy as player 0.
fn mirror_one_shot(tree: &GameTree, policy: &TabularPolicy) -> TabularPolicy {
    let mut out = policy.clone();
    let from = InfosetId(tree.infosets_of(0).start);
    let to = InfosetId(tree.infosets_of(1).start);
    let row = policy.row(from).to_vec();
    out.row_mut(to).copy_from_slice(&row);
    out
}
