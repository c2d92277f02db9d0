//! Where the Minimax Exploiter's critic `Q_main` comes from: the main agent's own learned
//! Q-values (the paper's) or the exact values of its policy.

use metagame_games::{GameTree, TabularPolicy};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::learner::Learner;
use crate::values::ValueTable;

/// The source of the main agent's values `Q_main` in [`MinimaxShaping`](crate::MinimaxShaping).
///
/// The paper shapes with the main agent's own critic, what it learned while training
/// (Bairamian et al. 2024, arXiv:2311.17190, Sec. 3: "leverages knowledge of its opponent");
/// the exact values are a perfectly trained critic, kept for studies that want the shaping
/// without the critic's error.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Critic {
    /// `"learned"` (the default, the paper's): the main agent's own action-value estimates at
    /// the seat it plays against the exploiter ([`ValueTable::learned`]).
    #[default]
    Learned,
    /// `"exact"`: the exact action values of the main agent's policy in self-play
    /// ([`ValueTable::exact`] with every seat playing it).
    Exact,
}

impl Critic {
    /// The main agent's values by this rule: `main` is the main agent's learner for the seat
    /// it plays against the exploiter, `main_policy` the policy it plays there (read by
    /// [`Critic::Exact`] only).
    ///
    /// # Errors
    ///
    /// [`Critic::Exact`]: as [`ValueTable::exact`] (a policy that does not fit the tree).
    ///
    /// # Complexity
    ///
    /// `Learned`: O(the learner's table); `Exact`: O(nodes).
    pub fn values(
        self,
        tree: &GameTree,
        main: &dyn Learner,
        main_policy: &TabularPolicy,
    ) -> Result<ValueTable> {
        match self {
            Critic::Learned => Ok(ValueTable::learned(main)),
            Critic::Exact => ValueTable::exact(tree, main.seat(), &vec![main_policy; tree.num_players()]),
        }
    }

    /// The name in configs (`"learned"`, `"exact"`).
    pub fn as_str(self) -> &'static str {
        match self {
            Critic::Learned => "learned",
            Critic::Exact => "exact",
        }
    }
}

// With `Critic`, not in values.rs: the value tables sit below the learners and know none.
impl ValueTable {
    /// The main agent's own critic: the action-value estimates `main` learned for its seat
    /// (`Q(s, a)` of its table, visit counts as they are), as the Minimax Exploiter paper
    /// shapes with them (Bairamian et al. 2024, arXiv:2311.17190). Pass the main agent's
    /// learner for the seat it plays against the exploiter. Equal to [`Learner::values`]; the
    /// name says which critic a caller chose (the other being [`ValueTable::exact`]).
    pub fn learned(main: &(impl Learner + ?Sized)) -> Self {
        main.values()
    }
}

#[cfg(test)]
mod tests {
    use metagame_games::{ActionId, InfosetId, PlayerId, registry};

    use super::*;
    use crate::episodes::{Layout, OpponentSampler};
    use crate::learner::Start;
    use crate::q_learning::{QLearner, QLearningConfig};
    use crate::shaping::{MinimaxConfig, MinimaxShaping};

    fn tree(name: &str) -> GameTree {
        GameTree::build(&registry::load(name).unwrap()).unwrap()
    }

    /// `min_s max_a Q(s, a)` over the infosets of the table's seat, computed afresh.
    fn value_min(tree: &GameTree, values: &ValueTable) -> f64 {
        tree.infosets_of(PlayerId(values.seat()))
            .map(|i| values.max_value(tree, InfosetId(i)))
            .fold(f64::INFINITY, f64::min)
    }

    #[test]
    fn the_learned_critic_is_the_main_learners_own_q_rows() {
        let t = tree("kuhn_poker");
        let uniform = TabularPolicy::uniform(&t);
        let mut main = QLearner::new(&t, 1, 5, QLearningConfig::default(), Start::Fresh).unwrap();
        main.train(&t, &OpponentSampler::fixed(&uniform), 3000).unwrap();
        let critic = Critic::Learned.values(&t, &main, &uniform).unwrap();
        assert_eq!(critic, main.values());
        assert_eq!(critic, ValueTable::learned(&main));
        let sh = MinimaxShaping::new(&t, 0, &critic, &MinimaxConfig::default()).unwrap();
        let layout = Layout::new(&t, 1);
        for (i, start, legal) in &layout.infosets {
            let row: Vec<f64> =
                legal.iter().map(|&a| critic.value(InfosetId(*i), ActionId(a as usize))).collect();
            let best = row.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(sh.main_max()[*start as usize], best, "infoset {i}");
        }
        assert!((sh.shift() - value_min(&t, &critic).abs()).abs() < 1e-15);
        // The exact critic is a different table, named as such.
        let exact = Critic::Exact.values(&t, &main, &uniform).unwrap();
        assert_eq!(exact, ValueTable::exact(&t, 1, &[&uniform, &uniform]).unwrap());
        assert_ne!(exact, critic);
    }
}
