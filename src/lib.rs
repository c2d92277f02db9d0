//! # metagame
//!
//! Game-theoretic population training for multi-agent RL research, in one library:
//!
//! - [`games`]: Kuhn and Leduc poker and matrix games, flat game trees, tabular policies,
//!   exact best responses and NashConv, batched match evaluation;
//! - [`solvers`]: certified Nash (and CE/CCE, alpha-Rank) solvers for meta-games;
//! - [`populations`]: populations, payoff tables, PSRO, fictitious play, checkpoints;
//! - [`ExperimentConfig`] (a tagged enum of per-algorithm sections), the component
//!   [`registry`] (names to meta-solvers, oracles and evaluators, for configs and the CLI) and
//!   [`run_experiment`] (one driver for every
//!   [`TrainingLoop`](metagame_populations::TrainingLoop)): what the `metagame run` command does.
//!
//! # Example
//!
//! ```
//! use metagame::games::{nash_conv, registry, GameTree, TabularPolicy};
//!
//! let tree = GameTree::build(&registry::load("leduc_poker")?)?;
//! let uniform = TabularPolicy::uniform(&tree);
//! let value = nash_conv(&tree, &[&uniform, &uniform])?;
//! assert!((value - 1709.0 / 360.0).abs() < 1e-12);
//! # Ok::<(), metagame::games::Error>(())
//! ```
//!
//! # Features
//!
//! | feature | default | what it adds |
//! |---|---|---|
//! | `cli` | yes | the `metagame` binary (clap, progress bars) and `plots` |
//! | `plots` | with `cli` | SVG plots in run folders (plotters) |
//! | `cuda` | no | the `cuda` module (`GpuEvaluator`): sampled matches on an NVIDIA GPU, networks' batches on cuBLAS (cudarc; builds without CUDA) |

#[cfg(feature = "cuda")]
pub use metagame_cuda as cuda;
pub use metagame_games as games;
pub use metagame_learners as learners;
pub use metagame_networks as networks;
pub use metagame_populations as populations;
pub use metagame_solvers as solvers;

pub mod bench;
#[cfg(feature = "plots")]
pub mod bench_plot;
mod checkpoint_writer;
mod components;
mod config;
mod driver;
mod error;
mod experiment;
mod fields;
mod history_log;
mod loaded_game;
mod loops;
mod matches_table;
#[cfg(feature = "plots")]
pub mod plots;
pub mod registry;
#[cfg(feature = "plots")]
mod report_html;
mod run_report;

pub use components::Components;
pub use config::ExperimentConfig;
pub use driver::{META_GAME_FILE, REFRESH_EVERY, REPORT_FILE, RunOptions};
pub use error::{BoxError, Error, Result};
pub use experiment::{run_experiment, run_experiment_on, run_experiment_on_rules, run_experiment_with};
pub use history_log::{HISTORY_FILE, HistoryMark};
pub use loaded_game::LoadedGame;
pub use matches_table::{MatchesPlayed, batch_elo, matches_json};
// Every loop's section and the `Algorithm` / `AlgorithmConfig` the `loops!` list makes.
pub use loops::*;
pub use registry::{EvaluatorName, LearnerSettings, MetaSolverName, OracleName};
pub use run_report::{CHECKPOINT_FILE, RunCheckpoint, RunReport};
