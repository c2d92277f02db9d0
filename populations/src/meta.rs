//! Meta-strategy solvers as PSRO uses them: the solvers crate's, plus `Uniform` (fictitious
//! self-play) and `Nash` (LP for 2-player constant-sum, Lemke–Howson otherwise).

use metagame_games::NormalFormGame;
use metagame_solvers::regret_matching::RegretMatching;
use metagame_solvers::replicator::ProjectedReplicator;
use metagame_solvers::{MetaSolver, Solution, SolveError, Status};

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

/// Names accepted by [`meta_solver_by_name`].
pub const META_SOLVERS: &[&str] = &["uniform", "nash", "prd", "rm", "alpha-rank", "cce"];

/// The meta-solver a config names, with the settings of OpenSpiel's psro_v2 (PRD: 50 000
/// steps and floor 1e-10 as in its example; rm: plain regret matching).
///
/// # Errors
///
/// [`SolveError::UnknownSolver`] listing [`META_SOLVERS`].
pub fn meta_solver_by_name(name: &str) -> metagame_solvers::Result<Box<dyn MetaSolver>> {
    Ok(match name {
        "uniform" => Box::new(Uniform),
        "nash" => Box::new(Nash),
        // OpenSpiel's psro_v2 example: 50 000 PRD steps, floor 1e-10.
        "prd" => Box::new(ProjectedReplicator::default().with_iterations(50_000).with_gamma(1e-10)),
        // OpenSpiel's "rm" meta-solver is plain regret matching (1e5 iterations, γ = 1e-6).
        "rm" => Box::new(RegretMatching::plain()),
        "alpha-rank" => metagame_solvers::registry::solver_by_name("alpha-rank", None)?,
        "cce" => metagame_solvers::registry::solver_by_name("cce", None)?,
        other => {
            return Err(SolveError::UnknownSolver { name: other.into(), known: META_SOLVERS.join(", ") });
        }
    })
}
