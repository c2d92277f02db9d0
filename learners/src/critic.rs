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
/// (Bairamian et al. 2023, arXiv:2311.17190, Sec. 3: "leverages knowledge of its opponent");
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
