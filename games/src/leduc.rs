//! Leduc poker for 2 or more players, with OpenSpiel's rules and information-state strings.
//!
//! Deck of `2 * (n + 1)` cards (two suits; card `c` has rank `c / 2`). Each player antes 1
//! from a stack of 100 and gets one private card; a betting round (raise 2, at most two
//! raises) is followed by one public card and a second round (raise 4). A pair with the
//! public card beats any single card; ties split the pot. Actions: 0 fold, 1 call/check,
//! 2 raise; fold is legal only when facing a bet.
//!
//! Tensor: OpenSpiel's `information_state_tensor` (its `LeducObserver` with perfect recall,
//! `open_spiel/games/leduc_poker/leduc_poker.cc`), `n + 4(n + 1) + 4(3n - 2)` values for `n`
//! players (30 for two): the observing player one-hot (`n`), the private card one-hot and the
//! public card one-hot (`2(n + 1)` each, zeros until dealt), then each round's actions in
//! `3n - 2` rows of two (call `[1, 0]`, raise `[0, 1]`, a fold or an action not yet taken
//! `[0, 0]`).

use std::fmt::Write as _;

use smallvec::{SmallVec, smallvec};

use crate::error::Result;
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, ParamInfo, ParamKind, Params, Registered};

const FOLD: usize = 0;
const CALL: usize = 1;
const RAISE: usize = 2;
const ANTE: i64 = 1;
const STARTING_MONEY: i64 = 100;
const MAX_RAISES: u32 = 2;
const NUM_SUITS: usize = 2;

/// The longest betting round, OpenSpiel's `MaxBetsPerRound`: a check, then a bet and a raise
/// each called by everyone else, `3n - 2` actions.
fn max_bets_per_round(num_players: usize) -> usize {
    3 * num_players - 2
}

/// Leduc poker (`leduc_poker(players=N)`, N in 2..=10).
#[derive(Clone, Debug)]
pub struct LeducPoker {
    num_players: usize,
}

impl LeducPoker {
    /// Smallest and largest number of players, as in OpenSpiel.
    pub const PLAYERS: std::ops::RangeInclusive<usize> = 2..=10;

    /// Leduc poker for `num_players` players.
    ///
    /// # Panics
    ///
    /// If `num_players` is outside 2..=10 (the registry checks this for user input).
    #[track_caller]
    pub fn new(num_players: usize) -> Self {
        assert!(Self::PLAYERS.contains(&num_players), "leduc_poker takes 2 to 10 players");
        Self { num_players }
    }
}

impl Game for LeducPoker {
    type State = LeducState;

    fn name(&self) -> String {
        Self::GAMES[0].game_string(&[self.num_players])
    }
    fn num_players(&self) -> usize {
        self.num_players
    }
    fn num_distinct_actions(&self) -> usize {
        3
    }
    fn new_initial_state(&self) -> LeducState {
        let n = self.num_players;
        let deck_size = (n + 1) * NUM_SUITS;
        LeducState {
            num_players: n,
            cur_player: None,
            num_calls: 0,
            num_raises: 0,
            round: 1,
            stakes: 1,
            pot: ANTE * n as i64,
            public_card: None,
            in_deck: smallvec![true; deck_size],
            deck_size,
            private_cards: smallvec![None; n],
            remaining_players: n,
            money: smallvec![(STARTING_MONEY - ANTE) as f64; n],
            ante: smallvec![ANTE; n],
            folded: smallvec![false; n],
            round1: SmallVec::new(),
            round2: SmallVec::new(),
            history: SmallVec::new(),
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
        let n = self.num_players;
        let cards = NUM_SUITS * (n + 1);
        Some(TensorShape::new(TensorKind::InformationState, vec![n + 2 * cards + 4 * max_bets_per_round(n)]))
    }
}

impl Registered for LeducPoker {
    const GAMES: &'static [GameInfo] = &[GameInfo {
        name: "leduc_poker",
        about: "Leduc poker: private and public cards from 2 suits of players + 1 ranks, two betting rounds",
        params: &[ParamInfo {
            name: "players",
            about: "number of players",
            default: 2,
            kind: ParamKind::Integer(LeducPoker::PLAYERS),
        }],
        // 3 players is 1.8 million nodes, the largest tree the conformance test builds.
        examples: &["players=3"],
        conformance: Conformance::Full,
    }];

    fn from_params(_: &GameInfo, params: &Params) -> Result<Self> {
        Ok(Self::new(params.value("players")))
    }
}

/// A state of [`LeducPoker`].
#[derive(Debug)]
pub struct LeducState {
    num_players: usize,
    /// `None` at chance nodes.
    cur_player: Option<usize>,
    num_calls: usize,
    num_raises: u32,
    round: u8,
    stakes: i64,
    pot: i64,
    public_card: Option<usize>,
    // Inline up to the two-player game's sizes: a state is cloned for every node of the
    // tree, and heap vectors made that mostly allocation.
    in_deck: SmallVec<[bool; 6]>,
    deck_size: usize,
    private_cards: SmallVec<[Option<usize>; 2]>,
    remaining_players: usize,
    money: SmallVec<[f64; 2]>,
    ante: SmallVec<[i64; 2]>,
    folded: SmallVec<[bool; 2]>,
    round1: SmallVec<[usize; 4]>,
    round2: SmallVec<[usize; 4]>,
    history: SmallVec<[ActionId; 12]>,
}

// By hand: `SmallVec::from_slice` copies its items in one go, where the derived clone
// extends item by item (a tree build clones a state for every node).
impl Clone for LeducState {
    fn clone(&self) -> Self {
        Self {
            num_players: self.num_players,
            cur_player: self.cur_player,
            num_calls: self.num_calls,
            num_raises: self.num_raises,
            round: self.round,
            stakes: self.stakes,
            pot: self.pot,
            public_card: self.public_card,
            in_deck: SmallVec::from_slice(&self.in_deck),
            deck_size: self.deck_size,
            private_cards: SmallVec::from_slice(&self.private_cards),
            remaining_players: self.remaining_players,
            money: SmallVec::from_slice(&self.money),
            ante: SmallVec::from_slice(&self.ante),
            folded: SmallVec::from_slice(&self.folded),
            round1: SmallVec::from_slice(&self.round1),
            round2: SmallVec::from_slice(&self.round2),
            history: SmallVec::from_slice(&self.history),
        }
    }
}

impl LeducState {
    /// Whether `action` is legal for `player`, the player to move.
    fn allows(&self, player: usize, action: usize) -> bool {
        match action {
            FOLD => self.stakes > self.ante[player],
            CALL => true,
            RAISE => self.num_raises < MAX_RAISES,
            _ => false,
        }
    }

    fn ready_for_next_round(&self) -> bool {
        (self.num_raises == 0 && self.num_calls == self.remaining_players)
            || (self.num_raises > 0 && self.num_calls == self.remaining_players - 1)
    }

    fn terminal(&self) -> bool {
        self.remaining_players == 1 || (self.round == 2 && self.ready_for_next_round())
    }

    /// The next player still in, searching after `cur_player` (or from player 0 at round start).
    fn next_player(&self) -> usize {
        let n = self.num_players;
        let from = self.cur_player.unwrap_or(n - 1);
        (1..=n)
            .map(|i| (from + i) % n)
            .find(|&p| !self.folded[p])
            // INVARIANT: at least one player has not folded while the game goes on.
            .expect("a player is still in")
    }

    fn rank_hand(&self, player: usize) -> usize {
        // INVARIANT: only called at showdown, when all cards are dealt.
        let public = self.public_card.expect("showdown after the public card");
        let private = self.private_cards[player].expect("dealt");
        let (lo, hi) = (public.min(private), public.max(private));
        let num_cards = self.in_deck.len();
        if lo % 2 == 0 && hi == lo + 1 { num_cards * num_cards + lo } else { (hi / 2) * num_cards + lo / 2 }
    }

    fn put_in(&mut self, player: usize, amount: i64) {
        self.pot += amount;
        self.ante[player] += amount;
        self.money[player] -= amount as f64;
    }

    fn record(&mut self, action: usize) {
        if self.round == 1 {
            self.round1.push(action);
        } else {
            self.round2.push(action);
        }
    }

    fn resolve_winner(&mut self) {
        let winners: SmallVec<[usize; 2]> = if self.remaining_players == 1 {
            (0..self.num_players).filter(|&p| !self.folded[p]).collect()
        } else {
            let live = (0..self.num_players).filter(|&p| !self.folded[p]);
            let best = live.clone().map(|p| self.rank_hand(p)).max().unwrap_or(0);
            live.filter(|&p| self.rank_hand(p) == best).collect()
        };
        let share = self.pot as f64 / winners.len() as f64;
        for p in winners {
            self.money[p] += share;
        }
        self.pot = 0;
    }

    fn after_bet(&mut self) {
        if self.terminal() {
            self.resolve_winner();
        } else if self.ready_for_next_round() {
            self.round = 2;
            self.num_raises = 0;
            self.num_calls = 0;
            self.cur_player = None;
        } else {
            self.cur_player = Some(self.next_player());
        }
    }
}

impl State for LeducState {
    fn turn(&self) -> Turn {
        if self.terminal() {
            Turn::Terminal
        } else {
            match self.cur_player {
                None => Turn::Chance,
                Some(p) => Turn::Player(PlayerId(p)),
            }
        }
    }

    fn legal_actions(&self) -> Vec<ActionId> {
        let mut actions = Vec::with_capacity(3);
        self.write_legal_actions(&mut actions);
        actions
    }

    fn write_legal_actions(&self, actions: &mut Vec<ActionId>) {
        actions.clear();
        let Turn::Player(PlayerId(p)) = self.turn() else {
            return;
        };
        actions.extend([FOLD, CALL, RAISE].into_iter().filter(|&a| self.allows(p, a)).map(ActionId));
    }

    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        let mut outcomes = Vec::new();
        self.write_chance_outcomes(&mut outcomes);
        outcomes
    }

    fn write_chance_outcomes(&self, outcomes: &mut Vec<(ActionId, f64)>) {
        outcomes.clear();
        if self.turn() != Turn::Chance {
            return;
        }
        let p = 1.0 / self.deck_size as f64;
        outcomes.extend((0..self.in_deck.len()).filter(|&c| self.in_deck[c]).map(|c| (ActionId(c), p)));
    }

    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        let a = action.0;
        match self.turn() {
            Turn::Chance => {
                assert!(a < self.in_deck.len() && self.in_deck[a], "card {a} is not in the deck");
                self.in_deck[a] = false;
                self.deck_size -= 1;
                if let Some(slot) = self.private_cards.iter().position(Option::is_none) {
                    self.private_cards[slot] = Some(a);
                    if slot + 1 == self.num_players {
                        self.cur_player = Some(0);
                    }
                } else {
                    self.public_card = Some(a);
                    self.cur_player = Some(self.next_player());
                }
            }
            Turn::Player(PlayerId(p)) => {
                assert!(self.allows(p, a), "action {a} is not legal in leduc_poker here");
                match a {
                    FOLD => {
                        self.record(FOLD);
                        self.folded[p] = true;
                        self.remaining_players -= 1;
                    }
                    CALL => {
                        let amount = self.stakes - self.ante[p];
                        self.put_in(p, amount);
                        self.num_calls += 1;
                        self.record(CALL);
                    }
                    _ => {
                        let call_amount = self.stakes - self.ante[p];
                        self.put_in(p, call_amount);
                        let raise = if self.round == 1 { 2 } else { 4 };
                        self.stakes += raise;
                        self.put_in(p, raise);
                        self.num_raises += 1;
                        self.num_calls = 0;
                        self.record(RAISE);
                    }
                }
                self.after_bet();
            }
            Turn::Terminal => panic!("no action applies at a terminal state"),
        }
        self.history.push(action);
    }

    fn returns(&self) -> Vec<f64> {
        let mut returns = Vec::with_capacity(self.num_players);
        self.write_returns(&mut returns);
        returns
    }

    fn write_returns(&self, returns: &mut Vec<f64>) {
        returns.clear();
        if !self.terminal() {
            returns.resize(self.num_players, 0.0);
            return;
        }
        returns.extend(self.money.iter().map(|m| m - STARTING_MONEY as f64));
    }

    fn information_state_string(&self, player: PlayerId) -> String {
        let mut s = String::with_capacity(96);
        self.write_information_state_string(player, &mut s);
        s
    }

    fn write_information_state_string(&self, player: PlayerId, s: &mut String) {
        // Matches OpenSpiel's LeducObserver with perfect recall and the player's private card.
        let private = self.private_cards[player.0].map_or(-10000, |c| c as i64);
        let cur = self.cur_player.map_or(-1, |p| p as i64);
        // Numbers written by hand (a tree build asks at every decision node, and `write!`'s
        // formatting machinery was a fifth of the build).
        s.clear();
        s.push_str("[Observer: ");
        push_int(s, player.0 as i64);
        s.push_str("][Private: ");
        push_int(s, private);
        s.push_str("][Round ");
        push_int(s, i64::from(self.round));
        s.push_str("][Player: ");
        push_int(s, cur);
        s.push_str("][Pot: ");
        push_int(s, self.pot);
        s.push_str("][Money: ");
        for (i, m) in self.money.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            write_money(s, *m);
        }
        s.push(']');
        if let Some(c) = self.public_card {
            s.push_str("[Public: ");
            push_int(s, c as i64);
            s.push(']');
        }
        for (name, actions) in [("[Round1: ", &self.round1), ("[Round2: ", &self.round2)] {
            s.push_str(name);
            for (i, &a) in actions.iter().enumerate() {
                if i > 0 {
                    s.push(' ');
                }
                push_int(s, a as i64);
            }
            s.push(']');
        }
    }

    fn history(&self) -> &[ActionId] {
        &self.history
    }

    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let n = self.num_players;
        let cards = self.in_deck.len();
        out.fill(0.0);
        out[player.0] = 1.0;
        if let Some(c) = self.private_cards[player.0] {
            out[n + c] = 1.0;
        }
        if let Some(c) = self.public_card {
            out[n + cards + c] = 1.0;
        }
        let betting = n + 2 * cards;
        let round_len = 2 * max_bets_per_round(n);
        for (round, actions) in [&self.round1, &self.round2].into_iter().enumerate() {
            for (i, &a) in actions.iter().enumerate() {
                // A fold leaves its row at zero.
                if a == CALL || a == RAISE {
                    out[betting + round * round_len + 2 * i + (a - CALL)] = 1.0;
                }
            }
        }
    }
}

/// Money is a whole number of chips before the showdown; print it as OpenSpiel does.
fn write_money(s: &mut String, m: f64) {
    if m.fract() == 0.0 {
        push_int(s, m as i64);
    } else {
        let _ = write!(s, "{m}");
    }
}

/// `v` in decimal, appended.
fn push_int(s: &mut String, v: i64) {
    match u8::try_from(v) {
        // Most are one digit: cards, players, rounds, actions.
        Ok(d @ 0..=9) => s.push(char::from(b'0' + d)),
        _ => s.push_str(itoa::Buffer::new().format(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tensor(actions: &[usize], player: usize) -> Vec<f32> {
        let game = LeducPoker::new(2);
        let mut s = game.new_initial_state();
        for &a in actions {
            s.apply_action(ActionId(a));
        }
        let mut out = vec![f32::NAN; game.tensor_shape().unwrap().size()];
        s.write_tensor(PlayerId(player), &mut out);
        out
    }

    /// Ones of the tensors printed by pyspiel 2.0.2 (`information_state_tensor`, 30 values)
    /// for the same histories.
    #[test]
    fn tensors_equal_openspiel() {
        assert_eq!(LeducPoker::new(2).tensor_shape().unwrap().dims, vec![30]);
        assert_eq!(LeducPoker::new(3).tensor_shape().unwrap().dims, vec![47]);
        let ones = |t: Vec<f32>| -> Vec<usize> {
            assert!(t.iter().all(|&x| x == 0.0 || x == 1.0), "{t:?}");
            (0..t.len()).filter(|&i| t[i] == 1.0).collect()
        };
        // Player 0 holds card 3, public card 5, after raise, call.
        assert_eq!(ones(tensor(&[3, 0, 2, 1, 5], 0)), [0, 5, 13, 15, 16]);
        // Player 1 (card 0) after call, raise, fold: the fold's row stays at zero.
        assert_eq!(ones(tensor(&[3, 0, 1, 2, 0], 1)), [1, 2, 14, 17]);
        // The second round's rows start at 22: raise, raise, call.
        assert_eq!(ones(tensor(&[3, 0, 2, 1, 5, 2, 2, 1], 1)), [1, 2, 13, 15, 16, 23, 25, 26]);
    }
}
