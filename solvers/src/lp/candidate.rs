//! What every stage of [`LpNash`](super::LpNash) proposes: a candidate profile with its
//! value and primal–dual gap on the game ([`Candidate`]), read off a simplex tableau,
//! polished on its supports, or placed back in the whole game from a subgame (a double
//! oracle's round); the binary scaling they are certified on, and the stages' pivot
//! tolerances. The cold stages (`lp.rs`) and the warm memory (`memory.rs`) share them.

use ndarray::{Array2, ArrayView2};

use super::simplex::Simplex;
use crate::linalg;

/// Relative pivot tolerance of the first simplex clean-up.
pub(super) const COARSE_PIVOT_TOLERANCE: f64 = 1e-9;
/// Relative pivot tolerance of the second try and of the subgames in [`refine`](super::refine): resolves
/// differences between near-duplicate strategies down to about `1e-11` of the range.
pub(super) const FINE_PIVOT_TOLERANCE: f64 = 1e-11;

/// The better-certified on `exact` (a binary scaling of the game) of the profile read off
/// `lp`'s tableau and the one polished on its supports.
pub(super) fn tableau_candidate(exact: ArrayView2<'_, f64>, lp: &Simplex) -> Candidate {
    tableau_candidate_within(exact, lp, f64::NEG_INFINITY)
}

/// [`tableau_candidate`], but the profile read off the tableau alone when its gap on
/// `exact` is within `enough` (polishing, two LU solves on the supports, cannot improve an
/// answer that is already certified).
pub(super) fn tableau_candidate_within(exact: ArrayView2<'_, f64>, lp: &Simplex, enough: f64) -> Candidate {
    let raw = Candidate::new(exact, lp.profile());
    if raw.within(enough) {
        return raw;
    }
    let polished = polish(exact, &lp.supports()).map(|p| Candidate::new(exact, p));
    raw.or(polished)
}

/// The entries of `a` on `rows × cols`, mapped by `f`, gathered a row at a time.
pub(super) fn submatrix(
    a: ArrayView2<'_, f64>,
    rows: &[usize],
    cols: &[usize],
    f: impl Fn(f64) -> f64,
) -> Array2<f64> {
    let mut entries = Vec::with_capacity(rows.len() * cols.len());
    for &i in rows {
        let row = a.row(i);
        entries.extend(cols.iter().map(|&j| f(row[j])));
    }
    // INVARIANT: one entry per pair of `rows × cols`.
    Array2::from_shape_vec((rows.len(), cols.len()), entries).expect("rows × cols entries")
}

/// One round of a double oracle on `a`: the answer `local` of the subgame `rows × cols`
/// placed in the whole game, and the strategies that beat the subgame's own bounds there
/// (the ones to join; none of the subgame's own can).
pub(super) fn oracle_round(
    a: ArrayView2<'_, f64>,
    rows: &[usize],
    cols: &[usize],
    local: &[Vec<f64>],
) -> (Candidate, Vec<usize>, Vec<usize>) {
    let (m, n) = a.dim();
    let mut strategies = vec![vec![0.0; m], vec![0.0; n]];
    for (&i, &v) in rows.iter().zip(&local[0]) {
        strategies[0][i] = v;
    }
    for (&j, &v) in cols.iter().zip(&local[1]) {
        strategies[1][j] = v;
    }
    let (ay, xa) = payoff_vectors(a, &strategies);
    let sub_upper = rows.iter().map(|&i| ay[i]).fold(f64::NEG_INFINITY, f64::max);
    let sub_lower = cols.iter().map(|&j| xa[j]).fold(f64::INFINITY, f64::min);
    let new_rows: Vec<usize> = (0..m).filter(|&i| ay[i] > sub_upper).collect();
    let new_cols: Vec<usize> = (0..n).filter(|&j| xa[j] < sub_lower).collect();
    let (value, gap) = value_and_gap_from(&strategies[0], &ay, &xa);
    (Candidate { strategies, value, gap }, new_rows, new_cols)
}

/// `A y` and `Aᵀ x` for the profile `(x, y)`.
pub(super) fn payoff_vectors(
    a: ArrayView2<'_, f64>,
    s: &[Vec<f64>],
) -> (ndarray::Array1<f64>, ndarray::Array1<f64>) {
    let y = ndarray::ArrayView1::from(&s[1][..]);
    (a.dot(&y), metagame_games::transposed_product(a, &s[0]).into())
}

/// A candidate profile with its value and primal–dual gap on the original matrix.
pub(super) struct Candidate {
    pub(super) strategies: Vec<Vec<f64>>,
    pub(super) value: f64,
    pub(super) gap: f64,
}

impl Candidate {
    pub(super) fn new(a: ArrayView2<'_, f64>, strategies: Vec<Vec<f64>>) -> Self {
        let (value, gap) = value_and_gap(a, &strategies);
        Self { strategies, value, gap }
    }

    /// True when the gap is at most `limit` (false for a NaN gap).
    pub(super) fn within(&self, limit: f64) -> bool {
        self.gap <= limit
    }

    /// The better-certified of the two (NaN gaps lose).
    pub(super) fn or(self, other: Option<Self>) -> Self {
        match other {
            Some(o) if o.gap < self.gap || self.gap.is_nan() => o,
            _ => self,
        }
    }
}

/// `(xᵀAy, max_i (Ay)_i − min_j (xᵀA)_j)`: the profile's value and the gap between the
/// upper bound the column strategy proves and the lower bound the row strategy proves.
pub(super) fn value_and_gap(a: ArrayView2<'_, f64>, s: &[Vec<f64>]) -> (f64, f64) {
    let (ay, xa) = payoff_vectors(a, s);
    value_and_gap_from(&s[0], &ay, &xa)
}

/// [`value_and_gap`] from the row strategy `x` and the payoff vectors `A y` and `Aᵀ x`.
pub(super) fn value_and_gap_from(
    x: &[f64],
    ay: &ndarray::Array1<f64>,
    xa: &ndarray::Array1<f64>,
) -> (f64, f64) {
    let value = ndarray::ArrayView1::from(x).dot(ay);
    let upper = ay.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lower = xa.iter().copied().fold(f64::INFINITY, f64::min);
    (value, (upper - lower).max(0.0))
}

/// `a` times the power of two that brings its largest entry into `[0.5, 1)`: exact (so
/// polishing on it gives the same bits as on `a`) and safe from overflow.
pub(super) fn binary_scaled(a: ArrayView2<'_, f64>) -> Array2<f64> {
    let scale = BinaryScale::of(metagame_games::extremes(a));
    a.mapv(|x| scale.apply(x))
}

/// The power of two [`binary_scaled`] multiplies by, as two factors so that neither over-
/// or underflows (identity for a zero or non-finite largest entry).
#[derive(Clone, Copy, Debug)]
pub(super) struct BinaryScale(f64, f64);

impl BinaryScale {
    /// The scale for a matrix whose extremes are `(lo, hi)`.
    pub(super) fn of((lo, hi): (f64, f64)) -> Self {
        let largest = hi.max(-lo);
        if largest == 0.0 || !largest.is_finite() {
            return Self(1.0, 1.0);
        }
        let exponent = largest.log2().floor() as i32 + 1;
        let (first, second) = (exponent / 2, exponent - exponent / 2);
        Self(2f64.powi(-first), 2f64.powi(-second))
    }

    pub(super) fn apply(self, x: f64) -> f64 {
        x * self.0 * self.1
    }
}

/// Re-solve the equalising conditions on the supports `(rows, cols)` (of the final basis,
/// or of an interior point).
pub(super) fn polish(a: ArrayView2<'_, f64>, supports: &(Vec<usize>, Vec<usize>)) -> Option<Vec<Vec<f64>>> {
    let (x, y) = linalg::equalize(a, a, &supports.0, &supports.1)?;
    let x = linalg::clean_distribution(x, 1e-9)?;
    let y = linalg::clean_distribution(y, 1e-9)?;
    Some(vec![x, y])
}
