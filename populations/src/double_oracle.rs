//! Double Oracle (McMahan, Gordon & Blum 2003) on 2-player zero-sum normal-form games.
//!
//! Restricted strategy sets grow by each player's pure best response (in the full game) to
//! the opponent's restricted equilibrium, until no best response is new or improves by
//! more than the tolerance. Terminates in finitely many steps with a Nash equilibrium of
//! the full game.

use std::time::Instant;

use metagame_games::NormalFormGame;
use metagame_solvers::MetaSolver;
use metagame_solvers::lp::LpNash;
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::{IterationReport, PhaseTimes};

/// Double Oracle's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DoubleOracleResult {
    /// Iterations run (the last one adds nothing when it converged).
    pub iterations: usize,
    /// True when it stopped because no best response was new or improving.
    pub converged: bool,
    /// The restricted strategy sets (indices into the full game), in the order added.
    pub restricted: Vec<Vec<usize>>,
    /// The equilibrium as full-game mixed strategies.
    pub strategies: Vec<Vec<f64>>,
    /// The game's value for player 0.
    pub value: f64,
    /// NashConv of `strategies` in the full game.
    pub nash_conv: f64,
    /// One report per iteration.
    pub reports: Vec<IterationReport>,
}

/// Run Double Oracle from the given initial strategies (OpenSpiel's RPS example starts
/// from strategy 0 for both players).
///
/// # Errors
///
/// [`Error::Config`] for a game that is not 2-player constant-sum or initial strategies out
/// of range; LP errors.
pub fn double_oracle(
    game: &NormalFormGame,
    initial: [usize; 2],
    max_iterations: usize,
    tolerance: f64,
) -> Result<DoubleOracleResult> {
    let start = Instant::now();
    let scale = game.payoff_scale();
    if !game.is_two_player_constant_sum(1e-9 * scale) {
        return Err(Error::Config("double oracle needs a 2-player zero-sum (constant-sum) game".into()));
    }
    if initial[0] >= game.num_strategies(0) || initial[1] >= game.num_strategies(1) {
        return Err(Error::Config(format!("initial strategies {initial:?} out of range")));
    }
    // INVARIANT: two players (checked above).
    let (a, b) = game.bimatrix_payoffs().expect("2-player game");
    let mut sets = vec![vec![initial[0]], vec![initial[1]]];
    let mut reports = Vec::new();
    let mut full = vec![Vec::new(), Vec::new()];
    let mut value = 0.0;
    let mut converged = false;
    let mut iterations = 0;
    while iterations < max_iterations {
        iterations += 1;
        let t = Instant::now();
        let restricted = NormalFormGame::bimatrix(
            Array2::from_shape_fn((sets[0].len(), sets[1].len()), |(i, j)| a[[sets[0][i], sets[1][j]]]),
            Array2::from_shape_fn((sets[0].len(), sets[1].len()), |(i, j)| b[[sets[0][i], sets[1][j]]]),
        )?;
        let solution = LpNash::default()
            .solve(&restricted)
            .map_err(|source| Error::MetaSolver { solver: "lp", source })?;
        let meta_solve_s = t.elapsed().as_secs_f64();
        for p in 0..2 {
            full[p] = vec![0.0; game.num_strategies(p)];
            for (k, &s) in sets[p].iter().enumerate() {
                full[p][s] += solution.strategies[p][k].max(0.0);
            }
        }
        value = game.expected_payoffs(&full)[0];
        let deviations = game.deviation_payoffs(&full);
        let gains = game.deviation_gains(&full);
        let mut added = false;
        for p in 0..2 {
            // Lowest-index best response, added when it is new and improves.
            let best = deviations[p].iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let br = deviations[p].iter().position(|&v| v == best).unwrap_or(0);
            if gains[p] > tolerance && !sets[p].contains(&br) {
                sets[p].push(br);
                added = true;
            }
        }
        reports.push(IterationReport {
            iteration: iterations,
            population_sizes: sets.iter().map(Vec::len).collect(),
            meta_strategies: solution.strategies.clone(),
            nash_conv: gains.iter().sum(),
            exploitability: Some(gains.iter().sum::<f64>() / 2.0),
            meta_nash_conv: solution.certificate.nash_conv,
            meta_status: solution.status,
            new_entries: 0,
            episodes: 0,
            elapsed_s: start.elapsed().as_secs_f64(),
            times: PhaseTimes { meta_solve_s, ..PhaseTimes::default() },
        });
        if !added {
            converged = true;
            break;
        }
    }
    let nash_conv = game.nash_conv(&full);
    Ok(DoubleOracleResult {
        iterations,
        converged,
        restricted: sets,
        strategies: full,
        value,
        nash_conv,
        reports,
    })
}
