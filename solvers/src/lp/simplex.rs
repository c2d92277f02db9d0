//! The dense simplex method behind [`crate::lp::LpNash`], on Tucker's condensed tableau of
//!
//! ```text
//! maximise 1ᵀu  subject to  A u ≤ b,  u ≥ 0          (A > 0, b = 1)
//! ```
//!
//! Variables `0..n` are the `u_j`, `n..n+m` the slacks of the rows; the slack basis is
//! feasible, so there is no phase one. What keeps it going on degenerate meta-games (many
//! near-duplicate rows and columns, a payoff matrix of low numerical rank):
//!
//! - **Bound perturbation.** The first pass solves the problem with `b_i = 1 + ε_i`, small
//!   distinct `ε_i`, so vertices are (generically) nondegenerate and every pivot makes
//!   progress. The perturbation is then removed: the basis is recomputed from the original
//!   data with `b = 1`, and the few rows it leaves infeasible are repaired by dual simplex
//!   pivots (the reduced costs do not depend on `b`, so the basis stays dual feasible).
//! - **Harris's two-pass ratio test** with a relative pivot tolerance: among the rows whose
//!   ratio is within the feasibility tolerance of the minimum, the largest pivot wins; rows
//!   pushed slightly below zero are shifted back to zero.
//! - **Refactorisation.** Every [`Simplex::REFACTOR_PERIOD`] pivots the tableau's basic
//!   solution and reduced costs are checked against the original matrix, and when they have
//!   drifted (or whenever the tableau looks damaged: a basic variable clearly negative), the
//!   tableau is rebuilt from the original matrix for the current basis (Gauss–Jordan with
//!   partial pivoting among the basis's rows), so rounding error cannot accumulate over
//!   thousands of pivots. A rebuild costs as many full-tableau pivots as the basis has
//!   columns; the check costs two matrix–vector products, so well-conditioned games skip
//!   most rebuilds.
//! - **Dense kernels.** The elimination of every pivot (and the steepest-edge weights) runs
//!   under the crate's SIMD dispatch ([`crate::linalg::Eliminate`]), with the same bits on
//!   every CPU; the rebuild's pivots skip the weights and sum them once at the end.
//! - **Bland's rule** after a run of degenerate pivots in the unperturbed passes, so the
//!   method cannot cycle.

use ndarray::Array2;

use crate::linalg::{Eliminate, Weights};
use crate::solver_memory::TableauState;

mod grow;

/// How a [`Simplex::solve`] ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum SimplexEnd {
    /// Primal and dual feasible for `b = 1` within the tolerances, after a refactorisation.
    Optimal,
    /// The pivot cap was reached first.
    PivotCap,
    /// The clean-up rounds did not reach a basis that is optimal within the tolerances.
    Stalled,
}

/// A dense simplex on the condensed tableau; see the module docs.
pub(crate) struct Simplex {
    /// The problem's matrix (positive entries).
    a: Array2<f64>,
    m: usize,
    n: usize,
    /// `m × n` row-major: basic_r = rhs_r − Σ_s t[r,s] · nonbasic_s.
    t: Vec<f64>,
    rhs: Vec<f64>,
    /// Objective: z = z0 + Σ_s cost[s] · nonbasic_s; optimal when every cost ≤ 0.
    cost: Vec<f64>,
    /// Steepest-edge weights `1 + Σ_r t[r,s]²` of the nonbasic columns.
    norms: Vec<f64>,
    basic: Vec<usize>,
    nonbasic: Vec<usize>,
    /// Reused buffer for the pivot row.
    prow: Vec<f64>,
    /// The widest SIMD instruction set of the CPU, for the pivot's elimination.
    arch: pulp::Arch,
    /// Pivots so far (refactorisation pivots not counted).
    pub(crate) pivots: usize,
    /// Pivots since the last refactorisation.
    since_refactor: usize,
    /// Entering columns need a reduced cost above this.
    price_tolerance: f64,
    /// Basic variables may be this far below zero (Harris's relaxation).
    feasibility_tolerance: f64,
    /// Pivots smaller than this relative to the largest candidate in their column (row, in
    /// the dual ratio test) are refused.
    relative_pivot_tolerance: f64,
    /// Pivots smaller than this in absolute value are refused.
    absolute_pivot_tolerance: f64,
    /// The dual ratio test considers only dual-feasible columns (a warm start's).
    dual_feasible_only: bool,
}

impl Simplex {
    /// Price tolerance of the perturbed pass.
    const PRICE_TOLERANCE: f64 = 1e-11;
    /// Feasibility tolerance of the perturbed pass.
    const FEASIBILITY_TOLERANCE: f64 = 1e-10;
    /// Relative pivot tolerance of the perturbed pass.
    const RELATIVE_PIVOT_TOLERANCE: f64 = 1e-7;
    /// Absolute pivot tolerance of the perturbed pass.
    const ABSOLUTE_PIVOT_TOLERANCE: f64 = 1e-10;
    /// Price and feasibility tolerance of the clean-up passes on the unperturbed problem.
    const FINAL_TOLERANCE: f64 = 1e-13;
    /// Absolute pivot tolerance of the clean-up passes.
    const FINAL_ABSOLUTE_PIVOT_TOLERANCE: f64 = 1e-14;
    /// A basic variable below this means the tableau has lost accuracy: refactorise.
    const DAMAGE_TOLERANCE: f64 = 1e-7;
    /// Size of the bound perturbation: `ε_i ∈ [PERTURBATION, 2·PERTURBATION)`.
    const PERTURBATION: f64 = 1e-7;
    /// Pivots between checks of the tableau against the original data (see
    /// [`Simplex::refactor_due`]).
    const REFACTOR_PERIOD: usize = 100;
    /// Degenerate pivots in a row before the unperturbed passes switch to Bland's rule.
    const DEGENERATE_STREAK: usize = 20;
    /// Primal/dual clean-up rounds after the perturbed pass.
    const CLEANUP_ROUNDS: usize = 8;

    /// The slack basis of `max 1ᵀu, A u ≤ 1, u ≥ 0` for a positive matrix `a`.
    pub(crate) fn new(a: Array2<f64>) -> Self {
        let (m, n) = a.dim();
        let mut s = Self {
            a,
            m,
            n,
            t: Vec::new(),
            rhs: Vec::new(),
            cost: Vec::new(),
            norms: Vec::new(),
            basic: Vec::new(),
            nonbasic: Vec::new(),
            prow: vec![0.0; n],
            arch: pulp::Arch::new(),
            pivots: 0,
            since_refactor: 0,
            price_tolerance: Self::PRICE_TOLERANCE,
            feasibility_tolerance: Self::FEASIBILITY_TOLERANCE,
            relative_pivot_tolerance: Self::RELATIVE_PIVOT_TOLERANCE,
            absolute_pivot_tolerance: Self::ABSOLUTE_PIVOT_TOLERANCE,
            dual_feasible_only: false,
        };
        s.reset(&vec![1.0; m]);
        s
    }

    /// Back to the slack basis with right-hand side `b`.
    fn reset(&mut self, b: &[f64]) {
        let (m, n) = (self.m, self.n);
        self.t.clear();
        self.t.extend(self.a.iter().copied());
        self.rhs.clear();
        self.rhs.extend_from_slice(b);
        self.cost.clear();
        self.cost.resize(n, 1.0);
        self.norms.clear();
        self.norms.resize(n, 0.0);
        Weights { t: &self.t, width: n, norms: &mut self.norms }.run(self.arch);
        self.basic.clear();
        self.basic.extend(n..n + m);
        self.nonbasic.clear();
        self.nonbasic.extend(0..n);
    }

    /// Run to an optimal basis of the unperturbed problem (or the cap of `cap` pivots); see
    /// the module docs. `observe` sees the refactorised tableau after the perturbed pass and
    /// after every clean-up round (the caller keeps the best-certified of these bases). `cleanup_pivot_tolerance` is the relative pivot tolerance of the
    /// clean-up passes: smaller resolves finer differences between near-duplicate
    /// strategies, at the price of pivots on smaller elements.
    pub(crate) fn solve(
        &mut self,
        cap: usize,
        cleanup_pivot_tolerance: f64,
        mut observe: impl FnMut(&Self),
    ) -> SimplexEnd {
        let ones = vec![1.0; self.m];
        let perturbed: Vec<f64> =
            (0..self.m).map(|i| 1.0 + Self::PERTURBATION * (1.0 + unit_hash(i as u64))).collect();
        self.rhs.copy_from_slice(&perturbed);
        let finished = self.primal(cap, &perturbed, false);
        self.refactor(&ones);
        observe(self);
        if !finished {
            return SimplexEnd::PivotCap;
        }
        self.clean_up(cap, cleanup_pivot_tolerance, observe)
    }

    /// The clean-up rounds on the unperturbed problem from the current basis: dual then
    /// primal pivots, a refactorisation and an observation each, until optimal.
    fn clean_up(
        &mut self,
        cap: usize,
        cleanup_pivot_tolerance: f64,
        mut observe: impl FnMut(&Self),
    ) -> SimplexEnd {
        let ones = vec![1.0; self.m];
        self.price_tolerance = Self::FINAL_TOLERANCE;
        self.feasibility_tolerance = Self::FINAL_TOLERANCE;
        self.relative_pivot_tolerance = cleanup_pivot_tolerance;
        self.absolute_pivot_tolerance = Self::FINAL_ABSOLUTE_PIVOT_TOLERANCE;
        for round in 0..Self::CLEANUP_ROUNDS {
            if self.is_optimal() {
                return SimplexEnd::Optimal;
            }
            // Later rounds price by Bland's rule from the start: the earlier ones went round.
            let bland = round > 0;
            let finished = self.dual(cap, &ones) && self.primal(cap, &ones, bland);
            self.refactor(&ones);
            observe(self);
            if !finished {
                return if self.pivots >= cap { SimplexEnd::PivotCap } else { SimplexEnd::Stalled };
            }
        }
        if self.is_optimal() { SimplexEnd::Optimal } else { SimplexEnd::Stalled }
    }

    fn is_optimal(&self) -> bool {
        self.cost.iter().all(|&c| c <= self.price_tolerance)
            && self.rhs.iter().all(|&r| r >= -self.feasibility_tolerance)
    }

    /// Primal simplex pivots until no column prices out (`true`) or the cap (`false`).
    /// `bland`: start with Bland's rule instead of waiting for a degenerate streak.
    fn primal(&mut self, cap: usize, b: &[f64], bland: bool) -> bool {
        let mut streak = if bland { Self::DEGENERATE_STREAK } else { 0 };
        loop {
            if self.pivots >= cap {
                return false;
            }
            if self.damaged() || self.refactor_due(b) {
                self.refactor(b);
            }
            let use_bland = streak >= Self::DEGENERATE_STREAK;
            let Some(s) = self.entering(use_bland) else { return true };
            let Some(r) = self.leaving(s, use_bland) else {
                // No positive pivot: cannot happen for A > 0 (the LP is bounded) unless the
                // column is numerical noise; drop it from pricing by refactorising once.
                if self.since_refactor == 0 {
                    return true;
                }
                self.refactor(b);
                continue;
            };
            if self.rhs[r] < 0.0 {
                self.rhs[r] = 0.0;
            }
            let step = self.rhs[r] / self.t[r * self.n + s];
            streak = if step <= 1e-13 { streak + 1 } else { 0 };
            self.pivot(r, s);
        }
    }

    /// Dual simplex pivots until every basic variable is feasible (`true`) or the cap.
    fn dual(&mut self, cap: usize, b: &[f64]) -> bool {
        loop {
            if self.pivots >= cap {
                return false;
            }
            if self.refactor_due(b) {
                self.refactor(b);
            }
            // Leaving: the most infeasible row, per unit length of its tableau row (dual
            // steepest edge) in a warm start's pass, where the most infeasible row alone
            // takes hundreds of pivots on PSRO's meta-games.
            let leaving = if self.dual_feasible_only {
                let n = self.n;
                self.rhs
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| **v < -self.feasibility_tolerance)
                    .map(|(r, &v)| {
                        let row = &self.t[r * n..(r + 1) * n];
                        (r, v * v / (1.0 + crate::linalg::dot(row, row)))
                    })
                    .max_by(|x, y| x.1.total_cmp(&y.1))
            } else {
                self.rhs
                    .iter()
                    .enumerate()
                    .filter(|(_, v)| **v < -self.feasibility_tolerance)
                    .min_by(|x, y| x.1.total_cmp(y.1))
                    .map(|(r, &v)| (r, v))
            };
            let Some((r, _)) = leaving else {
                return true;
            };
            let Some(s) = self.dual_entering(r) else {
                // No negative entry: the row cannot be repaired by this basis (the problem is
                // feasible, so this is rounding); stop and let the primal pass continue. A
                // warm start's basis may simply be too far off: it gives up (`false`).
                return !self.dual_feasible_only;
            };
            self.pivot(r, s);
        }
    }

    /// Every [`Simplex::REFACTOR_PERIOD`] pivots: true when the tableau's basic solution or
    /// reduced costs have drifted from the original data by more than a tenth of the price
    /// and feasibility tolerances of the pass (`1e-12` in the perturbed pass, `1e-14` in the
    /// clean-up); otherwise the count starts again without the refactorisation, which
    /// costs as many full-tableau pivots as the basis has columns.
    fn refactor_due(&mut self, b: &[f64]) -> bool {
        if self.since_refactor < Self::REFACTOR_PERIOD {
            return false;
        }
        let drift = self.drift(b);
        if drift <= 0.1 * self.price_tolerance.min(self.feasibility_tolerance) {
            self.since_refactor = 0;
            return false;
        }
        true
    }

    /// The largest residual of the tableau's basic solution (`A u + slack = b`) and of its
    /// reduced costs (`1 − wᵀA_j` for every column, `w` the row duals), computed from the
    /// original matrix.
    ///
    /// # Complexity
    ///
    /// O(m·k + k·n) for k basic columns of `u`.
    fn drift(&self, b: &[f64]) -> f64 {
        let (m, n, a) = (self.m, self.n, &self.a);
        // Primal: the u_j (zero when nonbasic) and the basic slacks.
        let mut u = vec![0.0; n];
        let mut slack = vec![0.0; m];
        for (&v, &value) in self.basic.iter().zip(&self.rhs) {
            if v < n {
                u[v] = value;
            } else {
                slack[v - n] = value;
            }
        }
        let rows = a.dot(&ndarray::ArrayView1::from(&u[..]));
        let mut worst = 0.0_f64;
        for ((sum, s), &bi) in rows.iter().zip(&slack).zip(b) {
            worst = worst.max((sum + s - bi).abs());
        }
        // Dual: the row duals w (minus the reduced costs of the nonbasic slacks).
        let mut w = vec![0.0; m];
        for (&v, &c) in self.nonbasic.iter().zip(&self.cost) {
            if v >= n {
                w[v - n] = -c;
            }
        }
        let mut reduced =
            ndarray::Array1::from(metagame_games::transposed_product(a.view(), &w)).mapv(|x| 1.0 - x);
        for (&v, &c) in self.nonbasic.iter().zip(&self.cost) {
            if v < n {
                reduced[v] -= c;
            }
        }
        reduced.iter().fold(worst, |acc, &d| acc.max(d.abs()))
    }

    /// A basic variable far below zero: the tableau is no longer trustworthy.
    fn damaged(&self) -> bool {
        self.rhs.iter().any(|&r| r < -Self::DAMAGE_TOLERANCE)
    }

    fn entering(&self, bland: bool) -> Option<usize> {
        if bland {
            return (0..self.n)
                .filter(|&j| self.cost[j] > self.price_tolerance)
                .min_by_key(|&j| self.nonbasic[j]);
        }
        // Steepest edge: the largest reduced cost per unit length of the edge.
        let mut best: Option<(usize, f64)> = None;
        for (j, (&c, &w)) in self.cost.iter().zip(&self.norms).enumerate() {
            if c > self.price_tolerance {
                let score = c * c / w;
                if best.is_none_or(|(_, b)| score > b) {
                    best = Some((j, score));
                }
            }
        }
        best.map(|b| b.0)
    }

    fn leaving(&self, s: usize, bland: bool) -> Option<usize> {
        let n = self.n;
        let col = |i: usize| self.t[i * n + s];
        let largest = (0..self.m).map(col).fold(0.0_f64, f64::max);
        let tiny = (self.relative_pivot_tolerance * largest).max(self.absolute_pivot_tolerance);
        if bland {
            let mut best: Option<(usize, f64)> = None;
            for i in 0..self.m {
                let p = col(i);
                if p > tiny {
                    let ratio = self.rhs[i].max(0.0) / p;
                    best = match best {
                        Some((bi, br)) if br < ratio || (br == ratio && self.basic[bi] < self.basic[i]) => {
                            Some((bi, br))
                        }
                        _ => Some((i, ratio)),
                    };
                }
            }
            return best.map(|b| b.0);
        }
        // Harris: the largest pivot among rows whose ratio is within the relaxed minimum.
        let mut bound = f64::INFINITY;
        for i in 0..self.m {
            let p = col(i);
            if p > tiny {
                bound = bound.min((self.rhs[i] + self.feasibility_tolerance).max(0.0) / p);
            }
        }
        if !bound.is_finite() {
            return None;
        }
        let mut best: Option<(usize, f64)> = None;
        for i in 0..self.m {
            let p = col(i);
            if p > tiny && self.rhs[i].max(0.0) / p <= bound && best.is_none_or(|(_, bp)| p > bp) {
                best = Some((i, p));
            }
        }
        best.map(|b| b.0)
    }

    /// Dual ratio test on row `r` (Harris two-pass): the entering column keeps every reduced
    /// cost ≤ 0 up to the tolerance.
    fn dual_entering(&self, r: usize) -> Option<usize> {
        let row = &self.t[r * self.n..(r + 1) * self.n];
        let largest = row.iter().fold(0.0_f64, |acc, &v| acc.max(-v));
        let tiny = (self.relative_pivot_tolerance * largest).max(self.absolute_pivot_tolerance);
        let mut bound = f64::INFINITY;
        // A warm start's dual pass leaves the columns that price out to the primal pass.
        let eligible = |c: f64| !self.dual_feasible_only || c <= self.price_tolerance;
        for (&p, &c) in row.iter().zip(&self.cost) {
            if p < -tiny && eligible(c) {
                bound = bound.min(((-c).max(0.0) + self.price_tolerance) / -p);
            }
        }
        if !bound.is_finite() {
            return None;
        }
        let mut best: Option<(usize, f64)> = None;
        for (s, (&p, &c)) in row.iter().zip(&self.cost).enumerate() {
            if p < -tiny && eligible(c) && (-c).max(0.0) / -p <= bound && best.is_none_or(|(_, bp)| -p > bp) {
                best = Some((s, -p));
            }
        }
        best.map(|b| b.0)
    }

    /// Rebuild the tableau for the current basis from the original matrix with right-hand
    /// side `b`: back to the slack basis, then pivot each basic column in on the row (among
    /// the rows whose slack is nonbasic) where it is largest. Columns that no longer fit
    /// (numerically dependent on the others) stay out.
    fn refactor(&mut self, b: &[f64]) {
        let n = self.n;
        let mut columns: Vec<usize> = self.basic.iter().copied().filter(|&v| v < n).collect();
        let mut tight = vec![false; self.m];
        for &v in &self.nonbasic {
            if v >= n {
                tight[v - n] = true;
            }
        }
        columns.sort_unstable();
        self.reset(b);
        let mut pivoted = false;
        for j in columns {
            // In the slack basis, row i holds slack i until it is pivoted on; column j is at
            // nonbasic position j until it enters.
            let mut best: Option<(usize, f64)> = None;
            for (i, _) in tight.iter().enumerate().filter(|(_, t)| **t) {
                if self.basic[i] == n + i {
                    let v = self.t[i * n + j].abs();
                    if best.is_none_or(|(_, bv)| v > bv) {
                        best = Some((i, v));
                    }
                }
            }
            let largest = (0..self.m).map(|i| self.t[i * n + j].abs()).fold(0.0_f64, f64::max);
            if let Some((i, v)) = best
                && v > 1e-11 * largest.max(1.0)
            {
                self.pivot_raw(i, j, false);
                pivoted = true;
            }
        }
        if pivoted {
            Weights { t: &self.t, width: n, norms: &mut self.norms }.run(self.arch);
        }
        self.since_refactor = 0;
    }

    fn pivot(&mut self, r: usize, s: usize) {
        self.pivot_raw(r, s, true);
        self.pivots += 1;
        self.since_refactor += 1;
    }

    /// The condensed-tableau pivot on (`r`, `s`); with `weights`, the steepest-edge weights
    /// are recomputed for the new tableau (the refactorisation's pivots skip them and sum
    /// them once at the end).
    fn pivot_raw(&mut self, r: usize, s: usize, weights: bool) {
        let n = self.n;
        let p = self.t[r * n + s];
        let inv = 1.0 / p;
        let prow = &mut self.prow;
        prow.copy_from_slice(&self.t[r * n..(r + 1) * n]);
        for v in prow.iter_mut() {
            *v *= inv;
        }
        prow[s] = 0.0;
        let br = self.rhs[r] * inv;
        let norms = if weights {
            // The new pivot row's own contribution to the steepest-edge weights.
            for (w, &q) in self.norms.iter_mut().zip(prow.iter()) {
                *w = 1.0 + q * q;
            }
            self.norms[s] = 1.0 + inv * inv;
            Some(&mut self.norms[..])
        } else {
            None
        };
        Eliminate { t: &mut self.t, width: n, r, s, prow: &prow[..], inv, rhs: &mut self.rhs, br, norms }
            .run(self.arch);
        let f = self.cost[s];
        for (c, &q) in self.cost.iter_mut().zip(prow.iter()) {
            *c -= f * q;
        }
        self.cost[s] = -f * inv;
        prow[s] = inv;
        self.t[r * n..(r + 1) * n].copy_from_slice(prow);
        self.rhs[r] = br;
        std::mem::swap(&mut self.basic[r], &mut self.nonbasic[s]);
    }

    /// The problem's matrix.
    pub(crate) fn matrix(&self) -> &Array2<f64> {
        &self.a
    }

    /// Tight rows (slack nonbasic) and basic columns (u_j basic), sorted.
    pub(crate) fn supports(&self) -> (Vec<usize>, Vec<usize>) {
        let mut rows: Vec<usize> =
            self.nonbasic.iter().filter(|&&v| v >= self.n).map(|&v| v - self.n).collect();
        let mut cols: Vec<usize> = self.basic.iter().filter(|&&v| v < self.n).copied().collect();
        rows.sort_unstable();
        cols.sort_unstable();
        (rows, cols)
    }

    /// The profile read off the tableau: primal u (columns) and duals w (rows), normalised.
    pub(crate) fn profile(&self) -> Vec<Vec<f64>> {
        let mut y = vec![0.0; self.n];
        for (i, &v) in self.basic.iter().enumerate() {
            if v < self.n {
                y[v] = self.rhs[i].max(0.0);
            }
        }
        let mut x = vec![0.0; self.m];
        for (j, &v) in self.nonbasic.iter().enumerate() {
            if v >= self.n {
                x[v - self.n] = (-self.cost[j]).max(0.0);
            }
        }
        vec![normalize(x), normalize(y)]
    }
}

impl Simplex {
    /// The tableau without its matrix.
    pub(crate) fn state(&self) -> TableauState {
        TableauState {
            t: self.t.clone(),
            rhs: self.rhs.clone(),
            cost: self.cost.clone(),
            norms: self.norms.clone(),
            basic: self.basic.clone(),
            nonbasic: self.nonbasic.clone(),
            pivots: self.pivots,
            since_refactor: self.since_refactor,
            tolerances: [
                self.price_tolerance,
                self.feasibility_tolerance,
                self.relative_pivot_tolerance,
                self.absolute_pivot_tolerance,
            ],
            dual_feasible_only: self.dual_feasible_only,
        }
    }

    /// The tableau of `state` on the matrix `a` it was saved with; `None` when the two do not
    /// fit (sizes, or a basis that is not a partition of the variables, or a value that is
    /// not finite).
    pub(crate) fn from_state(a: Array2<f64>, state: TableauState) -> Option<Self> {
        let (m, n) = a.dim();
        let TableauState {
            t,
            rhs,
            cost,
            norms,
            basic,
            nonbasic,
            pivots,
            since_refactor,
            tolerances,
            dual_feasible_only,
        } = state;
        let mut seen = vec![false; m + n];
        let partition = basic.len() == m
            && nonbasic.len() == n
            && basic.iter().chain(&nonbasic).all(|&v| v < m + n && !std::mem::replace(&mut seen[v], true));
        let finite =
            t.iter().chain(&rhs).chain(&cost).chain(&norms).chain(&tolerances).all(|x| x.is_finite());
        if !(partition && finite && t.len() == m * n && rhs.len() == m && cost.len() == n && norms.len() == n)
        {
            return None;
        }
        let [price_tolerance, feasibility_tolerance, relative_pivot_tolerance, absolute_pivot_tolerance] =
            tolerances;
        Some(Self {
            a,
            m,
            n,
            t,
            rhs,
            cost,
            norms,
            basic,
            nonbasic,
            prow: vec![0.0; n],
            arch: pulp::Arch::new(),
            pivots,
            since_refactor,
            price_tolerance,
            feasibility_tolerance,
            relative_pivot_tolerance,
            absolute_pivot_tolerance,
            dual_feasible_only,
        })
    }
}

/// `s / Σ s`, or uniform when the sum is not positive.
fn normalize(mut s: Vec<f64>) -> Vec<f64> {
    let total: f64 = s.iter().sum();
    if total > 0.0 {
        s.iter_mut().for_each(|v| *v /= total);
    } else {
        let k = s.len() as f64;
        s.iter_mut().for_each(|v| *v = 1.0 / k);
    }
    s
}

/// A deterministic number in `[0, 1)` from `i` (splitmix64's finaliser).
fn unit_hash(i: u64) -> f64 {
    let mut z = i.wrapping_add(1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 11) as f64 / (1u64 << 53) as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The drift check reads the tableau against the original data: an accurate tableau
    /// skips the rebuild, a damaged right-hand side or reduced cost calls for it.
    #[test]
    fn refactorisation_is_due_only_when_the_tableau_has_drifted() {
        let k = 30;
        let a = Array2::from_shape_fn((k, k), |(i, j)| 1.0 + unit_hash((i * k + j) as u64));
        let ones = vec![1.0; k];
        let mut lp = Simplex::new(a.clone());
        lp.primal(20, &ones, false);
        assert_eq!(lp.pivots, 20);
        assert!(lp.drift(&ones) < 1e-14, "{:e}", lp.drift(&ones));
        lp.since_refactor = Simplex::REFACTOR_PERIOD;
        assert!(!lp.refactor_due(&ones));
        assert_eq!(lp.since_refactor, 0);
        let basic = lp.basic.iter().position(|&v| v < k).expect("a column entered");
        lp.rhs[basic] += 1e-9;
        lp.since_refactor = Simplex::REFACTOR_PERIOD;
        assert!(lp.refactor_due(&ones));
        lp.refactor(&ones);
        assert!(lp.drift(&ones) < 1e-14);
        let slack = lp.nonbasic.iter().position(|&v| v >= k).expect("a row is tight");
        lp.cost[slack] -= 1e-9;
        lp.since_refactor = Simplex::REFACTOR_PERIOD;
        assert!(lp.refactor_due(&ones));
        // Before the period is up the check is not even made.
        lp.since_refactor = Simplex::REFACTOR_PERIOD - 1;
        assert!(!lp.refactor_due(&ones));
    }
}
