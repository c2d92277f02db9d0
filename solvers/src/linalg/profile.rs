//! Payoff matrices and mixed strategies of two-player games: normalisation into `[1, 2]`,
//! the equalising profile on given supports, and cleaning a computed profile.

use ndarray::{Array2, ArrayView2};

use super::lu_solve;

/// `(a − min) / range + 1`: the same game up to a positive affine map, with every entry in
/// `[1, 2]` (all ones when `a` is constant). Best-response polytopes need positive payoffs.
/// Computed on halves, so payoffs up to `±f64::MAX` do not overflow (for normal numbers
/// halving is exact, so the result is the same as without it).
pub(crate) fn normalized(a: ArrayView2<'_, f64>) -> Array2<f64> {
    let map = Normalization::of(a);
    a.mapv(|x| map.apply(x))
}

/// The affine map of [`normalized`]: `x ↦ (x/2 − lo/2) / half_range + 1`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Normalization {
    lo: f64,
    half_range: f64,
}

impl Normalization {
    /// The map that takes `a`'s entries onto `[1, 2]`.
    pub(crate) fn of(a: ArrayView2<'_, f64>) -> Self {
        let (lo, hi) = metagame_games::extremes(a);
        Self { lo, half_range: hi / 2.0 - lo / 2.0 }
    }

    /// The image of `x` (1 when the matrix the map was made from is constant).
    pub(crate) fn apply(self, x: f64) -> f64 {
        if self.half_range > 0.0 { (x / 2.0 - self.lo / 2.0) / self.half_range + 1.0 } else { 1.0 }
    }
}

/// The profile that makes the row player indifferent among `rows` (using the column
/// player's mix on `cols`) and the column player indifferent among `cols`: solves
/// `A[rows, cols] y = v·1, Σ y = 1` and `B[rows, cols]ᵀ x = u·1, Σ x = 1`.
///
/// Returns full-length `(x, y)` (zero off the supports), or `None` when the supports differ
/// in size or a system is singular. Signs are not checked.
///
/// # Complexity
///
/// O(k³) for supports of size k.
pub(crate) fn equalize(
    a: ArrayView2<'_, f64>,
    b: ArrayView2<'_, f64>,
    rows: &[usize],
    cols: &[usize],
) -> Option<(Vec<f64>, Vec<f64>)> {
    let k = rows.len();
    if k != cols.len() || k == 0 {
        return None;
    }
    let y = indifferent_mix(k, |r, c| a[[rows[r], cols[c]]])?;
    let x = indifferent_mix(k, |r, c| b[[rows[c], cols[r]]])?;
    let mut xf = vec![0.0; a.nrows()];
    let mut yf = vec![0.0; a.ncols()];
    for (&i, v) in rows.iter().zip(x) {
        xf[i] = v;
    }
    for (&j, v) in cols.iter().zip(y) {
        yf[j] = v;
    }
    Some((xf, yf))
}

/// Solve `Σ_c m(r, c) z_c − v = 0` for every `r < k` and `Σ z = 1`; returns `z`.
fn indifferent_mix(k: usize, m: impl Fn(usize, usize) -> f64) -> Option<Vec<f64>> {
    let n = k + 1;
    let mut mat = vec![0.0; n * n];
    let mut rhs = vec![0.0; n];
    for r in 0..k {
        for c in 0..k {
            mat[r * n + c] = m(r, c);
        }
        mat[r * n + k] = -1.0;
    }
    for c in 0..k {
        mat[k * n + c] = 1.0;
    }
    rhs[k] = 1.0;
    if !lu_solve(&mut mat, &mut rhs, n) {
        return None;
    }
    rhs.truncate(k);
    rhs.iter().all(|v| v.is_finite()).then_some(rhs)
}

/// Clip entries in `[-tolerance, 0)` to 0 and renormalise; `None` if an entry is below
/// `-tolerance` or the sum is not positive.
pub(crate) fn clean_distribution(mut s: Vec<f64>, tolerance: f64) -> Option<Vec<f64>> {
    if s.iter().any(|&v| v.is_nan() || v < -tolerance) {
        return None;
    }
    for v in s.iter_mut() {
        *v = v.max(0.0);
    }
    let total: f64 = s.iter().sum();
    if total.is_nan() || total <= 0.0 {
        return None;
    }
    for v in s.iter_mut() {
        *v /= total;
    }
    Some(s)
}

/// Indices where `s` is positive.
pub(crate) fn support(s: &[f64]) -> Vec<usize> {
    s.iter().enumerate().filter(|&(_, &v)| v > 0.0).map(|(i, _)| i).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn equalize_battle_of_the_sexes() {
        let a = array![[3., 0.], [0., 2.]];
        let b = array![[2., 0.], [0., 3.]];
        let (x, y) = equalize(a.view(), b.view(), &[0, 1], &[0, 1]).unwrap();
        assert!((x[0] - 0.6).abs() < 1e-15 && (y[0] - 0.4).abs() < 1e-15);
    }
}
