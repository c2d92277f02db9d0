//! The umbrella crate's error: experiment configs, the component registry and runs.

use std::path::PathBuf;

/// A lower-level error carried as the source of a variant (I/O, serialisation, a backend
/// such as the CUDA driver).
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

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
    /// A config file that is not valid TOML. Its message has three lines more: the offending
    /// line of the file, numbered, with a caret under the column.
    #[error("{path}:{line}:{column}: {message}\n{snippet}")]
    ConfigSyntax {
        /// The config file (or `<string>`).
        path: PathBuf,
        /// The line, from 1.
        line: usize,
        /// The column, in characters from 1.
        column: usize,
        /// What is wrong there.
        message: String,
        /// The line of the file with a caret under the column (three lines).
        snippet: String,
    },
    /// A name the registry does not know.
    #[error("unknown {kind} `{name}`{hint}; known: {known}")]
    UnknownComponent {
        /// "meta-solver", "oracle" or "evaluator".
        kind: &'static str,
        /// The name asked for.
        name: String,
        /// The registered names, comma-separated.
        known: String,
        /// A hint for names that were meant for something else (may be empty).
        hint: &'static str,
    },
    /// A registered component that cannot be built here (no CUDA device, a bad setting).
    #[error("{kind} `{name}`: {source}")]
    Component {
        /// "meta-solver", "oracle" or "evaluator".
        kind: &'static str,
        /// Its name.
        name: String,
        /// Why (e.g. the backend's error).
        source: BoxError,
    },
    /// Work that needs a game's tree, on a game whose tree passes the node limit.
    #[error(
        "{what} needs the game tree of {game}, which has {size}: more than the limit of {limit} nodes (raise it with --max-nodes, or max_nodes in a config)"
    )]
    TreeTooLarge {
        /// What needed the tree.
        what: String,
        /// The game string.
        game: String,
        /// Its size, exact or estimated, as text.
        size: String,
        /// The node limit.
        limit: u64,
    },
    /// Bad game input.
    #[error(transparent)]
    Game(#[from] metagame_games::Error),
    /// A network file that cannot be read or does not fit the game.
    #[error(transparent)]
    Network(#[from] metagame_networks::Error),
    /// A solver error.
    #[error(transparent)]
    Solve(#[from] metagame_solvers::SolveError),
    /// A learner error (bad learner settings, main values of another game).
    #[error(transparent)]
    Learner(#[from] metagame_learners::Error),
    /// A training-loop error.
    #[error(transparent)]
    Populations(#[from] metagame_populations::Error),
    /// A checkpoint that cannot continue this run: written by another config, at an
    /// iteration past the config's `max_iterations`, or missing.
    #[error("{path}: {reason}")]
    Checkpoint {
        /// The checkpoint file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A run folder that another run is writing (its lock file names a live process).
    #[error(
        "{dir} is in use by another metagame run (process {pid}; lock file {lock}); wait for it to end or choose another folder"
    )]
    FolderInUse {
        /// The run folder.
        dir: PathBuf,
        /// The process holding it.
        pid: u32,
        /// The lock file.
        lock: PathBuf,
    },
    /// A file of the run folder that could not be written or read.
    #[error("{path}: {source}")]
    Output {
        /// The file.
        path: PathBuf,
        /// What failed.
        source: BoxError,
    },
}

/// `Result` with [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
