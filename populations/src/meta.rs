//! Meta-strategy solvers that only PSRO needs, beside the solvers crate's: `Uniform`
//! (fictitious self-play) and `Nash` (a certified equilibrium by a chain of exact methods).
//! Names become solvers in the umbrella crate's registry (`metagame::registry`), not here.

use metagame_games::NormalFormGame;
use metagame_solvers::{MetaSolver, Solution, Status};

/// σ_i = 1/|Π_i|: PSRO becomes fictitious play.
#[derive(Clone, Copy, Debug, Default)]
pub struct Uniform;

impl MetaSolver for Uniform {
    fn name(&self) -> &'static str {
        "uniform"
    }
    fn solve(&self, game: &NormalFormGame) -> metagame_solvers::Result<Solution> {
        let strategies = game.shape().iter().map(|&k| vec![1.0 / k as f64; k]).collect();
        Ok(Solution::new(game, strategies, Status::Solved, 0))
    }
}

pub use crate::nash::Nash;
