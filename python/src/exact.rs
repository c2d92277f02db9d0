//! Exact evaluation on a game's tree: NashConv, exploitability, best responses, expected
//! returns and the aggregation of mixtures of policies.

use std::sync::Arc;

use metagame::games::{self, GameTree, PlayerId, TabularPolicy};
use numpy::{IntoPyArray, PyArray1};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use crate::convert::float_array;
use crate::errors::{SMALL_TREE, released, value_error};
use crate::game::PyGame;
use crate::policy::{PyPolicy, as_policy};

/// True when `item` is one policy (not a number or a row of numbers).
fn is_policy_like(item: &Bound<'_, PyAny>) -> PyResult<bool> {
    Ok(item.cast::<PyPolicy>().is_ok()
        || item.cast::<PyDict>().is_ok()
        || item.hasattr("action_probability_array")?
        || (item.is_callable() && !item.hasattr("__array__")?)
        || (item.hasattr("ndim")? && item.getattr("ndim")?.extract::<usize>()? == 2))
}

/// A profile: one policy for every seat (a policy's rows cover all players; kept once, not
/// copied per seat), or one policy per seat.
pub struct Profile {
    policies: Vec<TabularPolicy>,
    seats: usize,
}

impl Profile {
    /// The policy of every seat.
    fn seats(&self) -> Vec<&TabularPolicy> {
        match self.policies.as_slice() {
            [one] => vec![one; self.seats],
            all => all.iter().collect(),
        }
    }
}

/// `obj` as a [`Profile`]: one policy, or a sequence of one policy per seat.
pub fn profile(tree: &Arc<GameTree>, obj: &Bound<'_, PyAny>) -> PyResult<Profile> {
    let n = tree.num_players();
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = obj.try_iter()?.collect::<PyResult<_>>()?;
        if items.first().map(is_policy_like).transpose()?.unwrap_or(false) {
            if items.len() != n {
                return Err(PyValueError::new_err(format!(
                    "{} policies for the {n} players of {}",
                    items.len(),
                    tree.name()
                )));
            }
            let policies = items.iter().map(|p| as_policy(tree, p)).collect::<PyResult<_>>()?;
            return Ok(Profile { policies, seats: n });
        }
    }
    Ok(Profile { policies: vec![as_policy(tree, obj)?], seats: n })
}

/// NashConv of a profile (``policy``: one policy for every seat, or a list of one per
/// seat): the sum over players of what a best response gains. OpenSpiel's definition.
#[pyfunction]
fn nash_conv(py: Python<'_>, game: &PyGame, policy: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (tree, policies) = (Arc::clone(&game.tree), profile(&game.tree, policy)?);
    let long = tree.num_nodes() >= SMALL_TREE;
    released(py, long, move || games::nash_conv(&tree, &policies.seats()))?.map_err(value_error)
}

/// Exploitability: NashConv divided by the number of players (OpenSpiel's, for 2-player
/// constant-sum games; ValueError for other games).
#[pyfunction]
fn exploitability(py: Python<'_>, game: &PyGame, policy: &Bound<'_, PyAny>) -> PyResult<f64> {
    let (tree, policies) = (Arc::clone(&game.tree), profile(&game.tree, policy)?);
    let long = tree.num_nodes() >= SMALL_TREE;
    released(py, long, move || games::exploitability(&tree, &policies.seats()))?.map_err(value_error)
}

/// NashConv with its parts: a dict of ``nash_conv``, ``best_response_values``,
/// ``expected_returns``, ``improvements`` (per player) and ``exploitability`` (None unless
/// 2-player constant-sum).
#[pyfunction]
fn nash_conv_report<'py>(
    py: Python<'py>,
    game: &PyGame,
    policy: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyDict>> {
    let (tree, policies) = (Arc::clone(&game.tree), profile(&game.tree, policy)?);
    let long = tree.num_nodes() >= SMALL_TREE;
    let report = released(py, long, move || games::nash_conv_report(&tree, &policies.seats()))?
        .map_err(value_error)?;
    let dict = PyDict::new(py);
    dict.set_item("nash_conv", report.nash_conv)?;
    dict.set_item("best_response_values", report.best_response_values.clone())?;
    dict.set_item("expected_returns", report.expected_returns.clone())?;
    dict.set_item("improvements", report.improvements())?;
    dict.set_item("exploitability", report.exploitability)?;
    Ok(dict)
}

/// A best response for ``player`` to ``policy`` (the others' rows; one policy, or one per
/// seat): ``(response, value)``, the response pure at ``player``'s information states
/// (ties to the lowest action, as OpenSpiel) and a copy of the profile elsewhere.
#[pyfunction]
fn best_response(
    py: Python<'_>,
    game: &PyGame,
    policy: &Bound<'_, PyAny>,
    player: i64,
) -> PyResult<(PyPolicy, f64)> {
    let n = game.tree.num_players();
    let player = usize::try_from(player).ok().filter(|&p| p < n).ok_or_else(|| {
        PyValueError::new_err(format!(
            "player {player} does not exist: {} has players 0..{n}",
            game.tree.name()
        ))
    })?;
    let (tree, policies) = (Arc::clone(&game.tree), profile(&game.tree, policy)?);
    let long = tree.num_nodes() >= SMALL_TREE;
    let job_tree = Arc::clone(&tree);
    let (response, value) =
        released(py, long, move || games::best_response(&job_tree, PlayerId(player), &policies.seats()))?
            .map_err(value_error)?;
    Ok((PyPolicy::of(game, response), value))
}

/// Every player's expected return under the profile, as a numpy array.
#[pyfunction]
fn expected_returns<'py>(
    py: Python<'py>,
    game: &PyGame,
    policy: &Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let (tree, policies) = (Arc::clone(&game.tree), profile(&game.tree, policy)?);
    let long = tree.num_nodes() >= SMALL_TREE;
    let values = released(py, long, move || games::expected_returns(&tree, &policies.seats()))?
        .map_err(value_error)?;
    Ok(values.into_pyarray(py))
}

/// One behaviour policy that plays like the mixture of ``policies`` with ``weights``
/// (weighting by realisation, as OpenSpiel's ``policy_aggregator``): for every player.
#[pyfunction]
fn aggregate(
    py: Python<'_>,
    game: &PyGame,
    policies: &Bound<'_, PyAny>,
    weights: &Bound<'_, PyAny>,
) -> PyResult<PyPolicy> {
    let tree = Arc::clone(&game.tree);
    let long = tree.num_nodes() >= SMALL_TREE;
    let members: Vec<TabularPolicy> =
        policies.try_iter()?.map(|p| as_policy(&tree, &p?)).collect::<PyResult<_>>()?;
    let (shape, weights) = float_array(weights, "weights")?;
    if shape != [members.len()] {
        return Err(PyValueError::new_err(format!(
            "{} weights for {} policies",
            weights.len(),
            members.len()
        )));
    }
    let job_tree = Arc::clone(&tree);
    let mixed = released(py, long, move || {
        games::aggregate(&job_tree, &members.iter().collect::<Vec<_>>(), &weights)
    })?
    .map_err(value_error)?;
    Ok(PyPolicy::of(game, mixed))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(nash_conv, m)?)?;
    m.add_function(wrap_pyfunction!(exploitability, m)?)?;
    m.add_function(wrap_pyfunction!(nash_conv_report, m)?)?;
    m.add_function(wrap_pyfunction!(best_response, m)?)?;
    m.add_function(wrap_pyfunction!(expected_returns, m)?)?;
    m.add_function(wrap_pyfunction!(aggregate, m)?)?;
    Ok(())
}
