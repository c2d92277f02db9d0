//! The one driver: runs any [`TrainingLoop`] into a run folder with observers, checkpoints
//! after every committed iteration, the time budget and the other [`RunLimits`], resumption,
//! and the final report, meta-game, lineage and plots. It never asks which loop it runs.

use std::cell::Cell;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use metagame_populations::{IterationReport, RunLimits, StopReason, TrainingLoop, checkpoint, run_loop_with};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::checkpoint_writer::CheckpointWriter;
use crate::config::ExperimentConfig;
use crate::error::{Error, Result};

/// Name of the checkpoint file in a run folder.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";
/// Name of the report file in a run folder.
pub const REPORT_FILE: &str = "report.json";
/// Name of the final meta-game (Gambit .nfg) in a run folder.
pub const META_GAME_FILE: &str = "meta_game.nfg";
/// Name of the config file in a run folder (what `--resume DIR` reads).
pub(crate) const CONFIG_FILE: &str = "config.toml";

/// Files a run writes besides its figures.
const RUN_FILES: &[&str] = &[CONFIG_FILE, CHECKPOINT_FILE, REPORT_FILE, META_GAME_FILE, "lineage.dot"];
/// Extensions of the figures and pages a run writes.
const FIGURE_EXTENSIONS: &[&str] = &["svg", "png", "pdf", "html"];

/// Before a fresh run into a folder that holds a previous run (it has `config.toml`): remove
/// that run's files (its checkpoint, report, meta-game, lineage, figures), so the folder
/// never mixes two runs. Other files are left alone.
fn clear_previous_run(dir: &Path) -> Result<()> {
    if !dir.join(CONFIG_FILE).is_file() {
        return Ok(());
    }
    let entries = std::fs::read_dir(dir).map_err(|e| output_err(dir, e))?;
    for entry in entries {
        let path = entry.map_err(|e| output_err(dir, e))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        let figure =
            path.extension().and_then(|e| e.to_str()).is_some_and(|e| FIGURE_EXTENSIONS.contains(&e));
        if path.is_file() && (RUN_FILES.contains(&name) || figure) {
            std::fs::remove_file(&path).map_err(|e| output_err(&path, e))?;
        }
    }
    Ok(())
}

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

/// Where a run writes, and whether it continues from a checkpoint.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The run folder (created if missing, once the run can start). A fresh run replaces the
    /// files of a previous run there (see the CLI's `--overwrite`); other files stay.
    pub out_dir: PathBuf,
    /// Continue from `out_dir/checkpoint.json` instead of starting afresh.
    pub resume: bool,
    /// Stop right after the checkpoint of this iteration, without the final report (used to
    /// test resumption; behaves like a process killed after that checkpoint).
    pub stop_after: Option<usize>,
}

pub(crate) fn output_err(path: &Path, e: impl Into<crate::error::BoxError>) -> Error {
    Error::Output { path: path.into(), source: e.into() }
}

/// A run folder being driven: the config, the options, the observer and the saved state.
pub(crate) struct Driver<'a> {
    config: &'a ExperimentConfig,
    options: &'a RunOptions,
    observer: &'a mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
    saved: Option<serde_json::Value>,
}

impl<'a> Driver<'a> {
    /// Prepare a run: read the checkpoint when resuming (it must be of the same run). Writes
    /// nothing: the folder is made by [`Driver::run`], once the loop has been built, so a run
    /// that cannot start (a bad component, a meta-solver for other games) leaves no folder.
    pub(crate) fn new(
        config: &'a ExperimentConfig,
        options: &'a RunOptions,
        observer: &'a mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
    ) -> Result<Self> {
        let dir = &options.out_dir;
        let saved = if options.resume {
            let path = dir.join(CHECKPOINT_FILE);
            let saved: RunCheckpoint = checkpoint::load(&path)?;
            if !saved.config.same_run_as(config) {
                return Err(Error::Config {
                    path,
                    reason: "the checkpoint was written by a different config (only max_iterations, target_nash_conv and time_budget_seconds may change)".into(),
                });
            }
            Some(saved.state)
        } else {
            None
        };
        Ok(Self { config, options, observer, saved })
    }

    /// The saved loop state when resuming.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the checkpoint's state is not a state of this loop.
    pub(crate) fn saved_state<S: DeserializeOwned>(&mut self) -> Result<Option<S>> {
        self.saved
            .take()
            .map(|state| {
                serde_json::from_value(state).map_err(|e| Error::Config {
                    path: self.options.out_dir.join(CHECKPOINT_FILE),
                    reason: format!("the checkpoint's state does not fit the config's algorithm: {e}"),
                })
            })
            .transpose()
    }

    /// Run `lp` to a stop and write the run folder. `None` when stopped by
    /// [`RunOptions::stop_after`].
    ///
    /// # Errors
    ///
    /// The loop's errors (the folder then keeps the checkpoint of the last committed
    /// iteration), I/O errors.
    pub(crate) fn run<L: TrainingLoop>(self, mut lp: L) -> Result<Option<RunReport>> {
        let Driver { config, options, observer, .. } = self;
        let dir = &options.out_dir;
        std::fs::create_dir_all(dir).map_err(|e| output_err(dir, e))?;
        if !options.resume {
            clear_previous_run(dir)?;
        }
        checkpoint::write_atomic(&dir.join(CONFIG_FILE), config.to_toml().as_bytes())?;
        let limits: &RunLimits = config.limits();
        let writer = CheckpointWriter::new(dir.join(CHECKPOINT_FILE));
        let save =
            |state: &L::State| writer.submit(RunCheckpoint { config: config.clone(), state: state.clone() });
        if !options.resume {
            save(lp.state())?;
        }
        // `stop_after`: exit as if killed once the checkpoint of that iteration is written
        // and the observer has seen it, unless the run would stop there anyway.
        let kill_at = |lp: &L| {
            options.stop_after.is_some_and(|k| lp.iteration() >= k) && limits.stop_reason(lp).is_none()
        };
        if kill_at(&lp) {
            writer.finish()?;
            return Ok(None);
        }
        let kill = Cell::new(false);
        let mut failed: Option<Error> = None;
        // A resumed run's observer sees only the iterations this run computes, not the
        // checkpoint's again (the loop re-announces a checkpoint of iteration 0).
        let resumed_at = options.resume.then(|| lp.iteration());
        let mut observe = |report: &IterationReport| {
            if resumed_at.is_some_and(|c| report.iteration <= c) {
                return ControlFlow::Continue(());
            }
            if observer(report).is_break() || kill.get() {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        };
        let stop_reason = run_loop_with(&mut lp, limits, &mut observe, &mut |lp| {
            if let Err(e) = save(lp.state()) {
                failed = Some(e);
                return Ok(ControlFlow::Break(()));
            }
            kill.set(kill_at(lp));
            Ok(ControlFlow::Continue(()))
        })?;
        if let Some(e) = failed {
            return Err(e);
        }
        writer.finish()?;
        if kill.get() {
            return Ok(None);
        }

        let meta_game = lp.meta_game()?;
        let (meta_values, meta_shape) = match &meta_game {
            Some(g) => (
                Some((0..g.num_players()).map(|p| g.payoffs(p).iter().copied().collect()).collect()),
                g.shape().to_vec(),
            ),
            None => (None, Vec::new()),
        };
        let report = RunReport {
            config: config.clone(),
            stop_reason,
            iterations: lp.reports().to_vec(),
            meta_game: meta_values,
            meta_game_shape: meta_shape,
        };
        let json = serde_json::to_vec_pretty(&report).map_err(|e| output_err(&dir.join(REPORT_FILE), e))?;
        checkpoint::write_atomic(&dir.join(REPORT_FILE), &json)?;
        if let Some(dot) = lp.lineage_dot() {
            checkpoint::write_atomic(&dir.join("lineage.dot"), dot.as_bytes())?;
        }
        if let Some(g) = &meta_game {
            // The final meta-game as Gambit .nfg, for `metagame solve` and other tools.
            let nfg = metagame_games::nfg::to_nfg_string(g);
            checkpoint::write_atomic(&dir.join(META_GAME_FILE), nfg.as_bytes())?;
        }
        #[cfg(feature = "plots")]
        crate::plots::write_run_figures(&report, meta_game.as_ref(), dir)?;
        #[cfg(feature = "plots")]
        crate::report_html::write(&report, meta_game.as_ref(), lp.lineage_dot().as_deref(), dir)?;
        Ok(Some(report))
    }
}
