//! alpha-Rank (Omidshafiei et al. 2019): rank strategies (or strategy profiles) by the
//! stationary distribution of an evolutionary Markov chain over monomorphic populations.

use metagame_games::NormalFormGame;
use petgraph::algo::tarjan_scc;
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};

use crate::dynamics::invalid;
use crate::{Certificate, MetaSolver, Result, Solution, SolveError, Status};

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
/// communicating classes are found with Tarjan's algorithm, and π on each class by
/// under-relaxed Gauss–Seidel sweeps (ω = 0.8) on `πᵀ(C − I) = 0` until the L1 change is below `tolerance`
/// (default 1e-12). A reducible chain (several closed classes: several sink components at
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
/// global model: × m). Each sweep: O(states · Σ_k |S_k|). Two populations of 100
/// strategies (10 000 states) take well under a second.
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
/// assert!(sol.stationary[0].iter().all(|p| (p - 1.0 / 3.0).abs() < 1e-9));
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
    /// Gauss–Seidel sweeps used (summed over classes and α values).
    pub sweeps: usize,
    /// False when a class hit `max_sweeps` before the tolerance.
    pub converged: bool,
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
    /// Gauss–Seidel sweep (positive; default 1e-12).
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
    /// [`Populations::Single`] is asked for a game that is not two-player symmetric.
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
                let r = self.stationary(&model, a);
                (r.0, a, r.1, r.2, r.3)
            }
            Alpha::Infinite => {
                let r = self.stationary(&model, f64::INFINITY);
                (r.0, f64::INFINITY, r.1, r.2, r.3)
            }
            Alpha::Sweep { start } => self.sweep(&model, start),
        };
        for pi in stationary.iter_mut() {
            let total: f64 = pi.iter().sum();
            pi.iter_mut().for_each(|p| *p /= total);
        }
        let marginals = model.marginals(&stationary);
        Ok(AlphaRankResult {
            stationary,
            single_population: single,
            alpha,
            marginals,
            residual,
            sweeps,
            converged,
        })
    }

    #[allow(clippy::type_complexity)]
    fn sweep(&self, model: &Model<'_>, start: f64) -> (Vec<Vec<f64>>, f64, f64, usize, bool) {
        let mut alpha = start;
        let mut previous: Option<(Vec<Vec<f64>>, f64, f64, bool)> = None;
        let mut total_sweeps = 0;
        for _ in 0..200 {
            let (pi, residual, sweeps, converged) = self.stationary(model, alpha);
            total_sweeps += sweeps;
            if pi.len() > 1 {
                return match previous {
                    Some((p, a, r, c)) => (p, a, r, total_sweeps, c),
                    None => (pi, alpha, residual, total_sweeps, converged),
                };
            }
            if let Some((p, ..)) = &previous {
                let close = p[0].iter().zip(&pi[0]).all(|(a, b)| (a - b).abs() <= 1e-8 + 1e-5 * b.abs());
                if close {
                    return (pi, alpha, residual, total_sweeps, converged);
                }
            }
            previous = Some((pi, alpha, residual, converged));
            alpha *= 2.0;
        }
        // INVARIANT: the loop ran at least once, so `previous` is set.
        let (p, a, r, c) = previous.expect("at least one alpha");
        (p, a, r, total_sweeps, c)
    }

    /// Stationary distributions of the chain at `alpha`, the worst residual, sweeps, and
    /// whether every class converged.
    fn stationary(&self, model: &Model<'_>, alpha: f64) -> (Vec<Vec<f64>>, f64, usize, bool) {
        let chain = Chain::build(model, alpha);
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
        (out, residual, sweeps, converged)
    }
}

impl MetaSolver for AlphaRank {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        let result = self.rank(game)?;
        let status = if result.stationary.len() > 1 {
            Status::MultipleStationary
        } else if result.converged {
            Status::Solved
        } else {
            Status::MaxIterations
        };
        let certificate = Certificate::for_profile(game, &result.marginals);
        Ok(Solution {
            strategies: result.marginals,
            status,
            certificate,
            iterations: result.sweeps,
            joint: None,
            stationary: result.stationary,
        })
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
        Self { game, single, m, selection, constant_sum, tie, shape, strides }
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
        // INVARIANT: `NormalFormGame` stores payoffs in standard layout.
        let payoffs = self.game.payoffs(population).as_slice().expect("standard layout");
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
    let up = (-a).exp_m1() / (-m * a).exp_m1();
    let down = (-(m - 1.0) * a).exp() * up;
    if u > 0.0 { (up, down) } else { (down, up) }
}

/// The chain in compressed sparse rows: for state j, its neighbours `index[ptr[j]..ptr[j+1]]`
/// with the rates into j (`rate_in`) and out of j (`rate_out`); η cancels out of π.
struct Chain {
    ptr: Vec<usize>,
    index: Vec<u32>,
    rate_in: Vec<f64>,
    rate_out: Vec<f64>,
    out_total: Vec<f64>,
    eta: f64,
}

impl Chain {
    fn build(model: &Model<'_>, alpha: f64) -> Self {
        let n = model.num_states();
        let degree = model.degree();
        let (sizes, strides): (Vec<usize>, Vec<usize>) = if model.single {
            (vec![model.shape[0]], vec![1])
        } else {
            (model.shape.clone(), model.strides.clone())
        };
        // Offset of each population's block of neighbours within a row.
        let mut offsets = Vec::with_capacity(sizes.len());
        let mut acc = 0;
        for &k in &sizes {
            offsets.push(acc);
            acc += k - 1;
        }
        // Position of strategy `s` in the list 0..size without `own`.
        let pos = |s: usize, own: usize| if s < own { s } else { s - 1 };
        let mut index = vec![0u32; n * degree];
        let mut rate_in = vec![0.0; n * degree];
        let mut rate_out = vec![0.0; n * degree];
        for j in 0..n {
            for (k, (&size, &stride)) in sizes.iter().zip(&strides).enumerate() {
                let own = (j / stride) % size;
                for s in (own + 1)..size {
                    let other = j + (s - own) * stride;
                    let (up, down) = model.pair(k, j, other, alpha);
                    let e1 = j * degree + offsets[k] + pos(s, own);
                    let e2 = other * degree + offsets[k] + pos(own, s);
                    index[e1] = other as u32;
                    rate_out[e1] = up;
                    rate_in[e1] = down;
                    index[e2] = j as u32;
                    rate_out[e2] = down;
                    rate_in[e2] = up;
                }
            }
        }
        let ptr: Vec<usize> = (0..=n).map(|j| j * degree).collect();
        let out_total = (0..n).map(|j| rate_out[j * degree..(j + 1) * degree].iter().sum()).collect();
        let eta = if degree == 0 { 1.0 } else { 1.0 / degree as f64 };
        Self { ptr, index, rate_in, rate_out, out_total, eta }
    }

    /// The closed communicating classes (sink strongly connected components), each sorted.
    fn closed_classes(&self) -> Vec<Vec<usize>> {
        let n = self.out_total.len();
        let mut graph = DiGraph::<(), ()>::with_capacity(n, self.index.len());
        for _ in 0..n {
            graph.add_node(());
        }
        for j in 0..n {
            for e in self.ptr[j]..self.ptr[j + 1] {
                if self.rate_out[e] > 0.0 {
                    graph.add_edge(NodeIndex::new(j), NodeIndex::new(self.index[e] as usize), ());
                }
            }
        }
        let components = tarjan_scc(&graph);
        let mut component_of = vec![0usize; n];
        for (c, nodes) in components.iter().enumerate() {
            for v in nodes {
                component_of[v.index()] = c;
            }
        }
        let mut classes: Vec<Vec<usize>> = components
            .iter()
            .enumerate()
            .filter(|(c, nodes)| {
                nodes.iter().all(|v| {
                    let j = v.index();
                    (self.ptr[j]..self.ptr[j + 1])
                        .all(|e| self.rate_out[e] == 0.0 || component_of[self.index[e] as usize] == *c)
                })
            })
            .map(|(_, nodes)| {
                let mut v: Vec<usize> = nodes.iter().map(|v| v.index()).collect();
                v.sort_unstable();
                v
            })
            .collect();
        classes.sort();
        classes
    }

    /// π on one closed class by under-relaxed Gauss–Seidel (SOR, ω = 0.8), as a full-length
    /// vector (0 off the class): `π_j ← ω·Σ_i π_i·rate(i → j) / Σ_k rate(j → k) + (1 − ω)·π_j`.
    fn solve_class(
        &self,
        class: &[usize],
        tolerance: f64,
        max_sweeps: usize,
    ) -> (Vec<f64>, f64, usize, bool) {
        let n = self.out_total.len();
        let mut pi = vec![0.0; n];
        if class.len() == 1 {
            pi[class[0]] = 1.0;
            return (pi, 0.0, 0, true);
        }
        let share = 1.0 / class.len() as f64;
        for &j in class {
            pi[j] = share;
        }
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
                let mut inflow = 0.0;
                for e in self.ptr[j]..self.ptr[j + 1] {
                    inflow += pi[self.index[e] as usize] * self.rate_in[e];
                }
                let new = relaxation * inflow / self.out_total[j] + (1.0 - relaxation) * pi[j];
                change += (new - pi[j]).abs();
                pi[j] = new;
            }
            let total: f64 = class.iter().map(|&j| pi[j]).sum();
            class.iter().for_each(|&j| pi[j] /= total);
            if change / total <= tolerance {
                converged = true;
                break;
            }
        }
        let residual = self.residual(&pi, class);
        (pi, residual, sweeps, converged)
    }

    /// ‖πᵀ(C − I)‖₁ on a class, C = I + η·(rates − diag(out totals)).
    fn residual(&self, pi: &[f64], class: &[usize]) -> f64 {
        class
            .iter()
            .map(|&j| {
                let inflow: f64 = (self.ptr[j]..self.ptr[j + 1])
                    .map(|e| pi[self.index[e] as usize] * self.rate_in[e])
                    .sum();
                (self.eta * (inflow - pi[j] * self.out_total[j])).abs()
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::array;

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
