//! Correlated (CE) and coarse correlated (CCE) equilibria of n-player games by linear or
//! quadratic programming (Clarabel), with a max-welfare or max-Gini (MG(C)CE) objective.

use clarabel::algebra::CscMatrix;
use clarabel::solver::SupportedConeT;
use metagame_games::NormalFormGame;
use ndarray::{ArrayD, IxDyn};
use serde::{Deserialize, Serialize};

use crate::conic::solve_conic;
use crate::dynamics::invalid;
use crate::{Certificate, Extras, MetaSolver, Result, Solution, SolveError, Status};

/// Which equilibrium set.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum EquilibriumKind {
    /// Correlated equilibrium (Aumann 1974): no player gains by deviating from any
    /// recommended strategy `r` to `d`:
    /// `Σ_{s: s_i = r} σ(s)·(u_i(d, s_{-i}) − u_i(s)) ≤ 0` for all i, r ≠ d.
    #[default]
    Ce,
    /// Coarse correlated equilibrium (Moulin & Vial 1978): no player gains by committing to
    /// `d` before seeing the recommendation: `Σ_s σ(s)·(u_i(d, s_{-i}) − u_i(s)) ≤ 0`.
    Cce,
}

/// Which (C)CE to pick from the polytope.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Objective {
    /// Maximum social welfare `Σ_s σ(s)·Σ_i u_i(s)` (an LP; may have several optima).
    MaxWelfare,
    /// Maximum Gini impurity `1 − ‖σ‖²` (a strictly concave QP: a unique answer, MG(C)CE of
    /// Marris et al. 2021).
    #[default]
    MaxGini,
}

/// (Coarse) correlated equilibrium by interior-point LP/QP over the joint distribution σ
/// over pure profiles.
///
/// Variables: σ(s) ≥ 0 for every profile, Σσ = 1; constraints as [`EquilibriumKind`]
/// (CE: Σ_i |S_i|(|S_i| − 1) inequalities; CCE: Σ_i |S_i|); payoffs are divided by
/// `payoff_scale` before solving. The returned [`Solution::joint`] is σ (clipped at 0 and
/// renormalised), [`Solution::strategies`] its marginals, and the certificate has
/// `max_violation` = the largest (C)CE constraint violation recomputed from the game (in
/// payoff units), alongside the Nash certificate of the marginals.
///
/// Defaults: [`EquilibriumKind::Ce`], [`Objective::MaxGini`] (the JPSRO meta-solver), Clarabel
/// tolerances 1e-10.
///
/// # Complexity
///
/// Interior point on |profiles| variables and Σ_i |S_i|² constraints, each with
/// |profiles|/|S_i| nonzeros.
///
/// # References
///
/// R. Aumann, *Subjectivity and correlation in randomized strategies*, 1974; L. Marris et
/// al., *Multi-agent training beyond zero-sum with correlated equilibrium meta-solvers*
/// (JPSRO, MG(C)CE), arXiv:2106.09435, 2021.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::{MetaSolver, correlated::{CorrelatedEquilibrium, Objective}};
/// use ndarray::array;
///
/// let a = array![[0., 4.], [1., 3.]];
/// let chicken = NormalFormGame::bimatrix(a.clone(), a.t().to_owned())?;
/// let sol = CorrelatedEquilibrium::ce().with_objective(Objective::MaxWelfare).solve(&chicken)?;
/// let welfare: f64 = chicken.expected_payoffs(&sol.strategies).iter().sum();
/// assert!(sol.certificate.max_violation.unwrap() < 1e-7);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct CorrelatedEquilibrium {
    kind: EquilibriumKind,
    objective: Objective,
}

impl CorrelatedEquilibrium {
    /// Max-Gini correlated equilibrium (MGCE).
    pub fn ce() -> Self {
        Self { kind: EquilibriumKind::Ce, objective: Objective::MaxGini }
    }

    /// Max-Gini coarse correlated equilibrium (MGCCE).
    pub fn cce() -> Self {
        Self { kind: EquilibriumKind::Cce, objective: Objective::MaxGini }
    }

    /// A solver for `kind` with `objective`.
    pub fn new(kind: EquilibriumKind, objective: Objective) -> Self {
        Self { kind, objective }
    }

    /// The same solver with another objective.
    pub fn with_objective(mut self, objective: Objective) -> Self {
        self.objective = objective;
        self
    }

    /// The equilibrium kind.
    pub fn kind(&self) -> EquilibriumKind {
        self.kind
    }

    /// The objective.
    pub fn objective(&self) -> Objective {
        self.objective
    }

    fn solver_name(&self) -> &'static str {
        match (self.kind, self.objective) {
            (EquilibriumKind::Ce, Objective::MaxGini) => "mgce",
            (EquilibriumKind::Cce, Objective::MaxGini) => "mgcce",
            (EquilibriumKind::Ce, Objective::MaxWelfare) => "ce-welfare",
            (EquilibriumKind::Cce, Objective::MaxWelfare) => "cce-welfare",
        }
    }
}

/// The (C)CE constraints as rows `g · σ ≤ 0`, sparse by column: `columns[s]` holds
/// `(row, coefficient)` for profile `s`.
fn constraint_columns(
    game: &NormalFormGame,
    kind: EquilibriumKind,
    scale: f64,
) -> (usize, Vec<Vec<(usize, f64)>>) {
    let shape = game.shape().to_vec();
    let n = shape.len();
    let mut strides = vec![1; n];
    for p in (0..n - 1).rev() {
        strides[p] = strides[p + 1] * shape[p + 1];
    }
    // Row offset per player.
    let mut offsets = Vec::with_capacity(n);
    let mut rows = 0;
    for &k in &shape {
        offsets.push(rows);
        rows += match kind {
            EquilibriumKind::Ce => k * k,
            EquilibriumKind::Cce => k,
        };
    }
    let mut columns = vec![Vec::new(); game.num_profiles()];
    for p in 0..n {
        // INVARIANT: `NormalFormGame` stores payoffs in standard layout.
        let u = game.payoffs(p).as_slice().expect("standard layout");
        let k = shape[p];
        for (flat, column) in columns.iter_mut().enumerate() {
            let own = (flat / strides[p]) % k;
            let here = u[flat];
            for d in 0..k {
                if d == own {
                    continue;
                }
                let there = u[flat + d * strides[p] - own * strides[p]];
                let row = match kind {
                    EquilibriumKind::Ce => offsets[p] + own * k + d,
                    EquilibriumKind::Cce => offsets[p] + d,
                };
                column.push((row, (there - here) / scale));
            }
        }
    }
    (rows, columns)
}

/// The largest (C)CE constraint violation of `joint` (payoff units, ≥ 0).
pub fn max_violation(game: &NormalFormGame, joint: &[f64], kind: EquilibriumKind) -> f64 {
    let (rows, columns) = constraint_columns(game, kind, 1.0);
    let mut gains = vec![0.0; rows];
    for (column, &w) in columns.iter().zip(joint) {
        for &(r, c) in column {
            gains[r] += w * c;
        }
    }
    gains.into_iter().fold(0.0, f64::max)
}

impl MetaSolver for CorrelatedEquilibrium {
    fn name(&self) -> &'static str {
        self.solver_name()
    }

    fn solve(&self, game: &NormalFormGame) -> Result<Solution> {
        let name = self.solver_name();
        let num = game.num_profiles();
        if num > 2_000_000 {
            return Err(invalid(name, format!("{num} profiles are too many for the (C)CE program")));
        }
        let scale = game.payoff_scale();
        let (rows, columns) = constraint_columns(game, self.kind, scale);
        // Constraint rows: [Σσ = 1] (zero cone), [g·σ ≤ 0] (rows), [−σ ≤ 0] (num).
        let m = 1 + rows + num;
        let mut colptr = Vec::with_capacity(num + 1);
        let mut rowval = Vec::new();
        let mut nzval = Vec::new();
        colptr.push(0);
        for (s, column) in columns.iter().enumerate() {
            rowval.push(0);
            nzval.push(1.0);
            let mut entries: Vec<(usize, f64)> = column.iter().map(|&(r, c)| (1 + r, c)).collect();
            entries.sort_unstable_by_key(|e| e.0);
            // Merge duplicates (none expected) and drop zeros.
            for (r, c) in entries {
                if c != 0.0 {
                    rowval.push(r);
                    nzval.push(c);
                }
            }
            rowval.push(1 + rows + s);
            nzval.push(-1.0);
            colptr.push(rowval.len());
        }
        let a = CscMatrix::new(m, num, colptr, rowval, nzval);
        let mut b = vec![0.0; m];
        b[0] = 1.0;
        let cones = [SupportedConeT::ZeroConeT(1), SupportedConeT::NonnegativeConeT(rows + num)];
        let (p, q) = match self.objective {
            Objective::MaxGini => {
                let p = CscMatrix::new(num, num, (0..=num).collect(), (0..num).collect(), vec![2.0; num]);
                (p, vec![0.0; num])
            }
            Objective::MaxWelfare => {
                let mut q = vec![0.0; num];
                for player in 0..game.num_players() {
                    // INVARIANT: `NormalFormGame` stores payoffs in standard layout.
                    let u = game.payoffs(player).as_slice().expect("standard layout");
                    q.iter_mut().zip(u).for_each(|(q, &u)| *q -= u / scale);
                }
                (CscMatrix::zeros((num, num)), q)
            }
        };
        let numerical = |reason: String| SolveError::Numerical { solver: name, reason };
        let solution = solve_conic(name, &p, &q, &a, &b, &cones)?;
        let mut sigma: Vec<f64> = solution.x.iter().map(|&x| x.max(0.0)).collect();
        let total: f64 = sigma.iter().sum();
        if !(total.is_finite() && total > 0.0) {
            return Err(numerical("the joint distribution has no mass".into()));
        }
        sigma.iter_mut().for_each(|x| *x /= total);
        let joint = ArrayD::from_shape_vec(IxDyn(game.shape()), sigma)
            .map_err(|e| numerical(format!("joint shape: {e}")))?;
        let marginals = marginals(&joint);
        let mut certificate = Certificate::for_profile(game, &marginals);
        // INVARIANT: `from_shape_vec` builds a standard-layout array.
        certificate.max_violation =
            Some(max_violation(game, joint.as_slice().expect("standard layout"), self.kind));
        Ok(Solution::from_parts(marginals, Status::Solved, certificate, solution.iterations)
            .with_extras(Extras::Joint(joint)))
    }
}

/// Per-player marginals of a joint distribution over profiles.
pub fn marginals(joint: &ArrayD<f64>) -> Vec<Vec<f64>> {
    let shape = joint.shape();
    let mut out: Vec<Vec<f64>> = shape.iter().map(|&k| vec![0.0; k]).collect();
    for (idx, &w) in joint.indexed_iter() {
        for (p, o) in out.iter_mut().enumerate() {
            o[idx[p]] += w;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Dimension, array};

    fn chicken() -> NormalFormGame {
        let a = array![[0., 4.], [1., 3.]];
        NormalFormGame::bimatrix(a.clone(), a.t().to_owned()).unwrap()
    }

    /// The CE uniform on {DC, CD, CC} gives 8/3 each (the welfare maximum), the three-cell
    /// correlated equilibrium of Chicken (R. J. Aumann 1974, "Subjectivity and correlation in
    /// randomized strategies", J. Math. Econ. 1). By hand: told to play 1 (cells (1, 0) and
    /// (1, 1)), a player gets (1 + 3)/2 = 2 by obeying and (0 + 4)/2 = 2 by deviating, so the
    /// constraint binds; told 0, it gets 4 against 3; the welfare is (5 + 5 + 6)/3 = 16/3.
    #[test]
    fn chicken_max_welfare_ce() {
        let game = chicken();
        let sol = CorrelatedEquilibrium::ce().with_objective(Objective::MaxWelfare).solve(&game).unwrap();
        let joint = sol.joint().unwrap();
        let welfare: f64 = joint
            .indexed_iter()
            .map(|(i, &w)| w * (game.payoff(0, i.slice()) + game.payoff(1, i.slice())))
            .sum();
        assert!((welfare - 16.0 / 3.0).abs() < 1e-7, "{welfare} {joint:?}");
        assert!(joint[[0, 0]].abs() < 1e-7);
        for idx in [[0, 1], [1, 0], [1, 1]] {
            assert!((joint[idx] - 1.0 / 3.0).abs() < 1e-6, "{joint:?}");
        }
        assert!(sol.certificate.max_violation.unwrap() < 1e-8);
    }

    #[test]
    fn chicken_max_gini_ce_is_uniform() {
        let sol = CorrelatedEquilibrium::ce().solve(&chicken()).unwrap();
        for &w in sol.joint().unwrap().iter() {
            assert!((w - 0.25).abs() < 1e-6, "{w}");
        }
    }

    #[test]
    fn cce_of_pennies_has_uniform_marginals() {
        let game = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
        let sol = CorrelatedEquilibrium::cce().solve(&game).unwrap();
        assert!(sol.certificate.max_violation.unwrap() < 1e-8);
        assert!(sol.certificate.nash_conv < 1e-6);
    }
}
