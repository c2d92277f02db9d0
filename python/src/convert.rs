//! Conversions between Python values and the library's: numpy arrays of floats, JSON
//! reports as dicts, config dicts as TOML tables.

use numpy::{PyArrayDyn, PyArrayMethods, PyReadonlyArrayDyn};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple};

/// `obj` as an n-dimensional float64 array (`numpy.asarray(obj, dtype=float64)`), with its
/// shape, checked to hold only finite numbers.
///
/// # Errors
///
/// `ValueError` naming `what` for something that is not numeric or holds NaN or infinity.
pub fn float_array(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<(Vec<usize>, Vec<f64>)> {
    let py = obj.py();
    let numpy = py.import("numpy")?;
    let array = numpy
        .call_method1("asarray", (obj,))
        .and_then(|a| a.call_method1("astype", ("float64",)))
        .map_err(|e| PyValueError::new_err(format!("{what}: not an array of numbers ({e})")))?;
    let array = array
        .cast_into::<PyArrayDyn<f64>>()
        .map_err(|_| PyValueError::new_err(format!("{what}: not an array of numbers")))?;
    let view: PyReadonlyArrayDyn<'_, f64> = array.readonly();
    let view = view.as_array();
    let shape = view.shape().to_vec();
    let values: Vec<f64> = view.iter().copied().collect();
    if let Some(i) = values.iter().position(|x| !x.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{what}: entry {i} (row-major) is {}, not a finite number",
            values[i]
        )));
    }
    Ok((shape, values))
}

/// A JSON value as the Python value `json.loads` would give.
pub fn json_to_py<'py>(py: Python<'py>, value: &serde_json::Value) -> PyResult<Bound<'py, PyAny>> {
    use serde_json::Value;
    Ok(match value {
        Value::Null => py.None().into_bound(py),
        Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => i.into_pyobject(py)?.into_any(),
            (None, Some(u)) => u.into_pyobject(py)?.into_any(),
            _ => PyFloat::new(py, n.as_f64().unwrap_or(f64::NAN)).into_any(),
        },
        Value::String(s) => PyString::new(py, s).into_any(),
        Value::Array(items) => {
            let list = PyList::empty(py);
            for item in items {
                list.append(json_to_py(py, item)?)?;
            }
            list.into_any()
        }
        Value::Object(map) => {
            let dict = PyDict::new(py);
            for (k, v) in map {
                dict.set_item(k, json_to_py(py, v)?)?;
            }
            dict.into_any()
        }
    })
}

/// A Python value of a config (a dict of str, int, float, bool, lists and dicts) as TOML.
///
/// # Errors
///
/// `ValueError` naming the key of a value TOML cannot hold (None, an object).
pub fn toml_value(obj: &Bound<'_, PyAny>, key: &str) -> PyResult<toml::Value> {
    if obj.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(obj.extract()?));
    }
    if obj.is_instance_of::<PyInt>() {
        let i: i64 = obj
            .extract()
            .map_err(|_| PyValueError::new_err(format!("config: `{key}` is too large an integer")))?;
        return Ok(toml::Value::Integer(i));
    }
    if obj.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(obj.extract()?));
    }
    if let Ok(s) = obj.cast::<PyString>() {
        return Ok(toml::Value::String(s.to_str()?.to_string()));
    }
    if let Ok(d) = obj.cast::<PyDict>() {
        return Ok(toml::Value::Table(toml_table(d)?));
    }
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        let mut items = Vec::new();
        for item in obj.try_iter()? {
            items.push(toml_value(&item?, key)?);
        }
        return Ok(toml::Value::Array(items));
    }
    Err(PyValueError::new_err(format!(
        "config: `{key}` is a {}, which a config cannot hold (use str, int, float, bool, list or dict)",
        obj.get_type().name()?
    )))
}

/// A dict of config fields as a TOML table.
///
/// # Errors
///
/// As [`toml_value`]; a key that is not a string.
pub fn toml_table(dict: &Bound<'_, PyDict>) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (k, v) in dict.iter() {
        let key: String =
            k.extract().map_err(|_| PyValueError::new_err(format!("config: the key {k} is not a string")))?;
        let value = toml_value(&v, &key)?;
        table.insert(key, value);
    }
    Ok(table)
}
