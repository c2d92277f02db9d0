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

#[cfg(test)]
mod tests {
    use metagame_games::{ActionId, InfosetId, PlayerId, registry};

    use super::*;
    use crate::episodes::Layout;
    use crate::learner::Start;
    use crate::q_learning::{QLearner, QLearningConfig};
    use crate::schedule::Schedule;
    use crate::shaping::Shift;

    fn tree(name: &str) -> GameTree {
        GameTree::build(&registry::load(name).unwrap()).unwrap()
    }

    /// A Kuhn main agent (seat 1) whose values are 0.3 for pass and 0.7 for bet everywhere.
    fn constant_main_values(t: &GameTree) -> ValueTable {
        let layout = Layout::new(t, 1);
        let mut q = vec![0.0; t.num_sequences()];
        let visits = vec![1; t.num_sequences()];
        for (_, start, _) in &layout.infosets {
            q[*start as usize] = 0.3;
            q[*start as usize + 1] = 0.7;
        }
        ValueTable::from_sequences(&layout, 1, &q, &visits)
    }

    #[test]
    fn a_short_exploiter_run_is_shaped_by_the_formula_by_hand() {
        // Kuhn: the exploiter (seat 0) always passes (greedy from a warm start, ε = 0), the
        // fixed opponent always bets, so every episode is pass, bet, pass (fold): R = −1, and
        // the main agent acts once between the exploiter's two decisions, at an infoset where
        // max_a Q_main = 0.7.
        let t = tree("kuhn_poker");
        let mut pass = TabularPolicy::uniform(&t);
        let mut bet = TabularPolicy::uniform(&t);
        for i in t.infosets_of(PlayerId(0)) {
            pass.row_mut(InfosetId(i)).copy_from_slice(&[1.0, 0.0]);
        }
        for i in t.infosets_of(PlayerId(1)) {
            bet.row_mut(InfosetId(i)).copy_from_slice(&[0.0, 1.0]);
        }
        let config =
            QLearningConfig { epsilon: Schedule::constant(0.0), batch_size: 1, ..Default::default() };
        let values = constant_main_values(&t);
        let (alpha, gamma) = (0.1, 0.995);
        // Auto on Kuhn (chips) is the value shift |V_min| = 0.7; by reward it is |R_min| = 2.
        for (shift, c) in [(Shift::Auto, 0.7), (Shift::RewardMin, 2.0)] {
            let q = QLearner::new(&t, 0, 1, config.clone(), Start::From(&pass)).unwrap();
            let mm = MinimaxConfig::new(alpha).with_discount(gamma).with_shift(shift);
            let mut me = MinimaxExploiter::new(&t, q, &values, &mm).unwrap();
            me.train(&t, &OpponentSampler::fixed(&bet), 1).unwrap();
            let stats = me.stats().clone();
            // R_mm of the first step: 0 − α·γ·(0.7 + c); of the last (terminal): R = −1.
            let first = -alpha * gamma * (0.7 + c);
            assert_eq!((stats.return_sum, stats.steps), (-1.0, 2));
            assert!(
                (stats.shaped_return_sum - (first - 1.0)).abs() < 1e-12,
                "{shift:?}: {}",
                stats.shaped_return_sum
            );
            // Q(s₀, pass) after one update with step size 1: R_mm + 1·max Q(s₁) = first + 1e-9
            // (s₁'s row still holds the warm start's 1e-9 · π); Q(s₁, pass) = R = −1.
            let v = me.values();
            let dealt: Vec<usize> =
                t.infosets_of(PlayerId(0)).filter(|&i| v.visits(InfosetId(i), ActionId(0)) > 0).collect();
            assert_eq!(dealt.len(), 2, "one episode visits two infosets of the exploiter");
            let q0 =
                dealt.iter().map(|&i| v.value(InfosetId(i), ActionId(0))).fold(f64::NEG_INFINITY, f64::max);
            assert!((q0 - (first + 1e-9)).abs() < 1e-12, "{shift:?}: {q0}");
        }
    }
}
