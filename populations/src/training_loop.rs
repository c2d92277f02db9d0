//! `TrainingLoop`: what every loop (PSRO, XFP, Double Oracle, the league, FXP, …) has in
//! common, and [`run_loop`], the one loop that drives any of them to a stop.
//!
//! A loop's [`step`](TrainingLoop::step) either succeeds and commits one iteration, or fails
//! and leaves the state as it was, so the last checkpoint still resumes. Limits that apply to
//! every loop (iterations, target NashConv, wall time) are [`RunLimits`], checked by the
//! driver; a loop only reports the reasons that are its own ([`StopReason::Converged`]).
//! The driver also owns the clock: a loop measures its phases, [`run_loop`] stamps each
//! report's wall time (`elapsed_s`, counting the time before a checkpoint the run resumed;
//! iteration 0's is the loop's construction, timed by its constructor).
//!
//! # The time budget inside a step
//!
//! [`run_loop`] checks the budget between steps, and hands the loop its end as a [`Cutoff`]
//! ([`TrainingLoop::set_cutoff`]) so that a long step gives up inside itself: it returns
//! [`Error::CutOff`] with its state unchanged, the run ends as [`StopReason::TimeBudget`] and
//! the last committed iteration stays the last checkpoint. Which loops check it, and how far
//! past the budget they stop:
//!
//! - PSRO: its learned responses before each of the learner's batches (`batch_size`
//!   episodes), its sampled payoff entries before each chunk of evaluation blocks (256 blocks
//!   of 4096 episodes per thread); [`Psro::new_until`](crate::Psro::new_until) cuts the
//!   initial entry too (the umbrella's driver uses it for a fresh run).
//! - FXP: before each of its policies' steps toward their best responses (one exact best
//!   response per member), and its sampled entries as PSRO's.
//! - The league: between the matches of a round.
//! - XFP, Double Oracle and CFR: not inside a step, whose work is one exact pass over the
//!   game or its meta-game.

use std::ops::ControlFlow;
use std::time::Instant;

pub use metagame_games::Cutoff;
use metagame_games::NormalFormGame;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::{IterationReport, Observer, StopReason};
use crate::settings::{built_by, setters};

/// One training loop: a state that a checkpoint holds, a step that commits only on success,
/// and a report per iteration.
pub trait TrainingLoop {
    /// Everything the loop needs to continue; what a checkpoint holds.
    type State: Clone + Serialize + DeserializeOwned + Send + 'static;

    /// Short stable name ("psro", "xfp", "double-oracle").
    fn name(&self) -> &'static str;

    /// One iteration. On success the iteration is committed and its report returned (its
    /// `elapsed_s` is [`run_loop`]'s to stamp; the loop keeps it as its
    /// [`last_report`](TrainingLoop::last_report)); on failure the state is unchanged.
    ///
    /// # Errors
    ///
    /// The loop's component failures, wrapped with the iteration
    /// ([`Error::AtIteration`]).
    fn step(&mut self) -> Result<&mut IterationReport>;

    /// The loop state after the last committed iteration.
    fn state(&self) -> &Self::State;

    /// The report of the last committed iteration (at the start: iteration 0's, the initial
    /// population's; `None` for a loop without one before its first step, as Double Oracle).
    /// The run's history of reports is [`run_loop`]'s, not the loop's.
    fn last_report(&self) -> Option<&IterationReport>;

    /// Iterations committed.
    fn iteration(&self) -> usize {
        self.last_report().map_or(0, |r| r.iteration)
    }

    /// A reason of the loop's own to stop now (e.g. converged), if any.
    fn stop_reason(&self) -> Option<StopReason> {
        None
    }

    /// The empirical meta-game, for loops that have one.
    ///
    /// # Errors
    ///
    /// A meta-game that cannot be built (an entry missing).
    fn meta_game(&self) -> Result<Option<NormalFormGame>> {
        Ok(None)
    }

    /// The standard errors of the meta-game's entries (laid out as its payoffs), where they
    /// were sampled; `None` for exact entries and loops without a meta-game.
    fn meta_game_stderr(&self) -> Option<Vec<Vec<f64>>> {
        None
    }

    /// Each player's members rated by batch Elo from the meta-game's entries, where the loop
    /// has a two-player meta-game and the game's utility range is known; `None` otherwise.
    fn member_elo(&self) -> Option<Vec<Vec<f64>>> {
        None
    }

    /// The population's lineage in Graphviz DOT, for loops with a population; `reports` is
    /// the run's history (oldest first).
    fn lineage_dot(&self, reports: &[IterationReport]) -> Option<String> {
        let _ = reports;
        None
    }

    /// When a step in progress should give up ([`run_loop`] sets the time budget's end here
    /// before each step). A loop whose steps are long checks [`Cutoff::passed`] between its
    /// batches (or passes the cutoff on to its evaluator and oracle) and, once it has passed,
    /// returns [`Error::CutOff`] with its state unchanged; the default ignores it (the budget
    /// is then checked between steps only). PSRO, FXP and the league check it; XFP, Double
    /// Oracle and CFR, whose steps are one exact pass, do not.
    fn set_cutoff(&mut self, cutoff: Cutoff) {
        let _ = cutoff;
    }

    /// The run's last iteration as its limits stand ([`run_loop`] sets it before the first
    /// step): a loop that evaluates its reports' NashConv on a schedule, as CFR does,
    /// evaluates that iteration whatever the schedule says. Default: ignored.
    fn set_last_iteration(&mut self, iteration: usize) {
        let _ = iteration;
    }

    /// The files of its members that are not tables, as `(path relative to the run folder,
    /// bytes)`, for the run's driver to write (once each: the paths name the contents' hash)
    /// before the checkpoint that names them. Default none.
    fn member_files(&self) -> Vec<(&str, &[u8])> {
        Vec::new()
    }

    /// Files the loop keeps in the run folder that only grow between checkpoints (the
    /// league's payoff log), as `(path relative to the run folder, whole content)`: the
    /// driver writes what it has not written yet before each checkpoint, and the whole file
    /// the first time, which drops whatever a killed run left past its last checkpoint.
    /// The state records how much of a file it covers. Default none.
    fn appended_files(&self) -> Vec<(&str, &[u8])> {
        Vec::new()
    }

    /// The run folder's file holding the loop's meta-game, where the loop keeps it there
    /// (one of its [`appended_files`](TrainingLoop::appended_files)): `report.json` names
    /// the file instead of holding the table, and no `.nfg` copy is written. Default none.
    fn meta_game_file(&self) -> Option<&str> {
        None
    }
}

/// Limits every run has, whatever its loop: checked by [`run_loop`] before each step.
///
/// Always valid: built by [`RunLimits::builder`] or deserialised through it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "RunLimitsBuilder", into = "RunLimitsBuilder")]
pub struct RunLimits {
    max_iterations: usize,
    target_nash_conv: Option<f64>,
    time_budget_seconds: Option<f64>,
}

/// Builder and serde form of [`RunLimits`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RunLimitsBuilder {
    /// Iterations after the initial population. Default 20.
    pub max_iterations: Option<usize>,
    /// Stop once NashConv ≤ this (finite, ≥ 0). Default none.
    pub target_nash_conv: Option<f64>,
    /// Stop after this many seconds of wall time (> 0; a resumed run counts the time before
    /// its checkpoint). Default none.
    pub time_budget_seconds: Option<f64>,
}

impl RunLimitsBuilder {
    /// The names of the fields, as configs spell them.
    pub const FIELDS: &'static [&'static str] =
        &["max_iterations", "target_nash_conv", "time_budget_seconds"];

    setters!(max_iterations: usize, target_nash_conv: f64, time_budget_seconds: f64);

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<RunLimits> {
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
        Ok(RunLimits {
            max_iterations: self.max_iterations.unwrap_or(20),
            target_nash_conv: self.target_nash_conv,
            time_budget_seconds: self.time_budget_seconds,
        })
    }
}

built_by!(RunLimits, RunLimitsBuilder);

impl From<RunLimits> for RunLimitsBuilder {
    fn from(l: RunLimits) -> Self {
        RunLimitsBuilder {
            max_iterations: Some(l.max_iterations),
            target_nash_conv: l.target_nash_conv,
            time_budget_seconds: l.time_budget_seconds,
        }
    }
}

impl RunLimits {
    /// Limits of `max_iterations` iterations and nothing else.
    pub fn iterations(max_iterations: usize) -> Self {
        RunLimits { max_iterations, ..RunLimits::default() }
    }
    /// Iterations after the initial population.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
    /// Stop at this NashConv.
    pub fn target_nash_conv(&self) -> Option<f64> {
        self.target_nash_conv
    }
    /// Stop after this wall time.
    pub fn time_budget_seconds(&self) -> Option<f64> {
        self.time_budget_seconds
    }

    /// Why a loop should stop now, if it should, `last` being the run's last report: the
    /// target NashConv, the loop's own reason (converged), the iteration cap, the time budget,
    /// in that order.
    pub fn stop_reason<L: TrainingLoop + ?Sized>(
        &self,
        lp: &L,
        last: Option<&IterationReport>,
    ) -> Option<StopReason> {
        if let (Some(target), Some(last)) = (self.target_nash_conv, last)
            && last.nash_conv.is_some_and(|nash_conv| nash_conv <= target)
        {
            return Some(StopReason::TargetReached);
        }
        if let Some(reason) = lp.stop_reason() {
            return Some(reason);
        }
        if lp.iteration() >= self.max_iterations {
            return Some(StopReason::MaxIterations);
        }
        if let (Some(budget), Some(last)) = (self.time_budget_seconds, last)
            && last.elapsed_s >= budget
        {
            return Some(StopReason::TimeBudget);
        }
        None
    }
}

/// A finished run of a loop: why it stopped and its reports, oldest first.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Run {
    /// Why it stopped.
    pub stop_reason: StopReason,
    /// Every report, oldest first (iteration 0's first for a run from the start).
    pub reports: Vec<IterationReport>,
}

/// Run `lp` until `limits` (or the loop) say stop or `observer` breaks, from its last
/// report; returns why it stopped and the reports (the loop's last one first). The observer
/// first sees iteration 0's report when the loop has not stepped yet.
///
/// # Errors
///
/// The first failing step's error; the loop keeps its last committed state.
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, GameTree};
/// use metagame_populations::{run_loop, RunLimits, StopReason, Xfp};
///
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let mut xfp = Xfp::new(&tree)?;
/// let run = run_loop(&mut xfp, &RunLimits::iterations(5), &mut ())?;
/// assert_eq!(run.stop_reason, StopReason::MaxIterations);
/// assert_eq!(run.reports.len(), 6);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn run_loop<L: TrainingLoop + ?Sized>(
    lp: &mut L,
    limits: &RunLimits,
    observer: &mut dyn Observer,
) -> Result<Run> {
    let mut reports: Vec<IterationReport> = lp.last_report().cloned().into_iter().collect();
    let stop_reason = run_loop_with(lp, &mut reports, limits, &Cutoff::never(), observer, &mut |_, _| {
        Ok(ControlFlow::Continue(()))
    })?;
    Ok(Run { stop_reason, reports })
}

/// What [`run_loop_with`] calls after each committed step: the loop and its history so far.
pub type Committed<'a, L> = dyn FnMut(&L, &[IterationReport]) -> Result<ControlFlow<()>> + 'a;

/// [`run_loop`] continuing the history `reports` (oldest first, ending with the loop's last
/// report, if any; a resumed run's saved reports), which grows by a report per step; `committed`
/// is called after each successful step with the history, before the observer (a driver
/// writes its checkpoint there); its `Break` stops the run as an observer's does. `interrupt`
/// (e.g. [`Cutoff::when_set`] on a Ctrl-C flag; [`Cutoff::never`] for none) is given to the
/// loop with the time budget's deadline, so that a step in progress gives up once either
/// passes; the run then stops as [`StopReason::TimeBudget`] (a caller that set the flag says
/// why).
///
/// # Errors
///
/// The first failing step's or `committed`'s error; `reports` then holds every committed
/// iteration's report.
pub fn run_loop_with<L: TrainingLoop + ?Sized>(
    lp: &mut L,
    reports: &mut Vec<IterationReport>,
    limits: &RunLimits,
    interrupt: &Cutoff,
    observer: &mut dyn Observer,
    committed: &mut Committed<'_, L>,
) -> Result<StopReason> {
    if lp.iteration() == 0
        && let Some(first) = reports.first()
        && observer.on_iteration(first).is_break()
    {
        return Ok(StopReason::Observer);
    }
    // Wall time counts from the checkpoint's when the run resumed.
    let before = reports.last().map_or(0.0, |r| r.elapsed_s);
    let started = Instant::now();
    // Steps that check it stop inside themselves once the budget has run out.
    let mut cutoff = interrupt.clone();
    if let Some(budget) = limits.time_budget_seconds {
        let left = (budget - before).max(0.0);
        if let Some(deadline) =
            std::time::Duration::try_from_secs_f64(left).ok().and_then(|d| started.checked_add(d))
        {
            cutoff = cutoff.or_at(deadline);
        }
    }
    lp.set_cutoff(cutoff);
    lp.set_last_iteration(limits.max_iterations);
    loop {
        if let Some(reason) = limits.stop_reason(lp, reports.last()) {
            return Ok(reason);
        }
        let report = match lp.step() {
            Ok(report) => report,
            Err(Error::CutOff) => return Ok(StopReason::TimeBudget),
            Err(e) => return Err(e),
        };
        report.elapsed_s = before + started.elapsed().as_secs_f64();
        reports.push(report.clone());
        if committed(lp, reports)?.is_break() {
            return Ok(StopReason::Observer);
        }
        // INVARIANT: just pushed.
        if observer.on_iteration(reports.last().expect("a report per step")).is_break() {
            return Ok(StopReason::Observer);
        }
    }
}
