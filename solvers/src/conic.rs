//! The one way the solvers call clarabel: tight tolerances, and anything short of
//! (almost) solved reported as a numerical error.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettings, DefaultSolver, IPSolver, SolverStatus, SupportedConeT};

use crate::{Result, SolveError};

/// A conic program's primal and dual solutions and the interior-point iterations it took.
pub(crate) struct ConicSolution {
    /// The primal solution.
    pub(crate) x: Vec<f64>,
    /// The dual solution: one multiplier per constraint row, in the dual cones, with
    /// `Px + q + Aᵀz = 0`.
    pub(crate) z: Vec<f64>,
    pub(crate) iterations: usize,
}

/// Solves `min ½xᵀPx + qᵀx` subject to `Ax + s = b`, `s ∈ cones` with clarabel at 1e-12
/// gap and feasibility tolerances (at most 500 iterations); errors name `solver`.
pub(crate) fn solve_conic(
    solver: &'static str,
    p: &CscMatrix<f64>,
    q: &[f64],
    a: &CscMatrix<f64>,
    b: &[f64],
    cones: &[SupportedConeT<f64>],
) -> Result<ConicSolution> {
    let numerical = |reason: String| SolveError::Numerical { solver, reason };
    let settings = DefaultSettings {
        verbose: false,
        tol_gap_abs: 1e-12,
        tol_gap_rel: 1e-12,
        tol_feas: 1e-12,
        max_iter: 500,
        ..DefaultSettings::default()
    };
    let mut ipm =
        DefaultSolver::new(p, q, a, b, cones, settings).map_err(|e| numerical(format!("setup: {e}")))?;
    ipm.solve();
    let status = ipm.solution.status;
    if !matches!(status, SolverStatus::Solved | SolverStatus::AlmostSolved) {
        return Err(numerical(format!("clarabel ended with {status:?}")));
    }
    Ok(ConicSolution {
        x: std::mem::take(&mut ipm.solution.x),
        z: std::mem::take(&mut ipm.solution.z),
        iterations: ipm.solution.iterations as usize,
    })
}
