//! Online Elo.

use serde::{Deserialize, Serialize};

use super::{MatchResult, OnlineRating, Rating, check_finite, check_members, check_positive, expected_score};
use crate::error::{Error, Result};
use crate::settings::{built_by, setters};

/// Online Elo settings; always valid (built by [`EloConfig::builder`] or deserialised
/// through it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "EloConfigBuilder", into = "EloConfigBuilder")]
pub struct EloConfig {
    k_factor: f64,
    scale: f64,
    initial_rating: f64,
}

/// Builder and serde form of [`EloConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct EloConfigBuilder {
    /// K: points moved per unit of surprise (`score − expected`); finite, > 0. Default 32.
    pub k_factor: Option<f64>,
    /// Points per factor of 10 in the odds (the logistic scale); finite, > 0. Default 400.
    pub scale: Option<f64>,
    /// A new member's rating; finite. Default 1000.
    pub initial_rating: Option<f64>,
}

impl EloConfigBuilder {
    setters!(k_factor: f64, scale: f64, initial_rating: f64);

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<EloConfig> {
        Ok(EloConfig {
            k_factor: check_positive("k_factor", self.k_factor.unwrap_or(32.0))?,
            scale: check_positive("scale", self.scale.unwrap_or(400.0))?,
            initial_rating: check_finite("initial_rating", self.initial_rating.unwrap_or(1000.0))?,
        })
    }
}

built_by!(EloConfig, EloConfigBuilder);

impl From<EloConfig> for EloConfigBuilder {
    fn from(c: EloConfig) -> Self {
        EloConfigBuilder {
            k_factor: Some(c.k_factor),
            scale: Some(c.scale),
            initial_rating: Some(c.initial_rating),
        }
    }
}

impl EloConfig {
    /// K, points per unit of surprise.
    pub fn k_factor(&self) -> f64 {
        self.k_factor
    }
    /// Points per factor of 10 in the odds.
    pub fn scale(&self) -> f64 {
        self.scale
    }
    /// A new member's rating.
    pub fn initial_rating(&self) -> f64 {
        self.initial_rating
    }
}

/// Online Elo: after a match between `i` and `j` with `i`'s score `S ∈ [0, 1]`,
/// `R_i ← R_i + K·(S − E)` and `R_j ← R_j − K·(S − E)`, where
/// `E = 1/(1 + 10^((R_j − R_i)/scale))` is `i`'s [expected score](super::expected_score).
/// Updates never change the sum of all ratings (removing a member takes its rating out).
///
/// Elo fits only the transitive part of a game: on rock–paper–scissors it predicts ½
/// everywhere (see [`MElo`](super::MElo) for cycles).
///
/// # Examples
///
/// ```
/// use metagame_populations::rating::{Elo, EloConfig, MatchResult, OnlineRating, Rating};
/// let mut elo = Elo::new(EloConfig::default(), 2);
/// elo.update(&MatchResult::win(0, 1));
/// assert_eq!(elo.ratings(), &[1016.0, 984.0]); // K = 32, expected ½
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "EloState")]
pub struct Elo {
    config: EloConfig,
    ratings: Vec<f64>,
}

/// The unchecked serde form of [`Elo`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EloState {
    config: EloConfig,
    ratings: Vec<f64>,
}

impl TryFrom<EloState> for Elo {
    type Error = Error;
    fn try_from(s: EloState) -> Result<Self> {
        if s.ratings.iter().any(|r| !r.is_finite()) {
            return Err(Error::Config("Elo ratings must be finite".into()));
        }
        Ok(Elo { config: s.config, ratings: s.ratings })
    }
}

impl Elo {
    /// `num_members` members at the initial rating.
    pub fn new(config: EloConfig, num_members: usize) -> Self {
        let ratings = vec![config.initial_rating; num_members];
        Self { config, ratings }
    }

    /// The settings.
    pub fn config(&self) -> &EloConfig {
        &self.config
    }

    /// Every member's rating, by index.
    pub fn ratings(&self) -> &[f64] {
        &self.ratings
    }

    /// Remove member `member`; the members after it move down one index (as a league's
    /// other tables do when it evicts a member). O(members).
    ///
    /// # Panics
    ///
    /// If `member` is not rated (a caller bug).
    #[track_caller]
    pub fn remove_member(&mut self, member: usize) {
        let n = self.ratings.len();
        assert!(member < n, "member {member}, but only {n} are rated");
        self.ratings.remove(member);
    }
}

impl Rating for Elo {
    fn name(&self) -> &'static str {
        "elo"
    }

    fn num_members(&self) -> usize {
        self.ratings.len()
    }

    #[track_caller]
    fn predict(&self, i: usize, j: usize) -> f64 {
        expected_score(self.ratings[i], self.ratings[j], self.config.scale)
    }
}

impl OnlineRating for Elo {
    fn add_member(&mut self) -> usize {
        self.ratings.push(self.config.initial_rating);
        self.ratings.len() - 1
    }

    #[track_caller]
    fn update(&mut self, result: &MatchResult) {
        check_members(result, self.ratings.len());
        let (i, j) = (result.first(), result.second());
        if i == j {
            return;
        }
        let step = self.config.k_factor * (result.score() - self.predict(i, j));
        self.ratings[i] += step;
        self.ratings[j] -= step;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_valid() {
        let c = EloConfig::default();
        assert_eq!((c.k_factor(), c.scale(), c.initial_rating()), (32.0, 400.0, 1000.0));
    }

    #[test]
    fn bad_settings_are_rejected() {
        assert!(EloConfig::builder().k_factor(0.0).build().is_err());
        assert!(EloConfig::builder().k_factor(f64::INFINITY).build().is_err());
        assert!(EloConfig::builder().scale(-400.0).build().is_err());
        assert!(EloConfig::builder().initial_rating(f64::NAN).build().is_err());
        assert!(serde_json::from_str::<EloConfig>(r#"{"k_factor": -1}"#).is_err());
        assert!(serde_json::from_str::<EloConfig>(r#"{"k": 16}"#).is_err());
        let c: EloConfig = serde_json::from_str(r#"{"k_factor": 16}"#).unwrap();
        assert_eq!(c.k_factor(), 16.0);
    }

    #[test]
    fn expected_score_is_symmetric() {
        let mut elo = Elo::new(EloConfig::default(), 3);
        for (i, r) in [1000.0, 1234.5, 873.0].into_iter().enumerate() {
            elo.ratings[i] = r;
        }
        for i in 0..3 {
            for j in 0..3 {
                assert!((elo.predict(i, j) + elo.predict(j, i) - 1.0).abs() < 1e-12);
            }
            assert_eq!(elo.predict(i, i), 0.5);
        }
    }

    #[test]
    fn updates_conserve_the_sum() {
        let mut elo = Elo::new(EloConfig::builder().k_factor(24.0).build().unwrap(), 4);
        let before: f64 = elo.ratings().iter().sum();
        let results = [
            MatchResult::win(0, 1),
            MatchResult::draw(1, 2),
            MatchResult::loss(3, 0),
            MatchResult::new(2, 3, 0.25).unwrap(),
            MatchResult::win(1, 1),
        ];
        for _ in 0..50 {
            for r in &results {
                elo.update(r);
            }
        }
        let after: f64 = elo.ratings().iter().sum();
        assert!((before - after).abs() < 1e-9, "{before} vs {after}");
        assert!(elo.ratings()[0] > elo.ratings()[3]);
    }

    #[test]
    fn a_removed_member_moves_the_later_ones_down() {
        let mut elo = Elo::new(EloConfig::default(), 3);
        elo.update(&MatchResult::win(2, 0));
        elo.remove_member(1);
        assert_eq!(elo.ratings(), &[984.0, 1016.0]);
    }

    #[test]
    fn grows_and_round_trips() {
        let mut elo = Elo::new(EloConfig::default(), 1);
        assert_eq!(elo.add_member(), 1);
        elo.update(&MatchResult::win(1, 0));
        let json = serde_json::to_string(&elo).unwrap();
        assert_eq!(serde_json::from_str::<Elo>(&json).unwrap(), elo);
    }

    #[test]
    #[should_panic(expected = "only 2 are rated")]
    fn unknown_members_panic() {
        Elo::new(EloConfig::default(), 2).update(&MatchResult::win(0, 2));
    }
}
