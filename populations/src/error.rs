//! The one error type of the populations crate.

use std::path::PathBuf;

/// Everything that can go wrong in a training loop on bad input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bad game input (from the games crate; its cut-offs become [`Error::CutOff`]).
    #[error(transparent)]
    Game(metagame_games::Error),
    /// A meta-solver refused the meta-game.
    #[error("meta-solver {solver}: {source}")]
    MetaSolver {
        /// The solver's name.
        solver: &'static str,
        /// Why.
        source: metagame_solvers::SolveError,
    },
    /// A learner refused its settings or failed to train (from the learners crate).
    #[error("learner: {0}")]
    Learner(#[source] metagame_learners::Error),
    /// An oracle given from outside the library (a Python object, say) failed or answered
    /// something that is not a policy of the game.
    #[error("oracle {name}: {reason}")]
    Oracle {
        /// The oracle's name.
        name: String,
        /// What went wrong.
        reason: String,
    },
    /// A configuration that cannot run (the message names the field).
    #[error("invalid config: {0}")]
    Config(String),
    /// A checkpoint that cannot be read or does not belong to this run.
    #[error("checkpoint {path}: {reason}")]
    Checkpoint {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// A saved loop state (a checkpoint's) that does not fit the run or contradicts itself:
    /// a mixture that is not a distribution, a payoff outside the game's range, a report that
    /// disagrees with the state.
    #[error("checkpoint state: {0}")]
    SavedState(String),
    /// A checkpoint that could not be written or parsed as JSON.
    #[error("checkpoint {path}: corrupt or not serialisable: {source}")]
    CheckpointJson {
        /// The file.
        path: PathBuf,
        /// The JSON error.
        source: serde_json::Error,
    },
    /// A file that could not be written or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A step (or the work of one: an evaluation, a learned response) gave up before
    /// committing because its [`Cutoff`](crate::Cutoff) passed (the time budget ran out
    /// inside it); the loop's state is as before the step.
    #[error("step cut off: the time budget ran out inside it")]
    CutOff,
    /// A learner failed (diverged, say) while training a new member; the run's last
    /// checkpoint is as it was.
    #[error("training member {member} of player {player}: {source}")]
    Training {
        /// The player whose member it was to be.
        player: usize,
        /// Its index in the player's population.
        member: usize,
        /// What went wrong.
        source: Box<Error>,
    },
    /// A league's learning agent failed (its learner diverged, say) while training in a
    /// match; the round is undone and the run's last checkpoint is as it was.
    #[error("training league member {member} ({role}) at seat {seat}: {source}")]
    AgentTraining {
        /// The agent's member id.
        member: usize,
        /// Its role (`main-agent`, …).
        role: String,
        /// The seat whose learner failed.
        seat: usize,
        /// What went wrong.
        source: Box<Error>,
    },
    /// An error at a given iteration of a training loop.
    #[error("at iteration {iteration}: {source}")]
    AtIteration {
        /// The iteration.
        iteration: usize,
        /// What went wrong.
        source: Box<Error>,
    },
}

impl From<metagame_games::Error> for Error {
    fn from(e: metagame_games::Error) -> Self {
        match e {
            metagame_games::Error::CutOff => Error::CutOff,
            e => Error::Game(e),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
