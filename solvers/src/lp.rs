//! Nash equilibria of two-player constant-sum games by linear programming.
//!
//! The row player's maxmin problem is solved by a dense simplex method on the classical
//! normalised LP (von Neumann; Dantzig 1951): with the payoffs mapped into `[1, 2]`,
//!
//! ```text
//! maximise 1ᵀu  subject to  A u ≤ 1,  u ≥ 0
//! ```
//!
//! whose optimum is `1/v` (v the value of the normalised game); `y = u·v` is the column
//! player's minimax strategy and the optimal duals `w` give the row player's, `x = w·v`.
//! The simplex works on Tucker's condensed `m × n` tableau (the slack identity is never
//! stored), prices by Dantzig's largest-coefficient rule, switches to Bland's rule on
//! degenerate steps (so it cannot cycle) and uses a Harris two-pass ratio test. Finally the
//! basis is *polished*: the square system of equalising conditions on the optimal supports
//! is re-solved by LU with partial pivoting, which removes the rounding error the pivots
//! accumulated, and the better-certified of the two answers is returned.

pub(crate) mod linalg;

use metagame_games::NormalFormGame;
use ndarray::{Array2, ArrayView2};

use crate::{Certificate, MetaSolver, Result, Solution, SolveError, Status};

/// Zero-sum (constant-sum) two-player Nash equilibrium by linear programming.
///
/// # Complexity
///
/// Each simplex pivot costs O(mn) on an `m × n` game; the number of pivots is in practice a
/// small multiple of `min(m, n)`. Polishing costs O(k³) for supports of size k.
///
/// # References
///
/// - J. von Neumann (1928), zur Theorie der Gesellschaftsspiele; G. B. Dantzig (1951), "A
///   proof of the equivalence of the programming problem and the game problem".
/// - R. G. Bland (1977), "New finite pivoting rules for the simplex method".
/// - P. M. J. Harris (1973), "Pivot selection methods of the Devex LP code".
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, lp::LpNash};
/// use ndarray::array;
///
/// let brps = NormalFormGame::zero_sum(array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]])?;
/// let solved = LpNash::default().solve_zero_sum(&brps)?;
/// assert!((solved.solution.strategies[0][1] - 10.0 / 16.0).abs() < 1e-12);
/// assert!(solved.value.abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LpNash {
    max_pivots: Option<usize>,
}

impl Default for LpNash {
    /// No pivot cap beyond the built-in safeguard of `50 · (m + n) + 1000` pivots.
    fn default() -> Self {
        Self { max_pivots: None }
    }
}

/// An [`LpNash`] answer with the value of the game.
#[derive(Clone, Debug, PartialEq)]
pub struct ZeroSumSolution {
    /// The equilibrium, its status and certificate (with `primal_dual_gap` set).
    pub solution: Solution,
    /// The row player's expected payoff `xᵀAy` under the returned profile (the value of
    /// the game, up to the certificate).
    pub value: f64,
}

impl LpNash {
    /// Tolerance (relative to the payoff scale) for recognising a constant-sum game.
    pub const CONSTANT_SUM_TOLERANCE: f64 = 1e-9;

    /// A solver with the default pivot safeguard.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same solver with at most `max_pivots` simplex pivots (status
    /// [`Status::MaxIterations`] when reached).
    pub fn with_max_pivots(self, max_pivots: usize) -> Self {
        Self { max_pivots: Some(max_pivots) }
    }

    /// Solve and return the game's value for the row player with the equilibrium.
    ///
    /// # Errors
    ///
    /// [`SolveError::Unsupported`] unless the game has two players and constant sum
    /// (within [`LpNash::CONSTANT_SUM_TOLERANCE`] × payoff scale).
    pub fn solve_zero_sum(&self, game: &NormalFormGame) -> Result<ZeroSumSolution> {
        if game.num_players() != 2 {
            return Err(SolveError::Unsupported {
                solver: "lp",
                reason: format!("needs 2 players, the game has {}", game.num_players()),
            });
        }
        if game.constant_sum(Self::CONSTANT_SUM_TOLERANCE * game.payoff_scale()).is_none() {
            return Err(SolveError::Unsupported {
                solver: "lp",
                reason: "the game is not constant-sum; use lemke-howson or an enumeration".into(),
            });
        }
        // INVARIANT: a 2-player game's payoff tensors are matrices.
        let a = game.matrix(0).expect("two players");
        Ok(self.solve_matrix(game, a))
    }

    /// The value of a two-player constant-sum game for the row player.
    ///
    /// # Errors
    ///
    /// As [`LpNash::solve_zero_sum`].
    pub fn value(&self, game: &NormalFormGame) -> Result<f64> {
        Ok(self.solve_zero_sum(game)?.value)
    }

    fn solve_matrix(&self, game: &NormalFormGame, a: ArrayView2<'_, f64>) -> ZeroSumSolution {
        let (m, n) = a.dim();
        let cap = self.max_pivots.unwrap_or(50 * (m + n) + 1000);
        let scaled = linalg::normalized(a);
        let lp = Simplex::solve(&scaled, cap);
        let status = if lp.finished { Status::Solved } else { Status::MaxIterations };
        let raw = lp.profile();
        let mut best = raw.clone();
        let mut best_conv = game.nash_conv(&best);
        if let Some(p) = polish(a, &lp) {
            let conv = game.nash_conv(&p);
            if conv <= best_conv {
                best = p;
                best_conv = conv;
            }
        }
        let _ = best_conv;
        let (value, gap) = value_and_gap(a, &best);
        let mut certificate = Certificate::for_profile(game, &best);
        certificate.primal_dual_gap = Some(gap);
        let solution = Solution {
            strategies: best,
            status,
            certificate,
            iterations: lp.pivots,
            joint: None,
            stationary: Vec::new(),
        };
        ZeroSumSolution { solution, value }
    }
}

impl MetaSolver for LpNash {
    fn name(&self) -> &'static str {
        "lp"
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        Ok(self.solve_zero_sum(game)?.solution)
    }
}

/// `(xᵀAy, max_i (Ay)_i − min_j (xᵀA)_j)`: the profile's value and the gap between the
/// upper bound the column strategy proves and the lower bound the row strategy proves.
fn value_and_gap(a: ArrayView2<'_, f64>, s: &[Vec<f64>]) -> (f64, f64) {
    let x = ndarray::ArrayView1::from(&s[0][..]);
    let y = ndarray::ArrayView1::from(&s[1][..]);
    let ay = a.dot(&y);
    let xa = a.t().dot(&x);
    let value = x.dot(&ay);
    let upper = ay.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lower = xa.iter().copied().fold(f64::INFINITY, f64::min);
    (value, (upper - lower).max(0.0))
}

/// Re-solve the equalising conditions on the supports of the final basis.
fn polish(a: ArrayView2<'_, f64>, lp: &Simplex) -> Option<Vec<Vec<f64>>> {
    let (rows, cols) = lp.supports();
    let (x, y) = linalg::equalize(a, a, &rows, &cols)?;
    let x = linalg::clean_distribution(x, 1e-9)?;
    let y = linalg::clean_distribution(y, 1e-9)?;
    Some(vec![x, y])
}

/// Dense simplex on Tucker's condensed tableau for `max 1ᵀu s.t. A u ≤ 1, u ≥ 0` with
/// `A > 0`. Variables `0..n` are the `u_j`, `n..n+m` the slacks of the rows.
struct Simplex {
    m: usize,
    n: usize,
    /// `m × n` row-major: basic_i = rhs_i − Σ_j t[i,j] · nonbasic_j.
    t: Vec<f64>,
    rhs: Vec<f64>,
    /// Objective: z = z0 + Σ_j cost[j] · nonbasic_j.
    cost: Vec<f64>,
    /// Steepest-edge weights `1 + Σ_i t[i,j]²` of the nonbasic columns.
    norms: Vec<f64>,
    basic: Vec<usize>,
    nonbasic: Vec<usize>,
    pivots: usize,
    finished: bool,
}

impl Simplex {
    const PRICE_TOLERANCE: f64 = 1e-12;
    const PIVOT_TOLERANCE: f64 = 1e-11;
    const HARRIS_TOLERANCE: f64 = 1e-12;

    fn solve(a: &Array2<f64>, cap: usize) -> Self {
        let (m, n) = a.dim();
        let mut s = Self {
            m,
            n,
            t: a.iter().copied().collect(),
            rhs: vec![1.0; m],
            cost: vec![1.0; n],
            norms: (0..n).map(|j| 1.0 + (0..m).map(|i| a[[i, j]] * a[[i, j]]).sum::<f64>()).collect(),
            basic: (n..n + m).collect(),
            nonbasic: (0..n).collect(),
            pivots: 0,
            finished: false,
        };
        s.run(cap);
        s
    }

    fn run(&mut self, cap: usize) {
        let mut bland = false;
        let mut prow = vec![0.0; self.n];
        while self.pivots < cap {
            let Some(s) = self.entering(bland) else {
                self.finished = true;
                return;
            };
            let Some(r) = self.leaving(s, bland) else {
                // Unbounded cannot happen with A > 0; treat as finished (defensive).
                self.finished = true;
                return;
            };
            let step = self.rhs[r] / self.t[r * self.n + s];
            bland = step <= 1e-14;
            self.pivot(r, s, &mut prow);
        }
    }

    fn entering(&self, bland: bool) -> Option<usize> {
        if bland {
            (0..self.n).filter(|&j| self.cost[j] > Self::PRICE_TOLERANCE).min_by_key(|&j| self.nonbasic[j])
        } else {
            // Steepest edge: the largest reduced cost per unit length of the edge.
            let mut best: Option<(usize, f64)> = None;
            for (j, (&c, &w)) in self.cost.iter().zip(&self.norms).enumerate() {
                if c > Self::PRICE_TOLERANCE {
                    let score = c * c / w;
                    if best.is_none_or(|(_, b)| score > b) {
                        best = Some((j, score));
                    }
                }
            }
            best.map(|b| b.0)
        }
    }

    fn leaving(&self, s: usize, bland: bool) -> Option<usize> {
        let n = self.n;
        let col = |i: usize| self.t[i * n + s];
        if bland {
            let mut best: Option<(usize, f64)> = None;
            for i in 0..self.m {
                let p = col(i);
                if p > Self::PIVOT_TOLERANCE {
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
            if p > Self::PIVOT_TOLERANCE {
                bound = bound.min((self.rhs[i].max(0.0) + Self::HARRIS_TOLERANCE) / p);
            }
        }
        if !bound.is_finite() {
            return None;
        }
        let mut best: Option<(usize, f64)> = None;
        for i in 0..self.m {
            let p = col(i);
            if p > Self::PIVOT_TOLERANCE
                && self.rhs[i].max(0.0) / p <= bound
                && best.is_none_or(|(_, bp)| p > bp)
            {
                best = Some((i, p));
            }
        }
        best.map(|b| b.0)
    }

    fn pivot(&mut self, r: usize, s: usize, prow: &mut [f64]) {
        let n = self.n;
        let p = self.t[r * n + s];
        let inv = 1.0 / p;
        prow.copy_from_slice(&self.t[r * n..(r + 1) * n]);
        for v in prow.iter_mut() {
            *v *= inv;
        }
        prow[s] = 0.0;
        let br = self.rhs[r] * inv;
        // The new pivot row's own contribution to the steepest-edge weights.
        for (w, &q) in self.norms.iter_mut().zip(prow.iter()) {
            *w = 1.0 + q * q;
        }
        self.norms[s] = 1.0 + inv * inv;
        for (i, row) in self.t.chunks_exact_mut(n).enumerate() {
            if i == r {
                continue;
            }
            let f = row[s];
            if f != 0.0 {
                for ((v, &q), w) in row.iter_mut().zip(prow.iter()).zip(self.norms.iter_mut()) {
                    *v -= f * q;
                    *w += *v * *v;
                }
                row[s] = -f * inv;
                self.norms[s] += row[s] * row[s] - f * f;
                self.rhs[i] -= f * br;
            } else {
                for (&v, w) in row.iter().zip(self.norms.iter_mut()) {
                    *w += v * v;
                }
            }
        }
        let f = self.cost[s];
        for (c, &q) in self.cost.iter_mut().zip(prow.iter()) {
            *c -= f * q;
        }
        self.cost[s] = -f * inv;
        prow[s] = inv;
        self.t[r * n..(r + 1) * n].copy_from_slice(prow);
        self.rhs[r] = br;
        std::mem::swap(&mut self.basic[r], &mut self.nonbasic[s]);
        self.pivots += 1;
    }

    /// Tight rows (slack nonbasic) and basic columns (u_j basic): equal in number.
    fn supports(&self) -> (Vec<usize>, Vec<usize>) {
        let mut rows: Vec<usize> =
            self.nonbasic.iter().filter(|&&v| v >= self.n).map(|&v| v - self.n).collect();
        let mut cols: Vec<usize> = self.basic.iter().filter(|&&v| v < self.n).copied().collect();
        rows.sort_unstable();
        cols.sort_unstable();
        (rows, cols)
    }

    /// The raw profile read off the tableau: primal u (columns) and duals w (rows).
    fn profile(&self) -> Vec<Vec<f64>> {
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
        let normalize = |mut s: Vec<f64>| {
            let total: f64 = s.iter().sum();
            if total > 0.0 {
                s.iter_mut().for_each(|v| *v /= total);
            } else {
                let k = s.len() as f64;
                s.iter_mut().for_each(|v| *v = 1.0 / k);
            }
            s
        };
        vec![normalize(x), normalize(y)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn lp(a: Array2<f64>) -> ZeroSumSolution {
        LpNash::default().solve_zero_sum(&NormalFormGame::zero_sum(a).unwrap()).unwrap()
    }

    #[test]
    fn rock_paper_scissors_is_uniform() {
        let s = lp(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]);
        for p in &s.solution.strategies {
            for &v in p {
                assert!((v - 1.0 / 3.0).abs() < 1e-14);
            }
        }
        assert!(s.value.abs() < 1e-14);
        assert_eq!(s.solution.status, Status::Solved);
        assert!(s.solution.certificate.primal_dual_gap.unwrap() < 1e-14);
    }

    #[test]
    fn pure_saddle_point_and_dominance() {
        let s = lp(array![[3., 5.], [1., 4.]]);
        assert_eq!(s.solution.strategies, vec![vec![1.0, 0.0], vec![1.0, 0.0]]);
        assert_eq!(s.value, 3.0);
    }

    #[test]
    fn rectangular_and_constant_games() {
        let s = lp(array![[1., 2., 3.]]);
        assert_eq!(s.value, 1.0);
        let s = lp(array![[2., 2.], [2., 2.]]);
        assert_eq!(s.value, 2.0);
        assert!(s.solution.certificate.nash_conv == 0.0);
    }

    #[test]
    fn refuses_general_sum_and_three_players() {
        let bos = NormalFormGame::bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]]).unwrap();
        assert!(matches!(LpNash::default().solve(&bos), Err(SolveError::Unsupported { .. })));
        let three = NormalFormGame::new(vec![ndarray::ArrayD::zeros(vec![2, 2, 2]); 3]).unwrap();
        assert!(matches!(LpNash::default().solve(&three), Err(SolveError::Unsupported { .. })));
    }

    #[test]
    fn pivot_cap_is_a_status() {
        let a = Array2::from_shape_fn((6, 6), |(i, j)| ((i * 7 + j * 3) % 5) as f64);
        let s = LpNash::default().with_max_pivots(1).solve(&NormalFormGame::zero_sum(a).unwrap()).unwrap();
        assert_eq!(s.status, Status::MaxIterations);
        assert!(s.is_distribution(1e-12));
    }
}
