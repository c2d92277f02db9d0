//! `ConnectFourSearch`: a fixed connect-four opponent that searches — depth-limited
//! alpha–beta (negamax) over the position its observation tensor shows, a win worth 1, a
//! loss −1, anything else 0 at the horizon; uniform over the best moves. Depth 1 is the
//! one-ply lookahead (take a win when there is one); deeper ones also block the opponent's
//! wins and set up their own. Baselines to read a trained agent's strength against.

use ndarray::ArrayViewMut2;

use crate::connect_four::{CELLS, COLUMNS, ROWS, STRIDE, has_line};
use crate::error::{Error, Result};
use crate::policy::{Decisions, Policy};

/// Depth-limited alpha–beta on connect four, read from its observation tensor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ConnectFourSearch {
    depth: u32,
}

/// A position as the search plays it.
#[derive(Clone, Copy)]
struct Position {
    /// The stones of the player to move, and of the other.
    mine: u64,
    theirs: u64,
    heights: [u8; COLUMNS],
}

impl Position {
    /// The position a tensor shows (plane 0 the first player's stones, plane 1 the
    /// second's), the player to move by the stones' count.
    fn of(tensor: &[f32]) -> Result<Self> {
        if tensor.len() != 3 * CELLS {
            return Err(Error::Shape(format!(
                "a connect-four tensor has {} values, not {}",
                3 * CELLS,
                tensor.len()
            )));
        }
        let mut stones = [0u64; 2];
        let mut heights = [0u8; COLUMNS];
        for (column, height) in heights.iter_mut().enumerate() {
            for row in 0..ROWS {
                let cell = row * COLUMNS + column;
                for (p, s) in stones.iter_mut().enumerate() {
                    if tensor[p * CELLS + cell] > 0.5 {
                        *s |= 1 << (column * STRIDE + row);
                        *height = (*height).max(row as u8 + 1);
                    }
                }
            }
        }
        let count = (stones[0].count_ones() + stones[1].count_ones()) as usize;
        let mover = count % 2;
        Ok(Self { mine: stones[mover], theirs: stones[1 - mover], heights })
    }

    /// The position after the mover drops a stone in `column` (open), seen by the next mover.
    fn play(self, column: usize) -> (Self, bool) {
        let mine = self.mine | 1 << (column * STRIDE + usize::from(self.heights[column]));
        let mut heights = self.heights;
        heights[column] += 1;
        (Self { mine: self.theirs, theirs: mine, heights }, has_line(mine))
    }

    fn open(&self, column: usize) -> bool {
        usize::from(self.heights[column]) < ROWS
    }

    /// Negamax value for the mover, `depth` plies deep.
    fn value(self, depth: u32, mut alpha: i32, beta: i32) -> i32 {
        if depth == 0 {
            return 0;
        }
        let mut best = i32::MIN;
        let mut any = false;
        // Centre columns first: more cut-offs.
        for column in [3, 2, 4, 1, 5, 0, 6] {
            if !self.open(column) {
                continue;
            }
            any = true;
            let (next, won) = self.play(column);
            let v = if won { 1 } else { -next.value(depth - 1, -beta, -alpha) };
            best = best.max(v);
            alpha = alpha.max(v);
            if alpha >= beta {
                break;
            }
        }
        if any { best } else { 0 }
    }
}

impl ConnectFourSearch {
    /// Search `depth` plies (at least 1).
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for a depth of 0 or past 12 (each ply multiplies the work by up to 7).
    pub fn new(depth: u32) -> Result<Self> {
        if !(1..=12).contains(&depth) {
            return Err(Error::Shape(format!("a search depth in 1..=12, not {depth}")));
        }
        Ok(Self { depth })
    }

    /// The plies searched.
    pub fn depth(&self) -> u32 {
        self.depth
    }
}

impl Policy for ConnectFourSearch {
    /// Uniform over the legal moves of best searched value.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for tensors that are not connect four's, or legal masks that are not
    /// its 7 columns.
    fn probabilities(&self, decisions: &Decisions<'_>, mut out: ArrayViewMut2<'_, f32>) -> Result<()> {
        if decisions.legal.ncols() != COLUMNS || out.dim() != decisions.legal.dim() {
            return Err(Error::Shape(format!(
                "connect four has {COLUMNS} moves, not {}",
                decisions.legal.ncols()
            )));
        }
        for (r, (tensor, legal)) in
            decisions.tensors.rows().into_iter().zip(decisions.legal.rows()).enumerate()
        {
            let tensor = tensor.as_slice().map_or_else(|| tensor.to_vec(), <[f32]>::to_vec);
            let position = Position::of(&tensor)?;
            let values: Vec<Option<i32>> = (0..COLUMNS)
                .map(|c| {
                    (legal[c] && position.open(c)).then(|| {
                        let (next, won) = position.play(c);
                        if won { 1 } else { -next.value(self.depth - 1, -1, 1) }
                    })
                })
                .collect();
            let best = values.iter().flatten().copied().max();
            let mut row = out.row_mut(r);
            row.fill(0.0);
            let Some(best) = best else { continue };
            let count = values.iter().filter(|v| **v == Some(best)).count() as f32;
            for (c, v) in values.iter().enumerate() {
                if *v == Some(best) {
                    row[c] = 1.0 / count;
                }
            }
        }
        Ok(())
    }

    fn kind(&self) -> &str {
        "connect-four-search"
    }
}

#[cfg(test)]
mod tests {
    use ndarray::Array2;

    use super::*;
    use crate::game::{ActionId, Game, PlayerId, State};
    use crate::registry;

    /// The search's probabilities after `moves` from the start.
    fn answer(depth: u32, moves: &[usize]) -> Vec<f32> {
        let game = registry::load("connect_four").unwrap();
        let mut state = game.new_initial_state();
        for &m in moves {
            state.apply_action(ActionId(m));
        }
        let mut tensor = vec![0.0; 3 * CELLS];
        state.write_tensor(PlayerId(0), &mut tensor);
        let mut legal = vec![false; COLUMNS];
        for a in state.legal_actions() {
            legal[a.0] = true;
        }
        let tensors = Array2::from_shape_vec((1, 3 * CELLS), tensor).unwrap();
        let legal = Array2::from_shape_vec((1, COLUMNS), legal).unwrap();
        let player = PlayerId(moves.len() % 2);
        let d = Decisions { player, tensors: tensors.view(), legal: legal.view(), infosets: None };
        let mut out = Array2::zeros((1, COLUMNS));
        ConnectFourSearch::new(depth).unwrap().probabilities(&d, out.view_mut()).unwrap();
        out.row(0).to_vec()
    }

    #[test]
    fn it_takes_wins_blocks_losses_and_is_uniform_otherwise() {
        // The first player has three in column 0 (the second plays column 6): column 0 wins.
        let win = answer(1, &[0, 6, 0, 6, 0, 6]);
        assert_eq!(win, vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // The second player to move must block column 0; one ply sees no win and is uniform,
        // two plies see the loss everywhere else.
        let moves = [0, 6, 0, 6, 0];
        assert_eq!(answer(1, &moves), vec![1.0 / 7.0; 7]);
        assert_eq!(answer(2, &moves), vec![1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // A full column is never chosen.
        let full = answer(3, &[0, 0, 0, 0, 0, 0]);
        assert_eq!(full[0], 0.0);
        assert!((full.iter().sum::<f32>() - 1.0).abs() < 1e-6);
        assert!(ConnectFourSearch::new(0).is_err() && ConnectFourSearch::new(13).is_err());
    }
}
