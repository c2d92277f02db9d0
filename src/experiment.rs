//! Run an [`ExperimentConfig`] into a run folder: checkpoints after every iteration,
//! `report.json`, plots, and resumption from a checkpoint.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use metagame_games::{
    AnyGame, ExactEvaluator, GameTree, MatchEvaluator, NormalFormGame, SampledEvaluator, registry,
};
use metagame_populations::meta::meta_solver_by_name;
use metagame_populations::{
    ExactBestResponse, IterationReport, Oracle, Psro, PsroState, StopReason, Xfp, XfpState, checkpoint,
    double_oracle,
};
use serde::{Deserialize, Serialize};

use crate::checkpoint_writer::CheckpointWriter;
use crate::config::{Algorithm, EvaluatorName, ExperimentConfig, OracleName};
use crate::error::{Error, Result};

/// Name of the checkpoint file in a run folder.
pub const CHECKPOINT_FILE: &str = "checkpoint.json";
/// Name of the report file in a run folder.
pub const REPORT_FILE: &str = "report.json";
/// Name of the final meta-game (Gambit .nfg) in a run folder.
pub const META_GAME_FILE: &str = "meta_game.nfg";

/// The state a checkpoint holds, per algorithm.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "algorithm", rename_all = "kebab-case")]
pub enum RunState {
    /// A PSRO run.
    Psro(PsroState),
    /// An XFP run.
    Xfp(XfpState),
}

/// What a checkpoint file holds: the config and the loop state.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunCheckpoint {
    /// The config of the run.
    pub config: ExperimentConfig,
    /// The loop state after the last finished iteration.
    pub state: RunState,
}

/// The final report of a run (`report.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RunReport {
    /// The config.
    pub config: ExperimentConfig,
    /// Why the run ended.
    pub stop_reason: StopReason,
    /// Every iteration's report, iteration 0 first.
    pub iterations: Vec<IterationReport>,
    /// The final meta-game (player-major payoff tensors, row-major), if the algorithm has one.
    pub meta_game: Option<Vec<Vec<f64>>>,
    /// Shape of `meta_game`.
    pub meta_game_shape: Vec<usize>,
}

impl RunReport {
    /// The report without timing fields, for comparing runs.
    pub fn without_times(&self) -> RunReport {
        RunReport {
            iterations: self.iterations.iter().map(IterationReport::without_times).collect(),
            config: ExperimentConfig { time_budget_seconds: None, ..self.config.clone() },
            ..self.clone()
        }
    }
}

/// The evaluator a config names.
///
/// # Errors
///
/// `gpu` without a device (or without the `cuda` feature): an error that says "no CUDA device".
pub fn evaluator_by_name(name: EvaluatorName) -> Result<Box<dyn MatchEvaluator>> {
    Ok(match name {
        EvaluatorName::Exact => Box::new(ExactEvaluator),
        EvaluatorName::Cpu => Box::new(SampledEvaluator::new()),
        EvaluatorName::Gpu => gpu_evaluator()?,
    })
}

#[cfg(feature = "cuda")]
fn gpu_evaluator() -> Result<Box<dyn MatchEvaluator>> {
    let gpu = metagame_cuda::GpuEvaluator::new()
        .map_err(|e| Error::Config { path: PathBuf::from("evaluator"), reason: e.to_string() })?;
    Ok(Box::new(gpu))
}

#[cfg(not(feature = "cuda"))]
fn gpu_evaluator() -> Result<Box<dyn MatchEvaluator>> {
    Err(Error::Config {
        path: PathBuf::from("evaluator"),
        reason: "no CUDA device: this build has no cuda feature (cargo build --release --features cuda)"
            .into(),
    })
}

/// Where a run writes, and whether it continues from a checkpoint.
#[derive(Clone, Debug)]
pub struct RunOptions {
    /// The run folder (created if missing).
    pub out_dir: PathBuf,
    /// Continue from `out_dir/checkpoint.json` instead of starting afresh.
    pub resume: bool,
    /// Stop right after the checkpoint of this iteration, without the final report (used to
    /// test resumption; behaves like a process killed after that checkpoint).
    pub stop_after: Option<usize>,
}

fn output_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Output { path: path.into(), reason: e.to_string() }
}

/// Run an experiment. `observer` sees every iteration's report (and may stop the run).
///
/// Writes into `options.out_dir`: `config.toml`, `checkpoint.json` after every iteration
/// (atomically), and at the end `report.json`, `exploitability.svg`, `payoffs.svg` (2-player
/// meta-games) and `lineage.dot` (PSRO).
///
/// # Errors
///
/// Config, game, solver and I/O errors; a checkpoint from another config.
pub fn run_experiment(
    config: &ExperimentConfig,
    options: &RunOptions,
    observer: &mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
) -> Result<Option<RunReport>> {
    let dir = &options.out_dir;
    std::fs::create_dir_all(dir).map_err(|e| output_err(dir, e))?;
    let saved = if options.resume {
        let path = dir.join(CHECKPOINT_FILE);
        let saved: RunCheckpoint = checkpoint::load(&path)?;
        if !saved.config.same_run_as(config) {
            return Err(Error::Config {
                path,
                reason: "the checkpoint was written by a different config (only iterations, target_nash_conv and time_budget_seconds may change)".into(),
            });
        }
        Some(saved.state)
    } else {
        None
    };
    checkpoint::write_atomic(&dir.join("config.toml"), config.to_toml().as_bytes())?;

    let game = registry::load(&config.game)?;
    let tree = GameTree::build(&game)?;
    let writer = CheckpointWriter::new(dir.join(CHECKPOINT_FILE));
    let save =
        |state: RunState| -> Result<()> { writer.submit(RunCheckpoint { config: config.clone(), state }) };

    let (stop_reason, reports, meta_game, lineage) = match config.algorithm {
        Algorithm::Psro => {
            let meta = meta_solver_by_name(&config.meta_solver)?;
            let evaluator = evaluator_by_name(config.evaluator)?;
            let psro_config = config.psro_config()?;
            let oracle: Box<dyn Oracle> = match config.oracle {
                OracleName::ExactBr => Box::new(ExactBestResponse::default()),
                OracleName::ExactBrTrembling => Box::new(ExactBestResponse::trembling(config.tremble)),
            };
            let mut psro = match saved {
                Some(RunState::Psro(state)) => {
                    Psro::resume(&tree, psro_config, meta, oracle, evaluator, state)?
                }
                Some(_) => return Err(mismatch(dir)),
                None => {
                    let psro = Psro::new(&tree, psro_config, meta, oracle, evaluator)?;
                    save(RunState::Psro(psro.state().clone()))?;
                    psro
                }
            };
            let mut reason = None;
            if psro.state().iteration == 0
                && let Some(first) = psro.reports().first()
                && observer(first).is_break()
            {
                reason = Some(StopReason::Observer);
            }
            let reason = loop {
                if let Some(r) = reason.take().or_else(|| psro.stop_reason()) {
                    break r;
                }
                if options.stop_after.is_some_and(|k| psro.state().iteration >= k) {
                    writer.finish()?;
                    return Ok(None);
                }
                let report = psro.step()?.clone();
                save(RunState::Psro(psro.state().clone()))?;
                if observer(&report).is_break() {
                    break StopReason::Observer;
                }
            };
            let table = psro.state().table.to_normal_form()?;
            (reason, psro.reports().to_vec(), Some(table), Some(psro.state().population.lineage_dot()))
        }
        Algorithm::Xfp => {
            let mut xfp = match saved {
                Some(RunState::Xfp(state)) => Xfp::resume(&tree, state)?,
                Some(_) => return Err(mismatch(dir)),
                None => {
                    let xfp = Xfp::new(&tree)?;
                    save(RunState::Xfp(xfp.state().clone()))?;
                    xfp
                }
            };
            let mut reason = None;
            if xfp.state().iteration == 0
                && let Some(first) = xfp.reports().first()
                && observer(first).is_break()
            {
                reason = Some(StopReason::Observer);
            }
            let reason = loop {
                if let Some(r) = reason.take() {
                    break r;
                }
                let last = xfp.reports().last().map_or(f64::INFINITY, |r| r.nash_conv);
                if config.target_nash_conv.is_some_and(|t| last <= t) {
                    break StopReason::TargetReached;
                }
                if xfp.state().iteration >= config.iterations {
                    break StopReason::MaxIterations;
                }
                if config
                    .time_budget_seconds
                    .is_some_and(|b| xfp.reports().last().is_some_and(|r| r.elapsed_s >= b))
                {
                    break StopReason::TimeBudget;
                }
                if options.stop_after.is_some_and(|k| xfp.state().iteration >= k) {
                    writer.finish()?;
                    return Ok(None);
                }
                let report = xfp.step()?.clone();
                save(RunState::Xfp(xfp.state().clone()))?;
                if observer(&report).is_break() {
                    break StopReason::Observer;
                }
            };
            (reason, xfp.reports().to_vec(), None, None)
        }
        Algorithm::DoubleOracle => {
            let normal_form = match &game {
                AnyGame::Matrix(m) => m.normal_form().clone(),
                _ => NormalFormGame::from_tree(&tree)?,
            };
            let result = double_oracle(&normal_form, [0, 0], config.iterations, config.tolerance)?;
            for r in &result.reports {
                if observer(r).is_break() {
                    break;
                }
            }
            let reason = if result.converged { StopReason::Converged } else { StopReason::MaxIterations };
            (reason, result.reports, None, None)
        }
    };

    writer.finish()?;
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
        iterations: reports,
        meta_game: meta_values,
        meta_game_shape: meta_shape,
    };
    let json = serde_json::to_vec_pretty(&report).map_err(|e| output_err(&dir.join(REPORT_FILE), e))?;
    checkpoint::write_atomic(&dir.join(REPORT_FILE), &json)?;
    if let Some(dot) = lineage {
        checkpoint::write_atomic(&dir.join("lineage.dot"), dot.as_bytes())?;
    }
    if let Some(g) = &meta_game {
        // The final meta-game as Gambit .nfg, for `metagame solve` and other tools.
        let nfg = metagame_games::nfg::to_nfg_string(g);
        checkpoint::write_atomic(&dir.join(META_GAME_FILE), nfg.as_bytes())?;
    }
    #[cfg(feature = "plots")]
    {
        crate::plots::exploitability_svg(&report, &dir.join("exploitability.svg"))?;
        if let Some(g) = &meta_game
            && g.num_players() == 2
        {
            let last = report.iterations.last().map(|r| r.meta_strategies.clone()).unwrap_or_default();
            crate::plots::payoffs_svg(g, &last, &dir.join("payoffs.svg"))?;
        }
    }
    Ok(Some(report))
}

fn mismatch(dir: &Path) -> Error {
    Error::Config {
        path: dir.join(CHECKPOINT_FILE),
        reason: "the checkpoint is of another algorithm than the config".into(),
    }
}
