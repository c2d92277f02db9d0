//! The `nash` meta-solver: a certified Nash equilibrium of the meta-game, by a documented
//! chain of exact methods, or an error when none of them certifies one.

use metagame_games::NormalFormGame;

use crate::lemke_howson::LemkeHowson;
use crate::logit::Logit;
use crate::lp::LpNash;
use crate::support_enumeration::equilibrium_on_support;
use crate::{MetaSolver, Solution, SolveError, Status};

/// A certified Nash equilibrium of the meta-game. Methods are tried in order and the first
/// answer that is `solved` with NashConv ≤ [`Nash::CERTIFICATE_TOLERANCE`] × the payoff scale
/// is returned:
///
/// - 2-player constant-sum (PSRO is then Double Oracle): the zero-sum LP (which falls back to
///   an interior-point solve itself), then Lemke–Howson (which tries every label), then an
///   exact solve on the support of the best answer so far;
/// - other 2-player games: Lemke–Howson, then the support of its answer;
/// - 3 or more players: the logit quantal-response path with Newton refinement on the
///   supports it finds ([`Logit`]).
///
/// When nothing certifies, [`SolveError::Numerical`] says what each method ended with: a
/// training loop stops there instead of continuing from an uncertified mixture.
///
/// The solver keeps one [`LpNash`] across solves, so that warm solves of a growing
/// constant-sum meta-game (PSRO's) resume from the last one's tableau (see
/// [`LpNash::solve_zero_sum_from`]); a clone starts with nothing remembered.
#[derive(Clone, Debug, Default)]
pub struct Nash {
    lp: LpNash,
}

impl Nash {
    /// Largest NashConv, relative to the meta-game's payoff scale, accepted as an equilibrium.
    pub const CERTIFICATE_TOLERANCE: f64 = 1e-9;

    fn certified(game: &NormalFormGame, solution: &Solution) -> bool {
        let nash_conv = solution.certificate.nash_conv;
        solution.status == Status::Solved
            && nash_conv.is_finite()
            && nash_conv <= Self::CERTIFICATE_TOLERANCE * game.payoff_scale().max(f64::MIN_POSITIVE)
    }
}

impl MetaSolver for Nash {
    fn name(&self) -> &'static str {
        "nash"
    }
    fn solve(&self, game: &NormalFormGame) -> crate::Result<Solution> {
        self.solve_with(game, None)
    }

    /// The same chain, each method warm-started from `start` (the zero-sum LP uses it; see
    /// [`LpNash::solve_zero_sum_from`]).
    fn solve_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> crate::Result<Solution> {
        self.solve_with(game, Some(start))
    }

    /// The LP's memory (see [`LpNash::memory`]).
    fn memory(&self) -> Option<crate::SolverMemory> {
        self.lp.memory().map(crate::SolverMemory::Lp)
    }

    fn restore_memory(&self, game: &NormalFormGame, memory: &crate::SolverMemory) -> crate::Result<()> {
        MetaSolver::restore_memory(&self.lp, game, memory)
    }

    /// A warm solve of a two-player game tries the zero-sum LP on the members first
    /// ([`LpNash`]'s `solve_collapsed`); otherwise, and when that does not certify, the chain
    /// runs on the expanded game as the default does.
    fn solve_collapsed(
        &self,
        game: &NormalFormGame,
        copies: &crate::Copies,
        start: Option<&[Vec<f64>]>,
    ) -> crate::Result<Solution> {
        if let Some(start) = start
            && game.num_players() == 2
            && let Ok(solution) = self.lp.solve_collapsed(game, copies, Some(start))
            && Self::certified(game, &solution)
        {
            return Ok(solution);
        }
        crate::solution::solve_expanded(self, game, copies, start)
    }
}

impl Nash {
    fn solve_with(&self, game: &NormalFormGame, start: Option<&[Vec<f64>]>) -> crate::Result<Solution> {
        let (logit, lemke_howson) = (Logit::default(), LemkeHowson::default());
        // The LP refuses games that are not constant-sum (within the same relative
        // tolerance), so it is tried first on every two-player game.
        let methods: Vec<&dyn MetaSolver> =
            if game.num_players() != 2 { vec![&logit] } else { vec![&self.lp, &lemke_howson] };

        let mut tried: Vec<String> = Vec::new();
        let mut best: Option<Solution> = None;
        for method in methods {
            let answer = match start {
                Some(start) => method.solve_from(game, start),
                None => method.solve(game),
            };
            match answer {
                Ok(solution) if Self::certified(game, &solution) => return Ok(solution),
                Err(SolveError::Unsupported { .. }) if method.name() == "lp" => {}
                Ok(solution) => {
                    tried.push(format!(
                        "{} ended {:?} with NashConv {:.3e}",
                        method.name(),
                        solution.status,
                        solution.certificate.nash_conv
                    ));
                    let better = best
                        .as_ref()
                        .is_none_or(|b| solution.certificate.nash_conv < b.certificate.nash_conv);
                    if better && solution.certificate.nash_conv.is_finite() {
                        best = Some(solution);
                    }
                }
                Err(e) => tried.push(format!("{} failed: {e}", method.name())),
            }
        }
        // Last (2 players): the exact equilibrium on the support of the best answer.
        if let Some(b) = best.as_ref().filter(|_| game.num_players() == 2) {
            let supports: Vec<Vec<usize>> =
                b.strategies.iter().map(|s| (0..s.len()).filter(|&i| s[i] > 1e-9).collect()).collect();
            match equilibrium_on_support(game, &supports) {
                Ok(Some(solution)) if Self::certified(game, &solution) => return Ok(solution),
                Ok(_) => tried.push("no equilibrium on the best answer's support".into()),
                Err(e) => tried.push(format!("support solve failed: {e}")),
            }
        }
        Err(SolveError::Numerical {
            solver: "nash",
            reason: format!("no method certified an equilibrium ({})", tried.join("; ")),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn, array};

    #[test]
    fn certifies_zero_sum_general_sum_and_three_player_games() {
        let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]).unwrap();
        let bos = NormalFormGame::bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]]).unwrap();
        // Three-player matching pennies: 0 wants to match 1, 1 to match 2, 2 to mismatch 0.
        let pennies: Vec<ArrayD<f64>> = (0..3)
            .map(|p| {
                ArrayD::from_shape_fn(IxDyn(&[2, 2, 2]), |i| {
                    let same = match p {
                        0 => i[0] == i[1],
                        1 => i[1] == i[2],
                        _ => i[2] != i[0],
                    };
                    if same { 1.0 } else { -1.0 }
                })
            })
            .collect();
        let pennies = NormalFormGame::new(pennies).unwrap();
        for game in [rps, bos, pennies] {
            let s = Nash::default().solve(&game).unwrap();
            assert_eq!(s.status, Status::Solved);
            assert!(s.certificate.nash_conv <= Nash::CERTIFICATE_TOLERANCE * game.payoff_scale());
        }
    }
}
