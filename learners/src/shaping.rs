//! The Minimax Exploiter's reward shaping: its settings ([`MinimaxConfig`]) and the shaped
//! reward built from a frozen main agent's values ([`MinimaxShaping`]). The learners apply it
//! while training; [`MinimaxExploiter`](crate::MinimaxExploiter) installs it.

use metagame_games::{GameTree, InfosetId, NodeKind, PlayerId};
use serde::{Deserialize, Serialize};

use crate::episodes::{Layout, NONE, Step};
use crate::error::{Error, Result};
use crate::values::ValueTable;

/// How the shaping term is shifted so that it never rewards the exploiter: the constant
/// added to `max_a Q_main(s′, a)` before it is subtracted.
///
/// The paper's rule (Bairamian et al. 2024, arXiv:2311.17190, Sec. 3): with sparse win/loss
/// rewards shift by `|R_min|`, the main agent's smallest reward; otherwise by the main agent's
/// minimum value. [`Shift::Auto`] applies that rule to the game at hand.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Shift {
    /// `"auto"` (the default): [`Shift::RewardMin`] when the main agent's rewards are win/loss
    /// (every terminal utility of its seat is its smallest, its largest or 0, a draw: Tic-Tac-Toe,
    /// rock-paper-scissors), [`Shift::ValueMin`] otherwise (chips in Kuhn or Leduc poker).
    #[default]
    Auto,
    /// `"reward-min"`: `|R_min|`, the absolute value of the main agent's smallest terminal
    /// utility (1 in Tic-Tac-Toe, 2 in Kuhn poker, 13 in Leduc poker).
    RewardMin,
    /// `"value-min"`: `|V_min|`, the absolute value of the main agent's smallest state value
    /// `min_s max_a Q_main(s, a)` over its information states, read from the critic it is
    /// given (so it follows a learned critic as it changes).
    ValueMin,
}

impl Shift {
    /// The rule [`Shift::Auto`] picks for the main agent at `main_seat` of `tree` (the other
    /// variants are returned as they are).
    pub fn resolve(self, tree: &GameTree, main_seat: usize) -> Shift {
        match self {
            Shift::Auto if win_loss(tree, main_seat) => Shift::RewardMin,
            Shift::Auto => Shift::ValueMin,
            other => other,
        }
    }
}

/// True when every terminal utility of `seat` is its smallest, its largest or 0 (a draw):
/// rewards that only say who won.
fn win_loss(tree: &GameTree, seat: usize) -> bool {
    let (lo, hi) = tree.utility_range(PlayerId(seat));
    (0..tree.num_nodes())
        .filter(|&node| tree.node_kind(node) == NodeKind::Terminal)
        .map(|node| tree.terminal_utilities(node)[seat])
        .all(|u| u == lo || u == hi || u == 0.0)
}

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
    /// The shift of the term (see [`Shift`]). Default `"auto"`, the paper's rule: `|R_min|` for
    /// win/loss rewards, the main agent's minimum value otherwise.
    pub shift: Shift,
}

impl Default for MinimaxConfig {
    fn default() -> Self {
        Self { alpha: 0.1, discount: 0.995, main_seat: None, shift: Shift::Auto }
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
    /// The same with the shift rule `shift`.
    pub fn with_shift(mut self, shift: Shift) -> Self {
        self.shift = shift;
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
/// `R_mm = R − α·γ·(1 − d)·(max_a Q_main(s′, a) + c)`
///
/// with `s′` the main agent's next decision point after the exploiter's action (and before
/// the exploiter's next decision), `d = 1` at the exploiter's last decision of the episode
/// (no term at terminal steps), `Q_main` the frozen main agent's values (its critic: its own
/// learned Q-values in the paper, [`ValueTable::learned`]; or its exact values,
/// [`ValueTable::exact`]) and `c` the shift of [`MinimaxConfig::shift`]: `|R_min|`, the main
/// agent's smallest terminal utility, for win/loss rewards, `|min_s max_a Q_main(s, a)|`
/// otherwise (the paper's rule; either keeps the term ≤ 0 for values within its range). When
/// the main agent does not act between two exploiter decisions there is no `s′` and no term.
///
/// # References
///
/// D. Bairamian, P. Marcotte, J. Romoff, G. Robert, D. Nowrouzezahrai, "Minimax Exploiter: A
/// Data Efficient Approach for Competitive Self-Play", AAMAS 2024, arXiv:2311.17190
/// (<https://arxiv.org/abs/2311.17190>): the minimax reward
/// `R − α·γ·(1 − d)·max_a Q_main(s′, a)`, γ = 0.995, and the shift by `|R_min|` (sparse
/// rewards) or the main agent's minimum value (dense rewards) that keeps the term ≤ 0. Where
/// the shift enters (inside the bracket, as above) is this crate's reading of the paper's
/// text, which gives no formula for it.
#[derive(Clone, Debug)]
pub struct MinimaxShaping {
    alpha: f64,
    discount: f64,
    shift: f64,
    shift_rule: Shift,
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
        let mut v_min = f64::INFINITY;
        for (i, start, _) in &layout.infosets {
            let v = values.max_value(tree, InfosetId(*i));
            main_max[*start as usize] = v;
            v_min = v_min.min(v);
        }
        let shift_rule = config.shift.resolve(tree, main_seat);
        let low = match shift_rule {
            Shift::ValueMin => v_min,
            _ => min_utility(tree, main_seat),
        };
        // A main seat without decisions (or terminals) has nothing to shift.
        let shift = if low.is_finite() { low.abs() } else { 0.0 };
        Ok(Self { alpha: config.alpha, discount: config.discount, shift, shift_rule, main_seat, main_max })
    }

    /// The main agent's seat.
    pub fn main_seat(&self) -> usize {
        self.main_seat
    }

    /// The shift `c` of the term: `|R_min|` or `|V_min|`, as [`MinimaxShaping::shift_rule`] says.
    pub fn shift(&self) -> f64 {
        self.shift
    }

    /// The rule the shift was computed by ([`Shift::RewardMin`] or [`Shift::ValueMin`]; `Auto`
    /// resolved for this game).
    pub fn shift_rule(&self) -> Shift {
        self.shift_rule
    }

    /// `max_a Q_main(s, a)` by the main agent's sequence slot of `s` (tests read it).
    #[cfg(test)]
    pub(crate) fn main_max(&self) -> &[f64] {
        &self.main_max
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
    use metagame_games::{TabularPolicy, registry};

    fn shaping(alpha: f64) -> MinimaxShaping {
        MinimaxShaping {
            alpha,
            discount: 0.5,
            shift: 2.0,
            shift_rule: Shift::RewardMin,
            main_seat: 1,
            main_max: vec![0.0, 0.0, 3.0, 0.0],
        }
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
    fn auto_shifts_win_loss_games_by_the_reward_and_chip_games_by_the_value() {
        // Tic-Tac-Toe: ±1/0, sparse win/loss: |R_min| = 1 whatever the values.
        let ttt = tree("tic_tac_toe");
        assert_eq!(Shift::Auto.resolve(&ttt, 1), Shift::RewardMin);
        let uniform = TabularPolicy::uniform(&ttt);
        let values = ValueTable::exact(&ttt, 1, &[&uniform, &uniform]).unwrap();
        let sh = MinimaxShaping::new(&ttt, 0, &values, &MinimaxConfig::default()).unwrap();
        assert_eq!((sh.shift_rule(), sh.shift()), (Shift::RewardMin, 1.0));
        // Kuhn and Leduc pay chips (−2..2, −13..13): the main agent's minimum value.
        for (name, r_min) in [("kuhn_poker", 2.0), ("leduc_poker", 13.0)] {
            let t = tree(name);
            assert_eq!(Shift::Auto.resolve(&t, 1), Shift::ValueMin, "{name}");
            let uniform = TabularPolicy::uniform(&t);
            let values = ValueTable::exact(&t, 1, &[&uniform, &uniform]).unwrap();
            let auto = MinimaxShaping::new(&t, 0, &values, &MinimaxConfig::default()).unwrap();
            let v_min = value_min(&t, &values);
            assert_eq!(auto.shift_rule(), Shift::ValueMin);
            assert!((auto.shift() - v_min.abs()).abs() < 1e-15, "{name}: {} vs {v_min}", auto.shift());
            assert!(auto.shift() < r_min, "{name}: the value shift is below |R_min|");
            // The old rule stays available by name.
            let by_reward = MinimaxConfig::default().with_shift(Shift::RewardMin);
            let sh = MinimaxShaping::new(&t, 0, &values, &by_reward).unwrap();
            assert_eq!((sh.shift_rule(), sh.shift()), (Shift::RewardMin, r_min));
            // Every term is ≤ 0: max Q_main + c ≥ 0 at every main-agent infoset.
            assert!(auto.main_max.iter().all(|&v| v + auto.shift() >= -1e-12));
        }
    }

    #[test]
    fn shift_names_round_trip_and_unknown_names_are_errors() {
        let c: MinimaxConfig = serde_json::from_str(r#"{"shift": "value-min"}"#).unwrap();
        assert_eq!(c.shift, Shift::ValueMin);
        assert_eq!(MinimaxConfig::default().shift, Shift::Auto);
        assert!(serde_json::from_str::<MinimaxConfig>(r#"{"shift": "min"}"#).is_err());
    }
}
