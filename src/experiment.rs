//! Run an [`ExperimentConfig`]: build its loop from the registry's components and hand it to
//! the [driver](crate::driver), which does everything else.
//!
//! Each loop's unit (`src/loops/`) builds it, new or from the saved state.

use std::ops::ControlFlow;

use metagame_games::{AnyGame, Arena, Game, GameTree, registry};
use metagame_populations::IterationReport;

use crate::components::Components;

use crate::config::ExperimentConfig;
use crate::driver::{Driver, RunOptions};
use crate::error::{Error, Result};
use crate::loops::Algorithm;
use crate::run_report::RunReport;

/// Run an experiment with the components its config names. `observer` sees every
/// iteration's report (and may stop the run).
///
/// Writes into the run folder ([`RunOptions::out_dir`]): `config.toml`, `checkpoint.json`
/// after every iteration (atomically), and at the end `report.json`, for loops with a
/// meta-game `meta_game.nfg` (a league keeps its table in `payoffs.bin`, appended as it
/// grows), for loops with a population `lineage.dot`. With the `plots`
/// feature (on by default, through `cli`) also `exploitability.svg`, `mixtures.svg`, for
/// 2-player meta-games `payoffs.svg`, the loop's own figures and `report.html`; without it,
/// no figure or page. A run stopped by the interrupt flag ([`RunOptions::interrupt`]) writes
/// all of it for what it did and ends as `StopReason::Interrupted`.
///
/// Returns `None` only for a run stopped as if killed (a test hook).
///
/// # Examples
///
/// ```
/// use std::path::Path;
/// use metagame::{ExperimentConfig, RunOptions, run_experiment};
///
/// let config = ExperimentConfig::from_toml_str(
///     "game = \"kuhn_poker\"\nalgorithm = \"psro\"\nmax_iterations = 10\n",
///     Path::new("kuhn.toml"),
/// )?;
/// let dir = std::env::temp_dir().join("metagame-doc-run-experiment");
/// let _ = std::fs::remove_dir_all(&dir);
/// let report = run_experiment(&config, &RunOptions::new(&dir), &mut |_| std::ops::ControlFlow::Continue(()))?
///     .expect("a finished run");
/// assert!(report.iterations.last().unwrap().nash_conv.is_some_and(|x| x < 1e-6));
/// assert!(dir.join("report.json").is_file());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
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
    let game = registry::load(config.game())?;
    let algorithm = config.algorithm().algorithm();
    check_players(config, &game)?;
    let loaded = crate::LoadedGame::from_game(game, config.max_nodes())?;
    if algorithm.needs_tree() {
        loaded.tree(&format!("algorithm `{}`", algorithm.as_str()))?;
    }
    let components = match loaded.game() {
        AnyGame::Matrix(m) if components.normal_form.is_none() => {
            components.with_normal_form(m.normal_form().clone())
        }
        _ => components,
    };
    run_with(config, loaded.arena(), options, components, observer)
}

/// [`run_experiment_with`] on a game given as its tree (a game read from OpenSpiel, say)
/// instead of the registry game the config names; the config's `game` is the tree's name
/// ([`ExperimentConfig::from_toml_str_on`]).
///
/// # Errors
///
/// As [`run_experiment`]; [`Error::Game`] when the config names another game than the
/// tree's, or when an oracle is given to a loop that does not ask one.
pub fn run_experiment_on(
    config: &ExperimentConfig,
    tree: &GameTree,
    options: &RunOptions,
    components: Components,
    observer: &mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
) -> Result<Option<RunReport>> {
    check_game_name(config, tree.name(), "the tree is of")?;
    run_with(config, Arena::tree(tree), options, components, observer)
}

/// [`run_experiment_with`] on a game played on its states only, never enumerated (an
/// OpenSpiel game played through pyspiel, a PettingZoo environment: an
/// [`ExternalGame`](metagame_games::ExternalGame)) instead of the registry game the config
/// names; the config's `game` is the game's name. A failed call of the game's foreign code
/// ends the run before the iteration that met it is checkpointed.
///
/// # Errors
///
/// As [`run_experiment`]; [`Error::Game`] when the config names another game, the
/// algorithm needs the game tree, or the game's foreign code failed.
pub fn run_experiment_on_rules(
    config: &ExperimentConfig,
    game: &AnyGame,
    options: &RunOptions,
    components: Components,
    observer: &mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
) -> Result<Option<RunReport>> {
    check_game_name(config, &game.name(), "the game played is")?;
    check_players(config, game)?;
    let algorithm = config.algorithm().algorithm();
    if algorithm.needs_tree() {
        return Err(Error::Game(metagame_games::Error::Unsupported(format!(
            "algorithm `{}` needs the game tree, and {} is played on its states (PSRO and leagues with \
             learned responses and the rollout evaluator play it)",
            algorithm.as_str(),
            game.name()
        ))));
    }
    run_with(config, Arena::rules(game), options, components, observer)
}

/// The config names the game called `name` (`given` says what was given, for the message).
fn check_game_name(config: &ExperimentConfig, name: &str, given: &str) -> Result<()> {
    if crate::config::names_the_game(config.game(), name) {
        return Ok(());
    }
    Err(Error::Game(metagame_games::Error::Unsupported(format!(
        "game: the config names `{}`, but {given} `{name}`",
        config.game()
    ))))
}

/// The config's algorithm takes the game's number of players.
fn check_players(config: &ExperimentConfig, game: &AnyGame) -> Result<()> {
    let algorithm = config.algorithm().algorithm();
    if let Some(players) = algorithm.players()
        && game.num_players() != players
    {
        return Err(Error::Game(metagame_games::Error::Unsupported(format!(
            "game: algorithm `{}` takes a {players}-player game, {} has {} players",
            algorithm.as_str(),
            config.game(),
            game.num_players()
        ))));
    }
    Ok(())
}

fn run_with(
    config: &ExperimentConfig,
    arena: Arena<'_>,
    options: &RunOptions,
    components: Components,
    observer: &mut dyn FnMut(&IterationReport) -> ControlFlow<()>,
) -> Result<Option<RunReport>> {
    let algorithm = config.algorithm().algorithm();
    if components.oracle.is_some() && !algorithm.uses_oracle() {
        return Err(Error::Game(metagame_games::Error::Unsupported(format!(
            "algorithm `{}` trains its own responses and takes no oracle",
            algorithm.as_str()
        ))));
    }
    if !algorithm.plays_teams()
        && let Some(tree) = arena.game_tree()
        && let Some(teams) = metagame_games::Teams::of(tree)
        && teams.is_team_game()
    {
        let side = |s: usize| teams.side(s).iter().map(|p| p.0.to_string()).collect::<Vec<_>>().join(", ");
        let team_loops: Vec<&str> =
            Algorithm::ALL.iter().filter(|a| a.plays_teams()).map(|a| a.as_str()).collect();
        return Err(Error::Game(metagame_games::Error::Unsupported(format!(
            "game: {} is a team game (players {} against {}), and algorithm `{}` treats every player \
             alone; the loops that play teams: {}",
            tree.name(),
            side(0),
            side(1),
            algorithm.as_str(),
            team_loops.join(", ")
        ))));
    }
    let driver = Driver::new(config, options, observer)?.checking(arena.game_rules());
    config.algorithm().run(arena, driver, components)
}
