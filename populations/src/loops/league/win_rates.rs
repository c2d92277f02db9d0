//! `WinRates`: a league's win-rate bookkeeping per ordered pair of members, with
//! AlphaStar's exponential decay.

use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::loops::league::rating::{MatchResult, OnlineRating, Rating};
use crate::settings::{built_by, setters};

/// Win-rate table settings; always valid (built by [`WinRatesConfig::builder`] or
/// deserialised through it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "WinRatesConfigBuilder", into = "WinRatesConfigBuilder")]
pub struct WinRatesConfig {
    decay: f64,
    prior: f64,
}

/// Builder and serde form of [`WinRatesConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct WinRatesConfigBuilder {
    /// Before each new result of a pair, both orderings' counts are multiplied by this
    /// (a moving average over roughly `1/(1 − decay)` recent games); in `(0, 1]`, 1 keeps
    /// every game. Default 0.99 (AlphaStar).
    pub decay: Option<f64>,
    /// The win rate of a pair that has not played; in `[0, 1]`. Default 0.5 (AlphaStar).
    pub prior: Option<f64>,
}

impl WinRatesConfigBuilder {
    setters!(decay: f64, prior: f64);

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<WinRatesConfig> {
        let decay = self.decay.unwrap_or(0.99);
        if !(decay > 0.0 && decay <= 1.0) {
            return Err(Error::Config(format!("decay must be in (0, 1], got {decay}")));
        }
        let prior = self.prior.unwrap_or(0.5);
        if !(0.0..=1.0).contains(&prior) {
            return Err(Error::Config(format!("prior must be in [0, 1], got {prior}")));
        }
        Ok(WinRatesConfig { decay, prior })
    }
}

built_by!(WinRatesConfig, WinRatesConfigBuilder);

impl From<WinRatesConfig> for WinRatesConfigBuilder {
    fn from(c: WinRatesConfig) -> Self {
        WinRatesConfigBuilder { decay: Some(c.decay), prior: Some(c.prior) }
    }
}

impl WinRatesConfig {
    /// Decay per new result of a pair.
    pub fn decay(&self) -> f64 {
        self.decay
    }
    /// Win rate of a pair with no games.
    pub fn prior(&self) -> f64 {
        self.prior
    }
}

/// Win rates per ordered pair of members, as AlphaStar's league keeps them: for each
/// ordered pair `(home, away)` a decayed count of games and of `home`'s points (wins + ½
/// draws). A result between `home` and `away` first multiplies both orderings' counts by
/// `decay`, then adds one game to each and the score to `home`'s points (its complement to
/// `away`'s). `win_rate(home, away)` is points / games, or the prior before any game; so
/// `win_rate(a, b) + win_rate(b, a) = 1` once they have played.
///
/// Members are indices `0..num_members()` in the order they joined. As a [`Rating`] the
/// table predicts its own win rates (an empirical baseline for the Brier score, and the
/// predictions [Elo matchmaking](crate::loops::league::matchmaking::EloMatchmaker) uses when given no
/// other rating).
///
/// # Examples
///
/// ```
/// use metagame_populations::{WinRates, WinRatesConfig};
/// use metagame_populations::rating::MatchResult;
///
/// let mut table = WinRates::new(WinRatesConfig::default(), 2);
/// assert_eq!(table.win_rate(0, 1), 0.5); // the prior
/// table.record(&MatchResult::win(0, 1));
/// table.record(&MatchResult::loss(0, 1));
/// // (0.99·1 + 0) / (0.99·1 + 1)
/// assert!((table.win_rate(0, 1) - 0.99 / 1.99).abs() < 1e-12);
/// assert!((table.win_rate(1, 0) - 1.0 / 1.99).abs() < 1e-12);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "WinRatesState")]
pub struct WinRates {
    config: WinRatesConfig,
    num_members: usize,
    /// Row-major `num_members × num_members`: decayed points of the row against the column.
    points: Vec<f64>,
    /// Row-major: decayed games of the row against the column.
    games: Vec<f64>,
}

/// The unchecked serde form of [`WinRates`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WinRatesState {
    config: WinRatesConfig,
    num_members: usize,
    points: Vec<f64>,
    games: Vec<f64>,
}

impl TryFrom<WinRatesState> for WinRates {
    type Error = Error;
    fn try_from(s: WinRatesState) -> Result<Self> {
        let cells = s.num_members.checked_mul(s.num_members);
        if cells != Some(s.points.len()) || cells != Some(s.games.len()) {
            return Err(Error::Config(format!("win-rate table: wrong sizes for {} members", s.num_members)));
        }
        let bad = s.points.iter().zip(&s.games).any(|(&p, &g)| !(g.is_finite() && p >= 0.0 && p <= g));
        if bad {
            return Err(Error::Config(
                "win-rate table: counts must be finite with 0 ≤ points ≤ games".into(),
            ));
        }
        Ok(WinRates { config: s.config, num_members: s.num_members, points: s.points, games: s.games })
    }
}

impl WinRates {
    /// A table of `num_members` members that have not played.
    pub fn new(config: WinRatesConfig, num_members: usize) -> Self {
        let cells = num_members * num_members;
        Self { config, num_members, points: vec![0.0; cells], games: vec![0.0; cells] }
    }

    /// The settings.
    pub fn config(&self) -> &WinRatesConfig {
        &self.config
    }

    /// Add a member that has not played; returns its index.
    pub fn add_member(&mut self) -> usize {
        let (old, n) = (self.num_members, self.num_members + 1);
        let grow = |v: &[f64]| {
            let mut out = vec![0.0; n * n];
            for i in 0..old {
                out[i * n..i * n + old].copy_from_slice(&v[i * old..(i + 1) * old]);
            }
            out
        };
        self.points = grow(&self.points);
        self.games = grow(&self.games);
        self.num_members = n;
        old
    }

    /// Record one match (both orderings decay, then count it).
    ///
    /// # Panics
    ///
    /// If a member of the match is not in the table (a caller bug).
    #[track_caller]
    pub fn record(&mut self, result: &MatchResult) {
        let n = self.num_members;
        crate::loops::league::rating::check_members(result, n);
        let (home, away) = (result.first(), result.second());
        let (ha, ah) = (home * n + away, away * n + home);
        // As AlphaStar's `Payoff.update`: a self-match decays its one cell twice.
        for cell in [ha, ah] {
            self.points[cell] *= self.config.decay;
            self.games[cell] *= self.config.decay;
        }
        self.games[ha] += 1.0;
        self.games[ah] += 1.0;
        self.points[ha] += result.score();
        self.points[ah] += 1.0 - result.score();
    }

    /// How often `home` beats `away` (draws counting ½), or the prior before any game.
    ///
    /// # Panics
    ///
    /// If a member is not in the table (a caller bug).
    #[track_caller]
    pub fn win_rate(&self, home: usize, away: usize) -> f64 {
        let cell = self.cell(home, away);
        let games = self.games[cell];
        if games > 0.0 { self.points[cell] / games } else { self.config.prior }
    }

    /// Decayed number of games between `home` and `away`.
    ///
    /// # Panics
    ///
    /// If a member is not in the table (a caller bug).
    #[track_caller]
    pub fn games(&self, home: usize, away: usize) -> f64 {
        self.games[self.cell(home, away)]
    }

    /// Decayed points (wins + ½ draws) of `home` against `away`.
    ///
    /// # Panics
    ///
    /// If a member is not in the table (a caller bug).
    #[track_caller]
    pub fn points(&self, home: usize, away: usize) -> f64 {
        self.points[self.cell(home, away)]
    }

    /// Every win rate: entry `[i, j]` is `win_rate(i, j)`.
    pub fn matrix(&self) -> Array2<f64> {
        let n = self.num_members;
        Array2::from_shape_fn((n, n), |(i, j)| self.win_rate(i, j))
    }

    /// Every decayed points count: entry `[i, j]` is `points(i, j)` (the win counts that
    /// [`BatchElo::fit`](crate::loops::league::rating::BatchElo::fit) takes).
    pub fn points_matrix(&self) -> Array2<f64> {
        let n = self.num_members;
        Array2::from_shape_fn((n, n), |(i, j)| self.points[i * n + j])
    }

    #[track_caller]
    fn cell(&self, home: usize, away: usize) -> usize {
        let n = self.num_members;
        assert!(home < n && away < n, "members {home} and {away}, but the table has {n}");
        home * n + away
    }
}

impl Rating for WinRates {
    fn name(&self) -> &'static str {
        "win-rates"
    }

    fn num_members(&self) -> usize {
        self.num_members
    }

    #[track_caller]
    fn predict(&self, i: usize, j: usize) -> f64 {
        self.win_rate(i, j)
    }
}

impl OnlineRating for WinRates {
    fn add_member(&mut self) -> usize {
        WinRates::add_member(self)
    }

    #[track_caller]
    fn update(&mut self, result: &MatchResult) {
        self.record(result);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings() {
        let c = WinRatesConfig::default();
        assert_eq!((c.decay(), c.prior()), (0.99, 0.5));
        assert!(WinRatesConfig::builder().decay(0.0).build().is_err());
        assert!(WinRatesConfig::builder().decay(1.01).build().is_err());
        assert!(WinRatesConfig::builder().prior(-0.1).build().is_err());
        assert!(WinRatesConfig::builder().prior(f64::NAN).build().is_err());
        assert!(serde_json::from_str::<WinRatesConfig>(r#"{"decay": 1.0, "prior": 0.3}"#).is_ok());
        assert!(serde_json::from_str::<WinRatesConfig>(r#"{"gamma": 1.0}"#).is_err());
    }

    /// AlphaStar's bookkeeping by hand: decay both orderings, then add.
    #[test]
    fn decayed_counts() {
        let mut t = WinRates::new(WinRatesConfig::builder().prior(0.3).build().unwrap(), 3);
        assert_eq!(t.win_rate(0, 2), 0.3);
        t.record(&MatchResult::win(0, 1));
        t.record(&MatchResult::draw(1, 0));
        t.record(&MatchResult::win(0, 1));
        // points(0,1) = (1·0.99 + 0.5)·0.99 + 1, games = (0.99 + 1)·0.99 + 1.
        let (p, g) = ((0.99 + 0.5) * 0.99 + 1.0, (0.99 + 1.0) * 0.99 + 1.0);
        assert!((t.points(0, 1) - p).abs() < 1e-12 && (t.games(0, 1) - g).abs() < 1e-12);
        assert!((t.win_rate(0, 1) - p / g).abs() < 1e-12);
        assert!((t.win_rate(0, 1) + t.win_rate(1, 0) - 1.0).abs() < 1e-12);
        assert_eq!(t.win_rate(2, 0), 0.3);
        t.record(&MatchResult::win(2, 2));
        assert_eq!(t.win_rate(2, 2), 0.5);
    }

    #[test]
    fn grows_keeping_counts_and_round_trips() {
        let mut t = WinRates::new(WinRatesConfig::default(), 2);
        t.record(&MatchResult::win(1, 0));
        assert_eq!(t.add_member(), 2);
        assert_eq!(t.win_rate(1, 0), 1.0);
        assert_eq!(t.win_rate(2, 1), 0.5);
        t.record(&MatchResult::loss(2, 1));
        assert_eq!(t.matrix()[[1, 2]], 1.0);
        let json = serde_json::to_string(&t).unwrap();
        assert_eq!(serde_json::from_str::<WinRates>(&json).unwrap(), t);
        let bad = json.replace("\"num_members\":3", "\"num_members\":4");
        assert!(serde_json::from_str::<WinRates>(&bad).is_err());
    }
}
