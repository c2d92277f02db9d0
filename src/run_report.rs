//! What a run folder holds as data: the checkpoint ([`RunCheckpoint`]) and the final report
//! ([`RunReport`], `report.json`).

use std::path::Path;

use metagame_populations::{IterationReport, StopReason, checkpoint};
use serde::{Deserialize, Serialize};

use crate::config::ExperimentConfig;
use crate::error::Result;
use crate::history_log::{self, HISTORY_FILE, HistoryMark};

/// Name of the checkpoint file in a run folder.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";

/// What a checkpoint file holds: the config, the loop state (`S`: the loop's
/// [`TrainingLoop::State`](metagame_populations::TrainingLoop::State); JSON when read back
/// before the loop is known) and how much of the run's history log (`history.jsonl`, the
/// reports, which the driver keeps; a loop keeps only its last) it covers.
/// [`RunCheckpoint::read`] reads both.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCheckpoint<S = serde_json::Value> {
    /// The config of the run.
    pub config: ExperimentConfig,
    /// The loop state after the last committed iteration.
    pub state: S,
    /// Every committed iteration's report, oldest first, as [`RunCheckpoint::read`] returns
    /// it (from the history log). Empty in the file, where `history` marks the log instead;
    /// checkpoints written before the log held the reports here (and before the driver kept
    /// the history, in the state's `reports`; reading moves them here).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reports: Vec<IterationReport>,
    /// How much of the history log the checkpoint covers (`None` in checkpoints written
    /// before the log).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub history: Option<HistoryMark>,
}

impl RunCheckpoint {
    /// Read the checkpoint of the run folder `dir` with its reports: the history log's
    /// records it covers (checked against their checksums), or, from a checkpoint written
    /// before the log, the reports it holds itself.
    ///
    /// # Errors
    ///
    /// [`Error::Populations`](crate::Error::Populations) for a checkpoint that cannot be read or is damaged;
    /// [`Error::Checkpoint`](crate::Error::Checkpoint) for a history log that is missing, shorter than the checkpoint
    /// says or damaged in the part it covers.
    pub fn read(dir: &Path) -> Result<RunCheckpoint> {
        let mut saved = checkpoint::load::<RunCheckpoint>(&dir.join(CHECKPOINT_FILE))?.migrated();
        if let Some(mark) = saved.history {
            saved.reports = history_log::read(&dir.join(HISTORY_FILE), mark)?;
        }
        Ok(saved)
    }

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
    /// Shape of `meta_game` (or of the meta-game kept in `meta_game_file`).
    pub meta_game_shape: Vec<usize>,
    /// The run folder's file that holds the meta-game where the loop keeps it there, not
    /// here (a league's `payoffs.bin`, appended as its table grows: `meta_game` is then
    /// absent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_game_file: Option<String>,
    /// The standard error of each entry of `meta_game`, laid out as it, where the entries
    /// were sampled (absent when they are exact).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_game_stderr: Option<Vec<Vec<f64>>>,
    /// Each player's members rated together by batch Elo from the final meta-game (two-player
    /// meta-games of games with a known utility range; the lowest member at 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub member_elo: Option<Vec<Vec<f64>>>,
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
