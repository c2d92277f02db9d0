//! Warm starts: the simplex method restarted from the optimal basis of a smaller problem.
//!
//! When rows and columns are added to a problem whose optimal basis is known, that basis
//! (the old basic columns, the old tight rows; the new rows' slacks basic, the new columns
//! nonbasic) stays dual feasible on the old columns and primal feasible on the old rows.
//! Dual simplex pivots that only let in dual-feasible columns repair the new rows, then
//! primal pivots bring in the new columns that price out (Chvátal 1983, ch. 10; Koberstein
//! 2005, §3). The basis is refactorised from the data first, so a basis from a differently
//! normalised problem (an affine change of the payoffs keeps the same basis optimal) is fine.

use super::{Simplex, SimplexEnd};

impl Simplex<'_> {
    /// Run the clean-up passes from the basis whose basic structural columns are `columns`
    /// and whose tight rows (slacks nonbasic) are `rows` (indices of this problem); the
    /// dual passes let in dual-feasible columns only. `observe` and the result are as for
    /// [`Simplex::solve`]; [`SimplexEnd::Stalled`] when the basis could not be repaired
    /// (the caller solves cold instead).
    pub(crate) fn solve_from_basis(
        &mut self,
        columns: &[usize],
        rows: &[usize],
        cap: usize,
        cleanup_pivot_tolerance: f64,
        mut observe: impl FnMut(&Self),
    ) -> SimplexEnd {
        let n = self.n;
        // `refactor` reads the basic columns from `basic` and the tight rows from `nonbasic`.
        self.basic = columns.iter().copied().filter(|&j| j < n).collect();
        self.nonbasic = rows.iter().filter(|&&i| i < self.m).map(|&i| n + i).collect();
        self.refactor(&vec![1.0; self.m]);
        // The basis may already be optimal: the clean-up then returns before observing.
        observe(self);
        self.dual_feasible_only = true;
        let end = self.clean_up(cap, cleanup_pivot_tolerance, &mut observe);
        self.dual_feasible_only = false;
        end
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, array};

    /// The optimal basis of the leading block, then the whole problem from it.
    fn grown(a: &Array2<f64>, k: usize) -> (Vec<usize>, Vec<usize>) {
        let block = Array2::from_shape_fn((k, k), |(i, j)| a[[i, j]]);
        let mut lp = Simplex::new(&block);
        assert_eq!(lp.solve(10_000, 1e-9, |_| {}), SimplexEnd::Optimal);
        let (rows, columns) = lp.supports();
        (columns, rows)
    }

    #[test]
    fn a_grown_problem_restarts_from_the_old_basis_and_reaches_the_cold_optimum() {
        // Rock-paper-scissors shifted into [1, 2] with a fourth strategy that beats paper.
        let a =
            array![[1.5, 1.0, 2.0, 1.2], [2.0, 1.5, 1.0, 1.9], [1.0, 2.0, 1.5, 1.1], [1.7, 1.1, 1.8, 1.5]];
        let (columns, rows) = grown(&a, 3);
        let mut warm = Simplex::new(&a);
        let end = warm.solve_from_basis(&columns, &rows, 10_000, 1e-9, |_| {});
        assert_eq!(end, SimplexEnd::Optimal);
        let mut cold = Simplex::new(&a);
        assert_eq!(cold.solve(10_000, 1e-9, |_| {}), SimplexEnd::Optimal);
        let value = |lp: &Simplex<'_>| {
            lp.rhs.iter().zip(&lp.basic).filter(|(_, v)| **v < 4).map(|(r, _)| r).sum::<f64>()
        };
        assert!((value(&warm) - value(&cold)).abs() < 1e-12, "{} vs {}", value(&warm), value(&cold));
        // Fewer pivots than from the slack basis.
        assert!(warm.pivots < cold.pivots, "warm {} cold {}", warm.pivots, cold.pivots);
    }
}
