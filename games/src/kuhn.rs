//! Kuhn poker for 2 to 10 players, with OpenSpiel's rules and information-state strings.
//!
//! A deck of `n + 1` cards; each player antes 1 and is dealt one card (chance, player 0
//! first). Then players act in turn: 0 = pass, 1 = bet (1 chip). Without a bet the highest
//! card wins after everyone passes; after the first bet every later player (and the earlier
//! ones, once round) calls by betting or folds by passing, and the highest card still in wins.
//! Information state: the player's card then `p`/`b` per betting action (`"1pb"`).
//!
//! Tensor: OpenSpiel's `information_state_tensor` (its `KuhnObserver` with perfect recall,
//! `open_spiel/games/kuhn_poker/kuhn_poker.cc`), `6n - 1` values for `n` players (11 for
//! two): the observing player one-hot (`n`), the player's card one-hot (`n + 1`, zeros
//! before the deal), then one row of two per betting action (`2n - 1` rows: pass `[1, 0]`,
//! bet `[0, 1]`, zeros for actions not yet taken).

use crate::error::Result;
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, ParamInfo, ParamKind, Params, Registered};

const PASS: usize = 0;
const BET: usize = 1;

/// Kuhn poker (`kuhn_poker(players=N)`, N in 2..=10).
#[derive(Clone, Debug)]
pub struct KuhnPoker {
    num_players: usize,
}

impl KuhnPoker {
    /// Smallest and largest number of players, as in OpenSpiel.
    pub const PLAYERS: std::ops::RangeInclusive<usize> = 2..=10;

    /// Kuhn poker for `num_players` players.
    ///
    /// # Panics
    ///
    /// If `num_players` is outside 2..=10 (the registry checks this for user input).
    #[track_caller]
    pub fn new(num_players: usize) -> Self {
        assert!(Self::PLAYERS.contains(&num_players), "kuhn_poker takes 2 to 10 players");
        Self { num_players }
    }
}

impl Game for KuhnPoker {
    type State = KuhnState;

    fn name(&self) -> String {
        Self::GAMES[0].game_string(&[self.num_players])
    }
    fn num_players(&self) -> usize {
        self.num_players
    }
    fn num_distinct_actions(&self) -> usize {
        2
    }
    fn new_initial_state(&self) -> KuhnState {
        KuhnState {
            num_players: self.num_players,
            history: Vec::with_capacity(3 * self.num_players),
            holder: vec![None; self.num_players + 1],
            first_bettor: None,
            winner: None,
            pot: self.num_players as f64,
        }
    }
    fn utility_sum(&self) -> Option<f64> {
        Some(0.0)
    }
    fn count_histories(&self, at_most: u64) -> Option<u64> {
        // The cards dealt never change who acts or what is legal.
        Some(crate::tree::count_histories_alike_chance(self, at_most))
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        Some(TensorShape::new(TensorKind::InformationState, vec![6 * self.num_players - 1]))
    }
}

impl Registered for KuhnPoker {
    const GAMES: &'static [GameInfo] = &[GameInfo {
        name: "kuhn_poker",
        about: "Kuhn poker: one card each from a deck of players + 1, one betting round",
        params: &[ParamInfo {
            name: "players",
            about: "number of players",
            default: 2,
            kind: ParamKind::Integer(KuhnPoker::PLAYERS),
        }],
        // 4 players is 7886 nodes; 6 would be 1.9 million.
        examples: &["players=3", "players=4"],
        conformance: Conformance::Full,
    }];

    fn from_params(_: &GameInfo, params: &Params) -> Result<Self> {
        Ok(Self::new(params.value("players")))
    }
}

/// A state of [`KuhnPoker`].
#[derive(Clone, Debug)]
pub struct KuhnState {
    num_players: usize,
    history: Vec<ActionId>,
    /// `holder[card]`: the player dealt that card.
    holder: Vec<Option<usize>>,
    first_bettor: Option<usize>,
    winner: Option<usize>,
    pot: f64,
}

impl KuhnState {
    fn num_betting_actions(&self) -> usize {
        self.history.len().saturating_sub(self.num_players)
    }

    fn did_bet(&self, player: usize) -> bool {
        let n = self.num_players;
        match self.first_bettor {
            None => false,
            Some(first) if player == first => true,
            // Later players answered the bet in the first round, earlier ones in the second.
            Some(first) if player > first => self.history[n + player].0 == BET,
            Some(_) => self.history.get(2 * n + player).is_some_and(|a| a.0 == BET),
        }
    }

    fn card_of(&self, player: usize) -> usize {
        self.history[player].0
    }
}

impl State for KuhnState {
    fn turn(&self) -> Turn {
        if self.winner.is_some() {
            Turn::Terminal
        } else if self.history.len() < self.num_players {
            Turn::Chance
        } else {
            Turn::Player(PlayerId(self.history.len() % self.num_players))
        }
    }

    fn legal_actions(&self) -> Vec<ActionId> {
        match self.turn() {
            Turn::Player(_) => vec![ActionId(PASS), ActionId(BET)],
            _ => Vec::new(),
        }
    }

    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        if self.turn() != Turn::Chance {
            return Vec::new();
        }
        let p = 1.0 / (self.num_players + 1 - self.history.len()) as f64;
        (0..=self.num_players)
            .filter(|&card| self.holder[card].is_none())
            .map(|card| (ActionId(card), p))
            .collect()
    }

    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        let n = self.num_players;
        match self.turn() {
            Turn::Chance => {
                assert!(
                    action.0 <= n && self.holder[action.0].is_none(),
                    "card {} is not in the deck",
                    action.0
                );
                self.holder[action.0] = Some(self.history.len());
            }
            Turn::Player(PlayerId(player)) => {
                assert!(action.0 <= BET, "kuhn_poker actions are 0 (pass) and 1 (bet)");
                if action.0 == BET {
                    self.first_bettor.get_or_insert(player);
                    self.pot += 1.0;
                }
            }
            Turn::Terminal => panic!("no action applies at a terminal state"),
        }
        self.history.push(action);

        let acted = self.num_betting_actions();
        match self.first_bettor {
            None if acted == n => {
                // Everyone passed: the highest card dealt wins.
                self.winner = self.holder[n].or(self.holder[n - 1]);
            }
            Some(first) if acted == n + first => {
                // Everyone has answered the bet: the highest card still in wins.
                self.winner = (0..=n).rev().filter_map(|card| self.holder[card]).find(|&p| self.did_bet(p));
            }
            _ => {}
        }
    }

    fn returns(&self) -> Vec<f64> {
        let Some(winner) = self.winner else {
            return vec![0.0; self.num_players];
        };
        (0..self.num_players)
            .map(|p| {
                let stake = if self.did_bet(p) { 2.0 } else { 1.0 };
                if p == winner { self.pot - stake } else { -stake }
            })
            .collect()
    }

    fn information_state_string(&self, player: PlayerId) -> String {
        let mut s = String::new();
        if self.history.len() > player.0 {
            s.push_str(&self.card_of(player.0).to_string());
        }
        for a in self.history.iter().skip(self.num_players) {
            s.push(if a.0 == BET { 'b' } else { 'p' });
        }
        s
    }

    fn history(&self) -> &[ActionId] {
        &self.history
    }

    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let n = self.num_players;
        out.fill(0.0);
        out[player.0] = 1.0;
        if self.history.len() > player.0 {
            out[n + self.card_of(player.0)] = 1.0;
        }
        // The betting rows start after the player and card one-hots (n + n + 1 values).
        let betting = 2 * n + 1;
        for (i, a) in self.history.iter().skip(n).enumerate() {
            out[betting + 2 * i + a.0] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(num_players: usize, actions: &[usize], player: usize) -> Vec<f32> {
        let game = KuhnPoker::new(num_players);
        let mut s = game.new_initial_state();
        for &a in actions {
            s.apply_action(ActionId(a));
        }
        let mut out = vec![f32::NAN; game.tensor_shape().unwrap().size()];
        s.write_tensor(PlayerId(player), &mut out);
        out
    }

    /// Tensors printed by pyspiel 2.0.2 (`information_state_tensor`) for the same histories.
    #[test]
    fn tensors_equal_openspiel() {
        assert_eq!(KuhnPoker::new(2).tensor_shape().unwrap().dims, vec![11]);
        assert_eq!(KuhnPoker::new(3).tensor_shape().unwrap().dims, vec![17]);
        // Player 0 holds card 2 after pass, bet ("2pb").
        assert_eq!(tensor(2, &[2, 0, 0, 1], 0), [1., 0., 0., 0., 1., 1., 0., 0., 1., 0., 0.]);
        // Three players after pass, bet, pass: player 0 holds 3 ("3pbp"), player 2 holds 0.
        let rows = [1., 0., 0., 1., 1., 0., 0., 0., 0., 0.];
        let mut expected = vec![1., 0., 0., 0., 0., 0., 1.];
        expected.extend(rows);
        assert_eq!(tensor(3, &[3, 1, 0, 0, 1, 0], 0), expected);
        let mut expected = vec![0., 0., 1., 1., 0., 0., 0.];
        expected.extend(rows);
        assert_eq!(tensor(3, &[3, 1, 0, 0, 1, 0], 2), expected);
        // Before the deal: only the player.
        assert_eq!(tensor(2, &[], 1), [0., 1., 0., 0., 0., 0., 0., 0., 0., 0., 0.]);
    }
}
