//! `WinRates`: a league's win-rate bookkeeping per ordered pair of members, with
//! AlphaStar's exponential decay.

use std::collections::BTreeMap;

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
/// Members are indices `0..num_members()` in the order they joined; removing one
/// ([`WinRates::remove_member`]) moves the members after it down one index. As a [`Rating`] the
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
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "WinRatesState", into = "WinRatesState")]
pub struct WinRates {
    config: WinRatesConfig,
    num_members: usize,
    /// Decayed `(points, games)` of `home` against `away`, for the ordered pairs that have
    /// played: a league's matches all involve a learning agent, so the table holds
    /// O(learning agents · members) cells, not members².
    cells: BTreeMap<(u32, u32), Cell>,
    /// While a journal is open ([`WinRates::open_journal`]): the members before it and each
    /// touched cell's value before its first change (or, once a member has been removed, the
    /// whole table as it was), so that [`WinRates::roll_back`] can restore the table exactly.
    journal: Option<Journal>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
struct Cell {
    points: f64,
    games: f64,
}

#[derive(Clone, Debug, Default)]
struct Journal {
    num_members: usize,
    before: BTreeMap<(u32, u32), Option<Cell>>,
    /// The cells when the journal opened, taken at the first removal (which re-keys the
    /// table, so that cell notes no longer describe it); later changes need no notes.
    whole: Option<BTreeMap<(u32, u32), Cell>>,
}

impl PartialEq for WinRates {
    fn eq(&self, other: &Self) -> bool {
        self.config == other.config && self.num_members == other.num_members && self.cells == other.cells
    }
}

/// The serde form of [`WinRates`]: the played cells as `[home, away, points, games]`. Older
/// checkpoints hold the dense `points` and `games` tables instead; they still load.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct WinRatesState {
    config: WinRatesConfig,
    num_members: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    played: Option<Vec<(usize, usize, f64, f64)>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    points: Option<Vec<f64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    games: Option<Vec<f64>>,
}

impl From<WinRates> for WinRatesState {
    fn from(t: WinRates) -> Self {
        let played = t.cells.iter().map(|(&(h, a), c)| (h as usize, a as usize, c.points, c.games)).collect();
        WinRatesState {
            config: t.config,
            num_members: t.num_members,
            played: Some(played),
            points: None,
            games: None,
        }
    }
}

impl TryFrom<WinRatesState> for WinRates {
    type Error = Error;
    fn try_from(s: WinRatesState) -> Result<Self> {
        let n = s.num_members;
        if n > u32::MAX as usize {
            return Err(Error::Config(format!("win-rate table: {n} members is too many")));
        }
        let mut played = s.played.unwrap_or_default();
        match (s.points, s.games) {
            (None, None) => {}
            (Some(points), Some(games)) => {
                let cells = n.checked_mul(n);
                if cells != Some(points.len()) || cells != Some(games.len()) {
                    return Err(Error::Config(format!("win-rate table: wrong sizes for {n} members")));
                }
                let dense = points.iter().zip(&games).enumerate().filter(|(_, (_, g))| **g != 0.0);
                played.extend(dense.map(|(k, (&p, &g))| (k / n, k % n, p, g)));
            }
            _ => return Err(Error::Config("win-rate table: points without games".into())),
        }
        let mut cells = BTreeMap::new();
        for (home, away, points, games) in played {
            if home >= n || away >= n {
                return Err(Error::Config(format!(
                    "win-rate table: members {home} and {away}, but the table has {n}"
                )));
            }
            if !(games.is_finite() && points >= 0.0 && points <= games) {
                return Err(Error::Config(
                    "win-rate table: counts must be finite with 0 ≤ points ≤ games".into(),
                ));
            }
            cells.insert((home as u32, away as u32), Cell { points, games });
        }
        Ok(WinRates { config: s.config, num_members: n, cells, journal: None })
    }
}

impl WinRates {
    /// A table of `num_members` members that have not played.
    pub fn new(config: WinRatesConfig, num_members: usize) -> Self {
        Self { config, num_members, cells: BTreeMap::new(), journal: None }
    }

    /// The settings.
    pub fn config(&self) -> &WinRatesConfig {
        &self.config
    }

    /// Add a member that has not played; returns its index. O(1).
    pub fn add_member(&mut self) -> usize {
        self.num_members += 1;
        self.num_members - 1
    }

    /// Forget every game of `member` (both orderings): it plays on as a new player, at the
    /// prior against everyone. O(games it has played · log cells).
    ///
    /// # Panics
    ///
    /// If `member` is not in the table (a caller bug).
    #[track_caller]
    pub fn clear_member(&mut self, member: usize) {
        assert!(member < self.num_members, "member {member}, but the table has {}", self.num_members);
        let m = member as u32;
        let row: Vec<(u32, u32)> = self.cells.range((m, 0)..=(m, u32::MAX)).map(|(&k, _)| k).collect();
        for (home, away) in row {
            for key in [(home, away), (away, home)] {
                self.note(key);
                self.cells.remove(&key);
            }
        }
    }

    /// Remove `member` and every game it played (both orderings); the members after it move
    /// down one index. O(cells), as the table is re-keyed; under an open journal the first
    /// removal also copies the table as it was when the journal opened.
    ///
    /// # Panics
    ///
    /// If `member` is not in the table (a caller bug).
    #[track_caller]
    pub fn remove_member(&mut self, member: usize) {
        assert!(member < self.num_members, "member {member}, but the table has {}", self.num_members);
        if let Some(journal) = &mut self.journal
            && journal.whole.is_none()
        {
            let mut whole = self.cells.clone();
            for (key, before) in std::mem::take(&mut journal.before) {
                match before {
                    Some(c) => whole.insert(key, c),
                    None => whole.remove(&key),
                };
            }
            journal.whole = Some(whole);
        }
        let m = member as u32;
        let down = |i: u32| if i > m { i - 1 } else { i };
        self.cells = std::mem::take(&mut self.cells)
            .into_iter()
            .filter(|&((h, a), _)| h != m && a != m)
            .map(|((h, a), c)| ((down(h), down(a)), c))
            .collect();
        self.num_members -= 1;
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
        let (home, away) = (result.first() as u32, result.second() as u32);
        let decay = self.config.decay;
        self.note((home, away));
        self.note((away, home));
        // As AlphaStar's `Payoff.update`: a self-match decays its one cell twice.
        for key in [(home, away), (away, home)] {
            let cell = self.cells.entry(key).or_default();
            cell.points *= decay;
            cell.games *= decay;
        }
        for (key, score) in [((home, away), result.score()), ((away, home), 1.0 - result.score())] {
            let cell = self.cells.entry(key).or_default();
            cell.games += 1.0;
            cell.points += score;
        }
    }

    /// How often `home` beats `away` (draws counting ½), or the prior before any game.
    ///
    /// # Panics
    ///
    /// If a member is not in the table (a caller bug).
    #[track_caller]
    pub fn win_rate(&self, home: usize, away: usize) -> f64 {
        let c = self.cell(home, away);
        if c.games > 0.0 { c.points / c.games } else { self.config.prior }
    }

    /// `home`'s win rate against every member, by index: one pass over the members and
    /// `home`'s games, where a [`win_rate`](WinRates::win_rate) per member would search the
    /// table each time.
    ///
    /// # Panics
    ///
    /// If `home` is not in the table (a caller bug).
    #[track_caller]
    pub fn row(&self, home: usize) -> Vec<f64> {
        let n = self.num_members;
        assert!(home < n, "member {home}, but the table has {n}");
        let mut row = vec![self.config.prior; n];
        let h = home as u32;
        for (&(_, away), c) in self.cells.range((h, 0)..=(h, u32::MAX)).filter(|(_, c)| c.games > 0.0) {
            row[away as usize] = c.points / c.games;
        }
        row
    }

    /// Decayed number of games between `home` and `away`.
    ///
    /// # Panics
    ///
    /// If a member is not in the table (a caller bug).
    #[track_caller]
    pub fn games(&self, home: usize, away: usize) -> f64 {
        self.cell(home, away).games
    }

    /// Decayed points (wins + ½ draws) of `home` against `away`.
    ///
    /// # Panics
    ///
    /// If a member is not in the table (a caller bug).
    #[track_caller]
    pub fn points(&self, home: usize, away: usize) -> f64 {
        self.cell(home, away).points
    }

    /// The ordered pairs that have played, with their decayed `(points, games)`, in order.
    pub fn played(&self) -> impl Iterator<Item = ((usize, usize), (f64, f64))> + '_ {
        self.cells.iter().map(|(&(h, a), c)| ((h as usize, a as usize), (c.points, c.games)))
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
        let mut out = Array2::zeros((n, n));
        for ((i, j), (p, _)) in self.played() {
            out[[i, j]] = p;
        }
        out
    }

    /// Start recording changes, so that [`WinRates::roll_back`] can undo them (a league
    /// round commits only on success). An open journal is replaced.
    pub fn open_journal(&mut self) {
        self.journal = Some(Journal { num_members: self.num_members, ..Journal::default() });
    }

    /// Keep the changes since [`WinRates::open_journal`] and stop recording.
    pub fn close_journal(&mut self) {
        self.journal = None;
    }

    /// Undo every change since [`WinRates::open_journal`] (members added or removed, games
    /// recorded or cleared) and stop recording; nothing happens without an open journal.
    pub fn roll_back(&mut self) {
        if let Some(journal) = self.journal.take() {
            if let Some(whole) = journal.whole {
                self.cells = whole;
            }
            for (key, before) in journal.before {
                match before {
                    Some(c) => self.cells.insert(key, c),
                    None => self.cells.remove(&key),
                };
            }
            self.num_members = journal.num_members;
        }
    }

    /// Note `key`'s value before its first change under an open journal (unless the journal
    /// holds the whole table).
    fn note(&mut self, key: (u32, u32)) {
        if let Some(journal) = &mut self.journal
            && journal.whole.is_none()
        {
            let old = self.cells.get(&key).copied();
            journal.before.entry(key).or_insert(old);
        }
    }

    #[track_caller]
    fn cell(&self, home: usize, away: usize) -> Cell {
        let n = self.num_members;
        assert!(home < n && away < n, "members {home} and {away}, but the table has {n}");
        self.cells.get(&(home as u32, away as u32)).copied().unwrap_or_default()
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
        let bad = json.replace("\"num_members\":3", "\"num_members\":1");
        assert!(serde_json::from_str::<WinRates>(&bad).is_err());
        // The dense form of older checkpoints loads to the same table.
        let dense = r#"{"config":{"decay":0.99,"prior":0.5},"num_members":2,
            "points":[0.0,0.0,1.0,0.0],"games":[0.0,1.0,1.0,0.0]}"#;
        let mut old = WinRates::new(WinRatesConfig::default(), 2);
        old.record(&MatchResult::win(1, 0));
        assert_eq!(serde_json::from_str::<WinRates>(dense).unwrap(), old);
    }

    #[test]
    fn a_cleared_member_is_back_at_the_prior_and_a_journal_rolls_back_exactly() {
        let mut t = WinRates::new(WinRatesConfig::default(), 3);
        t.record(&MatchResult::win(0, 1));
        t.record(&MatchResult::new(2, 0, 0.25).unwrap());
        let before = t.clone();
        for home in 0..3 {
            let each: Vec<f64> = (0..3).map(|away| t.win_rate(home, away)).collect();
            assert_eq!(t.row(home), each, "member {home}");
        }
        t.open_journal();
        t.record(&MatchResult::win(0, 1));
        t.add_member();
        t.record(&MatchResult::win(3, 0));
        t.clear_member(0);
        assert_eq!((t.win_rate(0, 1), t.win_rate(2, 0), t.games(0, 3)), (0.5, 0.5, 0.0));
        assert_eq!(t.num_members(), 4);
        t.roll_back();
        assert_eq!(t, before);
        t.open_journal();
        t.record(&MatchResult::win(1, 2));
        t.close_journal();
        t.roll_back();
        assert_eq!(t.win_rate(1, 2), 1.0, "a closed journal has nothing to undo");
    }

    /// Removing a member drops its games and moves the later members down one index; a
    /// journal opened before rolls back changes made before and after the removal exactly.
    #[test]
    fn a_removed_member_takes_its_games_and_a_journal_rolls_the_removal_back() {
        let mut t = WinRates::new(WinRatesConfig::default(), 4);
        t.record(&MatchResult::win(0, 1));
        t.record(&MatchResult::new(0, 3, 0.25).unwrap());
        t.record(&MatchResult::win(2, 3));
        let before = t.clone();
        t.open_journal();
        t.record(&MatchResult::win(0, 3));
        t.remove_member(1);
        assert_eq!(t.num_members(), 3);
        // Old member 3 is member 2 now, old 2 is 1; nothing of old member 1 is left.
        assert_eq!(t.games(0, 2), before.games(0, 3) * 0.99 + 1.0);
        assert_eq!((t.win_rate(1, 2), t.games(0, 1)), (1.0, 0.0));
        assert_eq!(t.played().count(), 4, "the pairs (0, 2) and (1, 2), both orderings");
        t.record(&MatchResult::loss(1, 0));
        t.add_member();
        t.roll_back();
        assert_eq!(t, before);
        let mut plain = before.clone();
        plain.remove_member(3);
        assert_eq!(plain.played().map(|(k, _)| k).collect::<Vec<_>>(), [(0, 1), (1, 0)]);
    }
}
