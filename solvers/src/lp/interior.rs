//! The zero-sum LP's fallback: an interior-point solve (clarabel, through
//! [`crate::conic::solve_conic`]) of the column player's problem
//!
//! ```text
//! minimise v  subject to  A y ≤ v·1,  Σ y = 1,  y ≥ 0
//! ```
//!
//! whose multipliers on `A y ≤ v·1` are the row player's maxmin strategy. Interior points
//! do not care about degeneracy, so this answers when the simplex method cannot.

use clarabel::algebra::CscMatrix;
use clarabel::solver::SupportedConeT;
use ndarray::Array2;

use crate::Result;
use crate::conic::solve_conic;

/// Both players' strategies from the interior-point solve (not yet cleaned: entries may be
/// slightly negative and sums slightly off one).
pub(crate) struct InteriorSolution {
    pub(crate) x: Vec<f64>,
    pub(crate) y: Vec<f64>,
    pub(crate) iterations: usize,
}

/// Solve the matrix game `a` (best scaled to entries of order one) by interior points.
///
/// # Errors
///
/// [`crate::SolveError::Numerical`] when clarabel does not reach (almost) solved.
///
/// # Complexity
///
/// Each interior-point iteration factors a KKT system with a dense `m × n` block:
/// O((m + n)³) in the worst case, a few dozen iterations.
pub(crate) fn solve(a: &Array2<f64>) -> Result<InteriorSolution> {
    let (m, n) = a.dim();
    let mut colptr = Vec::with_capacity(n + 2);
    let mut rowval = Vec::with_capacity(m * n + 2 * n + m);
    let mut nzval = Vec::with_capacity(m * n + 2 * n + m);
    colptr.push(0);
    for j in 0..n {
        for i in 0..m {
            rowval.push(i);
            nzval.push(a[[i, j]]);
        }
        rowval.extend([m + j, m + n]);
        nzval.extend([-1.0, 1.0]);
        colptr.push(rowval.len());
    }
    rowval.extend(0..m);
    nzval.extend(std::iter::repeat_n(-1.0, m));
    colptr.push(rowval.len());
    let constraints = CscMatrix::new(m + n + 1, n + 1, colptr, rowval, nzval);
    let p = CscMatrix::zeros((n + 1, n + 1));
    let mut q = vec![0.0; n + 1];
    q[n] = 1.0;
    let mut b = vec![0.0; m + n + 1];
    b[m + n] = 1.0;
    let cones = [SupportedConeT::NonnegativeConeT(m + n), SupportedConeT::ZeroConeT(1)];
    let solution = solve_conic("lp", &p, &q, &constraints, &b, &cones)?;
    Ok(InteriorSolution {
        x: solution.z[..m].to_vec(),
        y: solution.x[..n].to_vec(),
        iterations: solution.iterations,
    })
}
