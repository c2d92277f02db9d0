//! Run an [`ExperimentConfig`]: build its loop from the registry's components and hand it to
//! the [driver](crate::driver), which does everything else.
//!
//! Each loop's unit (`src/loops/`) builds it, new or from the saved state.

use std::ops::ControlFlow;

use metagame_games::{GameTree, MatchEvaluator, registry};
use metagame_populations::{IterationReport, Oracle};
use metagame_solvers::MetaSolver;

use crate::config::ExperimentConfig;
use crate::driver::{Driver, RunOptions, RunReport};
use crate::error::Result;

/// Components to use instead of the ones the config names (e.g. your own oracle or
/// evaluator); `None` takes the config's. Loops that do not use a component ignore it.
#[derive(Default)]
#[non_exhaustive]
pub struct Components {
    /// The meta-solver (PSRO; FXP, default `nash`).
    pub meta_solver: Option<Box<dyn MetaSolver>>,
    /// The oracle (PSRO; FXP, default exact best responses).
    pub oracle: Option<Box<dyn Oracle>>,
    /// The payoff evaluator (PSRO; FXP, default exact).
    pub evaluator: Option<Box<dyn MatchEvaluator>>,
}

impl Components {
    /// The same components with `evaluator`.
    pub fn with_evaluator(mut self, evaluator: Box<dyn MatchEvaluator>) -> Self {
        self.evaluator = Some(evaluator);
        self
    }
    /// The same components with `oracle`.
    pub fn with_oracle(mut self, oracle: Box<dyn Oracle>) -> Self {
        self.oracle = Some(oracle);
        self
    }
    /// The same components with `meta_solver`.
    pub fn with_meta_solver(mut self, meta_solver: Box<dyn MetaSolver>) -> Self {
        self.meta_solver = Some(meta_solver);
        self
    }
}

/// Run an experiment with the components its config names. `observer` sees every
/// iteration's report (and may stop the run).
///
/// Writes into `options.out_dir`: `config.toml`, `checkpoint.json` after every iteration
/// (atomically), and at the end `report.json`, `exploitability.svg`, and for loops with a
/// meta-game `meta_game.nfg` and `payoffs.svg` (2 players), for loops with a population
/// `lineage.dot`. Returns `None` when stopped by [`RunOptions::stop_after`].
///
/// # Errors
///
/// Config, game, component, solver and I/O errors; a checkpoint from another config. A
/// failing iteration leaves the checkpoint of the last committed one, which resumes.
pub fn run_experiment(
    config: &ExperimentConfig,
    options: &RunOptions,
    observer: &mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
) -> Result<Option<RunReport>> {
    run_experiment_with(config, options, Components::default(), observer)
}

/// [`run_experiment`] with some components given as values instead of by name.
///
/// # Errors
///
/// As [`run_experiment`].
pub fn run_experiment_with(
    config: &ExperimentConfig,
    options: &RunOptions,
    components: Components,
    observer: &mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
) -> Result<Option<RunReport>> {
    let driver = Driver::new(config, options, observer)?;
    let game = registry::load(config.game())?;
    let tree = GameTree::build(&game)?;
    config.algorithm().run(&game, &tree, driver, components)
}
