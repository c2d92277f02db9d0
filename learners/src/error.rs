//! The one error type of the learners crate.

/// Everything that can go wrong in `metagame-learners` on bad input.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bad game input (from the games crate): a policy of another game, a row that is not a
    /// distribution.
    #[error(transparent)]
    Game(#[from] metagame_games::Error),
    /// A hyperparameter out of its range (the message names the field).
    #[error("invalid config: {0}")]
    Config(String),
    /// A training budget of zero episodes.
    #[error("the training budget is zero episodes")]
    ZeroBudget,
    /// A seat the game does not have.
    #[error("seat {seat} does not exist in a {num_players}-player game")]
    Seat {
        /// The seat asked for.
        seat: usize,
        /// The game's number of players.
        num_players: usize,
    },
    /// An opponent sampler that does not fit the game or the learner's seat.
    #[error("bad opponents: {0}")]
    Opponents(String),
    /// Value estimates that were not made for this game or seat.
    #[error("value estimates do not fit: {0}")]
    Values(String),
    /// Settings fields that do not read: an unknown field, a wrong type (the message names
    /// the field, prefixed `learner`).
    #[error("{0}")]
    Fields(String),
    /// A learner name no learner is registered as.
    #[error("unknown learner `{name}`; learners: {known}")]
    UnknownLearner {
        /// The name asked for.
        name: String,
        /// The registered names.
        known: String,
    },
    /// Training given a [`Cutoff`](metagame_games::Cutoff) stopped because it passed; the
    /// learner keeps the whole batches it trained before.
    #[error("training cut off before its budget was spent")]
    CutOff,
    /// A network that does not fit, or a weight file that does not read.
    #[error(transparent)]
    Network(#[from] metagame_networks::Error),
    /// Training diverged: a loss, gradient or weight became NaN or infinite.
    #[error("training diverged: {0}")]
    Diverged(String),
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
