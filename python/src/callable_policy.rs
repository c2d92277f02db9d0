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
//! states) is kept in the run folder as the file it writes of itself, where it can: a
//! `metagame.torch` policy as its module's state dict in safetensors with how to rebuild
//! the module (kind `"torch"`), a `metagame.jax` policy as its parameters in safetensors with
//! its function's import path (kind `"jax"`); both through the object's `_metagame_file()`.
//! Any other callable is kept pickled (`members/<sha256>.pkl`, kind `"python"`) only where
//! the run allows pickle (`allow_pickle=True`), and read back only where the resuming run
//! allows it too: pickle stores functions and classes by reference, so their module must be
//! importable then, and unpickling runs code, so a pickled run folder is to be read only
//! when it is one's own.

use std::cell::Cell;
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
    /// Whether a run may keep it pickled when it writes no file of its own.
    pickle: bool,
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
        Ok(Some(Self { object: obj.clone().unbind(), name, pickle: false }))
    }

    /// The same callable, kept pickled in a run folder when `allow` (and it writes no file
    /// of its own).
    pub fn allowing_pickle(mut self, allow: bool) -> Self {
        self.pickle = allow;
        self
    }

    /// Another handle on the same Python object.
    pub fn share(&self) -> Self {
        Self {
            object: Python::attach(|py| self.object.clone_ref(py)),
            name: self.name.clone(),
            pickle: self.pickle,
        }
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
        Python::attach(|py| {
            let object = self.object.bind(py);
            // A policy that writes itself (metagame.torch's and metagame.jax's): its file.
            if object.hasattr("_metagame_file").unwrap_or(false) {
                let file = object
                    .call_method0("_metagame_file")
                    .map_err(|e| self.failed(format!("cannot be kept in the run folder: {e}")))?;
                if !file.is_none() {
                    let (kind, extension, bytes): (String, String, Vec<u8>) =
                        file.extract().map_err(|e| {
                            self.failed(format!("wrote no (kind, extension, bytes) of itself: {e}"))
                        })?;
                    return Ok(Some(PolicyFile { kind, extension, bytes }));
                }
            }
            if !self.pickle {
                return Err(self.failed(
                    "cannot be kept in the run folder without pickle: wrap a PyTorch module with metagame.torch.policy (kept as its state dict) or a JAX function with metagame.jax.policy (its parameters), convert an nn.Sequential with metagame.torch.to_native, or pass allow_pickle=True to the run (read only run folders that are your own)".to_string(),
                ));
            }
            // Protocol 4: protocol 5 writes a numpy array that is read-only (one that came
            // back from Ray's object store) in other bytes than a writable one, and a
            // member's file name is the hash of its bytes.
            let bytes = py
                .import("pickle")
                .and_then(|pickle| pickle.call_method1("dumps", (object, 4)))
                .and_then(|pickled| pickled.extract::<Vec<u8>>())
                .map_err(|e| {
                    self.failed(format!(
                        "cannot be kept in the run folder: pickle failed ({e}); make it a module-level function or an object of a module-level class, or convert a network with metagame.torch.to_native"
                    ))
                })?;
            Ok(Some(PolicyFile { kind: KIND.into(), extension: "pkl".into(), bytes }))
        })
    }

    fn as_any(&self) -> Option<&dyn std::any::Any> {
        Some(self)
    }
}

/// The kind of a callable's pickled policy file.
pub const KIND: &str = "python";

/// The kinds of the files policies of `metagame.torch` and `metagame.jax` write of
/// themselves, with the Python module whose `_from_file(bytes)` reads one back.
pub const SELF_WRITTEN: [(&str, &str); 2] = [("torch", "metagame.torch"), ("jax", "metagame.jax")];

thread_local! {
    /// Whether pickled members may be read on this thread (a run that allows pickle).
    static PICKLE_READS: Cell<bool> = const { Cell::new(false) };
}

/// Allow (or not) reading pickled members on this thread: a run thread started with
/// `allow_pickle=True`, a Ray task reading the members its driver sent. Returns what it was.
pub fn allow_pickle_reads(allow: bool) -> bool {
    PICKLE_READS.with(|c| c.replace(allow))
}

impl CallablePolicy {
    /// The Python object.
    pub fn object(&self) -> &Py<PyAny> {
        &self.object
    }

    /// A callable back from its pickled file (registered with the registry as the reader of
    /// kind `"python"`, so that runs whose members are callables resume), where this thread
    /// allows it ([`allow_pickle_reads`]).
    ///
    /// # Errors
    ///
    /// Pickle not allowed; bytes that do not unpickle (a module that cannot be imported,
    /// say) or unpickle to something that is not callable.
    pub fn from_file(bytes: &[u8]) -> metagame::Result<Arc<dyn Policy>> {
        let failed = |why: String| {
            metagame::Error::Game(games::Error::PolicyCode(format!("a pickled Python member {why}")))
        };
        if !PICKLE_READS.with(Cell::get) {
            return Err(failed(
                "is read only by a run that allows pickle: metagame.run(..., resume=True, allow_pickle=True), for a run folder that is your own".to_string(),
            ));
        }
        Python::attach(|py| {
            let object = py
                .import("pickle")
                .and_then(|pickle| pickle.call_method1("loads", (pyo3::types::PyBytes::new(py, bytes),)))
                .map_err(|e| failed(format!("cannot be unpickled: {e}")))?;
            Self::callable(object, true).map_err(failed)
        })
    }

    /// A policy of kind `kind` (one of [`SELF_WRITTEN`]) back from the file it wrote of
    /// itself, by its module's `_from_file(bytes)`.
    ///
    /// # Errors
    ///
    /// The module's own error (a file it cannot read, a module it cannot rebuild).
    pub fn from_self_written(kind: &str, bytes: &[u8]) -> metagame::Result<Arc<dyn Policy>> {
        let failed =
            |why: String| metagame::Error::Game(games::Error::PolicyCode(format!("a `{kind}` member {why}")));
        let Some((_, module)) = SELF_WRITTEN.iter().find(|(k, _)| *k == kind) else {
            return Err(failed("is of no kind this package writes".to_string()));
        };
        Python::attach(|py| {
            let object = py
                .import(*module)
                .and_then(|m| m.call_method1("_from_file", (pyo3::types::PyBytes::new(py, bytes),)))
                .map_err(|e| failed(format!("cannot be read back: {e}")))?;
            Self::callable(object, false).map_err(failed)
        })
    }

    fn callable(object: Bound<'_, PyAny>, pickle: bool) -> Result<Arc<dyn Policy>, String> {
        match Self::of(&object) {
            Ok(Some(callable)) => Ok(Arc::new(callable.allowing_pickle(pickle)) as Arc<dyn Policy>),
            Ok(None) => Err(format!("is a {}, not a callable", object.get_type())),
            Err(e) => Err(e.to_string()),
        }
    }
}
