//! Small dense linear algebra shared by the exact two-player solvers: LU solves with partial
//! pivoting, the Gauss–Jordan tableau pivot, payoff normalisation, and "polishing" a
//! profile on its supports.

use ndarray::{Array2, ArrayView2};

/// Gauss–Jordan pivot of the row-major tableau `t` (rows of `width` entries) on entry
/// (`r`, `e`): row `r` is divided by the pivot and column `e` eliminated from every other
/// row. The new row `r` is left in `prow` (a reused buffer) for callers that keep further
/// rows outside `t`.
pub(crate) fn pivot_tableau(t: &mut [f64], width: usize, r: usize, e: usize, prow: &mut Vec<f64>) {
    let inv = 1.0 / t[r * width + e];
    prow.clear();
    prow.extend(t[r * width..(r + 1) * width].iter().map(|v| v * inv));
    prow[e] = 1.0;
    for (i, row) in t.chunks_exact_mut(width).enumerate() {
        if i == r {
            continue;
        }
        let f = row[e];
        if f != 0.0 {
            for (v, &q) in row.iter_mut().zip(prow.iter()) {
                *v -= f * q;
            }
            row[e] = 0.0;
        }
    }
    t[r * width..(r + 1) * width].copy_from_slice(prow);
}

/// An LU factorisation with partial pivoting of a square matrix, reusable for many
/// right-hand sides.
pub(crate) struct Lu {
    k: usize,
    /// `k × k` row-major: U on and above the diagonal, the multipliers of L below.
    lu: Vec<f64>,
    /// Row `i` of the factorisation is row `perm[i]` of the input.
    perm: Vec<usize>,
}

impl Lu {
    /// Factor the `k × k` row-major matrix `m`; `None` when a pivot is below `1e-13 ×` the
    /// largest entry (numerically singular).
    ///
    /// # Complexity
    ///
    /// O(k³).
    pub(crate) fn factor(mut m: Vec<f64>, k: usize) -> Option<Self> {
        debug_assert_eq!(m.len(), k * k);
        let scale = m.iter().fold(0.0_f64, |acc, v| acc.max(v.abs()));
        if scale == 0.0 && k > 0 {
            return None;
        }
        let tiny = 1e-13 * scale;
        let mut perm: Vec<usize> = (0..k).collect();
        for col in 0..k {
            let (piv, best) = (col..k)
                .map(|r| (r, m[r * k + col].abs()))
                .fold((col, -1.0), |acc, (r, v)| if v > acc.1 { (r, v) } else { acc });
            if best <= tiny {
                return None;
            }
            if piv != col {
                for j in 0..k {
                    m.swap(piv * k + j, col * k + j);
                }
                perm.swap(piv, col);
            }
            let p = m[col * k + col];
            for r in (col + 1)..k {
                let f = m[r * k + col] / p;
                m[r * k + col] = f;
                if f != 0.0 {
                    for j in (col + 1)..k {
                        m[r * k + j] -= f * m[col * k + j];
                    }
                }
            }
        }
        Some(Self { k, lu: m, perm })
    }

    /// Solve `m · z = rhs`; `rhs` is replaced by `z`.
    ///
    /// # Complexity
    ///
    /// O(k²).
    pub(crate) fn solve(&self, rhs: &mut [f64], scratch: &mut Vec<f64>) {
        let k = self.k;
        scratch.clear();
        scratch.extend(self.perm.iter().map(|&p| rhs[p]));
        for r in 0..k {
            let row = &self.lu[r * k..r * k + r];
            let s: f64 = row.iter().zip(&scratch[..r]).map(|(l, z)| l * z).sum();
            scratch[r] -= s;
        }
        for r in (0..k).rev() {
            let row = &self.lu[r * k + r + 1..(r + 1) * k];
            let s: f64 = row.iter().zip(&scratch[r + 1..]).map(|(u, z)| u * z).sum();
            scratch[r] = (scratch[r] - s) / self.lu[r * k + r];
        }
        rhs.copy_from_slice(scratch);
    }
}

/// Solve the square system `m · z = rhs` (`m` is `k × k` row-major) by LU with partial
/// pivoting; on success `rhs` holds `z`. Returns `false` when `m` is numerically singular.
///
/// # Complexity
///
/// O(k³).
pub(crate) fn lu_solve(m: &mut [f64], rhs: &mut [f64], k: usize) -> bool {
    match Lu::factor(m.to_vec(), k) {
        Some(lu) => {
            lu.solve(rhs, &mut Vec::with_capacity(k));
            true
        }
        None => false,
    }
}

/// `(a − min) / range + 1`: the same game up to a positive affine map, with every entry in
/// `[1, 2]` (all ones when `a` is constant). Best-response polytopes need positive payoffs.
/// Computed on halves, so payoffs up to `±f64::MAX` do not overflow (for normal numbers
/// halving is exact, so the result is the same as without it).
pub(crate) fn normalized(a: ArrayView2<'_, f64>) -> Array2<f64> {
    let (lo, hi) = a.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let half_range = hi / 2.0 - lo / 2.0;
    if half_range > 0.0 { a.mapv(|x| (x / 2.0 - lo / 2.0) / half_range + 1.0) } else { a.mapv(|_| 1.0) }
}

/// The profile that makes the row player indifferent among `rows` (using the column
/// player's mix on `cols`) and the column player indifferent among `cols`: solves
/// `A[rows, cols] y = v·1, Σ y = 1` and `B[rows, cols]ᵀ x = u·1, Σ x = 1`.
///
/// Returns full-length `(x, y)` (zero off the supports), or `None` when the supports differ
/// in size or a system is singular. Signs are not checked.
///
/// # Complexity
///
/// O(k³) for supports of size k.
pub(crate) fn equalize(
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    rows: &[usize],
    cols: &[usize],
) -> Option<(Vec<f64>, Vec<f64>)> {
    let k = rows.len();
    if k != cols.len() || k == 0 {
        return None;
    }
    let y = indifferent_mix(k, |r, c| a[[rows[r], cols[c]]])?;
    let x = indifferent_mix(k, |r, c| b[[rows[c], cols[r]]])?;
    let mut xf = vec![0.0; a.nrows()];
    let mut yf = vec![0.0; a.ncols()];
    for (&i, v) in rows.iter().zip(x) {
        xf[i] = v;
    }
    for (&j, v) in cols.iter().zip(y) {
        yf[j] = v;
    }
    Some((xf, yf))
}

/// Solve `Σ_c m(r, c) z_c − v = 0` for every `r < k` and `Σ z = 1`; returns `z`.
fn indifferent_mix(k: usize, m: impl Fn(usize, usize) -> f64) -> Option<Vec<f64>> {
    let n = k + 1;
    let mut mat = vec![0.0; n * n];
    let mut rhs = vec![0.0; n];
    for r in 0..k {
        for c in 0..k {
            mat[r * n + c] = m(r, c);
        }
        mat[r * n + k] = -1.0;
    }
    for c in 0..k {
        mat[k * n + c] = 1.0;
    }
    rhs[k] = 1.0;
    if !lu_solve(&mut mat, &mut rhs, n) {
        return None;
    }
    rhs.truncate(k);
    rhs.iter().all(|v| v.is_finite()).then_some(rhs)
}

/// Clip entries in `[-tolerance, 0)` to 0 and renormalise; `None` if an entry is below
/// `-tolerance` or the sum is not positive.
pub(crate) fn clean_distribution(mut s: Vec<f64>, tolerance: f64) -> Option<Vec<f64>> {
    if s.iter().any(|&v| v.is_nan() || v < -tolerance) {
        return None;
    }
    for v in s.iter_mut() {
        *v = v.max(0.0);
    }
    let total: f64 = s.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    for v in s.iter_mut() {
        *v /= total;
    }
    Some(s)
}

/// Indices where `s` is positive.
pub(crate) fn support(s: &[f64]) -> Vec<usize> {
    s.iter().enumerate().filter(|&(_, &v)| v > 0.0).map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn lu_solves_a_pivoting_system() {
        let mut m = vec![0.0, 1.0, 2.0, 3.0];
        let mut rhs = vec![1.0, 5.0];
        assert!(lu_solve(&mut m, &mut rhs, 2));
        assert!((rhs[0] - 1.0).abs() < 1e-15 && (rhs[1] - 1.0).abs() < 1e-15);
        let mut singular = vec![1.0, 2.0, 2.0, 4.0];
        assert!(!lu_solve(&mut singular, &mut [1.0, 2.0], 2));
    }

    #[test]
    fn equalize_battle_of_the_sexes() {
        let a = array![[3., 0.], [0., 2.]];
        let b = array![[2., 0.], [0., 3.]];
        let (x, y) = equalize(a.view(), b.view(), &[0, 1], &[0, 1]).unwrap();
        assert!((x[0] - 0.6).abs() < 1e-15 && (y[0] - 0.4).abs() < 1e-15);
    }
}
