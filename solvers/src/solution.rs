//! What every solver returns: strategies, a status, and a certificate computed independently
//! of the solver from the game itself.

use metagame_games::NormalFormGame;
use ndarray::{ArrayD, IxDyn};
use serde::{Deserialize, Serialize};

use crate::{Copies, SolverMemory};

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
#[non_exhaustive]
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

/// What a solver returns beyond one mixed strategy per player: each variant belongs to the
/// solvers named in its documentation, every other solver returns [`Extras::None`].
///
/// Read through [`Solution::joint`], [`Solution::stationary`] and [`Solution::value`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum Extras {
    /// Nothing beyond the strategies.
    #[default]
    None,
    /// CE/CCE ([`crate::correlated::CorrelatedEquilibrium`]): the joint distribution over pure
    /// profiles, shaped like the payoff tensor; the solution's strategies are its marginals.
    Joint(ArrayD<f64>),
    /// alpha-Rank ([`crate::alpha_rank::AlphaRank`]): the stationary distribution(s), one per
    /// closed class of the chain, over pure profiles row-major flattened (profile index as in
    /// the payoff tensor's standard layout) or, for a single population, over strategies;
    /// the solution's strategies are the marginals of their mean.
    Stationary(Vec<Vec<f64>>),
    /// Zero-sum LP ([`crate::lp::LpNash`]): the value of the game for the row player, `xᵀAy`
    /// under the returned profile.
    Value(f64),
}

/// A solver's answer.
///
/// Built with [`Solution::new`] (or [`Solution::from_parts`] with a certificate of the
/// solver's own), plus [`Solution::with_extras`] for what a solver returns beyond the
/// strategies.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Solution {
    /// One mixed strategy per player (for CE/CCE the marginals of [`Solution::joint`], for
    /// alpha-Rank those of [`Solution::stationary`]).
    pub strategies: Vec<Vec<f64>>,
    /// How the solve ended.
    pub status: Status,
    /// The certificate of `strategies` (with the constraint violation of the joint
    /// distribution for CE/CCE).
    pub certificate: Certificate,
    /// Iterations (iterative methods), pivots (Lemke–Howson) or candidates examined.
    pub iterations: usize,
    /// What this solver returns beyond the strategies ([`Extras::None`] for most).
    pub extras: Extras,
}

impl Solution {
    /// A solution for a mixed profile, with its Nash certificate and no extras.
    ///
    /// # Panics
    ///
    /// If `strategies` does not have one vector per player of the right lengths (a solver bug).
    #[track_caller]
    pub fn new(game: &NormalFormGame, strategies: Vec<Vec<f64>>, status: Status, iterations: usize) -> Self {
        let certificate = Certificate::for_profile(game, &strategies);
        Self::from_parts(strategies, status, certificate, iterations)
    }

    /// A solution with a certificate computed by the caller (e.g. [`Certificate::for_profile`]
    /// with the solver's own bound added) and no extras.
    pub fn from_parts(
        strategies: Vec<Vec<f64>>,
        status: Status,
        certificate: Certificate,
        iterations: usize,
    ) -> Self {
        Self { strategies, status, certificate, iterations, extras: Extras::None }
    }

    /// The same solution carrying `extras`.
    pub fn with_extras(self, extras: Extras) -> Self {
        Self { extras, ..self }
    }

    /// CE/CCE: the joint distribution over pure profiles, shaped like the payoff tensor.
    pub fn joint(&self) -> Option<&ArrayD<f64>> {
        match &self.extras {
            Extras::Joint(joint) => Some(joint),
            _ => None,
        }
    }

    /// alpha-Rank: the stationary distribution(s), as [`Extras::Stationary`] describes.
    pub fn stationary(&self) -> Option<&[Vec<f64>]> {
        match &self.extras {
            Extras::Stationary(stationary) => Some(stationary),
            _ => None,
        }
    }

    /// Zero-sum LP: the value of the game for the row player under the returned profile.
    pub fn value(&self) -> Option<f64> {
        match self.extras {
            Extras::Value(value) => Some(value),
            _ => None,
        }
    }

    /// A warm start for a game that grew: `previous[p]` (a distribution over player `p`'s first
    /// `previous[p].len()` strategies) extended to `shape[p]` strategies, each new strategy
    /// receiving probability `new_mass` and the old ones sharing the rest in their old
    /// proportions.
    ///
    /// A positive `new_mass` matters for replicator dynamics (a strategy at probability 0 stays
    /// at 0, and PRD only lifts it to its floor γ) and for Hedge (a zero weight needs many steps
    /// to recover); regret matching and fictitious play move mass to a new best response by
    /// themselves.
    ///
    /// # Panics
    ///
    /// If `previous` and `shape` have different lengths, `previous[p]` is longer than
    /// `shape[p]`, or `new_mass` times the number of new strategies is not in [0, 1] (caller bugs).
    ///
    /// # Examples
    ///
    /// ```
    /// use metagame_solvers::Solution;
    ///
    /// let start = Solution::extend_start(&[vec![0.5, 0.5], vec![1.0]], &[3, 2], 0.1);
    /// assert_eq!(start, vec![vec![0.45, 0.45, 0.1], vec![0.9, 0.1]]);
    /// ```
    #[track_caller]
    pub fn extend_start(previous: &[Vec<f64>], shape: &[usize], new_mass: f64) -> Vec<Vec<f64>> {
        assert_eq!(previous.len(), shape.len(), "one previous distribution per player");
        previous
            .iter()
            .zip(shape)
            .map(|(old, &k)| {
                assert!(old.len() <= k, "a previous distribution is longer than the new game's");
                let added = (k - old.len()) as f64 * new_mass;
                assert!(
                    (0.0..=1.0).contains(&added),
                    "new_mass {new_mass} leaves no mass for the old strategies"
                );
                let total: f64 = old.iter().sum();
                let keep = if total > 0.0 { (1.0 - added) / total } else { 0.0 };
                let mut out: Vec<f64> = old.iter().map(|&x| x * keep).collect();
                out.resize(k, new_mass);
                out
            })
            .collect()
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

    /// Solve the game starting from `start` (a warm start): `start[p]` is a distribution over
    /// player `p`'s strategies, one per player of the game's shape
    /// (`start[p].len() == game.num_strategies(p)`, entries finite and non-negative with a
    /// positive sum; it is rescaled to sum to 1).
    ///
    /// Iterative methods (replicator dynamics and PRD, regret matching and RM+, Hedge,
    /// fictitious play) begin their iterates there, each documenting how; with an early stop
    /// (`with_target_nash_conv`) a start that already meets the target returns at once.
    /// Every other solver ignores `start`: the default is [`MetaSolver::solve`].
    ///
    /// The typical caller is a training loop that grows the game by a few strategies per
    /// iteration and passes the previous answer extended to the new shape
    /// ([`Solution::extend_start`]).
    ///
    /// # Errors
    ///
    /// As [`MetaSolver::solve`]; [`crate::SolveError::InvalidConfig`] when an iterative
    /// method gets a `start` of the wrong shape or one that is not a (scaled) distribution.
    fn solve_from(&self, game: &NormalFormGame, start: &[Vec<f64>]) -> crate::Result<Solution> {
        let _ = start;
        self.solve(game)
    }

    /// Solve the expanded game of `copies` (player `p`'s strategy `c` is member
    /// `copies.of(p)[c]` of `game`) and answer over the members: the strategies are the
    /// expanded answer's mixtures with each member's copies summed. `start`, when given, is a
    /// warm start over the members (as [`MetaSolver::solve_from`] takes one), which the
    /// expanded game sees split evenly over each member's copies ([`crate::Copies::split`]).
    ///
    /// The default builds the expanded game ([`crate::Copies::expand`]), calls
    /// [`MetaSolver::solve`] or [`MetaSolver::solve_from`] on it with the split start, and
    /// folds the answer back (joint and stationary distributions summed over the copies;
    /// value, status, iterations and certificate kept: a deviation to a copy gains what a
    /// deviation to its member gains). The iterative solvers (replicator dynamics and PRD,
    /// regret matching and RM+, Hedge, fictitious play) override it and run on `game` itself
    /// with each member weighted by its multiplicity, following the expanded game's
    /// trajectory (the same iterates in exact arithmetic, to rounding in floating point) at the
    /// cost of the collapsed game. The zero-sum LP and the `nash` chain override it for warm
    /// solves, which run on the members: an equilibrium of the members, split over the copies,
    /// is one of the expanded game with the same certificate, and the members' game grows by
    /// appending as the remembered tableau needs ([`crate::lp::LpNash::solve_zero_sum_from`]).
    ///
    /// # Errors
    ///
    /// As [`MetaSolver::solve_from`]; [`crate::SolveError::InvalidConfig`] when `copies` is
    /// not for a game of `game`'s shape.
    fn solve_collapsed(
        &self,
        game: &NormalFormGame,
        copies: &crate::Copies,
        start: Option<&[Vec<f64>]>,
    ) -> crate::Result<Solution> {
        solve_expanded(self, game, copies, start)
    }

    /// What the solver carries from one solve to the next (the zero-sum LP's last warm
    /// tableau), for a training loop's checkpoint, so that a resumed run solves as the
    /// uninterrupted one would have; `None` (the default) when it carries nothing.
    fn memory(&self) -> Option<SolverMemory> {
        None
    }

    /// Carry `memory` (from [`MetaSolver::memory`] of a solver of the same kind) into the
    /// next solve; `game` is the last game solved, or one that holds it as its leading block.
    /// The default, for solvers that carry nothing, ignores it.
    ///
    /// # Errors
    ///
    /// [`crate::SolveError::InvalidConfig`] (or the solver's own refusal of `game`) when the
    /// memory does not fit `game`.
    fn restore_memory(&self, game: &NormalFormGame, memory: &SolverMemory) -> crate::Result<()> {
        let _ = (game, memory);
        Ok(())
    }

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

/// [`MetaSolver::solve_collapsed`]'s default: `solver` on the expanded game of `copies`
/// (with `start` split evenly over each member's copies), its answer folded onto the members.
pub(crate) fn solve_expanded<S: MetaSolver + ?Sized>(
    solver: &S,
    game: &NormalFormGame,
    copies: &crate::Copies,
    start: Option<&[Vec<f64>]>,
) -> crate::Result<Solution> {
    let expanded = copies.expand(game)?;
    if copies.is_identity() {
        return match start {
            Some(start) => solver.solve_from(game, start),
            None => solver.solve(game),
        };
    }
    let solution = match start {
        Some(start) => {
            crate::dynamics::checked_start(solver.name(), game, start)?;
            solver.solve_from(&expanded, &copies.split(start))?
        }
        None => solver.solve(&expanded)?,
    };
    Ok(solution.folded(copies))
}

impl Solution {
    /// This solution of the expanded game of `copies` as one of the collapsed game:
    /// strategies folded, the joint distribution (CE/CCE) and stationary distributions
    /// (alpha-Rank) summed over the copies, value, status, iterations and certificate kept (a
    /// deviation to a copy gains what a deviation to its member gains, so the certificate is
    /// the same in both games).
    pub(crate) fn folded(self, copies: &Copies) -> Solution {
        let strategies = copies.fold(&self.strategies);
        let expanded = copies.expanded_shape();
        let extras = match self.extras {
            Extras::Joint(joint) => Extras::Joint(copies.fold_tensor(&joint)),
            Extras::Stationary(classes) => {
                let profiles: usize = expanded.iter().product();
                Extras::Stationary(
                    classes
                        .into_iter()
                        .map(|pi| {
                            if pi.len() == profiles {
                                // INVARIANT: `pi` has one entry per expanded profile.
                                let tensor = ArrayD::from_shape_vec(IxDyn(&expanded), pi)
                                    .expect("one entry per profile");
                                copies.fold_tensor(&tensor).iter().copied().collect()
                            } else {
                                // One population: a distribution over player 0's strategies.
                                copies.fold(&[pi])[0].clone()
                            }
                        })
                        .collect(),
                )
            }
            other => other,
        };
        Solution { strategies, extras, ..self }
    }
}
