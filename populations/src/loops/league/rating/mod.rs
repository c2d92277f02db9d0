//! Ratings of league members: online Elo, batch Elo (Bradley–Terry), multidimensional Elo
//! (mElo), Nash averaging, and the Brier score of any rating's predictions.
//!
//! Members are dense indices `0..num_members`, in the order they joined (a league's member
//! index; ratings never remove a member). Every rating that predicts match outcomes is a
//! [`Rating`]: `predict(i, j)` is the probability that `i` beats `j` (its expected score,
//! draws counting ½), so [`brier_score`] compares any of them on the same held-out
//! [`MatchResult`]s. Ratings that learn one match at a time are also [`OnlineRating`]s.
//!
//! | type | what | fitted from |
//! |---|---|---|
//! | [`Elo`] | one number per member, `E = 1/(1 + 10^((R_j − R_i)/400))` | one match at a time |
//! | [`BatchElo`] | the Bradley–Terry maximum-likelihood Elo (Hunter's MM, OpenSpiel's smoothing) | a matrix of win counts |
//! | [`MElo`] | Elo plus a `2k`-dimensional cyclic vector per member (mElo₂ₖ) | one match at a time |
//! | [`WinRates`](crate::WinRates) | the empirical (decayed) win rate of each ordered pair | one match at a time |
//! | [`nash_averaging`] | maximum-entropy Nash skill, not a predictor | a win-rate matrix |
//!
//! # Config shape
//!
//! The settings types deserialise from TOML tables whose keys are the builders' fields (all
//! optional, unknown keys rejected), for example:
//!
//! ```toml
//! [elo]            # EloConfig
//! k_factor = 32.0
//! scale = 400.0
//! initial_rating = 1000.0
//!
//! [batch_elo]      # BatchEloConfig
//! smoothing = 0.01
//! max_iterations = 2000
//! convergence_tolerance = 1e-10
//!
//! [melo]           # MEloConfig
//! k = 1
//! rating_rate = 16.0
//! vector_rate = 1.0
//! seed = 0
//! ```
//!
//! # Examples
//!
//! ```
//! use metagame_populations::rating::{Elo, EloConfig, MatchResult, OnlineRating, Rating, brier_score};
//!
//! let mut elo = Elo::new(EloConfig::default(), 2);
//! let held_out = [MatchResult::win(0, 1), MatchResult::draw(0, 1)];
//! for _ in 0..20 {
//!     elo.update(&MatchResult::win(0, 1));
//! }
//! assert!(elo.predict(0, 1) > 0.5);
//! let brier = brier_score(&elo, &held_out).unwrap();
//! assert!(brier < 0.25);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # References
//!
//! A. Elo, *The Rating of Chessplayers, Past and Present*, 1978. D. R. Hunter, *MM
//! algorithms for generalized Bradley–Terry models*, Annals of Statistics 32(1), 2004.
//! D. Balduzzi, K. Tuyls, J. Pérolat, T. Graepel, *Re-evaluating evaluation*, NeurIPS 2018,
//! arXiv:1806.02643. G. W. Brier, *Verification of forecasts expressed in terms of
//! probability*, Monthly Weather Review 78(1), 1950.

mod batch_elo;
mod elo;
mod melo;
mod nash_averaging;

pub use batch_elo::{BatchElo, BatchEloConfig, BatchEloConfigBuilder};
pub use elo::{Elo, EloConfig, EloConfigBuilder};
pub use melo::{MElo, MEloConfig, MEloConfigBuilder};
pub use metagame_solvers::nash_averaging::NashAveragingResult;
pub use nash_averaging::nash_averaging;

use crate::error::{Error, Result};

/// A rating that predicts match outcomes between members.
///
/// Members are indices `0..num_members()`. Implementations are dyn-compatible so a league
/// can keep several side by side (`Vec<Box<dyn Rating>>`).
pub trait Rating {
    /// Short stable name for reports ("elo", "batch-elo", "melo", "win-rates").
    fn name(&self) -> &'static str;

    /// How many members are rated.
    fn num_members(&self) -> usize;

    /// The predicted probability that member `i` beats member `j` (its expected score, a
    /// draw counting ½), in `[0, 1]`.
    ///
    /// # Panics
    ///
    /// If `i` or `j` is not below [`num_members`](Rating::num_members) (a caller bug).
    fn predict(&self, i: usize, j: usize) -> f64;
}

/// A rating that learns from one match at a time and grows with the league.
pub trait OnlineRating: Rating {
    /// Add a member with the rating's initial values; returns its index (the previous
    /// [`num_members`](Rating::num_members)).
    fn add_member(&mut self) -> usize;

    /// Learn from one match.
    ///
    /// # Panics
    ///
    /// If a member of the match is not below [`num_members`](Rating::num_members) (a caller
    /// bug).
    fn update(&mut self, result: &MatchResult);
}

/// The result of one match between two members: the first member's score, 1 for a win,
/// ½ for a draw, 0 for a loss (any value in between for a fractional result).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MatchResult {
    first: usize,
    second: usize,
    score: f64,
}

impl MatchResult {
    /// The first member scored `score` against the second.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] unless `score` is in `[0, 1]` (NaN included).
    pub fn new(first: usize, second: usize, score: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&score) {
            return Err(Error::Config(format!("a match score must be in [0, 1], got {score}")));
        }
        Ok(Self { first, second, score })
    }

    /// `first` beat `second` (score 1).
    pub fn win(first: usize, second: usize) -> Self {
        Self { first, second, score: 1.0 }
    }

    /// A draw (score ½).
    pub fn draw(first: usize, second: usize) -> Self {
        Self { first, second, score: 0.5 }
    }

    /// `first` lost to `second` (score 0).
    pub fn loss(first: usize, second: usize) -> Self {
        Self { first, second, score: 0.0 }
    }

    /// The first member.
    pub fn first(&self) -> usize {
        self.first
    }

    /// The second member.
    pub fn second(&self) -> usize {
        self.second
    }

    /// The first member's score in `[0, 1]`.
    pub fn score(&self) -> f64 {
        self.score
    }
}

/// The Elo expected score of a player rated `rating` against one rated `opponent`:
/// `1 / (1 + 10^((opponent − rating) / scale))` (scale 400 is the chess convention: +400
/// points give 10/11, +200 about 0.760).
///
/// # Examples
///
/// ```
/// use metagame_populations::rating::expected_score;
/// assert!((expected_score(1400.0, 1000.0, 400.0) - 10.0 / 11.0).abs() < 1e-12);
/// assert!((expected_score(1000.0, 1000.0, 400.0) - 0.5).abs() < 1e-12);
/// ```
pub fn expected_score(rating: f64, opponent: f64, scale: f64) -> f64 {
    1.0 / (1.0 + 10f64.powf((opponent - rating) / scale))
}

/// The Brier score of `rating`'s predictions on `matches`: the mean of
/// `(predict(first, second) − score)²`, 0 for perfect predictions, ¼ for predicting ½
/// everywhere on decisive matches. `None` when `matches` is empty.
///
/// # Panics
///
/// If a match names a member that `rating` does not rate (a caller bug).
///
/// # Complexity
///
/// One prediction per match.
///
/// # Examples
///
/// ```
/// use metagame_populations::rating::{Elo, EloConfig, MatchResult, brier_score};
/// let elo = Elo::new(EloConfig::default(), 2); // equal ratings: predicts ½
/// let brier = brier_score(&elo, &[MatchResult::win(0, 1), MatchResult::loss(0, 1)]);
/// assert_eq!(brier, Some(0.25));
/// ```
#[track_caller]
pub fn brier_score(rating: &dyn Rating, matches: &[MatchResult]) -> Option<f64> {
    if matches.is_empty() {
        return None;
    }
    let total: f64 = matches
        .iter()
        .map(|m| {
            let error = rating.predict(m.first, m.second) - m.score;
            error * error
        })
        .sum();
    Some(total / matches.len() as f64)
}

/// `x` must be finite and positive.
fn check_positive(field: &str, x: f64) -> Result<f64> {
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err(Error::Config(format!("{field} must be a finite number > 0, got {x}")))
    }
}

/// `x` must be finite.
fn check_finite(field: &str, x: f64) -> Result<f64> {
    if x.is_finite() { Ok(x) } else { Err(Error::Config(format!("{field} must be finite, got {x}"))) }
}

/// Panics unless both members of a match are below `n`.
#[track_caller]
pub(crate) fn check_members(result: &MatchResult, n: usize) {
    assert!(
        result.first < n && result.second < n,
        "match between members {} and {}, but only {n} are rated",
        result.first,
        result.second
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rating that knows the true probabilities.
    struct Oracle(Vec<Vec<f64>>);

    impl Rating for Oracle {
        fn name(&self) -> &'static str {
            "oracle"
        }
        fn num_members(&self) -> usize {
            self.0.len()
        }
        fn predict(&self, i: usize, j: usize) -> f64 {
            self.0[i][j]
        }
    }

    #[test]
    fn brier_of_perfect_predictions_is_zero() {
        let oracle = Oracle(vec![vec![0.5, 1.0], vec![0.0, 0.5]]);
        let matches = [MatchResult::win(0, 1), MatchResult::loss(1, 0), MatchResult::draw(0, 0)];
        assert_eq!(brier_score(&oracle, &matches), Some(0.0));
        assert_eq!(brier_score(&oracle, &[]), None);
    }

    #[test]
    fn brier_of_always_wrong_is_one() {
        let oracle = Oracle(vec![vec![0.5, 0.0], vec![1.0, 0.5]]);
        assert_eq!(brier_score(&oracle, &[MatchResult::win(0, 1), MatchResult::loss(1, 0)]), Some(1.0));
    }

    #[test]
    fn match_scores_are_checked() {
        assert!(MatchResult::new(0, 1, 0.25).is_ok());
        assert!(MatchResult::new(0, 1, 1.5).is_err());
        assert!(MatchResult::new(0, 1, -0.1).is_err());
        assert!(MatchResult::new(0, 1, f64::NAN).is_err());
    }

    /// Elo's expected score 1 / (1 + 10^(−Δ/400)): +400 points → 10/11, +200 → ≈ 0.760.
    #[test]
    fn expected_score_known_values() {
        assert!((expected_score(400.0, 0.0, 400.0) - 10.0 / 11.0).abs() < 1e-12);
        assert!((expected_score(200.0, 0.0, 400.0) - 0.759_746_926_647_958).abs() < 1e-12);
    }
}
