//! The umbrella crate's error: experiment configs and runs.

use std::path::PathBuf;

/// What can go wrong when loading or running an experiment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A config that does not parse or names something that does not exist.
    #[error("{path}: {reason}")]
    Config {
        /// The config file (or `<string>`).
        path: PathBuf,
        /// What is wrong, naming the field.
        reason: String,
    },
    /// Bad game input.
    #[error(transparent)]
    Game(#[from] metagame_games::Error),
    /// A solver error.
    #[error(transparent)]
    Solve(#[from] metagame_solvers::SolveError),
    /// A training-loop error.
    #[error(transparent)]
    Populations(#[from] metagame_populations::Error),
    /// A file that could not be written.
    #[error("{path}: {reason}")]
    Output {
        /// The file.
        path: PathBuf,
        /// What failed.
        reason: String,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
