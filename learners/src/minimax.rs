//! The Minimax Exploiter: a learner whose reward is shaped by a frozen main agent's values.

use metagame_games::{GameTree, InfosetId, PlayerId, TabularPolicy};
use serde::{Deserialize, Serialize};

use crate::episodes::{Layout, NONE, OpponentSampler, Step};
use crate::error::{Error, Result};
use crate::learner::{Learner, ShapedLearner, TrainingStats};
use crate::values::ValueTable;

/// Settings of the Minimax Exploiter's shaping.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct MinimaxConfig {
    /// Weight α of the main agent's value, in [0, 1]; 0 is the plain learner. Default 0.1
    /// (the paper's Tic-Tac-Toe value; 0.01 for Connect 4, 0.005 for Atari Boxing).
    pub alpha: f64,
    /// Discount γ of the shaping term, in [0, 1]. Default 0.995 (the paper's).
    pub discount: f64,
    /// The main agent's seat. Default: the other seat of a 2-player game (required otherwise).
    pub main_seat: Option<usize>,
}

impl Default for MinimaxConfig {
    fn default() -> Self {
        Self { alpha: 0.1, discount: 0.995, main_seat: None }
    }
}

impl MinimaxConfig {
    /// Weight `alpha`, the other settings at their defaults (checked when used).
    pub fn new(alpha: f64) -> Self {
        Self { alpha, ..Self::default() }
    }
    /// The same with discount `discount`.
    pub fn with_discount(mut self, discount: f64) -> Self {
        self.discount = discount;
        self
    }
    /// The same with the main agent at `seat`.
    pub fn with_main_seat(mut self, seat: usize) -> Self {
        self.main_seat = Some(seat);
        self
    }

    /// Check α and γ.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for α or γ outside [0, 1].
    pub fn validate(&self) -> Result<()> {
        if !(0.0..=1.0).contains(&self.alpha) {
            return Err(Error::Config(format!("alpha: {} is not in [0, 1]", self.alpha)));
        }
        if !(0.0..=1.0).contains(&self.discount) {
            return Err(Error::Config(format!("discount: {} is not in [0, 1]", self.discount)));
        }
        Ok(())
    }
}

/// The Minimax Exploiter's reward: after the exploiter's decision at step `t`,
///
/// `R_mm = R − α·γ·(1 − d)·(max_a Q_main(s′, a) + |R_min|)`
///
/// with `s′` the main agent's next decision point after the exploiter's action (and before
/// the exploiter's next decision), `d = 1` at the exploiter's last decision of the episode
/// (no term at terminal steps), `Q_main` the frozen main agent's values and `R_min` the main
/// agent's smallest terminal utility (the shift that makes the term ≤ 0 for values within
/// the game's range). When the main agent does not act between two exploiter decisions there
/// is no `s′` and no term.
///
/// # References
///
/// REFERENCE.md §5; Bairamian et al., "Minimax Exploiter: A Data Efficient Approach for
/// Competitive Self-Play", 2023, <https://arxiv.org/abs/2311.17190>.
#[derive(Clone, Debug)]
pub struct MinimaxShaping {
    alpha: f64,
    discount: f64,
    shift: f64,
    main_seat: usize,
    /// `max_a Q_main(s, a)` at the first sequence of every main-agent infoset.
    main_max: Vec<f64>,
}

impl MinimaxShaping {
    /// Shaping for the learner at `seat` of `tree` from the main agent's `values`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for α or γ out of range or no main seat in a game of more than 2
    /// players; [`Error::Values`] for values of another game, another seat than the main
    /// seat, or the learner's own seat.
    pub fn new(tree: &GameTree, seat: usize, values: &ValueTable, config: &MinimaxConfig) -> Result<Self> {
        config.validate()?;
        values.check(tree)?;
        let n = tree.num_players();
        let main_seat = match config.main_seat {
            Some(m) => m,
            None if n == 2 => 1 - seat.min(1),
            None => return Err(Error::Config(format!("main_seat: required in a {n}-player game"))),
        };
        if main_seat >= n || main_seat == seat || seat >= n {
            return Err(Error::Values(format!(
                "the main agent must sit at another seat than the exploiter's ({seat}) of {n}, got {main_seat}"
            )));
        }
        if values.seat() != main_seat {
            return Err(Error::Values(format!(
                "values of seat {} given for the main agent at seat {main_seat}",
                values.seat()
            )));
        }
        let layout = Layout::new(tree, main_seat);
        let mut main_max = vec![0.0; tree.num_sequences()];
        for (i, start, _) in &layout.infosets {
            main_max[*start as usize] = values.max_value(tree, InfosetId(*i));
        }
        let r_min = min_utility(tree, main_seat);
        let shift = if r_min.is_finite() { r_min.abs() } else { 0.0 };
        Ok(Self { alpha: config.alpha, discount: config.discount, shift, main_seat, main_max })
    }

    /// The main agent's seat.
    pub fn main_seat(&self) -> usize {
        self.main_seat
    }

    /// `|R_min|`, the shift of the term.
    pub fn shift(&self) -> f64 {
        self.shift
    }

    /// The shaped reward of one exploiter step with game reward `reward`.
    #[inline]
    pub(crate) fn reward(&self, reward: f64, step: &Step, terminal: bool) -> f64 {
        if terminal || step.main_slot == NONE {
            reward
        } else {
            reward - self.alpha * self.discount * (self.main_max[step.main_slot as usize] + self.shift)
        }
    }
}

fn min_utility(tree: &GameTree, seat: usize) -> f64 {
    tree.utility_range(PlayerId(seat)).0
}

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
    fn train(&mut self, tree: &GameTree, opponents: &OpponentSampler<'_>, episodes: u64) -> Result<()> {
        self.inner.train(tree, opponents, episodes)
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
    use super::*;
    use metagame_games::registry;

    fn shaping(alpha: f64) -> MinimaxShaping {
        MinimaxShaping { alpha, discount: 0.5, shift: 2.0, main_seat: 1, main_max: vec![0.0, 0.0, 3.0, 0.0] }
    }

    #[test]
    fn the_term_is_the_documented_one_and_absent_at_terminal_steps() {
        let step = Step { slot: 0, count: 2, action: 1, main_slot: 2, main_count: 2 };
        // R − α·γ·(1 − d)·(max Q_main + |R_min|) = 0 − 0.1·0.5·(3 + 2).
        assert!((shaping(0.1).reward(0.0, &step, false) + 0.25).abs() < 1e-15);
        assert_eq!(shaping(0.1).reward(1.5, &step, true), 1.5);
        assert_eq!(shaping(0.0).reward(-0.75, &step, false), -0.75);
        let no_main = Step { main_slot: NONE, ..step };
        assert_eq!(shaping(1.0).reward(0.0, &no_main, false), 0.0);
    }

    #[test]
    fn alpha_and_discount_out_of_range_are_errors() {
        for alpha in [-0.1, 1.5, f64::NAN] {
            let c = MinimaxConfig { alpha, ..MinimaxConfig::default() };
            assert!(matches!(c.validate(), Err(Error::Config(_))), "{alpha}");
        }
        let c = MinimaxConfig { discount: 2.0, ..MinimaxConfig::default() };
        assert!(c.validate().is_err());
    }

    #[test]
    fn the_shift_is_the_main_agents_smallest_utility() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        assert_eq!(min_utility(&tree, 1), -2.0);
    }
}
