//! The sequence-form view of a [`GameTree`] (Koller, Megiddo & von Stengel 1996; von Stengel
//! 1996): sequences (a player's infoset-action pairs, plus one empty sequence per player),
//! realisation plans, and reach probabilities. This is what the CFR family, sequence-form
//! LPs and learners need beyond behaviour policies.
//!
//! Sequence ids: `0..tree.num_sequences()` are the infoset-action pairs, infoset by infoset
//! (`tree.sequences_of(infoset)`, in the order of its legal actions); then
//! `tree.num_sequences() + p` is player `p`'s empty sequence.
//!
//! # Examples
//!
//! ```
//! use metagame_games::{registry, GameTree, PlayerId, RealizationPlan, TabularPolicy};
//!
//! let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
//! let uniform = TabularPolicy::uniform(&tree);
//! let plan = RealizationPlan::of(&tree, &uniform, PlayerId(0))?;
//! // Player 0 bets first with probability 1/2 whatever the card.
//! let first = tree.infosets_of(PlayerId(0)).start;
//! let bet = tree.sequence(metagame_games::InfosetId(first), 1);
//! assert_eq!(plan.get(bet), 0.5);
//! # Ok::<(), metagame_games::Error>(())
//! ```

use std::ops::Range;

use crate::error::{Error, Result};
use crate::game::PlayerId;
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, InfosetId, NodeKind};

/// A sequence of one player: an infoset-action pair, or the player's empty sequence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SequenceId(pub usize);

impl GameTree {
    /// Number of sequence ids: every infoset-action pair, then one empty sequence per player.
    pub fn num_sequence_ids(&self) -> usize {
        self.num_sequences() + self.num_players
    }

    /// `player`'s empty sequence (the root of its sequence tree).
    ///
    /// # Panics
    ///
    /// If `player` is not a player of the game (a caller bug).
    #[track_caller]
    pub fn empty_sequence(&self, player: PlayerId) -> SequenceId {
        assert!(player.0 < self.num_players, "player {} of a {}-player game", player.0, self.num_players);
        SequenceId(self.num_sequences() + player.0)
    }

    /// The sequences of an infoset, one per legal action in order.
    pub fn sequences_of(&self, infoset: InfosetId) -> Range<usize> {
        self.legal_start[infoset.0] as usize..self.legal_start[infoset.0 + 1] as usize
    }

    /// The sequence "play the `action_index`-th legal action at `infoset`".
    ///
    /// # Panics
    ///
    /// If `action_index` is not below the infoset's number of legal actions (a caller bug).
    #[track_caller]
    pub fn sequence(&self, infoset: InfosetId, action_index: usize) -> SequenceId {
        let range = self.sequences_of(infoset);
        assert!(action_index < range.len(), "action index {action_index} of {} legal actions", range.len());
        SequenceId(range.start + action_index)
    }

    /// `player`'s infoset-action sequences (its empty sequence excluded).
    pub fn player_sequences(&self, player: PlayerId) -> Range<usize> {
        let infosets = self.infosets_of(PlayerId(player.0));
        self.legal_start[infosets.start] as usize..self.legal_start[infosets.end] as usize
    }

    /// The acting player's sequence leading to `infoset` (its parent sequence; the player's
    /// empty sequence at its first infosets). Defined with perfect recall
    /// ([`GameTree::has_perfect_recall`]); otherwise the sequence before the infoset's first
    /// history, which other histories need not share.
    pub fn parent_sequence(&self, infoset: InfosetId) -> SequenceId {
        SequenceId(self.infoset_parent_seq[infoset.0] as usize)
    }

    /// `player`'s last sequence before the terminal `node` (exact with imperfect recall too;
    /// only the sequence tree above it is then not a tree).
    ///
    /// # Panics
    ///
    /// If `node` is not a terminal (a caller bug).
    #[track_caller]
    pub fn terminal_sequence(&self, node: usize, player: PlayerId) -> SequenceId {
        assert_eq!(self.kind[node], NodeKind::Terminal, "node {node} is not a terminal");
        let t = self.slot[node] as usize;
        SequenceId(self.terminal_parent_seq[t * self.num_players + player.0] as usize)
    }
}

/// A player's realisation plan: `x(σ)`, the product of the player's own action
/// probabilities along sequence `σ` (1 at its empty sequence, 0 at other players'
/// sequences). Realisation-equivalent policies have equal plans.
#[derive(Clone, Debug, PartialEq)]
pub struct RealizationPlan {
    player: PlayerId,
    values: Vec<f64>,
}

impl RealizationPlan {
    /// The plan of `player` playing `policy`.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] when the policy was made for another tree or `player` is not a
    /// player of the game; [`Error::ImperfectRecall`] on a tree without perfect recall,
    /// where a sequence's realisation probability is not the product along one path.
    ///
    /// # Complexity
    ///
    /// O(sequences of `player`).
    pub fn of(tree: &GameTree, policy: &TabularPolicy, player: PlayerId) -> Result<Self> {
        if !policy.fits(tree) || player.0 >= tree.num_players() {
            return Err(Error::Shape(format!("a policy of player {} for {}", player.0, tree.name())));
        }
        tree.require_perfect_recall("a realisation plan")?;
        let mut values = vec![0.0; tree.num_sequence_ids()];
        values[tree.empty_sequence(player).0] = 1.0;
        // Infosets come after their parent sequence's infoset in the arena's order.
        for i in tree.infosets_of(PlayerId(player.0)) {
            let x = values[tree.parent_sequence(InfosetId(i)).0];
            for (k, s) in tree.sequences_of(InfosetId(i)).enumerate() {
                values[s] = x * policy.prob(i, tree.legal_actions(InfosetId(i))[k].0);
            }
        }
        Ok(Self { player, values })
    }

    /// The player the plan is of.
    pub fn player(&self) -> PlayerId {
        self.player
    }

    /// `x(sequence)`.
    pub fn get(&self, sequence: SequenceId) -> f64 {
        self.values[sequence.0]
    }

    /// The plan over every sequence id (see the module docs).
    pub fn as_slice(&self) -> &[f64] {
        &self.values
    }

    /// Write the behaviour policy of this plan into the player's rows of `out`:
    /// `π(s, a) = x(s·a) / x(parent(s))`, uniform where the player never reaches `s`.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] when `out` or the plan was made for another tree;
    /// [`Error::ImperfectRecall`] on a tree without perfect recall.
    pub fn write_policy(&self, tree: &GameTree, out: &mut TabularPolicy) -> Result<()> {
        if !out.fits(tree) || self.values.len() != tree.num_sequence_ids() {
            return Err(Error::Shape(format!("a plan or policy not made for {}", tree.name())));
        }
        tree.require_perfect_recall("a realisation plan")?;
        for i in tree.infosets_of(PlayerId(self.player.0)) {
            let infoset = InfosetId(i);
            let x = self.values[tree.parent_sequence(infoset).0];
            let actions = tree.legal_actions(infoset).to_vec();
            let row = out.row_mut(infoset);
            row.fill(0.0);
            for (k, s) in tree.sequences_of(infoset).enumerate() {
                row[actions[k].0] = if x > 0.0 { self.values[s] / x } else { 1.0 / actions.len() as f64 };
            }
        }
        Ok(())
    }
}

/// The reach probability of every node (indexed like the tree's nodes) when everyone plays
/// `profile`: chance times every player's action probabilities, except `excluded`'s own
/// (`Some(p)`: player `p`'s counterfactual reach, as CFR weighs regrets).
///
/// # Errors
///
/// [`Error::Shape`] when the profile does not have one policy of this tree per player.
///
/// # Complexity
///
/// O(nodes).
pub fn reach_probabilities(
    tree: &GameTree,
    profile: &[&TabularPolicy],
    excluded: Option<PlayerId>,
) -> Result<Vec<f64>> {
    crate::exact::check_profile(tree, profile)?;
    let mut out = Vec::new();
    crate::exact::reach(tree, profile, excluded.map(|p| p.0), &mut out);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{expected_returns, registry};

    #[test]
    fn plans_are_consistent_and_give_back_the_policy() {
        for spec in ["kuhn_poker", "leduc_poker"] {
            let tree = GameTree::build(&registry::load(spec).unwrap()).unwrap();
            let mut policy = TabularPolicy::uniform(&tree);
            // A policy that is not uniform: weight on the first legal action.
            for i in 0..tree.num_infosets() {
                let actions = tree.legal_actions(InfosetId(i)).to_vec();
                let row = policy.row_mut(InfosetId(i));
                row.fill(0.0);
                for (k, a) in actions.iter().enumerate() {
                    row[a.0] = if k == 0 { 0.6 } else { 0.4 / (actions.len() - 1).max(1) as f64 };
                }
                if actions.len() == 1 {
                    row[actions[0].0] = 1.0;
                }
            }
            for p in 0..tree.num_players() {
                let plan = RealizationPlan::of(&tree, &policy, PlayerId(p)).unwrap();
                // x(parent(s)) = Σ_a x(s·a) at every infoset.
                for i in tree.infosets_of(PlayerId(p)) {
                    let parent = plan.get(tree.parent_sequence(InfosetId(i)));
                    let children: f64 =
                        tree.sequences_of(InfosetId(i)).map(|s| plan.get(SequenceId(s))).sum();
                    assert!((parent - children).abs() < 1e-12, "{spec} infoset {i}");
                }
                let mut back = TabularPolicy::uniform(&tree);
                plan.write_policy(&tree, &mut back).unwrap();
                for i in tree.infosets_of(PlayerId(p)) {
                    for (a, b) in back.row(InfosetId(i)).iter().zip(policy.row(InfosetId(i))) {
                        assert!((a - b).abs() < 1e-12, "{spec} infoset {i}");
                    }
                }
            }
        }
    }

    #[test]
    fn reach_at_the_terminals_gives_the_expected_returns() {
        let tree = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let profile = [&uniform, &uniform];
        let reach = reach_probabilities(&tree, &profile, None).unwrap();
        let mut values = [0.0; 2];
        let mut total = 0.0;
        for node in (0..tree.num_nodes()).filter(|&n| tree.node_kind(n) == NodeKind::Terminal) {
            total += reach[node];
            for (p, v) in values.iter_mut().enumerate() {
                *v += reach[node] * tree.terminal_utilities(node)[p];
            }
        }
        assert!((total - 1.0).abs() < 1e-12);
        let expected = expected_returns(&tree, &profile).unwrap();
        for p in 0..2 {
            assert!((values[p] - expected[p]).abs() < 1e-12);
        }
        // The counterfactual reach of player 0 times its plan is the full reach.
        let counterfactual = reach_probabilities(&tree, &profile, Some(PlayerId(0))).unwrap();
        let plan = RealizationPlan::of(&tree, &uniform, PlayerId(0)).unwrap();
        for node in (0..tree.num_nodes()).filter(|&n| tree.node_kind(n) == NodeKind::Terminal) {
            let x = plan.get(tree.terminal_sequence(node, PlayerId(0)));
            assert!((counterfactual[node] * x - reach[node]).abs() < 1e-12);
        }
        assert!(reach_probabilities(&tree, &profile[..1], None).is_err());
    }
}
