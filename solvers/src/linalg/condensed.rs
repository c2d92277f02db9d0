//! The elimination step of a condensed-tableau simplex pivot (Tucker's tableau, as in
//! [`crate::lp`]'s simplex), compiled for the widest SIMD the CPU has: pulp picks AVX-512,
//! AVX2 or plain SSE2 at run time, as for [`crate::dynamics`]'s products. The arithmetic is the
//! same scalar sequence on every path (no fused multiply-add), so every CPU gets the same
//! bits.

/// Eliminates the entering column from every row of a row-major condensed tableau but the
/// pivot row, given the pivot row already divided by the pivot.
///
/// For each row `i ≠ r` with `f = t[i][s] ≠ 0`: `t[i][j] −= f · prow[j]` for every `j`, then
/// `t[i][s] = −f · inv` (the leaving variable's column) and `rhs[i] −= f · br`. With
/// `norms`, the steepest-edge weights are accumulated as well: `norms[j] += t[i][j]²` for
/// every row `i ≠ r` of the new tableau (the caller has set `norms[j] = 1 + prow[j]²`,
/// `norms[s] = 1 + inv²` beforehand).
pub(crate) struct Eliminate<'a> {
    /// The tableau, `rhs.len()` rows of `width` entries.
    pub(crate) t: &'a mut [f64],
    pub(crate) width: usize,
    /// Pivot row and column.
    pub(crate) r: usize,
    pub(crate) s: usize,
    /// Row `r` divided by the pivot, with `prow[s] = 0`.
    pub(crate) prow: &'a [f64],
    /// One over the pivot.
    pub(crate) inv: f64,
    pub(crate) rhs: &'a mut [f64],
    /// `rhs[r]` divided by the pivot.
    pub(crate) br: f64,
    pub(crate) norms: Option<&'a mut [f64]>,
}

impl Eliminate<'_> {
    /// Runs the elimination on `arch`'s widest instruction set.
    pub(crate) fn run(self, arch: pulp::Arch) {
        arch.dispatch(self);
    }
}

impl pulp::WithSimd for Eliminate<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self { t, width: n, r, s, prow, inv, rhs, br, norms } = self;
        let rows = t.chunks_exact_mut(n).zip(rhs.iter_mut()).enumerate();
        match norms {
            Some(norms) => {
                // Rows four at a time: each weight is loaded and stored once per four rows
                // (a weight's sum runs through memory from row to row), its squares still
                // added in row order, so the bits are those of one row at a time.
                let mut entering = norms[s];
                let mut pending: [Option<(&mut [f64], &mut f64)>; BLOCK] = [None, None, None, None];
                let mut count = 0;
                for (_, (row, b)) in rows.filter(|(i, _)| *i != r) {
                    // The entering column's weight, in the order one row at a time gives it.
                    let f = row[s];
                    if f != 0.0 {
                        let new = -f * inv;
                        entering = (entering + f * f) + (new * new - f * f);
                    }
                    pending[count] = Some((row, b));
                    count += 1;
                    if count == BLOCK {
                        let [Some(r0), Some(r1), Some(r2), Some(r3)] = std::mem::take(&mut pending) else {
                            unreachable!("a full block")
                        };
                        eliminate_block([r0, r1, r2, r3], prow, s, inv, br, norms);
                        count = 0;
                    }
                }
                for (row, b) in pending.into_iter().flatten() {
                    eliminate_row(row, b, prow, s, inv, br, norms);
                }
                norms[s] = entering;
            }
            None => {
                for (i, (row, b)) in rows {
                    let f = row[s];
                    if i == r || f == 0.0 {
                        continue;
                    }
                    for (v, &q) in row.iter_mut().zip(prow) {
                        *v -= f * q;
                    }
                    row[s] = -f * inv;
                    *b -= f * br;
                }
            }
        }
    }
}

/// Rows per block of [`eliminate_block`].
const BLOCK: usize = 4;

/// [`eliminate_row`] on [`BLOCK`] rows at once, in one pass over the weights: each row's
/// entries are those [`eliminate_row`] gives (a row with `f = 0` is left as it is) and each
/// weight gets the rows' squares in row order. The entering column's weight is left to the
/// caller.
#[inline(always)]
fn eliminate_block(
    block: [(&mut [f64], &mut f64); BLOCK],
    prow: &[f64],
    s: usize,
    inv: f64,
    br: f64,
    norms: &mut [f64],
) {
    let [(r0, b0), (r1, b1), (r2, b2), (r3, b3)] = block;
    let f = [r0[s], r1[s], r2[s], r3[s]];
    let n = prow.len();
    let (r0, r1, r2, r3) = (&mut r0[..n], &mut r1[..n], &mut r2[..n], &mut r3[..n]);
    let keep = f.map(|f| f == 0.0);
    for j in 0..n {
        let q = prow[j];
        // A row with f = 0 keeps its entry (subtracting ±0 could flip the sign of a zero).
        let v0 = if keep[0] { r0[j] } else { r0[j] - f[0] * q };
        let v1 = if keep[1] { r1[j] } else { r1[j] - f[1] * q };
        let v2 = if keep[2] { r2[j] } else { r2[j] - f[2] * q };
        let v3 = if keep[3] { r3[j] } else { r3[j] - f[3] * q };
        (r0[j], r1[j], r2[j], r3[j]) = (v0, v1, v2, v3);
        norms[j] = (((norms[j] + v0 * v0) + v1 * v1) + v2 * v2) + v3 * v3;
    }
    for ((row, b), f) in [(r0, b0), (r1, b1), (r2, b2), (r3, b3)].into_iter().zip(f) {
        if f != 0.0 {
            row[s] = -f * inv;
            *b -= f * br;
        }
    }
}

/// One row of [`Eliminate`] with weights.
#[inline(always)]
fn eliminate_row(row: &mut [f64], b: &mut f64, prow: &[f64], s: usize, inv: f64, br: f64, norms: &mut [f64]) {
    let f = row[s];
    if f != 0.0 {
        for ((v, &q), w) in row.iter_mut().zip(prow).zip(norms.iter_mut()) {
            *v -= f * q;
            *w += *v * *v;
        }
        row[s] = -f * inv;
        norms[s] += row[s] * row[s] - f * f;
        *b -= f * br;
    } else {
        for (&v, w) in row.iter().zip(norms.iter_mut()) {
            *w += v * v;
        }
    }
}

/// The steepest-edge weights of a condensed tableau, `norms[j] = 1 + Σ_i t[i][j]²`, the
/// squares summed over the rows in order before the one is added (for a tableau rebuilt
/// by pivots without weights).
pub(crate) struct Weights<'a> {
    pub(crate) t: &'a [f64],
    pub(crate) width: usize,
    pub(crate) norms: &'a mut [f64],
}

impl Weights<'_> {
    /// Runs the sums on `arch`'s widest instruction set.
    pub(crate) fn run(self, arch: pulp::Arch) {
        arch.dispatch(self);
    }
}

impl pulp::WithSimd for Weights<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        let Self { t, width: n, norms } = self;
        norms.iter_mut().for_each(|w| *w = 0.0);
        for row in t.chunks_exact(n) {
            for (&v, w) in row.iter().zip(norms.iter_mut()) {
                *w += v * v;
            }
        }
        norms.iter_mut().for_each(|w| *w += 1.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The kernel against the plain loop it replaces, with and without weights: the same
    /// bits.
    #[test]
    fn elimination_matches_the_scalar_pivot() {
        // Row counts that leave every remainder of the kernel's blocks of four rows.
        for m in [5, 13, 14, 15, 16] {
            elimination_matches_the_scalar_pivot_with(m);
        }
    }

    fn elimination_matches_the_scalar_pivot_with(m: usize) {
        let (n, r, s) = (7, 2, 3);
        let t0: Vec<f64> = (0..m * n).map(|k| ((k * 37 % 11) as f64 - 4.0) / 3.0).collect();
        let mut t0 = t0;
        t0[(m - 2) * n + s] = 0.0; // a row with f = 0
        t0[(m - 2) * n + 1] = -0.0; // whose zeros keep their signs
        let rhs0: Vec<f64> = (0..m).map(|i| 1.0 + i as f64 / 7.0).collect();
        let inv = 1.0 / t0[r * n + s];
        let mut prow: Vec<f64> = t0[r * n..(r + 1) * n].iter().map(|v| v * inv).collect();
        prow[s] = 0.0;
        let br = rhs0[r] * inv;
        // The reference: the loop of the simplex before the kernel.
        let (mut t1, mut rhs1) = (t0.clone(), rhs0.clone());
        let mut w1: Vec<f64> = prow.iter().map(|q| 1.0 + q * q).collect();
        w1[s] = 1.0 + inv * inv;
        for i in 0..m {
            if i == r {
                continue;
            }
            let f = t1[i * n + s];
            if f != 0.0 {
                for j in 0..n {
                    t1[i * n + j] -= f * prow[j];
                    w1[j] += t1[i * n + j] * t1[i * n + j];
                }
                t1[i * n + s] = -f * inv;
                w1[s] += t1[i * n + s] * t1[i * n + s] - f * f;
                rhs1[i] -= f * br;
            } else {
                for j in 0..n {
                    w1[j] += t1[i * n + j] * t1[i * n + j];
                }
            }
        }
        let arch = pulp::Arch::new();
        let (mut t2, mut rhs2) = (t0.clone(), rhs0.clone());
        let mut w2: Vec<f64> = prow.iter().map(|q| 1.0 + q * q).collect();
        w2[s] = 1.0 + inv * inv;
        Eliminate { t: &mut t2, width: n, r, s, prow: &prow, inv, rhs: &mut rhs2, br, norms: Some(&mut w2) }
            .run(arch);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!((bits(&t1), bits(&rhs1), bits(&w1)), (bits(&t2), bits(&rhs2), bits(&w2)), "{m} rows");
        let (mut t3, mut rhs3) = (t0, rhs0);
        Eliminate { t: &mut t3, width: n, r, s, prow: &prow, inv, rhs: &mut rhs3, br, norms: None }.run(arch);
        assert_eq!((bits(&t1), bits(&rhs1)), (bits(&t3), bits(&rhs3)), "{m} rows");
        // Weights recomputed from the new tableau (pivot row in place) agree up to rounding.
        let mut prow_in = prow.clone();
        prow_in[s] = inv;
        t3[r * n..(r + 1) * n].copy_from_slice(&prow_in);
        let mut w3 = vec![0.0; n];
        Weights { t: &t3, width: n, norms: &mut w3 }.run(arch);
        for (j, (a, b)) in w1.iter().zip(&w3).enumerate() {
            let plain = 1.0 + (0..m).map(|i| t3[i * n + j] * t3[i * n + j]).sum::<f64>();
            assert_eq!(*b, plain, "{j}");
            assert!((a - b).abs() <= 1e-14 * b, "{j}: {a} {b}");
        }
    }
}
