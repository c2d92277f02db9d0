//! The one error type of the networks crate.

use std::path::PathBuf;

/// Everything that can go wrong in `metagame-networks` on bad input.
///
/// Each message is one line and names the tensor, layer or shape at fault.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Bytes that the safetensors reader refuses (no 8-byte header length, a header that is
    /// not JSON, offsets that do not cover the data, …).
    #[error("not a safetensors file: {0}")]
    NotSafetensors(#[source] safetensors::SafeTensorError),
    /// A network past one of the documented caps, found before its memory was committed: a
    /// file over [`MAX_FILE_BYTES`](crate::MAX_FILE_BYTES) (or the limit given to
    /// [`Mlp::read_with_limit`](crate::Mlp::read_with_limit)), or a random network of more
    /// than [`MAX_PARAMETERS`](crate::MAX_PARAMETERS) parameters.
    #[error("{what}: more than the limit of {limit} {unit}")]
    TooLarge {
        /// What is too large, with its size where known.
        what: String,
        /// The limit.
        limit: u64,
        /// What the limit counts ("bytes", "parameters").
        unit: &'static str,
    },
    /// The network could not be laid out as safetensors (the writer's own error).
    #[error("could not write the network as safetensors: {0}")]
    Serialize(#[source] safetensors::SafeTensorError),
    /// A file that could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },
    /// A file that holds no tensor at all, or an empty list of layers.
    #[error("no layers: an MLP needs at least one Linear layer (`0.weight`, `0.bias`)")]
    NoLayers,
    /// A tensor name that is not `{i}.weight` or `{i}.bias` at an even index `i`: an extra
    /// tensor, a misspelt one, a prefixed one (`net.0.weight`) or one at a ReLU's index.
    #[error("unexpected tensor `{key}`: {reason}")]
    UnexpectedTensor {
        /// The tensor's name in the file.
        key: String,
        /// Why it does not belong.
        reason: &'static str,
    },
    /// A Linear layer with its weight but not its bias, or the other way round.
    #[error("missing tensor `{key}` (every Linear layer needs a weight and a bias)")]
    MissingTensor {
        /// The name that was expected.
        key: String,
    },
    /// Linear layers whose indices skip one: `0`, then `4` without `2`.
    #[error(
        "layer indices jump from {before} to {after}: Linear layers sit at 0, 2, 4, … with a ReLU between each two"
    )]
    IndexGap {
        /// The last index before the gap (`None` when the first layer is not at 0).
        before: GapStart,
        /// The next index found.
        after: usize,
    },
    /// A weight that is not a matrix `[out × in]` with both sides at least 1.
    #[error("`{key}` has shape {shape:?}; a Linear weight is [out × in] with out, in ≥ 1")]
    NotMatrix {
        /// The tensor's name.
        key: String,
        /// Its shape.
        shape: Vec<usize>,
    },
    /// A bias whose shape is not `[out]` for its weight's `out`.
    #[error("`{key}` has shape {shape:?}, not [{outputs}] as its weight's {outputs} outputs need")]
    BiasShape {
        /// The tensor's name.
        key: String,
        /// Its shape.
        shape: Vec<usize>,
        /// The weight's number of outputs.
        outputs: usize,
    },
    /// Consecutive layers whose sizes do not chain: layer k's outputs ≠ layer k+1's inputs.
    #[error("`{from}` gives {outputs} outputs but `{to}` takes {inputs} inputs")]
    ShapesDontChain {
        /// The earlier weight's name.
        from: String,
        /// Its number of outputs.
        outputs: usize,
        /// The later weight's name.
        to: String,
        /// Its number of inputs.
        inputs: usize,
    },
    /// A tensor holding a NaN or an infinity (after conversion to `f32`).
    #[error("`{key}` holds a non-finite value {value} at element {index}")]
    NonFinite {
        /// The tensor's name.
        key: String,
        /// The flat (row-major) index of the first bad element.
        index: usize,
        /// The value.
        value: f32,
    },
    /// A tensor of a type other than the float types read.
    #[error("`{key}` has dtype {dtype}; only F32, F64, F16 and BF16 are read")]
    UnsupportedDtype {
        /// The tensor's name.
        key: String,
        /// The dtype as the file names it.
        dtype: String,
    },
    /// A network whose input or output size does not fit a game.
    #[error(
        "a network of {network_inputs} inputs and {network_outputs} outputs does not fit a game \
         of tensor size {game_inputs} and {game_actions} actions"
    )]
    DoesNotFit {
        /// The first layer's inputs.
        network_inputs: usize,
        /// The last layer's outputs.
        network_outputs: usize,
        /// The game's tensor size, flattened.
        game_inputs: usize,
        /// The game's number of distinct actions.
        game_actions: usize,
    },
    /// A game that gives no tensor, which a network cannot read.
    #[error("game `{0}` gives no tensor for a network to read")]
    NoTensor(String),
    /// Arrays handed to inference whose shapes do not fit the network or each other.
    #[error("shape mismatch: {0}")]
    Shape(String),
    /// Logits that are not finite (an input holding a NaN, or a float32 overflow), so no
    /// softmax of them is a distribution.
    #[error("logits of row {row} of the batch are not finite ({value})")]
    NonFiniteLogits {
        /// The row of the batch.
        row: usize,
        /// The largest legal logit.
        value: f32,
    },
}

/// Where an [`Error::IndexGap`] starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GapStart {
    /// The first layer found is not at index 0.
    Start,
    /// The last index found before the gap.
    Index(usize),
}

impl std::fmt::Display for GapStart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GapStart::Start => f.write_str("the start"),
            GapStart::Index(i) => write!(f, "{i}"),
        }
    }
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Error> for metagame_games::Error {
    /// Shape errors stay shape errors (so a policy's caller can tell a bad batch), logits
    /// that are not finite are bad probabilities of their row; the rest are the network's
    /// own failure, with it as the source.
    fn from(error: Error) -> Self {
        match error {
            Error::Shape(message) => metagame_games::Error::Shape(message),
            Error::NonFiniteLogits { row, value } => metagame_games::Error::BadProbabilities {
                row,
                reason: format!("the network's logits are not finite ({value})"),
            },
            other => metagame_games::Error::Backend { backend: "mlp", source: Box::new(other) },
        }
    }
}
