//! Hedge / multiplicative weights (Freund & Schapire 1997) for n-player normal-form games.

use metagame_games::NormalFormGame;
use serde::{Deserialize, Serialize};

use crate::dynamics::{self, Kernel};
use crate::settings::{IterativeSettings, iterative_settings};
use crate::{Copies, MetaSolver, Result, Solution, Status};

/// Hedge's step size η.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum LearningRate {
    /// `η = √(8 ln K / T) / scale` for a player with K strategies, T iterations and payoff
    /// range `scale` (`NormalFormGame::payoff_scale`): the horizon-optimal rate, regret
    /// ≤ scale·√(T ln K / 2).
    Theory,
    /// A fixed η (must be positive and finite). The PSRO paper's Hedge meta-solver
    /// (Lanctot et al. 2017, §3) uses `γ/(K+1)`.
    Fixed(f64),
}

/// Hedge with simultaneous updates, returning the average strategies.
///
/// Each player keeps cumulative payoffs `x_k += u_i(k, σ_{-i})`; the next strategy is
/// `σ_i ∝ exp(η·(x_k − max x))` (shifted for stability), mixed with uniform by γ. The answer
/// is the uniform average of the strategies played. In two-player zero-sum games the
/// averages converge to a Nash equilibrium at rate O(√(ln K / T)).
///
/// Defaults: 100 000 iterations, γ = 1e-6 (as OpenSpiel's regret matching),
/// [`LearningRate::Theory`].
///
/// # Complexity
///
/// O(iterations · Σ_p |S_p|·|S_{-p}|) for two players, O(iterations · n · |profiles|) otherwise.
///
/// # References
///
/// Y. Freund, R. E. Schapire, *A decision-theoretic generalization of on-line learning and an
/// application to boosting*, JCSS 55, 1997; M. Lanctot et al., *A unified game-theoretic
/// approach to multiagent reinforcement learning*, arXiv:1711.00832, 2017.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, hedge::Hedge};
/// use ndarray::array;
///
/// let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]])?;
/// let sol = Hedge::default().with_iterations(10_000).solve(&rps)?;
/// assert!(sol.certificate.nash_conv < 5e-2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hedge {
    #[serde(flatten)]
    settings: IterativeSettings,
    gamma: f64,
    learning_rate: LearningRate,
}

impl Default for Hedge {
    fn default() -> Self {
        Self { settings: IterativeSettings::default(), gamma: 1e-6, learning_rate: LearningRate::Theory }
    }
}

iterative_settings!(Hedge, settings, default_iterations = "100 000");

impl Hedge {
    const NAME: &'static str = "hedge";

    /// The same solver with uniform-mixing weight `gamma` in [0, 1) (default 1e-6).
    pub fn with_gamma(mut self, gamma: f64) -> Self {
        self.gamma = gamma;
        self
    }

    /// The same solver with another step size (default [`LearningRate::Theory`]).
    pub fn with_learning_rate(mut self, learning_rate: LearningRate) -> Self {
        self.learning_rate = learning_rate;
        self
    }
}

impl MetaSolver for Hedge {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        self.run(game, &Copies::identity(game.shape()), None)
    }

    /// Hedge from `start`: the cumulative payoffs begin at `x_k = ln(start_k)/η` (instead of
    /// 0), so the first strategy played is `start` (mixed with uniform by γ) and the start
    /// weighs as much as the payoffs that would have made Hedge play it. The average begins
    /// empty, as cold. With a target NashConv, a start that meets it is returned at once
    /// (0 iterations).
    ///
    /// A strategy at 0 in the start begins at `ln(f64::MIN_POSITIVE)/η`, far below the others:
    /// give strategies that are new to the game a positive mass ([`crate::Solution::extend_start`]).
    fn solve_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> Result<Solution> {
        self.run(game, &Copies::identity(game.shape()), Some(start))
    }

    /// Hedge on `game` with each member standing for its copies: the expanded game's
    /// iterates folded, at the collapsed game's cost per step.
    fn solve_collapsed(
        &self,
        game: &NormalFormGame,
        copies: &Copies,
        start: Option<&[Vec<f64>]>,
    ) -> Result<Solution> {
        self.run(game, copies, start)
    }
}

impl Hedge {
    /// Hedge on the expanded game of `copies`, folded onto `game`'s members.
    ///
    /// Why the folded iterates are the expanded game's: copies have the same payoffs, so
    /// copies whose cumulative payoffs start equal keep them equal; `cumulative[p][m]` is each
    /// copy's (not folded) and the strategies are folded,
    /// `σ_m = w_m·γ/K + (1 − γ)·w_m·e^{η(x_m − max x)} / Σ_j w_j·e^{η(x_j − max x)}` with `K`
    /// the expanded strategy count (which also sets [`LearningRate::Theory`]'s η). A warm
    /// start over members gives each copy `x = ln(start_m / w_m)/η`, the expanded warm start
    /// of the evenly split start.
    fn run(&self, game: &NormalFormGame, copies: &Copies, start: Option<&[Vec<f64>]>) -> Result<Solution> {
        copies.check(Self::NAME, game)?;
        self.settings.check_iterations(Self::NAME)?;
        dynamics::check_gamma(Self::NAME, self.gamma)?;
        self.settings.stopping.validate(Self::NAME)?;
        let scale = game.payoff_scale();
        let rates: Vec<f64> = match self.learning_rate {
            LearningRate::Fixed(eta) if eta.is_finite() && eta > 0.0 => vec![eta; game.num_players()],
            LearningRate::Fixed(eta) => {
                return Err(dynamics::invalid(Self::NAME, format!("learning rate must be > 0, got {eta}")));
            }
            LearningRate::Theory => copies
                .expanded_shape()
                .iter()
                .map(|&k| (8.0 * (k.max(2) as f64).ln() / self.settings.iterations as f64).sqrt() / scale)
                .collect(),
        };
        let start = start.map(|s| dynamics::checked_start(Self::NAME, game, s)).transpose()?;
        let mut kernel = Kernel::new(game);
        let mut current = dynamics::uniform(copies);
        let mut cumulative = dynamics::zeros(game);
        let mut sum = dynamics::zeros(game);
        let mut values = dynamics::zeros(game);
        if let Some(start) = start {
            // A start that already meets the target is the answer.
            if self.settings.stopping.target_nash_conv.is_some() {
                kernel.deviation_payoffs(&start, &mut values);
                if self.settings.stopping.reached(dynamics::nash_conv_from(&start, &values)) {
                    return Ok(Solution::new(game, start, Status::Solved, 0));
                }
            }
            for (p, (((x, c), s), &eta)) in
                cumulative.iter_mut().zip(current.iter_mut()).zip(&start).zip(&rates).enumerate()
            {
                let w = copies.weights(p);
                x.iter_mut()
                    .zip(s)
                    .zip(w)
                    .for_each(|((x, &p), &w)| *x = (p / w).max(f64::MIN_POSITIVE).ln() / eta);
                let k = copies.of(p).len() as f64;
                c.iter_mut()
                    .zip(s)
                    .zip(w)
                    .for_each(|((c, &p), &w)| *c = self.gamma * w / k + (1.0 - self.gamma) * p);
            }
        }
        let mut status = Status::MaxIterations;
        let mut done = self.settings.iterations;
        for t in 1..=self.settings.iterations {
            for (s, c) in sum.iter_mut().zip(&current) {
                s.iter_mut().zip(c).for_each(|(a, &b)| *a += b);
            }
            if self.settings.stopping.is_checkpoint(t) {
                let mut avg: Vec<Vec<f64>> =
                    sum.iter().map(|s| s.iter().map(|x| x / t as f64).collect()).collect();
                dynamics::normalise(&mut avg);
                let mut v = dynamics::zeros(game);
                kernel.deviation_payoffs(&avg, &mut v);
                if self.settings.stopping.reached(dynamics::nash_conv_from(&avg, &v)) {
                    status = Status::Solved;
                    done = t;
                    break;
                }
            }
            kernel.deviation_payoffs(&current, &mut values);
            for (p, (((x, v), c), &eta)) in
                cumulative.iter_mut().zip(&values).zip(current.iter_mut()).zip(&rates).enumerate()
            {
                let w = copies.weights(p);
                x.iter_mut().zip(v).for_each(|(x, &u)| *x += u);
                let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let mut total = 0.0;
                for ((c, &x), &w) in c.iter_mut().zip(x.iter()).zip(w) {
                    *c = w * (eta * (x - top)).exp();
                    total += *c;
                }
                let k = copies.of(p).len() as f64;
                c.iter_mut()
                    .zip(w)
                    .for_each(|(c, &w)| *c = self.gamma * w / k + (1.0 - self.gamma) * *c / total);
            }
        }
        let mut average: Vec<Vec<f64>> =
            sum.iter().map(|s| s.iter().map(|x| x / done.max(1) as f64).collect()).collect();
        dynamics::normalise(&mut average);
        Ok(Solution::new(game, average, status, done))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn converges_on_pennies() {
        let pennies = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        let sol = Hedge::default().with_iterations(20_000).solve(&pennies).unwrap();
        assert!(sol.certificate.nash_conv < 2e-2, "{}", sol.certificate.nash_conv);
    }

    #[test]
    fn rejects_bad_rate() {
        let pennies = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        assert!(Hedge::default().with_learning_rate(LearningRate::Fixed(0.0)).solve(&pennies).is_err());
    }
}
