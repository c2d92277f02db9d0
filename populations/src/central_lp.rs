//! The zero-sum LP solved by an interior-point method (Clarabel), which returns a point in
//! the relative interior of the optimal face rather than a vertex.

use clarabel::algebra::CscMatrix;
use clarabel::solver::{DefaultSettingsBuilder, DefaultSolver, IPSolver, NonnegativeConeT, SolverStatus, ZeroConeT};
use ndarray::ArrayView2;

/// The maxmin strategy of the row player of `a` (row maximises xᵀAy), by interior point.
/// Returns `None` when the solver does not report success.
pub(crate) fn maxmin_interior(a: ArrayView2<'_, f64>) -> Option<Vec<f64>> {
    let (m, n) = a.dim();
    // Variables (x_0..x_{m-1}, v); minimise -v.
    let nv = m + 1;
    let p = CscMatrix::<f64>::zeros((nv, nv));
    let mut q = vec![0.0; nv];
    q[m] = -1.0;
    // Rows: Σx = 1 (zero cone); for each column j: v − Σ_i A_ij x_i ≤ 0; −x_i ≤ 0.
    let rows = 1 + n + m;
    let mut dense = vec![vec![0.0; nv]; rows];
    dense[0][..m].fill(1.0);
    for j in 0..n {
        for i in 0..m {
            dense[1 + j][i] = -a[[i, j]];
        }
        dense[1 + j][m] = 1.0;
    }
    for i in 0..m {
        dense[1 + n + i][i] = -1.0;
    }
    let amat = CscMatrix::from(dense.iter().map(|r| r.iter()));
    let mut b = vec![0.0; rows];
    b[0] = 1.0;
    let cones = [ZeroConeT(1), NonnegativeConeT(n + m)];
    let settings = DefaultSettingsBuilder::default()
        .verbose(false)
        .tol_gap_abs(1e-12)
        .tol_gap_rel(1e-12)
        .tol_feas(1e-12)
        .build()
        .ok()?;
    let mut solver = DefaultSolver::new(&p, &q, &amat, &b, &cones, settings).ok()?;
    solver.solve();
    match solver.solution.status {
        SolverStatus::Solved | SolverStatus::AlmostSolved => {}
        _ => return None,
    }
    let mut x: Vec<f64> = solver.solution.x[..m].iter().map(|v| v.max(0.0)).collect();
    let total: f64 = x.iter().sum();
    if !(total > 0.0) {
        return None;
    }
    x.iter_mut().for_each(|v| *v /= total);
    Some(x)
}
