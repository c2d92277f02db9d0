//! The Lemke–Howson algorithm for one Nash equilibrium of a bimatrix game.
//!
//! Complementary pivoting on the two best-response polytopes
//! `P = {x ≥ 0 : Bᵀx ≤ 1}` and `Q = {y ≥ 0 : Ay ≤ 1}` (payoffs first mapped into `[1, 2]`),
//! with Shapley's labels: row strategy `i` is label `i`, column strategy `j` label `m + j`.
//! Starting from the artificial equilibrium `(0, 0)`, the `initial_label` is dropped and the
//! path of almost completely labelled pairs is followed until the label is picked up again.
//!
//! Degeneracy is resolved by **lexicographic perturbation of the whole tableau** (von Stengel
//! 2002, §3.5): the right-hand side `1` is read as `1 + (ε, ε², …)`, so the minimum ratio
//! test compares the rows `(B⁻¹1, B⁻¹) / pivot` lexicographically (`B⁻¹` is read off the
//! columns that held the identity at the start). The perturbed polytopes are nondegenerate,
//! so the path is unique and cannot cycle, whatever ties the payoffs have.
//!
//! Numerics for near-ties (meta-games full of near-duplicate strategies, payoff differences
//! near `1e-15`):
//!
//! - ratios and lexicographic keys tie when they agree to `1e-11 × (1 + |least|)`, and a tableau
//!   entry enters the ratio test only when it exceeds `1e-11 ×` the largest entry of its
//!   column, so rounding noise is never a pivot;
//! - the tableau is rebuilt from the original payoffs by an LU factorisation of its basis
//!   every `max(50, k)` pivots (`k` its rows) and before the answer is read, so rounding error cannot accumulate
//!   along a long path; a path that revisits a basis (impossible in exact arithmetic) is
//!   abandoned;
//! - the answer is read from the rebuilt basis and, when that helps, re-solved on its
//!   supports (see [`crate::support_enumeration::equilibrium_on_support`]);
//! - the status is [`Status::Solved`] only when the certificate computed from the game is
//!   within `1e-9 ×` the payoff range. Otherwise the other starting labels are tried, in
//!   order, within the same pivot budget; if none gives a certified answer, the best one
//!   found is returned with [`Status::Degenerate`] (or [`Status::MaxIterations`] when the
//!   budget ran out).

use std::collections::HashSet;

use metagame_games::NormalFormGame;
use ndarray::{Array2, ArrayView2};

use super::certificate::certificate_tolerance;
use super::face::face_equilibrium;
use super::tableau::LexTableau;
use crate::linalg;
use crate::{MetaSolver, Result, Solution, SolveError, Status};

pub use super::certificate::CERTIFICATE_TOLERANCE;
pub use super::tableau::REFRESH_EVERY;

/// Lemke–Howson from one starting label, falling back to the other labels when a path does
/// not end with a certified equilibrium.
///
/// # Complexity
///
/// O((m + n)·max(m, n)) per pivot, plus an O(k³ + k²(m + n)) rebuild of a `k × k` basis
/// every `max(`[`REFRESH_EVERY`]`, k)` pivots (at most as much again); the number of pivots is exponential in the worst case
/// (Savani & von Stengel 2006) but small on random games.
///
/// # References
///
/// - C. E. Lemke, J. T. Howson (1964), "Equilibrium points of bimatrix games".
/// - B. von Stengel (2002), "Computing equilibria for two-person games", Handbook of Game
///   Theory vol. 3, §3.3–3.5 (lexicographic degeneracy resolution).
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, Status, lemke_howson::LemkeHowson};
/// use ndarray::array;
///
/// let game = NormalFormGame::bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]])?;
/// let solution = LemkeHowson::default().solve(&game)?;
/// assert_eq!(solution.status, Status::Solved);
/// assert!(solution.certificate.nash_conv < 1e-12);
/// assert_eq!(LemkeHowson::default().solve_all(&game)?.len(), 2); // the mixed one is unreachable
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LemkeHowson {
    initial_label: usize,
    max_pivots: usize,
}

impl Default for LemkeHowson {
    /// Label 0 (the row player's first strategy), at most 1 000 000 pivots in all.
    fn default() -> Self {
        Self { initial_label: 0, max_pivots: 1_000_000 }
    }
}

impl LemkeHowson {
    /// Start by dropping `initial_label` (`0..m` are the row player's strategies,
    /// `m..m+n` the column player's); checked against the game when solving.
    pub fn new(initial_label: usize) -> Self {
        Self { initial_label, ..Self::default() }
    }

    /// The same solver with a different pivot cap (over all the labels one solve tries).
    pub fn with_max_pivots(self, max_pivots: usize) -> Self {
        Self { max_pivots, ..self }
    }

    /// The label dropped first.
    pub fn initial_label(&self) -> usize {
        self.initial_label
    }

    fn matrices(game: &NormalFormGame) -> Result<(ArrayView2<'_, f64>, ArrayView2<'_, f64>)> {
        match (game.num_players(), game.matrix(0), game.matrix(1)) {
            (2, Some(a), Some(b)) => Ok((a, b)),
            (p, ..) => Err(SolveError::Unsupported {
                solver: "lemke-howson",
                reason: format!("needs 2 players, the game has {p}"),
            }),
        }
    }

    fn checked_label(game: &NormalFormGame, label: usize) -> Result<(usize, usize)> {
        let (a, _) = Self::matrices(game)?;
        let (m, n) = a.dim();
        if label >= m + n {
            return Err(SolveError::InvalidConfig {
                solver: "lemke-howson",
                reason: format!("initial label {label} is not below m + n = {}", m + n),
            });
        }
        Ok((m, n))
    }

    /// Follow the path of `label`, then of the other labels in order, until one ends with a
    /// certified equilibrium or the pivot budget is spent.
    fn run(&self, game: &NormalFormGame, label: usize) -> Result<Solution> {
        let (m, n) = Self::checked_label(game, label)?;
        let problem = Problem::new(game)?;
        let mut budget = self.max_pivots;
        let mut pivots = 0;
        let mut capped = false;
        let mut best: Option<Solution> = None;
        for l in std::iter::once(label).chain((0..m + n).filter(|&l| l != label)) {
            if budget == 0 {
                capped = true;
                break;
            }
            let attempt = problem.attempt(game, l, budget);
            pivots += attempt.pivots;
            budget -= attempt.pivots;
            capped |= attempt.end == End::Cap;
            let mut s = attempt.solution;
            s.iterations = pivots;
            if s.status == Status::Solved {
                return Ok(s);
            }
            if best.as_ref().is_none_or(|b| s.certificate.nash_conv < b.certificate.nash_conv) {
                best = Some(s);
            }
        }
        let mut s = best.unwrap_or_else(|| {
            let uniform = |k: usize| vec![1.0 / k as f64; k];
            Solution::new(game, vec![uniform(m), uniform(n)], Status::MaxIterations, 0)
        });
        s.status = if capped { Status::MaxIterations } else { Status::Degenerate };
        s.iterations = pivots;
        Ok(s)
    }
}

impl MetaSolver for LemkeHowson {
    fn name(&self) -> &'static str {
        "lemke-howson"
    }

    /// # Errors
    ///
    /// [`SolveError::Unsupported`] unless the game has two players;
    /// [`SolveError::InvalidConfig`] if the initial label is not below `m + n`.
    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        self.run(game, self.initial_label)
    }

    /// The distinct certified equilibria reached from every starting label `0..m+n` (not
    /// necessarily all equilibria of the game), each label's path followed on its own within
    /// the pivot cap. When no path ends certified, the one answer of
    /// [`MetaSolver::solve`] (which tries every label) is returned.
    fn solve_all(&self, game: &NormalFormGame) -> Result<Vec<Solution>> {
        let (m, n) = Self::checked_label(game, 0)?;
        let problem = Problem::new(game)?;
        let mut found: Vec<Solution> = Vec::new();
        let mut budget = self.max_pivots;
        for label in 0..m + n {
            if budget == 0 {
                break;
            }
            let attempt = problem.attempt(game, label, budget);
            budget -= attempt.pivots;
            let s = attempt.solution;
            if s.status != Status::Solved {
                continue;
            }
            let tolerance = 1e-9;
            let seen = found.iter().any(|f| {
                f.strategies
                    .iter()
                    .flatten()
                    .zip(s.strategies.iter().flatten())
                    .all(|(p, q)| (p - q).abs() <= tolerance)
            });
            if !seen {
                found.push(s);
            }
        }
        if found.is_empty() {
            found.push(self.solve(game)?);
        }
        Ok(found)
    }
}

/// How a path ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum End {
    /// The dropped label was picked up again.
    Finished,
    /// The pivot budget ran out.
    Cap,
    /// A basis pair repeated, or a basis became singular: rounding broke the path.
    Numerical,
}

struct Attempt {
    solution: Solution,
    pivots: usize,
    end: End,
}

/// The game on the normalised scale, shared by the paths of all labels.
struct Problem {
    a: Array2<f64>,
    b: Array2<f64>,
    /// Certificate tolerance on the game's own scale.
    tolerance: f64,
}

impl Problem {
    fn new(game: &NormalFormGame) -> Result<Self> {
        let (a, b) = LemkeHowson::matrices(game)?;
        Ok(Self {
            a: linalg::normalized(a),
            b: linalg::normalized(b),
            tolerance: certificate_tolerance(game),
        })
    }

    /// One label's path, its answer read from the rebuilt final bases and polished on its
    /// supports; the status is `Solved` when the answer is certified.
    fn attempt(&self, game: &NormalFormGame, label: usize, budget: usize) -> Attempt {
        let (m, n) = self.a.dim();
        let (mut p, mut q, pivots, end) = follow_path(&self.a, &self.b, label, budget);
        let rebuilt = p.refresh() && q.refresh();
        let x = normalize(p.values(0..m));
        let y = normalize(q.values(m..m + n));
        let mut best = Solution::new(game, vec![x, y], Status::Degenerate, pivots);
        if end == End::Finished && rebuilt && best.certificate.nash_conv > 0.0 {
            // Re-solve on the supports: removes the rounding of the basis solve and the clipped
            // negative weights of ill-conditioned bases.
            let (rows, cols) = (linalg::support(&best.strategies[0]), linalg::support(&best.strategies[1]));
            if let Some(polished) = face_equilibrium(game, &rows, &cols)
                && polished.certificate.nash_conv < best.certificate.nash_conv
            {
                best.strategies = polished.strategies;
                best.certificate = polished.certificate;
            }
        }
        if end == End::Finished && best.certificate.nash_conv <= self.tolerance && best.is_distribution(1e-12)
        {
            best.status = Status::Solved;
        }
        Attempt { solution: best, pivots, end }
    }
}

fn normalize(mut s: Vec<f64>) -> Vec<f64> {
    for v in s.iter_mut() {
        *v = v.max(0.0);
    }
    let total: f64 = s.iter().sum();
    if total > 0.0 {
        s.iter_mut().for_each(|v| *v /= total);
    }
    s
}

/// A 64-bit key for variable `v` of tableau `side` (splitmix64), for hashing basis pairs.
fn zobrist(side: usize, v: usize) -> u64 {
    let mut z = (v as u64).wrapping_mul(2).wrapping_add(side as u64).wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Follow the Lemke–Howson path on positive matrices `a`, `b` (both `m × n`) for at most
/// `max_pivots` pivots; returns the two tableaux, the pivots made and how it ended.
fn follow_path(
    a: &Array2<f64>,
    b: &Array2<f64>,
    label: usize,
    max_pivots: usize,
) -> (LexTableau, LexTableau, usize, End) {
    let (m, n) = a.dim();
    let width = m + n;
    // P: n rows `Bᵀx + s = 1`, columns: x (labels 0..m), s (labels m..m+n).
    let mut tp = vec![0.0; n * (width + 1)];
    for j in 0..n {
        let row = &mut tp[j * (width + 1)..(j + 1) * (width + 1)];
        for i in 0..m {
            row[i] = b[[i, j]];
        }
        row[m + j] = 1.0;
        row[width] = 1.0;
    }
    // Q: m rows `r + Ay = 1`, columns: r (labels 0..m), y (labels m..m+n).
    let mut tq = vec![0.0; m * (width + 1)];
    for i in 0..m {
        let row = &mut tq[i * (width + 1)..(i + 1) * (width + 1)];
        row[i] = 1.0;
        for j in 0..n {
            row[m + j] = a[[i, j]];
        }
        row[width] = 1.0;
    }
    let mut p = LexTableau::new(n, width, tp, m..m + n);
    let mut q = LexTableau::new(m, width, tq, 0..m);
    let mut hash =
        (m..m + n).map(|v| zobrist(0, v)).chain((0..m).map(|v| zobrist(1, v))).fold(0, |h, z| h ^ z);
    let mut seen = HashSet::new();
    seen.insert(hash);
    let mut pivots = 0;
    let mut entering = label;
    let mut in_p = label < m;
    let end = loop {
        if pivots >= max_pivots {
            break End::Cap;
        }
        let (tab, side) = if in_p { (&mut p, 0) } else { (&mut q, 1) };
        let Some(r) = tab.ratio_row(entering) else {
            // Cannot happen for positive payoffs (bounded polytopes) in exact arithmetic.
            break End::Numerical;
        };
        let (left, ok) = tab.pivot(r, entering);
        pivots += 1;
        if !ok {
            break End::Numerical;
        }
        if left == label {
            break End::Finished;
        }
        hash ^= zobrist(side, left) ^ zobrist(side, entering);
        if !seen.insert(hash) {
            break End::Numerical;
        }
        entering = left;
        in_p = !in_p;
    };
    (p, q, pivots, end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn game(a: Array2<f64>, b: Array2<f64>) -> NormalFormGame {
        NormalFormGame::bimatrix(a, b).unwrap()
    }

    #[test]
    fn every_label_on_battle_of_the_sexes() {
        let g = game(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]]);
        for label in 0..4 {
            let s = LemkeHowson::new(label).solve(&g).unwrap();
            assert_eq!(s.status, Status::Solved);
            assert!(s.certificate.nash_conv < 1e-14, "{label}: {s:?}");
        }
    }

    #[test]
    fn degenerate_zero_sum_is_solved_from_every_label() {
        let a = array![[0., -1., 1.], [-1., 0., 1.], [-1., 0., 1.]];
        let g = NormalFormGame::zero_sum(a).unwrap();
        for label in 0..6 {
            let s = LemkeHowson::new(label).solve(&g).unwrap();
            assert_eq!(s.status, Status::Solved, "{label}: {s:?}");
            assert!(s.certificate.nash_conv < 1e-12, "{label}: {s:?}");
        }
    }

    #[test]
    fn bad_label_is_a_config_error() {
        let g = game(array![[1., 0.]], array![[0., 1.]]);
        assert!(matches!(LemkeHowson::new(3).solve(&g), Err(SolveError::InvalidConfig { .. })));
    }

    #[test]
    fn a_pivot_cap_of_zero_is_reported() {
        let g = game(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]]);
        let s = LemkeHowson::default().with_max_pivots(0).solve(&g).unwrap();
        assert_eq!(s.status, Status::MaxIterations);
        assert!(s.is_distribution(1e-12));
    }
}
