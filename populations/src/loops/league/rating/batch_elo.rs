//! Batch Elo: the Bradley–Terry maximum-likelihood ratings of a win-count matrix.

use metagame_solvers::Status;
use ndarray::ArrayView2;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use super::{Rating, check_finite, check_positive, expected_score};
use crate::error::{Error, Result};
use crate::settings::{built_by, setters};

/// Batch Elo settings (OpenSpiel's `EloOptions` defaults); always valid (built by
/// [`BatchEloConfig::builder`] or deserialised through it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "BatchEloConfigBuilder", into = "BatchEloConfigBuilder")]
pub struct BatchEloConfig {
    smoothing: f64,
    max_iterations: usize,
    convergence_tolerance: f64,
    scale: f64,
    minimum_rating: f64,
}

/// Builder and serde form of [`BatchEloConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct BatchEloConfigBuilder {
    /// Pseudo-wins added to every ordered pair of distinct members (so every pair has played
    /// `2·smoothing` pseudo-games, and the maximum-likelihood ratings exist even when a
    /// member never won or never lost); finite, ≥ 0. Default 0.01 (OpenSpiel).
    pub smoothing: Option<f64>,
    /// Cap on minorisation–maximisation iterations; ≥ 1. Default 2000 (OpenSpiel).
    pub max_iterations: Option<usize>,
    /// Stop once no normalised strength (strengths sum to 1) moves by this much in an
    /// iteration; finite, ≥ 0 (0 runs every iteration). Default 1e-10 (OpenSpiel).
    pub convergence_tolerance: Option<f64>,
    /// Points per factor of 10 in the odds; finite, > 0. Default 400.
    pub scale: Option<f64>,
    /// The lowest member's rating (ratings are shifted so the minimum is this); finite.
    /// Default 0 (OpenSpiel).
    pub minimum_rating: Option<f64>,
}

impl BatchEloConfigBuilder {
    setters!(
        smoothing: f64,
        max_iterations: usize,
        convergence_tolerance: f64,
        scale: f64,
        minimum_rating: f64,
    );

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<BatchEloConfig> {
        let smoothing = self.smoothing.unwrap_or(0.01);
        if !(smoothing.is_finite() && smoothing >= 0.0) {
            return Err(Error::Config(format!("smoothing must be a finite number ≥ 0, got {smoothing}")));
        }
        let max_iterations = self.max_iterations.unwrap_or(2000);
        if max_iterations == 0 {
            return Err(Error::Config("max_iterations must be at least 1".into()));
        }
        let convergence_tolerance = self.convergence_tolerance.unwrap_or(1e-10);
        if !(convergence_tolerance.is_finite() && convergence_tolerance >= 0.0) {
            return Err(Error::Config(format!(
                "convergence_tolerance must be a finite number ≥ 0, got {convergence_tolerance}"
            )));
        }
        Ok(BatchEloConfig {
            smoothing,
            max_iterations,
            convergence_tolerance,
            scale: check_positive("scale", self.scale.unwrap_or(400.0))?,
            minimum_rating: check_finite("minimum_rating", self.minimum_rating.unwrap_or(0.0))?,
        })
    }
}

built_by!(BatchEloConfig, BatchEloConfigBuilder);

impl From<BatchEloConfig> for BatchEloConfigBuilder {
    fn from(c: BatchEloConfig) -> Self {
        BatchEloConfigBuilder {
            smoothing: Some(c.smoothing),
            max_iterations: Some(c.max_iterations),
            convergence_tolerance: Some(c.convergence_tolerance),
            scale: Some(c.scale),
            minimum_rating: Some(c.minimum_rating),
        }
    }
}

impl BatchEloConfig {
    /// Pseudo-wins per ordered pair.
    pub fn smoothing(&self) -> f64 {
        self.smoothing
    }
    /// Iteration cap.
    pub fn max_iterations(&self) -> usize {
        self.max_iterations
    }
    /// Largest strength change at convergence.
    pub fn convergence_tolerance(&self) -> f64 {
        self.convergence_tolerance
    }
    /// Points per factor of 10 in the odds.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// The lowest member's rating.
    pub fn minimum_rating(&self) -> f64 {
        self.minimum_rating
    }
}

/// Batch Elo ratings: the Bradley–Terry model `P(i beats j) = γ_i / (γ_i + γ_j)` fitted by
/// maximum likelihood, reported as Elo points `scale·log10 γ_i` shifted so the lowest is
/// the config's `minimum_rating`.
///
/// The fit is Hunter's (2004) minorisation–maximisation, equation (4), with OpenSpiel's
/// smoothing (`open_spiel/evaluation/elo.cc`, read, not copied): with
/// `W_ij = wins_ij + ½·draws_ij + smoothing` for `i ≠ j`, `W_i = Σ_j W_ij` and
/// `N_ij = W_ij + W_ji`, every iteration sets `γ_i ← W_i / Σ_{j≠i} N_ij/(γ_i + γ_j)` for all
/// `i` at once from the previous strengths (starting at 1), then normalises the strengths to
/// sum 1 (each floored at the smallest positive `f64`). It stops when no strength moved by
/// the config's `convergence_tolerance` ([`Status::Solved`]) or after `max_iterations`
/// updates ([`Status::MaxIterations`]). The updates are accelerated by SQUAREM (Varadhan
/// and Roland 2008): every third update starts from an extrapolation of the two before,
/// which reaches the same fixed point in fewer updates. (OpenSpiel reports the strengths
/// before the last iteration; these are after it, a difference below the tolerance.)
///
/// # Complexity
///
/// `O(n²)` per iteration for `n` members.
///
/// # References
///
/// D. R. Hunter, *MM algorithms for generalized Bradley–Terry models*, Annals of Statistics
/// 32(1), 384–406, 2004. R. Varadhan and C. Roland, *Simple and globally convergent methods
/// for accelerating the convergence of any EM algorithm*, Scandinavian Journal of Statistics
/// 35(2), 335–353, 2008.
///
/// # Examples
///
/// OpenSpiel's test (Meeple Pentathlon): members 0 and 2 are provably equal, 1 is weaker.
///
/// ```
/// use metagame_populations::rating::{BatchElo, BatchEloConfig};
/// use ndarray::array;
///
/// let wins = array![[0., 4., 2.], [1., 0., 2.], [3., 3., 0.]];
/// let elo = BatchElo::fit(&BatchEloConfig::default(), wins.view(), None)?;
/// let r = elo.ratings();
/// assert!((r[0] - r[2]).abs() < 1e-6 && r[1] < r[0] && r[1] == 0.0);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BatchElo {
    ratings: Vec<f64>,
    scale: f64,
    status: Status,
    iterations: usize,
}

impl BatchElo {
    /// Fit the ratings of `wins` (`wins[[i, j]]`: how often `i` beat `j`) and `draws`
    /// (`draws[[i, j]]`: how many draws between `i` and `j`, so symmetric; none if `None`).
    /// Counts may be fractional (decayed counts); diagonals are ignored.
    ///
    /// # Errors
    ///
    /// [`Error::Game`] with a shape error when `wins` is not square or `draws` is not the
    /// same shape; [`Error::Config`] when a count is negative or not finite, or `draws` is
    /// not symmetric.
    pub fn fit(
        config: &BatchEloConfig,
        wins: ArrayView2<f64>,
        draws: Option<ArrayView2<f64>>,
    ) -> Result<Self> {
        let n = wins.nrows();
        let shape = |what: String| Error::Game(metagame_games::Error::Shape(what));
        if wins.ncols() != n {
            return Err(shape(format!("the win matrix must be square, got {n}×{}", wins.ncols())));
        }
        if let Some(d) = draws
            && d.dim() != (n, n)
        {
            return Err(shape(format!("the draw matrix must be {n}×{n}, got {}×{}", d.nrows(), d.ncols())));
        }
        // The smoothed scores `W_ij`, checking the counts as it goes.
        let mut w = vec![0.0; n * n];
        for (i, (won, w)) in wins.outer_iter().zip(w.chunks_exact_mut(n.max(1))).enumerate() {
            let drawn = draws.as_ref().map(|d| d.row(i));
            for (j, (&won, w)) in won.iter().zip(w.iter_mut()).enumerate().filter(|&(j, _)| j != i) {
                let drawn = drawn.map_or(0.0, |d| d[j]);
                for (what, x) in [("win", won), ("draw", drawn)] {
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(Error::Config(format!(
                            "{what} count ({i}, {j}) must be a finite number ≥ 0, got {x}"
                        )));
                    }
                }
                *w = won + 0.5 * drawn + config.smoothing;
            }
        }
        if let Some(d) = draws
            && let Some((i, j)) =
                (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).find(|&(i, j)| d[[i, j]] != d[[j, i]])
        {
            return Err(Error::Config(format!("the draw matrix must be symmetric, not at ({i}, {j})")));
        }
        Ok(Self::from_smoothed(config, n, &w, &mut Vec::new()))
    }

    /// [`fit`](BatchElo::fit) on `n` members' scores without draws, `scores` being `wins`
    /// row-major (the diagonal ignored), smoothed in place, with `buffer`'s memory for the
    /// games between pairs (a league fits at every evaluation point, and keeps both).
    ///
    /// # Errors
    ///
    /// [`Error::Game`] with a shape error when `scores` is not `n × n`; [`Error::Config`]
    /// when a score is negative or not finite.
    pub(crate) fn fit_scores(
        config: &BatchEloConfig,
        n: usize,
        scores: &mut [f64],
        buffer: &mut Vec<f64>,
    ) -> Result<Self> {
        if scores.len() != n * n {
            let e = format!("the win matrix must be {n}×{n}, got {} entries", scores.len());
            return Err(Error::Game(metagame_games::Error::Shape(e)));
        }
        for (i, row) in scores.chunks_exact_mut(n.max(1)).enumerate() {
            row[i] = 0.0;
            if let Some((j, x)) = row.iter().enumerate().find(|(_, x)| !(x.is_finite() && **x >= 0.0)) {
                return Err(Error::Config(format!(
                    "win count ({i}, {j}) must be a finite number ≥ 0, got {x}"
                )));
            }
            row.iter_mut().for_each(|x| *x += config.smoothing);
            row[i] = 0.0;
        }
        Ok(Self::from_smoothed(config, n, scores, buffer))
    }

    /// The fit from the smoothed scores `w` (`W_ij`, row-major, the diagonal 0), the games
    /// between pairs in `buffer`'s memory.
    fn from_smoothed(config: &BatchEloConfig, n: usize, w: &[f64], buffer: &mut Vec<f64>) -> Self {
        let total: Vec<f64> = w.par_chunks_exact(n.max(1)).map(|row| row.iter().sum()).collect();
        let games = PairGames::new(n, w, std::mem::take(buffer));
        let fit = Self::from_games(config, &total, &games);
        *buffer = games.games;
        fit
    }

    /// The fit from each member's smoothed score and the games between each pair.
    fn from_games(config: &BatchEloConfig, total: &[f64], games: &PairGames) -> Self {
        let (strengths, status, iterations) = minorise_maximise(config, total, games);
        let mut ratings: Vec<f64> = strengths.iter().map(|g| config.scale * g.log10()).collect();
        let lowest = ratings.iter().copied().fold(f64::INFINITY, f64::min);
        ratings.iter_mut().for_each(|r| *r = *r - lowest + config.minimum_rating);
        BatchElo { ratings, scale: config.scale, status, iterations }
    }

    /// Every member's rating, by index.
    pub fn ratings(&self) -> &[f64] {
        &self.ratings
    }

    /// Points per factor of 10 in the odds.
    pub fn scale(&self) -> f64 {
        self.scale
    }

    /// Whether the fit met its tolerance.
    pub fn status(&self) -> Status {
        self.status
    }

    /// Iterations run.
    pub fn iterations(&self) -> usize {
        self.iterations
    }
}

/// Hunter's MM from each member's smoothed score `total` (`W_i`) and the games between each
/// pair, accelerated by SQUAREM: normalised strengths, status, MM updates run.
///
/// Every two MM updates `x₁ = F(x₀)`, `x₂ = F(x₁)` give `r = x₁ − x₀`, `v = x₂ − x₁ − r` and
/// the step `x' = x₀ − 2αr + α²v` with `α = −‖r‖/‖v‖` (at most −1), then `x₀ ← F(x')`
/// (`x₂` where `x'` leaves the positive strengths). Each update is checked for convergence
/// as a plain MM update is, so the fit stops at a fixed point of `F` as plain MM does, in
/// fewer updates (a long league's table: 22 → about 10).
fn minorise_maximise(config: &BatchEloConfig, total: &[f64], games: &PairGames) -> (Vec<f64>, Status, usize) {
    let n = total.len();
    if n < 2 {
        return (vec![1.0; n], Status::Solved, 0);
    }
    // The smallest positive f64 (OpenSpiel floors at `denorm_min` too).
    let floor = f64::from_bits(1);
    // One MM update: the next normalised strengths, or `None` when no member ever scored.
    let update = |gamma: &[f64]| -> Option<Vec<f64>> {
        let ratios = games.over_strengths(gamma);
        let next: Vec<f64> = (0..n)
            // A member that never played keeps its strength.
            .map(|i| if ratios[i] > 0.0 { total[i] / ratios[i] } else { gamma[i] })
            .collect();
        let sum: f64 = next.iter().sum();
        (sum > 0.0 && sum.is_finite()).then(|| next.iter().map(|x| (x / sum).max(floor)).collect())
    };
    let change = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    let mut gamma = vec![1.0; n];
    let mut updates = 0;
    // The next update of `x`, counted; `Err` ends the fit with its result.
    let mut advance = |x: &[f64]| -> std::result::Result<Vec<f64>, (Vec<f64>, Status, usize)> {
        updates += 1;
        // No member ever scored: every strength is as good as any other.
        let next = update(x).ok_or((vec![1.0; n], Status::Solved, updates))?;
        if change(&next, x) < config.convergence_tolerance {
            return Err((next, Status::Solved, updates));
        }
        if updates >= config.max_iterations {
            return Err((next, Status::MaxIterations, updates));
        }
        Ok(next)
    };
    loop {
        let x1 = match advance(&gamma) {
            Ok(x) => x,
            Err(done) => return done,
        };
        let x2 = match advance(&x1) {
            Ok(x) => x,
            Err(done) => return done,
        };
        let r: Vec<f64> = x1.iter().zip(&gamma).map(|(a, b)| a - b).collect();
        let v: Vec<f64> = x2.iter().zip(&x1).zip(&r).map(|((a, b), r)| a - b - r).collect();
        let norm = |x: &[f64]| x.iter().map(|x| x * x).sum::<f64>().sqrt();
        let alpha = (-norm(&r) / norm(&v)).min(-1.0);
        let step: Vec<f64> =
            gamma.iter().zip(&r).zip(&v).map(|((x, r), v)| x - 2.0 * alpha * r + alpha * alpha * v).collect();
        let inside = alpha.is_finite() && step.iter().all(|x| *x > 0.0 && x.is_finite());
        gamma = match advance(if inside { &step } else { &x2 }) {
            Ok(x) => x,
            Err(done) => return done,
        };
    }
}

/// Side of [`PairGames`]' tiles: two tiles of games and a tile's strengths stay in L1.
const TILE: usize = 64;

/// The games between each pair, `N_ij = W_ij + W_ji`, kept once per unordered pair: the
/// upper triangle in `TILE × TILE` tiles (zero below the diagonal and past `n`). Each
/// iteration then divides once per pair, not twice, and reads half the memory.
struct PairGames {
    n: usize,
    /// Tiles per side.
    side: usize,
    /// Tile `(I, J)`, `I ≤ J`, in row-major order of the tiles, each row-major inside.
    tiles: Vec<(usize, usize)>,
    games: Vec<f64>,
}

impl PairGames {
    /// The pairs' games `w_ij + w_ji` from the smoothed scores `w` (row-major `n × n`), in
    /// `buffer`'s memory.
    fn new(n: usize, w: &[f64], mut games: Vec<f64>) -> Self {
        let side = n.div_ceil(TILE);
        let tiles: Vec<(usize, usize)> = (0..side).flat_map(|a| (a..side).map(move |b| (a, b))).collect();
        games.clear();
        games.resize(tiles.len() * TILE * TILE, 0.0);
        games.par_chunks_exact_mut(TILE * TILE).zip(&tiles).for_each(|(tile, &(a, b))| {
            let (rows, columns) = (a * TILE..((a + 1) * TILE).min(n), b * TILE..((b + 1) * TILE).min(n));
            // `w_ij` along `w`'s rows, then `w_ji` along the rows of the transposed block: both
            // reads run along memory.
            for (r, i) in rows.clone().enumerate() {
                let row = &w[i * n + columns.start..i * n + columns.end];
                tile[r * TILE..r * TILE + row.len()].copy_from_slice(row);
            }
            for (c, j) in columns.clone().enumerate() {
                for (r, &x) in w[j * n + rows.start..j * n + rows.end].iter().enumerate() {
                    tile[r * TILE + c] += x;
                }
            }
            // Each pair once: nothing on or below the diagonal.
            for (r, i) in rows.enumerate() {
                for c in columns.clone().enumerate().filter(|&(_, j)| j <= i).map(|(c, _)| c) {
                    tile[r * TILE + c] = 0.0;
                }
            }
        });
        PairGames { n, side, tiles, games }
    }

    /// `Σ_{j≠i} N_ij / (γ_i + γ_j)` per member `i`, the MM update's denominators. Each pair's
    /// term is added to both members' sums; tiles run in parallel into sums of their own,
    /// combined in a fixed order, so the bits do not depend on the machine's threads.
    fn over_strengths(&self, gamma: &[f64]) -> Vec<f64> {
        // Padding members have strength 1 and no games, so they add 0.
        let mut padded = gamma.to_vec();
        padded.resize(self.side * TILE, 1.0);
        let partial: Vec<([f64; TILE], [f64; TILE])> = self
            .games
            .par_chunks_exact(TILE * TILE)
            .zip(&self.tiles)
            .map(|(tile, &(a, b))| {
                tile_sums(tile, &padded[a * TILE..(a + 1) * TILE], &padded[b * TILE..(b + 1) * TILE])
            })
            .collect();
        let mut sums = vec![0.0; self.side * TILE];
        for (&(a, b), (rows, columns)) in self.tiles.iter().zip(&partial) {
            for (s, x) in sums[a * TILE..(a + 1) * TILE].iter_mut().zip(rows) {
                *s += x;
            }
            for (s, x) in sums[b * TILE..(b + 1) * TILE].iter_mut().zip(columns) {
                *s += x;
            }
        }
        sums.truncate(self.n);
        sums
    }
}

/// One tile's terms `N_ij / (γ_i + γ_j)`, summed along its rows and along its columns. Four
/// running sums per row, so that the divisions overlap (and vectorise) instead of waiting on
/// one sum.
fn tile_sums(tile: &[f64], rows: &[f64], columns: &[f64]) -> ([f64; TILE], [f64; TILE]) {
    let (mut row_sums, mut column_sums) = ([0.0; TILE], [0.0; TILE]);
    for (r, (games, &own)) in tile.chunks_exact(TILE).zip(rows).enumerate() {
        let mut acc = [0.0f64; 4];
        for ((g, c), s) in
            games.chunks_exact(4).zip(columns.chunks_exact(4)).zip(column_sums.chunks_exact_mut(4))
        {
            for k in 0..4 {
                let t = g[k] / (own + c[k]);
                acc[k] += t;
                s[k] += t;
            }
        }
        row_sums[r] = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    }
    (row_sums, column_sums)
}

impl Rating for BatchElo {
    fn name(&self) -> &'static str {
        "batch-elo"
    }

    fn num_members(&self) -> usize {
        self.ratings.len()
    }

    #[track_caller]
    fn predict(&self, i: usize, j: usize) -> f64 {
        expected_score(self.ratings[i], self.ratings[j], self.scale)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn defaults_are_openspiels() {
        let c = BatchEloConfig::default();
        assert_eq!(c.smoothing(), 0.01);
        assert_eq!(c.max_iterations(), 2000);
        assert_eq!(c.convergence_tolerance(), 1e-10);
        assert_eq!((c.scale(), c.minimum_rating()), (400.0, 0.0));
        assert!(BatchEloConfig::builder().smoothing(-0.1).build().is_err());
        assert!(BatchEloConfig::builder().max_iterations(0).build().is_err());
        assert!(BatchEloConfig::builder().convergence_tolerance(f64::NAN).build().is_err());
    }

    /// Two members, 2 wins to 1: the smoothed maximum-likelihood odds are 2.01 : 1.01, so
    /// the ratings are 400·log10(2.01/1.01) and 0 (OpenSpiel's `TestSimpleTransitiveCase`
    /// checks the order and the 0).
    #[test]
    fn two_members_closed_form() {
        let elo = BatchElo::fit(&BatchEloConfig::default(), array![[0., 2.], [1., 0.]].view(), None).unwrap();
        assert_eq!(elo.status(), Status::Solved);
        assert!((elo.ratings()[0] - 400.0 * (2.01f64 / 1.01).log10()).abs() < 1e-6, "{:?}", elo.ratings());
        assert_eq!(elo.ratings()[1], 0.0);
        assert!((elo.predict(0, 1) - 2.01 / 3.02).abs() < 1e-9);
    }

    /// OpenSpiel's Python test: a draw between the two lowers the winner's rating.
    #[test]
    fn draws_count_half() {
        let config = BatchEloConfig::default();
        let wins = array![[0., 2.], [1., 0.]];
        let plain = BatchElo::fit(&config, wins.view(), None).unwrap();
        let zero = BatchElo::fit(&config, wins.view(), Some(array![[0., 0.], [0., 0.]].view())).unwrap();
        let drawn = BatchElo::fit(&config, wins.view(), Some(array![[0., 1.], [1., 0.]].view())).unwrap();
        assert!((plain.ratings()[0] - zero.ratings()[0]).abs() < 1e-9);
        assert!(drawn.ratings()[0] > drawn.ratings()[1] && drawn.ratings()[0] < plain.ratings()[0]);
        assert!((drawn.ratings()[0] - 400.0 * (2.51f64 / 1.51).log10()).abs() < 1e-6);
    }

    /// OpenSpiel's SCO-paper test: [[0,5,2],[0,0,2],[3,3,0]] → r₀ > r₂ > r₁.
    #[test]
    fn sco_paper_example() {
        let wins = array![[0., 5., 2.], [0., 0., 2.], [3., 3., 0.]];
        let r = BatchElo::fit(&BatchEloConfig::default(), wins.view(), None).unwrap().ratings().to_vec();
        assert!(r[0] > r[2] && r[2] > r[1], "{r:?}");
        let mut flat = wins.iter().copied().collect::<Vec<f64>>();
        flat[4] = f64::NAN; // the diagonal is ignored
        let mut buffer = vec![5.0; 7];
        let read = BatchElo::fit_scores(&BatchEloConfig::default(), 3, &mut flat, &mut buffer).unwrap();
        assert_eq!(read.ratings(), &r[..], "the same fit from a flat matrix, in a used buffer");
        let mut bad = [0.0, f64::NAN, 1.0, 0.0];
        assert!(BatchElo::fit_scores(&BatchEloConfig::default(), 2, &mut bad, &mut buffer).is_err());
        assert!(BatchElo::fit_scores(&BatchEloConfig::default(), 2, &mut [0.0; 3], &mut buffer).is_err());
    }

    #[test]
    fn bad_input_is_an_error() {
        let config = BatchEloConfig::default();
        assert!(BatchElo::fit(&config, ndarray::Array2::zeros((2, 3)).view(), None).is_err());
        assert!(BatchElo::fit(&config, array![[0., -1.], [1., 0.]].view(), None).is_err());
        assert!(BatchElo::fit(&config, array![[0., f64::NAN], [1., 0.]].view(), None).is_err());
        let wins = array![[0., 1.], [1., 0.]];
        assert!(BatchElo::fit(&config, wins.view(), Some(array![[0., 1.], [2., 0.]].view())).is_err());
        assert!(BatchElo::fit(&config, wins.view(), Some(array![[0.]].view())).is_err());
    }

    #[test]
    fn degenerate_sizes() {
        let config = BatchEloConfig::builder().minimum_rating(1000.0).build().unwrap();
        assert!(
            BatchElo::fit(&config, ndarray::Array2::zeros((0, 0)).view(), None).unwrap().ratings().is_empty()
        );
        assert_eq!(BatchElo::fit(&config, array![[0.]].view(), None).unwrap().ratings(), &[1000.0]);
        let unsmoothed = BatchEloConfig::builder().smoothing(0.0).build().unwrap();
        let r = BatchElo::fit(&unsmoothed, ndarray::Array2::zeros((3, 3)).view(), None).unwrap();
        assert_eq!(r.ratings(), &[0.0, 0.0, 0.0]);
    }
}
