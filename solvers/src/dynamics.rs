//! Shared machinery of the iterative solvers (fictitious play, regret matching, Hedge,
//! replicator dynamics): allocation-free deviation payoffs with a two-player fast path and
//! setting checks (their settings themselves are in [`crate::settings`]).

use metagame_games::{DeviationPayoffs, NormalFormGame};

use crate::Copies;
use crate::linalg::dot;
use crate::{Result, SolveError};

/// Computes `u_p(s, σ_{-p})` for every player `p` and pure strategy `s` without allocating.
pub(crate) enum Kernel<'a> {
    /// Two players: the row player's matrix `a` (`n0 × n1`) and the column player's matrix
    /// transposed, `bt` (`n1 × n0`), both as column panels.
    Matrix { a: PanelMatrix, bt: PanelMatrix, arch: pulp::Arch },
    /// Any number of players: the games crate's pass over the payoff tensors.
    Tensor(DeviationPayoffs<'a>),
}

impl<'a> Kernel<'a> {
    /// The kernel for `game`.
    pub(crate) fn new(game: &'a NormalFormGame) -> Self {
        if let (Some(a), Some(b)) = (game.matrix(0), game.matrix(1)) {
            let (a, bt) = (PanelMatrix::new(a), PanelMatrix::new(b.t()));
            return Kernel::Matrix { a, bt, arch: pulp::Arch::new() };
        }
        Kernel::Tensor(DeviationPayoffs::new(game))
    }

    /// `out[p][s] = u_p(s, σ_{-p})`.
    pub(crate) fn deviation_payoffs(&mut self, strategies: &[Vec<f64>], out: &mut [Vec<f64>]) {
        match self {
            Kernel::Matrix { a, bt, arch } => {
                let (x, y) = (&strategies[0], &strategies[1]);
                let (out0, out1) = out.split_at_mut(1);
                arch.dispatch(BothProducts { a, bt, x, y, out0: &mut out0[0], out1: &mut out1[0] });
            }
            Kernel::Tensor(pass) => pass.compute(strategies, out),
        }
    }
}

/// Rows per panel of a [`PanelMatrix`] (one AVX-512 or two AVX2 registers of f64).
const PANEL_ROWS: usize = 8;
/// Interleaved partial sums per output entry (independent add chains for the CPU to overlap).
const PARTIAL_SUMS: usize = 4;

/// A dense matrix laid out for `M·v`: rows in blocks of [`PANEL_ROWS`], each block one
/// contiguous column-major panel, zero-padded to whole panels and to a multiple of
/// [`PARTIAL_SUMS`] columns. A product is then one broadcast-multiply-add of a whole column
/// of the panel per entry of `v`, with no horizontal sums and no bounds checks.
pub(crate) struct PanelMatrix {
    data: Vec<f64>,
    rows: usize,
    padded_cols: usize,
}

impl PanelMatrix {
    fn new(m: ndarray::ArrayView2<'_, f64>) -> Self {
        let (rows, cols) = m.dim();
        let padded_cols = cols.div_ceil(PARTIAL_SUMS) * PARTIAL_SUMS;
        let mut data = vec![0.0; rows.div_ceil(PANEL_ROWS) * PANEL_ROWS * padded_cols];
        for ((i, j), &x) in m.indexed_iter() {
            data[(i / PANEL_ROWS) * padded_cols * PANEL_ROWS + j * PANEL_ROWS + i % PANEL_ROWS] = x;
        }
        Self { data, rows, padded_cols }
    }

    /// `out = M·v`. Entry `i` is
    /// `(s₀ + s₁) + (s₂ + s₃)` with `s_k = Σ_{j ≡ k mod 4} M[i][j]·v[j]` summed in order, the
    /// same on every CPU whatever width the compiler vectorises the rows with.
    #[inline(always)]
    fn mul_vec(&self, v: &[f64], out: &mut [f64]) {
        debug_assert_eq!(out.len(), self.rows);
        let (weights, last) = v.as_chunks::<PARTIAL_SUMS>();
        let panels = self.data.chunks_exact(self.padded_cols * PANEL_ROWS);
        for (panel, o) in panels.zip(out.chunks_mut(PANEL_ROWS)) {
            let mut acc = [[0.0f64; PANEL_ROWS]; PARTIAL_SUMS];
            let (columns, _) = panel.as_chunks::<PANEL_ROWS>();
            let mut groups = columns.chunks_exact(PARTIAL_SUMS);
            // `weights` first: zip then stops without taking a group from `groups`.
            for (w, group) in weights.iter().zip(&mut groups) {
                for k in 0..PARTIAL_SUMS {
                    for r in 0..PANEL_ROWS {
                        acc[k][r] += w[k] * group[k][r];
                    }
                }
            }
            // The padding columns are zero: only the real ones of the last group count.
            if let Some(group) = groups.next() {
                for (k, &w) in last.iter().enumerate() {
                    for r in 0..PANEL_ROWS {
                        acc[k][r] += w * group[k][r];
                    }
                }
            }
            for (r, o) in o.iter_mut().enumerate() {
                *o = (acc[0][r] + acc[1][r]) + (acc[2][r] + acc[3][r]);
            }
        }
    }
}

/// Both products of a two-player step, compiled for the widest SIMD the CPU has (pulp picks
/// AVX-512, AVX2 or plain SSE2 at run time; no fused multiply-add, so the results are the same).
struct BothProducts<'a> {
    a: &'a PanelMatrix,
    bt: &'a PanelMatrix,
    x: &'a [f64],
    y: &'a [f64],
    out0: &'a mut [f64],
    out1: &'a mut [f64],
}

impl pulp::WithSimd for BothProducts<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: pulp::Simd>(self, _simd: S) {
        self.a.mul_vec(self.y, self.out0);
        self.bt.mul_vec(self.x, self.out1);
    }
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

/// Uniform strategies over the expanded game of `copies`, folded onto the members: member
/// `m` of player `p` gets `multiplicity / Σ multiplicities` (`1/K` for every member without
/// copies).
pub(crate) fn uniform(copies: &Copies) -> Vec<Vec<f64>> {
    (0..copies.shape().len())
        .map(|p| {
            let w = copies.weights(p);
            let total = copies.of(p).len() as f64;
            w.iter().map(|&w| w / total).collect()
        })
        .collect()
}

/// A warm start checked against `game` and rescaled to distributions (see
/// [`crate::MetaSolver::solve_from`]).
///
/// # Errors
///
/// [`SolveError::InvalidConfig`] when `start` does not hold one vector per player of the
/// player's number of strategies, or a vector has a negative or non-finite entry or sums to 0.
pub(crate) fn checked_start(
    solver: &'static str,
    game: &NormalFormGame,
    start: &[Vec<f64>],
) -> Result<Vec<Vec<f64>>> {
    if start.len() != game.num_players() {
        return Err(invalid(
            solver,
            format!("start has {} distributions for a {}-player game", start.len(), game.num_players()),
        ));
    }
    start
        .iter()
        .zip(game.shape())
        .enumerate()
        .map(|(p, (s, &k))| {
            if s.len() != k {
                return Err(invalid(
                    solver,
                    format!("start of player {p} has {} entries, the player {k} strategies", s.len()),
                ));
            }
            if let Some(x) = s.iter().find(|x| !(x.is_finite() && **x >= 0.0)) {
                return Err(invalid(solver, format!("start of player {p} has the entry {x}")));
            }
            let total: f64 = s.iter().sum();
            if !(total > 0.0 && total.is_finite()) {
                return Err(invalid(solver, format!("start of player {p} sums to {total}")));
            }
            Ok(s.iter().map(|x| x / total).collect())
        })
        .collect()
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

/// `SolveError::InvalidConfig` for `solver`.
pub(crate) fn invalid(solver: &'static str, reason: impl Into<String>) -> SolveError {
    SolveError::InvalidConfig { solver, reason: reason.into() }
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

    /// The kernel's deviation payoffs equal the game's to 1e-12.
    fn assert_kernel_matches_game(game: &NormalFormGame, s: &[Vec<f64>]) {
        let mut out = zeros(game);
        Kernel::new(game).deviation_payoffs(s, &mut out);
        for (o, e) in out.iter().zip(&game.deviation_payoffs(s)) {
            for (x, y) in o.iter().zip(e) {
                assert!((x - y).abs() < 1e-12, "{:?}: {o:?} vs {e:?}", game.shape());
            }
        }
    }

    /// Every panel remainder (rows mod 8) and column remainder (columns mod 4).
    #[test]
    fn panel_products_match_the_game_at_every_shape() {
        for (n0, n1) in (1..=17).flat_map(|r| [(r, 1), (r, 6), (r, 9), (r, 20)]) {
            let cell = |i: usize, j: usize, k: usize| ((i * 7 + j * 13 + k * 5) % 11) as f64 - 5.0;
            let a = ndarray::Array2::from_shape_fn((n0, n1), |(i, j)| cell(i, j, 0));
            let b = ndarray::Array2::from_shape_fn((n0, n1), |(i, j)| cell(i, j, 1) * 0.5);
            let game = NormalFormGame::bimatrix(a, b).unwrap();
            let s: Vec<Vec<f64>> = [n0, n1]
                .iter()
                .map(|&k| {
                    let w: Vec<f64> = (0..k).map(|i| 1.0 + (i % 3) as f64).collect();
                    let total: f64 = w.iter().sum();
                    w.iter().map(|x| x / total).collect()
                })
                .collect();
            assert_kernel_matches_game(&game, &s);
        }
    }

    /// The dispatched products (AVX-512 or AVX2 on CPUs that have them) give the same bits as the same
    /// code compiled for the baseline CPU, so answers do not depend on the machine.
    #[test]
    fn dispatched_products_equal_baseline_bits() {
        let (n0, n1) = (37, 23);
        let a = ndarray::Array2::from_shape_fn((n0, n1), |(i, j)| ((i * n1 + j) as f64 * 0.7).sin());
        let b = ndarray::Array2::from_shape_fn((n0, n1), |(i, j)| ((i + 3 * j) as f64 * 1.3).cos());
        let game = NormalFormGame::bimatrix(a.clone(), b.clone()).unwrap();
        let s: Vec<Vec<f64>> =
            [n0, n1].iter().map(|&k| (0..k).map(|i| (i as f64 + 0.5).sqrt() / k as f64).collect()).collect();
        let mut dispatched = zeros(&game);
        Kernel::new(&game).deviation_payoffs(&s, &mut dispatched);
        let mut baseline = zeros(&game);
        PanelMatrix::new(a.view()).mul_vec(&s[1], &mut baseline[0]);
        PanelMatrix::new(b.t()).mul_vec(&s[0], &mut baseline[1]);
        assert_eq!(dispatched, baseline);
    }

    #[test]
    fn kernels_match_the_game() {
        let a = ndarray::array![[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]];
        let b = ndarray::array![[0.5, -1.0, 2.0], [3.0, 0.0, 1.0]];
        let game = NormalFormGame::bimatrix(a, b).unwrap();
        let s = vec![vec![0.3, 0.7], vec![0.2, 0.5, 0.3]];
        assert_kernel_matches_game(&game, &s);
        let t: Vec<ArrayD<f64>> = (0..3)
            .map(|p| ArrayD::from_shape_fn(IxDyn(&[2, 3, 2]), |i| (i[0] + 2 * i[1] + 3 * i[2] + p) as f64))
            .collect();
        let game = NormalFormGame::new(t).unwrap();
        let s = vec![vec![0.4, 0.6], vec![0.1, 0.2, 0.7], vec![0.5, 0.5]];
        assert_kernel_matches_game(&game, &s);
    }
}
