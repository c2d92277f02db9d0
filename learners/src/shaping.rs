//! The Minimax Exploiter's reward shaping: its settings ([`MinimaxConfig`]) and the shaped
//! reward built from a frozen main agent's values ([`MinimaxShaping`]). The learners apply it
//! while training; [`MinimaxExploiter`](crate::MinimaxExploiter) installs it.

use metagame_games::{GameTree, InfosetId, PlayerId};
use serde::{Deserialize, Serialize};

use crate::episodes::{Layout, NONE, Step};
use crate::error::{Error, Result};
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
/// D. Bairamian, P. Marcotte, J. Romoff, G. Robert, D. Nowrouzezahrai, "Minimax Exploiter: A
/// Data Efficient Approach for Competitive Self-Play", 2023, arXiv:2311.17190
/// (<https://arxiv.org/abs/2311.17190>; AAMAS 2024): the minimax reward
/// `R − α·γ·(1 − d)·max_a Q_main(s′, a)`, γ = 0.995, and the shift by `|R_min|` that keeps the
/// term ≤ 0. Where the shift enters (inside the bracket, as above) is this crate's reading of
/// the paper's text, which gives no formula for it.
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
