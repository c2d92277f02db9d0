//! `metagame.Game`: a game enumerated into its tree (a built-in game, or an OpenSpiel game
//! walked through pyspiel), and `load_game`.

use std::sync::Arc;

use metagame::games::{GameTree, InfosetId, PlayerId, TensorKind, registry};
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::{PyIndexError, PyKeyError, PyValueError};
use pyo3::prelude::*;

use crate::errors::{interruptible, value_error};

/// A game as its tree: every history enumerated once, information states grouped by player.
/// Every exact computation (`nash_conv`, `best_response`, the loops) works on it.
///
/// A game pickles as where it came from (its registry name, or its pyspiel game string),
/// so that other processes (Ray workers) rebuild the same tree.
#[pyclass(frozen, module = "metagame", name = "Game")]
pub struct PyGame {
    pub tree: Arc<GameTree>,
    /// Read from OpenSpiel (its name is a pyspiel game string), not a registry game.
    pub from_pyspiel: bool,
}

impl PyGame {
    /// A registry game's tree.
    pub fn new(tree: GameTree) -> Self {
        Self { tree: Arc::new(tree), from_pyspiel: false }
    }

    /// The tree of a game read from OpenSpiel.
    pub fn read_from_pyspiel(tree: GameTree) -> Self {
        Self { tree: Arc::new(tree), from_pyspiel: true }
    }

    /// The same game (another handle on its tree).
    pub fn handle(&self) -> Self {
        Self { tree: Arc::clone(&self.tree), from_pyspiel: self.from_pyspiel }
    }

    /// The index of an information state given by its string or its index.
    pub fn infoset(&self, infoset: &Bound<'_, PyAny>) -> PyResult<InfosetId> {
        if let Ok(i) = infoset.extract::<i64>() {
            let Ok(i) = usize::try_from(i) else {
                return Err(PyIndexError::new_err(format!(
                    "information state {i} is out of range: indices start at 0"
                )));
            };
            if i >= self.tree.num_infosets() {
                return Err(PyIndexError::new_err(format!(
                    "information state {i} is out of range: {} has {}",
                    self.tree.name(),
                    self.tree.num_infosets()
                )));
            }
            return Ok(InfosetId(i));
        }
        let key: String = infoset.extract().map_err(|_| {
            pyo3::exceptions::PyTypeError::new_err(
                "an information state is its string or its row index (an int)",
            )
        })?;
        self.tree.infoset_by_key(&key).ok_or_else(|| {
            PyKeyError::new_err(format!("{} has no information state {key:?}", self.tree.name()))
        })
    }
}

#[pymethods]
impl PyGame {
    /// The game string (``"leduc_poker"``, or OpenSpiel's for a game read from it).
    #[getter]
    fn name(&self) -> &str {
        self.tree.name()
    }
    /// Number of players.
    #[getter]
    fn num_players(&self) -> usize {
        self.tree.num_players()
    }
    /// Number of distinct actions: the width of a policy array.
    #[getter]
    fn num_actions(&self) -> usize {
        self.tree.num_actions()
    }
    /// Number of histories (nodes of the tree, chance and terminal nodes included).
    #[getter]
    fn num_nodes(&self) -> usize {
        self.tree.num_nodes()
    }
    /// Number of information states of all players: the height of a policy array.
    #[getter]
    fn num_infosets(&self) -> usize {
        self.tree.num_infosets()
    }
    /// The sum of every terminal's utilities when it is constant (0.0 for zero-sum games),
    /// else None.
    #[getter]
    fn utility_sum(&self) -> Option<f64> {
        self.tree.utility_sum()
    }
    /// The information-state strings, in policy-row order; only ``player``'s when given.
    #[pyo3(signature = (player=None))]
    fn infosets(&self, player: Option<usize>) -> PyResult<Vec<String>> {
        let range = match player {
            None => 0..self.tree.num_infosets(),
            Some(p) if p < self.tree.num_players() => self.tree.infosets_of(PlayerId(p)),
            Some(p) => {
                return Err(PyValueError::new_err(format!(
                    "player {p} does not exist: {} has {} players",
                    self.tree.name(),
                    self.tree.num_players()
                )));
            }
        };
        Ok(range.map(|i| self.tree.infoset_key(InfosetId(i)).to_string()).collect())
    }
    /// The row of a policy array that holds ``infoset`` (an information-state string).
    fn infoset_index(&self, infoset: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.infoset(infoset)?.0)
    }
    /// The player who acts at ``infoset`` (a string or a row index).
    fn infoset_player(&self, infoset: &Bound<'_, PyAny>) -> PyResult<usize> {
        Ok(self.tree.infoset_player(self.infoset(infoset)?))
    }
    /// The legal actions at ``infoset`` (a string or a row index), ascending.
    fn legal_actions(&self, infoset: &Bound<'_, PyAny>) -> PyResult<Vec<usize>> {
        Ok(self.tree.legal_actions(self.infoset(infoset)?).iter().map(|a| a.0).collect())
    }
    /// The tensor a network reads, as OpenSpiel lays it out: ``None`` for a game that gives
    /// none (a game read from OpenSpiel whose type provides no information-state tensor, and
    /// no observation tensor with perfect information), else ``(kind, dims)`` with kind
    /// ``"information_state"`` (OpenSpiel's ``information_state_tensor``) or ``"observation"``
    /// (its ``observation_tensor``, for perfect-information games) and dims its shape
    /// (``("information_state", [11])`` for Kuhn poker, ``("observation", [3, 3, 3])`` for
    /// tic-tac-toe).
    #[getter]
    fn tensor_shape(&self) -> Option<(&'static str, Vec<usize>)> {
        self.tree.tensor_shape().map(|shape| {
            let kind = match shape.kind {
                TensorKind::InformationState => "information_state",
                TensorKind::Observation => "observation",
            };
            (kind, shape.dims.clone())
        })
    }
    /// The acting player's tensor at every information state: a float32 array
    /// ``[num_infosets × size]`` (a copy), rows in ``infosets()`` order, each tensor flattened
    /// row-major; ``None`` when ``tensor_shape`` is ``None``.
    fn infoset_tensors<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArray2<f32>>> {
        let size = self.tree.tensor_shape()?.size();
        let tensors = self.tree.infoset_tensors()?;
        let shape = (self.tree.num_infosets(), size);
        // INVARIANT: the tree caches one tensor of the shape's size per infoset.
        let array = ndarray::Array2::from_shape_vec(shape, tensors.to_vec()).expect("one tensor per infoset");
        Some(array.into_pyarray(py))
    }
    /// Pickle as the game's source: ``load_game(name)``, or for a game read from OpenSpiel
    /// ``metagame.openspiel.from_pyspiel(game string)`` (built once per process).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyAny>, (&'static str, String))> {
        let kind = if self.from_pyspiel { "pyspiel" } else { "registry" };
        let rebuild = py.import("metagame")?.getattr("_game_from_source")?;
        Ok((rebuild, (kind, self.tree.name().to_string())))
    }
    fn __repr__(&self) -> String {
        format!(
            "Game({:?}: {} players, {} nodes, {} information states, {} actions)",
            self.tree.name(),
            self.tree.num_players(),
            self.tree.num_nodes(),
            self.tree.num_infosets(),
            self.tree.num_actions()
        )
    }
}

/// Load a built-in game by its game string (``"kuhn_poker"``, ``"leduc_poker(players=3)"``,
/// ``"liars_dice"``, a matrix game such as ``"matrix_rps"``) and enumerate its tree.
///
/// ``max_nodes`` caps the tree (default 10 million nodes); a larger game raises ValueError.
#[pyfunction]
#[pyo3(signature = (name, max_nodes=None))]
fn load_game(py: Python<'_>, name: &str, max_nodes: Option<i64>) -> PyResult<PyGame> {
    Ok(PyGame::new(load_tree(py, name, max_nodes)?))
}

/// The tree of the registry game `name` (Ctrl-C honoured while it is built).
pub fn load_tree(py: Python<'_>, name: &str, max_nodes: Option<i64>) -> PyResult<GameTree> {
    let max_nodes = match max_nodes.map(usize::try_from) {
        Some(Ok(0) | Err(_)) => {
            return Err(PyValueError::new_err(format!(
                "max_nodes must be at least 1, got {}",
                max_nodes.unwrap_or(0)
            )));
        }
        Some(Ok(n)) => Some(n),
        None => None,
    };
    let game = registry::load(name).map_err(value_error)?;
    let limit = max_nodes.unwrap_or(GameTree::DEFAULT_MAX_NODES);
    // A tree far past the limit is refused before anything is built (random probes, about
    // 0.1 s), not after the build has filled the limit.
    let size = metagame::games::quick_tree_size(&game, limit as u64, std::time::Duration::from_secs(2));
    // (A game that counts its histories is refused by the build before it allocates.)
    if let metagame::games::TreeSize::Estimate { histories, more_than: 0, .. } = size
        && histories > 2.0 * limit as f64
    {
        return Err(PyValueError::new_err(format!(
            "the game tree of {name} has more than {limit} nodes; pass max_nodes= to raise the limit ({size})"
        )));
    }
    interruptible(py, move || GameTree::build_with_limit(&game, limit))?.map_err(|e| match e {
        metagame::games::Error::LimitExceeded { what, limit, .. } => PyValueError::new_err(format!(
            "{what} has more than {limit} nodes; pass max_nodes= to raise the limit"
        )),
        other => value_error(other),
    })
}

/// The game strings of the built-in games, with one line on each.
#[pyfunction]
fn games() -> Vec<(String, String)> {
    registry::games().map(|g| (g.name.to_string(), g.about.to_string())).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyGame>()?;
    m.add_function(wrap_pyfunction!(load_game, m)?)?;
    m.add_function(wrap_pyfunction!(games, m)?)?;
    Ok(())
}
