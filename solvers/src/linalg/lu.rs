//! LU factorisation with partial pivoting, for the square systems of the exact two-player
//! solvers (basis refactorisations, equalising systems).

use super::dot_in_order;

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
        let arch = pulp::Arch::new();
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
            arch.dispatch(EliminateBelow { m: &mut m, k, col });
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
            let s = dot_in_order(row, &scratch[..r]);
            scratch[r] -= s;
        }
        for r in (0..k).rev() {
            let row = &self.lu[r * k + r + 1..(r + 1) * k];
            let s = dot_in_order(row, &scratch[r + 1..]);
            scratch[r] = (scratch[r] - s) / self.lu[r * k + r];
        }
        rhs.copy_from_slice(scratch);
    }
}

/// One column of [`Lu::factor`]'s elimination: the rows below the pivot's, in the widest
/// SIMD the CPU has (the same scalar operations, so the same bits, on every CPU).
struct EliminateBelow<'a> {
    m: &'a mut [f64],
    k: usize,
    col: usize,
}

impl pulp::WithSimd for EliminateBelow<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self { m, k, col } = self;
        // The rows below the pivot's, apart from it, so the elimination vectorises.
        let (top, below) = m.split_at_mut((col + 1) * k);
        let pivot_row = &top[col * k..];
        let p = pivot_row[col];
        for row in below.chunks_exact_mut(k) {
            let f = row[col] / p;
            row[col] = f;
            if f != 0.0 {
                for (v, &u) in row[col + 1..].iter_mut().zip(&pivot_row[col + 1..]) {
                    *v -= f * u;
                }
            }
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lu_solves_a_pivoting_system() {
        let mut m = vec![0.0, 1.0, 2.0, 3.0];
        let mut rhs = vec![1.0, 5.0];
        assert!(lu_solve(&mut m, &mut rhs, 2));
        assert!((rhs[0] - 1.0).abs() < 1e-15 && (rhs[1] - 1.0).abs() < 1e-15);
        let mut singular = vec![1.0, 2.0, 2.0, 4.0];
        assert!(!lu_solve(&mut singular, &mut [1.0, 2.0], 2));
    }
}
