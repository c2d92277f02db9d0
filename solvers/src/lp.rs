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
//!
//! The meta-games long PSRO runs make are degenerate: hundreds of near-duplicate strategies,
//! payoff matrices of low numerical rank, differences near 1e-15 beside payoffs near ±5. The
//! answer is built to hold there, in stages, each checked by the certificate computed from
//! the game (never from the method's own bookkeeping):
//!
//! 1. The simplex method (the `simplex` module: bound perturbation, Harris's ratio test,
//!    relative pivot tolerances, steepest-edge pricing, refactorisation from the original
//!    data, a dual/primal clean-up on the unperturbed problem). Each basis it ends a pass
//!    on is read off directly and *polished* (the equalising conditions on its supports
//!    re-solved by LU), and the better-certified profile is kept.
//! 2. If that is not within a thousandth of the tolerance: a double-oracle *refinement*
//!    that re-solves the subgame of near-best responses scaled to its own payoff range (so
//!    differences far below the whole game's range are resolved), adding every strategy
//!    that beats the subgame's answer, and a second simplex run with a finer pivot
//!    tolerance.
//! 3. If the certificate is still above tolerance: an interior-point solve (clarabel), its
//!    answer cleaned, polished on its supports and refined.
//!
//! A warm start ([`MetaSolver::solve_from`], what PSRO calls each iteration) replaces these
//! stages when it certifies. The solver remembers the subgame of its last warm answer's
//! supports and that subgame's optimal tableau (the `memory` module). When the next game
//! holds the last one as its leading block, as a PSRO meta-game that has grown by a row and
//! a column does, a double oracle runs from the remembered subgame: the strategies that beat
//! its answer join it, its tableau grows by their rows and columns without a
//! refactorisation, and dual then primal pivots restore optimality (the `simplex::grow`
//! module). Each pivot costs the subgame's size, not the game's. A warm answer whose
//! certificate is not within a thousandth of the tolerance falls back to the cold stages,
//! and any other game is solved cold; either way the cold answer's subgame is remembered.
//!
//! The best-certified answer wins; it is [`Status::Solved`] when NashConv is within
//! [`LpNash::CERTIFICATE_TOLERANCE`], and an error otherwise (never a silent
//! `max_iterations`). Payoffs up to `±f64::MAX` are rescaled, never overflowed.

mod candidate;
mod interior;
mod memory;
mod simplex;

pub use crate::solver_memory::LpMemory;
use candidate::{
    BinaryScale, COARSE_PIVOT_TOLERANCE, Candidate, FINE_PIVOT_TOLERANCE, binary_scaled, oracle_round,
    payoff_vectors, polish, submatrix, tableau_candidate,
};
use memory::WarmMemory;
use simplex::{Simplex, SimplexEnd};

use metagame_games::NormalFormGame;
use ndarray::ArrayView2;

use crate::linalg;
use crate::{Certificate, Extras, MetaSolver, Result, Solution, SolveError, Status};

/// Zero-sum (constant-sum) two-player Nash equilibrium by linear programming.
///
/// See the [module docs](self) for the stages behind an answer. `Solution::iterations`
/// counts every simplex pivot of every stage, plus the interior-point iterations when the
/// fallback ran.
///
/// # Complexity
///
/// Each simplex pivot costs O(mn) on an `m × n` game; the number of pivots is in practice a
/// small multiple of `min(m, n)` (323 on a 301 × 301 Leduc PSRO meta-game). Polishing
/// costs O(k³) for supports of size k. The interior-point fallback costs O((m + n)³) per
/// iteration and runs only when the simplex stages cannot certify.
///
/// # References
///
/// - J. von Neumann (1928), zur Theorie der Gesellschaftsspiele; G. B. Dantzig (1951), "A
///   proof of the equivalence of the programming problem and the game problem".
/// - R. G. Bland (1977), "New finite pivoting rules for the simplex method".
/// - P. M. J. Harris (1973), "Pivot selection methods of the Devex LP code".
/// - A. Koberstein (2005), "The dual simplex method, techniques for a fast and stable
///   implementation" (bound perturbation, refactorisation, clean-up).
/// - H. B. McMahan, G. J. Gordon, A. Blum (2003), "Planning in the presence of cost
///   functions controlled by an adversary" (the double oracle).
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
#[derive(Clone, Debug, PartialEq)]
pub struct LpNash {
    max_pivots: Option<usize>,
    warm_from: usize,
    /// The last warm solve's optimal tableau (none in a clone).
    memory: WarmMemory,
}

impl Default for LpNash {
    /// No pivot cap beyond the built-in safeguard of `50 · (m + n) + 1000` pivots.
    fn default() -> Self {
        Self { max_pivots: None, warm_from: Self::WARM_FROM, memory: WarmMemory::default() }
    }
}

/// An [`LpNash`] answer with the value of the game.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct ZeroSumSolution {
    /// The equilibrium, its status and certificate (with `primal_dual_gap` set), carrying
    /// the value as [`crate::Extras::Value`].
    pub solution: Solution,
    /// The row player's expected payoff `xᵀAy` under the returned profile (the value of
    /// the game, up to the certificate).
    pub value: f64,
}

impl LpNash {
    /// Tolerance (relative to the payoff scale) for recognising a constant-sum game.
    pub const CONSTANT_SUM_TOLERANCE: f64 = 1e-9;

    /// An answer is [`Status::Solved`] when its NashConv, computed from the game, is at most
    /// this times the payoff range of the row player's matrix (plus `64 ε · max |A|`, the
    /// rounding of the certificate's own arithmetic).
    pub const CERTIFICATE_TOLERANCE: f64 = 1e-9;

    /// A solver with the default pivot safeguard.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same solver with at most `max_pivots` simplex pivots. When they run out before
    /// the certificate is within tolerance, the answer so far is returned with status
    /// [`Status::MaxIterations`] (no interior-point fallback is tried).
    pub fn with_max_pivots(self, max_pivots: usize) -> Self {
        Self { max_pivots: Some(max_pivots), ..self }
    }

    /// Games where both players have at least this many strategies take the warm start of
    /// [`LpNash::solve_zero_sum_from`]; smaller ones are solved cold. Measured on the
    /// meta-games of a Leduc PSRO run (`examples/warm_lp_replay.rs`, AMD EPYC, three runs):
    /// at 25–50 strategies warm solves are 0.8–1.6× as fast as cold ones, at 50–64
    /// 0.9–2.0×, at 64–100 1.5–3.0×, at 100–150 2.9–3.9×, at 150–200 4.7–8.1× and at
    /// 200–236 4.9–6.4×.
    pub const WARM_FROM: usize = 64;

    /// The same solver with warm starts from `min_strategies` strategies per player on (1:
    /// always; `usize::MAX`: never); see [`LpNash::WARM_FROM`].
    pub fn with_warm_starts_from(self, min_strategies: usize) -> Self {
        Self { warm_from: min_strategies, ..self }
    }

    /// Solve and return the game's value for the row player with the equilibrium.
    ///
    /// The status is [`Status::Solved`] exactly when the certificate is within
    /// [`LpNash::CERTIFICATE_TOLERANCE`].
    ///
    /// # Errors
    ///
    /// [`SolveError::Unsupported`] unless the game has two players and constant sum
    /// (within [`LpNash::CONSTANT_SUM_TOLERANCE`] × payoff scale);
    /// [`SolveError::Numerical`] when neither the simplex method nor the interior-point
    /// fallback reaches a certificate within tolerance (not met in testing; the message
    /// gives the best NashConv), or when the certificate itself is not finite (payoffs so
    /// large that the game's own arithmetic overflows).
    pub fn solve_zero_sum(&self, game: &NormalFormGame) -> Result<ZeroSumSolution> {
        let (a, extremes) = constant_sum_matrix(game)?;
        self.solve_matrix(game, a, extremes, None)
    }

    /// [`LpNash::solve_zero_sum`] warm-started when each player has at least
    /// [`LpNash::WARM_FROM`] strategies (see [`LpNash::with_warm_starts_from`]): a double
    /// oracle from the subgame this solver remembers from its last warm answer when `game`
    /// extends that answer's game (its leading block, bit for bit, as PSRO's meta-games
    /// grow), else from the subgame of `start`'s supports (`start`: one distribution per
    /// player, as [`MetaSolver::solve_from`] takes); every strategy that beats the subgame's
    /// answer joins, until the whole game certifies within a thousandth of the tolerance;
    /// else the cold stages run as well and the better-certified answer wins (so a warm
    /// answer is never less certified than a cold one would have to be).
    ///
    /// The answer can be a different equilibrium from the cold solve's when the game has more
    /// than one; it is certified the same way. It depends on what the solver remembers: a
    /// clone starts with nothing remembered, and a training loop that checkpoints carries the
    /// memory in its checkpoint ([`LpNash::memory`], as PSRO does), so that a resumed run
    /// picks the equilibria the uninterrupted one picks.
    ///
    /// # Errors
    ///
    /// As [`LpNash::solve_zero_sum`]; [`SolveError::InvalidConfig`] when `start` does not
    /// hold one non-negative, finite vector with a positive sum per player, of the player's
    /// number of strategies.
    pub fn solve_zero_sum_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> Result<ZeroSumSolution> {
        let start = crate::dynamics::checked_start("lp", game, start)?;
        let (a, extremes) = constant_sum_matrix(game)?;
        let warm = game.shape().iter().all(|&k| k >= self.warm_from);
        self.solve_matrix(game, a, extremes, warm.then_some(&start[..]))
    }

    /// What this solver remembers of its last warm answer (its subgame and that subgame's
    /// tableau), for a checkpoint: restored with [`LpNash::restore_memory`], the next warm
    /// solve pivots on the same bits as it would have here. `None` when nothing is
    /// remembered.
    pub fn memory(&self) -> Option<LpMemory> {
        self.memory.snapshot()
    }

    /// Remember `memory` (from [`LpNash::memory`]) of the game it was taken on, which is
    /// `game`'s leading block (`game` itself when nothing has grown since).
    ///
    /// # Errors
    ///
    /// As [`LpNash::solve_zero_sum`] for a game that is not two-player constant-sum;
    /// [`SolveError::InvalidConfig`] when `memory` does not fit `game` (nothing is then
    /// remembered).
    pub fn restore_memory(&self, game: &NormalFormGame, memory: &LpMemory) -> Result<()> {
        let (a, _) = constant_sum_matrix(game)?;
        self.memory.restore(a, memory).map_err(|reason| SolveError::InvalidConfig { solver: "lp", reason })
    }

    /// The value of a two-player constant-sum game for the row player.
    ///
    /// # Errors
    ///
    /// As [`LpNash::solve_zero_sum`].
    pub fn value(&self, game: &NormalFormGame) -> Result<f64> {
        Ok(self.solve_zero_sum(game)?.value)
    }

    fn solve_matrix(
        &self,
        game: &NormalFormGame,
        a: ArrayView2<'_, f64>,
        extremes: (f64, f64),
        start: Option<&[Vec<f64>]>,
    ) -> Result<ZeroSumSolution> {
        let (m, n) = a.dim();
        let tolerance = certificate_tolerance(extremes);
        // Below this the answer is not worth a clean-up pass.
        let aim = 1e-3 * tolerance;
        let cap = self.max_pivots.unwrap_or(50 * (m + n) + 1000);
        let mut iterations = 0;
        let mut warm = None;
        let warm_start = start.is_some();
        if let Some(start) = start
            && let Some(recalled) = self.memory.recall(a, BinaryScale::of(extremes), start, aim, cap)
        {
            iterations += recalled.pivots;
            warm = recalled.best;
            if recalled.certified {
                // INVARIANT: a certified recall has an answer.
                return self.answer(game, tolerance, warm.expect("certified"), iterations, false, None);
            }
        }
        let (profile, end, lp) = simplex_profile(a, cap, COARSE_PIVOT_TOLERANCE);
        iterations += lp.pivots;
        let mut best = Candidate::new(a, profile).or(warm);
        let capped = end == SimplexEnd::PivotCap && self.max_pivots.is_some();
        if !capped && !best.within(aim) {
            let (refined, pivots) = refine(a, &best.strategies, aim, cap);
            iterations += pivots;
            best = best.or(refined);
        }
        if !capped && !best.within(aim) {
            let (profile, _, lp) = simplex_profile(a, cap, FINE_PIVOT_TOLERANCE);
            iterations += lp.pivots;
            best = best.or(Some(Candidate::new(a, profile)));
        }
        let mut fallback_error = None;
        if !capped && !best.within(tolerance) {
            match interior_candidates(a, aim, cap) {
                Ok((candidate, count)) => {
                    iterations += count;
                    best = best.or(candidate);
                }
                Err(e) => fallback_error = Some(e),
            }
        }
        if warm_start && best.within(tolerance) {
            self.memory.remember(a, &best.strategies, cap);
        }
        self.answer(game, tolerance, best, iterations, capped, fallback_error)
    }

    /// The solution for the best candidate: certified on `game`, [`Status::Solved`] within
    /// `tolerance` (the game's [`certificate_tolerance`]), [`Status::MaxIterations`] when
    /// `capped`, an error otherwise.
    fn answer(
        &self,
        game: &NormalFormGame,
        tolerance: f64,
        best: Candidate,
        iterations: usize,
        capped: bool,
        fallback_error: Option<SolveError>,
    ) -> Result<ZeroSumSolution> {
        let mut certificate = Certificate::for_profile(game, &best.strategies);
        certificate.primal_dual_gap = Some(best.gap);
        if !certificate.nash_conv.is_finite() || !best.gap.is_finite() {
            return Err(SolveError::Numerical {
                solver: "lp",
                reason: "the certificate is not finite (payoffs too large for f64 arithmetic)".into(),
            });
        }
        let status = if certificate.nash_conv <= tolerance {
            Status::Solved
        } else if capped {
            Status::MaxIterations
        } else {
            let why = fallback_error.map_or(String::new(), |e| format!(" (interior-point fallback: {e})"));
            return Err(SolveError::Numerical {
                solver: "lp",
                reason: format!(
                    "best NashConv {:e} is above the tolerance {tolerance:e} after {iterations} pivots and \
                     interior-point iterations{why}",
                    certificate.nash_conv
                ),
            });
        };
        let solution = Solution::from_parts(best.strategies, status, certificate, iterations)
            .with_extras(Extras::Value(best.value));
        Ok(ZeroSumSolution { solution, value: best.value })
    }
}

/// The simplex method on `a` (normalised to `[1, 2]`) from the slack basis: the
/// better-certified of each pass's basis and its polished profile, how the simplex ended,
/// and the simplex (its final tableau and pivots).
fn simplex_profile(
    a: ArrayView2<'_, f64>,
    cap: usize,
    cleanup_pivot_tolerance: f64,
) -> (Vec<Vec<f64>>, SimplexEnd, Simplex) {
    let exact = binary_scaled(a);
    let mut best: Option<Candidate> = None;
    let mut lp = Simplex::new(linalg::normalized(a));
    let observe = |lp: &Simplex| {
        best = Some(tableau_candidate(exact.view(), lp).or(best.take()));
    };
    let end = lp.solve(cap, cleanup_pivot_tolerance, observe);
    // INVARIANT: `solve` observes at least once.
    let best = best.expect("observed");
    (best.strategies, end, lp)
}

/// Rounds of [`refine`] at most.
const REFINE_ROUNDS: usize = 16;

/// The clean-up pass: a double oracle started from `start`. The subgame of the strategies
/// in `start`'s supports and of the near-best responses to it (within its gap) is solved
/// by the simplex method scaled to the subgame's own payoff range, so that differences far
/// below the whole game's range (near-duplicate strategies) are resolved; every strategy
/// that beats the subgame's answer in the whole game joins, until the gap is at most `aim`,
/// nothing joins, or [`REFINE_ROUNDS`] rounds. Returns the best answer seen (if any) and
/// the pivots spent.
fn refine(a: ArrayView2<'_, f64>, start: &[Vec<f64>], aim: f64, cap: usize) -> (Option<Candidate>, usize) {
    let (m, n) = a.dim();
    let (ay, xa) = payoff_vectors(a, start);
    let upper = ay.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lower = xa.iter().copied().fold(f64::INFINITY, f64::min);
    let gap = upper - lower;
    if !gap.is_finite() {
        return (None, 0);
    }
    let rows: Vec<usize> = (0..m).filter(|&i| start[0][i] > 0.0 || ay[i] >= upper - gap).collect();
    let cols: Vec<usize> = (0..n).filter(|&j| start[1][j] > 0.0 || xa[j] <= lower + gap).collect();
    double_oracle(a, rows, cols, aim, cap, REFINE_ROUNDS)
}

/// The double oracle on `a` from the subgame of `rows` × `cols` (sorted): each round solves
/// the subgame by the simplex method scaled to its own payoff range and lets in every
/// strategy of the whole game that beats the subgame's answer, until the gap on the whole
/// game is at most `aim`, nothing joins, or `rounds` rounds; a strategy joins when it beats
/// the subgame's bound by more than `margin`. Returns the best answer seen (if any) and the
/// pivots spent.
fn double_oracle(
    a: ArrayView2<'_, f64>,
    mut rows: Vec<usize>,
    mut cols: Vec<usize>,
    aim: f64,
    cap: usize,
    rounds: usize,
) -> (Option<Candidate>, usize) {
    let mut best: Option<Candidate> = None;
    let mut pivots = 0;
    for _ in 0..rounds {
        let sub = submatrix(a, &rows, &cols, |x| x);
        let (profile, _, lp) = simplex_profile(sub.view(), cap, FINE_PIVOT_TOLERANCE);
        pivots += lp.pivots;
        let (candidate, new_rows, new_cols) = oracle_round(a, &rows, &cols, &profile);
        let done = candidate.gap <= aim;
        best = Some(candidate.or(best));
        if done || (new_rows.is_empty() && new_cols.is_empty()) {
            break;
        }
        rows.extend(new_rows);
        cols.extend(new_cols);
        rows.sort_unstable();
        cols.sort_unstable();
    }
    (best, pivots)
}

/// The interior-point fallback: clarabel's answer cleaned, polished on its supports, and
/// refined; the best of these with the interior-point iterations and pivots spent.
fn interior_candidates(a: ArrayView2<'_, f64>, aim: f64, cap: usize) -> Result<(Option<Candidate>, usize)> {
    let scaled = linalg::normalized(a);
    let ipm = interior::solve(&scaled)?;
    let mut count = ipm.iterations;
    let supports = (interior_support(&ipm.x), interior_support(&ipm.y));
    let mut best = polish(binary_scaled(a).view(), &supports).map(|p| Candidate::new(a, p));
    let cleaned = [ipm.x, ipm.y].map(|s| linalg::clean_distribution(s, f64::INFINITY));
    if let [Some(x), Some(y)] = cleaned {
        best = Some(Candidate::new(a, vec![x, y]).or(best));
    }
    if let Some(start) = best.as_ref().filter(|b| !b.within(aim)).map(|b| b.strategies.clone()) {
        let (refined, pivots) = refine(a, &start, aim, cap);
        count += pivots;
        best = refined.map(|r| r.or(best.take())).or(best);
    }
    Ok((best, count))
}

/// The row player's payoff matrix of a two-player constant-sum game (within
/// [`LpNash::CONSTANT_SUM_TOLERANCE`] × payoff scale) and its extremes.
///
/// # Errors
///
/// [`SolveError::Unsupported`] for any other game.
fn constant_sum_matrix(game: &NormalFormGame) -> Result<(ArrayView2<'_, f64>, (f64, f64))> {
    if game.num_players() != 2 {
        return Err(SolveError::Unsupported {
            solver: "lp",
            reason: format!("needs 2 players, the game has {}", game.num_players()),
        });
    }
    // INVARIANT: a 2-player game's payoff tensors are matrices.
    let (a, b) = (game.matrix(0).expect("two players"), game.matrix(1).expect("two players"));
    match constant_sum_extremes(a, b, LpNash::CONSTANT_SUM_TOLERANCE) {
        Some(extremes) => Ok((a, extremes)),
        None => Err(SolveError::Unsupported {
            solver: "lp",
            reason: "the game is not constant-sum; use lemke-howson or an enumeration".into(),
        }),
    }
}

/// The extremes of `a` when `a + b` is constant within `relative_tolerance` × the larger
/// payoff range (at least 1), computed on halves so that payoffs near `f64::MAX` do not
/// overflow; `None` otherwise.
///
/// One pass over both matrices, for the extremes of `a`, of `b` and of the half sums:
/// `|s − c| ≤ limit` for every half sum `s` exactly when it holds for the smallest and the
/// largest (rounded subtraction is monotone).
fn constant_sum_extremes(
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    relative_tolerance: f64,
) -> Option<(f64, f64)> {
    let half_sum = |x: f64, y: f64| x / 2.0 + y / 2.0;
    // Lanes of (a, b, half sum) extremes, each its own array so that the pass vectorises;
    // comparisons, not `f64::min`, as in `extremes` (and skipping NaN as it does).
    const LANES: usize = 8;
    let (mut lo_a, mut hi_a) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
    let (mut lo_b, mut hi_b) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
    let (mut lo_s, mut hi_s) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
    let mut take = |k: usize, x: f64, y: f64| {
        let s = half_sum(x, y);
        lo_a[k] = if x < lo_a[k] { x } else { lo_a[k] };
        hi_a[k] = if x > hi_a[k] { x } else { hi_a[k] };
        lo_b[k] = if y < lo_b[k] { y } else { lo_b[k] };
        hi_b[k] = if y > hi_b[k] { y } else { hi_b[k] };
        lo_s[k] = if s < lo_s[k] { s } else { lo_s[k] };
        hi_s[k] = if s > hi_s[k] { s } else { hi_s[k] };
    };
    match (a.as_slice(), b.as_slice()) {
        (Some(a), Some(b)) => {
            let (chunks_a, chunks_b) = (a.chunks_exact(LANES), b.chunks_exact(LANES));
            let rest = chunks_a.remainder().iter().zip(chunks_b.remainder());
            for (ca, cb) in chunks_a.zip(chunks_b) {
                for k in 0..LANES {
                    take(k, ca[k], cb[k]);
                }
            }
            rest.for_each(|(&x, &y)| take(0, x, y));
        }
        _ => a.iter().zip(b.iter()).for_each(|(&x, &y)| take(0, x, y)),
    }
    let low = |lanes: [f64; LANES]| lanes.into_iter().fold(f64::INFINITY, f64::min);
    let high = |lanes: [f64; LANES]| lanes.into_iter().fold(f64::NEG_INFINITY, f64::max);
    let (lo_a, hi_a, lo_b, hi_b, lo_s, hi_s) =
        (low(lo_a), high(hi_a), low(lo_b), high(hi_b), low(lo_s), high(hi_s));
    let half_scale = (hi_a / 2.0 - lo_a / 2.0).max(hi_b / 2.0 - lo_b / 2.0).max(0.5);
    let c = half_sum(a[[0, 0]], b[[0, 0]]);
    let limit = relative_tolerance * half_scale;
    ((hi_s - c).abs() <= limit && (lo_s - c).abs() <= limit).then_some((lo_a, hi_a))
}

/// NashConv accepted as solved; see [`LpNash::CERTIFICATE_TOLERANCE`].
fn certificate_tolerance((lo, hi): (f64, f64)) -> f64 {
    let largest = hi.max(-lo);
    2.0 * (LpNash::CERTIFICATE_TOLERANCE * (hi / 2.0 - lo / 2.0)) + 64.0 * f64::EPSILON * largest
}

/// The entries of an interior-point strategy that are not numerically zero.
fn interior_support(s: &[f64]) -> Vec<usize> {
    let largest = s.iter().fold(0.0_f64, |acc, &v| acc.max(v));
    s.iter().enumerate().filter(|&(_, &v)| v > 1e-7 * largest).map(|(i, _)| i).collect()
}

impl MetaSolver for LpNash {
    fn name(&self) -> &'static str {
        "lp"
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        Ok(self.solve_zero_sum(game)?.solution)
    }

    /// Warm-started from `start`'s supports; see [`LpNash::solve_zero_sum_from`].
    fn solve_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> Result<Solution> {
        Ok(self.solve_zero_sum_from(game, start)?.solution)
    }

    fn memory(&self) -> Option<crate::SolverMemory> {
        LpNash::memory(self).map(crate::SolverMemory::Lp)
    }

    fn restore_memory(&self, game: &NormalFormGame, memory: &crate::SolverMemory) -> Result<()> {
        match memory {
            crate::SolverMemory::Lp(memory) => LpNash::restore_memory(self, game, memory),
        }
    }

    /// Warm solves on the members themselves (copies add nothing to a zero-sum game's
    /// equilibria, and skip building the expanded game); cold ones on the expanded game as
    /// the default does, so that a cold run picks the equilibrium it always has.
    fn solve_collapsed(
        &self,
        game: &NormalFormGame,
        copies: &crate::Copies,
        start: Option<&[Vec<f64>]>,
    ) -> Result<Solution> {
        match start {
            Some(start) => {
                copies.check(self.name(), game)?;
                self.solve_from(game, start)
            }
            None => crate::solution::solve_expanded(self, game, copies, None),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array2, array};

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

    #[test]
    fn huge_payoffs_are_rescaled_not_overflowed() {
        let a = array![[1e308, -1e308], [-1e308, 1e308]];
        let s = lp(a);
        assert_eq!(s.solution.status, Status::Solved);
        assert!(s.solution.certificate.nash_conv.is_finite());
        for p in &s.solution.strategies {
            assert!((p[0] - 0.5).abs() < 1e-12);
        }
        let tiny = lp(array![[1e-300, 0.0], [0.0, 1e-300]]);
        assert_eq!(tiny.solution.status, Status::Solved);
        assert!((tiny.solution.strategies[0][0] - 0.5).abs() < 1e-12);
    }

    #[test]
    fn warm_solves_of_huge_and_outgrown_payoffs_certify() {
        let lp = LpNash::default().with_warm_starts_from(1);
        let huge = NormalFormGame::zero_sum(array![[1e308, -1e308], [-1e308, 1e308]]).unwrap();
        let s = lp.solve_from(&huge, &[vec![1.0, 0.0], vec![0.0, 1.0]]).unwrap();
        assert_eq!(s.status, Status::Solved);
        assert!((s.strategies[0][0] - 0.5).abs() < 1e-12);
        // A remembered game, then one that extends it with payoffs far outside its range:
        // they do not fit the remembered normalisation, and the answer still certifies.
        let small = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]).unwrap();
        let third = vec![1.0 / 3.0; 3];
        lp.solve_from(&small, &[third.clone(), third]).unwrap();
        let grown = array![[0., -1., 1., -1e6], [1., 0., -1., 1e6], [-1., 1., 0., 0.], [1e6, -1e6, 0., 0.]];
        let grown = NormalFormGame::zero_sum(grown).unwrap();
        let start = vec![vec![0.25; 4], vec![0.25; 4]];
        let s = lp.solve_from(&grown, &start).unwrap();
        assert_eq!(s.status, Status::Solved);
        assert!(
            s.certificate.nash_conv
                <= certificate_tolerance(metagame_games::extremes(grown.matrix(0).unwrap())),
            "{:?}",
            s.certificate
        );
    }

    #[test]
    fn the_constant_sum_pass_finds_the_extremes_wherever_they_are() {
        // 5 × 7: four chunks of eight and a remainder of three. The extremes sit in the
        // remainder and in the middle of a chunk; the transposed view takes the other path.
        let mut a = Array2::from_shape_fn((5, 7), |(i, j)| (i * 7 + j) as f64 % 5.0 - 2.0);
        (a[[4, 6]], a[[2, 3]]) = (9.5, -7.25);
        let b = a.mapv(|x| 3.0 - x);
        for (a, b) in [(a.view(), b.view()), (a.t(), b.t())] {
            assert_eq!(constant_sum_extremes(a, b, 1e-9), Some((-7.25, 9.5)));
            // Off by more than the tolerance at the remainder's last entry: not constant-sum.
            let mut off = b.to_owned();
            let last = (off.nrows() - 1, off.ncols() - 1);
            off[last] += 1e-6;
            assert_eq!(constant_sum_extremes(a, off.view(), 1e-9), None);
            off[last] -= 1e-6 - 1e-12;
            assert_eq!(constant_sum_extremes(a, off.view(), 1e-9), Some((-7.25, 9.5)));
        }
    }

    #[test]
    fn general_sum_with_huge_payoffs_is_refused() {
        let a = array![[f64::MAX, 0.0], [0.0, 1.0]];
        let b = array![[f64::MAX, 0.0], [0.0, 1.0]];
        let g = NormalFormGame::bimatrix(a, b).unwrap();
        assert!(matches!(LpNash::default().solve(&g), Err(SolveError::Unsupported { .. })));
    }

    #[test]
    fn interior_point_fallback_certifies_on_its_own() {
        let a = array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.], [0., -1., 1.]];
        let tolerance = certificate_tolerance(metagame_games::extremes(a.view()));
        let (best, iterations) = interior_candidates(a.view(), 1e-3 * tolerance, 1000).unwrap();
        let best = best.unwrap();
        assert!(iterations > 0);
        assert!(best.gap <= tolerance, "gap {}", best.gap);
        assert!(best.value.abs() <= tolerance);
    }

    #[test]
    fn refine_resolves_differences_far_below_the_range() {
        // A 2x2 matching-pennies block whose payoffs differ by 1e-9, beside payoffs of
        // size 1 that decide nothing: the equilibrium mixes inside the block.
        let d = 1e-9;
        let a = array![[0.5 + d, 0.5, 1.0], [0.5, 0.5 + d, 1.0], [0.0, 0.0, 1.0]];
        let s = lp(a.clone());
        assert_eq!(s.solution.status, Status::Solved);
        assert!(s.solution.certificate.nash_conv <= 1e-3 * d, "{:?}", s.solution.certificate);
        for p in 0..2 {
            assert!((s.solution.strategies[0][p] - 0.5).abs() < 1e-5, "{:?}", s.solution.strategies);
            assert!((s.solution.strategies[1][p] - 0.5).abs() < 1e-5, "{:?}", s.solution.strategies);
        }
    }
}
