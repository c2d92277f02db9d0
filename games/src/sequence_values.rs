//! Exact expected returns of many profiles at once, through the sequence form (Koller,
//! Megiddo & von Stengel 1996): player `p`'s value of a profile is
//! `Σ_z c(z) · u_p(z) · Π_q x_q(σ_q(z))` over the terminals `z`, with `c(z)` chance's reach,
//! `σ_q(z)` player `q`'s last sequence before `z` and `x_q` its realisation plan.
//!
//! A PSRO iteration's new entries pair one new member with every member of the other
//! players. In a two-player game this evaluates all the entries of one player-0 policy by
//! one pass over the terminals (`y_p(σ) = Σ_{z: σ_1(z) = σ} c(z) · u_p(z) · x_0(σ_0(z))`, a
//! vector over player 1's sequences) and then one dot product per entry
//! (`Σ_σ y_p(σ) · x_1(σ)`), instead of a walk of the whole tree per entry. Games of more players sum over the terminals
//! per profile. Every sum runs in a fixed order, so the values do not depend on the threads.
//!
//! Realisation plans describe a player's play only with perfect recall; trees of imperfect
//! recall are evaluated by walking them ([`crate::expected_returns`]).

use std::collections::HashMap;

use rayon::prelude::*;

use crate::error::Result;
use crate::game::PlayerId;
use crate::sequence_form::RealizationPlan;
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, NodeKind};

/// Each player's expected return in every matchup (`matchups[m].seats[p]` is the index in
/// `policies` of the policy player `p` plays), in matchup order. A matchup is anything
/// that names its seats ([`Seats`]).
///
/// # Errors
///
/// [`crate::Error::Shape`] for a policy not made for `tree` (callers check the matchups
/// first).
///
/// # Complexity
///
/// O(nodes) once, O(sequences) per distinct (policy, seat) pair, then with two players
/// O(terminals) per distinct player-0 policy plus O(sequences) per matchup; with more,
/// O(terminals · players) per matchup.
pub fn expected_returns_of_matchups<M: Seats + Sync>(
    tree: &GameTree,
    policies: &[&TabularPolicy],
    matchups: &[M],
) -> Result<Vec<Vec<f64>>> {
    let n = tree.num_players();
    if matchups.is_empty() {
        return Ok(Vec::new());
    }
    let chance = chance_reach_of_terminals(tree);
    // One plan per (policy, seat) that a matchup plays.
    let mut wanted: Vec<(usize, usize)> =
        matchups.iter().flat_map(|m| m.seats().iter().enumerate().map(|(p, &s)| (s, p))).collect();
    wanted.sort_unstable();
    wanted.dedup();
    let plans: Vec<RealizationPlan> = wanted
        .par_iter()
        .map(|&(s, p)| RealizationPlan::of(tree, policies[s], PlayerId(p)))
        .collect::<Result<_>>()?;
    let plan_of: HashMap<(usize, usize), &[f64]> =
        wanted.iter().zip(&plans).map(|(&key, plan)| (key, plan.as_slice())).collect();
    let plan = |s: usize, p: usize| plan_of[&(s, p)];

    if n != 2 {
        return Ok(matchups
            .par_iter()
            .map(|m| {
                let plans: Vec<&[f64]> = m.seats().iter().enumerate().map(|(p, &s)| plan(s, p)).collect();
                let mut values = vec![0.0; n];
                for (z, &c) in chance.iter().enumerate() {
                    let mut reach = c;
                    for (q, x) in plans.iter().enumerate() {
                        reach *= x[tree.terminal_parent_seq[z * n + q] as usize];
                    }
                    if reach != 0.0 {
                        for (p, v) in values.iter_mut().enumerate() {
                            *v += reach * tree.utilities[z * n + p];
                        }
                    }
                }
                values
            })
            .collect());
    }

    // Two players: the matchups of one player-0 policy share one pass over the terminals.
    // Every entry is that pass's vector dotted with the player-1 plan, whichever group it is
    // in, so its bits do not depend on which other matchups were asked for with it (a Ray
    // task's share of a table's entries gives the same values as the whole table at once).
    let mut groups: Vec<(usize, Vec<usize>)> = Vec::new();
    let mut group_of: HashMap<usize, usize> = HashMap::new();
    for (k, m) in matchups.iter().enumerate() {
        let g = *group_of.entry(m.seats()[0]).or_insert_with(|| {
            groups.push((m.seats()[0], Vec::new()));
            groups.len() - 1
        });
        groups[g].1.push(k);
    }
    let per_group: Vec<Vec<(usize, Vec<f64>)>> = groups
        .par_iter()
        .map(|(seat, members)| {
            let y = through_second_player(tree, &chance, plan(*seat, 0));
            members
                .iter()
                .map(|&k| (k, against_second_player(tree, &y, plan(matchups[k].seats()[1], 1))))
                .collect()
        })
        .collect();
    let mut out = vec![Vec::new(); matchups.len()];
    for (k, values) in per_group.into_iter().flatten() {
        out[k] = values;
    }
    Ok(out)
}

/// In a two-player game, what a player-0 realisation plan `x` gives each player through
/// each of player 1's sequences, player 1's own probability aside: `y[p][σ] =
/// Σ_{z: σ_1(z) = σ} c(z) · u_p(z) · x(σ_0(z))`, one pass over the terminals (`chance`:
/// [`chance_reach_of_terminals`]).
fn through_second_player(tree: &GameTree, chance: &[f64], x: &[f64]) -> [Vec<f64>; 2] {
    let mut y = [vec![0.0; tree.num_sequence_ids()], vec![0.0; tree.num_sequence_ids()]];
    for (z, &c) in chance.iter().enumerate() {
        let reach = c * x[tree.terminal_parent_seq[z * 2] as usize];
        if reach != 0.0 {
            let sigma = tree.terminal_parent_seq[z * 2 + 1] as usize;
            for (p, yp) in y.iter_mut().enumerate() {
                yp[sigma] += reach * tree.utilities[z * 2 + p];
            }
        }
    }
    y
}

/// Each player's value of the profile of [`through_second_player`]'s `y` against player 1's
/// realisation plan `x1`: `Σ_σ y_p(σ) · x1(σ)`, in sequence order.
fn against_second_player(tree: &GameTree, y: &[Vec<f64>; 2], x1: &[f64]) -> Vec<f64> {
    let empty = tree.empty_sequence(PlayerId(1)).0;
    y.iter()
        .map(|yp| {
            let mut v = yp[empty] * x1[empty];
            for s in tree.player_sequences(PlayerId(1)) {
                v += yp[s] * x1[s];
            }
            v
        })
        .collect()
}

/// The parts of two-player sequence-form values that belong to one policy, kept for
/// policies that do not change (a PSRO population's members), under keys the caller
/// chooses per seat: a player-0 policy's pass over the terminals (a vector per player over
/// player 1's sequences) and a player-1 policy's realisation plan. Values read through the
/// cache have the bits the exact evaluator gives.
#[derive(Debug, Default)]
pub struct SequenceValueCache {
    chance: Option<Vec<f64>>,
    first: HashMap<usize, [Vec<f64>; 2]>,
    second: HashMap<usize, Vec<f64>>,
}

impl SequenceValueCache {
    /// Forget the keys of `seat` from `key` on (the policies a failed PSRO iteration added
    /// and did not keep, whose keys the next ones will take).
    pub fn forget_from(&mut self, seat: usize, key: usize) {
        match seat {
            0 => self.first.retain(|&k, _| k < key),
            _ => self.second.retain(|&k, _| k < key),
        }
    }

    /// Both players' expected returns of each pair `(k0, k1)` of keys, on `tree` (two
    /// players, perfect recall; every cache of one tree only): a key not in the cache yet
    /// is computed from `policy(seat, key)`'s table and kept.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Unsupported`] for a tree of more players or imperfect recall; the
    /// errors of `policy` and of [`RealizationPlan::of`].
    pub fn expected_returns<'p>(
        &mut self,
        tree: &GameTree,
        pairs: &[(usize, usize)],
        policy: impl Fn(usize, usize) -> Result<std::borrow::Cow<'p, TabularPolicy>> + Sync,
    ) -> Result<Vec<Vec<f64>>> {
        if tree.num_players() != 2 || !tree.has_perfect_recall() {
            return Err(crate::Error::Unsupported(format!(
                "cached sequence-form values need two players and perfect recall, not {}",
                tree.name()
            )));
        }
        let chance: &[f64] = self.chance.get_or_insert_with(|| chance_reach_of_terminals(tree));
        let mut new_first: Vec<usize> =
            pairs.iter().map(|p| p.0).filter(|k| !self.first.contains_key(k)).collect();
        let mut new_second: Vec<usize> =
            pairs.iter().map(|p| p.1).filter(|k| !self.second.contains_key(k)).collect();
        for keys in [&mut new_first, &mut new_second] {
            keys.sort_unstable();
            keys.dedup();
        }
        let plan = |seat: usize, key: usize| -> Result<Vec<f64>> {
            let table = policy(seat, key)?;
            Ok(RealizationPlan::of(tree, &table, PlayerId(seat))?.as_slice().to_vec())
        };
        let first: Vec<[Vec<f64>; 2]> = new_first
            .par_iter()
            .map(|&k| Ok(through_second_player(tree, chance, &plan(0, k)?)))
            .collect::<Result<_>>()?;
        let second: Vec<Vec<f64>> = new_second.par_iter().map(|&k| plan(1, k)).collect::<Result<_>>()?;
        self.first.extend(new_first.into_iter().zip(first));
        self.second.extend(new_second.into_iter().zip(second));
        Ok(pairs
            .par_iter()
            .map(|(a, b)| against_second_player(tree, &self.first[a], &self.second[b]))
            .collect())
    }
}

/// The policy each player plays in a profile, by index.
pub trait Seats {
    /// `seats()[p]`: the index of player `p`'s policy.
    fn seats(&self) -> &[usize];
}

/// Chance's reach of every terminal, in terminal order: the product of the chance
/// probabilities on its path.
fn chance_reach_of_terminals(tree: &GameTree) -> Vec<f64> {
    let mut reach = vec![0.0; tree.num_nodes()];
    reach[0] = 1.0;
    for c in 1..tree.num_nodes() {
        let parent = tree.parent[c] as usize;
        reach[c] = match tree.kind[parent] {
            NodeKind::Chance => reach[parent] * tree.chance_prob[c],
            _ => reach[parent],
        };
    }
    tree.terminal_node.iter().map(|&node| reach[node as usize]).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluator::Matchup;
    use crate::{expected_returns, registry};

    /// Pseudo-random distributions at every infoset (deterministic, some actions at 0).
    fn scrambled(tree: &GameTree, salt: u64) -> TabularPolicy {
        let mut policy = TabularPolicy::uniform(tree);
        let mut state = salt.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
        for i in 0..tree.num_infosets() {
            let infoset = crate::InfosetId(i);
            let actions: Vec<usize> = tree.legal_actions(infoset).iter().map(|a| a.0).collect();
            let row = policy.row_mut(infoset);
            let mut total = 0.0;
            for &a in &actions {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                let w = if state.is_multiple_of(5) { 0.0 } else { (state % 1000) as f64 + 1.0 };
                row[a] = w;
                total += w;
            }
            for &a in &actions {
                row[a] = if total > 0.0 { row[a] / total } else { 1.0 / actions.len() as f64 };
            }
        }
        policy
    }

    /// The exact evaluator on a tree of imperfect recall (no realisation plans there) walks
    /// it per matchup, with the walk's values.
    #[test]
    fn the_exact_evaluator_walks_trees_of_imperfect_recall() {
        use crate::{Arena, ExactEvaluator, MatchEvaluator, Policy};
        let game = registry::load("goofspiel(num_cards=4)").unwrap();
        let tree = GameTree::build(&game).unwrap();
        assert!(!tree.has_perfect_recall());
        let owned: Vec<TabularPolicy> = (0..3).map(|k| scrambled(&tree, k + 7)).collect();
        let policies: Vec<&dyn Policy> = owned.iter().map(|p| p as &dyn Policy).collect();
        let matchups = vec![Matchup { seats: vec![0, 1] }, Matchup { seats: vec![2, 0] }];
        let totals = ExactEvaluator.evaluate(Arena::tree(&tree), &policies, &matchups, 1, 0).unwrap();
        for (m, t) in matchups.iter().zip(&totals) {
            let walked = expected_returns(&tree, &[&owned[m.seats()[0]], &owned[m.seats()[1]]]).unwrap();
            assert_eq!(t.mean(), walked);
        }
    }

    /// Values read through a cache that grows over several calls (a PSRO population's
    /// entries, iteration by iteration) have the bits of the uncached evaluation; a game
    /// of three players is refused.
    #[test]
    fn the_cache_gives_the_uncached_bits_as_it_grows() {
        for game in ["kuhn_poker", "leduc_poker"] {
            let tree = GameTree::build(&registry::load(game).unwrap()).unwrap();
            let owned: Vec<TabularPolicy> = (0..10).map(|k| scrambled(&tree, k + 3)).collect();
            let policies: Vec<&TabularPolicy> = owned.iter().collect();
            // Player 0's members are policies 0..5, player 1's 5..10; members 0..=i each.
            let mut cache = SequenceValueCache::default();
            for i in 0..5 {
                let pairs: Vec<(usize, usize)> =
                    (0..=i).map(|j| (i, j)).chain((0..i).map(|j| (j, i))).collect();
                let table =
                    |seat: usize, key: usize| Ok(std::borrow::Cow::Borrowed(policies[seat * 5 + key]));
                let cached = cache.expected_returns(&tree, &pairs, table).unwrap();
                let matchups: Vec<Matchup> =
                    pairs.iter().map(|&(a, b)| Matchup { seats: vec![a, 5 + b] }).collect();
                let plain = expected_returns_of_matchups(&tree, &policies, &matchups).unwrap();
                assert_eq!(cached, plain, "{game}, members 0..={i}");
            }
            // Forgotten keys are computed again from the policies they name now.
            cache.forget_from(1, 4);
            let swapped =
                |seat: usize, key: usize| Ok(std::borrow::Cow::Borrowed(policies[(seat * 5 + key + 1) % 10]));
            let again = cache.expected_returns(&tree, &[(0, 4), (0, 3)], swapped).unwrap();
            let matchups = [Matchup { seats: vec![0, 0] }, Matchup { seats: vec![0, 8] }];
            assert_eq!(again, expected_returns_of_matchups(&tree, &policies, &matchups).unwrap(), "{game}");
        }
        let three = GameTree::build(&registry::load("kuhn_poker(players=3)").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&three);
        let e = SequenceValueCache::default()
            .expected_returns(&three, &[(0, 0)], |_, _| Ok(std::borrow::Cow::Borrowed(&uniform)));
        assert!(e.unwrap_err().to_string().contains("two players"));
    }

    /// The same values as a walk of the tree per profile, to rounding, on two- and
    /// three-player games, whichever seat varies.
    #[test]
    fn equals_the_tree_walk_per_profile() {
        for game in ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)", "liars_dice(dice_sides=3)"] {
            let tree = GameTree::build(&registry::load(game).unwrap()).unwrap();
            let n = tree.num_players();
            let owned: Vec<TabularPolicy> = (0..6).map(|k| scrambled(&tree, k + 1)).collect();
            let policies: Vec<&TabularPolicy> = owned.iter().collect();
            let mut matchups = Vec::new();
            // Policy 0 against every other policy in each seat, and a few mixed profiles.
            for seat in 0..n {
                for k in 1..6 {
                    let mut seats = vec![0; n];
                    seats[seat] = k;
                    matchups.push(Matchup { seats });
                }
            }
            matchups.push(Matchup { seats: (0..n).map(|p| (p * 2 + 1) % 6).collect() });
            let ours = expected_returns_of_matchups(&tree, &policies, &matchups).unwrap();
            for (m, values) in matchups.iter().zip(&ours) {
                // The same bits asked alone as in the batch.
                let alone = expected_returns_of_matchups(&tree, &policies, std::slice::from_ref(m)).unwrap();
                assert_eq!(alone[0], *values, "{game} {:?} alone", m.seats());
                let profile: Vec<&TabularPolicy> = m.seats().iter().map(|&s| policies[s]).collect();
                let walked = expected_returns(&tree, &profile).unwrap();
                for (a, b) in values.iter().zip(&walked) {
                    assert!((a - b).abs() < 1e-12, "{game} {:?}: {values:?} vs {walked:?}", m.seats());
                }
            }
        }
    }
}
