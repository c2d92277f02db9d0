//! OpenSpiel games played through pyspiel, not walked: `metagame.PlayedGame`, a game of any
//! size whose states are pyspiel's, asked move by move by the rollouts, `VecEnv` and
//! `matches`, with OpenSpiel's tensors for policies that read them.
//!
//! Every state call takes the GIL and calls pyspiel; a call that raises is recorded in the
//! game's failure slot (`games::ExternalGame`), the state turns terminal, and the Python
//! function that played it raises that failure instead of answering.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use metagame::games::{
    ActionId, AnyGame, ExternalGame, ExternalRules, ExternalState, Failure, Game, PlayerId, TensorKind,
    TensorShape, Turn,
};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;

use crate::pyspiel::{Mover, mover};

/// A pyspiel game's rules.
struct PyspielRules {
    game: Py<PyAny>,
    name: String,
    num_players: usize,
    num_actions: usize,
    utility_sum: Option<f64>,
    utility_range: Option<(f64, f64)>,
    tensor: Option<(TensorShape, &'static str)>,
}

impl ExternalRules for PyspielRules {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn num_players(&self) -> usize {
        self.num_players
    }
    fn num_distinct_actions(&self) -> usize {
        self.num_actions
    }
    fn new_initial_state(&self, failure: &Failure) -> Box<dyn ExternalState> {
        let state = Python::attach(|py| self.game.call_method0(py, intern!(py, "new_initial_state")));
        let state = state.unwrap_or_else(|e| {
            failure.record(format!("{}: new_initial_state() raised {e}", self.name));
            Python::attach(|py| py.None())
        });
        Box::new(PyspielState {
            state,
            name: self.name.clone(),
            num_players: self.num_players,
            tensor_method: self.tensor.as_ref().map(|t| t.1),
            history: Vec::new(),
            failure: failure.clone(),
            broken: AtomicBool::new(failure.failed()),
        })
    }
    fn utility_sum(&self) -> Option<f64> {
        self.utility_sum
    }
    fn utility_range(&self) -> Option<(f64, f64)> {
        self.utility_range
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        self.tensor.as_ref().map(|t| t.0.clone())
    }
}

/// A pyspiel state.
struct PyspielState {
    state: Py<PyAny>,
    name: String,
    num_players: usize,
    tensor_method: Option<&'static str>,
    history: Vec<ActionId>,
    failure: Failure,
    /// Set once a call failed: the state is terminal from then on.
    broken: AtomicBool,
}

impl PyspielState {
    /// `f` on the state with the GIL held; a Python error is recorded, `fallback` answered.
    fn call<T>(&self, what: &str, fallback: T, f: impl FnOnce(&Bound<'_, PyAny>) -> PyResult<T>) -> T {
        if self.broken.load(Ordering::Relaxed) {
            return fallback;
        }
        Python::attach(|py| f(self.state.bind(py))).unwrap_or_else(|e| {
            self.failure.record(format!("{}: {what} raised {e}", self.name));
            self.broken.store(true, Ordering::Relaxed);
            fallback
        })
    }
}

impl ExternalState for PyspielState {
    fn turn(&self) -> Turn {
        let name = &self.name;
        let turn = self.call("current_player()", Turn::Terminal, |s| match mover(s, name)? {
            Mover::Terminal => Ok(Turn::Terminal),
            Mover::Chance => Ok(Turn::Chance),
            Mover::Player(p) => Ok(Turn::Player(PlayerId(p))),
            Mover::Simultaneous => Err(PyValueError::new_err(format!(
                "{name} is at a simultaneous move: pass pyspiel.convert_to_turn_based(game)"
            ))),
        });
        if self.broken.load(Ordering::Relaxed) { Turn::Terminal } else { turn }
    }
    fn legal_actions(&self) -> Vec<ActionId> {
        self.call("legal_actions()", Vec::new(), |s| {
            let legal: Vec<usize> = s.call_method0(intern!(s.py(), "legal_actions"))?.extract()?;
            Ok(legal.into_iter().map(ActionId).collect())
        })
    }
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        self.call("chance_outcomes()", Vec::new(), |s| {
            let outcomes: Vec<(usize, f64)> =
                s.call_method0(intern!(s.py(), "chance_outcomes"))?.extract()?;
            Ok(outcomes.into_iter().map(|(a, p)| (ActionId(a), p)).collect())
        })
    }
    fn apply_action(&mut self, action: ActionId) {
        self.history.push(action);
        self.call("apply_action()", (), |s| {
            s.call_method1(intern!(s.py(), "apply_action"), (action.0,)).map(drop)
        });
    }
    fn returns(&self) -> Vec<f64> {
        let zeros = vec![0.0; self.num_players];
        self.call("returns()", zeros, |s| s.call_method0(intern!(s.py(), "returns"))?.extract())
    }
    fn information_state_string(&self, player: PlayerId) -> String {
        self.call("information_state_string()", String::new(), |s| {
            let py = s.py();
            s.call_method1(intern!(py, "information_state_string"), (player.0,))
                .or_else(|_| s.call_method1(intern!(py, "observation_string"), (player.0,)))?
                .extract()
        })
    }
    fn history(&self) -> &[ActionId] {
        &self.history
    }
    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let Some(method) = self.tensor_method else { return };
        let width = out.len();
        let name = &self.name;
        let values = self.call(method, None, |s| {
            let values: Vec<f32> = s.call_method1(method, (player.0,))?.extract()?;
            if values.len() != width {
                return Err(PyValueError::new_err(format!(
                    "{name}: {method} gave {} values, the game's shape {width}",
                    values.len()
                )));
            }
            Ok(Some(values))
        });
        match values {
            Some(values) => out.copy_from_slice(&values),
            None => out.fill(0.0),
        }
    }
    fn boxed_clone(&self) -> Box<dyn ExternalState> {
        let state = Python::attach(|py| {
            if self.broken.load(Ordering::Relaxed) {
                return self.state.clone_ref(py);
            }
            self.state.call_method0(py, intern!(py, "clone")).unwrap_or_else(|e| {
                self.failure.record(format!("{}: clone() raised {e}", self.name));
                self.broken.store(true, Ordering::Relaxed);
                self.state.clone_ref(py)
            })
        });
        Box::new(PyspielState {
            state,
            name: self.name.clone(),
            num_players: self.num_players,
            tensor_method: self.tensor_method,
            history: self.history.clone(),
            failure: self.failure.clone(),
            broken: AtomicBool::new(self.broken.load(Ordering::Relaxed)),
        })
    }
}

/// A game played on its states, not enumerated: an OpenSpiel game of any size read by
/// ``metagame.openspiel.from_pyspiel(game, walk=False)``. ``VecEnv``, ``matches`` and a
/// ``ResponseRequest`` take it where they take a game string; exact algorithms, which need
/// the tree, do not.
#[pyclass(frozen, module = "metagame", name = "PlayedGame")]
pub struct PyPlayedGame {
    pub game: AnyGame,
}

impl PyPlayedGame {
    /// The failure a play of this game met since last asked, as a `ValueError`.
    ///
    /// # Errors
    ///
    /// The recorded failure.
    pub fn check(game: &AnyGame) -> PyResult<()> {
        if let AnyGame::External(external) = game
            && let Some(why) = external.take_failure()
        {
            return Err(PyValueError::new_err(why));
        }
        Ok(())
    }
}

#[pymethods]
impl PyPlayedGame {
    /// The game string.
    #[getter]
    fn name(&self) -> String {
        self.game.name()
    }
    /// Number of players.
    #[getter]
    fn num_players(&self) -> usize {
        self.game.num_players()
    }
    /// Number of distinct actions.
    #[getter]
    fn num_actions(&self) -> usize {
        self.game.num_distinct_actions()
    }
    /// ``(kind, dims)`` of the tensor policies read (``"information_state"`` or
    /// ``"observation"``), or None.
    #[getter]
    fn tensor_shape(&self) -> Option<(&'static str, Vec<usize>)> {
        self.game.tensor_shape().map(|t| {
            let kind = match t.kind {
                TensorKind::InformationState => "information_state",
                TensorKind::Observation => "observation",
            };
            (kind, t.dims)
        })
    }
    fn __repr__(&self) -> String {
        format!("PlayedGame({:?}, {} players)", self.game.name(), self.game.num_players())
    }
}

/// ``game`` (a ``pyspiel.Game``, sequential) as a game played on pyspiel's states. Use
/// ``metagame.openspiel.from_pyspiel(game, walk=False)``, which documents it.
#[pyfunction]
fn play_pyspiel(game: &Bound<'_, PyAny>) -> PyResult<PyPlayedGame> {
    let name: String = game.str()?.extract()?;
    let kind = game.call_method0("get_type")?;
    let dynamics: String = kind.getattr("dynamics")?.getattr("name")?.extract()?;
    if dynamics != "SEQUENTIAL" {
        return Err(PyValueError::new_err(format!(
            "{name} has {dynamics} dynamics; pass pyspiel.convert_to_turn_based(game)"
        )));
    }
    let utility_sum = crate::pyspiel::utility_sum(game, &kind)?;
    let rules = PyspielRules {
        game: game.clone().unbind(),
        name,
        num_players: game.call_method0("num_players")?.extract()?,
        num_actions: game.call_method0("num_distinct_actions")?.extract()?,
        utility_sum,
        // pyspiel's games state it; a duck-typed game (PettingZoo's) may not.
        utility_range: if game.hasattr("min_utility")? && game.hasattr("max_utility")? {
            Some((game.call_method0("min_utility")?.extract()?, game.call_method0("max_utility")?.extract()?))
        } else {
            None
        },
        tensor: crate::pyspiel::tensor_kind(game, &kind)?,
    };
    Ok(PyPlayedGame { game: AnyGame::External(ExternalGame::new(Arc::new(rules))) })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPlayedGame>()?;
    m.add_function(wrap_pyfunction!(play_pyspiel, m)?)?;
    Ok(())
}
