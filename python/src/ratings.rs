//! Ratings on numpy match data: online Elo and mElo from a list of matches, batch Elo
//! (Bradley–Terry) from win counts, Nash averaging from a win-rate matrix.

use metagame::populations::rating::{
    BatchElo, BatchEloConfig, Elo, EloConfig, MElo, MEloConfig, MatchResult, OnlineRating,
    nash_averaging as nash_avg,
};
use ndarray::Array2;
use numpy::{IntoPyArray, PyArray1, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::de::DeserializeOwned;

use crate::convert::{float_array, toml_table};
use crate::errors::value_error;

/// A settings type from keyword arguments (its builder's fields; unknown ones refused).
fn settings<T: DeserializeOwned>(what: &str, kwargs: Option<&Bound<'_, PyDict>>) -> PyResult<T> {
    let table = kwargs.map(toml_table).transpose()?.unwrap_or_default();
    toml::Value::Table(table)
        .try_into()
        .map_err(|e| PyValueError::new_err(format!("{what}: {}", e.message().trim())))
}

/// The most members a rating holds: a larger index (or `num_members`) is taken for bad
/// input rather than allocated.
const MAX_MEMBERS: usize = 1_000_000;

/// Matches as `(first, second, score)` rows (score 1 a win of `first`, 0.5 a draw, 0 a
/// loss) and the number of members (given, or one more than the largest index).
fn parse_matches(obj: &Bound<'_, PyAny>, num_members: Option<usize>) -> PyResult<(Vec<MatchResult>, usize)> {
    let (shape, values) = float_array(obj, "matches")?;
    if shape.len() != 2 || shape[1] != 3 {
        return Err(PyValueError::new_err(format!(
            "matches: expected rows of (first, second, score), got shape {shape:?}"
        )));
    }
    if let Some(n) = num_members.filter(|&n| n > MAX_MEMBERS) {
        return Err(PyValueError::new_err(format!(
            "num_members is {n}; ratings hold at most {MAX_MEMBERS} members"
        )));
    }
    let mut out = Vec::with_capacity(shape[0]);
    let mut largest = 0usize;
    for (k, row) in values.chunks(3).enumerate() {
        let index = |x: f64| -> PyResult<usize> {
            if x < 0.0 || x.fract() != 0.0 {
                return Err(PyValueError::new_err(format!(
                    "matches: row {k} names member {x}, not an index"
                )));
            }
            if x >= MAX_MEMBERS as f64 {
                // `{:e}` keeps 1e300 short; `{}` would write all 301 digits.
                return Err(PyValueError::new_err(format!(
                    "matches: row {k} names member {x:e}; ratings hold at most {MAX_MEMBERS} members"
                )));
            }
            Ok(x as usize)
        };
        let (i, j) = (index(row[0])?, index(row[1])?);
        largest = largest.max(i + 1).max(j + 1);
        if !(0.0..=1.0).contains(&row[2]) {
            return Err(PyValueError::new_err(format!(
                "matches: row {k} has the score {}; a score is 1 (first wins), 0.5 (a draw) or 0 (first loses), or a number between",
                row[2]
            )));
        }
        out.push(
            MatchResult::new(i, j, row[2])
                .map_err(|e| PyValueError::new_err(format!("matches: row {k}: {e}")))?,
        );
    }
    let n = num_members.unwrap_or(largest);
    if largest > n {
        return Err(PyValueError::new_err(format!(
            "matches name member {}, but num_members is {n}",
            largest - 1
        )));
    }
    Ok((out, n))
}

/// Online Elo after playing ``matches`` in order (rows ``(first, second, score)``, score 1,
/// 0.5 or 0 for ``first``): the ratings as a numpy array. Keyword settings: ``k_factor``
/// (32), ``scale`` (400), ``initial_rating`` (1000).
#[pyfunction]
#[pyo3(signature = (matches, num_members=None, **config))]
fn elo<'py>(
    py: Python<'py>,
    matches: &Bound<'py, PyAny>,
    num_members: Option<usize>,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let config: EloConfig = settings("elo", config)?;
    let (results, n) = parse_matches(matches, num_members)?;
    let mut rating = Elo::new(config, n);
    results.iter().for_each(|r| rating.update(r));
    Ok(rating.ratings().to_vec().into_pyarray(py))
}

/// mElo's answer: the ratings and the `[members × 2k]` cyclic vectors.
type MEloArrays<'py> = (Bound<'py, PyArray1<f64>>, Bound<'py, PyArray2<f64>>);

/// Multidimensional Elo (mElo2k) after ``matches``: ``(ratings, vectors)``, the vectors a
/// ``[members × 2k]`` array. Keyword settings: ``k`` (1), ``rating_rate``, ``vector_rate``,
/// ``scale``, ``initial_rating``, ``initial_vector_scale``, ``seed``.
#[pyfunction]
#[pyo3(signature = (matches, num_members=None, **config))]
fn melo<'py>(
    py: Python<'py>,
    matches: &Bound<'py, PyAny>,
    num_members: Option<usize>,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<MEloArrays<'py>> {
    let config: MEloConfig = settings("melo", config)?;
    let (results, n) = parse_matches(matches, num_members)?;
    let width = 2 * config.k();
    let mut rating = MElo::new(config, n);
    results.iter().for_each(|r| rating.update(r));
    let vectors = Array2::from_shape_fn((n, width), |(i, d)| rating.vector(i)[d]);
    Ok((rating.ratings().to_vec().into_pyarray(py), vectors.into_pyarray(py)))
}

fn square(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Array2<f64>> {
    let (shape, values) = float_array(obj, what)?;
    match shape[..] {
        [r, c] => Ok(Array2::from_shape_vec((r, c), values).map_err(value_error)?),
        _ => {
            Err(PyValueError::new_err(format!("{what}: expected a 2-dimensional array, got shape {shape:?}")))
        }
    }
}

/// Batch Elo (the Bradley–Terry maximum-likelihood fit, OpenSpiel's smoothing) of win
/// counts ``wins[i, j]`` (how often i beat j) and optional symmetric ``draws``: the ratings.
/// Keyword settings: ``smoothing``, ``max_iterations``, ``convergence_tolerance``, ``scale``,
/// ``minimum_rating``.
#[pyfunction]
#[pyo3(signature = (wins, draws=None, **config))]
fn batch_elo<'py>(
    py: Python<'py>,
    wins: &Bound<'py, PyAny>,
    draws: Option<&Bound<'py, PyAny>>,
    config: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyArray1<f64>>> {
    let config: BatchEloConfig = settings("batch_elo", config)?;
    let wins = square(wins, "wins")?;
    let draws = draws.map(|d| square(d, "draws")).transpose()?;
    let fit = BatchElo::fit(&config, wins.view(), draws.as_ref().map(|d| d.view())).map_err(value_error)?;
    Ok(fit.ratings().to_vec().into_pyarray(py))
}

/// Nash averaging of a win-rate matrix (``win_rates[i, j]`` in [0, 1]): a dict of
/// ``maxent_nash`` (the maximum-entropy Nash mixture), ``skill`` and ``deviation_gain``.
#[pyfunction]
fn nash_averaging<'py>(py: Python<'py>, win_rates: &Bound<'py, PyAny>) -> PyResult<Bound<'py, PyDict>> {
    let w = square(win_rates, "win_rates")?;
    let result = nash_avg(w.view()).map_err(value_error)?;
    let dict = PyDict::new(py);
    dict.set_item("maxent_nash", result.maxent_nash.clone().into_pyarray(py))?;
    dict.set_item("skill", result.skill.clone().into_pyarray(py))?;
    dict.set_item("deviation_gain", result.deviation_gain)?;
    Ok(dict)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(elo, m)?)?;
    m.add_function(wrap_pyfunction!(melo, m)?)?;
    m.add_function(wrap_pyfunction!(batch_elo, m)?)?;
    m.add_function(wrap_pyfunction!(nash_averaging, m)?)?;
    Ok(())
}
