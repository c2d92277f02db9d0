//! The logit quantal-response path (McKelvey & Palfrey 1995; Turocy 2005) for one Nash
//! equilibrium of an n-player game, refined on its support to a certified answer.
//!
//! A logit quantal-response equilibrium (QRE) at precision `λ ≥ 0` is a profile with
//! `σ_p(i) ∝ exp(λ·u_p(i, σ_{-p}))` for every player `p`. At `λ = 0` it is the uniform
//! profile; for generic games the QREs form one smooth curve (the principal branch) that
//! converges to a Nash equilibrium as `λ → ∞`. The curve is followed in the coordinates
//! `(ln σ, λ)` with predictor–corrector continuation (Allgower & Georg 1990): an Euler step
//! along the tangent, then chord Newton steps back to the curve (minimum-norm steps from a
//! Householder QR of the Jacobian), with the step length adapted to the corrector's first
//! distance and contraction rate, as in Gambit's `logit`.
//!
//! Along the way, each time `λ` has grown by a fixed factor, the point's likely supports
//! (strategies whose probability is within `e^{-T}` of the player's most likely one, for a
//! few thresholds `T`) are handed to a Newton (Levenberg–Marquardt) solve of the equilibrium
//! conditions on that support: every support strategy earns the player's value `v_p` and
//! each player's probabilities sum to 1. Near-twin strategies (payoffs within 1e-5 of the
//! range for every player, as PSRO's repeated best responses are) make that system
//! near-singular, so each candidate is also tried with one twin per group, and a solved
//! support is repaired for a few rounds: strategies with negative probability leave, each
//! player's best profitable deviation joins (in place of its twin, unless that cycles).
//! A candidate is accepted only when its probabilities
//! are non-negative and [`Certificate::for_profile`], computed from the whole game, is at
//! most the target times [`NormalFormGame::payoff_scale`]; then the status is
//! [`Status::Solved`]. Otherwise the path goes on, and a path that ends (at the `λ` or step
//! cap, or when the step length collapses) returns its best profile with
//! [`Status::MaxIterations`].
//!
//! [`Certificate::for_profile`]: crate::Certificate::for_profile

use std::collections::HashMap;

use metagame_games::{DeviationPayoffs, NormalFormGame};

use crate::linalg::{Qr, dot_in_order, norm};
use crate::{MetaSolver, Result, Solution, SolveError, Status};

/// Logit QRE path following with support refinement: a certified Nash solver for any
/// number of players.
///
/// Payoffs are divided by [`NormalFormGame::payoff_scale`] first, so `λ` is in units of
/// the inverse payoff range and the defaults do not depend on the game's units.
///
/// Defaults: at most 100 000 path steps, `λ` up to 1e13 (Gambit's `logit` stops at 1e6 on
/// unscaled payoffs; strategies whose payoffs differ by 1e-7 of the range, as near-duplicate
/// PSRO members do, only separate on the path beyond `λ ≈ 1e9`), target certificate 1e-9
/// (NashConv relative to the payoff scale).
///
/// # Complexity
///
/// Per path step: one pass over the payoff tensors for the second-order payoffs
/// `u_p(s_p, s_q, σ_{-p,q})`, O(num_profiles · n²), one QR factorisation of the
/// `(N+1) × N` Jacobian, O(N³) with `N = Σ_p |S_p|`, and a first-order pass,
/// O(num_profiles · n), per corrector step. The number of steps depends on the game
/// (typically hundreds).
///
/// # References
///
/// - R. McKelvey, T. Palfrey (1995), "Quantal response equilibria for normal form games",
///   Games and Economic Behavior 10.
/// - T. Turocy (2005), "A dynamic homotopy interpretation of the logistic quantal response
///   equilibrium correspondence", Games and Economic Behavior 51.
/// - E. Allgower, K. Georg (1990), *Numerical Continuation Methods*, ch. 6 (step length
///   adaptation).
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, Status, logit::Logit};
/// use ndarray::{ArrayD, Dimension, IxDyn};
///
/// // Three-player matching pennies: 0 wants to match 1, 1 to match 2, 2 to mismatch 0.
/// let mut payoffs = vec![ArrayD::zeros(IxDyn(&[2, 2, 2])); 3];
/// for a in 0..2 {
///     for b in 0..2 {
///         for c in 0..2 {
///             let sign = |same: bool| if same { 1.0 } else { -1.0 };
///             payoffs[0][[a, b, c]] = sign(a == b);
///             payoffs[1][[a, b, c]] = sign(b == c);
///             payoffs[2][[a, b, c]] = sign(c != a);
///         }
///     }
/// }
/// let game = NormalFormGame::new(payoffs)?;
/// let solution = Logit::default().solve(&game)?;
/// assert_eq!(solution.status, Status::Solved);
/// assert!(solution.certificate.nash_conv <= 1e-9);
/// assert!((solution.strategies[0][0] - 0.5).abs() < 1e-9);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Logit {
    max_steps: usize,
    max_lambda: f64,
    target: f64,
}

impl Default for Logit {
    fn default() -> Self {
        Self { max_steps: 100_000, max_lambda: 1e13, target: 1e-9 }
    }
}

impl Logit {
    const NAME: &'static str = "logit";

    /// The same solver with at most `max_steps` accepted path steps (at least 1; default
    /// 100 000).
    pub fn with_max_steps(self, max_steps: usize) -> Self {
        Self { max_steps, ..self }
    }

    /// The same solver stopping the path once `λ` (on payoffs scaled to range 1) exceeds
    /// `max_lambda` (positive and finite; default 1e13).
    pub fn with_max_lambda(self, max_lambda: f64) -> Self {
        Self { max_lambda, ..self }
    }

    /// The same solver accepting an answer when its NashConv is at most
    /// `target · payoff_scale` (positive and finite; default 1e-9).
    pub fn with_target(self, target: f64) -> Self {
        Self { target, ..self }
    }

    /// The step cap.
    pub fn max_steps(&self) -> usize {
        self.max_steps
    }

    fn validate(&self) -> Result<()> {
        let invalid =
            |reason: &str| Err(SolveError::InvalidConfig { solver: Self::NAME, reason: reason.into() });
        if self.max_steps == 0 {
            return invalid("max_steps must be at least 1");
        }
        if !(self.max_lambda.is_finite() && self.max_lambda > 0.0) {
            return invalid("max_lambda must be positive and finite");
        }
        if !(self.target.is_finite() && self.target > 0.0) {
            return invalid("target must be positive and finite");
        }
        Ok(())
    }
}

impl MetaSolver for Logit {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        self.validate()?;
        let tolerance = self.target * game.payoff_scale();
        let mut tracer = Tracer::new(game, tolerance);
        let outcome = tracer.run(self.max_steps, self.max_lambda);
        let (strategies, status) = match outcome {
            Some(strategies) => (strategies, Status::Solved),
            None => {
                (tracer.best.take().map(|(_, s)| s).unwrap_or_else(|| uniform(game)), Status::MaxIterations)
            }
        };
        let solution = Solution::new(game, strategies, status, tracer.steps);
        if solution.status == Status::Solved && solution.certificate.nash_conv > tolerance {
            // INVARIANT: `Tracer::accept` checked this very certificate; kept as a guard so
            // that `Solved` never goes out with a bad certificate.
            return Ok(Solution { status: Status::MaxIterations, ..solution });
        }
        Ok(solution)
    }
}

fn uniform(game: &NormalFormGame) -> Vec<Vec<f64>> {
    game.shape().iter().map(|&k| vec![1.0 / k as f64; k]).collect()
}

/// Thresholds `T` on `ln(σ_max / σ_i)` that define the candidate supports tried at a
/// checkpoint: best responses only, then ratios of about 10, 1e3, 1e6, 1e10, 1e16.
const SUPPORT_THRESHOLDS: [f64; 6] = [1e-9, 2.3, 6.9, 13.8, 23.0, 36.8];
/// A refinement is tried each time `λ` has grown by this factor (from `λ = 1`).
const CHECKPOINT_FACTOR: f64 = 1.25;
/// Near twins: strategies whose payoffs differ by at most this much (payoffs of range 1).
const TWIN_TOLERANCE: f64 = 1e-5;
/// Rounds of support repair (drop negatives, add the best deviation) per candidate support.
const MAX_REPAIR_ROUNDS: usize = 6;
/// A support whose refinement failed at `λ` is tried again once `λ` has grown by this factor.
const RETRY_FACTOR: f64 = 2.0;
/// Corrector: largest first Newton distance and contraction rate before the step is cut
/// (Gambit's `logit` uses 0.4 and 0.6).
const MAX_DISTANCE: f64 = 0.4;
const MAX_CONTRACTION: f64 = 0.6;
/// Largest factor by which the step length grows or shrinks per step.
const MAX_DECELERATION: f64 = 2.0;
/// Corrector convergence (distance of the last Newton step) and iteration cap.
const CORRECTOR_TOLERANCE: f64 = 1e-8;
const MAX_CORRECTOR_STEPS: usize = 8;
/// Support Newton: residual norm (payoffs of range 1) that counts as solved, the step cap,
/// the damping levels tried per step, and how many steps may shrink the residual by less
/// than half before the support is given up.
const NEWTON_TOLERANCE: f64 = 1e-13;
const MAX_NEWTON_STEPS: usize = 30;
const MAX_DAMPING_TRIES: usize = 6;
const MAX_SLOW_STEPS: usize = 3;
/// First and smallest step length (arclength in `(ln σ, λ)`).
const FIRST_STEP: f64 = 0.03;
const MIN_STEP: f64 = 1e-10;

/// The path follower: game data scaled to payoff range 1, the layout of the variables, and
/// every buffer a step needs.
struct Tracer<'g> {
    game: &'g NormalFormGame,
    /// NashConv at or below which a profile is accepted.
    tolerance: f64,
    /// 1 / payoff scale.
    inverse_scale: f64,
    tensors: Tensors,
    /// `offsets[p]`: index of player `p`'s first strategy among the `N` log-probabilities.
    offsets: Vec<usize>,
    first_order: DeviationPayoffs<'g>,
    pairs: PairPayoffs,
    strategies: Vec<Vec<f64>>,
    values: Vec<Vec<f64>>,
    qr: Qr,
    residual: Vec<f64>,
    scratch: Vec<f64>,
    row_values: Vec<f64>,
    /// Accepted path steps.
    steps: usize,
    /// The best profile seen (lowest NashConv), with its NashConv.
    best: Option<(f64, Vec<Vec<f64>>)>,
    /// Supports whose refinement failed, with the `λ` of the last try.
    tried: HashMap<Vec<Vec<usize>>, f64>,
    twins: Twins,
}

impl<'g> Tracer<'g> {
    fn new(game: &'g NormalFormGame, tolerance: f64) -> Self {
        let shape = game.shape().to_vec();
        let inverse_scale = 1.0 / game.payoff_scale();
        let tensors = Tensors {
            shape: shape.clone(),
            payoffs: (0..game.num_players())
                .map(|p| game.payoffs(p).iter().map(|&u| u * inverse_scale).collect())
                .collect(),
        };
        let twins = Twins::new(&tensors);
        let mut offsets = Vec::with_capacity(shape.len());
        let mut total = 0;
        for &k in &shape {
            offsets.push(total);
            total += k;
        }
        Self {
            game,
            tolerance,
            inverse_scale,
            pairs: PairPayoffs::new(&shape),
            tensors,
            offsets,
            first_order: DeviationPayoffs::new(game),
            strategies: uniform(game),
            values: shape.iter().map(|&k| vec![0.0; k]).collect(),
            qr: Qr::new(total + 1, total),
            residual: vec![0.0; total],
            scratch: vec![0.0; total + 1],
            row_values: Vec::new(),
            steps: 0,
            best: None,
            tried: HashMap::new(),
            twins,
        }
    }

    fn num_variables(&self) -> usize {
        self.residual.len()
    }

    /// Sets `strategies = exp(x)` from the point `y = (x, λ)`.
    fn set_strategies(&mut self, y: &[f64]) {
        for (p, s) in self.strategies.iter_mut().enumerate() {
            let o = self.offsets[p];
            for (i, si) in s.iter_mut().enumerate() {
                *si = y[o + i].exp();
            }
        }
    }

    /// `H(y)` into `self.residual`: per player, `Σ σ − 1`, then
    /// `ln σ_i − ln σ_0 − λ (u_i − u_0)` for `i ≥ 1`. Returns its max-norm.
    fn evaluate_residual(&mut self, y: &[f64]) -> f64 {
        self.set_strategies(y);
        self.first_order.compute(&self.strategies, &mut self.values);
        let lambda = y[self.num_variables()];
        let mut norm: f64 = 0.0;
        for (p, s) in self.strategies.iter().enumerate() {
            let o = self.offsets[p];
            let u = &self.values[p];
            self.residual[o] = s.iter().sum::<f64>() - 1.0;
            for i in 1..s.len() {
                self.residual[o + i] = y[o + i] - y[o] - lambda * self.inverse_scale * (u[i] - u[0]);
            }
            norm = self.residual[o..o + s.len()].iter().fold(norm, |m, r| m.max(r.abs()));
        }
        norm
    }

    /// The transposed Jacobian of `H` at `y` into `self.qr`, factorised.
    fn factor_jacobian(&mut self, y: &[f64]) {
        self.set_strategies(y);
        self.pairs.compute(&self.tensors, &self.strategies);
        let n = self.strategies.len();
        let big_n = self.num_variables();
        let lambda = y[big_n];
        let rows = big_n + 1;
        let a = &mut self.qr.matrix;
        a.fill(0.0);
        for p in 0..n {
            let o = self.offsets[p];
            let k = self.strategies[p].len();
            // Column `o` (equation Σσ_p = 1): ∂/∂x_{p,i} = σ_{p,i}.
            for i in 0..k {
                a[o * rows + o + i] = self.strategies[p][i];
            }
            let other = if p == 0 { 1 } else { 0 };
            self.pairs.values(p, other, &self.strategies[other], &mut self.row_values);
            let u = &self.row_values;
            for i in 1..k {
                let column = &mut a[(o + i) * rows..(o + i + 1) * rows];
                column[o + i] = 1.0;
                column[o] = -1.0;
                column[big_n] = -(u[i] - u[0]);
                for q in (0..n).filter(|&q| q != p) {
                    let kq = self.strategies[q].len();
                    let m = self.pairs.matrix(p, q);
                    let oq = self.offsets[q];
                    for j in 0..kq {
                        column[oq + j] = -lambda * (m[i * kq + j] - m[j]) * self.strategies[q][j];
                    }
                }
            }
        }
        self.qr.factor();
    }

    /// Follows the path; `Some(profile)` as soon as a refinement is certified.
    fn run(&mut self, max_steps: usize, max_lambda: f64) -> Option<Vec<Vec<f64>>> {
        let big_n = self.num_variables();
        let mut y = vec![0.0; big_n + 1];
        for (p, &k) in self.game.shape().iter().enumerate() {
            let o = self.offsets[p];
            y[o..o + k].fill(-(k as f64).ln());
        }
        // At λ = 0 every candidate support is the full one: one try for a totally mixed
        // equilibrium.
        if let Some(found) = self.refine_point(&y) {
            return Some(found);
        }
        self.factor_jacobian(&y);
        let mut tangent = vec![0.0; big_n + 1];
        self.qr.null_vector(&mut tangent);
        if tangent[big_n] < 0.0 {
            tangent.iter_mut().for_each(|t| *t = -*t);
        }
        let mut h = FIRST_STEP;
        let mut next_check = 1.0;
        let mut u = vec![0.0; big_n + 1];
        let mut step = vec![0.0; big_n + 1];
        while self.steps < max_steps {
            if h < MIN_STEP {
                break;
            }
            for ((ui, yi), ti) in u.iter_mut().zip(&y).zip(&tangent) {
                *ui = yi + h * ti;
            }
            self.factor_jacobian(&u);
            let mut accepted = true;
            let mut deceleration = 1.0 / MAX_DECELERATION;
            let mut previous = 0.0;
            for iteration in 0..=MAX_CORRECTOR_STEPS {
                if iteration == MAX_CORRECTOR_STEPS {
                    accepted = false;
                    break;
                }
                self.evaluate_residual(&u);
                for (s, r) in self.scratch.iter_mut().zip(&self.residual) {
                    *s = -r;
                }
                self.qr.min_norm_solve(&self.scratch[..big_n], &mut step);
                let distance = norm(&step);
                if !distance.is_finite() || distance >= MAX_DISTANCE {
                    accepted = false;
                    break;
                }
                deceleration = f64::max(deceleration, (distance / MAX_DISTANCE).sqrt() * MAX_DECELERATION);
                if iteration > 0 {
                    let contraction = distance / (previous + CORRECTOR_TOLERANCE * 0.1);
                    if contraction > MAX_CONTRACTION {
                        accepted = false;
                        break;
                    }
                    deceleration =
                        f64::max(deceleration, (contraction / MAX_CONTRACTION).sqrt() * MAX_DECELERATION);
                }
                u.iter_mut().zip(&step).for_each(|(ui, s)| *ui += s);
                if distance <= CORRECTOR_TOLERANCE * (1.0 + u[big_n].abs().sqrt()) {
                    break;
                }
                previous = distance;
            }
            if !accepted {
                h /= MAX_DECELERATION;
                continue;
            }
            // The tangent at the new point, from the Jacobian at the predictor (Allgower &
            // Georg's approximation), oriented as the last one.
            let mut next = vec![0.0; big_n + 1];
            self.qr.null_vector(&mut next);
            if dot_in_order(&next, &tangent) < 0.0 {
                next.iter_mut().for_each(|t| *t = -*t);
            }
            tangent = next;
            std::mem::swap(&mut y, &mut u);
            self.steps += 1;
            h /= deceleration.min(MAX_DECELERATION);
            let lambda = y[big_n];
            if lambda >= next_check || lambda > max_lambda {
                next_check = lambda * CHECKPOINT_FACTOR;
                if let Some(found) = self.refine_point(&y) {
                    return Some(found);
                }
            }
            if lambda > max_lambda {
                break;
            }
        }
        None
    }

    /// Records a profile as the best so far when its NashConv is lower; returns it when it
    /// meets the tolerance.
    fn consider(&mut self, strategies: Vec<Vec<f64>>) -> Option<Vec<Vec<f64>>> {
        let nash_conv = self.game.nash_conv(&strategies);
        if nash_conv <= self.tolerance {
            return Some(strategies);
        }
        if self.best.as_ref().is_none_or(|(b, _)| nash_conv < *b) {
            self.best = Some((nash_conv, strategies));
        }
        None
    }

    /// The point itself, then Newton on each candidate support of the point `y`.
    fn refine_point(&mut self, y: &[f64]) -> Option<Vec<Vec<f64>>> {
        self.set_strategies(y);
        let mut point = self.strategies.clone();
        for s in &mut point {
            let total: f64 = s.iter().sum();
            s.iter_mut().for_each(|p| *p /= total);
        }
        if let Some(found) = self.consider(point.clone()) {
            return Some(found);
        }
        let lambda = y[self.num_variables()];
        for threshold in SUPPORT_THRESHOLDS {
            let supports: Vec<Vec<usize>> = (0..point.len())
                .map(|p| {
                    let o = self.offsets[p];
                    let x = &y[o..o + point[p].len()];
                    let top = x.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    (0..x.len()).filter(|&i| x[i] >= top - threshold).collect()
                })
                .collect();
            // With near-twin strategies (equal payoffs for everyone up to `TWIN_TOLERANCE`),
            // also the support with one twin of each group: the likeliest.
            let collapsed = self.twins.collapse(&supports, &point);
            let candidates = if collapsed == supports { vec![supports] } else { vec![supports, collapsed] };
            for candidate in candidates {
                // A support that failed is tried again only from a point much further along.
                match self.tried.get(&candidate) {
                    Some(&last) if lambda < RETRY_FACTOR * last => continue,
                    _ => {}
                }
                if let Some(found) = self.refine_support(&point, candidate.clone()) {
                    return Some(found);
                }
                self.tried.insert(candidate, lambda.max(f64::MIN_POSITIVE));
            }
        }
        None
    }

    /// Solves the equilibrium conditions on `supports` from `start`, then repairs the
    /// support a few rounds: strategies that come out negative are dropped, and each
    /// player's best profitable deviation joins the support (replacing its near twin there,
    /// if it has one).
    fn refine_support(&mut self, start: &[Vec<f64>], mut supports: Vec<Vec<usize>>) -> Option<Vec<Vec<f64>>> {
        let mut start = start.to_vec();
        let mut visited: Vec<Vec<Vec<usize>>> = Vec::new();
        for _round in 0..MAX_REPAIR_ROUNDS {
            let solved = SupportNewton::new(&self.tensors, &supports).solve(&start)?;
            let mut negative = false;
            let mut profile: Vec<Vec<f64>> = self.game.shape().iter().map(|&k| vec![0.0; k]).collect();
            for (p, support) in supports.iter_mut().enumerate() {
                let mut keep = Vec::with_capacity(support.len());
                for (&i, &s) in support.iter().zip(&solved[p]) {
                    if s < -1e-12 {
                        negative = true;
                    } else {
                        profile[p][i] = s.max(0.0);
                        keep.push(i);
                    }
                }
                if keep.is_empty() {
                    return None;
                }
                *support = keep;
            }
            if negative {
                continue;
            }
            for s in &mut profile {
                let total: f64 = s.iter().sum();
                s.iter_mut().for_each(|p| *p /= total);
            }
            let deviation = self.game.deviation_payoffs(&profile);
            if let Some(found) = self.consider(profile.clone()) {
                return Some(found);
            }
            // Each player's best profitable deviation joins the support, replacing its twin
            // there unless that leads back to a support already solved (twins that must mix).
            let mut deviations = Vec::new();
            for (p, support) in supports.iter().enumerate() {
                let value: f64 = deviation[p].iter().zip(&profile[p]).map(|(u, s)| u * s).sum();
                let best = (0..deviation[p].len())
                    .filter(|i| !support.contains(i))
                    .max_by(|&a, &b| deviation[p][a].total_cmp(&deviation[p][b]));
                if let Some(j) = best
                    && deviation[p][j] - value > self.tolerance / (2 * profile.len()) as f64
                {
                    deviations.push((p, j));
                }
            }
            if deviations.is_empty() {
                return None;
            }
            visited.push(supports.clone());
            let mut swapped = supports.clone();
            for &(p, j) in &deviations {
                match swapped[p].iter().position(|&i| self.twins.are_twins(p, i, j)) {
                    Some(slot) => swapped[p][slot] = j,
                    None => swapped[p].push(j),
                }
                swapped[p].sort_unstable();
            }
            if visited.contains(&swapped) {
                // A cycle of swaps: the twins must mix. Take every strategy seen so far.
                for (p, support) in supports.iter_mut().enumerate() {
                    for seen in &visited {
                        support.extend(&seen[p]);
                    }
                    support.extend(deviations.iter().filter(|&&(q, _)| q == p).map(|&(_, j)| j));
                    support.sort_unstable();
                    support.dedup();
                }
            } else {
                supports = swapped;
            }
            start = profile;
        }
        None
    }
}

/// Groups of near-twin strategies: strategies of one player whose payoffs, for every player
/// and every profile of the others, differ by at most `TWIN_TOLERANCE` (payoffs of range 1).
/// PSRO meta-games are full of them (a best response found twice), and a support holding
/// two near twins makes the equilibrium equations near-singular.
struct Twins {
    /// `group[p][i]`: the lowest index among `i`'s twins (itself when it has none).
    group: Vec<Vec<usize>>,
}

impl Twins {
    /// # Complexity
    ///
    /// O(Σ_p |S_p| · num_profiles · n) in the worst case; pairs that differ are usually
    /// told apart after a few entries.
    fn new(tensors: &Tensors) -> Self {
        let shape = &tensors.shape;
        let n = shape.len();
        let group = (0..n)
            .map(|p| {
                let k = shape[p];
                let inner: usize = shape[p + 1..].iter().product();
                let outer: usize = shape[..p].iter().product();
                let close = |i: usize, j: usize| {
                    tensors.payoffs.iter().all(|t| {
                        (0..outer).all(|o| {
                            let a = &t[(o * k + i) * inner..(o * k + i + 1) * inner];
                            let b = &t[(o * k + j) * inner..(o * k + j + 1) * inner];
                            a.iter().zip(b).all(|(x, y)| (x - y).abs() <= TWIN_TOLERANCE)
                        })
                    })
                };
                let mut group: Vec<usize> = (0..k).collect();
                for i in 0..k {
                    if group[i] != i {
                        continue;
                    }
                    for (j, g) in group.iter_mut().enumerate().skip(i + 1) {
                        if *g == j && close(i, j) {
                            *g = i;
                        }
                    }
                }
                group
            })
            .collect();
        Self { group }
    }

    fn are_twins(&self, p: usize, i: usize, j: usize) -> bool {
        self.group[p][i] == self.group[p][j]
    }

    /// `supports` with one strategy of each twin group: the one most likely under `point`.
    fn collapse(&self, supports: &[Vec<usize>], point: &[Vec<f64>]) -> Vec<Vec<usize>> {
        supports
            .iter()
            .enumerate()
            .map(|(p, support)| {
                let mut kept: Vec<usize> = Vec::with_capacity(support.len());
                for &i in support {
                    match kept.iter().position(|&k| self.are_twins(p, k, i)) {
                        Some(slot) if point[p][i] > point[p][kept[slot]] => kept[slot] = i,
                        Some(_) => {}
                        None => kept.push(i),
                    }
                }
                kept.sort_unstable();
                kept
            })
            .collect()
    }
}

/// Payoff tensors (row-major, one per player) and their shape.
struct Tensors {
    shape: Vec<usize>,
    payoffs: Vec<Vec<f64>>,
}

impl Tensors {
    /// The sub-game on `supports` (each list ascending).
    fn restrict(&self, supports: &[Vec<usize>]) -> Tensors {
        let n = self.shape.len();
        let mut strides = vec![1; n];
        for p in (0..n.saturating_sub(1)).rev() {
            strides[p] = strides[p + 1] * self.shape[p + 1];
        }
        let shape: Vec<usize> = supports.iter().map(Vec::len).collect();
        let count: usize = shape.iter().product();
        let mut payoffs = vec![Vec::with_capacity(count); n];
        let mut index = vec![0; n];
        for _ in 0..count {
            let flat: usize = (0..n).map(|p| supports[p][index[p]] * strides[p]).sum();
            for (p, t) in payoffs.iter_mut().enumerate() {
                t.push(self.payoffs[p][flat]);
            }
            advance(&mut index, &shape);
        }
        Tensors { shape, payoffs }
    }
}

/// Advances a row-major multi-index (last axis fastest); wraps to all zeros.
fn advance(index: &mut [usize], shape: &[usize]) {
    for p in (0..index.len()).rev() {
        index[p] += 1;
        if index[p] < shape[p] {
            return;
        }
        index[p] = 0;
    }
}

/// Second-order payoffs: for every ordered pair of players `p ≠ q`, the matrix
/// `m[i][j] = u_p(i, j, σ_{-p,q})` (player `p` plays `i`, `q` plays `j`, the rest mix).
struct PairPayoffs {
    sizes: Vec<usize>,
    /// `matrices[p * n + q]`, row-major `|S_p| × |S_q|`; empty for `p = q`.
    matrices: Vec<Vec<f64>>,
    index: Vec<usize>,
    /// `(last, p)` matrices while they are accumulated, transposed.
    transposed: Vec<Vec<f64>>,
}

impl PairPayoffs {
    fn new(sizes: &[usize]) -> Self {
        let n = sizes.len();
        let matrices = (0..n * n)
            .map(|pq| {
                let (p, q) = (pq / n, pq % n);
                if p == q { Vec::new() } else { vec![0.0; sizes[p] * sizes[q]] }
            })
            .collect();
        Self { sizes: sizes.to_vec(), matrices, index: vec![0; n], transposed: vec![Vec::new(); n] }
    }

    fn matrix(&self, p: usize, q: usize) -> &[f64] {
        &self.matrices[p * self.sizes.len() + q]
    }

    /// `u_p(i, σ_{-p})` for every `i` into `out`, from the pair matrix with any other
    /// player `q`.
    fn values(&self, p: usize, q: usize, sigma_q: &[f64], out: &mut Vec<f64>) {
        out.clear();
        out.extend(self.matrix(p, q).chunks_exact(self.sizes[q]).map(|row| dot_in_order(row, sigma_q)));
    }

    /// One pass over the tensors.
    ///
    /// # Complexity
    ///
    /// O(num_profiles · n) plus O(num_profiles / |S_last| · n³).
    fn compute(&mut self, tensors: &Tensors, strategies: &[Vec<f64>]) {
        let n = self.sizes.len();
        for m in &mut self.matrices {
            m.fill(0.0);
        }
        if n == 2 {
            // u_0(i, j) and u_1(i, j) themselves: no one else mixes.
            let (k0, k1) = (self.sizes[0], self.sizes[1]);
            self.matrices[1].copy_from_slice(&tensors.payoffs[0]);
            let m10 = &mut self.matrices[2];
            for i in 0..k0 {
                for j in 0..k1 {
                    m10[j * k0 + i] = tensors.payoffs[1][i * k1 + j];
                }
            }
            return;
        }
        // Rows along the last player's axis are contiguous: for each profile of the first
        // n − 1 players, one dot product per player (pairs without the last player) and two
        // axpys per player (pairs with it; (last, p) accumulated transposed).
        let last = n - 1;
        let k_last = self.sizes[last];
        let blocks: usize = self.sizes[..last].iter().product();
        self.index.fill(0);
        let Self { sizes, matrices, index, transposed, .. } = self;
        for (p, t) in transposed.iter_mut().enumerate().take(last) {
            t.clear();
            t.resize(sizes[p] * k_last, 0.0);
        }
        let sigma_last = &strategies[last];
        let excluding = |index: &[usize], p: usize, q: usize| -> f64 {
            let mut w = 1.0;
            for r in (0..last).filter(|&r| r != p && r != q) {
                w *= strategies[r][index[r]];
            }
            w
        };
        for block in 0..blocks {
            let base = block * k_last;
            let row_last = &tensors.payoffs[last][base..base + k_last];
            for p in 0..last {
                let row = &tensors.payoffs[p][base..base + k_last];
                let i = index[p];
                let others = excluding(index, p, p);
                if others != 0.0 {
                    let m = &mut matrices[p * n + last][i * k_last..(i + 1) * k_last];
                    m.iter_mut().zip(row).for_each(|(mi, u)| *mi += others * u);
                    let t = &mut transposed[p][i * k_last..(i + 1) * k_last];
                    t.iter_mut().zip(row_last).for_each(|(ti, u)| *ti += others * u);
                }
                if last > 1 {
                    let d = dot_in_order(row, sigma_last);
                    for q in (0..last).filter(|&q| q != p) {
                        let w = excluding(index, p, q);
                        matrices[p * n + q][i * sizes[q] + index[q]] += w * d;
                    }
                }
            }
            advance(&mut index[..last], &sizes[..last]);
        }
        for (p, t) in transposed.iter().enumerate().take(last) {
            let kp = sizes[p];
            let m = &mut matrices[last * n + p];
            for i in 0..kp {
                for (j, &v) in t[i * k_last..(i + 1) * k_last].iter().enumerate() {
                    m[j * kp + i] = v;
                }
            }
        }
    }
}

/// Newton's method (Levenberg–Marquardt damped, for degenerate supports) on the equilibrium
/// conditions of one support: unknowns `σ_p` on `S_p` and values `v_p`; equations
/// `u_p(i, σ_{-p}) − v_p = 0` for `i ∈ S_p` and `Σ_{i ∈ S_p} σ_p(i) = 1`.
struct SupportNewton<'s> {
    supports: &'s [Vec<usize>],
    tensors: Tensors,
    pairs: PairPayoffs,
    offsets: Vec<usize>,
    size: usize,
}

impl<'s> SupportNewton<'s> {
    fn new(full: &Tensors, supports: &'s [Vec<usize>]) -> Self {
        let tensors = full.restrict(supports);
        let mut offsets = Vec::with_capacity(supports.len());
        let mut size = 0;
        for s in supports {
            offsets.push(size);
            size += s.len() + 1;
        }
        Self { supports, pairs: PairPayoffs::new(&tensors.shape), tensors, offsets, size }
    }

    /// Unpacks `z` into per-player strategies on the supports.
    fn strategies(&self, z: &[f64]) -> Vec<Vec<f64>> {
        self.supports.iter().zip(&self.offsets).map(|(s, &o)| z[o..o + s.len()].to_vec()).collect()
    }

    /// The residual at `z` (and the pair matrices there), with its Euclidean norm.
    fn residual(&mut self, z: &[f64], out: &mut [f64]) -> f64 {
        let strategies = self.strategies(z);
        self.pairs.compute(&self.tensors, &strategies);
        let n = self.supports.len();
        for p in 0..n {
            let o = self.offsets[p];
            let k = self.supports[p].len();
            let other = if p == 0 { 1 } else { 0 };
            let v = z[o + k];
            let mut u = Vec::with_capacity(k);
            self.pairs.values(p, other, &strategies[other], &mut u);
            for i in 0..k {
                out[o + i] = u[i] - v;
            }
            out[o + k] = strategies[p].iter().sum::<f64>() - 1.0;
        }
        norm(out)
    }

    /// Newton from the profile `start` (full-game strategies); `None` when it does not
    /// converge. The answer is on the supports, in their order.
    fn solve(mut self, start: &[Vec<f64>]) -> Option<Vec<Vec<f64>>> {
        let m = self.size;
        let n = self.supports.len();
        let mut z = vec![0.0; m];
        for ((support, &o), s) in self.supports.iter().zip(&self.offsets).zip(start) {
            let k = support.len();
            let total: f64 = support.iter().map(|&i| s[i]).sum();
            for (slot, &i) in support.iter().enumerate() {
                z[o + slot] = if total > 0.0 { s[i] / total } else { 1.0 / k as f64 };
            }
        }
        // Values: each player's mean payoff on the support.
        let mut residual = vec![0.0; m];
        self.residual(&z, &mut residual);
        for p in 0..n {
            let o = self.offsets[p];
            let k = self.supports[p].len();
            let mean: f64 = z[o..o + k].iter().zip(&residual[o..o + k]).map(|(s, r)| s * r).sum();
            z[o + k] = mean;
        }
        let mut current = self.residual(&z, &mut residual);
        let mut damping: f64 = 0.0;
        let mut qr = Qr::new(2 * m, m);
        let mut rhs = vec![0.0; 2 * m];
        let mut step = vec![0.0; m];
        let mut trial = vec![0.0; m];
        let mut trial_residual = vec![0.0; m];
        let mut slow = 0;
        for _ in 0..MAX_NEWTON_STEPS {
            if current <= NEWTON_TOLERANCE {
                return Some(self.strategies(&z));
            }
            // J (column-major, 2m × m: J on top, √damping·I below) at z.
            let strategies = self.strategies(&z);
            self.pairs.compute(&self.tensors, &strategies);
            let a = &mut qr.matrix;
            a.fill(0.0);
            let rows = 2 * m;
            for p in 0..n {
                let o = self.offsets[p];
                let k = self.supports[p].len();
                for i in 0..k {
                    // Row o+i: ∂(u_p(i) − v_p); row o+k: Σσ_p − 1.
                    a[(o + k) * rows + o + i] = -1.0;
                    a[(o + i) * rows + o + k] = 1.0;
                    for q in (0..n).filter(|&q| q != p) {
                        let oq = self.offsets[q];
                        let kq = self.supports[q].len();
                        let pm = self.pairs.matrix(p, q);
                        for j in 0..kq {
                            a[(oq + j) * rows + o + i] = pm[i * kq + j];
                        }
                    }
                }
            }
            let jacobian = qr.matrix.clone();
            let mut improved = false;
            for _ in 0..MAX_DAMPING_TRIES {
                qr.matrix.copy_from_slice(&jacobian);
                let scale = damping.sqrt();
                for c in 0..m {
                    qr.matrix[c * rows + m + c] = scale;
                }
                qr.factor();
                rhs[..m].iter_mut().zip(&residual).for_each(|(b, r)| *b = -r);
                rhs[m..].fill(0.0);
                if qr.least_squares(&mut rhs, &mut step) {
                    for ((t, zi), s) in trial.iter_mut().zip(&z).zip(&step) {
                        *t = zi + s;
                    }
                    let next = self.residual(&trial, &mut trial_residual);
                    if next.is_finite() && next < current {
                        if next > 0.5 * current {
                            slow += 1;
                        }
                        std::mem::swap(&mut z, &mut trial);
                        std::mem::swap(&mut residual, &mut trial_residual);
                        current = next;
                        damping *= 0.1;
                        improved = true;
                        break;
                    }
                }
                damping = if damping == 0.0 { 1e-12 } else { damping * 100.0 };
            }
            // Newton from a good start converges fast; a slow or stuck run is the wrong support.
            if !improved || slow > MAX_SLOW_STEPS {
                break;
            }
        }
        (current <= 1e3 * NEWTON_TOLERANCE).then(|| self.strategies(&z))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{ArrayD, IxDyn, array};

    fn three_player(f: impl Fn(usize, usize, usize) -> [f64; 3], shape: [usize; 3]) -> NormalFormGame {
        let mut payoffs = vec![ArrayD::zeros(IxDyn(&shape)); 3];
        for a in 0..shape[0] {
            for b in 0..shape[1] {
                for c in 0..shape[2] {
                    let u = f(a, b, c);
                    for p in 0..3 {
                        payoffs[p][[a, b, c]] = u[p];
                    }
                }
            }
        }
        NormalFormGame::new(payoffs).unwrap()
    }

    /// `u_p(i, j, σ_{-p,q})` by a direct sum over all profiles.
    fn direct_pair(game: &NormalFormGame, sigma: &[Vec<f64>], p: usize, q: usize, i: usize, j: usize) -> f64 {
        game.payoffs(p)
            .indexed_iter()
            .filter(|(idx, _)| idx[p] == i && idx[q] == j)
            .map(|(idx, &u)| {
                let w: f64 =
                    (0..game.num_players()).filter(|&r| r != p && r != q).map(|r| sigma[r][idx[r]]).product();
                w * u
            })
            .sum()
    }

    #[test]
    fn pair_payoffs_match_a_direct_sum() {
        for shape in [vec![2, 3, 2], vec![3, 2, 2, 3], vec![2, 2, 3, 2, 2], vec![3, 4]] {
            let n = shape.len();
            let mut seed = 7u64;
            let payoffs: Vec<ArrayD<f64>> = (0..n)
                .map(|_| {
                    ArrayD::from_shape_fn(IxDyn(&shape), |_| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        (seed >> 40) as f64 / (1u64 << 24) as f64
                    })
                })
                .collect();
            let game = NormalFormGame::new(payoffs).unwrap();
            let tensors = Tensors {
                shape: shape.clone(),
                payoffs: (0..n).map(|p| game.payoffs(p).iter().copied().collect()).collect(),
            };
            let sigma: Vec<Vec<f64>> = shape
                .iter()
                .map(|&k| {
                    let raw: Vec<f64> = (0..k).map(|i| 1.0 + i as f64 * 0.7).collect();
                    let total: f64 = raw.iter().sum();
                    raw.iter().map(|x| x / total).collect()
                })
                .collect();
            let mut pairs = PairPayoffs::new(&shape);
            pairs.compute(&tensors, &sigma);
            for p in 0..n {
                for q in (0..n).filter(|&q| q != p) {
                    for i in 0..shape[p] {
                        for j in 0..shape[q] {
                            let direct = direct_pair(&game, &sigma, p, q, i, j);
                            let got = pairs.matrix(p, q)[i * shape[q] + j];
                            assert!(
                                (got - direct).abs() < 1e-12,
                                "{shape:?} ({p},{q}) [{i}][{j}]: {got} vs {direct}"
                            );
                        }
                    }
                }
            }
            let deviation = game.deviation_payoffs(&sigma);
            for (p, dev) in deviation.iter().enumerate() {
                let q = if p == 0 { 1 } else { 0 };
                let mut u = Vec::new();
                pairs.values(p, q, &sigma[q], &mut u);
                for (a, b) in u.iter().zip(dev) {
                    assert!((a - b).abs() < 1e-12);
                }
            }
        }
    }

    #[test]
    fn solves_bimatrix_games() {
        let bos = NormalFormGame::bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]]).unwrap();
        let sol = Logit::default().solve(&bos).unwrap();
        assert_eq!(sol.status, Status::Solved);
        assert!(sol.certificate.nash_conv <= 1e-9 * bos.payoff_scale());
        let rps = NormalFormGame::zero_sum(array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]]).unwrap();
        let sol = Logit::default().solve(&rps).unwrap();
        assert_eq!(sol.status, Status::Solved);
        for (s, e) in sol.strategies[0].iter().zip([1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0]) {
            assert!((s - e).abs() < 1e-9, "{:?}", sol.strategies);
        }
    }

    #[test]
    fn solves_three_player_pennies_and_a_pure_game() {
        let sign = |same: bool| if same { 1.0 } else { -1.0 };
        let pennies = three_player(|a, b, c| [sign(a == b), sign(b == c), sign(c != a)], [2, 2, 2]);
        let sol = Logit::default().solve(&pennies).unwrap();
        assert_eq!(sol.status, Status::Solved);
        for s in &sol.strategies {
            assert!((s[0] - 0.5).abs() < 1e-9, "{:?}", sol.strategies);
        }
        // Strategy 1 strictly dominant for everyone.
        let pure = three_player(
            |a, b, c| [a as f64 + 0.1 * b as f64, b as f64 - 0.3 * c as f64, c as f64],
            [2, 2, 2],
        );
        let sol = Logit::default().solve(&pure).unwrap();
        assert_eq!(sol.status, Status::Solved);
        assert_eq!(sol.strategies, vec![vec![0.0, 1.0]; 3]);
    }

    #[test]
    fn rejects_bad_settings() {
        let game = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        assert!(Logit::default().with_max_steps(0).solve(&game).is_err());
        assert!(Logit::default().with_max_lambda(f64::NAN).solve(&game).is_err());
        assert!(Logit::default().with_target(0.0).solve(&game).is_err());
    }

    #[test]
    fn a_step_cap_reports_max_iterations_honestly() {
        let sign = |same: bool| if same { 1.0 } else { -1.0 };
        let pennies = three_player(|a, b, c| [sign(a == b), sign(b == c), sign(c != a)], [2, 2, 2]);
        let sol = Logit::default().with_max_steps(1).solve(&pennies).unwrap();
        if sol.status == Status::Solved {
            assert!(sol.certificate.nash_conv <= 1e-9 * pennies.payoff_scale());
        } else {
            assert_eq!(sol.status, Status::MaxIterations);
        }
        assert!(sol.is_distribution(1e-12));
    }
}
