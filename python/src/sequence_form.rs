//! The exact equilibrium of a two-player zero-sum game on its tree by the sequence-form LP:
//! ``solve_sequence_form(game)`` and its answer, ``SequenceFormSolution``.

use std::sync::Arc;

use metagame::solvers::sequence_form_lp::{SequenceFormLp, SequenceFormSolution};
use pyo3::prelude::*;

use crate::errors::{MetagameError, SMALL_TREE, released, value_error};
use crate::game::PyGame;
use crate::policy::PyPolicy;

/// The sequence-form LP's equilibrium: ``policies`` (one behaviour policy per player, as
/// OpenSpiel's ``sequence_form_lp`` returns them: each meaningful on its player's
/// information states, uniform on the other's), ``policy`` (both in one table),
/// ``value`` (the first player's expected return) and ``nash_conv`` (computed from the
/// tree, twice the exploitability).
#[pyclass(frozen, module = "metagame", name = "SequenceFormSolution")]
pub struct PySequenceFormSolution {
    solution: SequenceFormSolution,
    game: Py<PyGame>,
}

#[pymethods]
impl PySequenceFormSolution {
    /// The first player's expected return under the two policies (the game's value, up to
    /// the certificate).
    #[getter]
    fn value(&self) -> f64 {
        self.solution.value
    }
    /// NashConv of the two policies, from the tree.
    #[getter]
    fn nash_conv(&self) -> f64 {
        self.solution.nash_conv
    }
    /// ``nash_conv / 2``.
    #[getter]
    fn exploitability(&self) -> f64 {
        self.solution.nash_conv / 2.0
    }
    /// ``"solved"`` when ``nash_conv`` is within 1e-9 of the payoff range, else
    /// ``"max_iterations"``.
    #[getter]
    fn status(&self) -> PyResult<String> {
        let value =
            serde_json::to_value(self.solution.status).map_err(|e| MetagameError::new_err(e.to_string()))?;
        Ok(value.as_str().unwrap_or_default().to_string())
    }
    /// Interior-point iterations.
    #[getter]
    fn iterations(&self) -> usize {
        self.solution.iterations
    }
    /// One policy per player (each player's own rows; the other's uniform).
    #[getter]
    fn policies(&self) -> Vec<PyPolicy> {
        let game = self.game.get();
        self.solution.policies.iter().map(|p| PyPolicy::of(game, p.clone())).collect()
    }
    /// Both players' rows in one policy: the profile as every function here takes it.
    #[getter]
    fn policy(&self) -> PyPolicy {
        let game = self.game.get();
        PyPolicy::of(game, self.solution.profile(&game.tree))
    }
    fn __repr__(&self) -> String {
        format!(
            "SequenceFormSolution(value={}, nash_conv={:.3e}, status={:?})",
            self.solution.value,
            self.solution.nash_conv,
            self.status().unwrap_or_default()
        )
    }
}

/// The exact equilibrium of a two-player zero-sum (or constant-sum) ``game`` by the
/// sequence-form LP (Koller, Megiddo & von Stengel 1996), with its value and certificate
/// recomputed from the tree. ValueError for other games.
#[pyfunction]
fn solve_sequence_form(py: Python<'_>, game: Bound<'_, PyGame>) -> PyResult<PySequenceFormSolution> {
    let tree = Arc::clone(&game.get().tree);
    let long = tree.num_nodes() >= SMALL_TREE;
    let solution =
        released(py, long, move || SequenceFormLp::default().solve(&tree))?.map_err(value_error)?;
    Ok(PySequenceFormSolution { solution, game: game.unbind() })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySequenceFormSolution>()?;
    m.add_function(wrap_pyfunction!(solve_sequence_form, m)?)?;
    Ok(())
}
