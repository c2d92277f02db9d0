//! Shared machinery of the iterative solvers (fictitious play, regret matching, Hedge,
//! replicator dynamics): allocation-free deviation payoffs with a two-player fast path,
//! the stopping rule, and setting checks.

use metagame_games::NormalFormGame;

use crate::{Result, SolveError};

/// Computes `u_p(s, σ_{-p})` for every player `p` and pure strategy `s` without allocating.
pub(crate) enum Kernel<'a> {
    /// Two players: the row player's matrix `a` (row-major, `n0 × n1`) and the column
    /// player's matrix transposed, `bt` (row-major, `n1 × n0`), so both products read
    /// contiguous rows.
    Matrix { a: Vec<f64>, bt: Vec<f64>, n0: usize, n1: usize },
    /// Any number of players: a pass over the payoff tensors with prefix/suffix products.
    Tensor {
        payoffs: Vec<&'a [f64]>,
        shape: Vec<usize>,
        index: Vec<usize>,
        prefix: Vec<f64>,
        suffix: Vec<f64>,
    },
}

impl<'a> Kernel<'a> {
    /// The kernel for `game`.
    pub(crate) fn new(game: &'a NormalFormGame) -> Self {
        if let (Some(a), Some(b)) = (game.matrix(0), game.matrix(1)) {
            let (n0, n1) = a.dim();
            let a_flat: Vec<f64> = a.iter().copied().collect();
            let bt: Vec<f64> = b.t().iter().copied().collect();
            return Kernel::Matrix { a: a_flat, bt, n0, n1 };
        }
        let n = game.num_players();
        let payoffs = (0..n)
            .map(|p| {
                // INVARIANT: `NormalFormGame::new` stores every tensor in standard layout.
                game.payoffs(p).as_slice().expect("standard layout")
            })
            .collect();
        Kernel::Tensor {
            payoffs,
            shape: game.shape().to_vec(),
            index: vec![0; n],
            prefix: vec![1.0; n + 1],
            suffix: vec![1.0; n + 1],
        }
    }

    /// `out[p][s] = u_p(s, σ_{-p})`.
    pub(crate) fn deviation_payoffs(&mut self, strategies: &[Vec<f64>], out: &mut [Vec<f64>]) {
        match self {
            Kernel::Matrix { a, bt, n0, n1 } => {
                let (x, y) = (&strategies[0], &strategies[1]);
                matvec(a, *n1, y, &mut out[0]);
                matvec(bt, *n0, x, &mut out[1]);
            }
            Kernel::Tensor { payoffs, shape, index, prefix, suffix } => {
                let n = shape.len();
                for o in out.iter_mut() {
                    o.iter_mut().for_each(|v| *v = 0.0);
                }
                index.iter_mut().for_each(|i| *i = 0);
                let total: usize = shape.iter().product();
                // `flat` indexes every player's tensor, not just one.
                #[allow(clippy::needless_range_loop)]
                for flat in 0..total {
                    for p in 0..n {
                        prefix[p + 1] = prefix[p] * strategies[p][index[p]];
                    }
                    for p in (0..n).rev() {
                        suffix[p] = suffix[p + 1] * strategies[p][index[p]];
                    }
                    for p in 0..n {
                        let w = prefix[p] * suffix[p + 1];
                        if w != 0.0 {
                            out[p][index[p]] += w * payoffs[p][flat];
                        }
                    }
                    for p in (0..n).rev() {
                        index[p] += 1;
                        if index[p] < shape[p] {
                            break;
                        }
                        index[p] = 0;
                    }
                }
            }
        }
    }
}

/// `out = M·v` for a row-major `M` with `cols` columns. Four rows at a time share each
/// load of `v` and give the CPU eight independent sums to overlap.
fn matvec(m: &[f64], cols: usize, v: &[f64], out: &mut [f64]) {
    let mut rows = m.chunks_exact(4 * cols);
    let mut outs = out.chunks_exact_mut(4);
    for (block, o) in (&mut rows).zip(&mut outs) {
        let (r0, rest) = block.split_at(cols);
        let (r1, rest) = rest.split_at(cols);
        let (r2, r3) = rest.split_at(cols);
        let mut acc = [0.0f64; 8];
        let quads =
            r0.chunks_exact(2).zip(r1.chunks_exact(2)).zip(r2.chunks_exact(2)).zip(r3.chunks_exact(2));
        for ((((a, b), c), d), w) in quads.zip(v.chunks_exact(2)) {
            acc[0] += a[0] * w[0];
            acc[1] += a[1] * w[1];
            acc[2] += b[0] * w[0];
            acc[3] += b[1] * w[1];
            acc[4] += c[0] * w[0];
            acc[5] += c[1] * w[1];
            acc[6] += d[0] * w[0];
            acc[7] += d[1] * w[1];
        }
        if cols % 2 == 1 {
            let j = cols - 1;
            acc[0] += r0[j] * v[j];
            acc[2] += r1[j] * v[j];
            acc[4] += r2[j] * v[j];
            acc[6] += r3[j] * v[j];
        }
        o[0] = acc[0] + acc[1];
        o[1] = acc[2] + acc[3];
        o[2] = acc[4] + acc[5];
        o[3] = acc[6] + acc[7];
    }
    for (row, o) in rows.remainder().chunks_exact(cols).zip(outs.into_remainder()) {
        *o = dot(row, v);
    }
}

/// Dot product with four accumulators (lets the compiler vectorise).
#[inline]
pub(crate) fn dot(a: &[f64], b: &[f64]) -> f64 {
    let mut acc = [0.0f64; 4];
    let ca = a.chunks_exact(4);
    let cb = b.chunks_exact(4);
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..4 {
            acc[k] += x[k] * y[k];
        }
    }
    let mut s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    for (x, y) in ra.iter().zip(rb) {
        s += x * y;
    }
    s
}

/// NashConv of `strategies` from deviation payoffs already in `values`.
pub(crate) fn nash_conv_from(strategies: &[Vec<f64>], values: &[Vec<f64>]) -> f64 {
    strategies
        .iter()
        .zip(values)
        .map(|(s, v)| {
            let best = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            (best - dot(s, v)).max(0.0)
        })
        .sum()
}

/// Uniform strategies for every player of `game`.
pub(crate) fn uniform(game: &NormalFormGame) -> Vec<Vec<f64>> {
    game.shape().iter().map(|&k| vec![1.0 / k as f64; k]).collect()
}

/// Zeroed buffers shaped like the strategies of `game`.
pub(crate) fn zeros(game: &NormalFormGame) -> Vec<Vec<f64>> {
    game.shape().iter().map(|&k| vec![0.0; k]).collect()
}

/// Rescale every vector to sum to 1 (removes rounding drift of long averages).
pub(crate) fn normalise(strategies: &mut [Vec<f64>]) {
    for s in strategies.iter_mut() {
        s.iter_mut().for_each(|p| *p = p.max(0.0));
        let total: f64 = s.iter().sum();
        if total > 0.0 {
            s.iter_mut().for_each(|p| *p /= total);
        } else {
            let k = s.len() as f64;
            s.iter_mut().for_each(|p| *p = 1.0 / k);
        }
    }
}

/// The optional early stop shared by the iterative solvers: every `check_every` iterations
/// the NashConv of the current answer is computed and the run stops once it is at most
/// `target_nash_conv`.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Stopping {
    pub(crate) target_nash_conv: Option<f64>,
    pub(crate) check_every: usize,
}

impl Default for Stopping {
    fn default() -> Self {
        Self { target_nash_conv: None, check_every: 1000 }
    }
}

impl Stopping {
    /// True when iteration `t` (1-based) is a checkpoint.
    #[inline]
    pub(crate) fn is_checkpoint(&self, t: usize) -> bool {
        self.target_nash_conv.is_some() && t.is_multiple_of(self.check_every)
    }

    pub(crate) fn validate(&self, solver: &'static str) -> Result<()> {
        if self.check_every == 0 {
            return Err(invalid(solver, "check_every must be at least 1"));
        }
        if let Some(t) = self.target_nash_conv
            && !(t.is_finite() && t >= 0.0)
        {
            return Err(invalid(solver, format!("target_nash_conv must be finite and >= 0, got {t}")));
        }
        Ok(())
    }

    /// True when `nash_conv` meets the target.
    pub(crate) fn reached(&self, nash_conv: f64) -> bool {
        self.target_nash_conv.is_some_and(|t| nash_conv <= t)
    }
}

/// `SolveError::InvalidConfig` for `solver`.
pub(crate) fn invalid(solver: &'static str, reason: impl Into<String>) -> SolveError {
    SolveError::InvalidConfig { solver, reason: reason.into() }
}

/// Checks an iteration count (at least 1).
pub(crate) fn check_iterations(solver: &'static str, iterations: usize) -> Result<()> {
    if iterations == 0 {
        return Err(invalid(solver, "iterations must be at least 1"));
    }
    Ok(())
}

/// Checks an exploration/mixing weight in [0, 1).
pub(crate) fn check_gamma(solver: &'static str, gamma: f64) -> Result<()> {
    if !(gamma.is_finite() && (0.0..1.0).contains(&gamma)) {
        return Err(invalid(solver, format!("gamma must be in [0, 1), got {gamma}")));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn};

    #[test]
    fn kernels_match_the_game() {
        let a = ndarray::array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b = ndarray::array![[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]];
        let game = NormalFormGame::bimatrix(a, b).unwrap();
        let s = vec![vec![0.3, 0.7], vec![0.2, 0.5, 0.3]];
        let mut out = zeros(&game);
        Kernel::new(&game).deviation_payoffs(&s, &mut out);
        let expected = game.deviation_payoffs(&s);
        for (o, e) in out.iter().zip(&expected) {
            for (x, y) in o.iter().zip(e) {
                assert!((x - y).abs() < 1e-12);
            }
        }
        let t: Vec<ArrayD<f64>> = (0..3)
            .map(|p| ArrayD::from_shape_fn(IxDyn(&[2, 3, 2]), |i| (i[0] + 2 * i[1] + 3 * i[2] + p) as f64))
            .collect();
        let game = NormalFormGame::new(t).unwrap();
        let s = vec![vec![0.4, 0.6], vec![0.1, 0.2, 0.7], vec![0.5, 0.5]];
        let mut out = zeros(&game);
        Kernel::new(&game).deviation_payoffs(&s, &mut out);
        let expected = game.deviation_payoffs(&s);
        for (o, e) in out.iter().zip(&expected) {
            for (x, y) in o.iter().zip(e) {
                assert!((x - y).abs() < 1e-12);
            }
        }
    }
}
