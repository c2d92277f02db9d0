//! Replicator dynamics and projected replicator dynamics (PRD, Lanctot et al. 2017) for
//! n-player normal-form games.

use metagame_games::NormalFormGame;
use serde::{Deserialize, Serialize};

use crate::dynamics::{self, Kernel};
use crate::linalg;
use crate::settings::{IterativeSettings, iterative_settings};
use crate::{Copies, MetaSolver, Result, Solution, Status};

/// The shared Euler integrator of [`Replicator`] and [`ProjectedReplicator`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Integrator {
    #[serde(flatten)]
    settings: IterativeSettings,
    dt: f64,
    floor: f64,
    average_iterates: bool,
}

impl Integrator {
    /// Integrates from uniform (`start` = `None`) or from the projection of a warm start, on
    /// the expanded game of `copies` folded onto `game`'s members.
    ///
    /// Why the folded iterates are the expanded game's: copies of a member have the same
    /// payoffs, so if they start equal each Euler step moves them alike, and the projection
    /// `max(x_c − γ − θ, 0) + γ` keeps them equal. With `y_m` the common value of member `m`'s
    /// `w_m` copies and `x_m = w_m·y_m` the folded mass, the mean payoff is `Σ_m x_m·u_m`, the
    /// step is `x_m += dt·x_m·(u_m − mean)`, and the projection is
    /// `x_m ← max(x_m − w_m·γ − w_m·θ, 0) + w_m·γ` with `θ` making `Σ x_m = 1`: a floor of
    /// `w_m·γ` per member ([`FloorProjection::weighted`]).
    fn run(
        &self,
        name: &'static str,
        game: &NormalFormGame,
        copies: &Copies,
        start: Option<&[Vec<f64>]>,
    ) -> Result<Solution> {
        copies.check(name, game)?;
        self.settings.check_iterations(name)?;
        self.settings.stopping.validate(name)?;
        if !(self.dt.is_finite() && self.dt > 0.0) {
            return Err(dynamics::invalid(name, format!("dt must be positive and finite, got {}", self.dt)));
        }
        if !(self.floor.is_finite() && self.floor >= 0.0) {
            return Err(dynamics::invalid(
                name,
                format!("gamma must be finite and >= 0, got {}", self.floor),
            ));
        }
        let widest = copies.expanded_shape().into_iter().max().unwrap_or(1);
        if self.floor * widest as f64 > 1.0 {
            return Err(dynamics::invalid(
                name,
                format!("gamma = {} is above 1/{widest}: no distribution respects the floor", self.floor),
            ));
        }
        let start = start.map(|s| dynamics::checked_start(name, game, s)).transpose()?;
        let mut kernel = Kernel::new(game);
        let mut values = dynamics::zeros(game);
        let mut projections: Vec<FloorProjection> = (0..game.num_players())
            .map(|p| FloorProjection::weighted(copies.weights(p), self.floor))
            .collect();
        let mut current = match start {
            None => dynamics::uniform(copies),
            Some(mut start) => {
                for (x, projection) in start.iter_mut().zip(&mut projections) {
                    projection.project(x);
                }
                // A start that already meets the target is the answer.
                if self.settings.stopping.target_nash_conv.is_some() {
                    kernel.deviation_payoffs(&start, &mut values);
                    if self.settings.stopping.reached(dynamics::nash_conv_from(&start, &values)) {
                        return Ok(Solution::new(game, start, Status::Solved, 0));
                    }
                }
                start
            }
        };
        // The average includes the starting point (OpenSpiel's StrategyAverager appends it
        // before the first step): the answer after `t` steps averages `t + 1` points.
        let mut sum = current.clone();
        let mut status = Status::MaxIterations;
        let mut done = self.settings.iterations;
        for t in 1..=self.settings.iterations {
            kernel.deviation_payoffs(&current, &mut values);
            for ((x, v), projection) in current.iter_mut().zip(&values).zip(&mut projections) {
                let mean = linalg::dot(x, v);
                x.iter_mut().zip(v).for_each(|(x, &u)| *x += self.dt * *x * (u - mean));
                projection.project(x);
            }
            for (s, c) in sum.iter_mut().zip(&current) {
                s.iter_mut().zip(c).for_each(|(a, &b)| *a += b);
            }
            if self.settings.stopping.is_checkpoint(t) {
                let answer = self.answer(&sum, &current, t, copies);
                let mut v = dynamics::zeros(game);
                kernel.deviation_payoffs(&answer, &mut v);
                if self.settings.stopping.reached(dynamics::nash_conv_from(&answer, &v)) {
                    status = Status::Solved;
                    done = t;
                    break;
                }
            }
        }
        let answer = self.answer(&sum, &current, done, copies);
        Ok(Solution::new(game, answer, status, done))
    }

    fn answer(&self, sum: &[Vec<f64>], current: &[Vec<f64>], t: usize, copies: &Copies) -> Vec<Vec<f64>> {
        let mut out: Vec<Vec<f64>> = if self.average_iterates {
            sum.iter().map(|s| s.iter().map(|x| x / (t + 1) as f64).collect()).collect()
        } else {
            current.to_vec()
        };
        // Re-project: removes rounding drift and keeps the floor exact.
        for (p, s) in out.iter_mut().enumerate() {
            FloorProjection::weighted(copies.weights(p), self.floor).project(s);
        }
        out
    }
}

/// Euclidean projection onto `{y : y_k ≥ floor, Σ y = 1}` (requires `floor · len ≤ 1`) for
/// a sequence of nearby points: it remembers which entries ended above the floor and starts
/// the next projection from that set, which the dynamics rarely change.
///
/// Weighted ([`FloorProjection::weighted`]), entry `k` stands for `w_k` equal entries of an
/// expanded vector and holds their sum: the answer is the expanded projection folded,
/// `max(x_k − w_k·floor − w_k·θ, 0) + w_k·floor` with `θ` over the expanded entries above the
/// floor, `(Σ_above (x_k − w_k·floor) − radius) / Σ_above w_k`, `radius = 1 − floor·Σ w`.
/// Unit weights give the unweighted projection bit for bit (every product by 1 is exact).
///
/// # Complexity
///
/// Two O(K) passes when the remembered set is still right (the usual case), otherwise
/// O(K) per pass of Michelot's method (1986; usually one or two passes).
pub(crate) struct FloorProjection {
    floor: f64,
    /// Each entry's weight (its number of copies; 1 unweighted).
    weights: Vec<f64>,
    /// `floor · Σ weights`.
    floor_total: f64,
    /// 1 for the entries above the floor after the last projection, 0 for those at it: a
    /// multiplier rather than a `bool`, so that the masked sum vectorises.
    above: Vec<f64>,
    /// How many entries of `above` are 1.
    count: usize,
    /// `Σ_k above_k · weights_k` (the expanded entries above the floor).
    above_weight: f64,
    /// The candidate answer, swapped with the input once it is known to be right.
    candidate: Vec<f64>,
}

impl FloorProjection {
    /// A projection for vectors of length `len`, first guessing every entry above the floor.
    #[cfg(test)]
    pub(crate) fn new(len: usize, floor: f64) -> Self {
        Self::weighted(&vec![1.0; len], floor)
    }

    /// A projection for folded vectors whose entry `k` stands for `weights[k]` copies.
    pub(crate) fn weighted(weights: &[f64], floor: f64) -> Self {
        let len = weights.len();
        let total: f64 = weights.iter().sum();
        Self {
            floor,
            weights: weights.to_vec(),
            floor_total: floor * total,
            above: vec![1.0; len],
            count: len,
            above_weight: total,
            candidate: vec![0.0; len],
        }
    }

    /// Projects `x` (of the length given to [`FloorProjection::weighted`]) in place.
    #[inline]
    pub(crate) fn project(&mut self, x: &mut Vec<f64>) {
        let floor = self.floor;
        let radius = 1.0 - self.floor_total;
        if radius <= 0.0 {
            x.iter_mut().zip(&self.weights).for_each(|(x, &w)| *x = w * floor);
            return;
        }
        // The solution is `max(x_k − w_k·(floor + θ), 0) + w_k·floor`, where θ makes the
        // entries above the floor sum to `radius`; a guessed set is right when θ computed from
        // it keeps exactly that set above the floor (the KKT conditions of the projection).
        if self.count > 0 {
            let theta = (masked_sum(x, &self.above, &self.weights, floor) - radius) / self.above_weight;
            let mut consistent = true;
            for (((y, &v), &a), &w) in
                self.candidate.iter_mut().zip(x.iter()).zip(&self.above).zip(&self.weights)
            {
                let t = v - w * floor - w * theta;
                consistent &= (t > 0.0) == (a == 1.0);
                *y = t.max(0.0) + w * floor;
            }
            if consistent {
                std::mem::swap(x, &mut self.candidate);
                return;
            }
        }
        self.michelot(x, radius);
    }

    /// Michelot's method: θ over the entries still above the floor, dropping those it pushes
    /// below, until none drops; records the final set.
    fn michelot(&mut self, x: &mut [f64], radius: f64) {
        let floor = self.floor;
        self.above.fill(1.0);
        self.count = x.len();
        self.above_weight = self.weights.iter().sum();
        let mut theta;
        loop {
            let weight = if self.count > 0 { self.above_weight } else { 1.0 };
            theta = (masked_sum(x, &self.above, &self.weights, floor) - radius) / weight;
            let mut dropped = false;
            for ((&v, a), &w) in x.iter().zip(self.above.iter_mut()).zip(&self.weights) {
                if *a == 1.0 && v - w * floor - w * theta <= 0.0 {
                    *a = 0.0;
                    self.count -= 1;
                    self.above_weight -= w;
                    dropped = true;
                }
            }
            if !dropped {
                break;
            }
        }
        x.iter_mut()
            .zip(&self.weights)
            .for_each(|(v, &w)| *v = (*v - w * floor - w * theta).max(0.0) + w * floor);
    }
}

/// `Σ_k above_k·(x_k − w_k·floor)` for 0/1 multipliers `above`, in four interleaved partial
/// sums.
#[inline]
fn masked_sum(x: &[f64], above: &[f64], weights: &[f64], floor: f64) -> f64 {
    let mut acc = [0.0f64; 4];
    let (xs, x_rest) = x.as_chunks::<4>();
    let (masks, mask_rest) = above.as_chunks::<4>();
    let (ws, w_rest) = weights.as_chunks::<4>();
    for ((v, m), w) in xs.iter().zip(masks).zip(ws) {
        for k in 0..4 {
            acc[k] += m[k] * (v[k] - w[k] * floor);
        }
    }
    for (k, ((&v, &m), &w)) in x_rest.iter().zip(mask_rest).zip(w_rest).enumerate() {
        acc[k] += m * (v - w * floor);
    }
    (acc[0] + acc[1]) + (acc[2] + acc[3])
}

/// The options and the [`MetaSolver`] impl that [`ProjectedReplicator`] and [`Replicator`]
/// share through their [`Integrator`].
macro_rules! integrator_solver {
    ($solver:ident, $name:literal) => {
        iterative_settings!($solver, integrator.settings, default_iterations = "100 000");

        impl $solver {
            /// The same solver with step size `dt` (positive; default 1e-3).
            pub fn with_dt(mut self, dt: f64) -> Self {
                self.integrator.dt = dt;
                self
            }

            /// Return the last iterate instead of the average (default: the average).
            pub fn with_last_iterate(mut self) -> Self {
                self.integrator.average_iterates = false;
                self
            }
        }

        impl MetaSolver for $solver {
            fn name(&self) -> &'static str {
                $name
            }

            fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
                self.integrator.run($name, game, &Copies::identity(game.shape()), None)
            }

            /// Integrates from `start` projected onto `{x ≥ γ, Σx = 1}` instead of uniform;
            /// the answer is still the average of the start and the iterates. With a target
            /// NashConv, a start that meets it is returned at once (0 iterations).
            ///
            /// A strategy at 0 in the start stays at 0 under replicator dynamics (PRD lifts
            /// it only to γ): give strategies that are new to the game a small positive mass
            /// ([`Solution::extend_start`]).
            fn solve_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> Result<Solution> {
                self.integrator.run($name, game, &Copies::identity(game.shape()), Some(start))
            }

            /// Integrates on `game` with each member's mass standing for its copies (a floor
            /// of multiplicity × γ): the expanded game's iterates folded, at the collapsed
            /// game's cost per step.
            fn solve_collapsed(
                &self,
                game: &NormalFormGame,
                copies: &Copies,
                start: Option<&[Vec<f64>]>,
            ) -> Result<Solution> {
                self.integrator.run($name, game, copies, start)
            }
        }
    };
}

/// Projected replicator dynamics (PRD): Euler steps of the replicator equation
/// `dx_k/dt = x_k·[u_i(k, x_{-i}) − u_i(x)]` for every player at once, each followed by the
/// exact Euclidean projection onto `{x ≥ γ, Σx = 1}`; returns the AVERAGE of the starting
/// point (uniform) and the iterates after each step, `iterations + 1` points (as OpenSpiel's
/// `projected_replicator_dynamics`, whose `StrategyAverager` also holds the start).
///
/// Defaults (OpenSpiel `projected_replicator_dynamics.py`): 100 000 iterations, dt = 1e-3,
/// γ = 1e-6 (an absolute floor; the PRD paper uses γ/(K+1) and δ = 0.01; OpenSpiel's PSRO
/// example driver uses 50 000 iterations and γ = 1e-10).
///
/// # Complexity
///
/// O(iterations · Σ_p |S_p|·|S_{-p}|) for two players (a 20×20 game at 50 000 iterations
/// takes milliseconds), O(iterations · n · |profiles|) otherwise; no allocation per step.
///
/// # References
///
/// M. Lanctot et al., *A unified game-theoretic approach to multiagent reinforcement
/// learning*, arXiv:1711.00832, 2017 (§3, PRD).
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, replicator::ProjectedReplicator};
/// use ndarray::array;
///
/// let biased = array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]];
/// let sol = ProjectedReplicator::default().solve(&NormalFormGame::zero_sum(biased)?)?;
/// assert!((sol.strategies[0][1] - 10.0 / 16.0).abs() < 0.05);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProjectedReplicator {
    integrator: Integrator,
}

impl Default for ProjectedReplicator {
    fn default() -> Self {
        Self {
            integrator: Integrator {
                settings: IterativeSettings::default(),
                dt: 1e-3,
                floor: 1e-6,
                average_iterates: true,
            },
        }
    }
}

impl ProjectedReplicator {
    /// The same solver with floor `gamma` (≥ 0 and at most 1/K for every player; default 1e-6).
    pub fn with_gamma(mut self, gamma: f64) -> Self {
        self.integrator.floor = gamma;
        self
    }
}

integrator_solver!(ProjectedReplicator, "prd");

/// Replicator dynamics (Taylor & Jonker 1978): [`ProjectedReplicator`] without a floor
/// (γ = 0; the projection only removes rounding drift). Returns the average of the start and
/// the iterates, which in two-player zero-sum games with an interior equilibrium converges to
/// it while the iterates themselves cycle.
///
/// Defaults: 100 000 iterations, dt = 1e-3 (as PRD).
///
/// # References
///
/// P. D. Taylor, L. B. Jonker, *Evolutionary stable strategies and game dynamics*,
/// Mathematical Biosciences 40, 1978.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Replicator {
    integrator: Integrator,
}

impl Default for Replicator {
    fn default() -> Self {
        Self { integrator: Integrator { floor: 0.0, ..ProjectedReplicator::default().integrator } }
    }
}

integrator_solver!(Replicator, "replicator");

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    #[test]
    fn projection_matches_brute_force_cases() {
        let project = |mut x: Vec<f64>, floor: f64| {
            FloorProjection::new(x.len(), floor).project(&mut x);
            x
        };
        let x = project(vec![0.5, 0.6, -0.1], 0.0);
        assert!((x[0] - 0.45).abs() < 1e-12 && (x[1] - 0.55).abs() < 1e-12 && x[2] == 0.0, "{x:?}");
        let x = project(vec![2.0, 0.0, 0.0], 0.1);
        assert!((x[0] - 0.8).abs() < 1e-12 && (x[1] - 0.1).abs() < 1e-12, "{x:?}");
        assert_eq!(project(vec![0.2, 0.3, 0.5], 0.0), vec![0.2, 0.3, 0.5]);
    }

    /// The sort-based projection (Duchi et al. 2008) shifted by the floor.
    fn sorted_projection(x: &[f64], floor: f64) -> Vec<f64> {
        let radius = 1.0 - floor * x.len() as f64;
        let mut u: Vec<f64> = x.iter().map(|v| v - floor).collect();
        u.sort_by(|a, b| b.total_cmp(a));
        let (mut total, mut theta) = (0.0, 0.0);
        for (i, &v) in u.iter().enumerate() {
            total += v;
            let t = (total - radius) / (i + 1) as f64;
            if v - t > 0.0 {
                theta = t;
            }
        }
        x.iter().map(|v| (v - floor - theta).max(0.0) + floor).collect()
    }

    proptest::proptest! {
        /// A projection that remembers its last set, fed a wandering sequence of points, gives
        /// the sort-based answer at every point.
        #[test]
        fn remembered_projection_is_exact(
            start in proptest::collection::vec(-0.5f64..1.0, 1..40),
            moves in proptest::collection::vec((0usize..40, -0.3f64..0.3), 1..30),
            floor in proptest::prop_oneof![proptest::strategy::Just(0.0), 0.0f64..0.02],
        ) {
            let mut projection = FloorProjection::new(start.len(), floor);
            let mut x = start.clone();
            for (k, step) in moves {
                x[k % start.len()] += step;
                let mut y = x.clone();
                projection.project(&mut y);
                let expected = sorted_projection(&x, floor);
                for (a, b) in y.iter().zip(&expected) {
                    proptest::prop_assert!((a - b).abs() < 1e-12, "{y:?} vs {expected:?}");
                }
            }
        }
    }

    #[test]
    fn prd_biased_rps() {
        let a = array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]];
        let game = NormalFormGame::zero_sum(a).unwrap();
        let sol = ProjectedReplicator::default().solve(&game).unwrap();
        let expected = [1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0];
        for s in &sol.strategies {
            for (p, e) in s.iter().zip(expected) {
                assert!((p - e).abs() < 2e-2, "{:?}", sol.strategies);
            }
        }
    }

    /// OpenSpiel 2.0.2's answers on the same game: `projected_replicator_dynamics([a, -a],
    /// prd_iterations=N, prd_dt=1e-3, prd_gamma=1e-6)`, which averages the start and the N
    /// iterates (the same for both players here).
    #[test]
    fn prd_equals_openspiel_at_1_10_and_1000_iterations() {
        let a = array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]];
        let game = NormalFormGame::zero_sum(a).unwrap();
        let openspiel = [
            (1, [0.3347222222222222, 0.33444444444444443, 0.3308333333333333]),
            (10, [0.34596875950836603, 0.3451413563997629, 0.3088898840918711]),
            (1000, [0.052845320483272736, 0.6396025604781986, 0.30755211903852925]),
        ];
        for (iterations, expected) in openspiel {
            let prd =
                ProjectedReplicator::default().with_iterations(iterations).with_gamma(1e-6).with_dt(1e-3);
            let sol = prd.solve(&game).unwrap();
            for s in &sol.strategies {
                for (p, e) in s.iter().zip(expected) {
                    assert!((p - e).abs() < 1e-12, "{iterations}: {:?}", sol.strategies);
                }
            }
        }
    }

    #[test]
    fn rejects_floor_above_uniform() {
        let game = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        assert!(ProjectedReplicator::default().with_gamma(0.6).solve(&game).is_err());
        assert!(ProjectedReplicator::default().with_dt(-1.0).solve(&game).is_err());
    }
}
