//! All Nash equilibria of a nondegenerate bimatrix game by support enumeration.
//!
//! In a nondegenerate game every equilibrium has supports of equal size `k`, and is the
//! unique solution of the equalising systems `A[I, J] y = v·1, Σy = 1` and
//! `B[I, J]ᵀ x = u·1, Σx = 1` on its supports `I` (rows) and `J` (columns), with `x, y > 0`
//! and no pure strategy doing better than `v` (resp. `u`). Every pair of equal-size supports
//! is examined, pruned by conditional dominance: given rows `I`, a column strictly dominated
//! (for the column player, on the rows of `I`) by another column cannot be a best response
//! to any `x` with support `I`, so `J` is drawn only from the undominated columns; and a
//! pair is dropped before solving when a row of `I` is strictly dominated on `J`.
//!
//! Nondegenerate games take a fast path that enumerates the same support pairs implicitly:
//! each vertex of the smaller player's best-response polytope (found by reverse search, see
//! [`crate::vertex_enumeration`]) *is* a support `I` with its best-response set `J`,
//! `|I| = |J|`, and its partner is the solution of the equalising system on `(I, J)`, kept
//! when it is a distribution with no better pure reply. In a nondegenerate game these are
//! exactly the equilibria, and the vertex count is far below the number of support pairs
//! (about 10⁶ against 10¹¹ at 20×20). The explicit support-pair search below runs only when
//! the fast path meets a degeneracy.
//!
//! The systems are solved by LU with partial pivoting on payoffs normalised to `[1, 2]`;
//! tolerances are `1e-9` on that scale. When the game shows degeneracy (an equilibrium whose
//! best-response set is larger than its support, or with a zero weight on its support) the
//! solutions carry [`Status::Degenerate`]: equal-size supports may then miss equilibria (use
//! [`crate::vertex_enumeration::VertexEnumeration`]). If no equilibrium has equal-size
//! supports, the extreme equilibria from vertex enumeration are returned, marked degenerate.

use metagame_games::NormalFormGame;
use ndarray::{Array2, ArrayView2};

use super::certificate::certificate_tolerance;
use super::face::face_equilibrium;
use super::lemke_howson::LemkeHowson;
use super::vertex_enumeration::{self, VertexEnumeration};
use crate::linalg;
use crate::{MetaSolver, Result, Solution, SolveError, Status};

/// Every equilibrium of a nondegenerate two-player game, by equal-size support pairs.
///
/// # Complexity
///
/// Up to `Σ_k C(m, k)·C(n, k)` support pairs (exponential), each O(k³ + (m + n)k); the
/// dominance pruning removes most of them on random games.
///
/// # References
///
/// - B. von Stengel (2002), "Computing equilibria for two-person games", Handbook of Game
///   Theory vol. 3, §3.2 (support enumeration in nondegenerate games).
/// - R. Porter, E. Nudelman, Y. Shoham (2008), "Simple search methods for finding a Nash
///   equilibrium", Games and Economic Behavior 63 (conditional dominance pruning).
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, Status, support_enumeration::SupportEnumeration};
/// use ndarray::array;
///
/// let game = NormalFormGame::bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]])?;
/// let all = SupportEnumeration::default().solve_all(&game)?;
/// assert_eq!(all.len(), 3);
/// assert!(all.iter().all(|s| s.status == Status::Solved));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SupportEnumeration {
    max_candidates: Option<usize>,
}

impl SupportEnumeration {
    /// The enumerator, with no cap on the supports it examines.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same enumerator examining at most `max_candidates` support pairs (and visiting at
    /// most that many bases in its vertex-enumeration passes). The number of support pairs
    /// grows exponentially with the game, so a cap is what keeps a large degenerate
    /// meta-game from running for hours; when it is reached, the (possibly empty, then
    /// completed by vertex enumeration under the same cap) list has status
    /// [`Status::MaxIterations`].
    pub fn with_max_candidates(self, max_candidates: usize) -> Self {
        Self { max_candidates: Some(max_candidates) }
    }
}

impl MetaSolver for SupportEnumeration {
    fn name(&self) -> &'static str {
        "support-enumeration"
    }

    /// The first equilibrium found (smallest supports first).
    ///
    /// # Errors
    ///
    /// As [`MetaSolver::solve_all`].
    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        self.solve_all(game)?.into_iter().next().ok_or_else(|| SolveError::Numerical {
            solver: "support-enumeration",
            reason: "no equilibrium found".into(),
        })
    }

    /// All equilibria (of a nondegenerate game), smallest supports first.
    ///
    /// # Errors
    ///
    /// [`SolveError::Unsupported`] unless the game has two players.
    fn solve_all(&self, game: &NormalFormGame) -> Result<Vec<Solution>> {
        let (Some(a), Some(b), 2) = (game.matrix(0), game.matrix(1), game.num_players()) else {
            return Err(SolveError::Unsupported {
                solver: "support-enumeration",
                reason: format!("needs 2 players, the game has {}", game.num_players()),
            });
        };
        let (a, b) = (linalg::normalized(a), linalg::normalized(b));
        if let Some((mut found, vertices)) = vertex_enumeration::nondegenerate_equilibria(
            &a,
            &b,
            self.max_candidates.unwrap_or(FAST_MAX_BASES),
        ) {
            // Smallest supports first, as the support-pair search reports them.
            found.sort_by_key(|(x, _)| x.iter().filter(|&&p| p > 0.0).count());
            return Ok(found
                .into_iter()
                .filter_map(|(x, y)| {
                    let x = linalg::clean_distribution(x, TOLERANCE)?;
                    let y = linalg::clean_distribution(y, TOLERANCE)?;
                    Some(Solution::new(game, vec![x, y], Status::Solved, vertices))
                })
                .collect());
        }
        let search = enumerate(&a, &b, self.max_candidates.unwrap_or(usize::MAX));
        if search.found.is_empty() {
            let vertex = match self.max_candidates {
                Some(cap) => VertexEnumeration::default().with_max_bases(cap),
                None => VertexEnumeration::default(),
            };
            let mut all = vertex.solve_all(game)?;
            for s in &mut all {
                s.status = if search.exhausted || s.status == Status::MaxIterations {
                    Status::MaxIterations
                } else {
                    Status::Degenerate
                };
                s.iterations += search.candidates;
            }
            return Ok(all);
        }
        let status = if search.exhausted {
            Status::MaxIterations
        } else if search.degenerate {
            Status::Degenerate
        } else {
            Status::Solved
        };
        Ok(search
            .found
            .into_iter()
            .map(|(x, y)| Solution::new(game, vec![x, y], status, search.candidates))
            .collect())
    }
}

const TOLERANCE: f64 = 1e-9;

/// An exact equilibrium of a two-player game on candidate supports: `supports[0]` (rows `I`)
/// and `supports[1]` (columns `J`), e.g. the support of an approximate answer from an
/// iterative solver.
///
/// First looks for `x` on `I` and `y` on `J` such that every strategy of `I` is a best
/// response to `y` and every strategy of `J` a best response to `x`: two feasibility linear
/// programs (`A[I, J] u = 1`, `A[k, J] u ≤ 1` for rows `k ∉ I`, `u ≥ 0`, `y = u / Σu` on
/// payoffs mapped into `[1, 2]`, and the same for `x` with `Bᵀ`), solved by a phase-one
/// simplex with the lexicographic ratio test and the basis re-solved from the payoffs at the
/// end. Supports need not have equal sizes, so degenerate games and near-duplicate
/// strategies are handled. When that has no solution (some strategy of the candidate is not
/// a best response at any equilibrium, or the equilibrium holds only within tolerance),
/// the sub-game `I × J` is solved by Lemke–Howson from every label and, when its smaller side
/// has at most 12 strategies, by vertex enumeration, and the first of its equilibria that
/// is one of the whole game is returned.
///
/// The answer is verified against the whole game: `Some` only when its NashConv is at most
/// [`crate::lemke_howson::CERTIFICATE_TOLERANCE`] times the payoff range, with status
/// [`Status::Solved`]; its supports lie within `I` and `J`.
///
/// # Errors
///
/// [`SolveError::Unsupported`] unless the game has two players; [`SolveError::InvalidConfig`]
/// when `supports` does not hold two non-empty lists of valid, distinct strategies.
///
/// # Complexity
///
/// Each linear program has `m` (resp. `n`) rows and `|J| + m` (resp. `|I| + n`) columns;
/// O(rows · columns) per pivot, a number of pivots usually near the number of rows.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::support_enumeration::equilibrium_on_support;
/// use ndarray::array;
///
/// // Rock-paper-scissors with a duplicated rock.
/// let a = array![[0., -1., 1.], [0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]];
/// let game = NormalFormGame::zero_sum(a)?;
/// let s = equilibrium_on_support(&game, &[vec![0, 1, 2, 3], vec![0, 1, 2]])?.expect("an equilibrium");
/// assert!(s.certificate.nash_conv < 1e-12);
/// assert!((s.strategies[1][0] - 1. / 3.).abs() < 1e-12);
/// // No equilibrium has the column player on rock alone.
/// assert!(equilibrium_on_support(&game, &[vec![0, 1, 2, 3], vec![0]])?.is_none());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn equilibrium_on_support(game: &NormalFormGame, supports: &[Vec<usize>]) -> Result<Option<Solution>> {
    let (Some(a), Some(b), 2) = (game.matrix(0), game.matrix(1), game.num_players()) else {
        return Err(SolveError::Unsupported {
            solver: "equilibrium-on-support",
            reason: format!("needs 2 players, the game has {}", game.num_players()),
        });
    };
    let (m, n) = a.dim();
    let [rows, cols] = supports else {
        return Err(SolveError::InvalidConfig {
            solver: "equilibrium-on-support",
            reason: format!("needs one support per player (2), got {}", supports.len()),
        });
    };
    for (player, (support, count)) in [(rows, m), (cols, n)].into_iter().enumerate() {
        let mut sorted = support.clone();
        sorted.sort_unstable();
        sorted.dedup();
        if support.is_empty() || sorted.len() != support.len() || sorted.last().is_some_and(|&s| s >= count) {
            return Err(SolveError::InvalidConfig {
                solver: "equilibrium-on-support",
                reason: format!(
                    "player {player}'s support must be non-empty, distinct strategies below {count}: {support:?}"
                ),
            });
        }
    }
    if let Some(found) = face_equilibrium(game, rows, cols) {
        return Ok(Some(found));
    }
    // Some candidate strategy is never a best response: solve the sub-game and check.
    let sub = |mat: ArrayView2<'_, f64>| {
        Array2::from_shape_fn((rows.len(), cols.len()), |(r, c)| mat[[rows[r], cols[c]]])
    };
    let subgame = NormalFormGame::bimatrix(sub(a), sub(b))?;
    let tolerance = certificate_tolerance(game);
    let mut candidates = LemkeHowson::default().with_max_pivots(SUBGAME_MAX_PIVOTS).solve_all(&subgame)?;
    if rows.len().min(cols.len()) <= SUBGAME_MAX_ENUMERATED {
        candidates
            .extend(VertexEnumeration::default().with_max_bases(SUBGAME_MAX_BASES).solve_all(&subgame)?);
    }
    for s in candidates {
        let mut x = vec![0.0; m];
        let mut y = vec![0.0; n];
        for (&i, &p) in rows.iter().zip(&s.strategies[0]) {
            x[i] = p;
        }
        for (&j, &p) in cols.iter().zip(&s.strategies[1]) {
            y[j] = p;
        }
        let whole = Solution::new(game, vec![x, y], Status::Solved, s.iterations);
        if whole.certificate.nash_conv <= tolerance && whole.is_distribution(1e-12) {
            return Ok(Some(whole));
        }
    }
    Ok(None)
}

/// Pivots Lemke–Howson may spend on a candidate's sub-game in [`equilibrium_on_support`].
const SUBGAME_MAX_PIVOTS: usize = 100_000;
/// Sub-games whose smaller side has at most this many strategies are also enumerated.
const SUBGAME_MAX_ENUMERATED: usize = 12;
/// Bases the sub-game's vertex enumeration may visit.
const SUBGAME_MAX_BASES: usize = 200_000;

/// Bases the nondegenerate fast path may visit before the support-pair search takes over.
const FAST_MAX_BASES: usize = 20_000_000;

struct Search {
    found: Vec<(Vec<f64>, Vec<f64>)>,
    degenerate: bool,
    /// Support pairs whose systems were solved.
    candidates: usize,
    /// The search stopped at its cap before every support pair was examined.
    exhausted: bool,
}

/// Advance `idx` (a strictly increasing k-subset of `0..n`) to the next one in
/// lexicographic order; false after the last.
fn next_subset(idx: &mut [usize], n: usize) -> bool {
    let k = idx.len();
    for pos in (0..k).rev() {
        if idx[pos] < n - k + pos {
            idx[pos] += 1;
            for q in pos + 1..k {
                idx[q] = idx[q - 1] + 1;
            }
            return true;
        }
    }
    false
}

/// Columns of `b` (the column player's payoffs) not strictly dominated on `rows`.
fn undominated_columns(b: ArrayView2<'_, f64>, rows: &[usize], out: &mut Vec<usize>) {
    out.clear();
    let n = b.ncols();
    'col: for j in 0..n {
        for j2 in 0..n {
            if j2 != j && rows.iter().all(|&i| b[[i, j2]] > b[[i, j]]) {
                continue 'col;
            }
        }
        out.push(j);
    }
}

fn enumerate(a: &Array2<f64>, b: &Array2<f64>, max_candidates: usize) -> Search {
    let (m, n) = a.dim();
    let mut search = Search { found: Vec::new(), degenerate: false, candidates: 0, exhausted: false };
    let mut allowed = Vec::with_capacity(n);
    let mut cols = Vec::with_capacity(n);
    for k in 1..=m.min(n) {
        let mut rows: Vec<usize> = (0..k).collect();
        loop {
            undominated_columns(b.view(), &rows, &mut allowed);
            if allowed.len() >= k {
                let mut pick: Vec<usize> = (0..k).collect();
                loop {
                    cols.clear();
                    cols.extend(pick.iter().map(|&p| allowed[p]));
                    try_pair(a, b, &rows, &cols, &mut search);
                    if search.candidates >= max_candidates {
                        search.exhausted = true;
                        return search;
                    }
                    if !next_subset(&mut pick, allowed.len()) {
                        break;
                    }
                }
            }
            if !next_subset(&mut rows, m) {
                break;
            }
        }
    }
    search
}

/// Solve the equalising systems on `(rows, cols)` and keep the profile if it is an
/// equilibrium.
fn try_pair(a: &Array2<f64>, b: &Array2<f64>, rows: &[usize], cols: &[usize], search: &mut Search) {
    let (m, n) = a.dim();
    // A row of `rows` strictly dominated on `cols` (by any row) is never a best response to
    // a mix on `cols`: prune before solving.
    for &i in rows {
        if (0..m).any(|i2| i2 != i && cols.iter().all(|&j| a[[i2, j]] > a[[i, j]])) {
            return;
        }
    }
    search.candidates += 1;
    // The column player's mix: rows must be indifferent and best.
    let Some((_, y)) = equalize_one(a, rows, cols, true) else { return };
    let Some(v) = best_response_check(y.iter().zip(cols).map(|(&p, &j)| (j, p)), rows, m, |i, j| a[[i, j]])
    else {
        return;
    };
    let Some((_, x)) = equalize_one(b, rows, cols, false) else { return };
    let Some(u) = best_response_check(x.iter().zip(rows).map(|(&p, &i)| (i, p)), cols, n, |j, i| b[[i, j]])
    else {
        return;
    };
    if v || u {
        search.degenerate = true;
    }
    let mut xf = vec![0.0; m];
    let mut yf = vec![0.0; n];
    for (&i, &p) in rows.iter().zip(&x) {
        xf[i] = p.max(0.0);
    }
    for (&j, &p) in cols.iter().zip(&y) {
        yf[j] = p.max(0.0);
    }
    let (Some(xf), Some(yf)) =
        (linalg::clean_distribution(xf, TOLERANCE), linalg::clean_distribution(yf, TOLERANCE))
    else {
        return;
    };
    let duplicate = search.found.iter().any(|(fx, fy)| {
        fx.iter().zip(&xf).chain(fy.iter().zip(&yf)).all(|(p, q)| (p - q).abs() <= TOLERANCE)
    });
    if !duplicate {
        search.found.push((xf, yf));
    }
}

/// The equalising mix on one side: for `column_mix`, `y` on `cols` equalising `rows` of `mat`
/// (= A); otherwise `x` on `rows` equalising `cols` of `mat` (= B). Returns the common
/// payoff and the mix; `None` if singular or a weight is below `−TOLERANCE`.
fn equalize_one(
    mat: &Array2<f64>,
    rows: &[usize],
    cols: &[usize],
    column_mix: bool,
) -> Option<(f64, Vec<f64>)> {
    let k = rows.len();
    let s = k + 1;
    let mut sys = vec![0.0; s * s];
    for r in 0..k {
        for c in 0..k {
            sys[r * s + c] = if column_mix { mat[[rows[r], cols[c]]] } else { mat[[rows[c], cols[r]]] };
        }
        sys[r * s + k] = -1.0;
    }
    for c in 0..k {
        sys[k * s + c] = 1.0;
    }
    let mut rhs = vec![0.0; s];
    rhs[k] = 1.0;
    if !linalg::lu_solve(&mut sys, &mut rhs, s) {
        return None;
    }
    let value = rhs[k];
    rhs.truncate(k);
    rhs.iter().all(|&p| p >= -TOLERANCE).then_some((value, rhs))
}

/// Given a mix over `(index, weight)` of one player, check that the other player's
/// strategies in `support` are best responses (payoff `pay(strategy, index)`); returns
/// `Some(degenerate)` when they are (degenerate: a zero weight, or a tie outside `support`).
fn best_response_check(
    mix: impl Iterator<Item = (usize, f64)> + Clone,
    support: &[usize],
    count: usize,
    pay: impl Fn(usize, usize) -> f64,
) -> Option<bool> {
    let payoff = |s: usize| mix.clone().map(|(j, p)| p * pay(s, j)).sum::<f64>();
    let value = payoff(support[0]);
    let mut degenerate = mix.clone().any(|(_, p)| p <= TOLERANCE);
    let mut inside = support.iter().peekable();
    for s in 0..count {
        if inside.peek() == Some(&&s) {
            inside.next();
            continue;
        }
        let u = payoff(s);
        if u > value + TOLERANCE {
            return None;
        }
        if u >= value - TOLERANCE {
            degenerate = true;
        }
    }
    Some(degenerate)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn subsets_in_order() {
        let mut idx = vec![0, 1];
        let mut all = vec![idx.clone()];
        while next_subset(&mut idx, 4) {
            all.push(idx.clone());
        }
        assert_eq!(all.len(), 6);
        assert_eq!(all[5], vec![2, 3]);
    }

    #[test]
    fn degenerate_zero_sum_is_flagged() {
        let a = array![[0., -1., 1.], [-1., 0., 1.], [-1., 0., 1.]];
        let g = NormalFormGame::zero_sum(a).unwrap();
        let all = SupportEnumeration::default().solve_all(&g).unwrap();
        assert!(!all.is_empty());
        assert!(all.iter().all(|s| s.status == Status::Degenerate && s.certificate.nash_conv < 1e-12));
    }
}
