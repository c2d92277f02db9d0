//! A Python callable as a policy: ``policy(obs, legal) -> probs`` on numpy arrays, asked
//! for whole batches of decision points (the batched contract of `games::Policy`).
//!
//! ``obs`` is ``[B × d]`` float32 (the game's tensor, OpenSpiel's layout), ``legal``
//! ``[B × A]`` bool; the answer is anything ``numpy.asarray`` reads as ``[B × A]`` numbers
//! (a numpy array, a list, a CPU PyTorch tensor): finite, non-negative, zero on illegal
//! actions, each row summing to 1. Every answer is checked; a callable that raises or
//! answers garbage is one error naming it.
//!
//! A callable that becomes a member of a run (an oracle's answer on a game played on its
//! states) is kept in the run folder pickled (`members/<sha256>.pkl`, kind `"python"`) and
//! unpickled when the run resumes: pickle stores functions and classes by reference, so
//! their module must be importable then, and a run folder, like any pickle, is to be read
//! only when it is one's own.

use std::sync::Arc;

use metagame::games::{self, Decisions, Policy, PolicyFile, check_probabilities};
use ndarray::ArrayViewMut2;
use numpy::{PyArray2, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;

/// A Python callable answering batches of decision points.
pub struct CallablePolicy {
    object: Py<PyAny>,
    /// How messages name it: ``__name__`` (a function), else its type's name (a module).
    name: String,
}

impl CallablePolicy {
    /// `obj` as a policy when it is callable, else None.
    ///
    /// # Errors
    ///
    /// A failure to read the callable's name.
    pub fn of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Self>> {
        if !obj.is_callable() {
            return Ok(None);
        }
        let name = match obj.getattr("__name__") {
            Ok(n) => n.str()?.to_string(),
            Err(_) => obj.get_type().name()?.to_string(),
        };
        Ok(Some(Self { object: obj.clone().unbind(), name }))
    }

    /// Another handle on the same Python object.
    pub fn share(&self) -> Self {
        Self { object: Python::attach(|py| self.object.clone_ref(py)), name: self.name.clone() }
    }

    /// The name messages give it.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn failed(&self, what: String) -> games::Error {
        games::Error::PolicyCode(format!("the callable {} {what}", self.name))
    }
}

impl Policy for CallablePolicy {
    /// One call of the callable for the whole batch, the GIL taken for it.
    fn probabilities(&self, decisions: &Decisions<'_>, mut out: ArrayViewMut2<'_, f32>) -> games::Result<()> {
        let (rows, width) = (decisions.len(), out.ncols());
        Python::attach(|py| {
            let obs = PyArray2::from_array(py, &decisions.tensors);
            let legal = PyArray2::from_array(py, &decisions.legal);
            let answer = self.object.call1(py, (obs, legal)).map_err(|e| {
                let kind = e.get_type(py).name().map(|n| n.to_string()).unwrap_or_default();
                self.failed(format!("raised {kind}: {}", e.value(py)))
            })?;
            let array = py
                .import("numpy")
                .and_then(|np| np.call_method1("asarray", (answer.bind(py), "float32")))
                .map_err(|e| {
                    self.failed(format!("returned something that is not an array of numbers ({e})"))
                })?;
            let array = array.cast_into::<PyArray2<f32>>().map_err(|_| {
                self.failed(format!(
                    "returned an array that is not 2-dimensional; expected [{rows} × {width}]"
                ))
            })?;
            if array.shape() != [rows, width] {
                return Err(self.failed(format!(
                    "returned an array of shape {:?}; expected [{rows} × {width}] (one row per decision, one column per action)",
                    array.shape()
                )));
            }
            out.assign(&array.readonly().as_array());
            Ok(())
        })?;
        check_probabilities(decisions.legal, out.view()).map_err(|e| self.failed(format!("returned {e}")))
    }

    fn kind(&self) -> &str {
        KIND
    }

    fn to_file(&self) -> games::Result<Option<PolicyFile>> {
        let bytes = Python::attach(|py| {
            // Protocol 4: protocol 5 writes a numpy array that is read-only (one that came
            // back from Ray's object store) in other bytes than a writable one, and a
            // member's file name is the hash of its bytes.
            let pickled = py.import("pickle")?.call_method1("dumps", (self.object.bind(py), 4))?;
            pickled.extract::<Vec<u8>>()
        })
        .map_err(|e| {
            self.failed(format!(
                "cannot be kept in the run folder: pickle failed ({e}); make it a module-level function or an object of a module-level class, or convert a network with metagame.torch.to_native"
            ))
        })?;
        Ok(Some(PolicyFile { kind: KIND.into(), extension: "pkl".into(), bytes }))
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// The kind of a callable's policy file.
pub const KIND: &str = "python";

impl CallablePolicy {
    /// The Python object.
    pub fn object(&self) -> &Py<PyAny> {
        &self.object
    }

    /// A callable back from its pickled file (registered with the registry as the reader of
    /// kind `"python"`, so that runs whose members are callables resume).
    ///
    /// # Errors
    ///
    /// Bytes that do not unpickle (a module that cannot be imported, say) or unpickle to
    /// something that is not callable.
    pub fn from_file(bytes: &[u8]) -> metagame::Result<Arc<dyn Policy>> {
        let failed = |why: String| {
            metagame::Error::Game(games::Error::PolicyCode(format!("a pickled Python member {why}")))
        };
        Python::attach(|py| {
            let object = py
                .import("pickle")
                .and_then(|pickle| pickle.call_method1("loads", (pyo3::types::PyBytes::new(py, bytes),)))
                .map_err(|e| failed(format!("cannot be unpickled: {e}")))?;
            match Self::of(&object) {
                Ok(Some(callable)) => Ok(Arc::new(callable) as Arc<dyn Policy>),
                Ok(None) => Err(failed(format!("is a {}, not a callable", object.get_type()))),
                Err(e) => Err(failed(e.to_string())),
            }
        })
    }
}
