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
/// ([`Status::MaxIterations`]). (OpenSpiel reports the strengths before the last
/// iteration; these are after it, a difference below the tolerance.)
///
/// # Complexity
///
/// `O(n²)` per iteration for `n` members.
///
/// # References
///
/// D. R. Hunter, *MM algorithms for generalized Bradley–Terry models*, Annals of Statistics
/// 32(1), 384–406, 2004.
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
        let mut w = vec![0.0; n * n];
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let won = wins[[i, j]];
                let drawn = draws.map_or(0.0, |d| d[[i, j]]);
                for (what, x) in [("win", won), ("draw", drawn)] {
                    if !(x.is_finite() && x >= 0.0) {
                        return Err(Error::Config(format!(
                            "{what} count ({i}, {j}) must be a finite number ≥ 0, got {x}"
                        )));
                    }
                }
                if draws.is_some_and(|d| d[[i, j]] != d[[j, i]]) {
                    return Err(Error::Config(format!(
                        "the draw matrix must be symmetric, not at ({i}, {j})"
                    )));
                }
                w[i * n + j] = won + 0.5 * drawn + config.smoothing;
            }
        }
        let (strengths, status, iterations) = minorise_maximise(config, n, &w);
        let mut ratings: Vec<f64> = strengths.iter().map(|g| config.scale * g.log10()).collect();
        let lowest = ratings.iter().copied().fold(f64::INFINITY, f64::min);
        ratings.iter_mut().for_each(|r| *r = *r - lowest + config.minimum_rating);
        Ok(BatchElo { ratings, scale: config.scale, status, iterations })
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

/// Hunter's MM on the smoothed score matrix `w` (row-major `n × n`, diagonal unused):
/// normalised strengths, status, iterations.
fn minorise_maximise(config: &BatchEloConfig, n: usize, w: &[f64]) -> (Vec<f64>, Status, usize) {
    let mut gamma = vec![1.0; n];
    if n < 2 {
        return (gamma, Status::Solved, 0);
    }
    let total: Vec<f64> = (0..n).map(|i| (0..n).map(|j| w[i * n + j]).sum()).collect();
    // Games between each pair, row-major, so that a member's update reads one row; the
    // diagonal is 0. `w + wᵀ` by tiles, so that the transpose's reads stay in the cache (a
    // column read element by element misses it on every element of a league's table).
    let mut games = vec![0.0; n * n];
    const TILE: usize = 64;
    for i0 in (0..n).step_by(TILE) {
        for j0 in (0..n).step_by(TILE) {
            for i in i0..(i0 + TILE).min(n) {
                for j in j0..(j0 + TILE).min(n) {
                    games[i * n + j] = w[i * n + j] + w[j * n + i];
                }
            }
        }
    }
    let mut next = vec![0.0; n];
    // The smallest positive f64 (OpenSpiel floors at `denorm_min` too).
    let floor = f64::from_bits(1);
    for iteration in 1..=config.max_iterations {
        // Members in parallel, each sum in a fixed order: the same bits on any number of
        // threads.
        next.par_iter_mut().enumerate().for_each(|(i, next)| {
            let ratio = games_over_strengths(&games[i * n..(i + 1) * n], gamma[i], &gamma);
            // A member that never played keeps its strength.
            *next = if ratio > 0.0 { total[i] / ratio } else { gamma[i] };
        });
        let sum: f64 = next.iter().sum();
        if !(sum > 0.0 && sum.is_finite()) {
            // No member ever scored: every strength is as good as any other.
            return (vec![1.0; n], Status::Solved, iteration);
        }
        let mut change = 0.0f64;
        for (g, x) in gamma.iter_mut().zip(&next) {
            let x = (x / sum).max(floor);
            change = change.max((x - *g).abs());
            *g = x;
        }
        if change < config.convergence_tolerance {
            return (gamma, Status::Solved, iteration);
        }
    }
    (gamma, Status::MaxIterations, config.max_iterations)
}

/// `Σ_j row[j] / (own + gamma[j])`, the MM update's denominator for one member (its own
/// entry of `row` is 0, so it adds nothing). Four running sums, combined at the end: the
/// divisions are independent, so they overlap (and vectorise) instead of waiting on one
/// sum; the order is fixed, so the bits do not depend on the machine's threads.
fn games_over_strengths(row: &[f64], own: f64, gamma: &[f64]) -> f64 {
    let mut sums = [0.0f64; 4];
    let (rows, gammas) = (row.chunks_exact(4), gamma.chunks_exact(4));
    let tail: f64 = rows.remainder().iter().zip(gammas.remainder()).map(|(r, g)| r / (own + g)).sum();
    for (r, g) in rows.zip(gammas) {
        for k in 0..4 {
            sums[k] += r[k] / (own + g[k]);
        }
    }
    (sums[0] + sums[1]) + (sums[2] + sums[3]) + tail
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
