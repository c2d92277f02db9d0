//! The one component registry: names become meta-solvers, oracles and evaluators here, for
//! experiment configs and every command of the CLI alike. A name means the same component
//! everywhere; library crates take components as values and hold no name tables.
//!
//! | kind | names |
//! |---|---|
//! | meta-solver | `uniform`, `nash`, `lp`, `lemke-howson`, `support-enumeration`, `vertex-enumeration`, `fictitious-play`, `rm`, `rm+`, `hedge`, `replicator`, `prd`, `alpha-rank`, `ce`, `cce`, `logit` |
//! | oracle | `exact-br`, `exact-br-trembling` |
//! | evaluator | `exact`, `cpu`, `gpu` |
//!
//! # Examples
//!
//! ```
//! use metagame::registry;
//!
//! let rm = registry::meta_solver("rm", None)?;
//! assert_eq!(rm.name(), "rm");
//! assert_eq!(registry::meta_solver("rm+", Some(100))?.name(), "rm+");
//! assert!(registry::meta_solver("regret-matching", None).is_err());
//! # Ok::<(), metagame::Error>(())
//! ```

use std::fmt;
use std::str::FromStr;

use metagame_games::{ExactEvaluator, MatchEvaluator, SampledEvaluator};
use metagame_populations::meta::{Nash, Uniform};
use metagame_populations::{ExactBestResponse, Oracle};
use metagame_solvers::MetaSolver;
use metagame_solvers::alpha_rank::AlphaRank;
use metagame_solvers::correlated::CorrelatedEquilibrium;
use metagame_solvers::fictitious_play::FictitiousPlay;
use metagame_solvers::hedge::Hedge;
use metagame_solvers::lemke_howson::LemkeHowson;
use metagame_solvers::logit::Logit;
use metagame_solvers::lp::LpNash;
use metagame_solvers::regret_matching::RegretMatching;
use metagame_solvers::replicator::{ProjectedReplicator, Replicator};
use metagame_solvers::support_enumeration::SupportEnumeration;
use metagame_solvers::vertex_enumeration::VertexEnumeration;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// One registered name and what it builds.
#[derive(Clone, Copy, Debug)]
pub struct Registered {
    /// The name, as configs and the CLI spell it.
    pub name: &'static str,
    /// One line on what it is.
    pub about: &'static str,
}

struct MetaSolverEntry {
    info: Registered,
    /// Builds the solver; `Some(n)` sets its iteration count (or pivot / basis / step cap).
    build: fn(Option<usize>) -> Box<dyn MetaSolver>,
}

/// `solver`, with `set(solver, n)` applied when `iterations` is `Some(n)`.
fn with<T: MetaSolver + 'static>(
    solver: T,
    iterations: Option<usize>,
    set: impl FnOnce(T, usize) -> T,
) -> Box<dyn MetaSolver> {
    Box::new(match iterations {
        Some(n) => set(solver, n),
        None => solver,
    })
}

const fn entry(
    name: &'static str,
    about: &'static str,
    build: fn(Option<usize>) -> Box<dyn MetaSolver>,
) -> MetaSolverEntry {
    MetaSolverEntry { info: Registered { name, about }, build }
}

const META_SOLVERS: &[MetaSolverEntry] = &[
    entry("uniform", "uniform over the population: PSRO becomes fictitious play", |_| Box::new(Uniform)),
    entry(
        "nash",
        "a certified Nash equilibrium: LP, Lemke-Howson, then the support of the best answer",
        |_| Box::new(Nash),
    ),
    entry("lp", "zero-sum linear program (2-player constant-sum)", |n| {
        with(LpNash::default(), n, LpNash::with_max_pivots)
    }),
    entry("lemke-howson", "Lemke-Howson pivoting (2 players)", |n| {
        with(LemkeHowson::default(), n, LemkeHowson::with_max_pivots)
    }),
    entry("support-enumeration", "every equilibrium by support enumeration (2 players)", |n| {
        with(SupportEnumeration::default(), n, SupportEnumeration::with_max_candidates)
    }),
    entry("vertex-enumeration", "every equilibrium by vertex enumeration (2 players)", |n| {
        with(VertexEnumeration::default(), n, VertexEnumeration::with_max_bases)
    }),
    entry("fictitious-play", "fictitious play", |n| {
        with(FictitiousPlay::default(), n, FictitiousPlay::with_iterations)
    }),
    entry("rm", "plain regret matching (OpenSpiel's psro_v2 `rm`: 1e5 iterations, gamma 1e-6)", |n| {
        with(RegretMatching::plain(), n, RegretMatching::with_iterations)
    }),
    entry("rm+", "regret matching+ (1e5 iterations, gamma 1e-6)", |n| {
        with(RegretMatching::default(), n, RegretMatching::with_iterations)
    }),
    entry("hedge", "Hedge (multiplicative weights)", |n| with(Hedge::default(), n, Hedge::with_iterations)),
    entry("replicator", "replicator dynamics", |n| {
        with(Replicator::default(), n, Replicator::with_iterations)
    }),
    entry("prd", "projected replicator dynamics (OpenSpiel's psro_v2: 50 000 steps, floor 1e-10)", |n| {
        with(
            ProjectedReplicator::default().with_iterations(50_000).with_gamma(1e-10),
            n,
            ProjectedReplicator::with_iterations,
        )
    }),
    entry("alpha-rank", "alpha-Rank's stationary distribution", |n| {
        with(AlphaRank::default(), n, AlphaRank::with_iterations)
    }),
    entry("ce", "a correlated equilibrium (maximum welfare)", |_| Box::new(CorrelatedEquilibrium::ce())),
    entry("cce", "a coarse correlated equilibrium (maximum welfare)", |_| {
        Box::new(CorrelatedEquilibrium::cce())
    }),
    entry("logit", "the logit (quantal response) equilibrium path", |n| {
        with(Logit::default(), n, Logit::with_max_steps)
    }),
];

/// Every meta-solver name, in the registry's order.
pub fn meta_solvers() -> impl Iterator<Item = Registered> {
    META_SOLVERS.iter().map(|e| e.info)
}

/// The meta-solver called `name`. `iterations`, when given, sets the iteration count of the
/// iterative solvers, the sweep cap of `alpha-rank`, the pivot cap of `lp` and
/// `lemke-howson`, the support-pair cap of `support-enumeration`, the basis cap of
/// `vertex-enumeration` and the step cap of `logit`; the
/// others ignore it.
///
/// # Errors
///
/// [`Error::UnknownComponent`] listing the names; [`Error::Component`] for
/// `iterations = Some(0)`.
pub fn meta_solver(name: &str, iterations: Option<usize>) -> Result<Box<dyn MetaSolver>> {
    let entry =
        META_SOLVERS.iter().find(|e| e.info.name == name).ok_or_else(|| unknown("meta-solver", name))?;
    if iterations == Some(0) {
        return Err(Error::Component {
            kind: "meta-solver",
            name: name.into(),
            source: "iterations must be at least 1".into(),
        });
    }
    Ok((entry.build)(iterations))
}

fn unknown(kind: &'static str, name: &str) -> Error {
    let known: Vec<&str> = match kind {
        "meta-solver" => meta_solvers().map(|r| r.name).collect(),
        "oracle" => OracleName::ALL.iter().map(|o| o.as_str()).collect(),
        _ => EvaluatorName::ALL.iter().map(|e| e.as_str()).collect(),
    };
    let hint = match name {
        "regret-matching" => " (`rm` is plain regret matching, `rm+` regret matching+)",
        _ => "",
    };
    Error::UnknownComponent { kind, name: name.into(), known: known.join(", "), hint }
}

/// A registered meta-solver name (checked against the registry when parsed).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct MetaSolverName(&'static str);

impl MetaSolverName {
    /// The name.
    pub fn as_str(self) -> &'static str {
        self.0
    }
    /// The meta-solver, with its registry defaults.
    pub fn build(self) -> Box<dyn MetaSolver> {
        // INVARIANT: the name was checked against the registry when parsed.
        meta_solver(self.0, None).expect("a registered meta-solver")
    }
}

impl Default for MetaSolverName {
    /// `nash`.
    fn default() -> Self {
        MetaSolverName("nash")
    }
}

impl FromStr for MetaSolverName {
    type Err = Error;
    fn from_str(name: &str) -> Result<Self> {
        meta_solvers()
            .find(|r| r.name == name)
            .map(|r| MetaSolverName(r.name))
            .ok_or_else(|| unknown("meta-solver", name))
    }
}

/// Which oracle answers a response request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
#[non_exhaustive]
pub enum OracleName {
    /// Exact best response on the game tree, ties to the lowest action (OpenSpiel's rule).
    #[default]
    ExactBr,
    /// Exact best response, ties and unreached information sets decided against opponents
    /// who tremble with probability `tremble`.
    ExactBrTrembling,
}

impl OracleName {
    /// Every oracle.
    pub const ALL: &[OracleName] = &[OracleName::ExactBr, OracleName::ExactBrTrembling];

    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            OracleName::ExactBr => "exact-br",
            OracleName::ExactBrTrembling => "exact-br-trembling",
        }
    }
    /// True when the oracle reads `tremble`.
    pub fn reads_tremble(self) -> bool {
        self == OracleName::ExactBrTrembling
    }
    /// The oracle; `tremble` is the opponents' tremble probability for
    /// `exact-br-trembling` (ignored by the others).
    pub fn build(self, tremble: f64) -> Box<dyn Oracle> {
        match self {
            OracleName::ExactBr => Box::new(ExactBestResponse::default()),
            OracleName::ExactBrTrembling => Box::new(ExactBestResponse::trembling(tremble)),
        }
    }
}

/// How payoff entries are estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
#[non_exhaustive]
pub enum EvaluatorName {
    /// Exact expected returns by walking the tree.
    #[default]
    Exact,
    /// Sampled episodes on the CPU (rayon).
    Cpu,
    /// Sampled episodes on a CUDA GPU (feature `cuda`); the same outcomes as `cpu`.
    Gpu,
}

impl EvaluatorName {
    /// Every evaluator.
    pub const ALL: &[EvaluatorName] = &[EvaluatorName::Exact, EvaluatorName::Cpu, EvaluatorName::Gpu];

    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            EvaluatorName::Exact => "exact",
            EvaluatorName::Cpu => "cpu",
            EvaluatorName::Gpu => "gpu",
        }
    }
    /// True for the evaluators that sample episodes (and read `episodes_per_entry`).
    pub fn samples(self) -> bool {
        self != EvaluatorName::Exact
    }
    /// The evaluator.
    ///
    /// # Errors
    ///
    /// `gpu` without a device (or without the `cuda` feature): [`Error::Component`] saying
    /// "no CUDA device".
    pub fn build(self) -> Result<Box<dyn MatchEvaluator>> {
        Ok(match self {
            EvaluatorName::Exact => Box::new(ExactEvaluator),
            EvaluatorName::Cpu => Box::new(SampledEvaluator::new()),
            EvaluatorName::Gpu => gpu_evaluator()?,
        })
    }
}

#[cfg(feature = "cuda")]
fn gpu_evaluator() -> Result<Box<dyn MatchEvaluator>> {
    let gpu = metagame_cuda::GpuEvaluator::new().map_err(|e| Error::Component {
        kind: "evaluator",
        name: "gpu".into(),
        source: Box::new(e),
    })?;
    Ok(Box::new(gpu))
}

#[cfg(not(feature = "cuda"))]
fn gpu_evaluator() -> Result<Box<dyn MatchEvaluator>> {
    Err(Error::Component {
        kind: "evaluator",
        name: "gpu".into(),
        source: "no CUDA device: this build has no cuda feature (cargo build --release --features cuda)"
            .into(),
    })
}

/// `Display`, and serde through the name, for a registered name type.
macro_rules! by_name {
    ($ty:ident) => {
        impl fmt::Display for $ty {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }
        impl TryFrom<String> for $ty {
            type Error = Error;
            fn try_from(name: String) -> Result<Self> {
                name.parse()
            }
        }
        impl From<$ty> for String {
            fn from(v: $ty) -> String {
                v.as_str().into()
            }
        }
    };
}

by_name!(MetaSolverName);
by_name!(OracleName);
by_name!(EvaluatorName);

impl FromStr for OracleName {
    type Err = Error;
    fn from_str(name: &str) -> Result<Self> {
        OracleName::ALL.iter().copied().find(|v| v.as_str() == name).ok_or_else(|| unknown("oracle", name))
    }
}

impl FromStr for EvaluatorName {
    type Err = Error;
    fn from_str(name: &str) -> Result<Self> {
        EvaluatorName::ALL
            .iter()
            .copied()
            .find(|v| v.as_str() == name)
            .ok_or_else(|| unknown("evaluator", name))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_builds_a_component_that_answers_to_it() {
        for r in meta_solvers() {
            let solver = meta_solver(r.name, Some(10)).unwrap();
            let parsed: MetaSolverName = r.name.parse().unwrap();
            assert_eq!(parsed.as_str(), r.name);
            // The solvers name themselves; the registry's name is the one users write.
            assert!(!solver.name().is_empty(), "{}", r.name);
        }
        for o in OracleName::ALL {
            assert_eq!(o.build(1e-2).name(), o.as_str());
            assert_eq!(o.as_str().parse::<OracleName>().unwrap(), *o);
        }
        for e in EvaluatorName::ALL {
            assert_eq!(e.as_str().parse::<EvaluatorName>().unwrap(), *e);
        }
        let err = meta_solver("regret-matching", None).err().unwrap().to_string();
        assert!(err.contains("rm+") && err.contains("plain regret matching"), "{err}");
        assert!(meta_solver("lp", Some(0)).is_err());
        assert!("magic".parse::<EvaluatorName>().unwrap_err().to_string().contains("exact, cpu, gpu"));
    }
}
