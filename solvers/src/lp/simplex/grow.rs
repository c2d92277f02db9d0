//! Growing an optimal tableau by rows and columns, as a PSRO meta-game grows.
//!
//! A tableau holds `B⁻¹` implicitly: the column of a nonbasic slack `s_i` is `B⁻¹ e_i`, and
//! a basic slack's is a unit vector. So the tableau of the grown problem, for the old basis
//! with the new rows' slacks basic and the new columns nonbasic, follows from the old one
//! without a refactorisation (Chvátal 1983, ch. 10):
//!
//! - a new column `a_j` is `B⁻¹ a_j` (one pass over the tight rows' slack columns), with
//!   reduced cost `1 − wᵀ a_j` for the row duals `w`;
//! - a new row is `a_i` on the nonbasic columns minus `a_i` on the basic columns times their
//!   tableau rows, with right-hand side `1 − a_i u_B`.
//!
//! The grown basis is primal feasible on the old rows and dual feasible on the old columns;
//! [`Simplex::resume`] repairs the new rows by dual pivots and prices in the new columns by
//! primal ones, refactorising only when the tableau has drifted from the data.
//!
//! # Complexity
//!
//! Growing by `r` rows and `c` columns costs `O(mn)` for the copy plus `O(c·m·k + r·n·k)`
//! for `k` basic structural columns; a pivot costs `O(mn)`, against the `O(k·m·n)` of a
//! refactorisation.

use ndarray::Array2;

use super::{Simplex, SimplexEnd};
use crate::linalg::Weights;

impl Simplex {
    /// The tableau of `a` (the old matrix in its leading block, new rows and columns after
    /// it; positive entries) for the current basis with the new rows' slacks basic and the
    /// new columns nonbasic.
    ///
    /// # Panics
    ///
    /// When `a` is smaller than the current matrix in either dimension (callers check).
    pub(crate) fn grow(&mut self, a: Array2<f64>) {
        let (m, n) = (self.m, self.n);
        let (m2, n2) = a.dim();
        assert!(m2 >= m && n2 >= n, "a grown problem is at least as large");
        // Where each old row's slack is: basic in a tableau row, or nonbasic in a column.
        let mut basic_slack = vec![None; m];
        for (r, &v) in self.basic.iter().enumerate() {
            if v >= n {
                basic_slack[v - n] = Some(r);
            }
        }
        let tight: Vec<(usize, usize)> =
            self.nonbasic.iter().enumerate().filter(|&(_, &v)| v >= n).map(|(q, &v)| (q, v - n)).collect();
        // The tableau widened to the new columns: column j is B⁻¹ a_j on the old rows.
        let mut t = vec![0.0; m2 * n2];
        for r in 0..m {
            t[r * n2..r * n2 + n].copy_from_slice(&self.t[r * n..(r + 1) * n]);
        }
        self.cost.resize(n2, 0.0);
        for j in n..n2 {
            for (i, &row) in basic_slack.iter().enumerate() {
                if let Some(r) = row {
                    t[r * n2 + j] = a[[i, j]];
                }
            }
            let mut reduced = 1.0;
            for &(q, i) in &tight {
                reduced += self.cost[q] * a[[i, j]];
            }
            self.cost[j] = reduced;
        }
        // Row by row through the old tableau (its columns are strided), each new entry
        // summed over the tight rows in the same order as column by column.
        let weights: Vec<Vec<f64>> =
            (n..n2).map(|j| tight.iter().map(|&(_, i)| a[[i, j]]).collect()).collect();
        for r in 0..m {
            let old = &self.t[r * n..(r + 1) * n];
            let new = &mut t[r * n2 + n..(r + 1) * n2];
            for (x, w) in new.iter_mut().zip(&weights) {
                for (&(q, _), &w) in tight.iter().zip(w) {
                    *x += w * old[q];
                }
            }
        }
        // The new rows: a_i on the nonbasic columns, minus a_i on the basic columns times
        // their rows.
        let structural: Vec<(usize, usize)> =
            self.basic.iter().enumerate().filter(|&(_, &v)| v < n).map(|(r, &v)| (r, v)).collect();
        self.rhs.resize(m2, 0.0);
        for i in m..m2 {
            let (head, tail) = t.split_at_mut(i * n2);
            let row = &mut tail[..n2];
            for (s, &v) in self.nonbasic.iter().enumerate() {
                if v < n {
                    row[s] = a[[i, v]];
                }
            }
            for j in n..n2 {
                row[j] = a[[i, j]];
            }
            let mut rhs = 1.0;
            for &(r, j) in &structural {
                let f = a[[i, j]];
                rhs -= f * self.rhs[r];
                for (x, &y) in row.iter_mut().zip(&head[r * n2..(r + 1) * n2]) {
                    *x -= f * y;
                }
            }
            self.rhs[i] = rhs;
        }
        // Slack indices move up by the new columns.
        let shift = |v: usize| if v >= n { v - n + n2 } else { v };
        for v in self.basic.iter_mut().chain(self.nonbasic.iter_mut()) {
            *v = shift(*v);
        }
        self.basic.extend((m..m2).map(|i| n2 + i));
        self.nonbasic.extend(n..n2);
        self.t = t;
        self.a = a;
        (self.m, self.n) = (m2, n2);
        self.prow.resize(n2, 0.0);
        self.norms.resize(n2, 0.0);
        Weights { t: &self.t, width: n2, norms: &mut self.norms }.run(self.arch);
        // The new entries carry a pivot's worth of rounding.
        self.since_refactor += 1;
    }

    /// From a grown tableau ([`Simplex::grow`]) to an optimal basis of the unperturbed
    /// problem: dual pivots on the new rows (letting in dual-feasible columns only), primal
    /// pivots for the columns that price out, a refactorisation only when the tableau has
    /// drifted from the data, at most `budget` pivots. [`SimplexEnd::Stalled`] when the dual
    /// pass cannot repair a row (the caller solves cold).
    pub(crate) fn resume(&mut self, budget: usize, cleanup_pivot_tolerance: f64) -> SimplexEnd {
        let ones = vec![1.0; self.m];
        let cap = self.pivots + budget;
        self.price_tolerance = Self::FINAL_TOLERANCE;
        self.feasibility_tolerance = Self::FINAL_TOLERANCE;
        self.relative_pivot_tolerance = cleanup_pivot_tolerance;
        self.absolute_pivot_tolerance = Self::FINAL_ABSOLUTE_PIVOT_TOLERANCE;
        for round in 0..Self::CLEANUP_ROUNDS {
            if self.drift(&ones) > 0.1 * Self::FINAL_TOLERANCE {
                self.refactor(&ones);
            }
            if self.is_optimal() {
                return SimplexEnd::Optimal;
            }
            self.dual_feasible_only = true;
            let repaired = self.dual(cap, &ones);
            self.dual_feasible_only = false;
            if !repaired {
                return if self.pivots >= cap { SimplexEnd::PivotCap } else { SimplexEnd::Stalled };
            }
            if !self.primal(cap, &ones, round > 0) {
                return SimplexEnd::PivotCap;
            }
        }
        SimplexEnd::Stalled
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(m: usize, n: usize, seed: u64) -> Array2<f64> {
        Array2::from_shape_fn((m, n), |(i, j)| 1.0 + super::super::unit_hash(seed + (i * n + j) as u64))
    }

    /// Growing keeps the tableau a refactorisation would build for the same basis, and
    /// resuming reaches the value of a cold solve (in no more pivots, after a row and a column).
    #[test]
    fn a_grown_tableau_is_the_refactorised_one_and_resumes_to_the_cold_optimum() {
        for (m, n, dm, dn) in [(12, 9, 1, 1), (20, 20, 2, 3), (7, 15, 4, 0), (15, 7, 0, 4), (30, 30, 1, 1)] {
            let a = random(m + dm, n + dn, (m * 100 + n) as u64);
            let mut lp = Simplex::new(Array2::from_shape_fn((m, n), |(i, j)| a[[i, j]]));
            assert_eq!(lp.solve(10_000, 1e-9, |_| {}), SimplexEnd::Optimal);
            lp.grow(a.clone());
            let mut rebuilt = Simplex::new(a.clone());
            rebuilt.basic.clone_from(&lp.basic);
            rebuilt.nonbasic.clone_from(&lp.nonbasic);
            rebuilt.refactor(&vec![1.0; m + dm]);
            // The refactorisation orders the basis its own way: compare variable by variable.
            let position = |of: &[usize], v: usize| of.iter().position(|&x| x == v).unwrap();
            for (r, &v) in lp.basic.iter().enumerate() {
                let rr = position(&rebuilt.basic, v);
                assert!((lp.rhs[r] - rebuilt.rhs[rr]).abs() < 1e-12, "{m}x{n}: rhs of {v}");
                for (s, &u) in lp.nonbasic.iter().enumerate() {
                    let ss = position(&rebuilt.nonbasic, u);
                    let (x, y) = (lp.t[r * lp.n + s], rebuilt.t[rr * lp.n + ss]);
                    assert!((x - y).abs() < 1e-12, "{m}x{n}: t[{v}, {u}] {x} vs {y}");
                }
            }
            for (s, &u) in lp.nonbasic.iter().enumerate() {
                let ss = position(&rebuilt.nonbasic, u);
                assert!((lp.cost[s] - rebuilt.cost[ss]).abs() < 1e-12, "{m}x{n}: cost of {u}");
                assert!((lp.norms[s] - rebuilt.norms[ss]).abs() < 1e-10, "{m}x{n}: norm of {u}");
            }
            let before = lp.pivots;
            assert_eq!(lp.resume(1000, 1e-9), SimplexEnd::Optimal);
            let mut cold = Simplex::new(a);
            assert_eq!(cold.solve(10_000, 1e-9, |_| {}), SimplexEnd::Optimal);
            let value = |lp: &Simplex| {
                lp.rhs.iter().zip(&lp.basic).filter(|(_, v)| **v < lp.n).map(|(r, _)| r).sum::<f64>()
            };
            assert!((value(&lp) - value(&cold)).abs() < 1e-12, "{m}x{n}: {} vs {}", value(&lp), value(&cold));
            if dm + dn <= 2 {
                // A row and a column, as PSRO adds: a few pivots, not a solve's worth.
                assert!(
                    lp.pivots - before <= cold.pivots,
                    "{m}x{n}: {} vs {}",
                    lp.pivots - before,
                    cold.pivots
                );
            }
        }
    }
}
