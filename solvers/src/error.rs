//! The one error type of the solvers crate.

/// Why a solver could not run on a game. Not converging is a [`crate::Status`], not an error.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SolveError {
    /// The solver does not handle this kind of game (e.g. a 3-player game given to a
    /// 2-player solver, or a general-sum game given to the zero-sum LP).
    #[error("{solver} does not support this game: {reason}")]
    Unsupported {
        /// The solver's name.
        solver: &'static str,
        /// Why.
        reason: String,
    },
    /// A setting out of its documented range.
    #[error("invalid setting for {solver}: {reason}")]
    InvalidConfig {
        /// The solver's name.
        solver: &'static str,
        /// Which setting and why.
        reason: String,
    },
    /// An unknown solver name (configs and the CLI).
    #[error("unknown solver `{name}`; known solvers: {known}")]
    UnknownSolver {
        /// The name asked for.
        name: String,
        /// The names that exist.
        known: String,
    },
    /// The numerical method failed outright (the message says how).
    #[error("{solver} failed numerically: {reason}")]
    Numerical {
        /// The solver's name.
        solver: &'static str,
        /// What went wrong.
        reason: String,
    },
    /// An error from the games crate (bad game input).
    #[error(transparent)]
    Game(#[from] metagame_games::Error),
}

/// `Result` with [`SolveError`].
pub type Result<T, E = SolveError> = std::result::Result<T, E>;
