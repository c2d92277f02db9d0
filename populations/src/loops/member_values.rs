//! PSRO's exact payoff entries of a two-player tree game through per-member parts kept
//! between iterations ([`MemberValues`]): a member never changes, so its realisation plan
//! (and, for player 0, its pass over the terminals) is computed once, not once per
//! iteration as the stateless [`ExactEvaluator`] must.

use std::sync::Mutex;

use metagame_games::{
    Arena, ExactEvaluator, MatchEvaluator, MatchTotals, Matchup, Policy, SequenceValueCache, table_of,
};

/// Memory the kept parts may take (each member's take three vectors over the sequences):
/// beyond it, as for tic-tac-toe's millions of sequences after a few members, the
/// members are evaluated as the stateless evaluator does, computing every part anew.
const BUDGET_BYTES: usize = 256 << 20;

/// The exact evaluator for a PSRO table whose policies are player 0's members followed by
/// player 1's (the first of player 1's at `second`), keyed in `cache` by member index. A
/// matchup of any other shape, a game of other than two players or without perfect
/// recall, or parts beyond [`BUDGET_BYTES`] go to [`ExactEvaluator`]. The values have the
/// exact evaluator's bits either way.
pub(super) struct MemberValues<'c> {
    pub(super) cache: &'c Mutex<SequenceValueCache>,
    pub(super) second: usize,
}

impl MatchEvaluator for MemberValues<'_> {
    fn name(&self) -> &'static str {
        ExactEvaluator.name()
    }

    fn evaluate(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> metagame_games::Result<Vec<MatchTotals>> {
        let tree = arena.need_tree("exact evaluation")?;
        let second = self.second;
        let kept_bytes = policies.len().saturating_mul(3 * tree.num_sequence_ids() * size_of::<f64>());
        let by_member = tree.num_players() == 2
            && tree.has_perfect_recall()
            && kept_bytes <= BUDGET_BYTES
            && matchups.iter().all(
                |m| matches!(m.seats[..], [a, b] if a < second && (second..policies.len()).contains(&b)),
            );
        if !by_member {
            if kept_bytes > BUDGET_BYTES {
                // Over the budget for good (members only join): free what is kept.
                *self.cache.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
                    SequenceValueCache::default();
            }
            return ExactEvaluator.evaluate(arena, policies, matchups, episodes, seed);
        }
        let pairs: Vec<(usize, usize)> = matchups.iter().map(|m| (m.seats[0], m.seats[1] - second)).collect();
        let table = |seat: usize, key: usize| {
            let i = if seat == 0 { key } else { second + key };
            let table = table_of(tree, policies, i)?;
            if !table.fits(tree) {
                return Err(metagame_games::Error::Shape(format!(
                    "policy {i} was not made for {}",
                    tree.name()
                )));
            }
            Ok(table)
        };
        // A poisoned lock means a panic mid-update elsewhere: start from an empty cache.
        let mut cache = self.cache.lock().unwrap_or_else(|poisoned| {
            let mut cache = poisoned.into_inner();
            *cache = SequenceValueCache::default();
            cache
        });
        let values = cache.expected_returns(tree, &pairs, table)?;
        Ok(values.into_iter().map(MatchTotals::exact).collect())
    }
}
