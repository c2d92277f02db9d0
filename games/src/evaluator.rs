//! `MatchEvaluator`: fills payoff-table entries by playing policies against each other,
//! exactly (tree walk) or by sampling (CPU here, GPU in `metagame-cuda`), behind one trait.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::arena::Arena;
use crate::cutoff::Cutoff;
use crate::error::{Error, Result};
use crate::policy::Policy;
use crate::tabular_policy::TabularPolicy;
use crate::tree::GameTree;

/// The most episodes any one count may ask for (per payoff entry, league round or learned
/// response): 10^12, about a day and a half of one matchup at the 8.5 million Leduc episodes
/// per second one core samples. Configs and the CLI refuse larger counts up front, so that
/// a typo cannot start a step that never ends.
pub const MAX_EPISODES: u64 = 1_000_000_000_000;

/// One joint entry to evaluate: `seats[p]` is the index (into the policy list) of the
/// policy that player `p` plays.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Matchup {
    /// Policy index per seat.
    pub seats: Vec<usize>,
}

impl Matchup {
    /// Every joint entry of `num_policies` policies on `num_players` seats (each policy
    /// plays every seat), seat 0 most significant; None past `at_most` entries.
    pub fn every(num_policies: usize, num_players: usize, at_most: usize) -> Option<Vec<Matchup>> {
        let count = u32::try_from(num_players)
            .ok()
            .and_then(|p| num_policies.checked_pow(p))
            .filter(|&c| c <= at_most)?;
        Some(
            (0..count)
                .map(|mut i| {
                    let mut seats = vec![0; num_players];
                    for s in seats.iter_mut().rev() {
                        *s = i % num_policies;
                        i /= num_policies;
                    }
                    Matchup { seats }
                })
                .collect(),
        )
    }
}

/// Per-player return statistics of one matchup.
///
/// Sampled evaluators fill sums over `episodes` episodes; the exact evaluator reports the
/// expected returns as `sums` with `episodes = 1` and zero `sums_of_squares` spread, flagged
/// by `exact = true`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MatchTotals {
    /// Σ returns per player.
    pub sums: Vec<f64>,
    /// Σ returns² per player.
    pub sums_of_squares: Vec<f64>,
    /// Number of episodes summed.
    pub episodes: u64,
    /// True when `sums` are exact expectations (no sampling error).
    pub exact: bool,
}

impl MatchTotals {
    /// Sampled totals: Σ returns and Σ returns² per player over `episodes` episodes.
    pub fn sampled(sums: Vec<f64>, sums_of_squares: Vec<f64>, episodes: u64) -> Self {
        Self { sums, sums_of_squares, episodes, exact: false }
    }
    /// Exact totals: the expected returns per player, as one episode with no spread.
    pub fn exact(expected: Vec<f64>) -> Self {
        let sums_of_squares = expected.iter().map(|v| v * v).collect();
        Self { sums: expected, sums_of_squares, episodes: 1, exact: true }
    }
    /// Mean return per player.
    pub fn mean(&self) -> Vec<f64> {
        let n = self.episodes.max(1) as f64;
        self.sums.iter().map(|s| s / n).collect()
    }
    /// Unbiased sample variance of one episode's return per player (0 when exact or < 2 episodes).
    pub fn variance(&self) -> Vec<f64> {
        if self.exact || self.episodes < 2 {
            return vec![0.0; self.sums.len()];
        }
        let n = self.episodes as f64;
        self.sums
            .iter()
            .zip(&self.sums_of_squares)
            .map(|(s, q)| ((q - s * s / n) / (n - 1.0)).max(0.0))
            .collect()
    }
    /// Standard error of the mean per player (0 when exact).
    pub fn stderr(&self) -> Vec<f64> {
        let n = self.episodes.max(1) as f64;
        self.variance().iter().map(|v| (v / n).sqrt()).collect()
    }
}

/// Something that can evaluate matchups between policies of any kind.
///
/// Dyn-compatible so that configs can choose the backend at run time. An evaluator that
/// needs the game tree (the exact one) or tables asks the arena for its tree and tabulates
/// policies that are not tables ([`TabularPolicy::of`]).
pub trait MatchEvaluator: Send + Sync {
    /// Short stable name used in configs and reports ("exact", "cpu", "rollout", "gpu").
    fn name(&self) -> &'static str;

    /// Evaluate each matchup. Sampled evaluators play `episodes` episodes per matchup with
    /// randomness keyed by `(seed, matchup index, episode)`, so results do not depend on
    /// scheduling; exact evaluators ignore `episodes` and `seed`.
    ///
    /// # Errors
    ///
    /// A table of another tree, a seat index out of range, a matchup with the wrong number
    /// of seats, a policy that fails or answers garbage ([`Error::PolicyFailed`]), work that
    /// needs a tree the arena lacks ([`Error::NoTree`]), or a backend failure.
    fn evaluate(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>>;

    /// [`evaluate`](MatchEvaluator::evaluate), giving up once `cutoff` has passed: an
    /// evaluator whose work is long checks it between its batches and returns
    /// [`Error::CutOff`] (the [`SampledEvaluator`](crate::SampledEvaluator) between chunks of
    /// blocks). The default ignores it (the exact evaluator's walk is one pass over the tree).
    ///
    /// # Errors
    ///
    /// As [`evaluate`](MatchEvaluator::evaluate); [`Error::CutOff`].
    fn evaluate_until(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<Vec<MatchTotals>> {
        let _ = cutoff;
        self.evaluate(arena, policies, matchups, episodes, seed)
    }

    /// [`evaluate`](MatchEvaluator::evaluate) of tables on their tree, the tabular loops'
    /// case.
    ///
    /// # Errors
    ///
    /// As [`evaluate`](MatchEvaluator::evaluate).
    fn evaluate_tables(
        &self,
        tree: &GameTree,
        policies: &[&TabularPolicy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        let policies: Vec<&dyn Policy> = policies.iter().map(|&p| p as &dyn Policy).collect();
        self.evaluate(Arena::tree(tree), &policies, matchups, episodes, seed)
    }
}

/// Check matchups against the policy list and the tree (shared by all evaluators).
///
/// # Errors
///
/// [`Error::Shape`] describing the first problem.
pub fn check_matchups(tree: &GameTree, policies: &[&TabularPolicy], matchups: &[Matchup]) -> Result<()> {
    if let Some(i) = policies.iter().position(|p| !p.fits(tree)) {
        return Err(Error::Shape(format!("policy {i} was not made for {}", tree.name())));
    }
    for m in matchups {
        if m.seats.len() != tree.num_players() {
            return Err(Error::Shape(format!(
                "matchup {:?} has {} seats, {} has {} players",
                m.seats,
                m.seats.len(),
                tree.name(),
                tree.num_players()
            )));
        }
        if let Some(s) = m.seats.iter().find(|&&s| s >= policies.len()) {
            return Err(Error::Shape(format!("matchup names policy {s}, only {} given", policies.len())));
        }
    }
    Ok(())
}

/// Every policy as a table over `tree` (borrowed where it is one, tabulated where not), a
/// failure named by the policy's index.
///
/// # Errors
///
/// [`Error::PolicyFailed`] wrapping [`TabularPolicy::of`]'s error.
pub fn tables<'a>(tree: &GameTree, policies: &[&'a dyn Policy]) -> Result<Vec<Cow<'a, TabularPolicy>>> {
    (0..policies.len()).map(|i| table_of(tree, policies, i)).collect()
}

/// Policy `i` of `policies` as a table of `tree` ([`tables`] for one policy).
///
/// # Errors
///
/// [`Error::PolicyFailed`] naming policy `i`.
pub fn table_of<'a>(
    tree: &GameTree,
    policies: &[&'a dyn Policy],
    i: usize,
) -> Result<Cow<'a, TabularPolicy>> {
    let p = policies[i];
    TabularPolicy::of(tree, p).map_err(|source| Error::PolicyFailed {
        policy: i,
        kind: p.kind().to_string(),
        source: Box::new(source),
    })
}

impl crate::sequence_values::Seats for Matchup {
    fn seats(&self) -> &[usize] {
        &self.seats
    }
}

/// Exact expected returns by walking the tree (no sampling error).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExactEvaluator;

impl MatchEvaluator for ExactEvaluator {
    fn name(&self) -> &'static str {
        "exact"
    }

    fn evaluate(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        _episodes: u64,
        _seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        let tree = arena.need_tree("exact evaluation")?;
        let tables = tables(tree, policies)?;
        let policies: Vec<&TabularPolicy> = tables.iter().map(|t| t.as_ref()).collect();
        check_matchups(tree, &policies, matchups)?;
        // Through the realisation plans: a pass over the terminals per new member and a dot
        // product per entry, not a walk of the tree per entry. Plans need perfect recall;
        // other trees are walked per entry.
        if !tree.has_perfect_recall() {
            use rayon::prelude::*;
            return matchups
                .par_iter()
                .map(|m| {
                    let profile: Vec<&TabularPolicy> = m.seats.iter().map(|&s| policies[s]).collect();
                    Ok(MatchTotals::exact(crate::exact::expected_returns(tree, &profile)?))
                })
                .collect();
        }
        let values = crate::sequence_values::expected_returns_of_matchups(tree, &policies, matchups)?;
        Ok(values.into_iter().map(MatchTotals::exact).collect())
    }
}
