//! The crate's small dense linear algebra, in one place: inner products, the Gauss–Jordan
//! tableau pivot, LU with partial pivoting ([`Lu`]), Householder QR ([`Qr`]), and the
//! two-player payoff and profile helpers built on them ([`profile`]).
//!
//! Floating-point sums are not associative, so the summation order of an inner product is
//! part of its contract: [`dot`] (four interleaved partial sums, for the iterative solvers'
//! inner loops) and [`dot_in_order`] (one left-to-right chain, for the factorisations and
//! the logit path) give different bits on the same input, and each caller keeps the one it
//! was written and tested with.

mod condensed;
mod lu;
pub(crate) mod profile;
mod qr;

pub(crate) use condensed::{Eliminate, Weights};
pub(crate) use lu::{Lu, lu_solve};
pub(crate) use profile::{Normalization, clean_distribution, equalize, normalized, support};
pub(crate) use qr::Qr;

/// `Σ a_i·b_i` in four interleaved partial sums `s_k = Σ_{i ≡ k mod 4} a_i·b_i` (whole
/// groups of four only), combined as `(s₀ + s₁) + (s₂ + s₃)`, then the last `len mod 4`
/// products added in order. Independent add chains let the compiler vectorise; the order
/// is fixed, so the result is the same on every CPU. Extra entries of the longer slice are
/// ignored.
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let ca = a.chunks_exact(4);
    let cb = b.chunks_exact(4);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// `Σ a_i·b_i` summed left to right in one chain (the order of a plain loop). Extra entries
/// of the longer slice are ignored.
#[inline]
pub(crate) fn dot_in_order(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The Euclidean norm `√(Σ a_i²)`, the squares summed as [`dot_in_order`].
#[inline]
pub(crate) fn norm(a: &[f64]) -> f64 {
    dot_in_order(a, a).sqrt()
}

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_two_orders_agree_on_exact_sums_and_cover_every_remainder() {
        for len in 0..=9 {
            let a: Vec<f64> = (0..len).map(|i| i as f64 + 1.0).collect();
            let b: Vec<f64> = (0..len).map(|i| 2.0 - i as f64).collect();
            let exact: f64 = (0..len).map(|i| (i as f64 + 1.0) * (2.0 - i as f64)).sum();
            assert_eq!(dot(&a, &b), exact, "{len}");
            assert_eq!(dot_in_order(&a, &b), exact, "{len}");
        }
        assert_eq!(norm(&[3.0, 4.0]), 5.0);
    }

    #[test]
    fn pivot_makes_a_unit_column() {
        // [[2, 1 | 4], [1, 3 | 5]] pivoted on (0, 0).
        let mut t = vec![2.0, 1.0, 4.0, 1.0, 3.0, 5.0];
        let mut prow = Vec::new();
        pivot_tableau(&mut t, 3, 0, 0, &mut prow);
        assert_eq!(t, vec![1.0, 0.5, 2.0, 0.0, 2.5, 3.0]);
    }
}
