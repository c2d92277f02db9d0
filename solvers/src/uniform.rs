//! The `uniform` meta-solver: every strategy of every player equally likely (PSRO with it is
//! fictitious self-play).

use metagame_games::NormalFormGame;

use crate::{MetaSolver, Solution, Status};

/// σ_i = 1/|Π_i|: PSRO becomes fictitious play.
#[derive(Clone, Copy, Debug, Default)]
pub struct Uniform;

impl MetaSolver for Uniform {
    fn name(&self) -> &'static str {
        "uniform"
    }
    fn solve(&self, game: &NormalFormGame) -> crate::Result<Solution> {
        let strategies = game.shape().iter().map(|&k| vec![1.0 / k as f64; k]).collect();
        Ok(Solution::new(game, strategies, Status::Solved, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn every_strategy_is_equally_likely() {
        let game =
            NormalFormGame::bimatrix(array![[1., 0., 2.], [0., 1., 3.]], array![[0., 1., 0.], [2., 0., 1.]])
                .unwrap();
        let s = Uniform.solve(&game).unwrap();
        assert_eq!(s.strategies, vec![vec![0.5; 2], vec![1.0 / 3.0; 3]]);
        assert_eq!((s.status, s.iterations), (Status::Solved, 0));
    }
}
