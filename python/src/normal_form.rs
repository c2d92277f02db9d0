//! Normal-form games from numpy payoff tensors or Gambit `.nfg` files, and every registered
//! meta-solver on them, each answer with its certificate.

use std::sync::Arc;

use metagame::games::{NormalFormGame, nfg};
use metagame::solvers::nash::Nash;
use metagame::solvers::{MetaSolver, Solution};
use ndarray::{ArrayD, IxDyn};
use numpy::{IntoPyArray, PyArray1, PyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::convert::float_array;
use crate::errors::{MetagameError, interruptible, value_error};

/// A game in normal form: one payoff tensor per player, shaped by every player's number of
/// strategies.
#[pyclass(frozen, module = "metagame", name = "NormalFormGame")]
pub struct PyNormalFormGame {
    pub game: Arc<NormalFormGame>,
}

fn tensor(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<ArrayD<f64>> {
    let (shape, values) = float_array(obj, what)?;
    // INVARIANT: numpy gives as many values as its shape holds.
    Ok(ArrayD::from_shape_vec(IxDyn(&shape), values).expect("numpy's shape"))
}

/// The number of axes `numpy.ndim` gives `obj`, None for what numpy cannot shape (ragged lists).
fn ndim(obj: &Bound<'_, PyAny>) -> Option<usize> {
    obj.py().import("numpy").and_then(|np| np.call_method1("ndim", (obj,))).and_then(|d| d.extract()).ok()
}

#[pymethods]
impl PyNormalFormGame {
    /// ``NormalFormGame(A)``: the zero-sum matrix game with row payoffs ``A`` (column
    /// payoffs ``-A``); ``NormalFormGame(A, B)``: a bimatrix game; ``NormalFormGame([T0, ...,
    /// Tn-1])``: an n-player game, ``Tp[s0, ..., sn-1]`` player p's payoff.
    #[new]
    #[pyo3(signature = (*payoffs))]
    fn new(payoffs: &Bound<'_, PyTuple>) -> PyResult<Self> {
        let tensors: Vec<ArrayD<f64>> = match payoffs.len() {
            1 => {
                let only = payoffs.get_item(0)?;
                // A list of tensors when its first item has at least 2 axes (a matrix's rows
                // have one), whether numpy arrays or nested lists.
                let is_list_of_tensors = (only.is_instance_of::<PyList>()
                    || only.is_instance_of::<PyTuple>())
                    && only.len()? > 0
                    && ndim(&only.get_item(0)?).is_some_and(|d| d >= 2);
                if is_list_of_tensors {
                    only.try_iter()?
                        .enumerate()
                        .map(|(p, t)| tensor(&t?, &format!("payoffs of player {p}")))
                        .collect::<PyResult<_>>()?
                } else {
                    let a = tensor(&only, "payoffs")?;
                    if a.ndim() != 2 {
                        return Err(PyValueError::new_err(format!(
                            "one payoff array makes a zero-sum matrix game and must be 2-dimensional, got shape {:?} (an n-player game is a list of n payoff tensors)",
                            a.shape()
                        )));
                    }
                    let b = a.mapv(|x| -x);
                    vec![a, b]
                }
            }
            _ => payoffs
                .iter()
                .enumerate()
                .map(|(p, t)| tensor(&t, &format!("payoffs of player {p}")))
                .collect::<PyResult<_>>()?,
        };
        Ok(Self { game: Arc::new(NormalFormGame::new(tensors).map_err(value_error)?) })
    }
    /// Read a Gambit ``.nfg`` file.
    #[staticmethod]
    fn from_nfg(path: std::path::PathBuf) -> PyResult<Self> {
        Ok(Self { game: Arc::new(nfg::read_nfg(&path).map_err(value_error)?) })
    }
    /// Parse the text of a Gambit ``.nfg`` file.
    #[staticmethod]
    fn from_nfg_string(text: &str) -> PyResult<Self> {
        Ok(Self { game: Arc::new(nfg::from_nfg_str(text).map_err(value_error)?) })
    }
    /// The game as the text of a Gambit ``.nfg`` file.
    fn to_nfg_string(&self) -> String {
        nfg::to_nfg_string(&self.game)
    }
    /// Number of players.
    #[getter]
    fn num_players(&self) -> usize {
        self.game.num_players()
    }
    /// Every player's number of strategies.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.game.shape().to_vec()
    }
    /// Player ``player``'s payoff tensor (a copy).
    fn payoffs<'py>(&self, py: Python<'py>, player: usize) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        if player >= self.game.num_players() {
            return Err(PyValueError::new_err(format!(
                "player {player} does not exist: the game has {} players",
                self.game.num_players()
            )));
        }
        Ok(self.game.payoffs(player).clone().into_pyarray(py))
    }
    /// NashConv of a mixed profile (one distribution per player).
    fn nash_conv(&self, strategies: &Bound<'_, PyAny>) -> PyResult<f64> {
        Ok(self.game.nash_conv(&self.strategies(strategies)?))
    }
    /// Every player's expected payoff under a mixed profile.
    fn expected_payoffs(&self, strategies: &Bound<'_, PyAny>) -> PyResult<Vec<f64>> {
        Ok(self.game.expected_payoffs(&self.strategies(strategies)?))
    }
    fn __repr__(&self) -> String {
        let shape: Vec<String> = self.game.shape().iter().map(ToString::to_string).collect();
        format!("NormalFormGame({})", shape.join("×"))
    }
}

impl PyNormalFormGame {
    fn strategies(&self, obj: &Bound<'_, PyAny>) -> PyResult<Vec<Vec<f64>>> {
        let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        if items.len() != self.game.num_players() {
            return Err(PyValueError::new_err(format!(
                "{} strategies for {} players",
                items.len(),
                self.game.num_players()
            )));
        }
        items
            .iter()
            .enumerate()
            .map(|(p, s)| {
                let (shape, values) = float_array(s, &format!("strategy of player {p}"))?;
                let n = self.game.num_strategies(p);
                let sum: f64 = values.iter().sum();
                if shape != [n] || values.iter().any(|&x| x < 0.0) || (sum - 1.0).abs() > 1e-9 {
                    return Err(PyValueError::new_err(format!(
                        "strategy of player {p}: expected a distribution over {n} strategies, got {values:?}"
                    )));
                }
                Ok(values)
            })
            .collect()
    }
}

/// A solver's answer: ``strategies`` (one numpy distribution per player), ``status``,
/// ``certificate`` (NashConv and per-player deviation gains, computed from the game),
/// ``iterations``, and where the solver gives them ``value`` (zero-sum LP), ``joint``
/// (CE/CCE) and ``stationary`` (alpha-Rank). ``is_equilibrium`` says whether the
/// certificate proves a Nash equilibrium (within the ``nash`` chain's tolerance).
#[pyclass(frozen, module = "metagame", name = "Solution")]
pub struct PySolution {
    solution: Solution,
    tolerance: f64,
    /// The game's shape: a joint distribution over its profiles has it.
    shape: Vec<usize>,
}

impl PySolution {
    /// A distribution over joint profiles in the game's shape; one over a single population's
    /// strategies (a vector) stays flat.
    fn joint_shaped<'py>(&self, py: Python<'py>, values: &[f64]) -> Bound<'py, PyArrayDyn<f64>> {
        let shape = if values.len() == self.shape.iter().product::<usize>() {
            self.shape.clone()
        } else {
            vec![values.len()]
        };
        // INVARIANT: `shape` holds exactly `values.len()` entries (checked just above).
        ArrayD::from_shape_vec(IxDyn(&shape), values.to_vec())
            .expect("the shape holds the values")
            .into_pyarray(py)
    }
}

#[pymethods]
impl PySolution {
    /// One distribution per player (a CE/CCE's or alpha-Rank's marginals).
    #[getter]
    fn strategies<'py>(&self, py: Python<'py>) -> Vec<Bound<'py, PyArray1<f64>>> {
        self.solution.strategies.iter().map(|s| s.clone().into_pyarray(py)).collect()
    }
    /// ``"solved"``, ``"max_iterations"``, ``"degenerate"`` or ``"multiple_stationary"``.
    #[getter]
    fn status(&self) -> PyResult<String> {
        let value =
            serde_json::to_value(self.solution.status).map_err(|e| MetagameError::new_err(e.to_string()))?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }
    /// ``{"nash_conv", "deviation_gains", "primal_dual_gap", "max_violation"}``.
    #[getter]
    fn certificate<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let c = &self.solution.certificate;
        let dict = PyDict::new(py);
        dict.set_item("nash_conv", c.nash_conv)?;
        dict.set_item("deviation_gains", c.deviation_gains.clone())?;
        dict.set_item("primal_dual_gap", c.primal_dual_gap)?;
        dict.set_item("max_violation", c.max_violation)?;
        Ok(dict)
    }
    /// NashConv of ``strategies``: the certificate's number.
    #[getter]
    fn nash_conv(&self) -> f64 {
        self.solution.certificate.nash_conv
    }
    /// True when the certificate proves a Nash equilibrium.
    #[getter]
    fn is_equilibrium(&self) -> bool {
        self.solution.certificate.nash_conv.is_finite()
            && self.solution.certificate.nash_conv <= self.tolerance
    }
    /// Iterations, pivots or bases the solver used.
    #[getter]
    fn iterations(&self) -> usize {
        self.solution.iterations
    }
    /// The value of a zero-sum game for the row player (LP), else None.
    #[getter]
    fn value(&self) -> Option<f64> {
        self.solution.value()
    }
    /// A CE/CCE's joint distribution over pure profiles, else None.
    #[getter]
    fn joint<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArrayDyn<f64>>> {
        self.solution.joint().map(|j| j.clone().into_pyarray(py))
    }
    /// alpha-Rank's stationary distribution over joint profiles, shaped like ``joint`` (the
    /// game's shape; a vector over strategies for a single population), else None. When the
    /// chain has several (status ``"multiple_stationary"``), their mean, of which
    /// ``strategies`` are the marginals; ``stationary_distributions`` lists each.
    #[getter]
    fn stationary<'py>(&self, py: Python<'py>) -> Option<Bound<'py, PyArrayDyn<f64>>> {
        let all = self.solution.stationary()?;
        let n = all.first().map_or(0, Vec::len);
        let mean: Vec<f64> =
            (0..n).map(|i| all.iter().map(|pi| pi[i]).sum::<f64>() / all.len() as f64).collect();
        Some(self.joint_shaped(py, &mean))
    }
    /// Every stationary distribution of alpha-Rank's chain, each shaped as ``stationary``;
    /// else None.
    #[getter]
    fn stationary_distributions<'py>(&self, py: Python<'py>) -> Option<Vec<Bound<'py, PyArrayDyn<f64>>>> {
        Some(self.solution.stationary()?.iter().map(|pi| self.joint_shaped(py, pi)).collect())
    }
    fn __repr__(&self) -> PyResult<String> {
        Ok(format!(
            "Solution(status={:?}, nash_conv={:.3e}, strategies={:?})",
            self.status()?,
            self.solution.certificate.nash_conv,
            self.solution.strategies
        ))
    }
}

/// `game` as a normal-form game: a `NormalFormGame`, one 2-D array (zero-sum), or a tuple
/// or list of payoff arrays.
fn normal_form(game: &Bound<'_, PyAny>) -> PyResult<Arc<NormalFormGame>> {
    if let Ok(g) = game.cast::<PyNormalFormGame>() {
        return Ok(Arc::clone(&g.get().game));
    }
    let args = if game.is_instance_of::<PyTuple>() {
        game.cast::<PyTuple>()?.clone()
    } else {
        PyTuple::new(game.py(), [game])?
    };
    Ok(PyNormalFormGame::new(&args)?.game)
}

fn solver_from(name: &str, settings: Option<&Bound<'_, PyDict>>) -> PyResult<Box<dyn MetaSolver>> {
    let mut iterations = None;
    if let Some(settings) = settings {
        for (k, v) in settings.iter() {
            let key: String = k.extract()?;
            match key.as_str() {
                "iterations" => {
                    iterations = Some(v.extract::<usize>().map_err(|_| {
                        PyValueError::new_err(format!("iterations must be a positive integer, got {v}"))
                    })?)
                }
                other => {
                    return Err(PyValueError::new_err(format!(
                        "solve: unknown setting `{other}`; the solvers take `iterations` (the iteration, pivot or basis cap)"
                    )));
                }
            }
        }
    }
    metagame::registry::meta_solver(name, iterations).map_err(|e| value_error(&e))
}

fn answers(game: &NormalFormGame, solutions: Vec<Solution>) -> Vec<PySolution> {
    let tolerance = Nash::CERTIFICATE_TOLERANCE * game.payoff_scale().max(f64::MIN_POSITIVE);
    solutions
        .into_iter()
        .map(|solution| PySolution { solution, tolerance, shape: game.shape().to_vec() })
        .collect()
}

/// Solve a normal-form game (a ``NormalFormGame``, a 2-D array for a zero-sum game, or a
/// tuple of payoff arrays) with any registered meta-solver (``"nash"``, ``"lp"``,
/// ``"lemke-howson"``, ``"rm+"``, ``"alpha-rank"``, ``"ce"``, ...; ``metagame.solvers()``
/// lists them). ``iterations=`` caps an iterative method's iterations (or a pivoting
/// method's pivots).
#[pyfunction]
#[pyo3(signature = (game, solver="nash", **settings))]
fn solve(
    py: Python<'_>,
    game: &Bound<'_, PyAny>,
    solver: &str,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<PySolution> {
    let (game, solver) = (normal_form(game)?, solver_from(solver, settings)?);
    let job_game = Arc::clone(&game);
    let solution = interruptible(py, move || solver.solve(&job_game))?.map_err(value_error)?;
    Ok(answers(&game, vec![solution]).remove(0))
}

/// Every equilibrium the enumerators find (``"support-enumeration"``,
/// ``"vertex-enumeration"``); other solvers give their one answer.
#[pyfunction]
#[pyo3(signature = (game, solver="vertex-enumeration", **settings))]
fn solve_all(
    py: Python<'_>,
    game: &Bound<'_, PyAny>,
    solver: &str,
    settings: Option<&Bound<'_, PyDict>>,
) -> PyResult<Vec<PySolution>> {
    let (game, solver) = (normal_form(game)?, solver_from(solver, settings)?);
    let job_game = Arc::clone(&game);
    let solutions = interruptible(py, move || solver.solve_all(&job_game))?.map_err(value_error)?;
    Ok(answers(&game, solutions))
}

/// The registered meta-solvers: ``(name, about)`` pairs.
#[pyfunction]
fn solvers() -> Vec<(String, String)> {
    metagame::registry::meta_solvers().map(|r| (r.name.to_string(), r.about.to_string())).collect()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNormalFormGame>()?;
    m.add_class::<PySolution>()?;
    m.add_function(wrap_pyfunction!(solve, m)?)?;
    m.add_function(wrap_pyfunction!(solve_all, m)?)?;
    m.add_function(wrap_pyfunction!(solvers, m)?)?;
    Ok(())
}
