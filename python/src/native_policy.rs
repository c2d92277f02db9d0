//! `metagame.NativePolicy`: a policy of a run that Python holds without it being Python's
//! (a network member, uniform play), callable on numpy batches and pickled as its policy
//! file.

use std::sync::Arc;

use metagame::games::{PlayerId, Policy};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyBytes;

use crate::errors::{run_error, value_error};

/// A policy of a run that is neither a table nor a Python object (a network member),
/// callable as ``policy(obs, legal) -> probs`` on numpy arrays (``obs`` ``[B × d]``
/// float32, ``legal`` ``[B × A]`` bool), answered natively.
#[pyclass(frozen, module = "metagame", name = "NativePolicy")]
pub struct PyNativePolicy {
    pub policy: Arc<dyn Policy>,
    pub player: usize,
    pub num_actions: usize,
}

#[pymethods]
impl PyNativePolicy {
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        obs: numpy::PyReadonlyArray2<'py, f32>,
        legal: numpy::PyReadonlyArray2<'py, bool>,
    ) -> PyResult<Bound<'py, numpy::PyArray2<f32>>> {
        let (obs, legal) = (obs.as_array(), legal.as_array());
        if legal.ncols() != self.num_actions || obs.nrows() != legal.nrows() {
            return Err(PyValueError::new_err(format!(
                "obs [{} × {}] and legal [{} × {}]: expected one row of each per decision and {} actions",
                obs.nrows(),
                obs.ncols(),
                legal.nrows(),
                legal.ncols(),
                self.num_actions
            )));
        }
        let decisions =
            metagame::games::Decisions { player: PlayerId(self.player), tensors: obs, legal, infosets: None };
        let mut out = ndarray::Array2::<f32>::zeros((legal.nrows(), self.num_actions));
        self.policy.probabilities(&decisions, out.view_mut()).map_err(value_error)?;
        Ok(numpy::PyArray2::from_owned_array(py, out))
    }
    /// What the policy is made of (``"mlp"``, ``"uniform"``).
    #[getter]
    fn kind(&self) -> String {
        self.policy.kind().to_string()
    }
    fn __repr__(&self) -> String {
        format!("NativePolicy(kind={:?}, player={})", self.policy.kind(), self.player)
    }
    /// Pickle as its policy file (a Ray task's request carries its opponents so).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(Bound<'py, PyAny>, (String, Bound<'py, PyBytes>, usize, usize))> {
        let Some(file) = self.policy.to_file().map_err(value_error)? else {
            return Err(PyTypeError::new_err(format!(
                "a native policy of kind `{}` cannot be pickled",
                self.policy.kind()
            )));
        };
        let rebuild = py.import("metagame._metagame")?.getattr("native_policy_from_file")?;
        Ok((rebuild, (file.kind, PyBytes::new(py, &file.bytes), self.player, self.num_actions)))
    }
}

/// A ``NativePolicy`` back from its policy file (``__reduce__``'s rebuild).
#[pyfunction]
pub fn native_policy_from_file(
    kind: &str,
    bytes: &[u8],
    player: usize,
    num_actions: usize,
) -> PyResult<PyNativePolicy> {
    let policy = metagame::registry::policy_from_file(kind, bytes).map_err(|e| run_error(&e))?;
    Ok(PyNativePolicy { policy, player, num_actions })
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyNativePolicy>()?;
    m.add_function(wrap_pyfunction!(native_policy_from_file, m)?)?;
    Ok(())
}
