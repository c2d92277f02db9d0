//! What a run folder holds as data: the checkpoint ([`RunCheckpoint`]) and the final report
//! ([`RunReport`], `report.json`).

use metagame_populations::{IterationReport, StopReason};
use serde::{Deserialize, Serialize};

use crate::config::ExperimentConfig;

/// What a checkpoint file holds: the config, the loop state (`S`: the loop's
/// [`TrainingLoop::State`](metagame_populations::TrainingLoop::State); JSON when read back
/// before the loop is known) and the run's reports, which the driver keeps (a loop keeps
/// only its last).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCheckpoint<S = serde_json::Value> {
    /// The config of the run.
    pub config: ExperimentConfig,
    /// The loop state after the last committed iteration.
    pub state: S,
    /// Every committed iteration's report, oldest first. Checkpoints written before the
    /// driver kept the history hold it in the state's `reports` instead; reading moves it
    /// here.
    #[serde(default)]
    pub reports: Vec<IterationReport>,
}

impl RunCheckpoint {
    /// The checkpoint in today's form: an older one's history (in `state.reports`) moved to
    /// `reports`.
    pub fn migrated(mut self) -> Self {
        if self.reports.is_empty()
            && let Some(old) = self.state.as_object_mut().and_then(|state| state.remove("reports"))
            && let Ok(reports) = serde_json::from_value(old)
        {
            self.reports = reports;
        }
        self
    }
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
