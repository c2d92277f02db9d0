//! `NormalFormGame`: n-player payoff tensors, the representation of every meta-game.

use std::borrow::Cow;

use ndarray::{Array2, ArrayD, ArrayView2, Dimension, Ix2, IxDyn};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// An n-player normal-form game: one payoff tensor per player, all of the same shape
/// `[num_strategies(0), …, num_strategies(n-1)]`, every entry finite.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use ndarray::array;
///
/// let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]])?;
/// let uniform = vec![vec![1.0 / 3.0; 3]; 2];
/// assert!(rps.nash_conv(&uniform) < 1e-15);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NormalFormGame {
    payoffs: Vec<ArrayD<f64>>,
    title: String,
    player_names: Vec<String>,
    strategy_names: Vec<Vec<String>>,
}

impl NormalFormGame {
    /// A game from one payoff tensor per player.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] when there are fewer than two players, the tensors' shapes differ or
    /// do not have one axis per player, or a player has no strategy;
    /// [`Error::NonFinitePayoff`] for a NaN or infinite entry.
    pub fn new(payoffs: Vec<ArrayD<f64>>) -> Result<Self> {
        let n = payoffs.len();
        if n < 2 {
            return Err(Error::Shape(format!("a normal-form game needs at least 2 players, got {n}")));
        }
        let shape = payoffs[0].shape().to_vec();
        if shape.len() != n {
            return Err(Error::Shape(format!(
                "{n} players need payoff tensors with {n} axes, got shape {shape:?}"
            )));
        }
        if let Some(p) = shape.iter().position(|&s| s == 0) {
            return Err(Error::Shape(format!("player {p} has no strategy")));
        }
        for (p, t) in payoffs.iter().enumerate() {
            if t.shape() != shape.as_slice() {
                return Err(Error::Shape(format!(
                    "player {p}'s payoffs have shape {:?}, player 0's {:?}",
                    t.shape(),
                    shape
                )));
            }
            let finite = match t.as_slice() {
                // A fold, not `all`: it vectorises, and finite payoffs are the common case.
                Some(values) => values.iter().fold(true, |ok, v| ok & v.is_finite()),
                None => t.iter().all(|v| v.is_finite()),
            };
            if !finite && let Some((idx, &v)) = t.indexed_iter().find(|(_, v)| !v.is_finite()) {
                return Err(Error::NonFinitePayoff { player: p, profile: idx.slice().to_vec(), value: v });
            }
        }
        let payoffs: Vec<ArrayD<f64>> = payoffs
            .into_iter()
            .map(|t| if t.is_standard_layout() { t } else { t.as_standard_layout().into_owned() })
            .collect();
        let strategy_names = shape.iter().map(|&s| (1..=s).map(|k| k.to_string()).collect()).collect();
        Ok(Self {
            payoffs,
            title: String::new(),
            player_names: (1..=n).map(|p| format!("Player {p}")).collect(),
            strategy_names,
        })
    }

    /// A two-player game from the row player's matrix `a` and the column player's `b`.
    ///
    /// # Errors
    ///
    /// As [`NormalFormGame::new`].
    pub fn bimatrix(a: Array2<f64>, b: Array2<f64>) -> Result<Self> {
        Self::new(vec![a.into_dyn(), b.into_dyn()])
    }

    /// The two-player zero-sum game where the row player gets `a` and the column player `-a`.
    ///
    /// # Errors
    ///
    /// As [`NormalFormGame::new`].
    pub fn zero_sum(a: Array2<f64>) -> Result<Self> {
        let b = a.mapv(|x| -x);
        Self::bimatrix(a, b)
    }

    /// The same game with a title.
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// The same game with names for the players and their strategies.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] when the counts do not match the game.
    pub fn with_names(mut self, players: Vec<String>, strategies: Vec<Vec<String>>) -> Result<Self> {
        let ok = players.len() == self.num_players()
            && strategies.len() == self.num_players()
            && strategies.iter().zip(self.shape()).all(|(s, &k)| s.len() == k);
        if !ok {
            return Err(Error::Shape("player or strategy names do not match the game".into()));
        }
        self.player_names = players;
        self.strategy_names = strategies;
        Ok(self)
    }

    /// The same game with names for the players (the strategies keep theirs).
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] when the count does not match the game.
    pub(crate) fn with_player_names(mut self, players: Vec<String>) -> Result<Self> {
        if players.len() != self.num_players() {
            return Err(Error::Shape("player names do not match the game".into()));
        }
        self.player_names = players;
        Ok(self)
    }

    /// Number of players.
    pub fn num_players(&self) -> usize {
        self.payoffs.len()
    }
    /// Number of pure strategies per player.
    pub fn shape(&self) -> &[usize] {
        self.payoffs[0].shape()
    }
    /// Number of pure strategies of `player`.
    pub fn num_strategies(&self, player: usize) -> usize {
        self.shape()[player]
    }
    /// The game's title (may be empty).
    pub fn title(&self) -> &str {
        &self.title
    }
    /// Player names ("Player 1", … unless set).
    pub fn player_names(&self) -> &[String] {
        &self.player_names
    }
    /// Strategy names per player ("1", "2", … unless set).
    pub fn strategy_names(&self) -> &[Vec<String>] {
        &self.strategy_names
    }
    /// The payoff tensors, one per player, given up (their buffers can be reused).
    pub fn into_payoffs(self) -> Vec<ArrayD<f64>> {
        self.payoffs
    }
    /// `player`'s payoff tensor.
    pub fn payoffs(&self, player: usize) -> &ArrayD<f64> {
        &self.payoffs[player]
    }
    /// `player`'s payoff at a pure profile.
    pub fn payoff(&self, player: usize, profile: &[usize]) -> f64 {
        self.payoffs[player][IxDyn(profile)]
    }
    /// `player`'s payoff matrix in a two-player game (`None` otherwise).
    pub fn matrix(&self, player: usize) -> Option<ArrayView2<'_, f64>> {
        self.payoffs[player].view().into_dimensionality::<Ix2>().ok()
    }
    /// Number of pure strategy profiles.
    pub fn num_profiles(&self) -> usize {
        self.payoffs[0].len()
    }

    /// Largest payoff range (highest minus lowest payoff) over the players, at least 1: the
    /// scale that certificate tolerances are relative to.
    ///
    /// Always finite: a range past `f64::MAX` (payoffs near ±1e308) gives `f64::MAX`.
    pub fn payoff_scale(&self) -> f64 {
        self.payoffs
            .iter()
            .map(|t| {
                let (lo, hi) = extremes(t.view());
                // Halved first so that the difference cannot overflow; doubling is exact.
                (2.0 * (hi / 2.0 - lo / 2.0)).min(f64::MAX)
            })
            .fold(0.0, f64::max)
            .max(1.0)
    }

    /// `Some(c)` when the payoffs of every profile sum to `c` within `tolerance`.
    ///
    /// Payoffs near ±1e308 are summed scaled down by a power of two, so no sum overflows;
    /// `None` also when the constant itself is past `f64::MAX`.
    pub fn constant_sum(&self, tolerance: f64) -> Option<f64> {
        let n = self.num_players();
        let largest = self.payoffs.iter().flat_map(|t| t.iter()).fold(0.0_f64, |m, x| m.max(x.abs()));
        // Sums of n payoffs and their differences stay below f64::MAX after this exact scaling.
        let scale =
            if largest <= f64::MAX / (2 * n) as f64 { 1.0 } else { 1.0 / (2 * n).next_power_of_two() as f64 };
        let total =
            |i: usize| self.payoffs.iter().map(|t| t.as_slice().map_or(0.0, |s| s[i]) * scale).sum::<f64>();
        let c = total(0);
        let constant = (0..self.num_profiles()).all(|i| (total(i) - c).abs() <= tolerance * scale);
        let c = c / scale;
        (constant && c.is_finite()).then_some(c)
    }

    /// True when the game is two-player and zero-sum (or constant-sum) within `tolerance`.
    pub fn is_two_player_constant_sum(&self, tolerance: f64) -> bool {
        self.num_players() == 2 && self.constant_sum(tolerance).is_some()
    }

    /// True when all players have the same strategies and permuting the players permutes
    /// the payoffs (a symmetric game), within `tolerance`.
    pub fn is_symmetric(&self, tolerance: f64) -> bool {
        let n = self.num_players();
        let k = self.shape()[0];
        if self.shape().iter().any(|&s| s != k) {
            return false;
        }
        // Transpositions of player 0 with every other player generate all permutations.
        for q in 1..n {
            for (idx, &v) in self.payoffs[0].indexed_iter() {
                let mut swapped = idx.slice().to_vec();
                swapped.swap(0, q);
                if (self.payoff(q, &swapped) - v).abs() > tolerance {
                    return false;
                }
            }
        }
        // u_i is invariant to permuting the other players.
        for p in 0..n {
            for a in 0..n {
                for b in (a + 1)..n {
                    if a == p || b == p {
                        continue;
                    }
                    for (idx, &v) in self.payoffs[p].indexed_iter() {
                        let mut swapped = idx.slice().to_vec();
                        swapped.swap(a, b);
                        if (self.payoff(p, &swapped) - v).abs() > tolerance {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    /// For each player, the payoff of each of its pure strategies against the others' mixed
    /// strategies: `result[p][s] = u_p(s, σ_{-p})`.
    ///
    /// # Panics
    ///
    /// If `strategies` does not hold one vector per player of the right lengths.
    ///
    /// # Complexity
    ///
    /// O(num_profiles · num_players).
    #[track_caller]
    pub fn deviation_payoffs(&self, strategies: &[Vec<f64>]) -> Vec<Vec<f64>> {
        self.check_strategies(strategies);
        if let (Some(a), Some(b)) = (self.matrix(0), self.matrix(1)) {
            let y = ndarray::ArrayView1::from(&strategies[1][..]);
            return vec![a.dot(&y).to_vec(), transposed_product(b, &strategies[0])];
        }
        let mut out: Vec<Vec<f64>> = self.shape().iter().map(|&s| vec![0.0; s]).collect();
        DeviationPayoffs::new(self).compute(strategies, &mut out);
        out
    }

    /// Each player's expected payoff under the mixed profile.
    #[track_caller]
    pub fn expected_payoffs(&self, strategies: &[Vec<f64>]) -> Vec<f64> {
        self.deviation_payoffs(strategies)
            .iter()
            .zip(strategies)
            .map(|(dev, s)| dev.iter().zip(s).map(|(u, p)| u * p).sum())
            .collect()
    }

    /// Each player's gain from its best pure deviation (≥ 0 up to rounding).
    #[track_caller]
    pub fn deviation_gains(&self, strategies: &[Vec<f64>]) -> Vec<f64> {
        self.deviation_payoffs(strategies)
            .iter()
            .zip(strategies)
            .map(|(dev, s)| {
                let value: f64 = dev.iter().zip(s).map(|(u, p)| u * p).sum();
                let best = dev.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (best - value).max(0.0)
            })
            .collect()
    }

    /// NashConv: the sum of the players' best-deviation gains; 0 exactly at a Nash equilibrium.
    #[track_caller]
    pub fn nash_conv(&self, strategies: &[Vec<f64>]) -> f64 {
        self.deviation_gains(strategies).iter().sum()
    }

    #[track_caller]
    fn check_strategies(&self, strategies: &[Vec<f64>]) {
        assert_eq!(strategies.len(), self.num_players(), "one strategy per player");
        for (p, s) in strategies.iter().enumerate() {
            assert_eq!(s.len(), self.num_strategies(p), "player {p}'s strategy has the wrong length");
        }
    }

    /// The two payoff matrices of a two-player game, owned.
    pub fn bimatrix_payoffs(&self) -> Option<(Array2<f64>, Array2<f64>)> {
        Some((self.matrix(0)?.to_owned(), self.matrix(1)?.to_owned()))
    }
}

/// `xᵀB`, with the bits of ndarray's `b.t().dot(x)` (each entry summed from 0 in row
/// order) at the cost of the rows where `x` is not zero, each read contiguously: a
/// meta-strategy's support is a fraction of the meta-game. Skipping a zero weight adds
/// nothing: the sums start at +0, and adding ±0 to a sum that is +0 or non-zero leaves it.
///
/// # Panics
///
/// When `x` does not have one entry per row of `b`.
pub fn transposed_product(b: ArrayView2<'_, f64>, x: &[f64]) -> Vec<f64> {
    assert_eq!(b.nrows(), x.len(), "one weight per row");
    let mut out = vec![0.0; b.ncols()];
    for (row, &w) in b.outer_iter().zip(x) {
        if w == 0.0 {
            continue;
        }
        match row.as_slice() {
            Some(row) => out.iter_mut().zip(row).for_each(|(o, &v)| *o += w * v),
            None => out.iter_mut().zip(row.iter()).for_each(|(o, &v)| *o += w * v),
        }
    }
    out
}

/// The smallest and largest entries of `a` (`(∞, −∞)` when empty), NaN ignored as
/// [`f64::min`] and [`f64::max`] ignore it. Over a contiguous array, eight independent lanes,
/// so the pass vectorises: meta-games of hundreds of strategies are scanned on every solve.
pub fn extremes<D: Dimension>(a: ndarray::ArrayView<'_, f64, D>) -> (f64, f64) {
    let Some(values) = a.as_slice_memory_order() else { return extremes_of(a.iter()) };
    const LANES: usize = 8;
    let (mut lo, mut hi) = ([f64::INFINITY; LANES], [f64::NEG_INFINITY; LANES]);
    let chunks = values.chunks_exact(LANES);
    let rest = chunks.remainder();
    for chunk in chunks {
        for k in 0..LANES {
            // Comparisons, not `f64::min`: they vectorise (and skip NaN as it does).
            let x = chunk[k];
            lo[k] = if x < lo[k] { x } else { lo[k] };
            hi[k] = if x > hi[k] { x } else { hi[k] };
        }
    }
    let (rest_lo, rest_hi) = extremes_of(rest.iter());
    (lo.into_iter().fold(rest_lo, f64::min), hi.into_iter().fold(rest_hi, f64::max))
}

/// [`extremes`] of any sequence, one lane.
fn extremes_of<'a>(values: impl Iterator<Item = &'a f64>) -> (f64, f64) {
    values.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)))
}

/// [`NormalFormGame::deviation_payoffs`] for any number of players as one pass over the
/// payoff tensors, holding its buffers so that repeated calls (an iterative solver's steps)
/// do not allocate.
///
/// `u_p(s, σ_{-p}) = Σ_{o, i} (P_p[o]·S_p[i]) · u_p[o, s, i]`, where `o` runs over the
/// profiles of the players before `p`, `i` over those of the players after `p` (both
/// row-major), and `P_p`, `S_p` are the products of their probabilities, tabulated once per
/// call. [`DeviationPayoffs::new`] stores each player's tensor with that player's own axis
/// last, so the sum for all of `p`'s strategies is one vectorised multiply-add over a
/// contiguous row per `(o, i)`, and rows whose weight is 0 are skipped.
///
/// # Determinism
///
/// Each output entry is summed on its own, in row-major profile order, with the weights
/// multiplied in a fixed order: the same bits as the plain one-profile-at-a-time pass,
/// whatever the thread count. Large games split the output entries (never a sum) over
/// rayon's threads.
///
/// # Examples
///
/// ```
/// use metagame_games::{DeviationPayoffs, NormalFormGame};
/// use ndarray::array;
///
/// let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]])?;
/// let mut out = vec![vec![0.0; 3]; 2];
/// DeviationPayoffs::new(&rps).compute(&[vec![1.0, 0.0, 0.0], vec![0.5, 0.5, 0.0]], &mut out);
/// assert_eq!(out[0], vec![-0.5, 0.5, 0.0]);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DeviationPayoffs<'g> {
    game: &'g NormalFormGame,
    /// Player `p`'s tensor with axis `p` moved last: shape `[outer_p, inner_p, K_p]`,
    /// row-major (borrowed for the last player, whose axis is last already).
    layouts: Vec<Cow<'g, [f64]>>,
    /// `prefix[p][o]`: the probability of the players before `p` playing profile `o`
    /// (`prefix[0] = [1]`).
    prefix: Vec<Vec<f64>>,
    /// `suffix[p][i]`: the probability of the players after `p` playing profile `i`
    /// (`suffix[n-1] = [1]`).
    suffix: Vec<Vec<f64>>,
}

/// Multiply-adds per pass (`num_profiles · num_players`) from which a pass uses rayon
/// (below it a pass takes under about 50 µs on one core, and splitting it does not pay).
const PARALLEL_WORK: usize = 1 << 18;
/// The fewest output entries a parallel task computes (a few SIMD vectors per row).
const MIN_TASK_WIDTH: usize = 16;

impl<'g> DeviationPayoffs<'g> {
    /// The pass for `game`.
    ///
    /// # Complexity
    ///
    /// O(num_profiles · num_players) time and memory: each player's tensor but the last is
    /// copied once into the layout the pass reads.
    pub fn new(game: &'g NormalFormGame) -> Self {
        let shape = game.shape();
        let n = shape.len();
        let layouts = game
            .payoffs
            .iter()
            .enumerate()
            .map(|(p, t)| {
                // INVARIANT: `NormalFormGame::new` stores every tensor in standard layout.
                let flat = t.as_slice().expect("standard layout");
                let k = shape[p];
                let inner: usize = shape[p + 1..].iter().product();
                if inner == 1 {
                    return Cow::Borrowed(flat);
                }
                let mut moved = vec![0.0; flat.len()];
                for (src, dst) in flat.chunks_exact(k * inner).zip(moved.chunks_exact_mut(k * inner)) {
                    transpose(src, dst, k, inner);
                }
                Cow::Owned(moved)
            })
            .collect();
        let prefix = (0..n).map(|p| vec![1.0; shape[..p].iter().product()]).collect();
        let suffix = (0..n).map(|p| vec![1.0; shape[p + 1..].iter().product()]).collect();
        Self { game, layouts, prefix, suffix }
    }

    /// `out[p][s] = u_p(s, σ_{-p})` for `strategies` σ.
    ///
    /// # Panics
    ///
    /// If `strategies` or `out` does not hold one vector per player of the right lengths.
    ///
    /// # Complexity
    ///
    /// O(num_profiles · num_players), split over rayon's threads from
    /// 2^18 multiply-adds on.
    #[track_caller]
    pub fn compute(&mut self, strategies: &[Vec<f64>], out: &mut [Vec<f64>]) {
        self.game.check_strategies(strategies);
        self.game.check_strategies(out);
        let n = strategies.len();
        // P_{p+1}[o·K_p + j] = P_p[o]·σ_p[j]; S_{p-1}[j·|S_p| + i] = S_p[i]·σ_p[j].
        for p in 1..n {
            let (done, rest) = self.prefix.split_at_mut(p);
            let sigma = &strategies[p - 1];
            for (chunk, &before) in rest[0].chunks_exact_mut(sigma.len()).zip(&done[p - 1]) {
                chunk.iter_mut().zip(sigma).for_each(|(c, &q)| *c = before * q);
            }
        }
        for p in (0..n - 1).rev() {
            let (head, tail) = self.suffix.split_at_mut(p + 1);
            let after = &tail[0];
            for (chunk, &q) in head[p].chunks_exact_mut(after.len()).zip(&strategies[p + 1]) {
                chunk.iter_mut().zip(after).for_each(|(c, &a)| *c = a * q);
            }
        }
        let Self { layouts, prefix, suffix, .. } = &*self;
        let threads = rayon::current_num_threads();
        if threads > 1 && self.game.num_profiles() * n >= PARALLEL_WORK {
            // Tasks split each player's entries; every entry is still one sequential sum.
            let tasks_per_player = (2 * threads).div_ceil(n);
            out.par_iter_mut().enumerate().for_each(|(p, o)| {
                let width = o.len().div_ceil(tasks_per_player).max(MIN_TASK_WIDTH);
                o.par_chunks_mut(width)
                    .enumerate()
                    .for_each(|(c, part)| accumulate(&layouts[p], &prefix[p], &suffix[p], c * width, part));
            });
        } else {
            for (p, o) in out.iter_mut().enumerate() {
                accumulate(&layouts[p], &prefix[p], &suffix[p], 0, o);
            }
        }
    }
}

/// `dst = srcᵀ` for a row-major `rows × cols` matrix `src`, in cache-sized tiles.
fn transpose(src: &[f64], dst: &mut [f64], rows: usize, cols: usize) {
    const TILE: usize = 16;
    for r0 in (0..rows).step_by(TILE) {
        for c0 in (0..cols).step_by(TILE) {
            for r in r0..(r0 + TILE).min(rows) {
                for c in c0..(c0 + TILE).min(cols) {
                    dst[c * rows + r] = src[r * cols + c];
                }
            }
        }
    }
}

/// `out[s - start] = Σ_{o, i} (prefix[o]·suffix[i]) · layout[o, i, s]` for the entries `s` in
/// `start..start + out.len()`, each summed in `(o, i)` order, zero weights skipped.
#[inline]
fn accumulate(layout: &[f64], prefix: &[f64], suffix: &[f64], start: usize, out: &mut [f64]) {
    out.fill(0.0);
    let row_len = layout.len() / (prefix.len() * suffix.len());
    let block_len = row_len * suffix.len();
    for (block, &before) in layout.chunks_exact(block_len).zip(prefix) {
        if before == 0.0 {
            continue;
        }
        for (row, &after) in block.chunks_exact(row_len).zip(suffix) {
            let w = before * after;
            if w != 0.0 {
                let row = &row[start..start + out.len()];
                out.iter_mut().zip(row).for_each(|(a, &u)| *a += w * u);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic number in `[-1, 1)` from `k`, with exact zeros now and then.
    fn entry(k: usize) -> f64 {
        let h = (k as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 11;
        if h.is_multiple_of(5) { 0.0 } else { (h as f64 / (1u64 << 53) as f64) * 2.0 - 1.0 }
    }

    /// The sparse product gives ndarray's bits exactly, for weights with zeros anywhere;
    /// `extremes` gives the fold's answer.
    #[test]
    fn products_and_extremes_match_the_plain_computations_bit_for_bit() {
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (m, n) in [(1, 1), (3, 7), (9, 8), (17, 23), (40, 33)] {
            let a = Array2::from_shape_fn((m, n), |(i, j)| entry(i * n + j + 7) * 3.0);
            let x: Vec<f64> = (0..m).map(|i| entry(i + 2000).abs()).collect();
            let dense = a.t().dot(&ndarray::ArrayView1::from(&x[..])).to_vec();
            assert_eq!(bits(&transposed_product(a.view(), &x)), bits(&dense), "{m}x{n}");
            let values = a.as_slice().expect("standard layout");
            let folded =
                values.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| (lo.min(v), hi.max(v)));
            assert_eq!(extremes(a.view()), folded, "{m}x{n}");
            assert_eq!(extremes(a.t()), folded, "{m}x{n}, transposed");
            // A strided view: every other column.
            let strided = a.slice_each_axis(|axis| {
                if axis.axis.index() == 1 {
                    ndarray::Slice::new(0, None, 2)
                } else {
                    ndarray::Slice::from(..)
                }
            });
            let every_other =
                (0..m).flat_map(|i| (0..n).step_by(2).map(move |j| (i, j))).map(|(i, j)| &a[[i, j]]);
            assert_eq!(extremes(strided), extremes_of(every_other), "{m}x{n}, strided");
        }
        assert_eq!(extremes(ndarray::ArrayView1::from(&[])), (f64::INFINITY, f64::NEG_INFINITY));
    }
}
