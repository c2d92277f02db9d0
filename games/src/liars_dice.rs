//! Liar's dice, one round, with the rules, action ids and information-state strings of
//! OpenSpiel's `open_spiel/games/liars_dice/liars_dice.cc` (default `bidding_rule`
//! `reset-face`).
//!
//! Each of the two players rolls `numdice` dice of `dice_sides` faces (chance, player 0's
//! dice first, one die per chance node; outcome `i` is face `i + 1`); once every die is rolled
//! each player's dice are sorted. Then the players bid in turn, player 0 first, each bid
//! higher than the last, until one calls "liar". A bid `quantity-face` claims that at least
//! `quantity` of all the dice show `face`; the highest face is wild and matches every bid.
//! The bidder wins (+1, the caller -1) when the claim holds, otherwise the caller wins.
//!
//! Actions: bid `b` in `0..total_dice * dice_sides` is quantity `b / dice_sides + 1` of face
//! `b % dice_sides + 1`; `total_dice * dice_sides` calls liar, legal once a bid was made.
//! Information state: the player's dice (`-1` for one not yet rolled) without separators,
//! then ` quantity-face` per bid and ` Liar` (`"35 1-4 2-6"`).
//!
//! Tensor: OpenSpiel's `information_state_tensor` (`LiarsDiceState::InformationStateTensor`
//! in `liars_dice.cc`), `2 + numdice · dice_sides + 2 · numdice · dice_sides + 1` values (21
//! for one six-sided die each): the observing player one-hot (2), one one-hot of
//! `dice_sides` per own die in the order of the string (zeros until rolled), then one value
//! per action id, 1 for every bid made and for the liar call.

use crate::error::Result;
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, ParamInfo, ParamKind, Params, Registered};

/// Liar's dice (`liars_dice(numdice=N,dice_sides=S)`), for 2 players as in OpenSpiel.
///
/// OpenSpiel's `bidding_rule=reset-quantity` and per-player `numdiceX` are not offered: the
/// first is not implemented here, and OpenSpiel 2.0.2 rejects the second as an unknown
/// parameter.
#[derive(Clone, Debug)]
pub struct LiarsDice {
    num_dice: usize,
    dice_sides: usize,
}

impl LiarsDice {
    /// Players, as in OpenSpiel (its game type has 2 as both minimum and maximum).
    pub const PLAYERS: std::ops::RangeInclusive<usize> = 2..=2;
    /// Dice per player accepted; the tree outgrows [`crate::GameTree::build`] from 2 dice of 6
    /// faces on (2^24 bid sequences).
    pub const NUM_DICE: std::ops::RangeInclusive<usize> = 1..=100;
    /// Faces per die accepted.
    pub const DICE_SIDES: std::ops::RangeInclusive<usize> = 1..=100;

    /// Two-player liar's dice with `num_dice` dice of `dice_sides` faces each.
    ///
    /// # Panics
    ///
    /// If either is outside its range ([`LiarsDice::NUM_DICE`], [`LiarsDice::DICE_SIDES`]);
    /// the registry checks this for user input.
    #[track_caller]
    pub fn new(num_dice: usize, dice_sides: usize) -> Self {
        assert!(Self::NUM_DICE.contains(&num_dice), "liars_dice takes 1 to 100 dice per player");
        assert!(Self::DICE_SIDES.contains(&dice_sides), "liars_dice takes dice of 1 to 100 sides");
        Self { num_dice, dice_sides }
    }

    fn liar(&self) -> usize {
        2 * self.num_dice * self.dice_sides
    }
}

impl Game for LiarsDice {
    type State = LiarsDiceState;

    fn name(&self) -> String {
        Self::GAMES[0].game_string(&[2, self.num_dice, self.dice_sides])
    }
    fn num_players(&self) -> usize {
        2
    }
    fn num_distinct_actions(&self) -> usize {
        self.liar() + 1
    }
    fn new_initial_state(&self) -> LiarsDiceState {
        LiarsDiceState {
            num_dice: self.num_dice,
            dice_sides: self.dice_sides,
            dice: vec![None; 2 * self.num_dice],
            num_rolled: 0,
            bids: Vec::new(),
            winner: None,
            history: Vec::with_capacity(2 * self.num_dice + 8),
        }
    }
    fn utility_sum(&self) -> Option<f64> {
        Some(0.0)
    }
    /// Exact, in closed form: the `D = 2·numdice` rolls are chance nodes of `s` outcomes
    /// each (`1 + s + … + s^(D−1)` of them before the last roll), and after each of the `s^D`
    /// rolls the bids are any increasing sequence of the `B = D·s` bids, each but the empty
    /// one followed by a liar call: `2^B + 2^B − 1` histories. Saturates at `u64::MAX`.
    fn count_histories(&self, _at_most: u64) -> Option<u64> {
        let (s, d) = (self.dice_sides as u128, 2 * self.num_dice as u32);
        let bids = 2 * self.num_dice * self.dice_sides;
        let count = (|| {
            let rolls: u128 = (0..d).try_fold(0u128, |acc, k| acc.checked_add(s.checked_pow(k)?))?;
            let bidding = 1u128.checked_shl(u32::try_from(bids + 1).ok()?)?.checked_sub(1)?;
            rolls.checked_add(s.checked_pow(d)?.checked_mul(bidding)?)
        })();
        Some(count.map_or(u64::MAX, |c| u64::try_from(c).unwrap_or(u64::MAX)))
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        let size = 2 + self.num_dice * self.dice_sides + self.liar() + 1;
        Some(TensorShape::new(TensorKind::InformationState, vec![size]))
    }
}

impl Registered for LiarsDice {
    const GAMES: &'static [GameInfo] = &[GameInfo {
        name: "liars_dice",
        about: "Liar's dice: each player rolls dice in secret, then they bid until one calls liar",
        params: &[
            ParamInfo {
                name: "players",
                about: "number of players",
                default: 2,
                kind: ParamKind::Integer(LiarsDice::PLAYERS),
            },
            ParamInfo {
                name: "numdice",
                about: "dice per player",
                default: 1,
                kind: ParamKind::Integer(LiarsDice::NUM_DICE),
            },
            ParamInfo {
                name: "dice_sides",
                about: "faces per die; the highest is wild",
                default: 6,
                kind: ParamKind::Integer(LiarsDice::DICE_SIDES),
            },
        ],
        // The default is 294,883 nodes; 2 dice of 2 faces (8191) has rolls sorted after the
        // fact and a player's own dice unsorted while the other still rolls.
        examples: &["dice_sides=3", "numdice=2,dice_sides=2"],
        conformance: Conformance::Full,
    }];

    fn from_params(_: &GameInfo, params: &Params) -> Result<Self> {
        Ok(Self::new(params.value("numdice"), params.value("dice_sides")))
    }
}

/// A state of [`LiarsDice`].
#[derive(Clone, Debug)]
pub struct LiarsDiceState {
    num_dice: usize,
    dice_sides: usize,
    /// Player `p`'s dice are `dice[p * num_dice..(p + 1) * num_dice]`, faces `1..=dice_sides`
    /// in the order rolled, each player's sorted once every die is rolled (as OpenSpiel).
    dice: Vec<Option<usize>>,
    num_rolled: usize,
    /// The bids made, then the liar call if there was one.
    bids: Vec<usize>,
    /// Set once liar was called.
    winner: Option<usize>,
    history: Vec<ActionId>,
}

impl LiarsDiceState {
    fn liar(&self) -> usize {
        2 * self.num_dice * self.dice_sides
    }

    fn rolling(&self) -> bool {
        self.num_rolled < self.dice.len()
    }

    /// Quantity and face of bid `bid` (OpenSpiel's `UnrankBid` under `reset-face`).
    fn unrank(&self, bid: usize) -> (usize, usize) {
        (bid / self.dice_sides + 1, bid % self.dice_sides + 1)
    }

    /// Decide the game as the player to move calls liar on the last bid.
    fn resolve(&mut self) {
        let caller = self.bids.len() % 2;
        let bidder = 1 - caller;
        let (quantity, face) = self.unrank(self.bids[self.bids.len() - 1]);
        let matches = self.dice.iter().filter(|d| **d == Some(face) || **d == Some(self.dice_sides)).count();
        self.winner = Some(if matches >= quantity { bidder } else { caller });
    }
}

impl State for LiarsDiceState {
    fn turn(&self) -> Turn {
        if self.winner.is_some() {
            Turn::Terminal
        } else if self.rolling() {
            Turn::Chance
        } else {
            Turn::Player(PlayerId(self.bids.len() % 2))
        }
    }

    fn legal_actions(&self) -> Vec<ActionId> {
        if self.turn() == Turn::Terminal || self.rolling() {
            return Vec::new();
        }
        let first = self.bids.last().map_or(0, |b| b + 1);
        let mut actions: Vec<ActionId> = (first..self.liar()).map(ActionId).collect();
        if !self.bids.is_empty() {
            actions.push(ActionId(self.liar()));
        }
        actions
    }

    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        if self.turn() != Turn::Chance {
            return Vec::new();
        }
        let p = 1.0 / self.dice_sides as f64;
        (0..self.dice_sides).map(|face| (ActionId(face), p)).collect()
    }

    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        match self.turn() {
            Turn::Chance => {
                assert!(action.0 < self.dice_sides, "a die has no face {}", action.0 + 1);
                self.dice[self.num_rolled] = Some(action.0 + 1);
                self.num_rolled += 1;
                if !self.rolling() {
                    for own in self.dice.chunks_mut(self.num_dice) {
                        own.sort_unstable();
                    }
                }
            }
            Turn::Player(_) => {
                let liar = self.liar();
                let legal = match self.bids.last() {
                    None => action.0 < liar,
                    Some(&last) => action.0 > last && action.0 <= liar,
                };
                assert!(legal, "action {} is not a legal bid or call here", action.0);
                if action.0 == liar {
                    self.resolve();
                }
                self.bids.push(action.0);
            }
            Turn::Terminal => panic!("no action applies at a terminal state"),
        }
        self.history.push(action);
    }

    fn returns(&self) -> Vec<f64> {
        match self.winner {
            None => vec![0.0; 2],
            Some(0) => vec![1.0, -1.0],
            Some(_) => vec![-1.0, 1.0],
        }
    }

    fn information_state_string(&self, player: PlayerId) -> String {
        use std::fmt::Write;

        let mut s = String::new();
        let own = player.0 * self.num_dice..(player.0 + 1) * self.num_dice;
        for die in self.dice.get(own).unwrap_or_default() {
            match die {
                Some(face) => s.push_str(&face.to_string()),
                None => s.push_str("-1"),
            }
        }
        for &bid in &self.bids {
            if bid == self.liar() {
                s.push_str(" Liar");
            } else {
                let (quantity, face) = self.unrank(bid);
                // INVARIANT: writing to a String cannot fail.
                let _ = write!(s, " {quantity}-{face}");
            }
        }
        s
    }

    fn history(&self) -> &[ActionId] {
        &self.history
    }

    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let sides = self.dice_sides;
        out.fill(0.0);
        out[player.0] = 1.0;
        let own = &self.dice[player.0 * self.num_dice..(player.0 + 1) * self.num_dice];
        for (d, die) in own.iter().enumerate() {
            if let Some(face) = die {
                out[2 + d * sides + face - 1] = 1.0;
            }
        }
        let bids = 2 + self.num_dice * sides;
        for &bid in &self.bids {
            out[bids + bid] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    fn play(game: &LiarsDice, actions: &[usize]) -> LiarsDiceState {
        let mut s = game.new_initial_state();
        for &a in actions {
            s.apply_action(ActionId(a));
        }
        s
    }

    /// Strings and returns printed by pyspiel 2.0.2 for the same histories.
    #[test]
    fn information_states_and_returns_equal_openspiel() {
        let game = LiarsDice::new(1, 6);
        assert_eq!(game.num_distinct_actions(), 13);
        let s = play(&game, &[]);
        assert_eq!(s.information_state_string(PlayerId(0)), "-1");
        let s = play(&game, &[2]);
        assert_eq!(s.information_state_string(PlayerId(0)), "3");
        assert_eq!(s.information_state_string(PlayerId(1)), "-1");
        let s = play(&game, &[2, 5]);
        assert_eq!(s.legal_actions(), (0..12).map(ActionId).collect::<Vec<_>>());
        assert_eq!(s.information_state_string(PlayerId(1)), "6");
        // Player 0 (a 3) bids one 4; player 1's 6 is wild, so the bid holds.
        let s = play(&game, &[2, 5, 3, 12]);
        assert_eq!(s.information_state_string(PlayerId(0)), "3 1-4 Liar");
        assert_eq!(s.returns(), vec![1.0, -1.0]);
        // Two 4s do not hold: the caller (player 1) wins.
        let s = play(&game, &[2, 5, 9, 12]);
        assert_eq!(s.information_state_string(PlayerId(1)), "6 2-4 Liar");
        assert_eq!(s.returns(), vec![-1.0, 1.0]);
        // After the highest bid only the call is left.
        assert_eq!(play(&game, &[0, 0, 11]).legal_actions(), vec![ActionId(12)]);
    }

    #[test]
    fn dice_are_sorted_once_all_are_rolled() {
        let game = LiarsDice::new(2, 2);
        let s = play(&game, &[1, 0, 1]);
        assert_eq!(s.information_state_string(PlayerId(0)), "21");
        assert_eq!(s.information_state_string(PlayerId(1)), "2-1");
        let s = play(&game, &[1, 0, 1, 0]);
        assert_eq!(s.information_state_string(PlayerId(0)), "12");
        assert_eq!(s.information_state_string(PlayerId(1)), "12");
        assert_eq!(s.turn(), Turn::Player(PlayerId(0)));
    }

    fn tensor(game: &LiarsDice, actions: &[usize], player: usize) -> Vec<f32> {
        let mut out = vec![f32::NAN; game.tensor_shape().unwrap().size()];
        play(game, actions).write_tensor(PlayerId(player), &mut out);
        out
    }

    /// Tensors printed by pyspiel 2.0.2 (`information_state_tensor`) for the same histories.
    #[test]
    fn tensors_equal_openspiel() {
        let game = LiarsDice::new(1, 6);
        assert_eq!(game.tensor_shape().unwrap().dims, vec![21]);
        let one_hot = |ones: &[usize], size: usize| -> Vec<f32> {
            (0..size).map(|i| if ones.contains(&i) { 1.0 } else { 0.0 }).collect()
        };
        // Player 1 (a 6) after one 4 was bid (action 3).
        assert_eq!(tensor(&game, &[2, 5, 3], 1), one_hot(&[1, 7, 11], 21));
        // Player 0 (a 3) once one 4 was called a lie (action 12).
        assert_eq!(tensor(&game, &[2, 5, 3, 12], 0), one_hot(&[0, 4, 11, 20], 21));
        // Two dice of two sides: player 0's rolled 2 then 1, not sorted while 1 still rolls.
        let game = LiarsDice::new(2, 2);
        assert_eq!(game.tensor_shape().unwrap().dims, vec![15]);
        assert_eq!(tensor(&game, &[1, 0, 1], 0), one_hot(&[0, 3, 4], 15));
        assert_eq!(tensor(&game, &[1, 0, 1], 1), one_hot(&[1, 3], 15));
    }

    #[test]
    fn its_parameters_load_and_name_it() {
        let game = registry::load("liars_dice(numdice=2,dice_sides=3)").unwrap();
        assert_eq!(game.name(), "liars_dice(numdice=2,dice_sides=3)");
        assert_eq!(game.num_distinct_actions(), 13);
        assert_eq!(registry::load("liars_dice(dice_sides=6)").unwrap().name(), "liars_dice");
        let err = registry::load("liars_dice(players=3)").unwrap_err().to_string();
        assert!(err.contains("players must be in 2..=2, got 3"), "{err}");
    }
}
