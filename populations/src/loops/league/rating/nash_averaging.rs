//! Nash averaging of a win-rate matrix.

use metagame_solvers::nash_averaging::{NashAveraging, NashAveragingResult};
use ndarray::{Array2, ArrayView2};

use crate::error::{Error, Result};

/// Nash averaging (Balduzzi et al. 2018) of a league's win rates: the maximum-entropy Nash
/// equilibrium `p*` of the symmetric zero-sum game on `A_ij = (W_ij − W_ji)/2` and the
/// skills `n = A·p*`, where `W_ij` is the probability that member `i` beats member `j`.
///
/// When `W_ij + W_ji = 1` (as in a [`WinRates`](crate::WinRates) table) `A = W − ½`; the
/// average of the two orderings makes `A` exactly antisymmetric when they come from separate
/// estimates (a payoff table of both seats). The diagonal is ignored. A thin wrapper over
/// [`metagame_solvers::nash_averaging::NashAveraging`], which solves it; for a zero-sum
/// payoff matrix of returns, call that solver directly.
///
/// # Errors
///
/// [`Error::Game`] with a shape error when `win_rates` is not square and non-empty;
/// [`Error::Config`] when an entry is not in `[0, 1]`; [`Error::MetaSolver`] when the conic
/// solver fails.
///
/// # Complexity
///
/// One exponential-cone program with `2n` variables.
///
/// # References
///
/// D. Balduzzi, K. Tuyls, J. Pérolat, T. Graepel, *Re-evaluating evaluation*, NeurIPS 2018,
/// arXiv:1806.02643.
///
/// # Examples
///
/// Rock–paper–scissors: the uniform mixture, every skill 0.
///
/// ```
/// use metagame_populations::rating::nash_averaging;
/// use ndarray::array;
///
/// let w = array![[0.5, 0.0, 1.0], [1.0, 0.5, 0.0], [0.0, 1.0, 0.5]];
/// let result = nash_averaging(w.view())?;
/// assert!(result.maxent_nash.iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-6));
/// assert!(result.skill.iter().all(|s| s.abs() < 1e-6));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn nash_averaging(win_rates: ArrayView2<f64>) -> Result<NashAveragingResult> {
    let n = win_rates.nrows();
    if n == 0 || win_rates.ncols() != n {
        return Err(Error::Game(metagame_games::Error::Shape(format!(
            "the win-rate matrix must be square and non-empty, got {n}×{}",
            win_rates.ncols()
        ))));
    }
    if let Some(((i, j), x)) = win_rates.indexed_iter().find(|(_, x)| !(0.0..=1.0).contains(*x)) {
        return Err(Error::Config(format!("win rate ({i}, {j}) must be in [0, 1], got {x}")));
    }
    let a = Array2::from_shape_fn((n, n), |(i, j)| {
        if i == j { 0.0 } else { 0.5 * (win_rates[[i, j]] - win_rates[[j, i]]) }
    });
    NashAveraging::default().rate(&a).map_err(|source| Error::MetaSolver { solver: "nash-averaging", source })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// A transitive league: 2 beats 1 beats 0, so all the mass is on 2 (Balduzzi et al. 2018, arXiv:1806.02643, §3).
    #[test]
    fn transitive_league() {
        let w = array![[0.5, 0.3, 0.1], [0.7, 0.5, 0.2], [0.9, 0.8, 0.5]];
        let result = nash_averaging(w.view()).unwrap();
        assert!((result.maxent_nash[2] - 1.0).abs() < 1e-6, "{:?}", result.maxent_nash);
        assert!(result.skill[2].abs() < 1e-6 && result.skill[0] < 0.0 && result.skill[1] < 0.0);
    }

    #[test]
    fn bad_input() {
        assert!(nash_averaging(Array2::<f64>::zeros((0, 0)).view()).is_err());
        assert!(nash_averaging(Array2::<f64>::zeros((2, 3)).view()).is_err());
        assert!(nash_averaging(array![[0.5, 1.5], [0.0, 0.5]].view()).is_err());
        assert!(nash_averaging(array![[0.5, f64::NAN], [0.0, 0.5]].view()).is_err());
    }
}
