//! Double Oracle (McMahan, Gordon & Blum 2003) on 2-player zero-sum normal-form games.
//!
//! Restricted strategy sets grow by each player's pure best response (in the full game) to
//! the opponent's restricted equilibrium, until no best response is new or improves by
//! more than the tolerance. Terminates in finitely many steps with a Nash equilibrium of
//! the full game.

use std::time::Instant;

use metagame_games::NormalFormGame;
use metagame_solvers::lp::LpNash;
use metagame_solvers::{MetaSolver, Status};
use ndarray::Array2;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::report::{IterationReport, MetaGameReport, PhaseTimes, StopReason};
use crate::settings::{built_by, setters};
use crate::training_loop::{RunLimits, TrainingLoop, run_loop};

/// Double Oracle settings; always valid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "DoubleOracleConfigBuilder", into = "DoubleOracleConfigBuilder")]
pub struct DoubleOracleConfig {
    tolerance: f64,
}

/// Serde form of [`DoubleOracleConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DoubleOracleConfigBuilder {
    /// Add a best response only if it gains more than this (finite, ≥ 0). Default 1e-12.
    pub tolerance: Option<f64>,
}

impl DoubleOracleConfigBuilder {
    /// The names of the fields, as configs spell them.
    pub const FIELDS: &'static [&'static str] = &["tolerance"];

    setters!(tolerance: f64);

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field out of range.
    pub fn build(self) -> Result<DoubleOracleConfig> {
        DoubleOracleConfig::new(self.tolerance.unwrap_or(1e-12))
    }
}

built_by!(DoubleOracleConfig, DoubleOracleConfigBuilder);

impl From<DoubleOracleConfig> for DoubleOracleConfigBuilder {
    fn from(c: DoubleOracleConfig) -> Self {
        DoubleOracleConfigBuilder { tolerance: Some(c.tolerance) }
    }
}

impl DoubleOracleConfig {
    /// Settings with `tolerance`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] unless `tolerance` is finite and ≥ 0.
    pub fn new(tolerance: f64) -> Result<Self> {
        if !(tolerance.is_finite() && tolerance >= 0.0) {
            return Err(Error::Config(format!("tolerance must be ≥ 0, got {tolerance}")));
        }
        Ok(Self { tolerance })
    }
    /// A best response is added only if it gains more than this.
    pub fn tolerance(&self) -> f64 {
        self.tolerance
    }
}

/// Everything a Double Oracle run needs to continue.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DoubleOracleState {
    /// Iterations done.
    pub iteration: usize,
    /// The restricted strategy sets (indices into the full game), in the order added.
    pub restricted: Vec<Vec<usize>>,
    /// The last restricted equilibrium as full-game mixed strategies.
    pub strategies: Vec<Vec<f64>>,
    /// The game's value for player 0 under `strategies`.
    pub value: f64,
    /// True once an iteration added nothing new or improving.
    pub converged: bool,
}

impl DoubleOracleState {
    /// Check that the state is one Double Oracle on `game` could have saved (see
    /// [`DoubleOracle::resume`]).
    fn check(&self, game: &NormalFormGame, reports: &[IterationReport]) -> Result<()> {
        use crate::checkpoint::{STATE_TOLERANCE, check_distribution, check_nash_conv, check_reports};
        let bad = |why: String| Error::SavedState(why);
        if self.restricted.len() != 2 || self.strategies.len() != 2 {
            return Err(bad("restricted sets or strategies for other than 2 players".into()));
        }
        for p in 0..2 {
            let k = game.num_strategies(p);
            let set = &self.restricted[p];
            let distinct = set.iter().enumerate().all(|(i, s)| !set[..i].contains(s));
            if set.is_empty() || !distinct || set.iter().any(|&s| s >= k) {
                return Err(bad(format!(
                    "player {p}'s restricted set {set:?} is not a set of its {k} strategies"
                )));
            }
            check_distribution(&format!("player {p}'s strategy"), &self.strategies[p], k)?;
            if let Some(s) = (0..k).find(|s| self.strategies[p][*s] > STATE_TOLERANCE && !set.contains(s)) {
                return Err(bad(format!("player {p}'s strategy plays {s}, outside its restricted set")));
            }
        }
        let scale = game.payoff_scale();
        let value = game.expected_payoffs(&self.strategies)[0];
        let close = (self.value - value).abs() <= STATE_TOLERANCE * scale.max(1.0);
        if !close {
            return Err(bad(format!("the value {} is not the strategies' value {value}", self.value)));
        }
        check_reports(reports, 1, self.iteration)?;
        if let Some(last) = reports.last() {
            let sizes: Vec<usize> = self.restricted.iter().map(Vec::len).collect();
            if last.population_sizes != sizes {
                return Err(bad(format!(
                    "the last report has restricted sets of {:?}, the state {sizes:?}",
                    last.population_sizes
                )));
            }
            check_nash_conv(self.iteration, last.nash_conv, game.nash_conv(&self.strategies), scale)?;
        } else if self.converged {
            return Err(bad("converged before its first iteration".into()));
        }
        Ok(())
    }
}

/// An iteration computed but not yet committed.
struct Staged {
    restricted: Vec<Vec<usize>>,
    strategies: Vec<Vec<f64>>,
    value: f64,
    report: IterationReport,
}

/// A Double Oracle run on a 2-player constant-sum game.
pub struct DoubleOracle {
    game: NormalFormGame,
    config: DoubleOracleConfig,
    state: DoubleOracleState,
    /// The last committed iteration's report (none before the first).
    last: Option<IterationReport>,
}

impl DoubleOracle {
    /// Start from the given initial pure strategies (OpenSpiel's RPS example starts from
    /// strategy 0 for both players).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a game that is not 2-player constant-sum or initial strategies
    /// out of range.
    pub fn new(game: NormalFormGame, initial: [usize; 2], config: DoubleOracleConfig) -> Result<Self> {
        check_game(&game)?;
        if initial[0] >= game.num_strategies(0) || initial[1] >= game.num_strategies(1) {
            return Err(Error::Config(format!("initial strategies {initial:?} out of range")));
        }
        let strategies = (0..2)
            .map(|p| (0..game.num_strategies(p)).map(|s| if s == initial[p] { 1.0 } else { 0.0 }).collect())
            .collect::<Vec<Vec<f64>>>();
        let value = game.expected_payoffs(&strategies)[0];
        let state = DoubleOracleState {
            iteration: 0,
            restricted: vec![vec![initial[0]], vec![initial[1]]],
            strategies,
            value,
            converged: false,
        };
        Ok(Self { game, config, state, last: None })
    }

    /// Continue from a saved state and the run's reports, after checking them: two restricted sets of distinct
    /// strategies of the game, strategies that are distributions supported on them, the
    /// value they give, and reports of iterations 1 to `iteration`, the last one with these
    /// sets and the strategies' NashConv (recomputed).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a game that is not 2-player constant-sum; [`Error::SavedState`]
    /// naming what does not fit.
    pub fn resume(
        game: NormalFormGame,
        config: DoubleOracleConfig,
        state: DoubleOracleState,
        reports: &[IterationReport],
    ) -> Result<Self> {
        check_game(&game)?;
        state.check(&game, reports)?;
        Ok(Self { game, config, state, last: reports.last().cloned() })
    }

    /// The loop state.
    pub fn state(&self) -> &DoubleOracleState {
        &self.state
    }

    /// One iteration: solve the restricted game, add the best responses that are new and
    /// improve by more than the tolerance. Commits only on success.
    ///
    /// # Errors
    ///
    /// [`Error::AtIteration`] wrapping an LP failure; the state is then unchanged.
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let iteration = self.state.iteration + 1;
        let Staged { restricted, strategies, value, report } =
            self.stage(iteration).map_err(|e| Error::AtIteration { iteration, source: Box::new(e) })?;
        let converged = restricted == self.state.restricted;
        self.state.restricted = restricted;
        self.state.strategies = strategies;
        self.state.value = value;
        self.state.converged = converged;
        self.state.iteration = iteration;
        Ok(self.last.insert(report.after(self.last.as_ref())))
    }

    fn stage(&self, iteration: usize) -> Result<Staged> {
        let game = &self.game;
        let sets = &self.state.restricted;
        let t = Instant::now();
        // INVARIANT: two players (checked by new/resume).
        let (a, b) = game.bimatrix_payoffs().expect("2-player game");
        let restricted = NormalFormGame::bimatrix(
            Array2::from_shape_fn((sets[0].len(), sets[1].len()), |(i, j)| a[[sets[0][i], sets[1][j]]]),
            Array2::from_shape_fn((sets[0].len(), sets[1].len()), |(i, j)| b[[sets[0][i], sets[1][j]]]),
        )?;
        let solution = LpNash::default()
            .solve(&restricted)
            .map_err(|source| Error::MetaSolver { solver: "lp", source })?;
        let meta_solve_s = t.elapsed().as_secs_f64();
        let mut full = vec![Vec::new(), Vec::new()];
        for p in 0..2 {
            full[p] = vec![0.0; game.num_strategies(p)];
            for (k, &s) in sets[p].iter().enumerate() {
                full[p][s] += solution.strategies[p][k].max(0.0);
            }
        }
        let value = game.expected_payoffs(&full)[0];
        let deviations = game.deviation_payoffs(&full);
        let gains = game.deviation_gains(&full);
        let mut next = sets.clone();
        for p in 0..2 {
            // Lowest-index best response, added when it is new and improves.
            let best = deviations[p].iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let br = deviations[p].iter().position(|&v| v == best).unwrap_or(0);
            if gains[p] > self.config.tolerance && !next[p].contains(&br) {
                next[p].push(br);
            }
        }
        let nash_conv: f64 = gains.iter().sum();
        let mut report = IterationReport::new(
            iteration,
            next.iter().map(Vec::len).collect(),
            Some(nash_conv),
            Some(nash_conv / 2.0),
        );
        report.times = PhaseTimes { meta_solve_s, ..PhaseTimes::default() };
        report.meta_game = Some(MetaGameReport::new(
            solution.strategies.clone(),
            solution.certificate.nash_conv,
            solution.status,
            0,
        ));
        Ok(Staged { restricted: next, strategies: full, value, report })
    }
}

fn check_game(game: &NormalFormGame) -> Result<()> {
    if !game.is_two_player_constant_sum(1e-9 * game.payoff_scale()) {
        return Err(Error::Config("double oracle needs a 2-player zero-sum (constant-sum) game".into()));
    }
    Ok(())
}

impl TrainingLoop for DoubleOracle {
    type State = DoubleOracleState;

    fn name(&self) -> &'static str {
        "double-oracle"
    }
    fn step(&mut self) -> Result<&mut IterationReport> {
        DoubleOracle::step(self)
    }
    fn state(&self) -> &DoubleOracleState {
        &self.state
    }
    fn last_report(&self) -> Option<&IterationReport> {
        self.last.as_ref()
    }
    /// Converged: the last iteration added nothing new or improving.
    fn stop_reason(&self) -> Option<StopReason> {
        self.state.converged.then_some(StopReason::Converged)
    }
    /// The restricted game: the full game's payoffs among the strategies added so far, in
    /// the order they were added.
    fn meta_game(&self) -> Result<Option<NormalFormGame>> {
        // INVARIANT: two players (checked by new/resume).
        let (a, b) = self.game.bimatrix_payoffs().expect("2-player game");
        let sets = &self.state.restricted;
        let shape = (sets[0].len(), sets[1].len());
        Ok(Some(NormalFormGame::bimatrix(
            Array2::from_shape_fn(shape, |(i, j)| a[[sets[0][i], sets[1][j]]]),
            Array2::from_shape_fn(shape, |(i, j)| b[[sets[0][i], sets[1][j]]]),
        )?))
    }
}

/// Double Oracle's answer: the final state and its verdict.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct DoubleOracleResult {
    /// [`Status::Solved`] when it stopped because no best response was new or improving,
    /// [`Status::MaxIterations`] when the iteration cap came first.
    pub status: Status,
    /// NashConv of the final strategies in the full game.
    pub nash_conv: f64,
    /// The final state: iterations run, restricted sets, the equilibrium as full-game mixed
    /// strategies, the value for player 0.
    pub state: DoubleOracleState,
    /// One report per iteration.
    pub reports: Vec<IterationReport>,
}

/// Run Double Oracle from the given initial strategies to convergence or `max_iterations`.
///
/// # Errors
///
/// [`Error::Config`] for a game that is not 2-player constant-sum, initial strategies out
/// of range or a negative tolerance; LP errors.
pub fn double_oracle(
    game: &NormalFormGame,
    initial: [usize; 2],
    max_iterations: usize,
    tolerance: f64,
) -> Result<DoubleOracleResult> {
    let mut run = DoubleOracle::new(game.clone(), initial, DoubleOracleConfig::new(tolerance)?)?;
    let reports = run_loop(&mut run, &RunLimits::iterations(max_iterations), &mut ())?.reports;
    let state = run.state;
    Ok(DoubleOracleResult {
        status: if state.converged { Status::Solved } else { Status::MaxIterations },
        nash_conv: game.nash_conv(&state.strategies),
        state,
        reports,
    })
}
