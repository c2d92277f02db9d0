//! Regret matching (Hart & Mas-Colell 2000) and regret matching+ (Tammelin 2014) for n-player
//! normal-form games.

use metagame_games::NormalFormGame;
use serde::{Deserialize, Serialize};

use crate::dynamics::{self, Kernel};
use crate::linalg;
use crate::settings::{IterativeSettings, iterative_settings};
use crate::{Copies, MetaSolver, Result, Solution, Status};

/// Which regret update to use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum RegretVariant {
    /// Plain regret matching: cumulative regrets `R += r`, starting at 1e-6 (OpenSpiel's
    /// `regret_matching.py`).
    Plain,
    /// Regret matching+: `R = max(R + r, 0)` (positive-part cumulative regrets).
    #[default]
    Plus,
}

/// How the returned average weights the iterates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Averaging {
    /// Every iterate weighs the same (OpenSpiel).
    #[default]
    Uniform,
    /// Iterate `t` weighs `t` (CFR+-style; usually much faster with [`RegretVariant::Plus`]).
    Linear,
}

/// Regret matching (+) with simultaneous updates, returning the average strategies.
///
/// Each iteration, with current strategies σ: for each player `i` and pure strategy `k`,
/// the instantaneous regret is `r_k = u_i(k, σ_{-i}) − u_i(σ)`; regrets accumulate by
/// [`RegretVariant`]; the next strategy is `σ_i ∝ R⁺` (uniform when all are 0), mixed with
/// uniform: `σ_i ← γ·uniform + (1 − γ)·σ_i`. The answer is the average of the first
/// strategy and the strategy after each step (uniform or linear weights, [`Averaging`]), as
/// OpenSpiel's.
///
/// In two-player zero-sum games the averages converge to a Nash equilibrium at rate
/// O(1/√t); in general games the empirical joint play converges to the set of coarse
/// correlated equilibria, so the marginals returned need not be a Nash equilibrium.
///
/// Defaults (OpenSpiel `regret_matching.py`): 100 000 iterations, γ = 1e-6, uniform
/// averaging; variant [`RegretVariant::Plus`] (OpenSpiel uses plain regrets).
///
/// # Complexity
///
/// O(iterations · Σ_p |S_p|·|S_{-p}|) for two players, O(iterations · n · |profiles|) otherwise.
///
/// # References
///
/// S. Hart, A. Mas-Colell, *A simple adaptive procedure leading to correlated equilibrium*,
/// Econometrica 68, 2000; O. Tammelin, *Solving large imperfect information games using CFR+*,
/// arXiv:1407.5042, 2014.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, regret_matching::RegretMatching};
/// use ndarray::array;
///
/// let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]])?;
/// let sol = RegretMatching::default().with_iterations(10_000).solve(&rps)?;
/// assert!(sol.certificate.nash_conv < 1e-2);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RegretMatching {
    #[serde(flatten)]
    settings: IterativeSettings,
    gamma: f64,
    variant: RegretVariant,
    averaging: Averaging,
}

impl Default for RegretMatching {
    fn default() -> Self {
        Self {
            settings: IterativeSettings::default(),
            gamma: 1e-6,
            variant: RegretVariant::Plus,
            averaging: Averaging::Uniform,
        }
    }
}

iterative_settings!(RegretMatching, settings, default_iterations = "100 000");

impl RegretMatching {
    const NAME: &'static str = "regret-matching";
    /// Every cumulative regret's start in plain regret matching (OpenSpiel's 1e-6): the
    /// first strategy is uniform either way, the later ones follow OpenSpiel's.
    const INITIAL_PLAIN_REGRET: f64 = 1e-6;

    /// Plain regret matching with OpenSpiel's settings (cumulative regrets, uniform averaging);
    /// [`RegretMatching::default`] is regret matching+. The registry's `rm` and `rm+`.
    pub fn plain() -> Self {
        Self { variant: RegretVariant::Plain, ..Self::default() }
    }

    /// The same solver with uniform-mixing weight `gamma` in [0, 1) (default 1e-6).
    pub fn with_gamma(mut self, gamma: f64) -> Self {
        self.gamma = gamma;
        self
    }

    /// The same solver with another averaging of the iterates (default [`Averaging::Uniform`]).
    pub fn with_averaging(mut self, averaging: Averaging) -> Self {
        self.averaging = averaging;
        self
    }
}

impl MetaSolver for RegretMatching {
    fn name(&self) -> &'static str {
        match self.variant {
            RegretVariant::Plain => "rm",
            RegretVariant::Plus => "rm+",
        }
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        self.run(game, &Copies::identity(game.shape()), None)
    }

    /// Regret matching from `start`: the cumulative regrets begin at
    /// `R = payoff_scale · start` (instead of 0), so the first strategy played is `start`
    /// (mixed with uniform by γ) and the start keeps its weight until regrets of about one
    /// payoff range have accumulated against it; at an equilibrium no regret does, so the
    /// iterates stay there. The average begins with that first strategy, as cold. With a target NashConv, a
    /// start that meets it is returned at once (0 iterations).
    ///
    /// Strategies at 0 in the start are fine: a new best response gains positive regret,
    /// hence mass, at the first step.
    fn solve_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> Result<Solution> {
        self.run(game, &Copies::identity(game.shape()), Some(start))
    }

    /// Regret matching on `game` with each member standing for its copies: the expanded
    /// game's iterates folded, at the collapsed game's cost per step.
    fn solve_collapsed(
        &self,
        game: &NormalFormGame,
        copies: &Copies,
        start: Option<&[Vec<f64>]>,
    ) -> Result<Solution> {
        self.run(game, copies, start)
    }
}

impl RegretMatching {
    /// Regret matching on the expanded game of `copies`, folded onto `game`'s members.
    ///
    /// Why the folded iterates are the expanded game's: copies have the same payoffs, hence
    /// the same instantaneous regrets, so copies that start with equal cumulative regrets keep
    /// them equal. `regrets[p][m]` is then the regret of each copy of member `m` (not folded),
    /// while the strategies are folded: `σ_m = w_m·(γ/K + (1 − γ)·R⁺_m / Σ_j w_j·R⁺_j)` with `K`
    /// the expanded strategy count (`w_m/K` when no regret is positive), and the value
    /// `Σ_m σ_m·u_m` is the expanded one. A warm start over members gives each copy
    /// `R = payoff_scale · start_m / w_m`, the expanded warm start of the evenly split start.
    fn run(&self, game: &NormalFormGame, copies: &Copies, start: Option<&[Vec<f64>]>) -> Result<Solution> {
        copies.check(Self::NAME, game)?;
        self.settings.check_iterations(Self::NAME)?;
        dynamics::check_gamma(Self::NAME, self.gamma)?;
        self.settings.stopping.validate(Self::NAME)?;
        let start = start.map(|s| dynamics::checked_start(Self::NAME, game, s)).transpose()?;
        let mut kernel = Kernel::new(game);
        let mut current = dynamics::uniform(copies);
        let mut regrets = dynamics::zeros(game);
        if self.variant == RegretVariant::Plain {
            // OpenSpiel's `regret_matching.py` starts every regret at 1 / INITIAL_REGRET_DENOM.
            regrets.iter_mut().flatten().for_each(|r| *r = Self::INITIAL_PLAIN_REGRET);
        }
        let mut sum = dynamics::zeros(game);
        let mut values = dynamics::zeros(game);
        let mut scratch = dynamics::zeros(game);
        if let Some(start) = start {
            // A start that already meets the target is the answer.
            if self.settings.stopping.target_nash_conv.is_some() {
                kernel.deviation_payoffs(&start, &mut values);
                if self.settings.stopping.reached(dynamics::nash_conv_from(&start, &values)) {
                    return Ok(Solution::new(game, start, Status::Solved, 0));
                }
            }
            let scale = game.payoff_scale();
            for (p, ((r, c), s)) in regrets.iter_mut().zip(current.iter_mut()).zip(&start).enumerate() {
                let w = copies.weights(p);
                r.iter_mut().zip(s).zip(w).for_each(|((r, &x), &w)| *r = scale * (x / w));
                regret_matching_strategy(r, w, self.gamma, c);
            }
        }
        // The average holds the first strategy and the one after each step (`t + 1` after
        // `t` steps), as OpenSpiel's `StrategyAverager`; the strategy after step `t` weighs
        // `t + 1` under linear averaging.
        let mut weight_total = 0.0;
        let mut accumulate = |t: usize, current: &[Vec<f64>], sum: &mut [Vec<f64>]| {
            let w = match self.averaging {
                Averaging::Uniform => 1.0,
                Averaging::Linear => (t + 1) as f64,
            };
            weight_total += w;
            for (s, c) in sum.iter_mut().zip(current) {
                s.iter_mut().zip(c).for_each(|(a, &b)| *a += w * b);
            }
            weight_total
        };
        accumulate(0, &current, &mut sum);
        let mut status = Status::MaxIterations;
        let mut done = self.settings.iterations;
        for t in 1..=self.settings.iterations {
            kernel.deviation_payoffs(&current, &mut values);
            for (p, ((r, v), c)) in regrets.iter_mut().zip(&values).zip(current.iter_mut()).enumerate() {
                let value = linalg::dot(v, c);
                match self.variant {
                    RegretVariant::Plain => r.iter_mut().zip(v).for_each(|(r, &u)| *r += u - value),
                    RegretVariant::Plus => {
                        r.iter_mut().zip(v).for_each(|(r, &u)| *r = (*r + u - value).max(0.0))
                    }
                }
                regret_matching_strategy(r, copies.weights(p), self.gamma, c);
            }
            let total = accumulate(t, &current, &mut sum);
            if self.settings.stopping.is_checkpoint(t) {
                average_into(&sum, total, &mut scratch);
                let mut v = dynamics::zeros(game);
                kernel.deviation_payoffs(&scratch, &mut v);
                if self.settings.stopping.reached(dynamics::nash_conv_from(&scratch, &v)) {
                    status = Status::Solved;
                    done = t;
                    break;
                }
            }
        }
        average_into(&sum, weight_total, &mut scratch);
        dynamics::normalise(&mut scratch);
        Ok(Solution::new(game, scratch, status, done))
    }
}

/// `out = σ ∝ R⁺` (uniform if all non-positive), mixed with uniform by `gamma`, over the
/// expanded strategies that member `m` stands for `weights[m]` of (each with regret
/// `regrets[m]`), folded: `out[m] = w_m·γ/K + (1 − γ)·w_m·R⁺_m / Σ_j w_j·R⁺_j`, `K = Σ w`.
/// Unit weights give the unweighted strategy bit for bit.
pub(crate) fn regret_matching_strategy(regrets: &[f64], weights: &[f64], gamma: f64, out: &mut [f64]) {
    let k: f64 = weights.iter().sum();
    let total: f64 = regrets.iter().zip(weights).map(|(r, &w)| w * r.max(0.0)).sum();
    if total > 0.0 {
        for ((o, r), &w) in out.iter_mut().zip(regrets).zip(weights) {
            *o = gamma * w / k + (1.0 - gamma) * (w * r.max(0.0)) / total;
        }
    } else {
        out.iter_mut().zip(weights).for_each(|(o, &w)| *o = w / k);
    }
}

fn average_into(sum: &[Vec<f64>], total: f64, out: &mut [Vec<f64>]) {
    for (o, s) in out.iter_mut().zip(sum) {
        o.iter_mut().zip(s).for_each(|(o, &s)| *o = s / total);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// OpenSpiel 2.0.2's answers on the same games: `regret_matching(payoffs, iterations=N,
    /// gamma=1e-6)` (its regrets start at 1e-6, its average holds the start and the N
    /// iterates), on a zero-sum and a general-sum game. The zero-sum game is symmetric, yet
    /// OpenSpiel's two players differ by 2.7e-7 after 1000 iterations (its dot products sum
    /// in a different order for each player, and regret matching amplifies the rounding), so
    /// that case is compared to 1e-6; the others to 1e-12.
    #[test]
    fn plain_equals_openspiel_at_1_10_and_1000_iterations() {
        let a = array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]];
        let b = array![[1., 3., 0.], [2., 0., 4.], [0., 1., 2.]];
        let zero_sum = NormalFormGame::zero_sum(a).unwrap();
        let general = NormalFormGame::bimatrix(b.clone(), b.t().mapv(|x| 0.5 * x + 1.0)).unwrap();
        type Expected = [[f64; 3]; 2];
        let openspiel: [(&NormalFormGame, usize, Expected, f64); 6] = [
            (&zero_sum, 1, [[0.44444432962963387, 0.3888888370370328, 0.16666683333333332]; 2], 1e-12),
            (&zero_sum, 10, [[0.08080833265993347, 0.8888883340067332, 0.030303333333333324]; 2], 1e-12),
            (
                &zero_sum,
                1000,
                [
                    [0.06913620657887061, 0.6486475865264274, 0.28221620689470145],
                    [0.06913593826843409, 0.6486477850881537, 0.28221627664341137],
                ],
                1e-6,
            ),
            (&general, 1, [[0.16666683333333332, 0.6666663333333334, 0.16666683333333332]; 2], 1e-12),
            (
                &general,
                10,
                [
                    [0.6288490382643815, 0.3282214103888134, 0.04292955134680505],
                    [0.628848183128141, 0.3282222522674554, 0.04292956460440371],
                ],
                1e-12,
            ),
            (
                &general,
                1000,
                [
                    [0.9904694873431371, 0.009058429675030604, 0.00047208298183301373],
                    [0.025654366188936007, 0.9738735506835438, 0.0004720831275209111],
                ],
                1e-12,
            ),
        ];
        for (game, iterations, expected, tolerance) in openspiel {
            let sol = RegretMatching::plain().with_iterations(iterations).solve(game).unwrap();
            for (s, e) in sol.strategies.iter().zip(expected) {
                for (p, e) in s.iter().zip(e) {
                    assert!((p - e).abs() < tolerance, "{iterations}: {:?}", sol.strategies);
                }
            }
        }
    }

    #[test]
    fn both_variants_converge_on_pennies() {
        let pennies = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        for solver in [RegretMatching::default(), RegretMatching::plain()] {
            let sol = solver.with_iterations(20_000).solve(&pennies).unwrap();
            assert!(sol.certificate.nash_conv < 1e-2, "{}", sol.certificate.nash_conv);
            assert!(sol.is_distribution(1e-12));
        }
    }

    #[test]
    fn linear_averaging_converges_on_biased_rps() {
        let a = array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]];
        let game = NormalFormGame::zero_sum(a).unwrap();
        let sol = RegretMatching::default()
            .with_averaging(Averaging::Linear)
            .with_iterations(20_000)
            .solve(&game)
            .unwrap();
        let expected = [1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0];
        for (p, e) in sol.strategies[0].iter().zip(expected) {
            assert!((p - e).abs() < 1e-2, "{:?}", sol.strategies);
        }
    }

    #[test]
    fn rejects_bad_gamma() {
        let pennies = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        assert!(RegretMatching::default().with_gamma(1.0).solve(&pennies).is_err());
        assert!(RegretMatching::default().with_gamma(f64::NAN).solve(&pennies).is_err());
    }
}
