//! Householder QR, for the logit solver's path tangents, minimum-norm corrector steps and
//! least-squares Newton steps.

use super::{dot_in_order, norm};

/// Householder QR of a column-major `rows × cols` matrix (`rows ≥ cols`), in place: the
/// reflectors below the diagonal (with `betas`), `R` above it and in `diagonal`.
pub(crate) struct Qr {
    rows: usize,
    cols: usize,
    /// The column-major `rows × cols` matrix: filled by the caller, then factorised in place
    /// by [`Qr::factor`].
    pub(crate) matrix: Vec<f64>,
    betas: Vec<f64>,
    diagonal: Vec<f64>,
    work: Vec<f64>,
}

impl Qr {
    /// A zeroed `rows × cols` matrix (`rows ≥ cols`) with its work space.
    pub(crate) fn new(rows: usize, cols: usize) -> Self {
        Self {
            rows,
            cols,
            matrix: vec![0.0; rows * cols],
            betas: vec![0.0; cols],
            diagonal: vec![0.0; cols],
            work: vec![0.0; rows],
        }
    }

    /// Factorise [`Qr::matrix`] in place.
    pub(crate) fn factor(&mut self) {
        let (rows, cols) = (self.rows, self.cols);
        for k in 0..cols {
            let (head, tail) = self.matrix.split_at_mut((k + 1) * rows);
            let v = &mut head[k * rows + k..];
            let length = norm(v);
            if length == 0.0 {
                self.betas[k] = 0.0;
                self.diagonal[k] = 0.0;
                continue;
            }
            let alpha = if v[0] > 0.0 { -length } else { length };
            v[0] -= alpha;
            let v_norm2: f64 = v.iter().map(|x| x * x).sum();
            let beta = if v_norm2 > 0.0 { 2.0 / v_norm2 } else { 0.0 };
            self.betas[k] = beta;
            self.diagonal[k] = alpha;
            for column in tail.chunks_exact_mut(rows) {
                let c = &mut column[k..];
                let s = beta * dot_in_order(v, c);
                if s != 0.0 {
                    c.iter_mut().zip(v.iter()).for_each(|(ci, vi)| *ci -= s * vi);
                }
            }
        }
    }

    /// `x ← H_k x` for reflector `k`.
    fn reflect(&self, k: usize, x: &mut [f64]) {
        let v = &self.matrix[k * self.rows + k..(k + 1) * self.rows];
        let s = self.betas[k] * dot_in_order(v, &x[k..]);
        if s != 0.0 {
            x[k..].iter_mut().zip(v).for_each(|(xi, vi)| *xi -= s * vi);
        }
    }

    /// `x ← Q x`.
    pub(crate) fn apply_q(&self, x: &mut [f64]) {
        for k in (0..self.cols).rev() {
            self.reflect(k, x);
        }
    }

    /// The last column of `Q` (for a `(N+1) × N` factorisation of `Jᵀ`: the kernel of `J`,
    /// the path's tangent), unit length.
    pub(crate) fn null_vector(&mut self, out: &mut [f64]) {
        out.fill(0.0);
        out[self.rows - 1] = 1.0;
        self.apply_q(out);
    }

    /// With `self` the factorisation of `Jᵀ`: the minimum-norm solution of `J d = b`.
    pub(crate) fn min_norm_solve(&mut self, b: &[f64], d: &mut [f64]) {
        // J = Rᵀ Qᵀ: solve Rᵀ w = b (forward), then d = Q [w; 0].
        let rows = self.rows;
        let w = &mut self.work;
        w.fill(0.0);
        for k in 0..self.cols {
            let mut s = b[k];
            for (i, wi) in w.iter().enumerate().take(k) {
                s -= self.matrix[k * rows + i] * wi;
            }
            w[k] = s / self.diagonal[k];
        }
        d.copy_from_slice(&self.work);
        self.apply_q(d);
    }

    /// The least-squares solution of `A x = b`; `b` is overwritten. `false` when `R` is
    /// singular.
    pub(crate) fn least_squares(&self, b: &mut [f64], x: &mut [f64]) -> bool {
        for k in 0..self.cols {
            self.reflect(k, b);
        }
        let rows = self.rows;
        for k in (0..self.cols).rev() {
            let mut s = b[k];
            for (i, xi) in x.iter().enumerate().skip(k + 1) {
                s -= self.matrix[i * rows + k] * xi;
            }
            if self.diagonal[k] == 0.0 {
                return false;
            }
            x[k] = s / self.diagonal[k];
        }
        x.iter().all(|v| v.is_finite())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn qr_solves_least_squares_and_min_norm() {
        // A 3×2 full-rank matrix, column-major.
        let mut qr = Qr::new(3, 2);
        qr.matrix.copy_from_slice(&[1.0, 2.0, 2.0, 0.0, 1.0, 3.0]);
        qr.factor();
        let mut b = vec![1.0, 2.0, 2.0];
        let mut x = vec![0.0; 2];
        assert!(qr.least_squares(&mut b, &mut x));
        assert!((x[0] - 1.0).abs() < 1e-12 && x[1].abs() < 1e-12, "{x:?}");
        // J = Aᵀ (2×3): min-norm solution of J d = (1, 1) is in the row space of J and solves it.
        let mut d = vec![0.0; 3];
        qr.min_norm_solve(&[1.0, 1.0], &mut d);
        let j = [[1.0, 2.0, 2.0], [0.0, 1.0, 3.0]];
        for row in j {
            assert!((dot_in_order(&row, &d) - 1.0).abs() < 1e-12);
        }
        let mut t = vec![0.0; 3];
        qr.null_vector(&mut t);
        for row in j {
            assert!(dot_in_order(&row, &t).abs() < 1e-12);
        }
        assert!((norm(&t) - 1.0).abs() < 1e-12);
        assert!(dot_in_order(&t, &d).abs() < 1e-12, "minimum norm: d is orthogonal to the kernel");
    }
}
