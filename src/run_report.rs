//! What a run folder holds as data: the checkpoint ([`RunCheckpoint`]) and the final report
//! ([`RunReport`], `report.json`).

use metagame_populations::{IterationReport, StopReason};
use serde::{Deserialize, Serialize};

use crate::config::ExperimentConfig;

/// What a checkpoint file holds: the config and the loop state (`S`: the loop's
/// [`TrainingLoop::State`]; JSON when read back before the loop is known).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCheckpoint<S = serde_json::Value> {
    /// The config of the run.
    pub config: ExperimentConfig,
    /// The loop state after the last committed iteration.
    pub state: S,
}

/// The final report of a run (`report.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct RunReport {
    /// The config.
    pub config: ExperimentConfig,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// Every iteration's report, oldest first.
    pub iterations: Vec<IterationReport>,
    /// The final meta-game (player-major payoff tensors, row-major), if the loop has one.
    pub meta_game: Option<Vec<Vec<f64>>>,
    /// Shape of `meta_game`.
    pub meta_game_shape: Vec<usize>,
}

impl RunReport {
    /// The report without timing fields (the iterations' times, the config's time budget),
    /// for comparing runs.
    pub fn without_times(&self) -> RunReport {
        let mut limits = metagame_populations::RunLimitsBuilder::from(self.config.limits().clone());
        limits.time_budget_seconds = None;
        // INVARIANT: removing a limit keeps the limits valid.
        let limits = limits.build().expect("valid limits");
        RunReport {
            iterations: self.iterations.iter().map(IterationReport::without_times).collect(),
            config: self.config.clone().with_limits(limits),
            ..self.clone()
        }
    }
}
