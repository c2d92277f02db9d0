//! `IterationReport` and `Observer`: what a training loop tells the outside after each
//! iteration, and how the outside stops it.
//!
//! A report has a common core that every loop fills (iteration, population sizes, exact
//! NashConv, episodes, times), an optional [`MetaGameReport`] that only loops with an
//! empirical meta-game fill (PSRO, Double Oracle, FXP): a loop without one does not invent
//! its certificate; and the loop's own part ([`Details`]): a value of the loop's own type,
//! stored as its serde fields, so this module names no loop.

use std::ops::ControlFlow;

use metagame_solvers::Status;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// Seconds spent in each phase of one iteration.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct PhaseTimes {
    /// Computing or training the new policies.
    pub oracle_s: f64,
    /// Filling the new payoff entries.
    pub evaluation_s: f64,
    /// Solving the meta-game.
    pub meta_solve_s: f64,
    /// Aggregating the meta-mixture and computing its exact NashConv.
    pub nash_conv_s: f64,
    /// The network learners' own split of their training (episodes, gradients, optimiser
    /// steps), summed over the learners, where the loop trains networks itself (a league of
    /// networks); learners that train in parallel can sum to more than `oracle_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub learners: Option<metagame_learners::PhaseSeconds>,
}

/// The meta-game part of an iteration's report: the meta-solve on the empirical game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MetaGameReport {
    /// The meta-mixture per player.
    pub meta_strategies: Vec<Vec<f64>>,
    /// The meta-solver's certificate on the meta-game (NashConv of the meta-mixture within
    /// the restricted game).
    pub meta_nash_conv: f64,
    /// How the meta-solve ended.
    pub meta_status: Status,
    /// Payoff entries filled this iteration.
    pub new_entries: usize,
}

impl MetaGameReport {
    /// A meta-game report.
    pub fn new(
        meta_strategies: Vec<Vec<f64>>,
        meta_nash_conv: f64,
        meta_status: Status,
        new_entries: usize,
    ) -> Self {
        Self { meta_strategies, meta_nash_conv, meta_status, new_entries }
    }
}

/// One iteration of a training loop (iteration 0 is the initial population).
///
/// In JSON the meta-game part's fields sit beside the core's (`meta_strategies`,
/// `meta_nash_conv`, `meta_status`, `new_entries`), absent for loops without a meta-game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct IterationReport {
    /// Iteration number.
    pub iteration: usize,
    /// Members per player after the iteration (XFP: the policies averaged so far).
    pub population_sizes: Vec<usize>,
    /// Exact NashConv of the loop's current profile (PSRO: the meta-mixture aggregated into
    /// one behaviour policy), where the game's tree was built; `null` in JSON where it was not
    /// (a game too large to enumerate, played by rollouts).
    pub nash_conv: Option<f64>,
    /// NashConv / 2 in 2-player constant-sum games.
    pub exploitability: Option<f64>,
    /// Where the loop estimated it (PSRO's `approximate_every`): the NashConv estimated by
    /// trained best responses, a lower bound up to its standard error; absent in JSON where
    /// none was made.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nash_conv_estimate: Option<f64>,
    /// The estimate's standard error.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nash_conv_estimate_stderr: Option<f64>,
    /// Episodes played this iteration (0 with exact payoffs and exact responses).
    pub episodes: u64,
    /// For loops that add responses: each response's gap, in the order they were requested
    /// (player 0 first): the exact best-response value against the opponents it answered
    /// minus the response's own value against them. 0 for exact oracles; empty for loops
    /// without responses and for iteration 0.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub response_gap: Vec<f64>,
    /// Wall time since the run started (resumed runs include time before the checkpoint).
    pub elapsed_s: f64,
    /// Time per phase of this iteration.
    pub times: PhaseTimes,
    /// The meta-solve, for loops with an empirical meta-game.
    #[serde(flatten, default, skip_serializing_if = "Option::is_none")]
    pub meta_game: Option<MetaGameReport>,
    /// The loop's own part (the league's matches and ratings, FXP's main policy, …), its
    /// fields beside the core's in JSON.
    #[serde(flatten, default)]
    pub details: Details,
}

/// The loop's own part of a report: a value of the loop's type (e.g. the league's
/// `LeagueReport`), kept as its serde fields so that the core report, its readers and the
/// driver need not know the type. The loop writes it with [`Details::of`] and its readers
/// get it back with [`Details::get`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Details(serde_json::Map<String, serde_json::Value>);

impl Details {
    /// The fields of `part` (a struct that serialises to an object).
    ///
    /// # Panics
    ///
    /// If `part` does not serialise to a JSON object (a caller bug: report parts are structs).
    #[track_caller]
    pub fn of<T: Serialize>(part: &T) -> Self {
        match serde_json::to_value(part) {
            Ok(serde_json::Value::Object(fields)) => Details(fields),
            _ => panic!("a report part must serialise to an object"),
        }
    }

    /// The part as `T`; `None` when the fields are not a `T` (another loop's report, or none).
    pub fn get<T: DeserializeOwned>(&self) -> Option<T> {
        if self.0.is_empty() {
            return None;
        }
        // Read in place: a league's part holds every member's rating, not worth a copy.
        T::deserialize(&self.0).ok()
    }

    /// True when the loop wrote no part.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl IterationReport {
    /// A report with the core fields; no episodes, times or meta-game part.
    pub fn new(
        iteration: usize,
        population_sizes: Vec<usize>,
        nash_conv: Option<f64>,
        exploitability: Option<f64>,
    ) -> Self {
        Self {
            iteration,
            population_sizes,
            nash_conv,
            exploitability,
            nash_conv_estimate: None,
            nash_conv_estimate_stderr: None,
            episodes: 0,
            response_gap: Vec::new(),
            elapsed_s: 0.0,
            times: PhaseTimes::default(),
            meta_game: None,
            details: Details::default(),
        }
    }

    /// The report as the one after `previous`: its wall time at least `previous`'s. A loop
    /// measures no wall time ([`run_loop`](crate::run_loop) stamps it), so a report of a step
    /// called directly keeps the previous one's and saved times never decrease.
    pub fn after(mut self, previous: Option<&IterationReport>) -> Self {
        if let Some(p) = previous {
            self.elapsed_s = self.elapsed_s.max(p.elapsed_s);
        }
        self
    }

    /// The report without timing fields, for comparing runs.
    pub fn without_times(&self) -> IterationReport {
        IterationReport { elapsed_s: 0.0, times: PhaseTimes::default(), ..self.clone() }
    }
}

/// Watches a run; returning `ControlFlow::Break(())` stops it after the current iteration.
pub trait Observer {
    /// Called after every iteration (and once for iteration 0).
    fn on_iteration(&mut self, report: &IterationReport) -> ControlFlow<()>;
}

impl Observer for () {
    fn on_iteration(&mut self, _report: &IterationReport) -> ControlFlow<()> {
        ControlFlow::Continue(())
    }
}

impl<F: FnMut(&IterationReport) -> ControlFlow<()>> Observer for F {
    fn on_iteration(&mut self, report: &IterationReport) -> ControlFlow<()> {
        self(report)
    }
}

/// Why a run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum StopReason {
    /// `max_iterations` reached.
    MaxIterations,
    /// NashConv reached `target_nash_conv`.
    TargetReached,
    /// The time budget ran out.
    TimeBudget,
    /// An observer asked to stop.
    Observer,
    /// The run was interrupted (Ctrl-C, a termination signal, the caller's interrupt flag)
    /// after a committed step; its checkpoint resumes it.
    Interrupted,
    /// An equilibrium was found: nothing new could be added (Double Oracle), or PSRO's
    /// meta-mixture has NashConv within `convergence_tolerance` of 0.
    Converged,
    /// Not stopped yet: a run folder's report refreshed while the run goes on (the final
    /// report replaces it; a run killed meanwhile keeps it, and its checkpoint resumes it).
    Running,
}
