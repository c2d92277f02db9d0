//! The one error type of the games crate.

use std::path::{Path, PathBuf};

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
    /// A match-evaluation backend (e.g. the GPU) failed; the backend's own error is the source.
    #[error("{backend} evaluator failed")]
    Backend {
        /// The backend's name (`"gpu"`).
        backend: &'static str,
        /// The backend's error.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// Arrays whose shapes do not fit together.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// Work that needs the game tree (exact values, tables) on a game whose tree was not built.
    #[error("{what} needs the game tree of {game}, which was not built")]
    NoTree {
        /// The game string.
        game: String,
        /// What needed the tree.
        what: String,
    },
    /// A policy of a match failed or answered garbage; `policy` is its index in the list the
    /// evaluator was given.
    #[error("policy {policy} ({kind}): {source}")]
    PolicyFailed {
        /// The policy's index in the evaluator's list.
        policy: usize,
        /// What the policy is made of ([`Policy::kind`](crate::Policy::kind)).
        kind: String,
        /// What went wrong.
        #[source]
        source: Box<Error>,
    },
    /// A policy that is the user's own code (a Python callable) raised, or answered
    /// something other than an array of probabilities; the message names the callable.
    #[error("{0}")]
    PolicyCode(String),
    /// A call of a game played through foreign code ([`ExternalGame`](crate::ExternalGame):
    /// pyspiel, PettingZoo) failed; the message names the game and the call.
    #[error("{0}")]
    External(String),
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
    /// A policy's answer for a batch of decision points that is not a distribution over each
    /// point's legal actions.
    #[error("bad probabilities for decision {row} of the batch: {reason}")]
    BadProbabilities {
        /// The row of the batch.
        row: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// An information state that the game does not have.
    #[error("unknown information state {0:?}")]
    UnknownInfoState(String),
    /// A quantity that is only defined for some games (exploitability needs 2-player constant-sum).
    #[error("{0}")]
    Unsupported(String),
    /// A computation that needs perfect recall (realisation plans, the sequence form,
    /// reach-weighted aggregation) on a game tree without it
    /// ([`GameTree::has_perfect_recall`](crate::GameTree::has_perfect_recall)).
    #[error(
        "{what} needs perfect recall, and {game} has imperfect recall ({num_infosets} information states reached with different own histories)"
    )]
    ImperfectRecall {
        /// The game string.
        game: String,
        /// The number of information states of imperfect recall.
        num_infosets: usize,
        /// What needed perfect recall.
        what: &'static str,
    },
    /// A game tree larger than the flat arena can index.
    #[error("game tree too large: more than {0} nodes")]
    TreeTooLarge(usize),
    /// A size past one of the documented limits (an `.nfg` header, a game tree, a file), found
    /// before the memory for it was committed. The message says what and the limit; `raise`
    /// names the library setting that takes another limit (the CLI and configs keep the
    /// defaults, so their users are not told of a Rust function).
    #[error("{what}: more than the limit of {limit} {unit}")]
    LimitExceeded {
        /// What is too large, with its size where known.
        what: String,
        /// The limit.
        limit: u64,
        /// What the limit counts ("payoffs", "nodes", "bytes").
        unit: &'static str,
        /// The setting that raises the limit.
        raise: &'static str,
    },
    /// A file that could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// Work given a [`Cutoff`](crate::Cutoff) gave up because it passed (a time budget ran
    /// out, a stop was asked for); nothing of it was returned.
    #[error("cut off before it finished")]
    CutOff,
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Read a text file of at most `max_bytes` bytes: a larger file (or an endless one such as
/// `/dev/zero`) is an [`Error::LimitExceeded`] naming `raise`, after reading at most
/// `max_bytes + 1` bytes into a buffer that never grows past that.
///
/// # Errors
///
/// [`Error::Io`] when the file cannot be read or is not UTF-8; [`Error::LimitExceeded`].
pub(crate) fn read_text_capped(path: &Path, max_bytes: u64, raise: &'static str) -> Result<String> {
    use std::io::Read;

    let io = |source: std::io::Error| Error::Io { path: path.into(), source };
    let too_large = |what: String| Error::LimitExceeded { what, limit: max_bytes, unit: "bytes", raise };
    let mut file = std::fs::File::open(path).map_err(io)?;
    // Pipes and devices state 0 bytes: the capped reads below stop them.
    let stated = file.metadata().map_err(io)?.len();
    if stated > max_bytes {
        return Err(too_large(format!("{} ({stated} bytes)", path.display())));
    }
    let most = usize::try_from(max_bytes).unwrap_or(usize::MAX - 1) + 1;
    let mut bytes: Vec<u8> = Vec::new();
    let mut len = 0;
    loop {
        if len == bytes.len() {
            if len == most {
                break;
            }
            // Double (from the stated size) but never past `most`: `reserve_exact`, as
            // `resize` alone would round the capacity up.
            let grow = bytes.len().max((stated as usize).saturating_add(1)).max(1 << 16).min(most - len);
            bytes.reserve_exact(grow);
            bytes.resize(len + grow, 0);
        }
        match file.read(&mut bytes[len..]) {
            Ok(0) => break,
            Ok(k) => len += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io(e)),
        }
    }
    if len == most {
        return Err(too_large(path.display().to_string()));
    }
    bytes.truncate(len);
    String::from_utf8(bytes)
        .map_err(|e| io(std::io::Error::new(std::io::ErrorKind::InvalidData, e.utf8_error())))
}
