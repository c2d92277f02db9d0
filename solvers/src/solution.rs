//! What every solver returns: strategies, a status, and a certificate computed independently
//! of the solver from the game itself.

use metagame_games::NormalFormGame;
use ndarray::ArrayD;
use serde::{Deserialize, Serialize};

/// How a solve ended. Hitting a cap is a status, never an error.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Status {
    /// The method finished and its answer is exact up to floating point (LP, pivoting,
    /// enumeration) or met its convergence tolerance (iterative methods).
    Solved,
    /// An iterative method used all its iterations; the certificate says how good the answer is.
    MaxIterations,
    /// The game is degenerate: an enumeration's list may be incomplete (support enumeration),
    /// or a pivoting method needed its tie-breaking rule.
    Degenerate,
    /// The Markov chain (alpha-Rank) has several stationary distributions; all are returned.
    MultipleStationary,
}

/// Proof of quality, computed from the game and the returned strategies only.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Certificate {
    /// Each player's gain from its best pure deviation.
    pub deviation_gains: Vec<f64>,
    /// Σ deviation gains: 0 exactly at a Nash equilibrium.
    pub nash_conv: f64,
    /// Zero-sum LPs: |primal value − dual value|.
    pub primal_dual_gap: Option<f64>,
    /// CE/CCE: the largest violation of an (coarse) correlated equilibrium constraint.
    pub max_violation: Option<f64>,
}

impl Certificate {
    /// The Nash certificate of a mixed profile.
    ///
    /// # Panics
    ///
    /// If `strategies` does not have one vector per player of the right lengths (a solver bug).
    #[track_caller]
    pub fn for_profile(game: &NormalFormGame, strategies: &[Vec<f64>]) -> Self {
        let deviation_gains = game.deviation_gains(strategies);
        let nash_conv = deviation_gains.iter().sum();
        Self { deviation_gains, nash_conv, primal_dual_gap: None, max_violation: None }
    }
}

/// A solver's answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Solution {
    /// One mixed strategy per player (for CE/CCE: the marginals of `joint`).
    pub strategies: Vec<Vec<f64>>,
    /// How the solve ended.
    pub status: Status,
    /// The certificate of `strategies` (and of `joint` for CE/CCE).
    pub certificate: Certificate,
    /// Iterations (iterative methods), pivots (Lemke–Howson) or candidates examined.
    pub iterations: usize,
    /// CE/CCE: the joint distribution over pure profiles, shaped like the payoff tensor.
    pub joint: Option<ArrayD<f64>>,
    /// alpha-Rank: the stationary distribution(s) over pure profiles, row-major flattened
    /// (profile index as in the payoff tensor's standard layout).
    pub stationary: Vec<Vec<f64>>,
}

impl Solution {
    /// A solution for a mixed profile, with its Nash certificate.
    #[track_caller]
    pub fn new(game: &NormalFormGame, strategies: Vec<Vec<f64>>, status: Status, iterations: usize) -> Self {
        let certificate = Certificate::for_profile(game, &strategies);
        Self { strategies, status, certificate, iterations, joint: None, stationary: Vec::new() }
    }

    /// True when every strategy is a probability distribution within `tolerance`.
    pub fn is_distribution(&self, tolerance: f64) -> bool {
        self.strategies.iter().all(|s| {
            s.iter().all(|&p| p.is_finite() && p >= -tolerance)
                && (s.iter().sum::<f64>() - 1.0).abs() <= tolerance
        })
    }
}

/// One mixed strategy per player for a normal-form game, with its proof.
pub trait MetaSolver: Send + Sync {
    /// Short stable name used in configs and reports ("lp", "rm+", "prd").
    fn name(&self) -> &'static str;

    /// Solve the game. Hitting an iteration cap is a `status`, not an `Err`.
    ///
    /// # Errors
    ///
    /// [`crate::SolveError::Unsupported`] for games this solver does not handle.
    fn solve(&self, game: &NormalFormGame) -> crate::Result<Solution>;

    /// Every equilibrium this solver can find (enumeration methods override this; the
    /// default is the one answer of [`MetaSolver::solve`]).
    ///
    /// # Errors
    ///
    /// As [`MetaSolver::solve`].
    fn solve_all(&self, game: &NormalFormGame) -> crate::Result<Vec<Solution>> {
        Ok(vec![self.solve(game)?])
    }
}
