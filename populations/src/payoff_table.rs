//! `PayoffTable`: the empirical meta-game, grown by rows and columns as members arrive.

use std::sync::Arc;

use metagame_games::{Arena, Cutoff, MatchEvaluator, MatchTotals, Matchup, NormalFormGame, PlayerId, Policy};
use ndarray::{ArrayD, IxDyn};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::rating::{BatchElo, BatchEloConfig};

/// The games an exact entry counts as in [`PayoffTable::member_elo`]: enough that the
/// fit's smoothing (0.01 pseudo-wins per pair) does not move the ratings.
const EXACT_ENTRY_GAMES: f64 = 10_000.0;

/// Payoff statistics of one joint entry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Entry {
    /// Mean return per player.
    pub mean: Vec<f64>,
    /// Sample variance of one episode's return per player (0 for exact entries).
    pub variance: Vec<f64>,
    /// Episodes behind the estimate (1 for exact entries).
    pub count: u64,
    /// True when `mean` is an exact expectation.
    pub exact: bool,
}

impl Entry {
    /// The estimate from this entry's episodes and `more`'s together (sampled entries).
    pub fn merged(&self, more: &Entry) -> Entry {
        let (n1, n2) = (self.count as f64, more.count as f64);
        let n = n1 + n2;
        let mut mean = Vec::with_capacity(self.mean.len());
        let mut variance = Vec::with_capacity(self.mean.len());
        for p in 0..self.mean.len() {
            let (m1, m2) = (self.mean[p], more.mean[p]);
            let m = (n1 * m1 + n2 * m2) / n;
            // Σ (x − m)² over both samples, from each one's spread about its own mean.
            let spread = self.variance[p] * (n1 - 1.0).max(0.0)
                + more.variance[p] * (n2 - 1.0).max(0.0)
                + n1 * (m1 - m).powi(2)
                + n2 * (m2 - m).powi(2);
            mean.push(m);
            variance.push(if n > 1.0 { spread / (n - 1.0) } else { 0.0 });
        }
        Entry { mean, variance, count: self.count + more.count, exact: false }
    }

    /// The largest standard error of a player's mean (0 for exact entries).
    pub fn max_stderr(&self) -> f64 {
        if self.exact {
            return 0.0;
        }
        self.variance.iter().map(|v| (v / self.count.max(1) as f64).sqrt()).fold(0.0, f64::max)
    }

    /// An exact entry: the expected returns, no variance.
    pub fn exact(mean: Vec<f64>) -> Self {
        let variance = vec![0.0; mean.len()];
        Entry { mean, variance, count: 1, exact: true }
    }

    /// Standard error of each player's mean.
    pub fn stderr(&self) -> Vec<f64> {
        self.variance.iter().map(|v| (v / self.count.max(1) as f64).sqrt()).collect()
    }
}

impl From<&MatchTotals> for Entry {
    fn from(t: &MatchTotals) -> Self {
        Entry { mean: t.mean(), variance: t.variance(), count: t.episodes, exact: t.exact }
    }
}

/// Per joint profile of members and per player: mean, variance and count; `None` for
/// entries not yet estimated (never NaN).
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(from = "StoredTable")]
pub struct PayoffTable {
    shape: Vec<usize>,
    /// Row-major over `shape`. Shared, not owned: a loop stages its next iteration on a copy
    /// of the table (committed only if the iteration succeeds) and hands a copy to every
    /// checkpoint, and a copy of a PSRO table of 350 × 350 members must copy neither its
    /// 120 000 entries' vectors nor the list of them (a change copies the list once, if
    /// shared; growing makes a new one anyway).
    entries: Arc<Vec<Option<Arc<Entry>>>>,
    /// Per player, the entries' means in the same order (NaN where missing): the meta-game
    /// is copied from here each iteration, not gathered from the entries one by one. Shared
    /// as the entries are.
    #[serde(skip_serializing)]
    means: Arc<Vec<Vec<f64>>>,
    /// How many entries are `None`.
    #[serde(skip_serializing)]
    missing_entries: usize,
}

/// The profile after `idx` in row-major order over `shape` (the last axis fastest; wraps to
/// all zeros after the last).
fn next_profile(idx: &mut [usize], shape: &[usize]) {
    for axis in (0..shape.len()).rev() {
        idx[axis] += 1;
        if idx[axis] < shape[axis] {
            break;
        }
        idx[axis] = 0;
    }
}

/// What a checkpoint holds of a [`PayoffTable`] (the means follow from the entries).
#[derive(Deserialize)]
struct StoredTable {
    shape: Vec<usize>,
    entries: Vec<Option<Arc<Entry>>>,
}

/// Tables are equal when their entries are (the means follow from them, and a missing
/// one's NaN would make no table equal to itself).
impl PartialEq for PayoffTable {
    fn eq(&self, other: &Self) -> bool {
        self.shape == other.shape && self.entries == other.entries
    }
}

impl From<StoredTable> for PayoffTable {
    fn from(stored: StoredTable) -> Self {
        let StoredTable { shape, entries } = stored;
        let means = Arc::new(Self::means_of(&shape, &entries));
        let missing_entries = entries.iter().filter(|e| e.is_none()).count();
        Self { shape, entries: Arc::new(entries), means, missing_entries }
    }
}

impl PayoffTable {
    /// Per player, the entries' means in row-major order (NaN where missing).
    fn means_of(shape: &[usize], entries: &[Option<Arc<Entry>>]) -> Vec<Vec<f64>> {
        (0..shape.len())
            .map(|p| {
                entries
                    .iter()
                    .map(|e| e.as_ref().and_then(|e| e.mean.get(p).copied()).unwrap_or(f64::NAN))
                    .collect()
            })
            .collect()
    }

    /// An empty table for `num_players` players with no members.
    pub fn new(num_players: usize) -> Self {
        Self {
            shape: vec![0; num_players],
            entries: Arc::default(),
            means: Arc::new(vec![Vec::new(); num_players]),
            missing_entries: 0,
        }
    }

    /// Members per player.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    fn flat(&self, profile: &[usize]) -> usize {
        profile.iter().zip(&self.shape).fold(0, |acc, (&i, &s)| acc * s + i)
    }

    /// The entry of a profile, if estimated.
    ///
    /// # Panics
    ///
    /// If the profile is out of range (a caller bug).
    #[track_caller]
    pub fn get(&self, profile: &[usize]) -> Option<&Entry> {
        assert!(profile.len() == self.shape.len() && profile.iter().zip(&self.shape).all(|(i, s)| i < s));
        self.entries[self.flat(profile)].as_deref()
    }

    /// Add one member to `player`'s axis; its entries start missing.
    ///
    /// # Panics
    ///
    /// If `player` is not a player of the table (a caller bug).
    #[track_caller]
    pub fn grow(&mut self, player: PlayerId) {
        let p = player.0;
        assert!(p < self.shape.len(), "player {p} of a {}-player table", self.shape.len());
        // Row-major: for each profile of the axes before `player`, the old entries are one
        // run of `shape[p] × inner` and the new member's `inner` follow it, missing.
        let inner: usize = self.shape[p + 1..].iter().product();
        let outer: usize = self.shape[..p].iter().product();
        let old_run = self.shape[p] * inner;
        let total = outer * (old_run + inner);
        self.missing_entries += total - self.entries.len();
        let mut entries = Vec::with_capacity(total);
        let mut regrow = |old: &mut dyn Iterator<Item = Option<Arc<Entry>>>| {
            for _ in 0..outer {
                entries.extend(old.take(old_run));
                entries.extend(std::iter::repeat_n(None, inner));
            }
        };
        // The old list moves when no copy of the table shares it.
        match Arc::try_unwrap(std::mem::take(&mut self.entries)) {
            Ok(mut old) => regrow(&mut old.drain(..)),
            Err(shared) => regrow(&mut shared.iter().cloned()),
        }
        let means = self
            .means
            .iter()
            .map(|means| {
                let mut grown = Vec::with_capacity(total);
                for run in means.chunks(old_run.max(1)).take(outer) {
                    grown.extend_from_slice(run);
                    grown.extend(std::iter::repeat_n(f64::NAN, inner));
                }
                // A table with no entries yet (an axis of 0 members): all missing.
                grown.resize(total, f64::NAN);
                grown
            })
            .collect();
        self.means = Arc::new(means);
        self.shape[p] += 1;
        self.entries = Arc::new(entries);
    }

    /// Profiles not yet estimated, in row-major order.
    pub fn missing(&self) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        let mut idx = vec![0; self.shape.len()];
        for flat in 0..self.entries.len() {
            if self.entries[flat].is_none() {
                out.push(idx.clone());
            }
            next_profile(&mut idx, &self.shape);
        }
        out
    }

    /// Store an entry.
    ///
    /// # Panics
    ///
    /// If the profile is out of range (a caller bug).
    #[track_caller]
    pub fn set(&mut self, profile: &[usize], entry: Entry) {
        assert!(profile.len() == self.shape.len() && profile.iter().zip(&self.shape).all(|(i, s)| i < s));
        let flat = self.flat(profile);
        for (means, &mean) in Arc::make_mut(&mut self.means).iter_mut().zip(&entry.mean) {
            means[flat] = mean;
        }
        if self.entries[flat].is_none() {
            self.missing_entries -= 1;
        }
        Arc::make_mut(&mut self.entries)[flat] = Some(Arc::new(entry));
    }

    /// Evaluate every missing entry through `evaluator` and set it: player `p`'s member `k`
    /// is `policies[offsets[p] + k]` (offsets of 0 for every seat when the seats share one
    /// list of members). Returns the entries filled and the episodes the evaluator sampled
    /// (0 for exact entries). The evaluator gives up once `cutoff` has passed (see
    /// [`MatchEvaluator::evaluate_until`]).
    ///
    /// # Errors
    ///
    /// The evaluator's errors, [`Error::CutOff`] for a cut evaluation; the table is then
    /// unchanged.
    #[allow(clippy::too_many_arguments)]
    pub fn fill_missing(
        &mut self,
        arena: Arena<'_>,
        evaluator: &dyn MatchEvaluator,
        policies: &[&dyn Policy],
        offsets: &[usize],
        episodes_per_entry: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<(usize, u64)> {
        let missing = self.missing();
        if missing.is_empty() {
            return Ok((0, 0));
        }
        let matchups: Vec<Matchup> = missing
            .iter()
            .map(|profile| Matchup { seats: profile.iter().zip(offsets).map(|(&k, &o)| o + k).collect() })
            .collect();
        let totals =
            evaluator.evaluate_until(arena, policies, &matchups, episodes_per_entry, seed, cutoff)?;
        let mut episodes = 0;
        for (profile, total) in missing.iter().zip(&totals) {
            if !total.exact {
                episodes += total.episodes;
            }
            self.set(profile, Entry::from(total));
        }
        Ok((missing.len(), episodes))
    }

    /// Sample more of every sampled entry whose largest standard error is above `target` and
    /// whose count is below `cap`: `episodes` more episodes each (fewer where the cap is
    /// nearer), keyed by `seed`, merged into the entry. Returns the entries refined and the
    /// episodes played; call again (with another seed) until it refines none.
    ///
    /// # Errors
    ///
    /// The evaluator's errors; the table is then unchanged.
    #[allow(clippy::too_many_arguments)]
    pub fn refine(
        &mut self,
        arena: Arena<'_>,
        evaluator: &dyn MatchEvaluator,
        policies: &[&dyn Policy],
        offsets: &[usize],
        (target, cap, episodes): (f64, u64, u64),
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<(usize, u64)> {
        let mut idx = vec![0; self.shape.len()];
        let mut wanted: Vec<(Vec<usize>, u64)> = Vec::new();
        for flat in 0..self.entries.len() {
            if let Some(e) = &self.entries[flat]
                && !e.exact
                && e.count < cap
                && e.max_stderr() > target
            {
                wanted.push((idx.clone(), episodes.min(cap - e.count)));
            }
            next_profile(&mut idx, &self.shape);
        }
        // Entries needing the same number of episodes are evaluated together.
        let mut played = 0;
        let mut counts: Vec<u64> = wanted.iter().map(|w| w.1).collect();
        counts.sort_unstable();
        counts.dedup();
        let mut updates = Vec::with_capacity(wanted.len());
        for n in counts {
            let group: Vec<&Vec<usize>> = wanted.iter().filter(|w| w.1 == n).map(|w| &w.0).collect();
            let matchups: Vec<Matchup> = group
                .iter()
                .map(|profile| Matchup { seats: profile.iter().zip(offsets).map(|(&k, &o)| o + k).collect() })
                .collect();
            let totals = evaluator.evaluate_until(arena, policies, &matchups, n, seed ^ n, cutoff)?;
            for (profile, total) in group.into_iter().zip(&totals) {
                played += total.episodes;
                updates.push((profile.clone(), Entry::from(total)));
            }
        }
        let refined = updates.len();
        for (profile, more) in updates {
            // INVARIANT: `wanted` lists only entries that are present.
            let merged = self.get(&profile).expect("a refined entry is present").merged(&more);
            self.set(&profile, merged);
        }
        Ok((refined, played))
    }

    /// The table as a meta-game of means.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when an entry is missing; the errors of [`NormalFormGame::new`].
    pub fn to_normal_form(&self) -> Result<NormalFormGame> {
        self.check_complete()?;
        self.game_of(self.means.to_vec())
    }

    /// The standard error of every entry's mean, player-major and row-major as the
    /// meta-game's payoffs; `None` when every entry is exact (or one is missing).
    pub fn stderr(&self) -> Option<Vec<Vec<f64>>> {
        let entries: Option<Vec<&Entry>> = self.entries.iter().map(|e| e.as_deref()).collect();
        let entries = entries?;
        if entries.iter().all(|e| e.exact) {
            return None;
        }
        let errors: Vec<Vec<f64>> = entries.iter().map(|e| e.stderr()).collect();
        Some((0..self.shape.len()).map(|p| errors.iter().map(|e| e[p]).collect()).collect())
    }

    /// The members of a complete two-player table rated together by batch Elo
    /// ([`BatchElo`], OpenSpiel's defaults): each entry's mean returns mapped from `range`
    /// (the game's utility range) to scores in [0, 1], counted as that many wins of the
    /// entry's episodes (an exact entry as 10 000 games), each player-0 member
    /// compared with each player-1 member. Player-major; the lowest member of either player
    /// at 0. `None` for other player counts, a missing entry or an empty range.
    pub fn member_elo(&self, range: (f64, f64)) -> Option<Vec<Vec<f64>>> {
        let (low, high) = range;
        if self.shape.len() != 2 || high.partial_cmp(&low) != Some(std::cmp::Ordering::Greater) {
            return None;
        }
        let (n0, n1) = (self.shape[0], self.shape[1]);
        let score = |u: f64| ((u - low) / (high - low)).clamp(0.0, 1.0);
        let mut wins = ndarray::Array2::<f64>::zeros((n0 + n1, n0 + n1));
        for i in 0..n0 {
            for j in 0..n1 {
                let e = self.get(&[i, j])?;
                let games = if e.exact { EXACT_ENTRY_GAMES } else { e.count as f64 };
                wins[[i, n0 + j]] += games * score(e.mean[0]);
                wins[[n0 + j, i]] += games * score(e.mean[1]);
            }
        }
        let elo = BatchElo::fit(&BatchEloConfig::default(), wins.view(), None).ok()?;
        let r = elo.ratings();
        Some(vec![r[..n0].to_vec(), r[n0..].to_vec()])
    }

    /// `f` on the table as a meta-game ([`PayoffTable::to_normal_form`]), built from the
    /// table's own means and handed back afterwards: no copy of the meta-game, which a PSRO
    /// iteration would otherwise make once per meta-solve.
    ///
    /// # Errors
    ///
    /// As [`PayoffTable::to_normal_form`]; the table is unchanged either way.
    pub fn with_normal_form<R>(&mut self, f: impl FnOnce(&NormalFormGame) -> R) -> Result<R> {
        self.check_complete()?;
        let means = Arc::unwrap_or_clone(std::mem::take(&mut self.means));
        let game = self.game_of(means);
        match game {
            Ok(game) => {
                let answer = f(&game);
                self.means = Arc::new(
                    game.into_payoffs().into_iter().map(|t| t.into_raw_vec_and_offset().0).collect(),
                );
                Ok(answer)
            }
            Err(e) => {
                // The means went into the failed game: rebuilt from the entries.
                self.means = Arc::new(Self::means_of(&self.shape, &self.entries));
                Err(e)
            }
        }
    }

    /// [`Error::Config`] naming the first missing entry, if any.
    fn check_complete(&self) -> Result<()> {
        if self.missing_entries > 0
            && let Some(flat) = self.entries.iter().position(Option::is_none)
        {
            return Err(Error::Config(format!("payoff entry {flat} is not estimated")));
        }
        Ok(())
    }

    /// The meta-game of `means` (one row-major tensor per player, in the table's shape).
    fn game_of(&self, means: Vec<Vec<f64>>) -> Result<NormalFormGame> {
        let arrays = means
            .into_iter()
            .map(|t| ArrayD::from_shape_vec(IxDyn(&self.shape), t).map_err(|e| Error::Config(e.to_string())))
            .collect::<Result<Vec<_>>>()?;
        Ok(NormalFormGame::new(arrays)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Growing any axis keeps every entry at its profile and adds the new member's as
    /// missing, in three dimensions and from empty axes.
    #[test]
    fn growth_keeps_each_entry_at_its_profile() {
        let mut table = PayoffTable::new(3);
        let mut shape = [0usize; 3];
        let value = |i: &[usize]| vec![(100 * i[0] + 10 * i[1] + i[2]) as f64, 0.0, 1.0];
        for (step, player) in [0, 1, 2, 1, 0, 2, 2, 1, 0, 1].into_iter().enumerate() {
            table.grow(PlayerId(player));
            shape[player] += 1;
            assert_eq!(table.shape(), shape);
            let total: usize = shape.iter().product();
            let mut missing = 0;
            for flat in 0..total {
                let i = [flat / (shape[1] * shape[2]), flat / shape[2] % shape[1], flat % shape[2]];
                match table.get(&i) {
                    Some(e) => {
                        assert!(i[player] + 1 < shape[player], "step {step}: the new member's {i:?} is set");
                        assert_eq!(e.mean, value(&i), "step {step}: {i:?}");
                    }
                    None => missing += 1,
                }
            }
            assert_eq!(table.missing().len(), missing, "step {step}");
            // Every other profile filled as it comes, so that some stay missing.
            for flat in 0..total {
                let i = [flat / (shape[1] * shape[2]), flat / shape[2] % shape[1], flat % shape[2]];
                if table.get(&i).is_none() && (i[0] + i[1] + i[2]) % 2 == 0 {
                    table.set(&i, Entry::exact(value(&i)));
                }
            }
        }
        // The means follow: a full table's meta-game reads them.
        for p in table.missing() {
            table.set(&p, Entry::exact(value(&p)));
        }
        let game = table.to_normal_form().unwrap();
        assert_eq!(game.payoffs(0)[[2, 3, 2]], 232.0);
    }

    /// The meta-game is the entries' means whichever way the table came about: grown and
    /// filled here, or read back from a checkpoint (which stores the entries alone); a table
    /// with a missing entry refuses to become one.
    #[test]
    fn the_meta_game_follows_the_entries_through_growth_and_a_checkpoint() {
        let mut table = PayoffTable::new(2);
        for _ in 0..2 {
            table.grow(PlayerId(0));
            table.grow(PlayerId(1));
        }
        table.grow(PlayerId(1));
        let mean = |i: usize, j: usize| vec![(3 * i + j) as f64, -((3 * i + j) as f64)];
        for i in 0..2 {
            for j in 0..3 {
                if (i, j) != (1, 2) {
                    table.set(&[i, j], Entry::exact(mean(i, j)));
                }
            }
        }
        assert!(matches!(table.to_normal_form(), Err(Error::Config(_))));
        let json = serde_json::to_string(&table).unwrap();
        assert!(!json.contains("means"), "{json}");
        let read: PayoffTable = serde_json::from_str(&json).unwrap();
        assert_eq!(read, table);
        assert!(matches!(read.to_normal_form(), Err(Error::Config(_))));
        table.set(&[1, 2], Entry::exact(mean(1, 2)));
        table.grow(PlayerId(0));
        for j in 0..3 {
            table.set(&[2, j], Entry::exact(mean(2, j)));
        }
        let read: PayoffTable = serde_json::from_str(&serde_json::to_string(&table).unwrap()).unwrap();
        // Lent to a closure, the meta-game is the same, and the table is the same after.
        let lent = table.with_normal_form(|game| game.clone()).unwrap();
        assert_eq!(lent, table.to_normal_form().unwrap());
        let mut incomplete = PayoffTable::new(2);
        incomplete.grow(PlayerId(0));
        incomplete.grow(PlayerId(1));
        assert!(matches!(incomplete.with_normal_form(|_| ()), Err(Error::Config(_))));
        for t in [&table, &read] {
            let game = t.to_normal_form().unwrap();
            for i in 0..3 {
                for j in 0..3 {
                    assert_eq!(game.payoffs(0)[[i, j]], mean(i, j)[0]);
                    assert_eq!(game.payoffs(1)[[i, j]], mean(i, j)[1]);
                }
            }
        }
    }
}
