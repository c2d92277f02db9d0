//! `metagame.Policy`: a tabular policy of a game (one row per information state, one column
//! per action), and the conversion of every policy form Python users hold into one: numpy
//! arrays, dicts (OpenSpiel's `to_dict()` form or rows of probabilities), OpenSpiel's
//! `TabularPolicy`, and `Policy` itself.

use std::sync::Arc;

use metagame::games::{GameTree, InfosetId, TabularPolicy};
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};

use crate::callable_policy::CallablePolicy;
use crate::convert::float_array;
use crate::errors::value_error;
use crate::game::PyGame;

/// A tabular policy of one game: for every information state of every player, a
/// distribution over the legal actions. ``array`` is its ``[infosets × actions]`` table in
/// the row order of ``game.infosets()``.
#[pyclass(frozen, module = "metagame", name = "Policy")]
pub struct PyPolicy {
    pub tree: Arc<GameTree>,
    pub policy: TabularPolicy,
    /// Whether the game was read from OpenSpiel (so that ``policy.game`` pickles as such).
    pub from_pyspiel: bool,
}

/// True when `a` and `b` are the same game (the same tree, or trees of the same name with
/// the same information states and actions).
pub fn same_game(a: &GameTree, b: &GameTree) -> bool {
    std::ptr::eq(a, b)
        || (a.name() == b.name()
            && a.num_infosets() == b.num_infosets()
            && a.num_actions() == b.num_actions()
            && (0..a.num_infosets()).all(|i| a.infoset_key(InfosetId(i)) == b.infoset_key(InfosetId(i))))
}

/// `obj` as a policy of `tree`: a `Policy` of the same game, a callable
/// `policy(obs, legal) -> probs` (tabulated: see `callable_policy.rs`), a numpy-like
/// `[infosets × actions]` array, a dict from information-state strings to OpenSpiel's
/// `[(action, probability), ...]` pairs or to a row of `num_actions` probabilities, or an
/// OpenSpiel `TabularPolicy` (anything with `state_lookup` and `action_probability_array`).
///
/// # Errors
///
/// `ValueError` for a policy of another game or rows that are not distributions over the
/// legal actions; `TypeError` for anything else.
pub fn as_policy(tree: &GameTree, obj: &Bound<'_, PyAny>) -> PyResult<TabularPolicy> {
    if let Ok(p) = obj.cast::<PyPolicy>() {
        let p = p.get();
        if !same_game(&p.tree, tree) {
            return Err(PyValueError::new_err(format!(
                "the policy is of the game {}, not of {}",
                p.tree.name(),
                tree.name()
            )));
        }
        return Ok(p.policy.clone());
    }
    if obj.hasattr("state_lookup")? && obj.hasattr("action_probability_array")? {
        return from_openspiel(tree, obj);
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return from_dict(tree, d);
    }
    if obj.hasattr("__array__")? || obj.is_instance_of::<PyList>() {
        return from_array(tree, obj);
    }
    if obj.hasattr("action_probabilities")? {
        return Err(PyTypeError::new_err(format!(
            "an OpenSpiel {} that is not a TabularPolicy: pass open_spiel.python.policy.tabular_policy_from_callable(game, policy)",
            obj.get_type().name()?
        )));
    }
    if let Some(callable) = CallablePolicy::of(obj)? {
        // Asked once per player for all of its information states, tensors and legal
        // actions (the GIL is held here: the calls are made on this thread).
        return TabularPolicy::tabulate(tree, &callable).map_err(value_error);
    }
    Err(PyTypeError::new_err(format!(
        "a policy must be a metagame.Policy, a callable policy(obs, legal) -> probs, a numpy array [infosets × actions], a dict of information states, or an OpenSpiel TabularPolicy; got {}",
        obj.get_type().name()?
    )))
}

/// A numpy-like `[infosets × actions]` array as a policy of `tree`.
fn from_array(tree: &GameTree, obj: &Bound<'_, PyAny>) -> PyResult<TabularPolicy> {
    let (shape, values) = float_array(obj, "policy")?;
    let want = [tree.num_infosets(), tree.num_actions()];
    if shape != want {
        return Err(PyValueError::new_err(format!(
            "policy: an array of shape {shape:?}, but {} takes [infosets, actions] = {want:?}",
            tree.name()
        )));
    }
    TabularPolicy::from_dense(tree, values).map_err(value_error)
}

/// An OpenSpiel `TabularPolicy`: the row of each information state found in `state_lookup`.
fn from_openspiel(tree: &GameTree, obj: &Bound<'_, PyAny>) -> PyResult<TabularPolicy> {
    let lookup = obj.getattr("state_lookup")?;
    let (shape, values) =
        float_array(&obj.getattr("action_probability_array")?, "TabularPolicy.action_probability_array")?;
    let [rows, width] = shape[..] else {
        return Err(PyValueError::new_err("TabularPolicy.action_probability_array is not 2-dimensional"));
    };
    if width != tree.num_actions() {
        return Err(PyValueError::new_err(format!(
            "the TabularPolicy has {width} actions per row, {} has {}: a policy of another game",
            tree.name(),
            tree.num_actions()
        )));
    }
    // Every key of the tree found is not enough: kuhn_poker(players=3) has all of
    // kuhn_poker's information-state strings (and more), with other meanings.
    let keys = lookup.len()?;
    if rows != tree.num_infosets() || keys != tree.num_infosets() {
        return Err(PyValueError::new_err(format!(
            "the TabularPolicy has {keys} information states ({rows} rows), {} has {}: a policy of another game",
            tree.name(),
            tree.num_infosets()
        )));
    }
    // Its own keys, each found in the tree: no Python string made per key. As many keys as
    // the tree has states, each a distinct state: every state is covered. (A mapping that
    // is not a dict is copied into one.)
    let lookup = match lookup.cast_into::<PyDict>() {
        Ok(dict) => dict,
        Err(e) => obj.py().get_type::<PyDict>().call1((e.into_inner(),))?.cast_into::<PyDict>()?,
    };
    let mut row_of = vec![0usize; tree.num_infosets()];
    for (key, row) in lookup.iter() {
        let id =
            key.cast::<PyString>().ok().and_then(|k| k.to_str().ok()).and_then(|k| tree.infoset_by_key(k));
        let Some(id) = id else {
            return Err(PyValueError::new_err(format!(
                "the TabularPolicy's information state {key} is not one of {}'s: a policy of another game",
                tree.name()
            )));
        };
        row_of[id.0] = row.extract()?;
    }
    let mut probs = vec![0.0; tree.num_infosets() * width];
    for (i, &row) in row_of.iter().enumerate() {
        let Some(values) = values.get(row * width..(row + 1) * width) else {
            return Err(PyValueError::new_err(format!(
                "the TabularPolicy's state_lookup names row {row}, its action_probability_array has {rows}"
            )));
        };
        probs[i * width..(i + 1) * width].copy_from_slice(values);
    }
    TabularPolicy::from_dense(tree, probs).map_err(value_error)
}

/// A dict of rows: `{info_state: [(action, prob), ...]}` (OpenSpiel's `to_dict()`) or
/// `{info_state: [p_0, ..., p_{A-1}]}`.
fn from_dict(tree: &GameTree, dict: &Bound<'_, PyDict>) -> PyResult<TabularPolicy> {
    let width = tree.num_actions();
    let mut probs = vec![0.0; tree.num_infosets() * width];
    let mut seen = vec![false; tree.num_infosets()];
    for (k, v) in dict.iter() {
        let key: String = k.extract().map_err(|_| {
            PyValueError::new_err(format!("policy: the key {k} is not an information-state string"))
        })?;
        let id = tree.infoset_by_key(&key).ok_or_else(|| {
            PyValueError::new_err(format!("policy: {} has no information state {key:?}", tree.name()))
        })?;
        seen[id.0] = true;
        let row = &mut probs[id.0 * width..(id.0 + 1) * width];
        let bad = |what: String| PyValueError::new_err(format!("policy at {key:?}: {what}"));
        // Pairs as tuples (`to_dict()`) or as lists (`to_dict()` through JSON).
        if let Ok(pairs) = v.extract::<Vec<[f64; 2]>>() {
            for [a, p] in pairs {
                if a.fract() != 0.0 || a < 0.0 || a >= width as f64 {
                    return Err(bad(format!("action {a} is not one of 0..{width}")));
                }
                row[a as usize] = p;
            }
        } else if let Ok(values) = v.extract::<Vec<f64>>() {
            if values.len() != width {
                return Err(bad(format!("{} probabilities, the game has {width} actions", values.len())));
            }
            row.copy_from_slice(&values);
        } else {
            return Err(bad("expected [(action, probability), ...] or a row of probabilities".into()));
        }
    }
    if let Some(missing) = seen.iter().position(|s| !s) {
        return Err(PyValueError::new_err(format!(
            "policy: the information state {:?} is missing",
            tree.infoset_key(InfosetId(missing))
        )));
    }
    TabularPolicy::from_dense(tree, probs).map_err(value_error)
}

impl PyPolicy {
    /// A policy of a registry game's tree.
    pub fn new(tree: &Arc<GameTree>, policy: TabularPolicy) -> Self {
        Self { tree: Arc::clone(tree), policy, from_pyspiel: false }
    }

    /// A policy of `game` (which keeps where the game came from).
    pub fn of(game: &PyGame, policy: TabularPolicy) -> Self {
        Self { tree: Arc::clone(&game.tree), policy, from_pyspiel: game.from_pyspiel }
    }
}

#[pymethods]
impl PyPolicy {
    /// A policy of ``game`` from any form ``as_policy`` accepts (an array, a dict, an
    /// OpenSpiel TabularPolicy, a Policy).
    #[new]
    fn py_new(game: &PyGame, policy: &Bound<'_, PyAny>) -> PyResult<Self> {
        Ok(Self::of(game, as_policy(&game.tree, policy)?))
    }
    /// The uniform policy over the legal actions at every information state.
    #[staticmethod]
    fn uniform(game: &PyGame) -> Self {
        Self::of(game, TabularPolicy::uniform(&game.tree))
    }
    /// The game this policy is of.
    #[getter]
    fn game(&self) -> PyGame {
        PyGame { tree: Arc::clone(&self.tree), from_pyspiel: self.from_pyspiel }
    }
    /// The ``[infosets × actions]`` table (a copy), rows in ``game.infosets()`` order.
    #[getter]
    fn array<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray2<f64>> {
        let shape = (self.tree.num_infosets(), self.tree.num_actions());
        // INVARIANT: a policy of the tree has exactly this many entries.
        ndarray::Array2::from_shape_vec(shape, self.policy.as_slice().to_vec())
            .expect("a policy has the tree's shape")
            .into_pyarray(py)
    }
    /// The probabilities at ``infoset`` (a string or a row index), by action, legal ones only.
    fn action_probabilities(&self, infoset: &Bound<'_, PyAny>) -> PyResult<Vec<(usize, f64)>> {
        let game = PyGame { tree: Arc::clone(&self.tree), from_pyspiel: self.from_pyspiel };
        let id = game.infoset(infoset)?;
        let row = self.policy.row(id);
        Ok(self.tree.legal_actions(id).iter().map(|a| (a.0, row[a.0])).collect())
    }
    /// OpenSpiel's ``TabularPolicy.to_dict()`` form: ``{info_state: [(action, prob), ...]}``
    /// over the legal actions.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let dict = PyDict::new(py);
        for i in 0..self.tree.num_infosets() {
            let id = InfosetId(i);
            let row = self.policy.row(id);
            let pairs: Vec<(usize, f64)> =
                self.tree.legal_actions(id).iter().map(|a| (a.0, row[a.0])).collect();
            dict.set_item(self.tree.infoset_key(id), pairs)?;
        }
        Ok(dict)
    }
    fn __repr__(&self) -> String {
        format!(
            "Policy({:?}: {} information states × {} actions)",
            self.tree.name(),
            self.tree.num_infosets(),
            self.tree.num_actions()
        )
    }
}

/// A tabular policy of ``game`` from any callable ``fn(info_state, legal_actions)`` that
/// returns probabilities: a sequence over the legal actions (in their order), a sequence of
/// ``num_actions`` entries, or a dict ``{action: probability}``. It is called once per
/// information state, so a network's or a model's policy on a small game gets an exact
/// NashConv. A callable of three parameters, ``fn(info_state, legal_actions, tensor)``, is
/// also handed the state's tensor (float32, OpenSpiel's layout; None for a game without
/// one). For whole batches, pass a callable ``policy(obs, legal)`` as the policy instead.
#[pyfunction]
fn tabulate(game: &PyGame, policy_fn: &Bound<'_, PyAny>) -> PyResult<PyPolicy> {
    let tree = &game.tree;
    let width = tree.num_actions();
    let mut probs = vec![0.0; tree.num_infosets() * width];
    let wants_tensor = takes_three(policy_fn)?;
    let size = tree.tensor_shape().map_or(0, |s| s.size());
    for i in 0..tree.num_infosets() {
        let id = InfosetId(i);
        let key = tree.infoset_key(id);
        let legal: Vec<usize> = tree.legal_actions(id).iter().map(|a| a.0).collect();
        let answer = if wants_tensor {
            let tensor = tree
                .infoset_tensors()
                .map(|all| numpy::PyArray1::from_slice(policy_fn.py(), &all[i * size..(i + 1) * size]));
            policy_fn.call1((key, legal.clone(), tensor))?
        } else {
            policy_fn.call1((key, legal.clone()))?
        };
        let row = &mut probs[i * width..(i + 1) * width];
        let bad = |what: String| {
            PyValueError::new_err(format!("tabulate: at {key:?} the callable returned {what}"))
        };
        if answer.is_none() {
            return Err(bad("None, not probabilities".into()));
        }
        if let Ok(d) = answer.cast::<PyDict>() {
            for (a, p) in d.iter() {
                let a: usize =
                    a.extract().map_err(|_| bad(format!("a dict with the key {a}, not an action")))?;
                let p: f64 =
                    p.extract().map_err(|_| bad(format!("a dict with the value {p}, not a probability")))?;
                if a >= width {
                    return Err(bad(format!("action {a}, not one of 0..{width}")));
                }
                row[a] = p;
            }
        } else {
            let (shape, values) = float_array(&answer, &format!("tabulate: the answer at {key:?}"))?;
            match (shape.as_slice(), values.len()) {
                ([n], _) if *n == legal.len() => legal.iter().zip(&values).for_each(|(&a, &p)| row[a] = p),
                ([n], _) if *n == width => row.copy_from_slice(&values),
                ([n], _) => {
                    return Err(bad(format!(
                        "{n} numbers; expected one per legal action ({}) or per action ({width})",
                        legal.len()
                    )));
                }
                _ => {
                    return Err(bad(format!(
                        "an array of shape {shape:?}; expected a flat sequence, one number per legal action ({}) or per action ({width})",
                        legal.len()
                    )));
                }
            }
        }
    }
    let policy = TabularPolicy::from_dense(tree, probs)
        .map_err(|e| PyValueError::new_err(format!("tabulate: {e}")))?;
    Ok(PyPolicy::of(game, policy))
}

/// Whether `f` takes a third positional argument (or any number of them).
fn takes_three(f: &Bound<'_, PyAny>) -> PyResult<bool> {
    let Ok(signature) = f.py().import("inspect")?.call_method1("signature", (f,)) else {
        return Ok(false); // a builtin without a signature: called with two
    };
    let mut positional = 0;
    for parameter in signature.getattr("parameters")?.call_method0("values")?.try_iter()? {
        let kind = parameter?.getattr("kind")?.getattr("name")?.extract::<String>()?;
        match kind.as_str() {
            "POSITIONAL_ONLY" | "POSITIONAL_OR_KEYWORD" => positional += 1,
            "VAR_POSITIONAL" => return Ok(true),
            _ => {}
        }
    }
    Ok(positional >= 3)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyPolicy>()?;
    m.add_function(wrap_pyfunction!(tabulate, m)?)?;
    Ok(())
}
