//! Matchmaking: which opponents a learning member plays.
//!
//! A [`Matchmaker`] turns a [`MatchRequest`] (the learner, its candidate opponents, the
//! league's [`WinRates`] and, optionally, a [`Rating`] that predicts outcomes) into
//! sampling probabilities over the candidates, and draws opponents from them with a
//! [`MatchmakingRng`]: Philox keyed by `(seed, round, agent)`, so which opponents a learner
//! gets does not depend on scheduling or thread count. Three matchmakers:
//!
//! - [`Pfsp`]: prioritised fictitious self-play (AlphaStar), candidate `c` drawn with
//!   probability `f(x_c) / Σ_d f(x_d)` where `x_c` is the learner's win rate against `c` and
//!   `f` a [`PfspWeighting`]: `squared` (1 − x)², `linear` 1 − x, `linear-capped`
//!   min(½, 1 − x), `variance` x(1 − x); uniform when the normaliser is below 1e-10.
//! - [`EloMatchmaker`]: uniform over the candidates whose predicted win probability (the
//!   learner's against them) lies in a target band, `[0.3, 0.7]` by default; when none does,
//!   uniform over the closest to the band.
//! - [`UniformMatchmaker`]: every candidate equally likely.
//!
//! # Config shape
//!
//! [`MatchmakingConfig`] is a table tagged by `kind`, holding only its matchmaker's fields
//! (unknown fields rejected):
//!
//! ```toml
//! matchmaking = { kind = "pfsp", weighting = "squared" }   # or linear, linear-capped, variance
//! matchmaking = { kind = "elo", target_min = 0.3, target_max = 0.7 }
//! matchmaking = { kind = "uniform" }
//! ```
//!
//! # Examples
//!
//! ```
//! use metagame_populations::matchmaking::{MatchRequest, Matchmaker, MatchmakingRng, Pfsp, PfspWeighting};
//! use metagame_populations::rating::MatchResult;
//! use metagame_populations::{WinRates, WinRatesConfig};
//!
//! // Member 0 always beats 1 and always loses to 2.
//! let mut table = WinRates::new(WinRatesConfig::default(), 3);
//! table.record(&MatchResult::win(0, 1));
//! table.record(&MatchResult::loss(0, 2));
//! let request = MatchRequest::new(0, &[1, 2], &table);
//! let pfsp = Pfsp::new(PfspWeighting::Squared);
//! assert_eq!(pfsp.probabilities(&request), vec![0.0, 1.0]);
//! let mut rng = MatchmakingRng::new(7, 0, 0); // seed 7, round 0, agent 0
//! assert_eq!(pfsp.choose(&request, &mut rng, 3), vec![2, 2, 2]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # References
//!
//! O. Vinyals et al., *Grandmaster level in StarCraft II using multi-agent reinforcement
//! learning*, Nature 575, 2019 (PFSP; its pseudocode's `pfsp` and `Payoff`).

use std::fmt;

use metagame_games::philox::{EpisodeStream, derive_seed};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::loops::league::rating::Rating;
use crate::loops::league::win_rates::WinRates;
use crate::settings::{built_by, setters};

/// The purpose of the matchmaking streams' seed ([`derive_seed`] with no index), so they
/// never coincide with the match evaluators' episode streams under the same seed.
const MATCHMAKING: u32 = u32::from_be_bytes(*b"matc");

/// The random numbers of one agent's matchmaking in one round: a Philox4x32-10 stream
/// keyed by `(seed, round, agent)`, independent of every other agent's and round's.
///
/// The stream is [`EpisodeStream`]`::new(s', agent, round)` (matchup = agent, episode =
/// round) under the derived seed `s'` = `derive_seed(seed, u32::from_be_bytes(*b"matc"), &[])`
/// (the first two words of `philox4x32_10([0x6D617463, 0, 0, 0], seed_key(seed))`), so
/// matchmaking draws are not the episode draws of a match evaluator run with the same seed.
///
/// # Examples
///
/// ```
/// use metagame_populations::matchmaking::MatchmakingRng;
/// let (mut a, mut b) = (MatchmakingRng::new(3, 10, 1), MatchmakingRng::new(3, 10, 1));
/// assert_eq!(a.next_uniform(), b.next_uniform());
/// assert_ne!(MatchmakingRng::new(3, 10, 2).next_uniform(), MatchmakingRng::new(3, 11, 2).next_uniform());
/// ```
#[derive(Clone, Debug)]
pub struct MatchmakingRng {
    stream: EpisodeStream,
}

impl MatchmakingRng {
    /// The stream of `agent` (a league member index or role slot) in `round` under `seed`.
    pub fn new(seed: u64, round: u64, agent: u32) -> Self {
        Self { stream: EpisodeStream::new(derive_seed(seed, MATCHMAKING, &[]), agent, round) }
    }

    /// The next uniform in `[0, 1)`.
    pub fn next_uniform(&mut self) -> f64 {
        self.stream.next_uniform()
    }

    /// Uniforms drawn so far.
    pub fn draws(&self) -> u32 {
        self.stream.draws()
    }

    /// Draw an index with probability proportional to `weights[i]` (one uniform).
    ///
    /// # Panics
    ///
    /// If `weights` is empty, has a negative or non-finite entry, or sums to 0 (caller
    /// bugs).
    #[track_caller]
    pub fn sample(&mut self, weights: &[f64]) -> usize {
        assert!(weights.iter().all(|w| w.is_finite() && *w >= 0.0), "weights must be finite and ≥ 0");
        let total: f64 = weights.iter().sum();
        assert!(total > 0.0, "weights must not all be zero");
        let target = self.next_uniform() * total;
        let mut cumulative = 0.0;
        let mut last_positive = 0;
        for (i, &w) in weights.iter().enumerate() {
            if w > 0.0 {
                cumulative += w;
                last_positive = i;
                if target < cumulative {
                    return i;
                }
            }
        }
        // Rounding left the target at the very top.
        last_positive
    }
}

/// What a matchmaker sees: the learner, its candidate opponents (member indices; they may
/// include the learner, for self-play), the league's win rates, and the rating whose
/// predictions Elo matchmaking uses (the win-rate table's own win rates unless
/// [`with_ratings`](MatchRequest::with_ratings) gives another).
#[derive(Clone, Copy)]
pub struct MatchRequest<'a> {
    learner: usize,
    candidates: &'a [usize],
    win_rates: &'a WinRates,
    ratings: &'a dyn Rating,
}

impl fmt::Debug for MatchRequest<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MatchRequest")
            .field("learner", &self.learner)
            .field("candidates", &self.candidates)
            .field("ratings", &self.ratings.name())
            .finish_non_exhaustive()
    }
}

impl<'a> MatchRequest<'a> {
    /// A request for `learner`'s opponents among `candidates`.
    ///
    /// # Panics
    ///
    /// If `candidates` is empty or a member is not in `win_rates` (caller bugs).
    #[track_caller]
    pub fn new(learner: usize, candidates: &'a [usize], win_rates: &'a WinRates) -> Self {
        assert!(!candidates.is_empty(), "a match request needs at least one candidate");
        let n = win_rates.num_members();
        assert!(
            learner < n && candidates.iter().all(|&c| c < n),
            "learner {learner} or a candidate of {candidates:?} is not among the table's {n} members"
        );
        Self { learner, candidates, win_rates, ratings: win_rates }
    }

    /// Predict outcomes with `ratings` (Elo, batch Elo, mElo, …) instead of the win rates.
    ///
    /// # Panics
    ///
    /// If `ratings` does not rate the learner and every candidate (a caller bug).
    #[track_caller]
    pub fn with_ratings(self, ratings: &'a dyn Rating) -> Self {
        let n = ratings.num_members();
        assert!(
            self.learner < n && self.candidates.iter().all(|&c| c < n),
            "the rating `{}` rates {n} members, fewer than the request names",
            ratings.name()
        );
        Self { ratings, ..self }
    }

    /// The learning member.
    pub fn learner(&self) -> usize {
        self.learner
    }

    /// The candidate opponents (member indices, never empty).
    pub fn candidates(&self) -> &'a [usize] {
        self.candidates
    }

    /// The league's win rates.
    pub fn win_rates(&self) -> &'a WinRates {
        self.win_rates
    }

    /// The rating that predicts outcomes.
    pub fn ratings(&self) -> &'a dyn Rating {
        self.ratings
    }

    /// The learner's win rate against each candidate, in candidate order.
    pub fn learner_win_rates(&self) -> Vec<f64> {
        let row = self.win_rates.row(self.learner);
        self.candidates.iter().map(|&c| row[c]).collect()
    }

    /// The learner's predicted win probability against each candidate, in candidate order.
    pub fn predicted_win_probabilities(&self) -> Vec<f64> {
        self.candidates.iter().map(|&c| self.ratings.predict(self.learner, c)).collect()
    }
}

/// Chooses opponents for a learning member. Dyn-compatible, so configs can pick one at run
/// time.
pub trait Matchmaker: Send + Sync {
    /// Short stable name for reports ("pfsp-squared", "elo", "uniform").
    fn name(&self) -> &'static str;

    /// The probability of drawing each candidate, in candidate order (non-negative, sum 1).
    fn probabilities(&self, request: &MatchRequest<'_>) -> Vec<f64>;

    /// Draw `count` opponents independently (with replacement), one uniform from `rng`
    /// each; returns member indices.
    fn choose(&self, request: &MatchRequest<'_>, rng: &mut MatchmakingRng, count: usize) -> Vec<usize> {
        let probabilities = self.probabilities(request);
        (0..count).map(|_| request.candidates()[rng.sample(&probabilities)]).collect()
    }
}

/// A PFSP weighting `f(x)` of the learner's win rate `x` against a candidate (AlphaStar's
/// names; configs spell them in kebab case).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PfspWeighting {
    /// `(1 − x)²` (AlphaStar's `f_hard` with p = 2): focus on the opponents we lose to.
    #[default]
    Squared,
    /// `1 − x`.
    Linear,
    /// `min(½, 1 − x)`: every opponent we do not clearly beat equally.
    #[serde(alias = "linear_capped")]
    LinearCapped,
    /// `x(1 − x)` (AlphaStar's `f_var`): opponents of our level, peaking at x = ½.
    Variance,
}

impl PfspWeighting {
    /// `f(x)`.
    pub fn weight(self, x: f64) -> f64 {
        match self {
            PfspWeighting::Squared => (1.0 - x) * (1.0 - x),
            PfspWeighting::Linear => 1.0 - x,
            PfspWeighting::LinearCapped => (1.0 - x).min(0.5),
            PfspWeighting::Variance => x * (1.0 - x),
        }
    }

    /// AlphaStar's `pfsp`: `f(x_c) / Σ_d f(x_d)`, or uniform when the sum is below 1e-10.
    /// Empty in, empty out.
    ///
    /// # Examples
    ///
    /// ```
    /// use metagame_populations::matchmaking::PfspWeighting;
    /// assert_eq!(PfspWeighting::Squared.probabilities(&[0.5, 1.0]), vec![1.0, 0.0]);
    /// assert_eq!(PfspWeighting::Squared.probabilities(&[1.0, 1.0]), vec![0.5, 0.5]);
    /// ```
    pub fn probabilities(self, win_rates: &[f64]) -> Vec<f64> {
        let weights: Vec<f64> = win_rates.iter().map(|&x| self.weight(x)).collect();
        let total: f64 = weights.iter().sum();
        if total < 1e-10 {
            let n = win_rates.len() as f64;
            return vec![1.0 / n; win_rates.len()];
        }
        weights.into_iter().map(|w| w / total).collect()
    }

    /// The config name ("squared", "linear", "linear-capped", "variance").
    pub fn name(self) -> &'static str {
        match self {
            PfspWeighting::Squared => "squared",
            PfspWeighting::Linear => "linear",
            PfspWeighting::LinearCapped => "linear-capped",
            PfspWeighting::Variance => "variance",
        }
    }
}

/// Prioritised fictitious self-play (AlphaStar): candidates drawn by
/// [`PfspWeighting::probabilities`] of the learner's win rates against them.
///
/// # Examples
///
/// ```
/// use metagame_populations::matchmaking::{MatchRequest, Matchmaker, Pfsp, PfspWeighting};
/// use metagame_populations::{WinRates, WinRatesConfig};
/// let table = WinRates::new(WinRatesConfig::default(), 3); // no games: every rate ½
/// let p = Pfsp::new(PfspWeighting::Variance).probabilities(&MatchRequest::new(0, &[1, 2], &table));
/// assert_eq!(p, vec![0.5, 0.5]);
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Pfsp {
    /// The weighting. Default `squared`.
    pub weighting: PfspWeighting,
}

impl Pfsp {
    /// PFSP with `weighting`.
    pub fn new(weighting: PfspWeighting) -> Self {
        Self { weighting }
    }
}

impl Matchmaker for Pfsp {
    fn name(&self) -> &'static str {
        match self.weighting {
            PfspWeighting::Squared => "pfsp-squared",
            PfspWeighting::Linear => "pfsp-linear",
            PfspWeighting::LinearCapped => "pfsp-linear-capped",
            PfspWeighting::Variance => "pfsp-variance",
        }
    }

    fn probabilities(&self, request: &MatchRequest<'_>) -> Vec<f64> {
        self.weighting.probabilities(&request.learner_win_rates())
    }
}

/// Elo matchmaking: uniform over the candidates the learner is predicted to beat with
/// probability in `[target_min, target_max]` (predictions from the request's
/// [`ratings`](MatchRequest::ratings)); when no candidate is in the band, uniform over the
/// candidates closest to it. Always valid (built by [`EloMatchmaker::builder`] or
/// deserialised through it).
///
/// # Examples
///
/// ```
/// use metagame_populations::matchmaking::{EloMatchmaker, MatchRequest, Matchmaker};
/// use metagame_populations::rating::{Elo, EloConfig, MatchResult, OnlineRating};
/// use metagame_populations::{WinRates, WinRatesConfig};
///
/// let mut elo = Elo::new(EloConfig::default(), 4);
/// for _ in 0..30 {
///     elo.update(&MatchResult::win(0, 3)); // 0 is far stronger than 3
/// }
/// let table = WinRates::new(WinRatesConfig::default(), 4);
/// let request = MatchRequest::new(0, &[1, 2, 3], &table).with_ratings(&elo);
/// let p = EloMatchmaker::default().probabilities(&request);
/// assert_eq!(p, vec![0.5, 0.5, 0.0]);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "EloMatchmakerBuilder", into = "EloMatchmakerBuilder")]
pub struct EloMatchmaker {
    target_min: f64,
    target_max: f64,
}

/// Builder and serde form of [`EloMatchmaker`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct EloMatchmakerBuilder {
    /// Lowest predicted win probability in the band; in `[0, target_max]`. Default 0.3.
    pub target_min: Option<f64>,
    /// Highest predicted win probability in the band; in `[target_min, 1]`. Default 0.7.
    pub target_max: Option<f64>,
}

impl EloMatchmakerBuilder {
    setters!(target_min: f64, target_max: f64);

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] unless `0 ≤ target_min ≤ target_max ≤ 1`.
    pub fn build(self) -> Result<EloMatchmaker> {
        let (target_min, target_max) = (self.target_min.unwrap_or(0.3), self.target_max.unwrap_or(0.7));
        for (field, x) in [("target_min", target_min), ("target_max", target_max)] {
            if !(0.0..=1.0).contains(&x) {
                return Err(Error::Config(format!("{field} must be in [0, 1], got {x}")));
            }
        }
        if target_min > target_max {
            return Err(Error::Config(format!(
                "target_min ({target_min}) must not exceed target_max ({target_max})"
            )));
        }
        Ok(EloMatchmaker { target_min, target_max })
    }
}

built_by!(EloMatchmaker, EloMatchmakerBuilder);

impl From<EloMatchmaker> for EloMatchmakerBuilder {
    fn from(c: EloMatchmaker) -> Self {
        EloMatchmakerBuilder { target_min: Some(c.target_min), target_max: Some(c.target_max) }
    }
}

impl EloMatchmaker {
    /// Lowest predicted win probability in the band.
    pub fn target_min(&self) -> f64 {
        self.target_min
    }

    /// Highest predicted win probability in the band.
    pub fn target_max(&self) -> f64 {
        self.target_max
    }

    /// How far a predicted win probability lies outside the band (0 inside).
    fn distance(&self, p: f64) -> f64 {
        (self.target_min - p).max(p - self.target_max).max(0.0)
    }
}

impl Matchmaker for EloMatchmaker {
    fn name(&self) -> &'static str {
        "elo"
    }

    fn probabilities(&self, request: &MatchRequest<'_>) -> Vec<f64> {
        let distances: Vec<f64> =
            request.predicted_win_probabilities().into_iter().map(|p| self.distance(p)).collect();
        // 0 when some candidate is in the band; ties within rounding share the mass.
        let closest = distances.iter().copied().fold(f64::INFINITY, f64::min);
        let chosen: Vec<bool> = distances.iter().map(|&d| d <= closest + 1e-12).collect();
        let count = chosen.iter().filter(|&&c| c).count() as f64;
        chosen.into_iter().map(|c| if c { 1.0 / count } else { 0.0 }).collect()
    }
}

/// Every candidate equally likely (a baseline).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UniformMatchmaker;

impl Matchmaker for UniformMatchmaker {
    fn name(&self) -> &'static str {
        "uniform"
    }

    fn probabilities(&self, request: &MatchRequest<'_>) -> Vec<f64> {
        let n = request.candidates().len();
        vec![1.0 / n as f64; n]
    }
}

/// A matchmaker chosen by config: a table tagged by `kind` (see the [module docs](self)).
/// Default: PFSP with the squared weighting.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case", deny_unknown_fields)]
#[non_exhaustive]
pub enum MatchmakingConfig {
    /// `kind = "pfsp"`, with `weighting`.
    Pfsp(Pfsp),
    /// `kind = "elo"`, with `target_min` and `target_max`.
    Elo(EloMatchmaker),
    /// `kind = "uniform"`.
    Uniform {},
}

impl Default for MatchmakingConfig {
    fn default() -> Self {
        MatchmakingConfig::Pfsp(Pfsp::default())
    }
}

impl MatchmakingConfig {
    /// The matchmaker this config describes.
    pub fn matchmaker(&self) -> Box<dyn Matchmaker> {
        match *self {
            MatchmakingConfig::Pfsp(p) => Box::new(p),
            MatchmakingConfig::Elo(e) => Box::new(e),
            MatchmakingConfig::Uniform {} => Box::new(UniformMatchmaker),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::WinRatesConfig;
    use crate::loops::league::rating::MatchResult;

    /// A table where member 0's win rate against member `c` is `rates[c - 1]` (exactly, no
    /// decay).
    fn table(rates: &[f64]) -> WinRates {
        let config = WinRatesConfig::builder().decay(1.0).build().unwrap();
        let mut t = WinRates::new(config, rates.len() + 1);
        for (c, &x) in rates.iter().enumerate() {
            t.record(&MatchResult::new(0, c + 1, x).unwrap());
        }
        t
    }

    #[test]
    fn weightings_are_alphastars() {
        use PfspWeighting::*;
        let xs = [0.0, 0.2, 0.5, 0.8, 1.0];
        for x in xs {
            assert_eq!(Squared.weight(x), (1.0 - x) * (1.0 - x));
            assert_eq!(Linear.weight(x), 1.0 - x);
            assert_eq!(LinearCapped.weight(x), (1.0 - x).min(0.5));
            assert_eq!(Variance.weight(x), x * (1.0 - x));
        }
        for w in [Squared, Linear, LinearCapped, Variance] {
            let p = w.probabilities(&xs);
            assert!((p.iter().sum::<f64>() - 1.0).abs() < 1e-12, "{w:?}: {p:?}");
            assert!(p.iter().all(|&q| q >= 0.0));
        }
        // Squared never picks an opponent we always beat (unless we beat them all).
        assert_eq!(Squared.probabilities(&xs)[4], 0.0);
        // Variance peaks at ½.
        let p = Variance.probabilities(&xs);
        assert!(p[2] > p[1] && p[2] > p[3] && p[0] == 0.0 && p[4] == 0.0);
        assert!(Squared.probabilities(&[]).is_empty());
    }

    #[test]
    fn pfsp_reads_the_learners_row() {
        let t = table(&[0.1, 0.9]);
        let request = MatchRequest::new(0, &[1, 2], &t);
        let p = Pfsp::new(PfspWeighting::Linear).probabilities(&request);
        assert!((p[0] - 0.9).abs() < 1e-12 && (p[1] - 0.1).abs() < 1e-12, "{p:?}");
    }

    #[test]
    fn elo_band_and_fallback() {
        let t = table(&[0.05, 0.35, 0.6, 0.95]);
        let candidates = [1, 2, 3, 4];
        let elo = EloMatchmaker::default();
        assert_eq!(elo.probabilities(&MatchRequest::new(0, &candidates, &t)), vec![0.0, 0.5, 0.5, 0.0]);
        // Band empty: the closest share (0.35 and 0.6 are both 0.1 from [0.45, 0.5]).
        let narrow = EloMatchmaker::builder().target_min(0.45).target_max(0.5).build().unwrap();
        assert_eq!(narrow.probabilities(&MatchRequest::new(0, &candidates, &t)), vec![0.0, 0.5, 0.5, 0.0]);
        let high = EloMatchmaker::builder().target_min(0.7).target_max(0.8).build().unwrap();
        assert_eq!(high.probabilities(&MatchRequest::new(0, &candidates, &t)), vec![0.0, 0.0, 1.0, 0.0]);
    }

    #[test]
    fn elo_settings() {
        assert!(EloMatchmaker::builder().target_min(0.8).build().is_err());
        assert!(EloMatchmaker::builder().target_max(1.2).build().is_err());
        assert!(EloMatchmaker::builder().target_min(f64::NAN).build().is_err());
        let e = EloMatchmaker::default();
        assert_eq!((e.target_min(), e.target_max()), (0.3, 0.7));
    }

    #[test]
    fn config_shape() {
        let parse = |s: &str| serde_json::from_str::<MatchmakingConfig>(s);
        assert_eq!(
            parse(r#"{"kind": "pfsp", "weighting": "linear-capped"}"#).unwrap(),
            MatchmakingConfig::Pfsp(Pfsp::new(PfspWeighting::LinearCapped))
        );
        assert_eq!(
            parse(r#"{"kind": "pfsp", "weighting": "linear_capped"}"#).unwrap(),
            MatchmakingConfig::Pfsp(Pfsp::new(PfspWeighting::LinearCapped))
        );
        assert_eq!(parse(r#"{"kind": "pfsp"}"#).unwrap(), MatchmakingConfig::default());
        assert_eq!(parse(r#"{"kind": "uniform"}"#).unwrap(), MatchmakingConfig::Uniform {});
        let elo = parse(r#"{"kind": "elo", "target_min": 0.4}"#).unwrap();
        assert_eq!(elo.matchmaker().name(), "elo");
        assert!(parse(r#"{"kind": "elo", "target_min": 0.9}"#).is_err());
        assert!(parse(r#"{"kind": "elo", "weighting": "squared"}"#).is_err());
        assert!(parse(r#"{"kind": "pfsp", "weighting": "cubed"}"#).is_err());
        assert!(parse(r#"{"kind": "pfsp", "target_min": 0.3}"#).is_err());
        assert!(parse(r#"{"kind": "uniform", "weighting": "squared"}"#).is_err());
        assert!(parse(r#"{"kind": "random"}"#).is_err());
        for config in [MatchmakingConfig::default(), elo, MatchmakingConfig::Uniform {}] {
            let json = serde_json::to_string(&config).unwrap();
            assert_eq!(parse(&json).unwrap(), config, "{json}");
        }
    }

    #[test]
    fn sampling_follows_weights_and_skips_zeros() {
        let mut rng = MatchmakingRng::new(1, 2, 3);
        let mut counts = [0usize; 4];
        for _ in 0..20_000 {
            counts[rng.sample(&[0.0, 1.0, 0.0, 3.0])] += 1;
        }
        assert_eq!(counts[0] + counts[2], 0);
        assert!((counts[3] as f64 / 20_000.0 - 0.75).abs() < 0.015, "{counts:?}");
        assert_eq!(rng.draws(), 20_000);
    }
}
