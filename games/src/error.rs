//! The one error type of the games crate.

use std::path::PathBuf;

/// Everything that can go wrong in `metagame-games` on bad input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A game name that the registry does not know.
    #[error("unknown game `{name}`; known games: {known}")]
    UnknownGame {
        /// The name asked for.
        name: String,
        /// The names that exist, comma separated.
        known: String,
    },
    /// A game string that does not parse, or a parameter that the game does not take.
    #[error("bad game string `{spec}`: {reason}")]
    BadGameSpec {
        /// The game string as given.
        spec: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A payoff that is NaN or infinite.
    #[error("payoff of player {player} at {profile:?} is not finite ({value})")]
    NonFinitePayoff {
        /// The player whose payoff it is.
        player: usize,
        /// The pure strategy profile.
        profile: Vec<usize>,
        /// The offending value.
        value: f64,
    },
    /// Arrays whose shapes do not fit together.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// A malformed Gambit `.nfg` file.
    #[error("malformed .nfg at line {line}: {reason}")]
    Nfg {
        /// 1-based line number where the problem was found.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A policy file that is not valid JSON or not shaped like OpenSpiel's tabular policy.
    #[error("malformed policy: {0}")]
    PolicyFormat(String),
    /// A policy row that is not a probability distribution over the legal actions.
    #[error("bad policy at information state {info_state:?}: {reason}")]
    BadPolicyRow {
        /// The information-state string of the row.
        info_state: String,
        /// What is wrong with it.
        reason: String,
    },
    /// An information state that the game does not have.
    #[error("unknown information state {0:?}")]
    UnknownInfoState(String),
    /// A quantity that is only defined for some games (exploitability needs 2-player constant-sum).
    #[error("{0}")]
    Unsupported(String),
    /// A game tree larger than the flat arena can index.
    #[error("game tree too large: more than {0} nodes")]
    TreeTooLarge(usize),
    /// A file that could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
