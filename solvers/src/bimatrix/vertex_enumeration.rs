//! All extreme Nash equilibria of a bimatrix game by enumerating the vertices of the two
//! best-response polytopes (as Gambit's `enummixed`).
//!
//! With payoffs mapped into `[1, 2]`, the polytopes are `P = {x ≥ 0 : Bᵀx ≤ 1}` and
//! `Q = {y ≥ 0 : Ay ≤ 1}`. A vertex carries the labels of its binding constraints (row
//! strategy `i` is label `i`, column strategy `j` label `m + j`): in P, `x_i = 0` gives
//! label `i` and `(Bᵀx)_j = 1` label `m + j`; in Q, `(Ay)_i = 1` gives `i` and `y_j = 0`
//! gives `m + j`. The extreme equilibria are exactly the completely labelled pairs of
//! non-zero vertices, normalised to sum to 1 (von Stengel 2002, Theorem 3.4 and §3.6).
//!
//! Vertices are found by a depth-first search over *all* feasible bases connected by
//! simplex pivots (every tied leaving row is a neighbour, so degenerate vertices, which have
//! several bases, are handled). The search carries one dense tableau, pivots forward to an
//! unvisited neighbour and back when done; every 64 pivots the tableau is rebuilt from its
//! basis by LU with partial pivoting, so rounding error cannot accumulate. Binding
//! constraints and ratio ties are recognised with tolerance `1e-11` on the normalised payoffs.
//!
//! Nondegenerate games first take a faster path: only one polytope is enumerated, and each
//! of its vertices `x` determines the partner `y` by the square system of its complementary
//! labels (as `lrsnash` does). That polytope's vertices are listed by reverse search
//! (Avis–Fukuda: a simplex pivot rule towards the origin defines a spanning tree, walked with
//! no memory of visited bases), and for more than 24 strategies in all the polytope with
//! fewer vertices by Knuth's random-path estimate is chosen. A ratio tie (a degenerate
//! vertex) or an ambiguous reduced cost abandons it for the depth-first search over bases;
//! when any degeneracy is met there, both polytopes are enumerated and pairs are matched by
//! their label sets.
//!
//! On near-degenerate games (near-duplicate strategies, as long PSRO runs make) pivots on
//! tiny entries can leave a basis slightly outside its polytope, and labels that hold only
//! within tolerance can match a pair that is no equilibrium. So the depth-first search checks
//! every reported point against the original matrix, and every pair is certified from the
//! game: one whose NashConv exceeds `1e-9 ×` the payoff range is re-solved on its supports
//! ([`crate::support_enumeration::equilibrium_on_support`]'s linear programs) and dropped if
//! that fails too. If no pair survives, Lemke–Howson's certified answer is returned.

use std::collections::HashSet;
use std::hash::{BuildHasherDefault, Hasher};

use metagame_games::NormalFormGame;
use ndarray::Array2;

use super::certificate::certificate_tolerance;
use super::face::face_equilibrium;
use super::lemke_howson::LemkeHowson;
use crate::linalg::{self, Lu, pivot_tableau};
use crate::{MetaSolver, Result, Solution, SolveError, Status};

/// Every extreme equilibrium of a two-player game, degenerate games included.
///
/// # Complexity
///
/// Proportional to the number of feasible bases of the two polytopes (exponential in
/// `min(m, n)` in the worst case), times O(c³ + c²d) to refactor each basis.
///
/// # References
///
/// - B. von Stengel (2002), "Computing equilibria for two-person games", Handbook of Game
///   Theory vol. 3, ch. 45, §3.6 (vertex enumeration).
/// - D. Avis, G. Rosenberg, R. Savani, B. von Stengel (2010), "Enumeration of Nash
///   equilibria for two-player games", Economic Theory 42.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, vertex_enumeration::VertexEnumeration};
/// use ndarray::array;
///
/// let game = NormalFormGame::bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]])?;
/// let all = VertexEnumeration::default().solve_all(&game)?;
/// assert_eq!(all.len(), 3);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexEnumeration {
    max_bases: usize,
}

impl Default for VertexEnumeration {
    /// At most 20 000 000 bases visited per polytope.
    fn default() -> Self {
        Self { max_bases: 20_000_000 }
    }
}

impl VertexEnumeration {
    /// The default enumerator.
    pub fn new() -> Self {
        Self::default()
    }

    /// The same enumerator visiting at most `max_bases` bases per polytope; when reached,
    /// the (possibly incomplete) list has status [`Status::MaxIterations`].
    pub fn with_max_bases(self, max_bases: usize) -> Self {
        Self { max_bases }
    }
}

impl MetaSolver for VertexEnumeration {
    fn name(&self) -> &'static str {
        "vertex-enumeration"
    }

    /// The first extreme equilibrium found (see [`MetaSolver::solve_all`]).
    ///
    /// # Errors
    ///
    /// As [`MetaSolver::solve_all`].
    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        self.solve_all(game)?.into_iter().next().ok_or_else(|| SolveError::Numerical {
            solver: "vertex-enumeration",
            reason: "no completely labelled vertex pair found".into(),
        })
    }

    /// All extreme equilibria, in the order of the vertices of P found, each with a
    /// certificate within `1e-9 ×` the payoff range (see the module docs for what happens to
    /// candidates without one).
    ///
    /// # Errors
    ///
    /// [`SolveError::Unsupported`] unless the game has two players.
    fn solve_all(&self, game: &NormalFormGame) -> Result<Vec<Solution>> {
        let (Some(a), Some(b), 2) = (game.matrix(0), game.matrix(1), game.num_players()) else {
            return Err(SolveError::Unsupported {
                solver: "vertex-enumeration",
                reason: format!("needs 2 players, the game has {}", game.num_players()),
            });
        };
        let (m, n) = a.dim();
        // Enumerate the polytope of the player with fewer strategies: transpose if needed.
        let transposed = m > n;
        let (a, b) = if transposed {
            (linalg::normalized(b.t()), linalg::normalized(a.t()))
        } else {
            (linalg::normalized(a), linalg::normalized(b))
        };
        let profiles = match self.reverse_fast_path(&a, &b) {
            Some(found) => found,
            None => match self.fast_path(&a, &b) {
                Some(found) => found,
                None => self.pair_labels(&a, &b),
            },
        };
        let (pairs, bases, complete) = profiles;
        let status = if complete { Status::Solved } else { Status::MaxIterations };
        let tolerance = certificate_tolerance(game);
        let mut found: Vec<Solution> = Vec::with_capacity(pairs.len());
        for (x, y) in pairs {
            let s = if transposed { vec![y, x] } else { vec![x, y] };
            let mut s = Solution::new(game, s, status, bases);
            if s.certificate.nash_conv > tolerance {
                // Near-ties matched labels that do not quite hold: re-solve on the supports.
                let (rows, cols) = (linalg::support(&s.strategies[0]), linalg::support(&s.strategies[1]));
                match face_equilibrium(game, &rows, &cols) {
                    Some(polished) => {
                        s.strategies = polished.strategies;
                        s.certificate = polished.certificate;
                    }
                    None => continue,
                }
            }
            let seen = found.iter().any(|f| {
                f.strategies
                    .iter()
                    .flatten()
                    .zip(s.strategies.iter().flatten())
                    .all(|(p, q)| (p - q).abs() <= 1e-9)
            });
            if !seen {
                found.push(s);
            }
        }
        if found.is_empty() {
            // Every candidate failed its certificate (rounding on a near-degenerate game):
            // one certified equilibrium from Lemke–Howson rather than none.
            let mut s = LemkeHowson::default().solve(game)?;
            if s.status == Status::Solved && !complete {
                s.status = Status::MaxIterations;
            }
            s.iterations += bases;
            found.push(s);
        }
        Ok(found)
    }
}

/// An equilibrium as `(x, y)` distributions.
pub(crate) type Pair = (Vec<f64>, Vec<f64>);

/// Equilibria as (x, y) pairs, bases visited, and whether the search completed.
type Found = (Vec<Pair>, usize, bool);

/// The partner check of the nondegenerate path: for a vertex `x` of P (binding columns in
/// `zero` from index `m`), solve `A[I, J] y = 1` on its support `I` and binding columns `J`
/// and keep the pair when `y` is a vertex of Q completing the labels.
struct Partner<'a> {
    a: &'a Array2<f64>,
    rows: Vec<usize>,
    cols: Vec<usize>,
    scratch: Vec<f64>,
    out: Vec<(Vec<f64>, Vec<f64>)>,
    degenerate: bool,
}

impl<'a> Partner<'a> {
    fn new(a: &'a Array2<f64>) -> Self {
        let (m, n) = a.dim();
        Self {
            a,
            rows: Vec::with_capacity(m),
            cols: Vec::with_capacity(n),
            scratch: Vec::new(),
            out: Vec::new(),
            degenerate: false,
        }
    }

    /// Check one vertex; false (and `degenerate` set) when a degeneracy is seen.
    fn check(&mut self, v: &VertexView<'_>) -> bool {
        let a = self.a;
        let (m, n) = a.dim();
        if self.degenerate {
            return false;
        }
        if v.degenerate {
            self.degenerate = true;
            return false;
        }
        if v.point.iter().all(|&p| p == 0.0) {
            return true;
        }
        self.rows.clear();
        self.rows.extend((0..m).filter(|&i| v.point[i] > 0.0));
        self.cols.clear();
        self.cols.extend((0..n).filter(|&j| v.zero.contains(m + j)));
        let (rows, cols) = (&self.rows, &self.cols);
        let k = rows.len();
        if k != cols.len() {
            self.degenerate = true;
            return false;
        }
        let mut mat = Vec::with_capacity(k * k);
        for &i in rows {
            mat.extend(cols.iter().map(|&j| a[[i, j]]));
        }
        let Some(lu) = Lu::factor(mat, k) else {
            self.degenerate = true;
            return false;
        };
        let mut yj = vec![1.0; k];
        lu.solve(&mut yj, &mut self.scratch);
        if yj.iter().any(|&t| t < -ZERO_TOLERANCE) {
            return true;
        }
        if yj.iter().any(|&t| t <= ZERO_TOLERANCE) {
            self.degenerate = true;
            return false;
        }
        let mut in_rows = rows.iter().peekable();
        for i in 0..m {
            if in_rows.peek() == Some(&&i) {
                in_rows.next();
                continue;
            }
            let ay: f64 = cols.iter().zip(&yj).map(|(&j, &t)| a[[i, j]] * t).sum();
            if ay > 1.0 + ZERO_TOLERANCE {
                return true;
            }
            if ay >= 1.0 - ZERO_TOLERANCE {
                self.degenerate = true;
                return false;
            }
        }
        let mut y = vec![0.0; n];
        for (&j, &t) in cols.iter().zip(&yj) {
            y[j] = t;
        }
        self.out.push((scaled(v.point), scaled(&y)));
        true
    }
}

/// Every equilibrium of a nondegenerate game on payoffs normalised to `[1, 2]`, by reverse
/// search over the vertices of the smaller player's polytope, with the vertices visited;
/// `None` when any degeneracy (primal, or of the search's objective) is met, or the search
/// stopped at `max_bases`.
pub(crate) fn nondegenerate_equilibria(
    a: &Array2<f64>,
    b: &Array2<f64>,
    max_bases: usize,
) -> Option<(Vec<Pair>, usize)> {
    let (m, n) = a.dim();
    let search = VertexEnumeration { max_bases };
    if m > n {
        let (found, bases, complete) = search.reverse_fast_path(&b.t().to_owned(), &a.t().to_owned())?;
        return complete.then(|| (found.into_iter().map(|(x, y)| (y, x)).collect(), bases));
    }
    let (found, bases, complete) = search.reverse_fast_path(a, b)?;
    complete.then_some((found, bases))
}

impl VertexEnumeration {
    /// Nondegenerate games: enumerate P only, by reverse search, and solve for each vertex's
    /// partner. `None` as soon as a degeneracy is seen.
    ///
    /// Above [`ESTIMATE_ABOVE`] strategies, enumerates whichever of P and Q has fewer
    /// vertices by Knuth's estimate, so the pairs come in the order of that polytope's
    /// vertices.
    fn reverse_fast_path(&self, a: &Array2<f64>, b: &Array2<f64>) -> Option<Found> {
        let (m, n) = a.dim();
        if m + n <= ESTIMATE_ABOVE {
            return self.enumerate_p(a, b);
        }
        let bt = b.t().to_owned();
        let p_size = estimate_vertices(&bt, ESTIMATE_PROBES)?;
        let q_size = estimate_vertices(a, ESTIMATE_PROBES)?;
        if q_size < p_size {
            // Q of (A, B) is P of the transposed game (Bᵀ, Aᵀ).
            let (pairs, bases, complete) = self.enumerate_p(&bt, &a.t().to_owned())?;
            return Some((pairs.into_iter().map(|(y, x)| (x, y)).collect(), bases, complete));
        }
        self.enumerate_p(a, b)
    }

    /// The nondegenerate reverse search over P for the game `(a, b)`.
    fn enumerate_p(&self, a: &Array2<f64>, b: &Array2<f64>) -> Option<Found> {
        let mut partner = Partner::new(a);
        let bt = b.t().to_owned();
        let (bases, complete) = reverse_search(&bt, self.max_bases, |v| partner.check(v))?;
        (!partner.degenerate).then_some((partner.out, bases, complete))
    }

    /// Nondegenerate games: enumerate P only (depth-first over all bases) and solve for each
    /// vertex's partner. `None` as soon as a degeneracy is seen.
    fn fast_path(&self, a: &Array2<f64>, b: &Array2<f64>) -> Option<Found> {
        let mut partner = Partner::new(a);
        let bt = b.t().to_owned();
        let (bases, complete) = enumerate(&bt, self.max_bases, |v| partner.check(v));
        (!partner.degenerate).then_some((partner.out, bases, complete))
    }

    /// Any game: enumerate both polytopes and match completely labelled pairs.
    fn pair_labels(&self, a: &Array2<f64>, b: &Array2<f64>) -> Found {
        let (m, n) = a.dim();
        let collect = |mat: &Array2<f64>, label: &dyn Fn(usize) -> usize| {
            let mut vertices = Vec::new();
            let (bases, complete) = enumerate(mat, self.max_bases, |v| {
                if v.point.iter().any(|&p| p != 0.0) {
                    let mut labels = Bits::empty(m + n);
                    for var in 0..m + n {
                        if v.zero.contains(var) {
                            labels.insert(label(var));
                        }
                    }
                    vertices.push((v.point.to_vec(), labels));
                }
                true
            });
            (vertices, bases, complete)
        };
        let (p, pb, pc) = collect(&b.t().to_owned(), &|v| v);
        let (q, qb, qc) = collect(a, &|v| if v < n { m + v } else { v - n });
        let all = Bits::full(m + n);
        let mut out = Vec::new();
        for (x, lx) in &p {
            for (y, ly) in &q {
                if lx.union(ly) == all {
                    out.push((scaled(x), scaled(y)));
                }
            }
        }
        (out, pb + qb, pc && qc)
    }
}

fn scaled(point: &[f64]) -> Vec<f64> {
    let total: f64 = point.iter().sum();
    point.iter().map(|v| v / total).collect()
}

/// A fixed-size bit set over labels or variables.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Bits(Vec<u64>);

impl Bits {
    fn empty(len: usize) -> Self {
        Bits(vec![0; len.div_ceil(64)])
    }
    fn full(len: usize) -> Self {
        let mut b = Self::empty(len);
        for i in 0..len {
            b.insert(i);
        }
        b
    }
    fn insert(&mut self, i: usize) {
        self.0[i / 64] |= 1 << (i % 64);
    }
    fn contains(&self, i: usize) -> bool {
        self.0[i / 64] >> (i % 64) & 1 == 1
    }
    fn union(&self, other: &Self) -> Self {
        Bits(self.0.iter().zip(&other.0).map(|(a, b)| a | b).collect())
    }
}

/// A fast non-cryptographic hasher (the Fx hash of rustc) for basis keys.
#[derive(Default)]
struct FxHasher(u64);

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(word));
        }
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

type FxSet = HashSet<Box<[u64]>, BuildHasherDefault<FxHasher>>;

/// A vertex as the search reports it.
struct VertexView<'a> {
    /// Coordinates `z` (the first `d` variables).
    point: &'a [f64],
    /// Variables at zero: nonbasic ones and basic ones within tolerance (indices `0..d+c`).
    zero: &'a Bits,
    /// Some basic variable is at zero (the vertex has more than `d` binding constraints).
    degenerate: bool,
}

/// Basic values within this of 0 are binding (rounding error after at most 64 pivots is
/// orders of magnitude smaller on payoffs in `[1, 2]`).
const ZERO_TOLERANCE: f64 = 1e-11;
const PIVOT_TOLERANCE: f64 = 1e-11;
const REFRESH_EVERY: usize = 64;
/// A point of `{z ≥ 0 : M z ≤ 1}` may violate a constraint by this much (rounding).
const FEASIBILITY_TOLERANCE: f64 = 1e-9;

/// The search state: one tableau `[B⁻¹M | B⁻¹ | B⁻¹1]` over the basis.
struct Search<'a> {
    mat: &'a Array2<f64>,
    c: usize,
    d: usize,
    t: Vec<f64>,
    basis: Vec<usize>,
    key: Vec<u64>,
    pivots_since_refresh: usize,
    prow: Vec<f64>,
    /// Objective weights of the reverse search (empty for the depth-first search).
    cost: Vec<f64>,
    /// Reduced costs `cost − cost_B·B⁻¹[M | I]` (maintained only when `cost` is set).
    rc: Vec<f64>,
    /// Check every reported point against the original matrix (the depth-first search over
    /// degenerate polytopes; the reverse search refuses ties instead).
    check_feasible: bool,
}

impl Search<'_> {
    fn width(&self) -> usize {
        self.c + self.d + 1
    }

    fn is_basic(&self, v: usize) -> bool {
        self.key[v / 64] >> (v % 64) & 1 == 1
    }

    fn rhs(&self, k: usize) -> f64 {
        self.t[k * self.width() + self.c + self.d]
    }

    /// Rebuild the tableau from the basis by LU (false if the basis matrix is singular).
    fn refresh(&mut self) -> bool {
        let (c, d, w) = (self.c, self.d, self.width());
        let mut bm = vec![0.0; c * c];
        for (k, &v) in self.basis.iter().enumerate() {
            if v < d {
                for i in 0..c {
                    bm[i * c + k] = self.mat[[i, v]];
                }
            } else {
                bm[(v - d) * c + k] = 1.0;
            }
        }
        let Some(lu) = Lu::factor(bm, c) else { return false };
        let mut col = vec![0.0; c];
        let mut scratch = Vec::with_capacity(c);
        for v in 0..w {
            for (i, x) in col.iter_mut().enumerate() {
                *x = if v < d {
                    self.mat[[i, v]]
                } else if v < d + c {
                    f64::from(u8::from(v - d == i))
                } else {
                    1.0
                };
            }
            lu.solve(&mut col, &mut scratch);
            for (k, &x) in col.iter().enumerate() {
                self.t[k * w + v] = x;
            }
        }
        if !self.cost.is_empty() {
            for v in 0..w {
                let own = self.cost.get(v).copied().unwrap_or(0.0);
                let used: f64 =
                    self.basis.iter().enumerate().map(|(k, &b)| self.cost[b] * self.t[k * w + v]).sum();
                self.rc[v] = own - used;
            }
        }
        self.pivots_since_refresh = 0;
        true
    }

    fn pivot(&mut self, r: usize, e: usize) {
        let width = self.width();
        pivot_tableau(&mut self.t, width, r, e, &mut self.prow);
        if !self.rc.is_empty() {
            let f = self.rc[e];
            if f != 0.0 {
                for (v, &q) in self.rc.iter_mut().zip(&self.prow) {
                    *v -= f * q;
                }
                self.rc[e] = 0.0;
            }
        }
        let left = std::mem::replace(&mut self.basis[r], e);
        self.key[left / 64] &= !(1 << (left % 64));
        self.key[e / 64] |= 1 << (e % 64);
        self.pivots_since_refresh += 1;
        if self.pivots_since_refresh >= REFRESH_EVERY {
            self.refresh();
        }
    }

    /// Fill `ratios[k]` with row k's ratio for entering `e` (infinite when its entry is not
    /// positive) and return the minimum.
    fn ratios(&self, e: usize, ratios: &mut [f64]) -> f64 {
        let w = self.width();
        let rhs = self.c + self.d;
        let mut theta = f64::INFINITY;
        for (k, r) in ratios.iter_mut().enumerate() {
            let row = &self.t[k * w..(k + 1) * w];
            let p = row[e];
            *r = if p > PIVOT_TOLERANCE { row[rhs].max(0.0) / p } else { f64::INFINITY };
            theta = theta.min(*r);
        }
        theta
    }

    /// The reverse search's child test for entering `e`: `Some(Some(row))` when the pivot on
    /// `(row, e)` leads to a child of the current vertex, `Some(None)` when it does not,
    /// `None` on a ratio tie or an ambiguous reduced cost.
    fn child_row(&self, e: usize) -> Option<Option<usize>> {
        let (c, w) = (self.c, self.width());
        let rhs = w - 1;
        // Only an improving-at-the-neighbour direction can lead to a child: at the
        // neighbour, Bland's rule must enter `left` (the variable leaving now), i.e.
        // `left` improves there and no smaller nonbasic one does.
        let rc_e = self.rc[e];
        if rc_e.abs() <= DUAL_TOLERANCE {
            return None;
        }
        if rc_e < 0.0 {
            return Some(None);
        }
        // Ratio test (division-free comparisons), refusing ties.
        let (mut num, mut den, mut best_row) = (f64::INFINITY, 1.0, usize::MAX);
        let (mut num2, mut den2) = (f64::INFINITY, 1.0);
        for k in 0..c {
            let p = self.t[k * w + e];
            if p > PIVOT_TOLERANCE {
                let b = self.t[k * w + rhs].max(0.0);
                if b * den < num * p {
                    (num2, den2) = (num, den);
                    (num, den, best_row) = (b, p, k);
                } else if b * den2 < num2 * p {
                    (num2, den2) = (b, p);
                }
            }
        }
        if best_row == usize::MAX {
            return Some(None);
        }
        let (best, second) = (num / den, num2 / den2);
        if second <= best + ZERO_TOLERANCE * (1.0 + best) {
            return None;
        }
        let left = self.basis[best_row];
        let row = &self.t[best_row * w..(best_row + 1) * w];
        let f = rc_e / row[e];
        let mut is_child = true;
        for (u, &entry) in row.iter().enumerate().take(left) {
            if u == e || self.is_basic(u) {
                continue;
            }
            let r = self.rc[u] - f * entry;
            if r.abs() <= DUAL_TOLERANCE {
                return None;
            }
            if r < 0.0 {
                is_child = false;
                break;
            }
        }
        Some(is_child.then_some(best_row))
    }

    /// Report the current vertex to `visit`; `seen_vertices` dedupes degenerate ones.
    fn report(
        &self,
        seen_vertices: &mut FxSet,
        point: &mut [f64],
        zero: &mut Bits,
        visit: &mut impl FnMut(&VertexView<'_>) -> bool,
    ) -> bool {
        point.fill(0.0);
        zero.0.fill(0);
        let mut degenerate = false;
        for v in 0..self.c + self.d {
            if !self.is_basic(v) {
                zero.insert(v);
            }
        }
        for (k, &v) in self.basis.iter().enumerate() {
            let beta = self.rhs(k);
            if beta <= ZERO_TOLERANCE {
                zero.insert(v);
                degenerate = true;
            } else if v < self.d {
                point[v] = beta;
            }
        }
        if self.check_feasible && !self.feasible(point) {
            // Rounding after pivots on near-zero entries (near-duplicate strategies) can leave
            // a basis outside the polytope: it is no vertex.
            return true;
        }
        if degenerate && !seen_vertices.insert(zero.0.clone().into_boxed_slice()) {
            return true;
        }
        visit(&VertexView { point, zero, degenerate })
    }

    /// `M z ≤ 1` and `z ≥ 0` for the point, checked on the original matrix within
    /// `FEASIBILITY_TOLERANCE`.
    fn feasible(&self, point: &[f64]) -> bool {
        let basic_ok = self.basis.iter().enumerate().all(|(k, _)| self.rhs(k) >= -FEASIBILITY_TOLERANCE);
        basic_ok
            && self.mat.rows().into_iter().all(|row| {
                let s: f64 = row.iter().zip(point).map(|(m, z)| m * z).sum();
                s <= 1.0 + FEASIBILITY_TOLERANCE
            })
    }
}

/// Depth-first search over all feasible bases of `{z ≥ 0 : M z ≤ 1}` for `M ≥ 1` (`c × d`);
/// variables `0..d` are coordinates and `d..d+c` slacks. `visit` sees every vertex once and
/// may stop the search by returning `false`. Returns the bases visited and whether the search
/// completed.
fn enumerate(
    mat: &Array2<f64>,
    max_bases: usize,
    mut visit: impl FnMut(&VertexView<'_>) -> bool,
) -> (usize, bool) {
    let (c, d) = mat.dim();
    let nvars = c + d;
    let words = nvars.div_ceil(64);
    let mut search = Search {
        mat,
        c,
        d,
        t: vec![0.0; c * (c + d + 1)],
        basis: (d..nvars).collect(),
        key: vec![0; words],
        pivots_since_refresh: 0,
        prow: Vec::with_capacity(c + d + 1),
        cost: Vec::new(),
        check_feasible: true,
        rc: Vec::new(),
    };
    for v in d..nvars {
        search.key[v / 64] |= 1 << (v % 64);
    }
    if !search.refresh() {
        return (0, false);
    }
    let mut visited = FxSet::default();
    let mut seen_vertices = FxSet::default();
    let mut point = vec![0.0; d];
    let mut zero = Bits::empty(nvars);
    visited.insert(search.key.clone().into_boxed_slice());
    if !search.report(&mut seen_vertices, &mut point, &mut zero, &mut visit) {
        return (1, true);
    }
    /// A level of the search: how we got here and where the neighbour scan stands.
    struct Frame {
        back: Option<(usize, usize)>,
        next_var: usize,
        next_row: usize,
    }
    let mut stack = vec![Frame { back: None, next_var: 0, next_row: 0 }];
    let mut bases = 1;
    let mut candidate = vec![0u64; words];
    let mut ratios = vec![f64::INFINITY; c];
    while let Some(frame) = stack.last_mut() {
        let mut found = None;
        while frame.next_var < nvars && found.is_none() {
            let e = frame.next_var;
            if search.is_basic(e) {
                frame.next_var += 1;
                frame.next_row = 0;
                continue;
            }
            let theta = search.ratios(e, &mut ratios);
            if theta.is_finite() {
                let bound = theta + ZERO_TOLERANCE * (1.0 + theta);
                for (k, &ratio) in ratios.iter().enumerate().skip(frame.next_row) {
                    if ratio <= bound {
                        candidate.copy_from_slice(&search.key);
                        let left = search.basis[k];
                        candidate[left / 64] &= !(1 << (left % 64));
                        candidate[e / 64] |= 1 << (e % 64);
                        if !visited.contains(&candidate[..]) {
                            frame.next_row = k + 1;
                            found = Some((k, e));
                            break;
                        }
                    }
                }
            }
            if found.is_none() {
                frame.next_var += 1;
                frame.next_row = 0;
            }
        }
        match found {
            Some((k, e)) => {
                if bases >= max_bases {
                    return (bases, false);
                }
                let left = search.basis[k];
                search.pivot(k, e);
                visited.insert(search.key.clone().into_boxed_slice());
                bases += 1;
                if !search.report(&mut seen_vertices, &mut point, &mut zero, &mut visit) {
                    return (bases, true);
                }
                stack.push(Frame { back: Some((k, left)), next_var: 0, next_row: 0 });
            }
            None => {
                if let Some((k, left)) = stack.pop().and_then(|f| f.back) {
                    search.pivot(k, left);
                }
            }
        }
    }
    (bases, true)
}

/// Reduced costs within this of 0 make the reverse search's parent rule ambiguous.
const DUAL_TOLERANCE: f64 = 1e-11;

/// Random paths per polytope when estimating which one has fewer vertices.
const ESTIMATE_PROBES: usize = 2000;

/// Games with at most this many strategies in all skip the estimate (the search is cheap).
const ESTIMATE_ABOVE: usize = 24;

/// The reverse search's state at the origin of `{z ≥ 0 : M z ≤ 1}` (`None` if singular).
fn reverse_start(mat: &Array2<f64>) -> Option<Search<'_>> {
    let (c, d) = mat.dim();
    let nvars = c + d;
    let w = nvars + 1;
    let words = nvars.div_ceil(64);
    // Generic positive weights (fractional parts of multiples of the golden ratio).
    let cost = (0..nvars)
        .map(|v| if v < d { 1.0 + 0.5 * ((v as f64 + 1.0) * 0.618_033_988_749_895).fract() } else { 0.0 })
        .collect();
    let mut search = Search {
        mat,
        c,
        d,
        t: vec![0.0; c * w],
        basis: (d..nvars).collect(),
        key: vec![0; words],
        pivots_since_refresh: 0,
        prow: Vec::with_capacity(w),
        cost,
        check_feasible: false,
        rc: vec![0.0; w],
    };
    for v in d..nvars {
        search.key[v / 64] |= 1 << (v % 64);
    }
    search.refresh().then_some(search)
}

/// Knuth's estimate of the number of vertices the reverse search from `mat` visits: the mean
/// over `probes` random root-to-leaf paths of `1 + k₁ + k₁k₂ + …` (`k_i` the children at
/// depth `i`). `None` when the search would fail (see [`reverse_search`]).
fn estimate_vertices(mat: &Array2<f64>, probes: usize) -> Option<f64> {
    let mut search = reverse_start(mat)?;
    let nvars = search.c + search.d;
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut children = Vec::with_capacity(nvars);
    let mut path = Vec::new();
    let mut total = 0.0;
    for _ in 0..probes {
        let (mut estimate, mut weight) = (1.0, 1.0);
        loop {
            children.clear();
            for e in 0..nvars {
                if !search.is_basic(e)
                    && let Some(row) = search.child_row(e)?
                {
                    children.push((row, e));
                }
            }
            if children.is_empty() {
                break;
            }
            weight *= children.len() as f64;
            estimate += weight;
            // xorshift64
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let (row, e) = children[(state % children.len() as u64) as usize];
            path.push((row, search.basis[row]));
            search.pivot(row, e);
        }
        while let Some((row, left)) = path.pop() {
            search.pivot(row, left);
        }
        total += estimate;
    }
    Some(total / probes.max(1) as f64)
}

/// Reverse search (Avis–Fukuda) over the vertices of a *nondegenerate* `{z ≥ 0 : M z ≤ 1}`
/// (`M ≥ 1`, `c × d`): the parent of a vertex is its neighbour by one simplex pivot towards
/// the origin, for the objective `min Σ w_v z_v` with generic weights `w ∈ [1, 1.5)`, with
/// Bland's entering rule. Each vertex is visited once, with no memory of visited bases: a
/// neighbour is a child when the pivot back from it is the one Bland's rule picks there
/// (tested in O(d) from the current reduced costs). `None` when a ratio tie (a degenerate
/// vertex) or an ambiguous reduced cost is met; otherwise as [`enumerate`].
fn reverse_search(
    mat: &Array2<f64>,
    max_bases: usize,
    mut visit: impl FnMut(&VertexView<'_>) -> bool,
) -> Option<(usize, bool)> {
    let (c, d) = mat.dim();
    let nvars = c + d;
    let mut search = reverse_start(mat)?;
    let mut seen_vertices = FxSet::default();
    let mut point = vec![0.0; d];
    let mut zero = Bits::empty(nvars);
    if !search.report(&mut seen_vertices, &mut point, &mut zero, &mut visit) {
        return Some((1, true));
    }
    // The pivots from the root to the current vertex: (row, variable that left, next
    // entering variable to try at the parent).
    let mut stack: Vec<(usize, usize, usize)> = Vec::new();
    let mut bases = 1;
    let mut next_var = 0;
    loop {
        let mut child = None;
        while next_var < nvars {
            let e = next_var;
            next_var += 1;
            if search.is_basic(e) {
                continue;
            }
            if let Some(row) = search.child_row(e)? {
                child = Some((row, e));
                break;
            }
        }
        match child {
            Some((k, e)) => {
                if bases >= max_bases {
                    return Some((bases, false));
                }
                stack.push((k, search.basis[k], next_var));
                search.pivot(k, e);
                bases += 1;
                if !search.report(&mut seen_vertices, &mut point, &mut zero, &mut visit) {
                    return Some((bases, true));
                }
                next_var = 0;
            }
            None => {
                let Some((k, left, resume)) = stack.pop() else { break };
                search.pivot(k, left);
                next_var = resume;
            }
        }
    }
    Some((bases, true))
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    fn all(a: Array2<f64>, b: Array2<f64>) -> Vec<Solution> {
        VertexEnumeration::default().solve_all(&NormalFormGame::bimatrix(a, b).unwrap()).unwrap()
    }

    #[test]
    fn three_equilibria_games() {
        let s = all(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]]);
        assert_eq!(s.len(), 3);
        let s = all(array![[1., 0.], [-2., 3.]], array![[3., 2.], [-1., 0.]]);
        assert_eq!(s.len(), 3);
        assert!(s.iter().all(|s| s.certificate.nash_conv < 1e-14));
    }

    #[test]
    fn degenerate_zero_sum_extreme_equilibria() {
        let a = array![[0., -1., 1.], [-1., 0., 1.], [-1., 0., 1.]];
        let s = all(a.clone(), a.mapv(|v| -v));
        assert!(!s.is_empty());
        assert!(s.iter().all(|s| s.certificate.nash_conv < 1e-14 && s.is_distribution(1e-14)));
    }
}
