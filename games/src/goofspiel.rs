//! Goofspiel as OpenSpiel's tree algorithms see it: the rules, action ids and
//! information-state strings of OpenSpiel's `open_spiel/games/goofspiel/goofspiel.cc`, a
//! simultaneous-move game, played through the turn-based transformation of
//! `open_spiel/game_transforms/turn_based_simultaneous_game.cc`
//! (`pyspiel.load_game_as_turn_based`, `pyspiel.convert_to_turn_based`), which is the game
//! OpenSpiel's CFR, best response and NashConv walk.
//!
//! Each player holds the cards `1..=num_cards`. Every turn a point card is revealed (drawn
//! by chance among those left under `points_order=random`, else the next in ascending or
//! descending order), then every player bids a card from their hand; the single highest bid
//! takes the point card's value, a tie for the highest discards it, and the bids are spent.
//! The last turn is played out without a choice and is not in the history. Returns
//! (`returns_type`): `win_loss` splits +1 among the players with the most points and -1
//! among the others (all 0 when everyone ties); `point_difference` is a player's points less
//! the mean; `total_points` the points themselves (general-sum).
//!
//! Turn-based form: within a turn, players bid one after another from player 0, each unaware
//! of the bids made before them this turn. Actions: bid `c` plays card `c + 1`; chance
//! outcome `c` reveals point card `c + 1`.
//!
//! Information state (OpenSpiel's information-state observer, behind the transformation's
//! prefix): `Current player: P` (`-1` at chance, `-4` at terminals), then
//! `Observer's action this turn: A` for a player who has bid this turn, then with `imp_info`
//! the player's hand, their own bids (action ids), the point cards, the winner of each turn
//! (`-3` for a tie), the points and `Terminal?: 0|1`; without `imp_info` the point cards,
//! every player's hand, the winners and the points. Every line ends in `\n`, every number in
//! a list is followed by a space.
//!
//! Without `imp_info` those strings forget the order of a player's own bids from 4 cards on
//! (two bid orders can leave the same hands, winners and points): the trees have imperfect
//! recall ([`GameTree::has_perfect_recall`](crate::GameTree::has_perfect_recall) is false;
//! 1056 of the 6056 information states of 4 cards). OpenSpiel's tabular algorithms run on
//! them keyed by the strings, and so do this crate's: the best response and NashConv are
//! OpenSpiel's (`pyspiel.nash_conv` gives 1.4930555555555556 for the uniform policy on 4
//! cards, as [`nash_conv`](crate::nash_conv) does), CFR runs; what needs perfect recall
//! (realisation plans, the sequence-form LP, mixing policies by realisation weights)
//! returns [`Error::ImperfectRecall`](crate::Error::ImperfectRecall). With `imp_info` the
//! strings have perfect recall.
//!
//! Tensor: the turn-based game's `information_state_tensor`
//! (`TurnBasedSimultaneousState::InformationStateTensor`: the player to move one-hot, zeros
//! at chance and terminal states, then the observing player one-hot, `n` values each) in
//! front of goofspiel's own (`GoofspielObserver` with perfect recall and the observer's
//! private information, `goofspiel.cc`). Goofspiel's own part, with `N` cards and `n`
//! players: each player's points one-hot in `N(N + 1)/2 + 1` slots, rows starting from the
//! observer (the observer's, the next player's, …); then with `imp_info` the observer's hand
//! (1 per card held, `N`), the winner of each turn one-hot (`N` rows of `n`, a tie all
//! zeros), the point card of each turn one-hot (`N` rows of `N`) and the observer's bid of
//! each turn one-hot (`N` rows of `N`); without `imp_info` the point cards (`N` rows of `N`)
//! and every hand (`n` rows of `N`, from the observer's on). Rows of turns not yet played
//! stay at zero; the bids of the turn under way are in no tensor. That is 70 values for
//! `goofspiel(imp_info=True,num_cards=4)`: the simultaneous game's 66 (OpenSpiel's
//! `load_game("goofspiel(...)")`) after 4 of the transformation, since this is the
//! turn-based game whose strings and infosets these are.

use crate::error::Result;
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, ParamInfo, ParamKind, Params, Registered};

/// The order of the point cards (OpenSpiel's `points_order`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PointsOrder {
    /// Chance draws each point card uniformly among those left (`random`, OpenSpiel's default).
    Random,
    /// Highest first (`descending`).
    Descending,
    /// Lowest first (`ascending`).
    Ascending,
}

impl PointsOrder {
    /// The orders in the order of [`PointsOrder::NAMES`] (and of their declaration).
    pub const ALL: [PointsOrder; 3] = [PointsOrder::Random, PointsOrder::Descending, PointsOrder::Ascending];
    /// The names game strings use.
    pub const NAMES: &'static [&'static str] = &["random", "descending", "ascending"];
}

/// What a terminal pays (OpenSpiel's `returns_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReturnsType {
    /// +1 shared among the players with the most points, -1 shared among the rest; 0 to all
    /// when all tie (`win_loss`, OpenSpiel's default).
    WinLoss,
    /// A player's points less the mean of all players' points (`point_difference`).
    PointDifference,
    /// A player's points (`total_points`); the game is then general-sum.
    TotalPoints,
}

impl ReturnsType {
    /// The types in the order of [`ReturnsType::NAMES`] (and of their declaration).
    pub const ALL: [ReturnsType; 3] =
        [ReturnsType::WinLoss, ReturnsType::PointDifference, ReturnsType::TotalPoints];
    /// The names game strings use.
    pub const NAMES: &'static [&'static str] = &["win_loss", "point_difference", "total_points"];
}

/// Goofspiel in OpenSpiel's turn-based form
/// (`goofspiel(imp_info=B,num_cards=N,players=P,points_order=O,returns_type=R)`).
///
/// OpenSpiel's `num_turns` (fewer turns than cards) and `egocentric` (which changes only the
/// observation tensors) are not offered.
///
/// # Examples
///
/// ```
/// use metagame_games::{Game, GameTree, goofspiel::{Goofspiel, PointsOrder}};
/// let game = Goofspiel::new(4).imp_info(true).points_order(PointsOrder::Descending);
/// assert_eq!(game.name(), "goofspiel(imp_info=True,num_cards=4,points_order=descending)");
/// assert_eq!(GameTree::build(&game)?.num_nodes(), 1077);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goofspiel {
    num_cards: usize,
    num_players: usize,
    points_order: PointsOrder,
    returns_type: ReturnsType,
    imp_info: bool,
}

impl Goofspiel {
    /// Cards per hand accepted (a hand is a 64-bit set).
    pub const NUM_CARDS: std::ops::RangeInclusive<usize> = 1..=64;
    /// Players accepted, as OpenSpiel's game type.
    pub const PLAYERS: std::ops::RangeInclusive<usize> = 2..=10;

    /// Goofspiel with hands of `num_cards` cards and otherwise OpenSpiel's defaults: 2
    /// players, random point order, perfect-information strings, win/loss returns.
    ///
    /// # Panics
    ///
    /// If `num_cards` is outside [`Goofspiel::NUM_CARDS`]; the registry checks this for user
    /// input.
    #[track_caller]
    pub fn new(num_cards: usize) -> Self {
        assert!(Self::NUM_CARDS.contains(&num_cards), "goofspiel takes 1 to 64 cards, got {num_cards}");
        Self {
            num_cards,
            num_players: 2,
            points_order: PointsOrder::Random,
            returns_type: ReturnsType::WinLoss,
            imp_info: false,
        }
    }

    /// The same game for `num_players` players.
    ///
    /// # Panics
    ///
    /// If `num_players` is outside [`Goofspiel::PLAYERS`].
    #[track_caller]
    pub fn players(self, num_players: usize) -> Self {
        assert!(Self::PLAYERS.contains(&num_players), "goofspiel takes 2 to 10 players, got {num_players}");
        Self { num_players, ..self }
    }

    /// The same game with the point cards in this order.
    pub fn points_order(self, points_order: PointsOrder) -> Self {
        Self { points_order, ..self }
    }

    /// The same game with these returns.
    pub fn returns_type(self, returns_type: ReturnsType) -> Self {
        Self { returns_type, ..self }
    }

    /// The same game where a player does not see the others' bids, only who won each turn
    /// (`true`), or sees every hand (`false`).
    pub fn imp_info(self, imp_info: bool) -> Self {
        Self { imp_info, ..self }
    }

    /// Turns in which the players choose: the last card is played without a choice (a
    /// one-card game still has its one turn).
    fn decision_turns(&self) -> usize {
        (self.num_cards - 1).max(1)
    }

    /// Slots of a player's points one-hot: 0 to 1 + 2 + … + N points (OpenSpiel's
    /// `MaxPointSlots`).
    fn point_slots(&self) -> usize {
        self.num_cards * (self.num_cards + 1) / 2 + 1
    }
}

impl Game for Goofspiel {
    type State = GoofspielState;

    fn name(&self) -> String {
        // The variants are declared in the order of their NAMES.
        let (order, returns) = (self.points_order as usize, self.returns_type as usize);
        Self::GAMES[0].game_string(&[
            usize::from(self.imp_info),
            self.num_cards,
            self.num_players,
            order,
            returns,
        ])
    }
    fn num_players(&self) -> usize {
        self.num_players
    }
    fn num_distinct_actions(&self) -> usize {
        self.num_cards
    }
    fn new_initial_state(&self) -> GoofspielState {
        let n = self.num_players;
        let mut state = GoofspielState {
            game: *self,
            hands: vec![u64::MAX >> (64 - self.num_cards); n],
            points: vec![0; n],
            point_cards: Vec::with_capacity(self.num_cards),
            winners: Vec::with_capacity(self.num_cards),
            bids: Vec::with_capacity(self.num_cards * n),
            num_bids_this_turn: 0,
            phase: Phase::Chance,
            history: Vec::with_capacity(self.num_cards * (n + 1)),
        };
        match self.points_order {
            PointsOrder::Random => {}
            PointsOrder::Ascending => state.deal(0),
            PointsOrder::Descending => state.deal(self.num_cards - 1),
        }
        state
    }
    fn utility_sum(&self) -> Option<f64> {
        match self.returns_type {
            ReturnsType::TotalPoints => None,
            ReturnsType::WinLoss | ReturnsType::PointDifference => Some(0.0),
        }
    }
    fn count_histories(&self, at_most: u64) -> Option<u64> {
        // Every history of a turn has the same branching: the cards left, at the chance node
        // (random order) and at each player's bid.
        let levels = self.num_players + usize::from(self.points_order == PointsOrder::Random);
        let mut count: u64 = 0;
        let mut width: u64 = 1;
        for turn in 0..self.decision_turns() {
            let left = (self.num_cards - turn) as u64;
            for _ in 0..levels {
                count = count.saturating_add(width);
                width = width.saturating_mul(left);
            }
            if count > at_most {
                return Some(count);
            }
        }
        Some(count.saturating_add(width))
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        let (n, cards) = (self.num_players, self.num_cards);
        let own = if self.imp_info {
            // Hand, winners, point cards, own bids.
            cards + cards * n + 2 * cards * cards
        } else {
            // Point cards, every hand.
            cards * cards + n * cards
        };
        let size = 2 * n + n * self.point_slots() + own;
        Some(TensorShape::new(TensorKind::InformationState, vec![size]))
    }
}

impl Registered for Goofspiel {
    const GAMES: &'static [GameInfo] = &[GameInfo {
        name: "goofspiel",
        about: "Goofspiel: bid cards for point cards, in OpenSpiel's turn-based form of the simultaneous game",
        params: &[
            ParamInfo {
                name: "imp_info",
                about: "players see only who won each turn, not the others' bids and hands",
                default: 0,
                kind: ParamKind::Bool,
            },
            ParamInfo {
                name: "num_cards",
                about: "cards per hand and point cards",
                default: 13,
                kind: ParamKind::Integer(Goofspiel::NUM_CARDS),
            },
            ParamInfo {
                name: "players",
                about: "number of players",
                default: 2,
                kind: ParamKind::Integer(Goofspiel::PLAYERS),
            },
            ParamInfo {
                name: "points_order",
                about: "order of the point cards",
                default: 0,
                kind: ParamKind::Choice(PointsOrder::NAMES),
            },
            ParamInfo {
                name: "returns_type",
                about: "what a terminal pays",
                default: 0,
                kind: ParamKind::Choice(ReturnsType::NAMES),
            },
        ],
        // 418, 1077, 26 773, 2551 and 26 931 histories. Without imp_info, 4 cards or more
        // have imperfect-recall strings (see the module docs).
        examples: &[
            "num_cards=3",
            "imp_info=True,num_cards=4,points_order=descending",
            "imp_info=True,num_cards=4",
            "imp_info=True,num_cards=3,players=3,returns_type=point_difference",
            "imp_info=True,num_cards=5,points_order=ascending,returns_type=total_points",
        ],
        conformance: Conformance::ExampleTrees(
            "OpenSpiel's default of 13 cards has 4.7e29 histories (and imperfect-recall strings)",
        ),
    }];

    fn from_params(_: &GameInfo, params: &Params) -> Result<Self> {
        Ok(Self::new(params.value("num_cards"))
            .players(params.value("players"))
            .points_order(PointsOrder::ALL[params.value("points_order")])
            .returns_type(ReturnsType::ALL[params.value("returns_type")])
            .imp_info(params.value("imp_info") == 1))
    }
}

/// Where a [`GoofspielState`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// The next point card is to be drawn.
    Chance,
    /// The players bid on the last point card, player `num_bids_this_turn` next.
    Bidding,
    /// Every card is played.
    Over,
}

/// A state of [`Goofspiel`].
#[derive(Clone, Debug)]
pub struct GoofspielState {
    game: Goofspiel,
    /// Player `p`'s hand: bit `c` for card `c + 1`.
    hands: Vec<u64>,
    points: Vec<u32>,
    /// The point cards revealed (ids: card `c + 1`), the current one last while bidding.
    point_cards: Vec<usize>,
    /// The winner of each finished turn, `None` for a tie.
    winners: Vec<Option<usize>>,
    /// Every bid, turn by turn, players in order; the current turn's bids last.
    bids: Vec<usize>,
    num_bids_this_turn: usize,
    phase: Phase,
    history: Vec<ActionId>,
}

impl GoofspielState {
    fn num_players(&self) -> usize {
        self.game.num_players
    }

    /// OpenSpiel's `DealPointCard`: reveal point card `card` and start the bids.
    fn deal(&mut self, card: usize) {
        self.point_cards.push(card);
        self.phase = Phase::Bidding;
    }

    /// OpenSpiel's `DoApplyActions`: settle the turn whose bids are the last `num_players`
    /// of `bids`, then deal the next point card, play the last turn out, or end the game.
    fn settle_turn(&mut self) {
        let n = self.num_players();
        let turn_bids = &self.bids[self.bids.len() - n..];
        let max_bid = turn_bids.iter().copied().max().unwrap_or(0);
        let mut top = turn_bids.iter().enumerate().filter(|(_, b)| **b == max_bid).map(|(p, _)| p);
        let winner = match (top.next(), top.next()) {
            (Some(p), None) => Some(p),
            _ => None,
        };
        if let Some(p) = winner {
            // INVARIANT: the point card of the turn was dealt before any bid.
            self.points[p] += self.point_cards.last().map_or(0, |c| *c as u32 + 1);
        }
        self.winners.push(winner);
        for (hand, bid) in self.hands.iter_mut().zip(&self.bids[self.bids.len() - n..]) {
            *hand &= !(1u64 << bid);
        }
        self.num_bids_this_turn = 0;
        let turns = self.winners.len();
        let num_cards = self.game.num_cards;
        let last = self.point_cards.last().copied().unwrap_or(0);
        if turns < num_cards {
            match self.game.points_order {
                PointsOrder::Random => self.phase = Phase::Chance,
                PointsOrder::Ascending => self.deal(last + 1),
                PointsOrder::Descending => self.deal(last - 1),
            }
        }
        if turns == num_cards - 1 {
            if self.phase == Phase::Chance {
                let card = (0..num_cards).find(|c| !self.point_cards.contains(c));
                // INVARIANT: one point card is left for the last turn.
                self.deal(card.unwrap_or(0));
            }
            for p in 0..n {
                self.bids.push(self.hands[p].trailing_zeros() as usize);
            }
            self.settle_turn();
        } else if turns == num_cards {
            self.phase = Phase::Over;
        }
    }

    /// The players with the most points.
    fn leaders(&self) -> Vec<usize> {
        let max = self.points.iter().copied().max().unwrap_or(0);
        (0..self.num_players()).filter(|&p| self.points[p] == max).collect()
    }

    fn current_player_number(&self) -> i64 {
        match self.phase {
            Phase::Chance => -1,
            Phase::Bidding => self.num_bids_this_turn as i64,
            Phase::Over => -4,
        }
    }
}

/// Append `hand` as OpenSpiel prints one: `1 3 4 ` (each card's value and a space).
fn push_hand(s: &mut String, hand: u64) {
    use std::fmt::Write;
    let mut rest = hand;
    while rest != 0 {
        // INVARIANT: writing to a String cannot fail.
        let _ = write!(s, "{} ", rest.trailing_zeros() + 1);
        rest &= rest - 1;
    }
}

impl State for GoofspielState {
    fn turn(&self) -> Turn {
        match self.phase {
            Phase::Chance => Turn::Chance,
            Phase::Bidding => Turn::Player(PlayerId(self.num_bids_this_turn)),
            Phase::Over => Turn::Terminal,
        }
    }

    fn legal_actions(&self) -> Vec<ActionId> {
        if self.phase != Phase::Bidding {
            return Vec::new();
        }
        let hand = self.hands[self.num_bids_this_turn];
        (0..self.game.num_cards).filter(|c| hand >> c & 1 == 1).map(ActionId).collect()
    }

    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        if self.phase != Phase::Chance {
            return Vec::new();
        }
        let p = 1.0 / (self.game.num_cards - self.point_cards.len()) as f64;
        (0..self.game.num_cards).filter(|c| !self.point_cards.contains(c)).map(|c| (ActionId(c), p)).collect()
    }

    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        match self.phase {
            Phase::Chance => {
                let legal = action.0 < self.game.num_cards && !self.point_cards.contains(&action.0);
                assert!(legal, "point card {} is not left to deal", action.0 + 1);
                self.deal(action.0);
            }
            Phase::Bidding => {
                let p = self.num_bids_this_turn;
                let legal = action.0 < self.game.num_cards && self.hands[p] >> action.0 & 1 == 1;
                assert!(legal, "player {p} holds no card {}", action.0 + 1);
                self.bids.push(action.0);
                self.num_bids_this_turn += 1;
                if self.num_bids_this_turn == self.num_players() {
                    self.settle_turn();
                }
            }
            Phase::Over => panic!("no action applies at a terminal state"),
        }
        self.history.push(action);
    }

    fn returns(&self) -> Vec<f64> {
        let n = self.num_players();
        if self.phase != Phase::Over {
            return vec![0.0; n];
        }
        match self.game.returns_type {
            ReturnsType::WinLoss => {
                let leaders = self.leaders();
                if leaders.len() == n {
                    return vec![0.0; n];
                }
                let mut returns = vec![-1.0 / (n - leaders.len()) as f64; n];
                for &p in &leaders {
                    returns[p] = 1.0 / leaders.len() as f64;
                }
                returns
            }
            ReturnsType::PointDifference => {
                let mean = self.points.iter().map(|&x| f64::from(x)).sum::<f64>() / n as f64;
                self.points.iter().map(|&x| f64::from(x) - mean).collect()
            }
            ReturnsType::TotalPoints => self.points.iter().map(|&x| f64::from(x)).collect(),
        }
    }

    fn information_state_string(&self, player: PlayerId) -> String {
        use std::fmt::Write;

        let n = self.num_players();
        let p = player.0;
        let finished = self.winners.len();
        let mut s = String::with_capacity(160);
        // INVARIANT (every `write!` here): writing to a String cannot fail.
        let _ = writeln!(s, "Current player: {}", self.current_player_number());
        if self.phase == Phase::Bidding && p < self.num_bids_this_turn {
            let _ = writeln!(s, "Observer's action this turn: {}", self.bids[finished * n + p]);
        }
        let point_cards = |s: &mut String| {
            s.push_str("Point card sequence: ");
            for c in &self.point_cards {
                let _ = write!(s, "{} ", c + 1);
            }
            s.push('\n');
        };
        let winners_and_points = |s: &mut String| {
            s.push_str("Win sequence: ");
            for w in &self.winners {
                let _ = write!(s, "{} ", w.map_or(-3, |w| w as i64));
            }
            s.push_str("\nPoints: ");
            for x in &self.points {
                let _ = write!(s, "{x} ");
            }
            s.push('\n');
        };
        if self.game.imp_info {
            let _ = write!(s, "P{p} hand: ");
            push_hand(&mut s, self.hands[p]);
            let _ = write!(s, "\nP{p} action sequence: ");
            for turn in 0..finished {
                let _ = write!(s, "{} ", self.bids[turn * n + p]);
            }
            s.push('\n');
            point_cards(&mut s);
            winners_and_points(&mut s);
            let _ = writeln!(s, "Terminal?: {}", u8::from(self.phase == Phase::Over));
        } else {
            point_cards(&mut s);
            for (q, &hand) in self.hands.iter().enumerate() {
                let _ = write!(s, "P{q} hand: ");
                push_hand(&mut s, hand);
                s.push('\n');
            }
            winners_and_points(&mut s);
        }
        s
    }

    fn history(&self) -> &[ActionId] {
        &self.history
    }

    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        let (n, cards, p) = (self.num_players(), self.game.num_cards, player.0);
        let finished = self.winners.len();
        out.fill(0.0);
        // The turn-based transformation's part: the player to move, the observer.
        if self.phase == Phase::Bidding {
            out[self.num_bids_this_turn] = 1.0;
        }
        out[n + p] = 1.0;
        let mut at = 2 * n;
        let slots = self.game.point_slots();
        for k in 0..n {
            out[at + k * slots + self.points[(p + k) % n] as usize] = 1.0;
        }
        at += n * slots;
        let write_hand = |out: &mut [f32], at: usize, hand: u64| {
            for (c, x) in out[at..at + cards].iter_mut().enumerate() {
                *x = (hand >> c & 1) as f32;
            }
        };
        let write_point_cards = |out: &mut [f32], at: usize| {
            for (turn, &c) in self.point_cards.iter().enumerate() {
                out[at + turn * cards + c] = 1.0;
            }
        };
        if self.game.imp_info {
            write_hand(out, at, self.hands[p]);
            at += cards;
            for (turn, w) in self.winners.iter().enumerate() {
                if let Some(w) = w {
                    out[at + turn * n + w] = 1.0;
                }
            }
            at += cards * n;
            write_point_cards(out, at);
            at += cards * cards;
            for turn in 0..finished {
                out[at + turn * cards + self.bids[turn * n + p]] = 1.0;
            }
        } else {
            write_point_cards(out, at);
            at += cards * cards;
            for k in 0..n {
                write_hand(out, at + k * cards, self.hands[(p + k) % n]);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    fn play(spec: &str, actions: &[usize]) -> registry::AnyState {
        let mut s = registry::load(spec).unwrap().new_initial_state();
        for &a in actions {
            s.apply_action(ActionId(a));
        }
        s
    }

    fn strings(s: &registry::AnyState, n: usize) -> Vec<String> {
        (0..n).map(|p| s.information_state_string(PlayerId(p))).collect()
    }

    /// Strings, legal actions and returns printed by pyspiel 2.0.2
    /// (`load_game_as_turn_based`) for the same histories.
    #[test]
    fn imperfect_information_strings_equal_openspiel() {
        let spec = "goofspiel(imp_info=True,num_cards=4)";
        let s = play(spec, &[]);
        assert_eq!(s.chance_outcomes(), (0..4).map(|c| (ActionId(c), 0.25)).collect::<Vec<_>>());
        assert_eq!(
            s.information_state_string(PlayerId(1)),
            "Current player: -1\nP1 hand: 1 2 3 4 \nP1 action sequence: \nPoint card sequence: \n\
             Win sequence: \nPoints: 0 0 \nTerminal?: 0\n"
        );
        let s = play(spec, &[0, 0]);
        assert_eq!(
            strings(&s, 2),
            [
                "Current player: 1\nObserver's action this turn: 0\nP0 hand: 1 2 3 4 \nP0 action sequence: \n\
                 Point card sequence: 1 \nWin sequence: \nPoints: 0 0 \nTerminal?: 0\n",
                "Current player: 1\nP1 hand: 1 2 3 4 \nP1 action sequence: \nPoint card sequence: 1 \n\
                 Win sequence: \nPoints: 0 0 \nTerminal?: 0\n",
            ]
        );
        let s = play(spec, &[0, 0, 0, 2, 1, 3]);
        assert_eq!(s.chance_outcomes(), vec![(ActionId(1), 0.5), (ActionId(3), 0.5)]);
        assert_eq!(
            s.information_state_string(PlayerId(0)),
            "Current player: -1\nP0 hand: 3 4 \nP0 action sequence: 0 1 \nPoint card sequence: 1 3 \n\
             Win sequence: -3 1 \nPoints: 0 3 \nTerminal?: 0\n"
        );
        let s = play(spec, &[0, 0, 0, 2, 1, 3, 3, 3]);
        assert_eq!(s.legal_actions(), vec![ActionId(1), ActionId(2)]);
        // The last turn (point card 2, bids 3 and 3) is played out: a tie.
        let s = play(spec, &[0, 0, 0, 2, 1, 3, 3, 3, 1]);
        assert!(s.is_terminal());
        assert_eq!(s.history().len(), 9);
        assert_eq!(s.returns(), vec![1.0, -1.0]);
        assert_eq!(
            strings(&s, 2),
            [
                "Current player: -4\nP0 hand: \nP0 action sequence: 0 1 3 2 \nPoint card sequence: 1 3 4 2 \n\
                 Win sequence: -3 1 0 -3 \nPoints: 4 3 \nTerminal?: 1\n",
                "Current player: -4\nP1 hand: \nP1 action sequence: 0 3 1 2 \nPoint card sequence: 1 3 4 2 \n\
                 Win sequence: -3 1 0 -3 \nPoints: 4 3 \nTerminal?: 1\n",
            ]
        );
    }

    #[test]
    fn perfect_information_strings_equal_openspiel() {
        let spec = "goofspiel(num_cards=4)";
        let s = play(spec, &[1, 0]);
        assert_eq!(
            strings(&s, 2),
            [
                "Current player: 1\nObserver's action this turn: 0\nPoint card sequence: 2 \nP0 hand: 1 2 3 4 \n\
                 P1 hand: 1 2 3 4 \nWin sequence: \nPoints: 0 0 \n",
                "Current player: 1\nPoint card sequence: 2 \nP0 hand: 1 2 3 4 \nP1 hand: 1 2 3 4 \n\
                 Win sequence: \nPoints: 0 0 \n",
            ]
        );
        let s = play(spec, &[1, 0, 2, 0]);
        assert_eq!(s.legal_actions(), vec![ActionId(1), ActionId(2), ActionId(3)]);
        assert_eq!(
            s.information_state_string(PlayerId(0)),
            "Current player: 0\nPoint card sequence: 2 1 \nP0 hand: 2 3 4 \nP1 hand: 1 2 4 \nWin sequence: 1 \n\
             Points: 0 2 \n"
        );
        let s = play(spec, &[1, 0, 2, 0, 2, 1, 3, 3, 0]);
        assert_eq!(s.returns(), vec![0.0, 0.0]);
        assert_eq!(
            s.information_state_string(PlayerId(1)),
            "Current player: -4\nPoint card sequence: 2 1 4 3 \nP0 hand: \nP1 hand: \nWin sequence: 1 0 0 1 \n\
             Points: 5 5 \n"
        );
    }

    #[test]
    fn three_players_and_short_games_equal_openspiel() {
        let spec = "goofspiel(imp_info=True,num_cards=3,players=3,returns_type=point_difference)";
        let s = play(spec, &[0, 2, 2]);
        assert_eq!(
            s.information_state_string(PlayerId(1)),
            "Current player: 2\nObserver's action this turn: 2\nP1 hand: 1 2 3 \nP1 action sequence: \n\
             Point card sequence: 1 \nWin sequence: \nPoints: 0 0 0 \nTerminal?: 0\n"
        );
        let s = play(spec, &[0, 2, 2, 0, 2, 1, 0, 1]);
        assert!(s.is_terminal());
        assert_eq!(s.returns(), vec![-0.6666666666666666, -0.6666666666666666, 1.3333333333333335]);
        assert_eq!(
            s.information_state_string(PlayerId(2)),
            "Current player: -4\nP2 hand: \nP2 action sequence: 0 1 2 \nPoint card sequence: 1 3 2 \n\
             Win sequence: -3 -3 2 \nPoints: 0 0 2 \nTerminal?: 1\n"
        );
        // One card: its one turn is played, with one legal bid each.
        let s = play("goofspiel(num_cards=1)", &[0, 0]);
        assert_eq!(s.turn(), Turn::Player(PlayerId(1)));
        assert_eq!(s.legal_actions(), vec![ActionId(0)]);
        let s = play("goofspiel(num_cards=1,points_order=ascending)", &[0, 0]);
        assert!(s.is_terminal());
        assert_eq!(
            s.information_state_string(PlayerId(0)),
            "Current player: -4\nPoint card sequence: 1 \nP0 hand: \nP1 hand: \nWin sequence: -3 \nPoints: 0 0 \n"
        );
        let s = play("goofspiel(num_cards=2,points_order=ascending,returns_type=total_points)", &[1, 1]);
        assert!(s.is_terminal());
        assert_eq!(s.returns(), vec![0.0, 0.0]);
        assert_eq!(registry::load("goofspiel(returns_type=total_points)").unwrap().utility_sum(), None);
    }

    /// The ones of `player`'s tensor, which holds only zeros and ones.
    fn tensor_ones(spec: &str, actions: &[usize], player: usize) -> Vec<usize> {
        let game = registry::load(spec).unwrap();
        let mut out = vec![f32::NAN; game.tensor_shape().unwrap().size()];
        play(spec, actions).write_tensor(PlayerId(player), &mut out);
        assert!(out.iter().all(|&x| x == 0.0 || x == 1.0), "{out:?}");
        (0..out.len()).filter(|&i| out[i] == 1.0).collect()
    }

    /// Shapes and tensors printed by pyspiel 2.0.2 (`load_game_as_turn_based`,
    /// `information_state_tensor`) for the same histories.
    #[test]
    fn tensors_equal_openspiel() {
        for (spec, size) in [
            ("goofspiel", 383),
            ("goofspiel(num_cards=3)", 33),
            ("goofspiel(imp_info=True,num_cards=4)", 70),
            ("goofspiel(imp_info=True,num_cards=3,players=3,returns_type=point_difference)", 57),
        ] {
            let shape = registry::load(spec).unwrap().tensor_shape().unwrap();
            assert_eq!((shape.kind, shape.dims), (TensorKind::InformationState, vec![size]), "{spec}");
        }
        let spec = "goofspiel(imp_info=True,num_cards=4)";
        // Player 1 watches player 0 bid on point card 4 (strings in the test above).
        assert_eq!(
            tensor_ones(spec, &[0, 0, 0, 2, 1, 3, 3], 1),
            [0, 3, 7, 15, 27, 28, 33, 38, 44, 49, 54, 61]
        );
        assert_eq!(
            tensor_ones(spec, &[0, 0, 0, 2, 1, 3, 3, 3, 1], 0),
            [2, 8, 18, 33, 34, 38, 44, 49, 51, 54, 59, 65, 68]
        );
        // Without imp_info every hand shows, the observer's first.
        assert_eq!(
            tensor_ones("goofspiel(num_cards=4)", &[1, 0, 2, 0], 0),
            [0, 2, 4, 17, 27, 30, 43, 44, 45, 46, 47, 49]
        );
        assert_eq!(
            tensor_ones("goofspiel(num_cards=4)", &[1, 0, 2, 0], 1),
            [0, 3, 6, 15, 27, 30, 42, 43, 45, 47, 48, 49]
        );
        let spec = "goofspiel(imp_info=True,num_cards=3,players=3,returns_type=point_difference)";
        assert_eq!(tensor_ones(spec, &[0, 2, 2, 0, 2, 1], 2), [1, 5, 6, 13, 20, 28, 29, 39, 44, 48]);
    }

    #[test]
    fn counted_histories_are_the_trees_sizes() {
        for spec in [
            "goofspiel(num_cards=1)",
            "goofspiel(num_cards=2,points_order=descending)",
            "goofspiel(num_cards=3)",
            "goofspiel(imp_info=True,num_cards=4,points_order=descending)",
            "goofspiel(imp_info=True,num_cards=3,players=3)",
        ] {
            let game = registry::load(spec).unwrap();
            let tree = crate::GameTree::build(&game).unwrap();
            assert_eq!(game.count_histories(u64::MAX), Some(tree.num_nodes() as u64), "{spec}");
        }
        // OpenSpiel's walk of goofspiel(num_cards=4): 26 773 histories.
        assert_eq!(Goofspiel::new(4).count_histories(u64::MAX), Some(26_773));
        assert!(Goofspiel::new(13).count_histories(10_000_000).unwrap() > 10_000_000);
    }

    #[test]
    fn perfect_information_strings_from_four_cards_are_imperfect_recall() {
        // OpenSpiel's walk (benches/peers/make_fixtures.py) finds 1056 information states
        // reached with different own histories; tests/it/openspiel_fixtures.rs checks it.
        let tree = crate::GameTree::build(&Goofspiel::new(4)).unwrap();
        assert!(!tree.has_perfect_recall());
        assert_eq!(tree.num_imperfect_recall_infosets(), 1056);
        for spec in ["goofspiel(num_cards=3)", "goofspiel(imp_info=True,num_cards=4)"] {
            assert!(
                crate::GameTree::build(&registry::load(spec).unwrap()).unwrap().has_perfect_recall(),
                "{spec}"
            );
        }
        let err = crate::GameTree::build(&Goofspiel::new(13)).unwrap_err().to_string();
        assert!(err.contains("10000000"), "{err}");
    }

    #[test]
    fn its_parameters_load_and_name_it() {
        let game = registry::load("goofspiel(num_cards=4,imp_info=true,points_order=descending)").unwrap();
        assert_eq!(game.name(), "goofspiel(imp_info=True,num_cards=4,points_order=descending)");
        assert_eq!(game.num_distinct_actions(), 4);
        assert_eq!(registry::load("goofspiel(imp_info=False,num_cards=13)").unwrap().name(), "goofspiel");
        let err = |spec: &str| registry::load(spec).unwrap_err().to_string();
        assert!(
            err("goofspiel(points_order=sorted)")
                .contains("points_order must be one of random, descending, ascending, got `sorted`")
        );
        assert!(err("goofspiel(imp_info=1)").contains("imp_info must be True or False, got `1`"));
        assert!(err("goofspiel(players=11)").contains("players must be in 2..=10, got 11"));
        assert!(err("goofspiel(num_turns=3)").contains("unknown parameter `num_turns`"));
    }
}
