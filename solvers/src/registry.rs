//! Meta-solvers by name, for configs and the command line.
//!
//! Strings map to solvers only at this edge; library code passes solver values.

use crate::alpha_rank::AlphaRank;
use crate::correlated::CorrelatedEquilibrium;
use crate::fictitious_play::FictitiousPlay;
use crate::hedge::Hedge;
use crate::lemke_howson::LemkeHowson;
use crate::logit::Logit;
use crate::lp::LpNash;
use crate::regret_matching::RegretMatching;
use crate::replicator::{ProjectedReplicator, Replicator};
use crate::support_enumeration::SupportEnumeration;
use crate::vertex_enumeration::VertexEnumeration;
use crate::{MetaSolver, Result, SolveError};

/// Every name [`solver_by_name`] accepts.
pub const SOLVER_NAMES: &[&str] = &[
    "lp",
    "lemke-howson",
    "support-enumeration",
    "vertex-enumeration",
    "fictitious-play",
    "regret-matching",
    "hedge",
    "replicator",
    "prd",
    "alpha-rank",
    "ce",
    "cce",
    "logit",
];

/// The solver called `name`, with its defaults.
///
/// `iterations`, when given, sets the iteration count of the iterative solvers
/// (fictitious play, regret matching, hedge, replicator, prd), the sweep cap of alpha-Rank,
/// the pivot cap of `lp` and `lemke-howson` and the basis cap of `vertex-enumeration`; it
/// is ignored by `support-enumeration`, `ce` and `cce`.
/// For `logit` it caps the accepted path steps.
///
/// # Errors
///
/// [`SolveError::UnknownSolver`] (listing [`SOLVER_NAMES`]) for an unknown name;
/// [`SolveError::InvalidConfig`] for `iterations = Some(0)`.
///
/// # Examples
///
/// ```
/// use metagame_games::NormalFormGame;
/// use metagame_solvers::registry::solver_by_name;
/// use ndarray::array;
///
/// let solver = solver_by_name("lp", None)?;
/// let mp = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]])?;
/// assert_eq!(solver.solve(&mp)?.strategies[0], vec![0.5, 0.5]);
/// assert!(solver_by_name("simplex", None).is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
pub fn solver_by_name(name: &str, iterations: Option<usize>) -> Result<Box<dyn MetaSolver>> {
    if iterations == Some(0) {
        return Err(SolveError::InvalidConfig {
            solver: SOLVER_NAMES.iter().find(|&&n| n == name).copied().unwrap_or("registry"),
            reason: "iterations must be at least 1".into(),
        });
    }
    fn with<T>(solver: T, iterations: Option<usize>, set: impl FnOnce(T, usize) -> T) -> T {
        match iterations {
            Some(n) => set(solver, n),
            None => solver,
        }
    }
    Ok(match name {
        "lp" => Box::new(with(LpNash::default(), iterations, LpNash::with_max_pivots)),
        "lemke-howson" => Box::new(with(LemkeHowson::default(), iterations, LemkeHowson::with_max_pivots)),
        "support-enumeration" => Box::new(SupportEnumeration::default()),
        "vertex-enumeration" => {
            Box::new(with(VertexEnumeration::default(), iterations, VertexEnumeration::with_max_bases))
        }
        "fictitious-play" => {
            Box::new(with(FictitiousPlay::default(), iterations, FictitiousPlay::with_iterations))
        }
        "regret-matching" => {
            Box::new(with(RegretMatching::default(), iterations, RegretMatching::with_iterations))
        }
        "hedge" => Box::new(with(Hedge::default(), iterations, Hedge::with_iterations)),
        "replicator" => Box::new(with(Replicator::default(), iterations, Replicator::with_iterations)),
        "prd" => {
            Box::new(with(ProjectedReplicator::default(), iterations, ProjectedReplicator::with_iterations))
        }
        "alpha-rank" => Box::new(with(AlphaRank::default(), iterations, AlphaRank::with_iterations)),
        "ce" => Box::new(CorrelatedEquilibrium::ce()),
        "cce" => Box::new(CorrelatedEquilibrium::cce()),
        "logit" => Box::new(with(Logit::default(), iterations, Logit::with_max_steps)),
        _ => return Err(SolveError::UnknownSolver { name: name.into(), known: SOLVER_NAMES.join(", ") }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_resolves_to_itself() {
        for &name in SOLVER_NAMES {
            let solver = solver_by_name(name, Some(10)).unwrap();
            assert!(!solver.name().is_empty(), "{name}");
        }
        let err = solver_by_name("nope", None).err().unwrap().to_string();
        assert!(err.contains("lemke-howson") && err.contains("nope"), "{err}");
        assert!(solver_by_name("lp", Some(0)).is_err());
    }
}
