//! The Minimax Exploiter: a learner whose reward is shaped by a frozen main agent's values.

use metagame_games::{Cutoff, GameTree, TabularPolicy};

use crate::episodes::OpponentSampler;
use crate::error::Result;
use crate::learner::{Learner, ShapedLearner, TrainingStats};
use crate::shaping::{MinimaxConfig, MinimaxShaping};
use crate::values::ValueTable;

/// A learner trained with the Minimax Exploiter's shaped reward ([`MinimaxShaping`])
/// against a frozen main agent; the main agent itself is untouched.
///
/// With α = 0 it learns exactly what the wrapped learner learns alone, bit for bit.
/// Works standalone (opponent: a fixed policy, main values from any learner) and in a
/// league (opponent: the main agent's current policy and values).
#[derive(Clone, Debug)]
pub struct MinimaxExploiter<L> {
    inner: L,
    config: MinimaxConfig,
}

impl<L: ShapedLearner> MinimaxExploiter<L> {
    /// Wrap `learner` with shaping from the main agent's `main_values`.
    ///
    /// # Errors
    ///
    /// As [`MinimaxShaping::new`].
    pub fn new(
        tree: &GameTree,
        mut learner: L,
        main_values: &ValueTable,
        config: &MinimaxConfig,
    ) -> Result<Self> {
        let shaping = MinimaxShaping::new(tree, learner.seat(), main_values, config)?;
        learner.set_reward_shaping(Some(shaping));
        Ok(Self { inner: learner, config: config.clone() })
    }

    /// Shape from now on with new values of the main agent (in a league, after the main
    /// agent trained further); the wrapped learner keeps what it learned.
    ///
    /// # Errors
    ///
    /// As [`MinimaxShaping::new`]; on error the old shaping stays.
    pub fn set_main_values(&mut self, tree: &GameTree, main_values: &ValueTable) -> Result<()> {
        let shaping = MinimaxShaping::new(tree, self.inner.seat(), main_values, &self.config)?;
        self.inner.set_reward_shaping(Some(shaping));
        Ok(())
    }

    /// The shaping settings.
    pub fn config(&self) -> &MinimaxConfig {
        &self.config
    }

    /// The wrapped learner, its shaping removed.
    pub fn into_inner(mut self) -> L {
        self.inner.set_reward_shaping(None);
        self.inner
    }

    /// The wrapped learner.
    pub fn inner(&self) -> &L {
        &self.inner
    }
}

impl<L: ShapedLearner> Learner for MinimaxExploiter<L> {
    fn name(&self) -> &'static str {
        "minimax-exploiter"
    }
    fn seat(&self) -> usize {
        self.inner.seat()
    }
    fn train_until(
        &mut self,
        tree: &GameTree,
        opponents: &OpponentSampler<'_>,
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()> {
        self.inner.train_until(tree, opponents, episodes, cutoff)
    }
    fn policy(&self) -> TabularPolicy {
        self.inner.policy()
    }
    fn values(&self) -> ValueTable {
        self.inner.values()
    }
    fn stats(&self) -> &TrainingStats {
        self.inner.stats()
    }
}
