//! The dense simplex tableau with the lexicographic minimum ratio test, shared by
//! Lemke–Howson's complementary pivoting and the phase-one programs of
//! [`super::face`].

use std::ops::Range;

use crate::linalg::{self, Lu};

/// Pivots between two rebuilds of a tableau from the original payoffs, at least (a `k`-row
/// tableau is rebuilt every `max(REFRESH_EVERY, k)` pivots).
pub const REFRESH_EVERY: usize = 50;

/// Entries of an entering column at most this times the column's largest entry are zero.
const PIVOT_RELATIVE: f64 = 1e-11;
/// Ratios (and lexicographic keys) within this, relatively, tie.
const TIE_RELATIVE: f64 = 1e-11;

/// A dense simplex tableau `[B⁻¹M | B⁻¹1]` over `cols` variables, with the original `[M | 1]`
/// kept for rebuilding, and the lexicographic minimum ratio test.
pub(crate) struct LexTableau {
    rows: usize,
    cols: usize,
    /// `rows × (cols + 1)` row-major; the last column is the right-hand side.
    t: Vec<f64>,
    /// The original `[M | rhs]`.
    original: Vec<f64>,
    /// The basic variable of each row.
    basis: Vec<usize>,
    /// The columns that held the identity initially, in row order (read as `B⁻¹`).
    identity: Range<usize>,
    pivots_since_refresh: usize,
    prow: Vec<f64>,
    candidates: Vec<usize>,
    keys: Vec<f64>,
}

impl LexTableau {
    /// A tableau for `[M | rhs]` (`rows × (cols + 1)` row-major) whose columns `identity`
    /// form the identity, in row order, and are the starting basis.
    ///
    /// # Panics
    ///
    /// If the shapes disagree (a caller bug).
    #[track_caller]
    pub(crate) fn new(rows: usize, cols: usize, original: Vec<f64>, identity: Range<usize>) -> Self {
        assert_eq!(original.len(), rows * (cols + 1), "tableau shape");
        assert_eq!(identity.len(), rows, "identity columns");
        Self {
            rows,
            cols,
            t: original.clone(),
            original,
            basis: identity.clone().collect(),
            identity,
            pivots_since_refresh: 0,
            prow: Vec::with_capacity(cols + 1),
            candidates: Vec::with_capacity(rows),
            keys: Vec::with_capacity(rows),
        }
    }

    fn width(&self) -> usize {
        self.cols + 1
    }

    pub(crate) fn at(&self, i: usize, j: usize) -> f64 {
        self.t[i * self.width() + j]
    }

    /// The basic variable of row `i`.
    pub(crate) fn basic(&self, i: usize) -> usize {
        self.basis[i]
    }

    /// The value of row `i`'s basic variable.
    pub(crate) fn rhs(&self, i: usize) -> f64 {
        self.at(i, self.cols)
    }

    /// Lexicographic minimum ratio row for the entering column `e`: among the rows whose
    /// entry is a pivot (above `PIVOT_RELATIVE ×` the column's largest), those with the least
    /// ratio `rhs / entry`, then the least `B⁻¹[i, ·] / entry` key by key. `None` when no
    /// entry is a pivot (an unbounded direction).
    pub(crate) fn ratio_row(&mut self, e: usize) -> Option<usize> {
        let w = self.width();
        let column_max = (0..self.rows).map(|i| self.t[i * w + e].abs()).fold(0.0, f64::max);
        if column_max == 0.0 || !column_max.is_finite() {
            return None;
        }
        let tolerance = PIVOT_RELATIVE * column_max;
        self.candidates.clear();
        self.candidates.extend((0..self.rows).filter(|&i| self.t[i * w + e] > tolerance));
        if self.candidates.is_empty() {
            return None;
        }
        let rhs = self.cols;
        let keys = std::iter::once(rhs).chain(self.identity.clone());
        for col in keys {
            if self.candidates.len() == 1 {
                break;
            }
            self.keys.clear();
            let t = &self.t;
            self.keys.extend(self.candidates.iter().map(|&i| {
                let v = t[i * w + col];
                let v = if col == rhs { v.max(0.0) } else { v };
                v / t[i * w + e]
            }));
            let least = self.keys.iter().copied().fold(f64::INFINITY, f64::min);
            let bound = least + TIE_RELATIVE * (1.0 + least.abs());
            let mut kept = 0;
            for idx in 0..self.candidates.len() {
                if self.keys[idx] <= bound {
                    self.candidates[kept] = self.candidates[idx];
                    kept += 1;
                }
            }
            self.candidates.truncate(kept);
        }
        // Rows of B⁻¹ are independent, so one is left in exact arithmetic; otherwise take the
        // largest pivot.
        self.candidates.iter().copied().max_by(|&i, &j| self.t[i * w + e].total_cmp(&self.t[j * w + e]))
    }

    /// Pivot `e` into the basis at row `r`; returns the variable that left. Rebuilds the
    /// tableau every `max(REFRESH_EVERY, rows)` pivots (false if the basis became singular).
    pub(crate) fn pivot(&mut self, r: usize, e: usize) -> (usize, bool) {
        let w = self.width();
        linalg::pivot_tableau(&mut self.t, w, r, e, &mut self.prow);
        let left = std::mem::replace(&mut self.basis[r], e);
        self.pivots_since_refresh += 1;
        // Rebuilding a k-row tableau costs about as much as k pivots, so rebuilding every
        // max(50, k) pivots at most doubles the work.
        let ok = self.pivots_since_refresh < REFRESH_EVERY.max(self.rows) || self.refresh();
        (left, ok)
    }

    /// Rebuild `[B⁻¹M | B⁻¹1]` from the original data by LU with partial pivoting (false,
    /// leaving the tableau as it was, when the basis matrix is numerically singular).
    pub(crate) fn refresh(&mut self) -> bool {
        let (c, w) = (self.rows, self.width());
        self.pivots_since_refresh = 0;
        let mut bm = vec![0.0; c * c];
        for (k, &v) in self.basis.iter().enumerate() {
            for i in 0..c {
                bm[i * c + k] = self.original[i * w + v];
            }
        }
        let Some(lu) = Lu::factor(bm, c) else { return false };
        let mut is_basic = vec![usize::MAX; w];
        for (k, &v) in self.basis.iter().enumerate() {
            is_basic[v] = k;
        }
        let mut column = vec![0.0; c];
        let mut scratch = Vec::with_capacity(c);
        for (v, &k) in is_basic.iter().enumerate() {
            if k != usize::MAX {
                for i in 0..c {
                    self.t[i * w + v] = f64::from(u8::from(i == k));
                }
                continue;
            }
            for (i, x) in column.iter_mut().enumerate() {
                *x = self.original[i * w + v];
            }
            lu.solve(&mut column, &mut scratch);
            for (i, &x) in column.iter().enumerate() {
                self.t[i * w + v] = x;
            }
        }
        true
    }

    /// The values of the variables `labels` (0 when nonbasic).
    pub(crate) fn values(&self, labels: Range<usize>) -> Vec<f64> {
        let mut out = vec![0.0; labels.len()];
        for (i, &v) in self.basis.iter().enumerate() {
            if labels.contains(&v) {
                out[v - labels.start] = self.rhs(i);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lexicographic_test_breaks_ratio_ties_by_the_inverse_basis() {
        // Two rows with equal ratio 1 for column 0; the identity columns (1, 2) decide:
        // row 0 key (1/1, 0) vs row 1 key (0, 1/1): row 1 is smaller lexicographically.
        let mut t = LexTableau::new(2, 3, vec![1., 1., 0., 1., 1., 0., 1., 1.], 1..3);
        assert_eq!(t.ratio_row(0), Some(1));
    }
}
