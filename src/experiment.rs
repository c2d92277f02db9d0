//! Run an [`ExperimentConfig`]: build its loop from the registry's components and hand it to
//! the [driver](crate::driver), which does everything else.
//!
//! Each loop's unit (`src/loops/`) builds it, new or from the saved state.

use std::ops::ControlFlow;

use metagame_games::{GameTree, registry};
use metagame_populations::IterationReport;

use crate::components::Components;

use crate::config::ExperimentConfig;
use crate::driver::{Driver, RunOptions};
use crate::error::Result;
use crate::run_report::RunReport;

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
