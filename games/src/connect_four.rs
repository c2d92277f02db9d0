//! Connect Four with the rules, action ids, strings and observation tensor of OpenSpiel's
//! `open_spiel/games/connect_four/connect_four.cc` (its default parameters: 6 rows, 7
//! columns, four in a row, the tensor not egocentric).
//!
//! Player 0 (`x`) moves first; action `c` in `0..7` drops a stone into column `c`, legal while
//! the column has room; the legal actions are those columns, ascending. Four stones of one
//! player in a row, a column or a diagonal win (+1, the other player −1); a full board
//! without a line is a draw (0 each). Rows count from the bottom (row 0).
//!
//! A game of perfect information: the information state of either player is the move
//! history, the actions separated by `", "` (`"3, 3, 4"`; the empty string at the start). The
//! observation tensor has shape `[3, 6, 7]`: plane 0 marks player 0's stones, plane 1 player
//! 1's, plane 2 the empty cells, each plane row-major with row 0 at the bottom; it is the
//! same for both players. [`ConnectFourState`]'s `Display` is OpenSpiel's `ToString` (the
//! top row first, `x`, `o` and `.`, each row ending in a newline).

use std::fmt;

use crate::error::Result;
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::game_info::{Conformance, GameInfo, Params, Registered};

/// Rows of the board.
pub(crate) const ROWS: usize = 6;
/// Columns of the board, and the number of actions.
pub(crate) const COLUMNS: usize = 7;
/// Cells of the board, and the longest game.
pub(crate) const CELLS: usize = ROWS * COLUMNS;
/// Bits per column in a bitboard: the rows, then one bit always clear, so that no line
/// runs from the top of one column into the bottom of the next.
pub(crate) const STRIDE: usize = ROWS + 1;
/// Planes of the observation tensor: player 0, player 1, empty (OpenSpiel's `kCellStates`).
const PLANES: usize = 3;

/// Positions reachable in play, the empty board included, summed over 0 to 42 stones:
/// 4 531 985 219 092 (S. Edelkamp and P. Kissmann, "Symbolic classification of general
/// two-player games", KI 2008, confirming J. Tromp's count). Each is the end of at least one
/// history, so the game has at least this many histories.
const NUM_POSITIONS: u64 = 4_531_985_219_092;

/// Connect Four (`connect_four`): 6 rows × 7 columns, as OpenSpiel's.
#[derive(Clone, Copy, Debug, Default)]
pub struct ConnectFour;

impl Game for ConnectFour {
    type State = ConnectFourState;

    fn name(&self) -> String {
        Self::GAMES[0].game_string(&[])
    }
    fn num_players(&self) -> usize {
        2
    }
    fn num_distinct_actions(&self) -> usize {
        COLUMNS
    }
    fn new_initial_state(&self) -> ConnectFourState {
        ConnectFourState {
            stones: [0; 2],
            heights: [0; COLUMNS],
            len: 0,
            winner: None,
            history: [ActionId(0); CELLS],
        }
    }
    fn utility_sum(&self) -> Option<f64> {
        Some(0.0)
    }
    fn utility_range(&self) -> Option<(f64, f64)> {
        Some((-1.0, 1.0))
    }
    fn count_histories(&self, at_most: u64) -> Option<u64> {
        // Too many to count, but past `at_most` any larger number will do, and the number of
        // positions is a lower bound: a tree build fails at once instead of at its node limit.
        (at_most < NUM_POSITIONS).then_some(NUM_POSITIONS)
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        Some(TensorShape::new(TensorKind::Observation, vec![PLANES, ROWS, COLUMNS]))
    }
}

impl Registered for ConnectFour {
    const GAMES: &'static [GameInfo] = &[GameInfo {
        name: "connect_four",
        about: "Connect Four: perfect information, no chance, 6 rows x 7 columns, four in a row wins",
        params: &[],
        examples: &[],
        conformance: Conformance::PlayoutsOnly(
            "4 531 985 219 092 positions, far more histories than any tree can hold",
        ),
    }];

    fn from_params(_: &GameInfo, _: &Params) -> Result<Self> {
        Ok(ConnectFour)
    }
}

/// A position: each player's stones as a bitboard, the height of each column, the moves so
/// far and the winner once there is one. Fixed size, nothing on the heap: a clone is a copy
/// of a few hundred bytes, for rollouts that clone and step states millions of times.
#[derive(Clone, Debug)]
pub struct ConnectFourState {
    /// Bit `column * STRIDE + row` is set where the player has a stone.
    stones: [u64; 2],
    /// Stones in each column.
    heights: [u8; COLUMNS],
    /// Moves played: the first `len` entries of `history`.
    len: u8,
    winner: Option<u8>,
    history: [ActionId; CELLS],
}

impl ConnectFourState {
    /// Who holds the cell at `row` (0 at the bottom) and `column`, if anyone.
    ///
    /// # Panics
    ///
    /// If `row >= 6` or `column >= 7`.
    #[track_caller]
    pub fn cell(&self, row: usize, column: usize) -> Option<PlayerId> {
        assert!(row < ROWS && column < COLUMNS, "connect_four: no cell at row {row}, column {column}");
        let bit = 1u64 << (column * STRIDE + row);
        (0..2).find(|&p| self.stones[p] & bit != 0).map(PlayerId)
    }

    fn full(&self) -> bool {
        usize::from(self.len) == CELLS
    }
}

/// Whether `stones` hold four in a line. Each shift is a direction (1 up a column, `STRIDE`
/// along a row, `STRIDE ± 1` the diagonals): `pairs` marks stones with a neighbour one step
/// on, and a pair two steps on from a pair is four in a row. The clear bit atop each column
/// keeps lines from wrapping. Cheaper than walking the lines through the last stone, and the
/// same answer, since the mover had no line before the move.
pub(crate) fn has_line(stones: u64) -> bool {
    [1, STRIDE, STRIDE - 1, STRIDE + 1].into_iter().any(|shift| {
        let pairs = stones & (stones >> shift);
        pairs & (pairs >> (2 * shift)) != 0
    })
}

impl State for ConnectFourState {
    fn turn(&self) -> Turn {
        if self.winner.is_some() || self.full() {
            Turn::Terminal
        } else {
            Turn::Player(PlayerId(usize::from(self.len % 2)))
        }
    }

    fn legal_actions(&self) -> Vec<ActionId> {
        if self.is_terminal() {
            return Vec::new();
        }
        let mut legal = Vec::with_capacity(COLUMNS);
        legal.extend((0..COLUMNS).filter(|&c| usize::from(self.heights[c]) < ROWS).map(ActionId));
        legal
    }

    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        Vec::new()
    }

    #[track_caller]
    fn apply_action(&mut self, action: ActionId) {
        let Turn::Player(PlayerId(player)) = self.turn() else {
            panic!("connect_four: no move after the game has ended");
        };
        let column = action.0;
        assert!(
            column < COLUMNS && usize::from(self.heights[column]) < ROWS,
            "connect_four: column {column} is not open"
        );
        self.stones[player] |= 1u64 << (column * STRIDE + usize::from(self.heights[column]));
        self.heights[column] += 1;
        self.history[usize::from(self.len)] = action;
        self.len += 1;
        if has_line(self.stones[player]) {
            self.winner = Some(player as u8);
        }
    }

    fn returns(&self) -> Vec<f64> {
        match self.winner {
            Some(0) => vec![1.0, -1.0],
            Some(_) => vec![-1.0, 1.0],
            None => vec![0.0, 0.0],
        }
    }

    fn information_state_string(&self, _player: PlayerId) -> String {
        let mut s = String::with_capacity(3 * usize::from(self.len));
        for (k, a) in self.history().iter().enumerate() {
            if k > 0 {
                s.push_str(", ");
            }
            // Columns are single digits.
            s.push(char::from(b'0' + a.0 as u8));
        }
        s
    }

    fn history(&self) -> &[ActionId] {
        &self.history[..usize::from(self.len)]
    }

    /// OpenSpiel's observation tensor (`[3, 6, 7]`, the same for both players).
    ///
    /// # Panics
    ///
    /// If `player` is not 0 or 1, or `out` does not hold exactly 126 values.
    #[track_caller]
    fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
        assert!(player.0 < 2, "connect_four: no player {}", player.0);
        assert_eq!(out.len(), PLANES * CELLS, "connect_four: the tensor holds {} values", PLANES * CELLS);
        out.fill(0.0);
        for column in 0..COLUMNS {
            for row in 0..ROWS {
                let bit = 1u64 << (column * STRIDE + row);
                let plane = if self.stones[0] & bit != 0 {
                    0
                } else if self.stones[1] & bit != 0 {
                    1
                } else {
                    2
                };
                out[plane * CELLS + row * COLUMNS + column] = 1.0;
            }
        }
    }
}

impl fmt::Display for ConnectFourState {
    /// OpenSpiel's `ToString`: the top row first, one line per row.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for row in (0..ROWS).rev() {
            for column in 0..COLUMNS {
                let mark = match self.cell(row, column) {
                    Some(PlayerId(0)) => 'x',
                    Some(_) => 'o',
                    None => '.',
                };
                write!(f, "{mark}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;
    use crate::{GameTree, registry};

    fn play(actions: &[usize]) -> ConnectFourState {
        let mut s = ConnectFour.new_initial_state();
        for &a in actions {
            s.apply_action(ActionId(a));
        }
        s
    }

    /// Plays `actions`, checking that only the last one ends the game, and gives the returns.
    fn final_returns(actions: &[usize]) -> Vec<f64> {
        let (last, before) = actions.split_last().unwrap();
        let mut s = play(before);
        assert!(!s.is_terminal(), "{actions:?} ended early");
        s.apply_action(ActionId(*last));
        assert!(s.is_terminal(), "{actions:?} did not end");
        assert!(s.legal_actions().is_empty());
        s.returns()
    }

    #[test]
    fn four_in_a_column_a_row_and_both_diagonals_win() {
        // x stacks column 0 while o stacks column 1.
        assert_eq!(final_returns(&[0, 1, 0, 1, 0, 1, 0]), [1.0, -1.0]);
        // x along the bottom row, o on top of it.
        assert_eq!(final_returns(&[0, 0, 1, 1, 2, 2, 3]), [1.0, -1.0]);
        // x up the diagonal (0,0) (1,1) (2,2) (3,3).
        assert_eq!(final_returns(&[0, 1, 1, 2, 2, 3, 2, 3, 3, 6, 3]), [1.0, -1.0]);
        // The mirror image: x on (0,6) (1,5) (2,4) (3,3).
        assert_eq!(final_returns(&[6, 5, 5, 4, 4, 3, 4, 3, 3, 0, 3]), [1.0, -1.0]);
        // o wins the column while x wanders.
        assert_eq!(final_returns(&[0, 6, 1, 6, 2, 6, 4, 6]), [-1.0, 1.0]);
        // Three, then a gap: no line.
        let s = play(&[0, 6, 1, 6, 2, 5, 4]);
        assert!(!s.is_terminal());
    }

    #[test]
    fn lines_do_not_wrap_from_one_column_into_the_next() {
        // x on the top three cells of column 0 and the bottom of column 1: four bits in a row
        // but for the clear bit between the columns, so not a line.
        let s = play(&[1, 0, 6, 0, 6, 0, 0, 5, 0, 5, 0]);
        assert_eq!((3..6).map(|row| s.cell(row, 0)).collect::<Vec<_>>(), [Some(PlayerId(0)); 3]);
        assert_eq!(s.cell(0, 1), Some(PlayerId(0)));
        assert!(!s.is_terminal(), "{s}");
    }

    #[test]
    fn a_full_board_without_a_line_is_a_draw_and_a_last_line_still_wins() {
        // Game 808 of the random stream in the OpenSpiel fixture (pyspiel 2.0.2, numpy
        // default_rng(0)), a draw.
        let draw = [
            5, 5, 5, 0, 5, 4, 4, 6, 6, 3, 5, 1, 3, 5, 2, 1, 2, 3, 0, 4, 1, 4, 3, 0, 2, 2, 2, 1, 0, 0, 0, 2,
            1, 6, 1, 3, 4, 4, 3, 6, 6, 6,
        ];
        assert_eq!(final_returns(&draw), [0.0, 0.0]);
        // Game 2602 of the same stream: o wins with the 42nd stone.
        let last = [
            3, 4, 1, 0, 1, 1, 3, 3, 2, 2, 2, 2, 4, 4, 6, 5, 0, 3, 3, 6, 4, 2, 4, 4, 1, 2, 0, 0, 5, 3, 6, 0,
            1, 6, 0, 6, 1, 6, 5, 5, 5, 5,
        ];
        assert_eq!(final_returns(&last), [-1.0, 1.0]);
    }

    #[test]
    fn full_columns_are_not_legal() {
        let s = play(&[3, 3, 3, 3, 3, 3]);
        assert_eq!(s.turn(), Turn::Player(PlayerId(0)));
        assert_eq!(s.legal_actions(), [0, 1, 2, 4, 5, 6].map(ActionId));
        let result = std::panic::catch_unwind(|| {
            let mut s = s.clone();
            s.apply_action(ActionId(3));
        });
        assert!(result.is_err(), "a full column was played");
        let result = std::panic::catch_unwind(|| play(&[7]));
        assert!(result.is_err(), "column 7 was played");
    }

    #[test]
    #[should_panic(expected = "no move after the game has ended")]
    fn no_move_after_a_win() {
        play(&[0, 1, 0, 1, 0, 1, 0, 1]);
    }

    #[test]
    fn strings_and_tensor_are_openspiels() {
        // pyspiel 2.0.2 after 3, 3, 4, 2: str(state), information_state_string and the
        // observation tensor of either player.
        let s = play(&[3, 3, 4, 2]);
        assert_eq!(s.to_string(), ".......\n.......\n.......\n.......\n...o...\n..oxx..\n");
        assert_eq!(s.information_state_string(PlayerId(1)), "3, 3, 4, 2");
        assert_eq!(ConnectFour.new_initial_state().information_state_string(PlayerId(0)), "");
        let shape = ConnectFour.tensor_shape().unwrap();
        assert_eq!((shape.kind, shape.dims.as_slice()), (TensorKind::Observation, &[3, 6, 7][..]));
        let ones = |planes: &[f32]| -> Vec<usize> { (0..126).filter(|&i| planes[i] == 1.0).collect() };
        for player in [PlayerId(0), PlayerId(1)] {
            let mut t = [0.5f32; 126];
            s.write_tensor(player, &mut t);
            assert!(t.iter().all(|&v| v == 0.0 || v == 1.0));
            let set = ones(&t);
            // x at (0,3) (0,4); o at (0,2) (1,3); the other 38 cells empty.
            assert_eq!(&set[..4], &[3, 4, 42 + 2, 42 + 7 + 3]);
            assert_eq!(set.len(), 42);
            assert!(set[4..].iter().all(|&i| i >= 84));
        }
    }

    #[test]
    fn the_registry_loads_it_and_no_tree_is_built() {
        let game = registry::load("connect_four").unwrap();
        assert_eq!(game.name(), "connect_four");
        assert_eq!(game.num_distinct_actions(), 7);
        assert_eq!(ConnectFour.count_histories(10_000_000), Some(NUM_POSITIONS));
        assert_eq!(ConnectFour.count_histories(u64::MAX), None);
        assert!(matches!(GameTree::build(&ConnectFour), Err(Error::LimitExceeded { .. })));
    }

    /// Rough speed of a random playout (clone-free, legal actions from `legal_actions`).
    /// `cargo test -p metagame-games --release connect_four::tests::playout_speed -- --ignored --nocapture`
    #[test]
    #[ignore = "a timing that prints the speed of a random playout, no assertion (1.3 s in release): run it with --ignored --nocapture"]
    fn playout_speed() {
        let mut seed = 1u64;
        let mut next = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        let playouts = 1_000_000;
        let start = std::time::Instant::now();
        let mut moves = 0;
        let mut x_wins = 0;
        for _ in 0..playouts {
            let mut s = ConnectFour.new_initial_state();
            while !s.is_terminal() {
                let legal = s.legal_actions();
                s.apply_action(legal[next(legal.len())]);
                moves += 1;
            }
            x_wins += usize::from(s.returns()[0] > 0.0);
        }
        let elapsed = start.elapsed();
        #[allow(clippy::print_stdout)]
        {
            println!(
                "{playouts} playouts, {moves} moves in {elapsed:?}: {:.0} ns a playout, {:.1} ns a move; \
                 x won {x_wins}; state {} bytes",
                elapsed.as_nanos() as f64 / playouts as f64,
                elapsed.as_nanos() as f64 / moves as f64,
                std::mem::size_of::<ConnectFourState>()
            );
        }
    }
}
