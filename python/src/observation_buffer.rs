//! A pyspiel state's tensor read through OpenSpiel's observer: `set_from` writes the
//! tensor into the observation's own float32 buffer, which Rust reads in place. The state
//! methods (`information_state_tensor`) build a Python list of floats for every call,
//! which was most of the cost of a tensor in a walk of every history.

use numpy::{PyArray1, PyArrayMethods};
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyDict;

use metagame::games::TensorKind;

/// How many tensors are read both ways and compared before the buffer alone is trusted.
const CHECKED: usize = 64;

/// Reads one state's tensor for one player, through the observer where the game makes one
/// whose tensors agree with the state method's, else through the state method.
pub struct TensorReader<'py> {
    state_method: &'static str,
    observer: Option<Observer<'py>>,
    compared: usize,
    values: Vec<f32>,
}

struct Observer<'py> {
    observation: Bound<'py, PyAny>,
    buffer: Bound<'py, PyArray1<f32>>,
}

impl<'py> TensorReader<'py> {
    /// A reader of `game`'s tensors of `kind` and `size`; `state_method` is the state
    /// method that gives them (the reference the observer is compared with).
    pub fn new(game: &Bound<'py, PyAny>, kind: TensorKind, size: usize, state_method: &'static str) -> Self {
        // Any failure (a Python game without `make_observer`, an observer without a
        // tensor) leaves the state method.
        let observer = Observer::new(game, kind, size).ok().flatten();
        Self { state_method, observer, compared: 0, values: Vec::with_capacity(size) }
    }

    /// `player`'s tensor at `state`.
    ///
    /// # Errors
    ///
    /// What the pyspiel calls raise.
    pub fn read(&mut self, state: &Bound<'py, PyAny>, player: usize) -> PyResult<&[f32]> {
        if let Some(observer) = &self.observer
            && observer.observation.call_method1(intern!(state.py(), "set_from"), (state, player)).is_ok()
        {
            let buffer = observer.buffer.readonly();
            if let Ok(values) = buffer.as_slice() {
                if self.compared >= CHECKED {
                    self.values.clear();
                    self.values.extend_from_slice(values);
                    return Ok(&self.values);
                }
                self.compared += 1;
                let reference: Vec<f32> = state.call_method1(self.state_method, (player,))?.extract()?;
                let agree = reference == values;
                drop(buffer);
                if !agree {
                    self.observer = None;
                }
                self.values = reference;
                return Ok(&self.values);
            }
        }
        // No observer, or it failed or disagreed: the state method from here on.
        self.observer = None;
        self.values = state.call_method1(self.state_method, (player,))?.extract()?;
        Ok(&self.values)
    }
}

impl<'py> Observer<'py> {
    /// OpenSpiel's observer of `kind` for `game` and its buffer; None where the game makes
    /// none with a tensor of `size` values.
    fn new(game: &Bound<'py, PyAny>, kind: TensorKind, size: usize) -> PyResult<Option<Self>> {
        let py = game.py();
        let pyspiel = py.import("pyspiel")?;
        let iig = PyDict::new(py);
        iig.set_item("perfect_recall", kind == TensorKind::InformationState)?;
        iig.set_item("public_info", true)?;
        iig.set_item("private_info", pyspiel.getattr("PrivateInfoType")?.getattr("SINGLE_PLAYER")?)?;
        let iig = pyspiel.getattr("IIGObservationType")?.call((), Some(&iig))?;
        let observer = game.call_method1("make_observer", (iig, PyDict::new(py)))?;
        if observer.is_none() {
            return Ok(None);
        }
        let observation = pyspiel.getattr("_Observation")?.call1((game, observer))?;
        if !observation.call_method0("has_tensor")?.extract::<bool>()? {
            return Ok(None);
        }
        let numpy = py.import("numpy")?;
        let buffer = numpy.call_method1("frombuffer", (&observation, numpy.getattr("float32")?))?;
        let buffer = buffer.cast_into::<PyArray1<f32>>()?;
        if buffer.len()? != size {
            return Ok(None);
        }
        Ok(Some(Self { observation, buffer }))
    }
}
