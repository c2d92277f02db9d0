//! alpha-Rank (Omidshafiei et al. 2019): rank strategies (or strategy profiles) by the
//! stationary distribution of an evolutionary Markov chain over monomorphic populations.

use metagame_games::NormalFormGame;
use serde::{Deserialize, Serialize};

use crate::dynamics::invalid;
use crate::linalg;
use crate::{Extras, MetaSolver, Result, Solution, SolveError, Status};

/// One population for a symmetric two-player game, or one population per player.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Populations {
    /// Single population when the game is two-player and symmetric, one per player otherwise.
    #[default]
    Auto,
    /// One population; the game must be two-player symmetric (`B = Aᵀ`). States are
    /// strategies and the answer is a distribution over them.
    Single,
    /// One population per player; states are pure strategy profiles.
    Multiple,
}

/// How fitness is evaluated in the single-population model (multi-population fitness does
/// not depend on the population's make-up, so there the two agree).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum SelectionModel {
    /// Fitness against the current opponent only: `u = α·(M[r,s] − M[s,r])` (OpenSpiel's
    /// default, `use_local_selection_model=True`).
    #[default]
    Local,
    /// Fitness against the whole finite population of size m (Traulsen et al. 2006, the
    /// model of Han et al. 2013); for constant-sum games the closed form
    /// `u = α·m/(m−1)·(M[r,s] − c/2)`.
    Global,
}

/// The selection intensity α.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Alpha {
    /// A fixed, positive, finite α (OpenSpiel's default 100).
    Finite(f64),
    /// Start at `start` (OpenSpiel: 1e-4) and double until π stops changing (OpenSpiel's
    /// `sweep_pi_vs_alpha`: `allclose` with rtol 1e-5, atol 1e-8), or until the chain
    /// becomes reducible, in which case the last α with a unique π is used.
    Sweep {
        /// First α tried.
        start: f64,
    },
    /// The α → ∞ limit: π lives on the sink strongly connected components of the response
    /// graph (edge σ → τ when the deviating population strictly gains, rate 1; neutral
    /// moves rate 1/m, as the finite-α fixation probability's limit). Several sinks give
    /// several stationary distributions and [`Status::MultipleStationary`].
    Infinite,
}

/// alpha-Rank: the stationary distribution π of the Markov chain whose states are
/// monomorphic population states and whose transitions are fixations of single mutants.
///
/// A mutant τ invading resident σ (one population changes its strategy) fixates with
/// probability `ρ = (1 − e^{−u})/(1 − e^{−m·u})`, `u = α·(f_τ − f_σ)`, `ρ = 1/m` for `u ≈ 0`
/// (evaluated with `expm1` and exponent shifts so that no `exp` overflows); the chain moves
/// with probability `η·ρ`, `η = 1/Σ_k(|S_k| − 1)`. The chain is sparse: each state has
/// `Σ_k(|S_k| − 1)` neighbours, so π is computed on the sparse chain: its closed
/// communicating classes are found with Tarjan's algorithm (with an explicit stack: no
/// recursion, so no stack overflow however many states), and π on each class directly
/// when it has at most 1 024 states (the Grassmann–Taksar–Heyman state reduction: no
/// subtractions, so every entry of π keeps a small relative error even when fixation
/// probabilities span hundreds of orders of magnitude and the class is nearly
/// decomposable), else by under-relaxed Gauss–Seidel sweeps (ω = 0.8) on `πᵀ(C − I) = 0`
/// until the L1 change is below `tolerance` (default 1e-12). A reducible chain (several closed classes: several sink components at
/// infinite α, or fixation probabilities that underflow to 0) gives one distribution per
/// class and [`Status::MultipleStationary`] rather than an error.
///
/// [`Solution::stationary`] holds π over states (profiles in row-major order, or
/// strategies for a single population); [`Solution::strategies`] the marginals of π per
/// player (of the mean of the distributions when there are several).
///
/// Defaults (OpenSpiel `alpharank.compute`): m = 50, α = 100, local selection model,
/// [`Populations::Auto`].
///
/// # Complexity
///
/// Building the chain: O(states · Σ_k |S_k|) fixation probabilities (single population,
/// global model: × m). A class of n ≤ 1 024 states: O(n³/3) time and `8·n²` bytes. Each
/// sweep on a larger one: O(states · Σ_k |S_k|). Memory: one `f64` rate per
/// (state, neighbour), `8 · states · Σ_k(|S_k| − 1)` bytes: 435 MB for two populations of
/// 301 strategies (90 601 states), the size of a long PSRO run's meta-game. Two
/// populations of 100 strategies (10 000 states) take well under a second.
///
/// # References
///
/// S. Omidshafiei et al., *α-Rank: Multi-agent evaluation by evolution*, Scientific Reports
/// 9, 2019 (arXiv:1903.01373); T. A. Han, L. M. Pereira, F. C. Santos, *Intention
/// recognition promotes the emergence of cooperation*, 2013; P. Muller et al., *A
/// generalized training approach for multiagent learning*, arXiv:1909.12823 (infinite α).
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, alpha_rank::{Alpha, AlphaRank}};
/// use ndarray::array;
///
/// let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]])?;
/// let sol = AlphaRank::default().with_alpha(Alpha::Infinite).solve(&rps)?;
/// assert!(sol.stationary().unwrap()[0].iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-9));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AlphaRank {
    population_size: usize,
    alpha: Alpha,
    populations: Populations,
    selection: SelectionModel,
    tolerance: f64,
    max_sweeps: usize,
}

impl Default for AlphaRank {
    fn default() -> Self {
        Self {
            population_size: 50,
            alpha: Alpha::Finite(100.0),
            populations: Populations::Auto,
            selection: SelectionModel::Local,
            tolerance: 1e-12,
            max_sweeps: 1_000_000,
        }
    }
}

/// The full alpha-Rank answer.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct AlphaRankResult {
    /// One stationary distribution per closed class of the chain (usually one), over
    /// profiles (row-major) or, for a single population, over strategies.
    pub stationary: Vec<Vec<f64>>,
    /// True when the single-population model was used.
    pub single_population: bool,
    /// The α used (`f64::INFINITY` for [`Alpha::Infinite`]; the final α of a sweep).
    pub alpha: f64,
    /// Per player, the marginal of the mean stationary distribution.
    pub marginals: Vec<Vec<f64>>,
    /// Largest L1 residual ‖πᵀ(C − I)‖₁ over the distributions.
    pub residual: f64,
    /// Gauss–Seidel sweeps used (summed over classes and α values; classes solved directly
    /// take none).
    pub sweeps: usize,
    /// [`Status::MultipleStationary`] when the chain has several closed classes (several
    /// distributions), else [`Status::MaxIterations`] when a class hit `max_sweeps` before the
    /// tolerance, else [`Status::Solved`].
    pub status: Status,
}

impl AlphaRank {
    const NAME: &'static str = "alpha-rank";

    /// The same solver with population size `m` (at least 2; default 50).
    pub fn with_population_size(mut self, m: usize) -> Self {
        self.population_size = m;
        self
    }

    /// The same solver with another α (default `Alpha::Finite(100.0)`).
    pub fn with_alpha(mut self, alpha: Alpha) -> Self {
        self.alpha = alpha;
        self
    }

    /// The same solver with another population model (default [`Populations::Auto`]).
    pub fn with_populations(mut self, populations: Populations) -> Self {
        self.populations = populations;
        self
    }

    /// The same solver with another selection model (default [`SelectionModel::Local`]).
    pub fn with_selection(mut self, selection: SelectionModel) -> Self {
        self.selection = selection;
        self
    }

    /// The same solver with another stopping tolerance on the L1 change of π per
    /// Gauss–Seidel sweep (positive; default 1e-12). Classes solved directly (at most 1 024
    /// states) do not read it.
    pub fn with_tolerance(mut self, tolerance: f64) -> Self {
        self.tolerance = tolerance;
        self
    }

    /// The same solver with a cap on Gauss–Seidel sweeps per class (default 1 000 000).
    pub fn with_iterations(mut self, max_sweeps: usize) -> Self {
        self.max_sweeps = max_sweeps;
        self
    }

    fn validate(&self) -> Result<()> {
        if self.population_size < 2 {
            return Err(invalid(Self::NAME, "population size m must be at least 2"));
        }
        match self.alpha {
            Alpha::Finite(a) | Alpha::Sweep { start: a } if !(a.is_finite() && a > 0.0) => {
                return Err(invalid(Self::NAME, format!("alpha must be positive and finite, got {a}")));
            }
            _ => {}
        }
        if !(self.tolerance.is_finite() && self.tolerance > 0.0) {
            return Err(invalid(Self::NAME, "tolerance must be positive and finite"));
        }
        if self.max_sweeps == 0 {
            return Err(invalid(Self::NAME, "iterations (max sweeps) must be at least 1"));
        }
        Ok(())
    }

    /// Rank the game's strategies (profiles).
    ///
    /// # Errors
    ///
    /// [`SolveError::InvalidConfig`] for bad settings; [`SolveError::Unsupported`] when
    /// [`Populations::Single`] is asked for a game that is not two-player symmetric, or when
    /// the chain's rate table (see *Complexity* on [`AlphaRank`]) cannot be allocated.
    pub fn rank(&self, game: &NormalFormGame) -> Result<AlphaRankResult> {
        self.validate()?;
        let tol = 1e-12 * game.payoff_scale();
        let symmetric = game.num_players() == 2 && game.is_symmetric(tol);
        let single = match self.populations {
            Populations::Auto => symmetric,
            Populations::Single if !symmetric => {
                return Err(SolveError::Unsupported {
                    solver: Self::NAME,
                    reason: "the single-population model needs a two-player symmetric game".into(),
                });
            }
            Populations::Single => true,
            Populations::Multiple => false,
        };
        let model = Model::new(game, single, self.population_size as f64, self.selection, tol);
        let (mut stationary, alpha, residual, sweeps, converged) = match self.alpha {
            Alpha::Finite(a) => {
                let r = self.stationary(&model, a)?;
                (r.0, a, r.1, r.2, r.3)
            }
            Alpha::Infinite => {
                let r = self.stationary(&model, f64::INFINITY)?;
                (r.0, f64::INFINITY, r.1, r.2, r.3)
            }
            Alpha::Sweep { start } => self.sweep(&model, start)?,
        };
        for pi in stationary.iter_mut() {
            let total: f64 = pi.iter().sum();
            pi.iter_mut().for_each(|p| *p /= total);
        }
        let marginals = model.marginals(&stationary);
        let status = if stationary.len() > 1 {
            Status::MultipleStationary
        } else if converged {
            Status::Solved
        } else {
            Status::MaxIterations
        };
        Ok(AlphaRankResult {
            stationary,
            single_population: single,
            alpha,
            marginals,
            residual,
            sweeps,
            status,
        })
    }

    #[allow(clippy::type_complexity)]
    fn sweep(&self, model: &Model<'_>, start: f64) -> Result<(Vec<Vec<f64>>, f64, f64, usize, bool)> {
        let mut alpha = start;
        let mut previous: Option<(Vec<Vec<f64>>, f64, f64, bool)> = None;
        let mut total_sweeps = 0;
        for _ in 0..200 {
            let (pi, residual, sweeps, converged) = self.stationary(model, alpha)?;
            total_sweeps += sweeps;
            if pi.len() > 1 {
                return Ok(match previous {
                    Some((p, a, r, c)) => (p, a, r, total_sweeps, c),
                    None => (pi, alpha, residual, total_sweeps, converged),
                });
            }
            if let Some((p, ..)) = &previous {
                let close = p[0].iter().zip(&pi[0]).all(|(a, b)| (a - b).abs() <= 1e-8 + 1e-5 * b.abs());
                if close {
                    return Ok((pi, alpha, residual, total_sweeps, converged));
                }
            }
            previous = Some((pi, alpha, residual, converged));
            alpha *= 2.0;
        }
        // INVARIANT: the loop ran at least once, so `previous` is set.
        let (p, a, r, c) = previous.expect("at least one alpha");
        Ok((p, a, r, total_sweeps, c))
    }

    /// Stationary distributions of the chain at `alpha`, the worst residual, sweeps, and
    /// whether every class converged.
    fn stationary(&self, model: &Model<'_>, alpha: f64) -> Result<(Vec<Vec<f64>>, f64, usize, bool)> {
        let chain = Chain::build(model, alpha)?;
        let classes = chain.closed_classes();
        let mut out = Vec::with_capacity(classes.len());
        let (mut residual, mut sweeps, mut converged) = (0.0f64, 0, true);
        for class in &classes {
            let (pi, r, s, c) = chain.solve_class(class, self.tolerance, self.max_sweeps);
            residual = residual.max(r);
            sweeps += s;
            converged &= c;
            out.push(pi);
        }
        Ok((out, residual, sweeps, converged))
    }
}

impl MetaSolver for AlphaRank {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        let result = self.rank(game)?;
        Ok(Solution::new(game, result.marginals, result.status, result.sweeps)
            .with_extras(Extras::Stationary(result.stationary)))
    }
}

/// The states and fitness comparisons of the evolutionary model.
struct Model<'a> {
    game: &'a NormalFormGame,
    single: bool,
    m: f64,
    selection: SelectionModel,
    /// Single population, global model, constant-sum: the payoff sum `c`.
    constant_sum: Option<f64>,
    /// Ties: |payoff difference| at most this is neutral.
    tie: f64,
    shape: Vec<usize>,
    strides: Vec<usize>,
    /// Each player's payoffs, flattened row-major (profile index = state index).
    payoffs: Vec<&'a [f64]>,
}

impl<'a> Model<'a> {
    fn new(game: &'a NormalFormGame, single: bool, m: f64, selection: SelectionModel, tie: f64) -> Self {
        let shape = game.shape().to_vec();
        let mut strides = vec![1; shape.len()];
        for p in (0..shape.len().saturating_sub(1)).rev() {
            strides[p] = strides[p + 1] * shape[p + 1];
        }
        let constant_sum = if single && selection == SelectionModel::Global {
            // INVARIANT: single-population games are two-player (checked by the caller).
            let a = game.matrix(0).expect("two-player game");
            let c = a[[0, 0]] * 2.0;
            let k = a.nrows();
            let ok = (0..k).all(|r| (0..k).all(|s| (a[[r, s]] + a[[s, r]] - c).abs() <= tie));
            ok.then_some(c)
        } else {
            None
        };
        let payoffs = (0..game.num_players())
            // INVARIANT: `NormalFormGame` stores payoffs in standard layout.
            .map(|p| game.payoffs(p).as_slice().expect("standard layout"))
            .collect();
        Self { game, single, m, selection, constant_sum, tie, shape, strides, payoffs }
    }

    fn num_states(&self) -> usize {
        if self.single { self.shape[0] } else { self.game.num_profiles() }
    }

    /// Number of neighbours of every state.
    fn degree(&self) -> usize {
        if self.single { self.shape[0] - 1 } else { self.shape.iter().map(|k| k - 1).sum() }
    }

    /// Fixation probabilities both ways between `state` and its neighbour `other` that
    /// differs in `population`: `(rho(state → other), rho(other → state))`.
    fn pair(&self, population: usize, state: usize, other: usize, alpha: f64) -> (f64, f64) {
        if self.single {
            // INVARIANT: single-population games are two-player.
            let a = self.game.matrix(0).expect("two-player game");
            return (self.single_rho(&a, other, state, alpha), self.single_rho(&a, state, other, alpha));
        }
        let payoffs = self.payoffs[population];
        let diff = payoffs[other] - payoffs[state];
        if alpha.is_infinite() {
            return (self.fixation(diff, alpha), self.fixation(-diff, alpha));
        }
        fixation_pair(alpha * diff, self.m)
    }

    /// Fixation probability for fitness difference `diff` (mutant − resident) at `alpha`.
    fn fixation(&self, diff: f64, alpha: f64) -> f64 {
        if alpha.is_infinite() {
            return if diff.abs() <= self.tie {
                1.0 / self.m
            } else if diff > 0.0 {
                1.0
            } else {
                0.0
            };
        }
        fixation_probability(alpha * diff, self.m)
    }

    /// Single population: probability that mutant `r` fixates in a population playing `s`.
    fn single_rho(&self, a: &ndarray::ArrayView2<'_, f64>, r: usize, s: usize, alpha: f64) -> f64 {
        let m = self.m;
        match (self.selection, self.constant_sum) {
            (SelectionModel::Local, _) => self.fixation(a[[r, s]] - a[[s, r]], alpha),
            (SelectionModel::Global, Some(c)) => self.fixation(m / (m - 1.0) * (a[[r, s]] - c / 2.0), alpha),
            (SelectionModel::Global, None) => {
                // ρ = 1 / (1 + Σ_{l=1}^{m−1} Π_{p=1}^{l} e^{−α(f_r(p) − f_s(m−p))}), with
                // f_r(p) = ((p−1)·M[r,r] + (m−p)·M[r,s])/(m−1) (p mutants), in log space.
                let mi = self.population_size();
                let mut partial = 0.0f64;
                let mut exponents = Vec::with_capacity(mi);
                exponents.push(0.0);
                let mut min_partial = f64::INFINITY;
                let mut zeros = 0usize;
                for p in 1..mi {
                    let pf = p as f64;
                    let ps = m - pf;
                    let f_r = ((pf - 1.0) * a[[r, r]] + (m - pf) * a[[r, s]]) / (m - 1.0);
                    let f_s = ((ps - 1.0) * a[[s, s]] + (m - ps) * a[[s, r]]) / (m - 1.0);
                    partial += f_r - f_s;
                    min_partial = min_partial.min(partial);
                    if partial.abs() <= self.tie {
                        zeros += 1;
                    }
                    exponents.push(-alpha * partial);
                }
                if alpha.is_infinite() {
                    return if min_partial > self.tie {
                        1.0
                    } else if min_partial < -self.tie {
                        0.0
                    } else {
                        1.0 / (1.0 + zeros as f64)
                    };
                }
                let top = exponents.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                let sum: f64 = exponents.iter().map(|e| (e - top).exp()).sum();
                (-(top + sum.ln())).exp()
            }
        }
    }

    fn population_size(&self) -> usize {
        self.m as usize
    }

    /// Per-player marginals of the mean of `stationary`.
    fn marginals(&self, stationary: &[Vec<f64>]) -> Vec<Vec<f64>> {
        let n = self.num_states();
        let mut mean = vec![0.0; n];
        for pi in stationary {
            mean.iter_mut().zip(pi).for_each(|(m, p)| *m += p / stationary.len() as f64);
        }
        if self.single {
            return vec![mean.clone(), mean];
        }
        let mut out: Vec<Vec<f64>> = self.shape.iter().map(|&k| vec![0.0; k]).collect();
        for (state, &p) in mean.iter().enumerate() {
            for (k, (&size, &stride)) in self.shape.iter().zip(&self.strides).enumerate() {
                out[k][(state / stride) % size] += p;
            }
        }
        out
    }
}

/// `ρ(u) = (1 − e^{−u})/(1 − e^{−m·u})`, `1/m` for |u| < 1e-14, without overflow: for
/// u < 0 it is evaluated as `e^{(m−1)u}·(1 − e^{u})/(1 − e^{m·u})`.
pub(crate) fn fixation_probability(u: f64, m: f64) -> f64 {
    if u.abs() < 1e-14 {
        1.0 / m
    } else if u > 0.0 {
        (-u).exp_m1() / (-m * u).exp_m1()
    } else {
        let v = -u;
        (-(m - 1.0) * v).exp() * ((-v).exp_m1() / (-m * v).exp_m1())
    }
}

/// `(ρ(u), ρ(−u))` sharing the exponentials: `ρ(−|u|) = e^{−(m−1)|u|}·ρ(|u|)`.
fn fixation_pair(u: f64, m: f64) -> (f64, f64) {
    if u.abs() < 1e-14 {
        return (1.0 / m, 1.0 / m);
    }
    let a = u.abs();
    // Past these bounds the formulas round to exactly 1 and 0; skipping them skips libm's
    // slow underflow path, which most pairs of a ±5 meta-game at α = 100 would take.
    let up = if a > 40.0 { 1.0 } else { (-a).exp_m1() / (-m * a).exp_m1() };
    let decay = (m - 1.0) * a;
    let down = if decay > 746.0 { 0.0 } else { (-decay).exp() * up };
    if u > 0.0 { (up, down) } else { (down, up) }
}

/// One population's axis of the state space: its number of strategies, its stride in the
/// state index, and where its block of neighbour slots starts in a state's row.
#[derive(Clone, Copy, Debug)]
struct Axis {
    size: usize,
    stride: usize,
    offset: usize,
}

impl Axis {
    /// The first state of the line through `state` along this axis, and `state`'s strategy.
    fn line(&self, state: usize) -> (usize, usize) {
        let own = (state / self.stride) % self.size;
        (state - own * self.stride, own)
    }

    /// In the layout where this axis varies fastest (see [`AxisCopies`]): where the line
    /// through `state` starts, and `state`'s strategy (its place on the line).
    fn locate(&self, state: usize) -> (usize, usize) {
        let block = self.size * self.stride;
        let own = (state / self.stride) % self.size;
        ((state / block) * block + (state % self.stride) * self.size, own)
    }
}

/// A vector over states kept once per axis, each copy laid out with that axis varying
/// fastest, so that every line along every axis is a contiguous slice: the Gauss–Seidel
/// inner loop is then plain dot products instead of strided gathers. The last axis has
/// stride 1, so its copy is the vector in row-major order.
struct AxisCopies {
    copies: Vec<Vec<f64>>,
}

impl AxisCopies {
    fn new(axes: &[Axis], values: &[f64]) -> Self {
        let mut copies: Vec<Vec<f64>> = axes.iter().map(|_| vec![0.0; values.len()]).collect();
        for (axis, copy) in axes.iter().zip(copies.iter_mut()) {
            for (j, &v) in values.iter().enumerate() {
                let (start, own) = axis.locate(j);
                copy[start + own] = v;
            }
        }
        Self { copies }
    }

    /// The vector in row-major state order.
    fn row_major(&self) -> &[f64] {
        // INVARIANT: a chain has at least one axis.
        self.copies.last().expect("at least one axis")
    }

    fn set(&mut self, axes: &[Axis], state: usize, value: f64) {
        for (axis, copy) in axes.iter().zip(self.copies.iter_mut()) {
            let (start, own) = axis.locate(state);
            copy[start + own] = value;
        }
    }

    fn scale(&mut self, factor: f64) {
        self.copies.iter_mut().flatten().for_each(|v| *v *= factor);
    }
}

/// `Σ a_i·b_i` of two slices of equal length, in alpha-Rank's summation order:
/// [`linalg::dot`] over the whole groups of four, plus the last `len mod 4` products summed
/// on their own ([`linalg::dot_in_order`]). The tail is added last, not folded into the
/// partial sums as [`linalg::dot`] does, so the stationary distributions keep their bits.
fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let whole = a.len() / 4 * 4;
    linalg::dot(&a[..whole], &b[..whole]) + linalg::dot_in_order(&a[whole..], &b[whole..])
}

/// The chain with its neighbour structure left implicit: the neighbours of state j are, per
/// population k in order, the states that change k's strategy to each other strategy in
/// ascending order, which fills `degree = Σ_k(|S_k| − 1)` slots. Stored are the rates into
/// each state (`rate_in[j·degree + slot]`, the rate from that slot's neighbour into j), for
/// Gauss–Seidel, and one bit per slot saying whether the rate out of j to that neighbour is
/// positive, for the component search. η cancels out of π, so the rates are the fixation
/// probabilities themselves.
///
/// Memory: `8.125·states·degree` bytes (≈ 442 MB for two populations of 301 strategies)
/// plus O(states); nothing here recurses.
struct Chain {
    axes: Vec<Axis>,
    degree: usize,
    rate_in: Vec<f64>,
    /// Bit `j·degree + slot` set when the rate from j to that slot's neighbour is positive.
    out_edges: Vec<u64>,
    out_total: Vec<f64>,
    eta: f64,
}

/// Marks a state not yet reached by the component search.
const UNVISITED: usize = usize::MAX;

/// Closed classes of at most this many states are solved directly
/// ([`Chain::solve_class_dense`]: 8 MiB and about 0.4 G multiply-adds at the limit, a 32×32
/// two-population meta-game), larger ones by Gauss–Seidel.
const DENSE_CLASS_LIMIT: usize = 1024;

impl Chain {
    fn build(model: &Model<'_>, alpha: f64) -> Result<Self> {
        let n = model.num_states();
        let degree = model.degree();
        let (sizes, strides): (Vec<usize>, Vec<usize>) = if model.single {
            (vec![model.shape[0]], vec![1])
        } else {
            (model.shape.clone(), model.strides.clone())
        };
        let mut axes = Vec::with_capacity(sizes.len());
        let mut offset = 0;
        for (&size, &stride) in sizes.iter().zip(&strides) {
            axes.push(Axis { size, stride, offset });
            offset += size - 1;
        }
        let entries = n.checked_mul(degree).ok_or_else(|| too_large(n, degree))?;
        let mut rate_in = Vec::new();
        rate_in.try_reserve_exact(entries).map_err(|_| too_large(n, degree))?;
        rate_in.resize(entries, 0.0);
        let mut out_edges = vec![0u64; entries.div_ceil(64)];
        let mut out_total = vec![0.0; n];
        // Line by line: the states that differ only in population k's strategy form a
        // complete graph whose rates fill one block of each of their rows, so the writes of
        // a line stay within `size` nearby blocks.
        for (k, axis) in axes.iter().enumerate() {
            let block = axis.size * axis.stride;
            for first in (0..n).filter(|&j| j % block < axis.stride) {
                for own in 0..axis.size {
                    let j = first + own * axis.stride;
                    for s in (own + 1)..axis.size {
                        let other = first + s * axis.stride;
                        // `up` = rate j → other, `down` = rate other → j. In j's row, `other`
                        // (strategy s > own) sits at slot s − 1 of the block; in other's row,
                        // j (strategy own < s) sits at slot own.
                        let (up, down) = model.pair(k, j, other, alpha);
                        let into_j = j * degree + axis.offset + s - 1;
                        let into_other = other * degree + axis.offset + own;
                        rate_in[into_j] = down;
                        rate_in[into_other] = up;
                        out_total[j] += up;
                        out_total[other] += down;
                        // An out-edge is flagged at the source's slot for the target, which
                        // is where the rate into the source from the target is kept.
                        if up > 0.0 {
                            out_edges[into_j / 64] |= 1 << (into_j % 64);
                        }
                        if down > 0.0 {
                            out_edges[into_other / 64] |= 1 << (into_other % 64);
                        }
                    }
                }
            }
        }
        let eta = if degree == 0 { 1.0 } else { 1.0 / degree as f64 };
        Ok(Self { axes, degree, rate_in, out_edges, out_total, eta })
    }

    fn num_states(&self) -> usize {
        self.out_total.len()
    }

    /// The neighbour of `state` in `slot` (`slot < degree`).
    fn neighbour(&self, state: usize, slot: usize) -> usize {
        let mut t = slot;
        for axis in &self.axes {
            let count = axis.size - 1;
            if t < count {
                let (base, own) = axis.line(state);
                let s = if t < own { t } else { t + 1 };
                return base + s * axis.stride;
            }
            t -= count;
        }
        // INVARIANT: callers pass `slot < degree`, the total of the axes' counts.
        unreachable!("slot {slot} out of range {}", self.degree)
    }

    /// The first slot at or after `slot` whose rate out of `state` is positive.
    fn next_out_edge(&self, state: usize, slot: usize) -> Option<usize> {
        let row = state * self.degree;
        let end = row + self.degree;
        let mut bit = row + slot;
        while bit < end {
            let word = self.out_edges[bit / 64] >> (bit % 64);
            if word != 0 {
                let found = bit + word.trailing_zeros() as usize;
                return (found < end).then(|| found - row);
            }
            bit = (bit / 64 + 1) * 64;
        }
        None
    }

    /// `Σ_i π_i · rate(i → j)` over j's neighbours i.
    fn inflow(&self, pi: &AxisCopies, j: usize) -> f64 {
        let rates = &self.rate_in[j * self.degree..(j + 1) * self.degree];
        let mut sum = 0.0;
        for (axis, copy) in self.axes.iter().zip(&pi.copies) {
            let (start, own) = axis.locate(j);
            let line = &copy[start..start + axis.size];
            let block = &rates[axis.offset..axis.offset + axis.size - 1];
            sum += dot(&line[..own], &block[..own]) + dot(&line[own + 1..], &block[own..]);
        }
        sum
    }

    /// The closed communicating classes (sink strongly connected components of the graph of
    /// positive rates), each sorted, in order of their smallest state.
    ///
    /// Tarjan's algorithm with an explicit stack of (state, next slot) frames, so the depth
    /// of the search (up to the number of states) costs heap, not call stack. A component
    /// is closed when none of its states has an edge into an earlier finished component
    /// (edges into components finished later cannot exist: Tarjan finishes components in
    /// reverse topological order).
    fn closed_classes(&self) -> Vec<Vec<usize>> {
        let n = self.num_states();
        let mut order = vec![UNVISITED; n];
        let mut low = vec![0usize; n];
        let mut on_stack = vec![false; n];
        // Whether a state has an edge into a finished component (so out of its own).
        let mut escapes = vec![false; n];
        let mut component = vec![UNVISITED; n];
        let mut closed: Vec<bool> = Vec::new();
        let mut stack: Vec<usize> = Vec::new();
        let mut frames: Vec<(usize, usize)> = Vec::new();
        let mut counter = 0;
        for root in 0..n {
            if order[root] != UNVISITED {
                continue;
            }
            order[root] = counter;
            low[root] = counter;
            counter += 1;
            stack.push(root);
            on_stack[root] = true;
            frames.push((root, 0));
            while let Some(frame) = frames.last_mut() {
                let v = frame.0;
                if let Some(slot) = self.next_out_edge(v, frame.1) {
                    frame.1 = slot + 1;
                    let w = self.neighbour(v, slot);
                    if order[w] == UNVISITED {
                        order[w] = counter;
                        low[w] = counter;
                        counter += 1;
                        stack.push(w);
                        on_stack[w] = true;
                        frames.push((w, 0));
                    } else if on_stack[w] {
                        low[v] = low[v].min(order[w]);
                    } else {
                        escapes[v] = true;
                    }
                    continue;
                }
                frames.pop();
                let finished = low[v] == order[v];
                if finished {
                    let id = closed.len();
                    let mut is_closed = true;
                    while let Some(w) = stack.pop() {
                        on_stack[w] = false;
                        component[w] = id;
                        is_closed &= !escapes[w];
                        if w == v {
                            break;
                        }
                    }
                    closed.push(is_closed);
                }
                if let Some(&(parent, _)) = frames.last() {
                    low[parent] = low[parent].min(low[v]);
                    // The tree edge parent → v leaves the parent's component when v's
                    // component has just finished.
                    escapes[parent] |= finished;
                }
            }
        }
        let mut class_of = vec![UNVISITED; closed.len()];
        let mut classes: Vec<Vec<usize>> = Vec::new();
        for (v, &c) in component.iter().enumerate() {
            if !closed[c] {
                continue;
            }
            if class_of[c] == UNVISITED {
                class_of[c] = classes.len();
                classes.push(Vec::new());
            }
            classes[class_of[c]].push(v);
        }
        classes
    }

    /// π on one closed class as a full-length vector (0 off the class), the residual, the
    /// sweeps and whether it converged: by [`Chain::solve_class_dense`] for classes of at
    /// most [`DENSE_CLASS_LIMIT`] states, else by [`Chain::solve_class_iterative`].
    fn solve_class(
        &self,
        class: &[usize],
        tolerance: f64,
        max_sweeps: usize,
    ) -> (Vec<f64>, f64, usize, bool) {
        if class.len() == 1 {
            let mut pi = vec![0.0; self.num_states()];
            pi[class[0]] = 1.0;
            return (pi, 0.0, 0, true);
        }
        if class.len() <= DENSE_CLASS_LIMIT
            && let Some(pi) = self.solve_class_dense(class)
        {
            let residual = self.residual(&AxisCopies::new(&self.axes, &pi), class);
            return (pi, residual, 0, true);
        }
        self.solve_class_iterative(class, tolerance, max_sweeps)
    }

    /// π on one closed class by the Grassmann–Taksar–Heyman algorithm (state reduction):
    /// Gaussian elimination on the class's dense rate matrix in which every pivot is the
    /// sum of the remaining off-diagonal rates of its row, so nothing is ever subtracted
    /// and every entry of π has a small relative error (a few `n·ε`) however the rates
    /// spread, even when the class is nearly decomposable (rates of 1e-100 between
    /// near-closed groups of states), where iterations stall.
    ///
    /// `None` when a pivot underflows to 0 (products of rates below 1e-308), so that the
    /// caller falls back to iterating.
    ///
    /// # Complexity
    ///
    /// O(n³/3) time and `8·n²` bytes for a class of n states.
    ///
    /// # References
    ///
    /// W. K. Grassmann, M. I. Taksar, D. P. Heyman, *Regenerative analysis and steady state
    /// distributions for Markov chains*, Operations Research 33(5), 1985; C. A. O'Cinneide,
    /// *Entrywise perturbation theory and error analysis for Markov chains*, Numerische
    /// Mathematik 65, 1993 (the entrywise accuracy).
    fn solve_class_dense(&self, class: &[usize]) -> Option<Vec<f64>> {
        let size = class.len();
        // rates[i·size + j] = rate(class[i] → class[j]); the diagonal is never read.
        let mut rates = vec![0.0; size * size];
        for (col, &j) in class.iter().enumerate() {
            for slot in 0..self.degree {
                let i = self.neighbour(j, slot);
                // A closed class has no positive rate out of it; rates into it from outside
                // do not matter.
                if let Ok(row) = class.binary_search(&i) {
                    rates[row * size + col] = self.rate_in[j * self.degree + slot];
                }
            }
        }
        // Censor the chain on states 0..k, k = size − 1 down to 1: the paths through k add
        // rate(i → k)·rate(k → j)/Σ_{l<k} rate(k → l) to rate(i → j).
        let mut pivots = vec![0.0; size];
        for k in (1..size).rev() {
            let (above, below) = rates.split_at_mut(k * size);
            let row_k = &below[..k];
            let pivot: f64 = row_k.iter().sum();
            if !(pivot > 0.0 && pivot.is_finite()) {
                return None;
            }
            pivots[k] = pivot;
            for row_i in above.chunks_exact_mut(size) {
                let factor = row_i[k] / pivot;
                if factor != 0.0 {
                    row_i[..k].iter_mut().zip(row_k).for_each(|(r, &v)| *r += factor * v);
                }
            }
        }
        // Back substitution: π_k = Σ_{i<k} π_i·rate(i → k) / pivot_k, with π_0 = 1.
        let mut local = vec![0.0; size];
        local[0] = 1.0;
        for k in 1..size {
            let inflow: f64 = (0..k).map(|i| local[i] * rates[i * size + k]).sum();
            local[k] = inflow / pivots[k];
        }
        let total: f64 = local.iter().sum();
        if !(total > 0.0 && total.is_finite()) {
            return None;
        }
        let mut pi = vec![0.0; self.num_states()];
        for (&state, &p) in class.iter().zip(&local) {
            pi[state] = p / total;
        }
        Some(pi)
    }

    /// π on one closed class by under-relaxed Gauss–Seidel (SOR, ω = 0.8), as a full-length
    /// vector (0 off the class): `π_j ← ω·Σ_i π_i·rate(i → j) / Σ_k rate(j → k) + (1 − ω)·π_j`.
    ///
    /// The stopping test (L1 change per sweep below `tolerance`) cannot see mass that still
    /// has to move between near-closed groups of states: when the rates between them are
    /// far below `tolerance`, each sweep moves almost nothing and the split between the
    /// groups stays where the start and the sweep order left it. Small classes therefore
    /// go to [`Chain::solve_class_dense`].
    fn solve_class_iterative(
        &self,
        class: &[usize],
        tolerance: f64,
        max_sweeps: usize,
    ) -> (Vec<f64>, f64, usize, bool) {
        let n = self.num_states();
        let mut start = vec![0.0; n];
        let share = 1.0 / class.len() as f64;
        for &j in class {
            start[j] = share;
        }
        let mut pi = AxisCopies::new(&self.axes, &start);
        drop(start);
        let mut sweeps = 0;
        let mut converged = false;
        // Plain Gauss–Seidel (ω = 1) can oscillate forever on cyclic chains (e.g. a 2×2
        // matching-pennies cycle); under-relaxation ω = 0.8 converges on them and costs ≈ 40%
        // more sweeps on random games.
        let relaxation = 0.8;
        while sweeps < max_sweeps {
            sweeps += 1;
            let mut change = 0.0;
            for &j in class {
                let old = pi.row_major()[j];
                let new = relaxation * self.inflow(&pi, j) / self.out_total[j] + (1.0 - relaxation) * old;
                change += (new - old).abs();
                pi.set(&self.axes, j, new);
            }
            let total: f64 = class.iter().map(|&j| pi.row_major()[j]).sum();
            pi.scale(1.0 / total);
            if change / total <= tolerance {
                converged = true;
                break;
            }
        }
        let residual = self.residual(&pi, class);
        let mut copies = pi.copies;
        // INVARIANT: a chain has at least one axis.
        (copies.pop().expect("at least one axis"), residual, sweeps, converged)
    }

    /// ‖πᵀ(C − I)‖₁ on a class, C = I + η·(rates − diag(out totals)).
    fn residual(&self, pi: &AxisCopies, class: &[usize]) -> f64 {
        class
            .iter()
            .map(|&j| (self.eta * (self.inflow(pi, j) - pi.row_major()[j] * self.out_total[j])).abs())
            .sum()
    }
}

/// The error for a chain whose rate table cannot be allocated.
fn too_large(states: usize, degree: usize) -> SolveError {
    SolveError::Unsupported {
        solver: AlphaRank::NAME,
        reason: format!(
            "the Markov chain has {states} states with {degree} neighbours each; its rate table does not fit in memory"
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

    /// Marsaglia's xorshift64 from `seed`: the tests' reproducible random bits.
    fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn fixation_is_stable_and_continuous() {
        let m = 50.0;
        assert!((fixation_probability(0.0, m) - 0.02).abs() < 1e-15);
        assert!((fixation_probability(1e-9, m) - 0.02).abs() < 1e-9);
        assert!((fixation_probability(-1e-9, m) - 0.02).abs() < 1e-9);
        assert!((fixation_probability(1e4, m) - 1.0).abs() < 1e-15);
        assert_eq!(fixation_probability(-1e4, m), 0.0);
        for &u in &[0.3, -0.3, 2.0, -2.0] {
            let direct = (1.0 - f64::exp(-u)) / (1.0 - f64::exp(-m * u));
            assert!((fixation_probability(u, m) - direct).abs() < 1e-14 * direct.max(1e-300));
        }
    }

    /// Small games with payoffs in {0, 1, 2} (many ties, so neutral two-way edges as well as
    /// one-way ones) at α = ∞: the iterative Tarjan's closed classes equal the brute-force
    /// ones (v is in a closed class when everything it reaches reaches it back).
    #[test]
    fn closed_classes_match_brute_force_reachability() {
        let mut next = xorshift(0x2545_F491_4F6C_DD1D);
        for shape in [vec![2, 2], vec![3, 4], vec![5, 5], vec![2, 3, 2], vec![3, 1, 4]] {
            for _ in 0..20 {
                let tensors = (0..shape.len())
                    .map(|_| ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&shape), |_| (next() % 3) as f64))
                    .collect();
                let game = NormalFormGame::new(tensors).unwrap();
                let model = Model::new(&game, false, 50.0, SelectionModel::Local, 1e-12);
                let chain = Chain::build(&model, f64::INFINITY).unwrap();
                let n = chain.num_states();
                let mut reach = vec![vec![false; n]; n];
                for (v, row) in reach.iter_mut().enumerate() {
                    row[v] = true;
                    for slot in 0..chain.degree {
                        if chain.next_out_edge(v, slot) == Some(slot) {
                            row[chain.neighbour(v, slot)] = true;
                        }
                    }
                }
                for k in 0..n {
                    let via = reach[k].clone();
                    for row in reach.iter_mut().filter(|row| row[k]) {
                        row.iter_mut().zip(&via).for_each(|(r, &v)| *r |= v);
                    }
                }
                let mut expected: Vec<Vec<usize>> = Vec::new();
                for (v, row) in reach.iter().enumerate() {
                    let closed = row.iter().enumerate().all(|(w, &r)| !r || reach[w][v]);
                    if closed && !expected.iter().any(|c| c.contains(&v)) {
                        expected.push(row.iter().enumerate().filter(|(_, r)| **r).map(|(w, _)| w).collect());
                    }
                }
                assert_eq!(chain.closed_classes(), expected, "{shape:?}");
            }
        }
    }

    /// Each axis's copy puts that axis's lines in contiguous slices.
    #[test]
    fn axis_copies_make_every_line_contiguous() {
        let game = NormalFormGame::new(vec![ndarray::ArrayD::zeros(ndarray::IxDyn(&[3, 4, 2])); 3]).unwrap();
        let model = Model::new(&game, false, 50.0, SelectionModel::Local, 1e-12);
        let chain = Chain::build(&model, 1.0).unwrap();
        let values: Vec<f64> = (0..24).map(|j| j as f64).collect();
        let copies = AxisCopies::new(&chain.axes, &values);
        assert_eq!(copies.row_major(), values.as_slice());
        for (axis, copy) in chain.axes.iter().zip(&copies.copies) {
            for j in 0..24 {
                let (start, own) = axis.locate(j);
                let (base, own2) = axis.line(j);
                assert_eq!(own, own2);
                for s in 0..axis.size {
                    assert_eq!(copy[start + s], (base + s * axis.stride) as f64);
                }
            }
        }
    }

    /// The case saved in `tests/proptest-regressions/solvers_iterative.txt` (a 5×4 bimatrix
    /// game, α = 5, m = 50). Two groups of profiles are nearly closed: {(1,0), (1,1)}, left
    /// only at rates below 1e-100, and {(0,2), (3,2)}, a neutral pair (payoffs tie at 0,
    /// rate 1/m between them) left at rates near 1e-26 and entered from most of the game at
    /// rates near 1. Gauss–Seidel from a uniform start put about 5% of π on the second pair
    /// and stopped: a sweep moves ~1e-26 of mass between the groups, far below the
    /// tolerance, so the split was an artefact of the sweep order and a relabelled copy got
    /// another one (0.034 apart). The true π puts 4.9e-25 there. The reference is the
    /// Grassmann–Taksar–Heyman reduction of the same chain in 400-digit arithmetic (mpmath),
    /// with the rates from the documented `ρ(u)`.
    #[test]
    fn nearly_decomposable_chain_saved_case() {
        let a = array![
            [0.0, 0.0, 0.0, 0.8395606783055701],
            [0.7542008361030528, 0.5398384762946674, -0.3613819955176433, 0.0],
            [0.0, 0.0, -0.9167820153236745, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [0.0, 0.0, -0.6504236509534959, 0.0]
        ];
        let b = array![
            [0.0, 0.0, 0.977078716270192, 0.0],
            [0.4741339507814245, 0.49167543585187934, 0.0, 0.0],
            [0.0, 0.0, 0.0, 0.0],
            [-0.26663062185600017, -0.7208167703299544, 0.0, -0.24460952645533374],
            [0.0, 0.0, 0.0, 0.0]
        ];
        let reference = [
            [1.844554590195774e-53, 1.8756253921626976e-53, 4.892167107042377e-25, 1.878525546392893e-51],
            [0.013417808219822837, 0.9865821917801771, 2.5117587882578814e-53, 4.363042148907528e-53],
            [1.18260424072105e-54, 1.0710626880235125e-54, 2.008452515738536e-55, 3.5036684061333976e-53],
            [8.925076067141976e-54, 1.109723442323724e-55, 4.892167107042377e-25, 1.8546028597290598e-51],
            [1.1849182050277786e-54, 1.0734703147481457e-54, 3.253713889272557e-55, 3.5038981857045405e-53],
        ];
        let solver =
            AlphaRank::default().with_alpha(Alpha::Finite(5.0)).with_populations(Populations::Multiple);
        let game = NormalFormGame::bimatrix(a.clone(), b.clone()).unwrap();
        let x = solver.rank(&game).unwrap();
        assert_eq!(x.status, Status::Solved);
        assert_eq!(x.stationary.len(), 1);
        for (i, row) in reference.iter().enumerate() {
            for (j, &r) in row.iter().enumerate() {
                let p = x.stationary[0][i * 4 + j];
                assert!((p - r).abs() <= 1e-10 * r, "π({i},{j}) = {p:e}, reference {r:e}");
            }
        }
        // The permutation the property test drew from the saved seed.
        let (pr, pc) = ([3, 0, 4, 1, 2], [3, 0, 1, 2]);
        let permuted =
            |m: &ndarray::Array2<f64>| ndarray::Array2::from_shape_fn((5, 4), |(i, j)| m[[pr[i], pc[j]]]);
        let relabelled = NormalFormGame::bimatrix(permuted(&a), permuted(&b)).unwrap();
        let y = solver.rank(&relabelled).unwrap();
        assert_eq!(y.stationary.len(), 1);
        for (i, &pi) in pr.iter().enumerate() {
            for (j, &pj) in pc.iter().enumerate() {
                let (p, q) = (y.stationary[0][i * 4 + j], x.stationary[0][pi * 4 + pj]);
                assert!((p - q).abs() <= 1e-12 * q, "({i},{j}): {p:e} vs {q:e}");
            }
        }
    }

    /// The two class solvers agree where Gauss–Seidel converges (a well-mixed chain: random
    /// payoffs, small α), so the iterative path used for large classes stays checked
    /// against the direct one on small games.
    #[test]
    fn iterative_and_dense_class_solvers_agree_on_well_mixed_chains() {
        let mut bits = xorshift(0x9E37_79B9_7F4A_7C15);
        let mut uniform = move || (bits() >> 11) as f64 / (1u64 << 53) as f64;
        for shape in [vec![5, 7], vec![3, 4, 2], vec![2, 3, 2, 3]] {
            let tensors = (0..shape.len())
                .map(|_| ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&shape), |_| 2.0 * uniform() - 1.0))
                .collect();
            let game = NormalFormGame::new(tensors).unwrap();
            let model = Model::new(&game, false, 10.0, SelectionModel::Local, 1e-12);
            let chain = Chain::build(&model, 0.5).unwrap();
            let classes = chain.closed_classes();
            assert_eq!(classes.len(), 1, "{shape:?}");
            let dense = chain.solve_class_dense(&classes[0]).unwrap();
            let (iterative, residual, _, converged) =
                chain.solve_class_iterative(&classes[0], 1e-14, 1_000_000);
            assert!(converged && residual < 1e-12, "{shape:?}: residual {residual}");
            for (d, i) in dense.iter().zip(&iterative) {
                assert!((d - i).abs() <= 1e-10 * d, "{shape:?}: {d} vs {i}");
            }
        }
    }

    /// Han et al. (2013) via OpenSpiel's `alpharank_test.py::test_stationary_distribution`.
    #[test]
    fn han_et_al_2013() {
        let (r, t, p, s, delta, eps) = (1., 2., 0., -1., 4., 0.25);
        let a = array![
            [r - eps / 2., r - eps, 0., s + delta - eps, r - eps],
            [r, r, s, s, s],
            [0., t, p, p, p],
            [t - delta, t, p, p, p],
            [r, t, p, p, p]
        ];
        let game = NormalFormGame::bimatrix(a.clone(), a.t().to_owned()).unwrap();
        let sol = AlphaRank::default()
            .with_population_size(20)
            .with_alpha(Alpha::Finite(0.1))
            .with_selection(SelectionModel::Global)
            .rank(&game)
            .unwrap();
        assert!(sol.single_population);
        let expected = [0.40966787, 0.07959841, 0.20506998, 0.08505983, 0.2206039];
        for (x, e) in sol.stationary[0].iter().zip(expected) {
            assert!((x - e).abs() < 1e-6, "{:?}", sol.stationary);
        }
    }
}
