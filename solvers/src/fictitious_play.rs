//! Fictitious play (Brown 1951; Robinson 1951) for n-player normal-form games.

use metagame_games::NormalFormGame;
use serde::{Deserialize, Serialize};

use crate::dynamics::{self, Kernel};
use crate::settings::{IterativeSettings, iterative_settings};
use crate::{Copies, MetaSolver, Result, Solution, Status};

/// Simultaneous fictitious play: every iteration each player best-responds (pure, lowest
/// index on ties; deviation payoffs within 1e-12 × the payoff scale of each other tie) to the
/// others' empirical averages, and the averages move towards the best responses,
/// `σ̄ ← σ̄ + (e_br − σ̄)/(t + 1)`, starting from uniform.
///
/// Returns the empirical averages. They converge to a Nash equilibrium in two-player
/// zero-sum games (Robinson 1951), at rate O(t^{-1/(n+m-2)}) in the worst case, and in
/// potential games; FP cycles on Shapley's game and 3-player matching pennies, where the
/// run ends with [`Status::MaxIterations`] and the certificate shows the gap.
///
/// Defaults: 10 000 iterations (OpenSpiel's matrix-game FP has no meta-solver default; this
/// is enough for NashConv ≈ 1e-2 on 10×10 zero-sum games), no early stop.
///
/// # Complexity
///
/// O(iterations · Σ_p |S_p|·|S_{-p}|) for two players, O(iterations · n · |profiles|) otherwise.
///
/// # References
///
/// G. W. Brown, *Iterative solution of games by fictitious play*, 1951; J. Robinson, *An
/// iterative method of solving a game*, Annals of Mathematics 54, 1951.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, fictitious_play::FictitiousPlay};
/// use ndarray::array;
///
/// let pennies = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]])?;
/// let sol = FictitiousPlay::default().solve(&pennies)?;
/// assert!(sol.certificate.nash_conv < 5e-2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FictitiousPlay {
    #[serde(flatten)]
    settings: IterativeSettings,
}

impl Default for FictitiousPlay {
    fn default() -> Self {
        Self { settings: IterativeSettings { iterations: 10_000, ..IterativeSettings::default() } }
    }
}

iterative_settings!(FictitiousPlay, settings, default_iterations = "10 000");

impl FictitiousPlay {
    const NAME: &'static str = "fictitious-play";
}

/// Deviation payoffs within this × the payoff scale of the best tie: far above their
/// rounding (about K·2⁻⁵² × scale), far below a real difference in a meta-game.
const TIE_TOLERANCE: f64 = 1e-12;

impl MetaSolver for FictitiousPlay {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        self.run(game, &Copies::identity(game.shape()), None)
    }

    /// Fictitious play from `start`: the empirical averages begin at `start`, which counts as
    /// `m = ⌈payoff_scale / NashConv(start)⌉` earlier iterations (clamped to
    /// `1..=iterations`; cold play counts uniform as 1), so step `t` moves the averages by
    /// `1/(t + m)` instead of `1/(t + 1)`. Fictitious play's NashConv typically falls like
    /// `scale/t`, so `m` is about the number of iterations a cold run needs to reach the
    /// start's quality: a good start moves little, a poor one is soon forgotten. With a
    /// target NashConv, a start that meets it is returned at once (0 iterations).
    fn solve_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> Result<Solution> {
        self.run(game, &Copies::identity(game.shape()), Some(start))
    }

    /// Fictitious play on `game` with each member standing for its copies: the expanded
    /// game's averages folded, at the collapsed game's cost per step. Ties between best
    /// responses go to the member whose first copy has the lowest index, as in the expanded
    /// game.
    fn solve_collapsed(
        &self,
        game: &NormalFormGame,
        copies: &Copies,
        start: Option<&[Vec<f64>]>,
    ) -> Result<Solution> {
        self.run(game, copies, start)
    }
}

impl FictitiousPlay {
    /// Fictitious play on the expanded game of `copies`, folded onto `game`'s members.
    ///
    /// Why the folded averages are the expanded game's: a best response to the others'
    /// averages depends on their folded averages only, and copies of a member tie with it, so
    /// the expanded game's lowest-index best response is the first copy of the best member
    /// whose first copy comes first ([`argmax_in_order`]); the averages' update
    /// `σ̄ ← (1 − s)·σ̄ + s·e_br` is linear, so it folds. Cold play starts from the folded
    /// uniform mixture (`w_m/K`).
    fn run(&self, game: &NormalFormGame, copies: &Copies, start: Option<&[Vec<f64>]>) -> Result<Solution> {
        copies.check(Self::NAME, game)?;
        self.settings.check_iterations(Self::NAME)?;
        self.settings.stopping.validate(Self::NAME)?;
        let start = start.map(|s| dynamics::checked_start(Self::NAME, game, s)).transpose()?;
        let mut kernel = Kernel::new(game);
        let mut values = dynamics::zeros(game);
        // Iterations the initial averages count for, minus 1 (0 when cold).
        let mut earlier = 0.0;
        let mut average = match start {
            None => dynamics::uniform(copies),
            Some(start) => {
                kernel.deviation_payoffs(&start, &mut values);
                let nash_conv = dynamics::nash_conv_from(&start, &values);
                if self.settings.stopping.reached(nash_conv) {
                    return Ok(Solution::new(game, start, Status::Solved, 0));
                }
                let weight = (game.payoff_scale() / nash_conv).ceil();
                earlier = weight.clamp(1.0, self.settings.iterations as f64) - 1.0;
                start
            }
        };
        // Best responses within this of each other tie (rounding of the deviation payoffs).
        let tie = TIE_TOLERANCE * game.payoff_scale();
        let mut status = Status::MaxIterations;
        let mut done = self.settings.iterations;
        for t in 1..=self.settings.iterations {
            kernel.deviation_payoffs(&average, &mut values);
            if self.settings.stopping.is_checkpoint(t)
                && self.settings.stopping.reached(dynamics::nash_conv_from(&average, &values))
            {
                status = Status::Solved;
                done = t - 1;
                break;
            }
            let step = 1.0 / (t as f64 + earlier + 1.0);
            for (p, (avg, v)) in average.iter_mut().zip(&values).enumerate() {
                let best = argmax_in_order(v, copies.by_first_copy(p), tie);
                avg.iter_mut().for_each(|p| *p *= 1.0 - step);
                avg[best] += step;
            }
        }
        dynamics::normalise(&mut average);
        Ok(Solution::new(game, average, status, done))
    }
}

/// Index of the largest entry, the first of `order` (a permutation of `v`'s indices) among
/// the entries within `tie` of the largest: payoffs that are equal in exact arithmetic (as in
/// meta-games with rational payoffs) tie whatever the order their sums were rounded in.
pub(crate) fn argmax_in_order(v: &[f64], order: &[usize], tie: f64) -> usize {
    let top = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    order.iter().copied().find(|&i| v[i] >= top - tie).unwrap_or(order[0])
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn converges_on_rps() {
        let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]).unwrap();
        let sol = FictitiousPlay::default().solve(&rps).unwrap();
        // Lowest-index tie-breaking makes FP slow on RPS: ≈ 1.1e-2 after 10 000 iterations.
        assert!(sol.certificate.nash_conv < 3e-2, "{}", sol.certificate.nash_conv);
        assert_eq!(sol.status, Status::MaxIterations);
        assert!(sol.is_distribution(1e-12));
    }

    #[test]
    fn early_stop_reports_solved() {
        let pennies = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        let sol = FictitiousPlay::default().with_target_nash_conv(0.05, 10).solve(&pennies).unwrap();
        assert_eq!(sol.status, Status::Solved);
        assert!(sol.certificate.nash_conv <= 0.05 + 1e-12);
        assert!(sol.iterations < 10_000);
    }

    #[test]
    fn rejects_zero_iterations() {
        let pennies = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        assert!(FictitiousPlay::default().with_iterations(0).solve(&pennies).is_err());
    }
}
