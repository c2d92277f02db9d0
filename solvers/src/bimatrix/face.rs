//! Equilibria on a face of the best-response polytopes: given candidate supports, the
//! profile at which every candidate strategy is a best response, by two phase-one linear
//! programs. Lemke–Howson and vertex enumeration polish their answers with it, and
//! [`equilibrium_on_support`](super::support_enumeration::equilibrium_on_support) starts
//! from it.

use metagame_games::NormalFormGame;
use ndarray::Array2;

use super::certificate::certificate_tolerance;
use super::tableau::LexTableau;
use crate::linalg;
use crate::{Solution, Status};

/// The certified profile with supports within `rows` × `cols` at which every strategy of
/// `rows` and of `cols` is a best response, if the two feasibility programs have one
/// (indices are not checked).
pub(crate) fn face_equilibrium(game: &NormalFormGame, rows: &[usize], cols: &[usize]) -> Option<Solution> {
    let (a, b) = (game.matrix(0)?, game.matrix(1)?);
    let (a, b) = (linalg::normalized(a), linalg::normalized(b));
    let (y, py) = face_point(&a, rows, cols)?;
    let (x, px) = face_point(&b.t().to_owned(), cols, rows)?;
    let s = Solution::new(game, vec![x, y], Status::Solved, px + py);
    (s.certificate.nash_conv <= certificate_tolerance(game) && s.is_distribution(1e-12)).then_some(s)
}

/// A mix of the columns `support` of `mat` (`R × S`, positive) against which every row of
/// `tight` is a best response: a feasible point of `{u ≥ 0 on support : mat[tight] u = 1,
/// mat[other] u ≤ 1}` by a phase-one simplex, normalised to sum to 1, with the pivots made.
fn face_point(mat: &Array2<f64>, tight: &[usize], support: &[usize]) -> Option<(Vec<f64>, usize)> {
    let (r, total) = mat.dim();
    let s = support.len();
    let cols = s + r;
    let w = cols + 1;
    // Columns: u (support), then one per row: a slack (rows not in `tight`) or an
    // artificial (rows in `tight`), which start as the basis.
    let mut original = vec![0.0; r * w];
    for i in 0..r {
        for (c, &j) in support.iter().enumerate() {
            original[i * w + c] = mat[[i, j]];
        }
        original[i * w + s + i] = 1.0;
        original[i * w + cols] = 1.0;
    }
    let mut artificial = vec![false; r];
    for &i in tight {
        artificial[i] = true;
    }
    let cost = |v: usize| f64::from(u8::from(v >= s && v < cols && artificial[v - s]));
    let mut tab = LexTableau::new(r, cols, original, s..cols);
    let mut is_basic = vec![false; cols];
    is_basic[s..cols].iter_mut().for_each(|b| *b = true);
    let mut pivots = 0;
    let max_pivots = 50 * (r + s) + 1000;
    let mut reduced = vec![0.0; cols];
    loop {
        // Reduced costs z_v = c_v − Σ_k c_B(k) t[k, v].
        for (v, z) in reduced.iter_mut().enumerate() {
            *z = cost(v);
        }
        let mut scale = 1.0_f64;
        for k in 0..r {
            let cb = cost(tab.basic(k));
            if cb != 0.0 {
                for (v, z) in reduced.iter_mut().enumerate() {
                    let t = tab.at(k, v);
                    *z -= cb * t;
                    scale = scale.max(t.abs());
                }
            }
        }
        let entering = (0..cols)
            .filter(|&v| !is_basic[v] && cost(v) == 0.0 && reduced[v] < -FACE_TOLERANCE * scale)
            .min_by(|&u, &v| reduced[u].total_cmp(&reduced[v]));
        let Some(e) = entering else { break };
        if pivots >= max_pivots {
            return None;
        }
        let row = tab.ratio_row(e)?;
        let (left, ok) = tab.pivot(row, e);
        pivots += 1;
        if !ok {
            return None;
        }
        is_basic[left] = false;
        is_basic[e] = true;
    }
    if !tab.refresh() {
        return None;
    }
    let infeasibility: f64 = (0..r).filter(|&k| cost(tab.basic(k)) != 0.0).map(|k| tab.rhs(k).abs()).sum();
    // A near-feasible point may still be certified (near-ties): the certificate decides.
    if infeasibility > FACE_MAX_INFEASIBILITY {
        return None;
    }
    let mut u = vec![0.0; total];
    for k in 0..r {
        let v = tab.basic(k);
        if v < s {
            u[support[v]] = tab.rhs(k).max(0.0);
        }
    }
    let sum: f64 = u.iter().sum();
    if sum.is_nan() || sum <= 0.0 {
        return None;
    }
    u.iter_mut().for_each(|p| *p /= sum);
    Some((u, pivots))
}

/// Reduced-cost tolerance of [`face_point`] (payoffs in `[1, 2]`).
const FACE_TOLERANCE: f64 = 1e-11;
/// Phase-one residuals above this mean no point exists; below it the certificate decides.
const FACE_MAX_INFEASIBILITY: f64 = 1e-6;
