//! Nash averaging (Balduzzi et al. 2018): evaluate agents by the maximum-entropy Nash
//! equilibrium of the symmetric zero-sum meta-game on an antisymmetric evaluation matrix.

use clarabel::algebra::CscMatrix;
use clarabel::solver::SupportedConeT;
use metagame_games::NormalFormGame;
use ndarray::{Array1, Array2};
use serde::{Deserialize, Serialize};

use crate::conic::solve_conic;
use crate::{MetaSolver, Result, Solution, SolveError, Status};

/// The Nash-averaging answer for an antisymmetric matrix `A` (`A_ij` = how much agent i
/// beats agent j).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct NashAveragingResult {
    /// p*: the maximum-entropy Nash equilibrium of the symmetric zero-sum game `(A, Aᵀ)`
    /// (both players play it).
    pub maxent_nash: Vec<f64>,
    /// The Nash-averaged skill `n = A·p*` (≤ 0; 0 on the support of p*).
    pub skill: Vec<f64>,
    /// Largest gain of a pure deviation against p* (`max_i (A p*)_i`, clipped at 0): the
    /// equilibrium certificate of `(p*, p*)` per player.
    pub deviation_gain: f64,
}

/// Nash averaging: the maximum-entropy equilibrium p* of the symmetric two-player zero-sum
/// game given by an antisymmetric `A` (unique, since entropy is strictly concave on the
/// convex equilibrium set), and skills `n = A·p*`.
///
/// The game value is 0, so the equilibrium set is `{p ∈ Δ : A p ≤ 0}`; p* maximises
/// `−Σ p_i ln p_i` over it, solved as one exponential-cone program with Clarabel
/// (`(t_i, p_i, 1) ∈ K_exp` ⇔ `t_i ≤ −p_i ln p_i`). Entries below 1e-9 are set to 0 and
/// the rest renormalised. Invariant to duplicating agents: copies share their mass.
///
/// # Complexity
///
/// Interior point on 2n variables, n linear and n exponential-cone constraints.
///
/// # References
///
/// D. Balduzzi, K. Tuyls, J. Pérolat, T. Graepel, *Re-evaluating evaluation*, NeurIPS 2018,
/// arXiv:1806.02643.
///
/// # Examples
///
/// ```
/// use metagame_solvers::nash_averaging::NashAveraging;
/// use ndarray::array;
///
/// let rps = array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]];
/// let result = NashAveraging::default().rate(&rps)?;
/// assert!(result.maxent_nash.iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-6));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct NashAveraging {}

impl NashAveraging {
    const NAME: &'static str = "nash-averaging";

    /// Nash averaging of the antisymmetric matrix `a`.
    ///
    /// # Errors
    ///
    /// [`SolveError::Unsupported`] when `a` is not square, has non-finite entries, or is not
    /// antisymmetric within 1e-9 of its largest entry; [`SolveError::Numerical`] when the
    /// conic solver fails.
    pub fn rate(&self, a: &Array2<f64>) -> Result<NashAveragingResult> {
        let unsupported =
            |reason: &str| SolveError::Unsupported { solver: Self::NAME, reason: reason.into() };
        let n = a.nrows();
        if n == 0 || a.ncols() != n {
            return Err(unsupported("the evaluation matrix must be square and non-empty"));
        }
        if a.iter().any(|x| !x.is_finite()) {
            return Err(unsupported("the evaluation matrix has non-finite entries"));
        }
        let scale = a.iter().fold(0.0f64, |m, x| m.max(x.abs())).max(f64::MIN_POSITIVE);
        if a.iter().zip(a.t().iter()).any(|(x, y)| (x + y).abs() > 1e-9 * scale) {
            return Err(unsupported("the evaluation matrix must be antisymmetric (A = −Aᵀ)"));
        }
        let p = if n == 1 { vec![1.0] } else { max_entropy_equilibrium(a, scale)? };
        let skill = a.dot(&Array1::from(p.clone())).to_vec();
        let deviation_gain = skill.iter().copied().fold(0.0, f64::max);
        Ok(NashAveragingResult { maxent_nash: p, skill, deviation_gain })
    }
}

fn max_entropy_equilibrium(a: &Array2<f64>, scale: f64) -> Result<Vec<f64>> {
    let n = a.nrows();
    let numerical = |reason: String| SolveError::Numerical { solver: NashAveraging::NAME, reason };
    // Variables: p (0..n), t (n..2n). Rows: Σp = 1 | A p ≤ 0 | n exponential cones.
    let (mut rows, mut cols, mut vals) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..n {
        rows.push(0);
        cols.push(i);
        vals.push(1.0);
    }
    for i in 0..n {
        for j in 0..n {
            if a[[i, j]] != 0.0 {
                rows.push(1 + i);
                cols.push(j);
                vals.push(a[[i, j]] / scale);
            }
        }
    }
    let base = 1 + n;
    let mut b = vec![0.0; base + 3 * n];
    b[0] = 1.0;
    for i in 0..n {
        rows.push(base + 3 * i);
        cols.push(n + i);
        vals.push(-1.0);
        rows.push(base + 3 * i + 1);
        cols.push(i);
        vals.push(-1.0);
        b[base + 3 * i + 2] = 1.0;
    }
    let m = base + 3 * n;
    let amat = CscMatrix::new_from_triplets(m, 2 * n, rows, cols, vals);
    let p = CscMatrix::zeros((2 * n, 2 * n));
    let mut q = vec![0.0; 2 * n];
    q[n..].iter_mut().for_each(|x| *x = -1.0);
    let mut cones = vec![SupportedConeT::ZeroConeT(1), SupportedConeT::NonnegativeConeT(n)];
    cones.extend((0..n).map(|_| SupportedConeT::ExponentialConeT()));
    let solution = solve_conic(NashAveraging::NAME, &p, &q, &amat, &b, &cones)?;
    let mut out: Vec<f64> = solution.x[..n].iter().map(|&x| if x < 1e-9 { 0.0 } else { x }).collect();
    let total: f64 = out.iter().sum();
    if !(total.is_finite() && total > 0.0) {
        return Err(numerical("the equilibrium has no mass".into()));
    }
    out.iter_mut().for_each(|x| *x /= total);
    Ok(out)
}

impl MetaSolver for NashAveraging {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    /// Both players play the maximum-entropy Nash equilibrium.
    ///
    /// # Errors
    ///
    /// [`SolveError::Unsupported`] unless the game is two-player, zero-sum and symmetric
    /// (row payoffs antisymmetric).
    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        let tol = 1e-9 * game.payoff_scale();
        let unsupported =
            |reason: &str| SolveError::Unsupported { solver: Self::NAME, reason: reason.into() };
        let (a, b) = game.bimatrix_payoffs().ok_or_else(|| unsupported("needs a two-player game"))?;
        if a.iter().zip(b.iter()).any(|(x, y)| (x + y).abs() > tol) {
            return Err(unsupported("needs a zero-sum game"));
        }
        let result = self.rate(&a)?;
        let strategies = vec![result.maxent_nash.clone(), result.maxent_nash];
        Ok(Solution::new(game, strategies, Status::Solved, 1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// The transitive game A_ij = sign(r_i − r_j) (D. Balduzzi, K. Tuyls, J. Pérolat,
    /// T. Graepel, "Re-evaluating evaluation", NeurIPS 2018, arXiv:1806.02643, Nash averaging):
    /// agent 2 beats both others, so the maximum-entropy Nash is p* = (0, 0, 1) and the skill
    /// n = A·p* = (−1, −1, 0).
    #[test]
    fn transitive_game() {
        let r = [1.0f64, 2.0, 3.0];
        let a = Array2::from_shape_fn((3, 3), |(i, j)| {
            (r[i] - r[j]).signum() * ((r[i] - r[j]) != 0.0) as u8 as f64
        });
        let result = NashAveraging::default().rate(&a).unwrap();
        for (x, e) in result.maxent_nash.iter().zip([0.0, 0.0, 1.0]) {
            assert!((x - e).abs() < 1e-7, "{:?}", result.maxent_nash);
        }
        for (x, e) in result.skill.iter().zip([-1.0, -1.0, 0.0]) {
            assert!((x - e).abs() < 1e-7, "{:?}", result.skill);
        }
    }

    #[test]
    fn duplicated_dominant_agents_split_mass() {
        let a = array![[0., 0., 1.], [0., 0., 1.], [-1., -1., 0.]];
        let result = NashAveraging::default().rate(&a).unwrap();
        for (x, e) in result.maxent_nash.iter().zip([0.5, 0.5, 0.0]) {
            assert!((x - e).abs() < 1e-6, "{:?}", result.maxent_nash);
        }
    }

    #[test]
    fn rejects_non_antisymmetric() {
        assert!(NashAveraging::default().rate(&array![[1., 0.], [0., 0.]]).is_err());
    }
}
