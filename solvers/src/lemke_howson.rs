//! The Lemke–Howson algorithm for one Nash equilibrium of a bimatrix game.
//!
//! Complementary pivoting on the two best-response polytopes
//! `P = {x ≥ 0 : Bᵀx ≤ 1}` and `Q = {y ≥ 0 : Ay ≤ 1}` (payoffs first mapped into `[1, 2]`),
//! with Shapley's labels: row strategy `i` is label `i`, column strategy `j` label `m + j`.
//! Starting from the artificial equilibrium `(0, 0)`, the `initial_label` is dropped and the
//! path of almost completely labelled pairs is followed until the label is picked up again.
//!
//! Tableaux are updated with ordinary (dividing) floating-point pivots, and the ratio test
//! is **lexicographic** (ties in the ratio broken by the rows of the inverse basis, read off
//! the slack columns), so degenerate games cannot make the path cycle. A pivot cap is a
//! safeguard that ends the run with [`Status::MaxIterations`]. The answer is polished on its
//! supports (see [`crate::lp`]) when that lowers its certificate.

use metagame_games::NormalFormGame;
use ndarray::{Array2, ArrayView2};

use crate::lp::linalg::{self, pivot_tableau};
use crate::{MetaSolver, Result, Solution, SolveError, Status};

/// Lemke–Howson from one starting label.
///
/// # Complexity
///
/// O(m + n) per pivot row update, O((m + n)²) per pivot; the number of pivots is
/// exponential in the worst case (Savani & von Stengel 2006) but small on random games.
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
/// use metagame_solvers::{MetaSolver, lemke_howson::LemkeHowson};
/// use ndarray::array;
///
/// let game = NormalFormGame::bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]])?;
/// let solution = LemkeHowson::default().solve(&game)?;
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
    /// Label 0 (the row player's first strategy), at most 1 000 000 pivots.
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

    /// The same solver with a different pivot cap.
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

    fn run(&self, game: &NormalFormGame, label: usize) -> Result<Solution> {
        let (a, b) = Self::matrices(game)?;
        let (m, n) = a.dim();
        if label >= m + n {
            return Err(SolveError::InvalidConfig {
                solver: "lemke-howson",
                reason: format!("initial label {label} is not below m + n = {}", m + n),
            });
        }
        let path = follow_path(&linalg::normalized(a), &linalg::normalized(b), label, self.max_pivots);
        let status = if !path.finished {
            Status::MaxIterations
        } else if path.tie {
            Status::Degenerate
        } else {
            Status::Solved
        };
        let raw = vec![normalize(path.x), normalize(path.y)];
        let mut best = Solution::new(game, raw, status, path.pivots);
        let (rows, cols) = (linalg::support(&best.strategies[0]), linalg::support(&best.strategies[1]));
        if let Some((x, y)) = linalg::equalize(a, b, &rows, &cols)
            && let (Some(x), Some(y)) =
                (linalg::clean_distribution(x, 1e-9), linalg::clean_distribution(y, 1e-9))
        {
            let polished = Solution::new(game, vec![x, y], status, path.pivots);
            if polished.certificate.nash_conv <= best.certificate.nash_conv {
                best = polished;
            }
        }
        Ok(best)
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

    /// The distinct equilibria reached from every starting label `0..m+n` (not necessarily
    /// all equilibria of the game).
    fn solve_all(&self, game: &NormalFormGame) -> Result<Vec<Solution>> {
        let (m, n) = game.matrix(0).map(|a| a.dim()).unwrap_or((0, 0));
        Self::matrices(game)?;
        let mut found: Vec<Solution> = Vec::new();
        for label in 0..m + n {
            let s = self.run(game, label)?;
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
        Ok(found)
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

struct Path {
    x: Vec<f64>,
    y: Vec<f64>,
    pivots: usize,
    finished: bool,
    /// A ratio test needed the lexicographic tie-break.
    tie: bool,
}

/// A dense tableau `[M | rhs]` over variables indexed by label; rows are basic variables.
struct Tableau {
    rows: usize,
    width: usize,
    /// `rows × (width + 1)`, the last column is the right-hand side.
    t: Vec<f64>,
    basis: Vec<usize>,
    /// The columns that held the identity initially (read as the inverse basis).
    identity: std::ops::Range<usize>,
    /// The pivot row's buffer, reused across pivots.
    prow: Vec<f64>,
}

impl Tableau {
    const PIVOT_TOLERANCE: f64 = 1e-12;
    const TIE_TOLERANCE: f64 = 1e-10;

    fn at(&self, i: usize, j: usize) -> f64 {
        self.t[i * (self.width + 1) + j]
    }

    /// Lexicographic minimum ratio row for the entering column `e`; sets `tie` when the
    /// plain ratios tied.
    fn ratio_row(&self, e: usize, tie: &mut bool) -> Option<usize> {
        let rhs = self.width;
        let mut best: Option<usize> = None;
        for i in 0..self.rows {
            let p = self.at(i, e);
            if p <= Self::PIVOT_TOLERANCE {
                continue;
            }
            let Some(bi) = best else {
                best = Some(i);
                continue;
            };
            let q = self.at(bi, e);
            let mut ordering = std::cmp::Ordering::Equal;
            for (k, col) in std::iter::once(rhs).chain(self.identity.clone()).enumerate() {
                let (u, v) = (self.at(i, col) / p, self.at(bi, col) / q);
                if (u - v).abs() > Self::TIE_TOLERANCE * (1.0 + u.abs().max(v.abs())) {
                    ordering = u.total_cmp(&v);
                    break;
                }
                if k == 0 {
                    *tie = true;
                }
            }
            if ordering == std::cmp::Ordering::Less {
                best = Some(i);
            }
        }
        best
    }

    /// Pivot `e` into the basis at row `r`; returns the label that left.
    fn pivot(&mut self, r: usize, e: usize) -> usize {
        pivot_tableau(&mut self.t, self.width + 1, r, e, &mut self.prow);
        std::mem::replace(&mut self.basis[r], e)
    }

    fn values(&self, labels: std::ops::Range<usize>) -> Vec<f64> {
        let mut out = vec![0.0; labels.len()];
        for (i, &v) in self.basis.iter().enumerate() {
            if labels.contains(&v) {
                out[v - labels.start] = self.at(i, self.width);
            }
        }
        out
    }
}

/// Follow the Lemke–Howson path on positive matrices `a`, `b` (both `m × n`).
fn follow_path(a: &Array2<f64>, b: &Array2<f64>, label: usize, max_pivots: usize) -> Path {
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
    let mut p = Tableau {
        rows: n,
        width,
        t: tp,
        basis: (m..m + n).collect(),
        identity: m..m + n,
        prow: Vec::with_capacity(width + 1),
    };
    let mut q = Tableau {
        rows: m,
        width,
        t: tq,
        basis: (0..m).collect(),
        identity: 0..m,
        prow: Vec::with_capacity(width + 1),
    };
    let mut tie = false;
    let mut pivots = 0;
    let mut entering = label;
    let mut in_p = label < m;
    let mut finished = false;
    while pivots < max_pivots {
        let tab = if in_p { &mut p } else { &mut q };
        let Some(r) = tab.ratio_row(entering, &mut tie) else {
            // Cannot happen for positive payoffs (bounded polytopes); stop defensively.
            break;
        };
        let left = tab.pivot(r, entering);
        pivots += 1;
        if left == label {
            finished = true;
            break;
        }
        entering = left;
        in_p = !in_p;
    }
    Path { x: p.values(0..m), y: q.values(m..m + n), pivots, finished, tie }
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
    fn degenerate_zero_sum_terminates() {
        let a = array![[0., -1., 1.], [-1., 0., 1.], [-1., 0., 1.]];
        let g = NormalFormGame::zero_sum(a).unwrap();
        for label in 0..6 {
            let s = LemkeHowson::new(label).solve(&g).unwrap();
            assert_ne!(s.status, Status::MaxIterations);
            assert!(s.certificate.nash_conv < 1e-12, "{label}: {s:?}");
        }
    }

    #[test]
    fn bad_label_is_a_config_error() {
        let g = game(array![[1., 0.]], array![[0., 1.]]);
        assert!(matches!(LemkeHowson::new(3).solve(&g), Err(SolveError::InvalidConfig { .. })));
    }
}
