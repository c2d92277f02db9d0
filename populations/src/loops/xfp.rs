//! Extensive-form fictitious play (XFP; Heinrich, Lanctot & Silver 2015) on the game tree.
//!
//! Each iteration every player best-responds exactly to the current average profile, and
//! the average moves towards the best responses with step α = 1/(t+1), mixed by
//! realisation weighting (Heinrich & Silver 2016, arXiv:1603.01121, §2.3 Eq. 1), so the average after t iterations equals the
//! uniform mixture of the initial policy and the t best responses.

use std::time::Instant;

use metagame_games::{GameTree, PlayerId, TabularPolicy, aggregate_into, best_response, nash_conv_report};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::{IterationReport, PhaseTimes};
use crate::training_loop::TrainingLoop;

/// Everything an XFP run needs to continue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct XfpState {
    /// Iterations done.
    pub iteration: usize,
    /// The average policy (every player's rows).
    pub average: TabularPolicy,
}

/// An XFP run.
pub struct Xfp<'t> {
    tree: &'t GameTree,
    state: XfpState,
    /// The last committed iteration's report.
    last: IterationReport,
}

impl<'t> Xfp<'t> {
    /// Start from the uniform policy.
    ///
    /// # Errors
    ///
    /// Errors of the exact NashConv (none for trees built by `GameTree::build`).
    pub fn new(tree: &'t GameTree) -> Result<Self> {
        // Iteration 0 is the construction: its wall time is the report's.
        let started = Instant::now();
        let average = TabularPolicy::uniform(tree);
        let state = XfpState { iteration: 0, average };
        let placeholder = IterationReport::new(0, vec![1; tree.num_players()], Some(0.0), None);
        let mut xfp = Self { tree, state, last: placeholder };
        let mut report = xfp.report(0, &xfp.state.average, PhaseTimes::default())?;
        report.elapsed_s = started.elapsed().as_secs_f64();
        xfp.last = report;
        Ok(xfp)
    }

    /// Continue from a saved state and the run's reports, after checking them: the average
    /// policy's rows are
    /// distributions over this tree's actions, the reports are those of iterations 0 to
    /// `iteration` with `iteration + 1` policies per player, and the last one has the
    /// average's NashConv (recomputed).
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] naming what does not fit.
    pub fn resume(tree: &'t GameTree, state: XfpState, reports: &[IterationReport]) -> Result<Self> {
        let bad = |why: String| Error::SavedState(why);
        state.average.validate(tree).map_err(|e| bad(format!("the average policy: {e}")))?;
        crate::checkpoint::check_reports(reports, 0, state.iteration)?;
        let n = tree.num_players();
        if let Some(r) = reports.iter().find(|r| r.population_sizes != vec![r.iteration + 1; n]) {
            return Err(bad(format!(
                "the report of iteration {} has populations of {:?}",
                r.iteration, r.population_sizes
            )));
        }
        // INVARIANT: check_reports saw iteration + 1 ≥ 1 reports.
        let last = reports.last().expect("a report").clone();
        let computed = nash_conv_report(tree, &vec![&state.average; n])?.nash_conv;
        let scale = (0..tree.num_nodes())
            .filter(|&node| tree.node_kind(node) == metagame_games::NodeKind::Terminal)
            .flat_map(|node| tree.terminal_utilities(node).iter().map(|u| u.abs()))
            .fold(0.0, f64::max);
        crate::checkpoint::check_nash_conv(state.iteration, last.nash_conv, computed, scale)?;
        Ok(Self { tree, state, last })
    }

    /// The loop state.
    pub fn state(&self) -> &XfpState {
        &self.state
    }
    /// The average policy.
    pub fn average_policy(&self) -> &TabularPolicy {
        &self.state.average
    }
    /// The last committed iteration's report (iteration 0's at the start).
    pub fn last_report(&self) -> &IterationReport {
        &self.last
    }

    /// One XFP iteration; nothing is committed unless it succeeds.
    ///
    /// # Errors
    ///
    /// [`Error::AtIteration`] wrapping exact best-response, aggregation or NashConv errors
    /// (none on a valid state); the state is then the one before the call.
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let iteration = self.state.iteration + 1;
        let (average, report) =
            self.stage(iteration).map_err(|e| Error::AtIteration { iteration, source: Box::new(e) })?;
        self.state.average = average;
        self.state.iteration = iteration;
        self.last = report.after(Some(&self.last));
        Ok(&mut self.last)
    }

    fn stage(&self, iteration: usize) -> Result<(TabularPolicy, IterationReport)> {
        let n = self.tree.num_players();
        let t = Instant::now();
        let profile = vec![&self.state.average; n];
        let brs = (0..n)
            .map(|p| best_response(self.tree, PlayerId(p), &profile).map(|(policy, _)| policy))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let oracle_s = t.elapsed().as_secs_f64();
        let alpha = 1.0 / (iteration as f64 + 1.0);
        let mut next = self.state.average.clone();
        for (p, br) in brs.iter().enumerate() {
            aggregate_into(
                self.tree,
                PlayerId(p),
                &[&self.state.average, br],
                &[1.0 - alpha, alpha],
                &mut next,
            )?;
        }
        let report = self.report(iteration, &next, PhaseTimes { oracle_s, ..PhaseTimes::default() })?;
        Ok((next, report))
    }

    fn report(
        &self,
        iteration: usize,
        average: &TabularPolicy,
        mut times: PhaseTimes,
    ) -> Result<IterationReport> {
        let t = Instant::now();
        let n = self.tree.num_players();
        let r = nash_conv_report(self.tree, &vec![average; n])?;
        times.nash_conv_s = t.elapsed().as_secs_f64();
        let mut report =
            IterationReport::new(iteration, vec![iteration + 1; n], Some(r.nash_conv), r.exploitability);
        report.times = times;
        Ok(report)
    }
}

impl TrainingLoop for Xfp<'_> {
    type State = XfpState;

    fn name(&self) -> &'static str {
        "xfp"
    }
    fn step(&mut self) -> Result<&mut IterationReport> {
        Xfp::step(self)
    }
    fn state(&self) -> &XfpState {
        &self.state
    }
    fn last_report(&self) -> Option<&IterationReport> {
        Some(&self.last)
    }
}
