//! Tic-tac-toe with the rules, action ids and information-state strings of OpenSpiel's
//! `open_spiel/games/tic_tac_toe/tic_tac_toe.cc`.
//!
//! Player 0 (x) moves first; action `a` in `0..9` marks cell `a` (row `a / 3`, column
//! `a % 3`); the legal actions are the empty cells, ascending. Three marks in a row, a
//! column or a diagonal win (+1, the other player −1); a full board without a line is a draw
//! (0 each). A game of perfect information: the information state of either player is the
//! move history, the actions separated by `", "` (`"4, 0, 8"`; the empty string at the start).
//!
//! Tensor: OpenSpiel's `observation_tensor` (`TicTacToeState::ObservationTensor`; OpenSpiel
//! gives no information-state tensor for perfect-information games), `[3, 3, 3]`: one plane
//! per cell state in OpenSpiel's `CellState` order (empty, nought = player 1's marks, cross =
//! player 0's marks), each a 3 × 3 board of 0/1, the same for both players.

use smallvec::SmallVec;

use crate::error::Result;
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, Params, Registered};

/// The eight lines of three cells.
const LINES: [[usize; 3]; 8] =
    [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 3, 6], [1, 4, 7], [2, 5, 8], [0, 4, 8], [2, 4, 6]];

/// Tic-tac-toe (`tic_tac_toe`): 549 946 histories, as OpenSpiel's.
#[derive(Clone, Copy, Debug, Default)]
pub struct TicTacToe;

impl Game for TicTacToe {
    type State = TicTacToeState;

    fn name(&self) -> String {
        Self::GAMES[0].game_string(&[])
    }
    fn num_players(&self) -> usize {
        2
    }
    fn num_distinct_actions(&self) -> usize {
        9
    }
    fn new_initial_state(&self) -> TicTacToeState {
        TicTacToeState { board: [None; 9], history: SmallVec::new(), winner: None }
    }
    fn utility_sum(&self) -> Option<f64> {
        Some(0.0)
    }
    fn utility_range(&self) -> Option<(f64, f64)> {
        Some((-1.0, 1.0))
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        Some(TensorShape::new(TensorKind::Observation, vec![3, 3, 3]))
    }
}

impl Registered for TicTacToe {
    const GAMES: &'static [GameInfo] = &[GameInfo {
        name: "tic_tac_toe",
        about: "tic-tac-toe: perfect information, no chance (549 946 histories)",
        params: &[],
        examples: &[],
        conformance: Conformance::Full,
    }];

    fn from_params(_: &GameInfo, _: &Params) -> Result<Self> {
        Ok(TicTacToe)
    }
}

/// A position: the marks (`Some(player)`), the moves so far and the winner once there is one.
#[derive(Debug)]
pub struct TicTacToeState {
    board: [Option<u8>; 9],
    /// Inline: a tree build clones a state for each of the game's 549 946 histories.
    history: SmallVec<[ActionId; 9]>,
    winner: Option<u8>,
}

// By hand: `SmallVec::from_slice` copies the moves in one go, where the derived clone
// extends move by move.
impl Clone for TicTacToeState {
    fn clone(&self) -> Self {
        Self { board: self.board, history: SmallVec::from_slice(&self.history), winner: self.winner }
    }
}

impl TicTacToeState {
    fn full(&self) -> bool {
        self.history.len() == 9
    }
}

impl State for TicTacToeState {
    fn turn(&self) -> Turn {
        if self.winner.is_some() || self.full() {
            Turn::Terminal
        } else {
            Turn::Player(PlayerId(self.history.len() % 2))
        }
    }

    fn legal_actions(&self) -> Vec<ActionId> {
        let mut legal = Vec::with_capacity(9);
        self.write_legal_actions(&mut legal);
        legal
    }

    fn write_legal_actions(&self, legal: &mut Vec<ActionId>) {
        legal.clear();
        if !self.is_terminal() {
            legal.extend((0..9).filter(|&c| self.board[c].is_none()).map(ActionId));
        }
    }

    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        Vec::new()
    }

    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        let Turn::Player(PlayerId(player)) = self.turn() else {
            panic!("tic_tac_toe: no move after the game has ended");
        };
        assert!(action.0 < 9 && self.board[action.0].is_none(), "tic_tac_toe: cell {} is not free", action.0);
        let mark = player as u8;
        self.board[action.0] = Some(mark);
        self.history.push(action);
        if LINES.iter().any(|line| line.iter().all(|&c| self.board[c] == Some(mark))) {
            self.winner = Some(mark);
        }
    }

    fn returns(&self) -> Vec<f64> {
        let mut returns = Vec::with_capacity(2);
        self.write_returns(&mut returns);
        returns
    }

    fn write_returns(&self, returns: &mut Vec<f64>) {
        returns.clear();
        returns.extend_from_slice(match self.winner {
            Some(0) => &[1.0, -1.0],
            Some(_) => &[-1.0, 1.0],
            None => &[0.0, 0.0],
        });
    }

    fn information_state_string(&self, player: PlayerId) -> String {
        let mut s = String::with_capacity(3 * self.history.len());
        self.write_information_state_string(player, &mut s);
        s
    }

    fn write_information_state_string(&self, _player: PlayerId, s: &mut String) {
        s.clear();
        for (i, a) in self.history.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            // Cells are 0..=8: one digit.
            s.push(char::from(b'0' + a.0 as u8));
        }
    }

    fn history(&self) -> &[ActionId] {
        &self.history
    }

    fn write_tensor(&self, _player: PlayerId, out: &mut [f32]) {
        out.fill(0.0);
        for (cell, mark) in self.board.iter().enumerate() {
            // OpenSpiel's planes: empty, nought (player 1), cross (player 0).
            let plane = match mark {
                None => 0,
                Some(1) => 1,
                Some(_) => 2,
            };
            out[plane * 9 + cell] = 1.0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_wins_and_the_history_is_the_information_state() {
        let mut s = TicTacToe.new_initial_state();
        for a in [0, 3, 1, 4] {
            s.apply_action(ActionId(a));
        }
        assert_eq!(s.information_state_string(PlayerId(0)), "0, 3, 1, 4");
        assert_eq!(s.legal_actions(), [2, 5, 6, 7, 8].map(ActionId));
        s.apply_action(ActionId(2));
        assert!(s.is_terminal());
        assert_eq!(s.returns(), vec![1.0, -1.0]);
    }

    /// pyspiel 2.0.2's `observation_tensor` after x at 4, o at 0, x at 8.
    #[test]
    fn the_tensor_equals_openspiel() {
        assert_eq!(TicTacToe.tensor_shape().unwrap().dims, vec![3, 3, 3]);
        let mut s = TicTacToe.new_initial_state();
        for a in [4, 0, 8] {
            s.apply_action(ActionId(a));
        }
        let mut out = [f32::NAN; 27];
        s.write_tensor(PlayerId(1), &mut out);
        #[rustfmt::skip]
        let expected = [
            0., 1., 1., 1., 0., 1., 1., 1., 0., // empty
            1., 0., 0., 0., 0., 0., 0., 0., 0., // o
            0., 0., 0., 0., 1., 0., 0., 0., 1., // x
        ];
        assert_eq!(out, expected);
    }
}
