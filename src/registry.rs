//! The one component registry: names become meta-solvers, oracles and evaluators here, for
//! experiment configs and every command of the CLI alike. A name means the same component
//! everywhere; library crates take components as values and hold no name tables.
//!
//! | kind | names |
//! |---|---|
//! | meta-solver | `uniform`, `nash`, `lp`, `lemke-howson`, `support-enumeration`, `vertex-enumeration`, `fictitious-play`, `rm`, `rm+`, `hedge`, `replicator`, `prd`, `alpha-rank`, `ce`, `cce`, `logit` |
//! | oracle | `exact-br`, `exact-br-trembling`, `q-learning`, `actor-critic`, `minimax-q`, `ppo`, `dqn` |
//! | evaluator | `exact`, `cpu`, `gpu`, `rollout` |
//! | policy | `uniform`, `first-action`, `minimax`, `FILE.json` (an OpenSpiel tabular policy), `FILE.safetensors` (a network) |
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
use std::sync::Arc;

use metagame_games::{
    Arena, ExactEvaluator, FirstAction, GameTree, MatchEvaluator, Policy, RolloutEvaluator, SampledEvaluator,
    TabularPolicy,
};
use metagame_learners::{
    LEARNERS, Learner, LearnerChoice, MinimaxConfig, MinimaxShaping, Start, ValueTable, learner_entry,
};
use metagame_populations::{ExactBestResponse, Oracle, TrainedResponse};
use metagame_solvers::MetaSolver;
use metagame_solvers::alpha_rank::AlphaRank;
use metagame_solvers::correlated::CorrelatedEquilibrium;
use metagame_solvers::fictitious_play::FictitiousPlay;
use metagame_solvers::hedge::Hedge;
use metagame_solvers::lemke_howson::LemkeHowson;
use metagame_solvers::logit::Logit;
use metagame_solvers::lp::LpNash;
use metagame_solvers::nash::Nash;
use metagame_solvers::regret_matching::RegretMatching;
use metagame_solvers::replicator::{ProjectedReplicator, Replicator};
use metagame_solvers::support_enumeration::SupportEnumeration;
use metagame_solvers::uniform::Uniform;
use metagame_solvers::vertex_enumeration::VertexEnumeration;
use serde::{Deserialize, Serialize};
use toml::Table;

use crate::error::{BoxError, Error, Result};

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
        |_| Box::new(Nash::default()),
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
    entry("ce", "a correlated equilibrium (maximum Gini impurity, the MGCE of the JPSRO paper)", |_| {
        Box::new(CorrelatedEquilibrium::ce())
    }),
    entry("cce", "a coarse correlated equilibrium (maximum Gini impurity)", |_| {
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
        "oracle" => oracles().map(|r| r.name).collect(),
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

/// An oracle that needs no learner: what it builds from the tremble probability.
struct ExactOracle {
    info: Registered,
    build: fn(f64) -> Box<dyn Oracle>,
}

/// The oracles that compute their responses; the learned ones are the learners of
/// [`metagame_learners::LEARNERS`], one oracle each, under the learner's name.
const EXACT_ORACLES: &[ExactOracle] = &[
    ExactOracle {
        info: Registered {
            name: "exact-br",
            about: "exact best response on the game tree, ties to the lowest action (OpenSpiel's rule)",
        },
        build: |_| Box::new(ExactBestResponse::default()),
    },
    ExactOracle {
        info: Registered {
            name: "exact-br-trembling",
            about: "exact best response, ties and unreached information sets decided against opponents who tremble with probability `tremble`",
        },
        build: |tremble| Box::new(ExactBestResponse::trembling(tremble)),
    },
];

/// Every oracle: the exact ones, then one per registered learner.
pub fn oracles() -> impl Iterator<Item = Registered> {
    EXACT_ORACLES
        .iter()
        .map(|o| o.info)
        .chain(LEARNERS.iter().map(|l| Registered { name: l.name, about: l.about }))
}

/// Which oracle answers a response request: `exact-br`, `exact-br-trembling`, or a learner's
/// name (a response learned from sampled episodes by that learner, [`LearnerSettings`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct OracleName(&'static str);

impl Default for OracleName {
    /// `exact-br`.
    fn default() -> Self {
        OracleName("exact-br")
    }
}

impl OracleName {
    /// Every oracle, in the registry's order.
    pub fn all() -> impl Iterator<Item = OracleName> {
        oracles().map(|r| OracleName(r.name))
    }
    /// The oracles that learn from sampled episodes (and read a `[learner]` table): one per
    /// registered learner.
    pub fn learned() -> impl Iterator<Item = OracleName> {
        LEARNERS.iter().map(|l| OracleName(l.name))
    }

    /// The name.
    pub fn as_str(self) -> &'static str {
        self.0
    }
    /// True for the oracles that learn from sampled episodes.
    pub fn is_learned(self) -> bool {
        learner_entry(self.0).is_ok()
    }
    /// True when the oracle reads `tremble`.
    pub fn reads_tremble(self) -> bool {
        self.0 == "exact-br-trembling"
    }
    /// The oracle; `tremble` is the opponents' tremble probability for
    /// `exact-br-trembling`, `learner` the learned oracles' settings (their defaults when
    /// `None`); the other oracles ignore them.
    ///
    /// # Errors
    ///
    /// [`Error::Component`] for learner settings out of range or of another oracle.
    pub fn build(self, tremble: f64, learner: Option<&LearnerSettings>) -> Result<Box<dyn Oracle>> {
        let component =
            |source: BoxError| Error::Component { kind: "oracle", name: self.as_str().into(), source };
        if let Some(exact) = EXACT_ORACLES.iter().find(|o| o.info.name == self.0) {
            return Ok((exact.build)(tremble));
        }
        let settings = match learner {
            Some(l) if l.oracle() == self => l.clone(),
            Some(l) => return Err(component(format!("learner settings of `{}` given", l.oracle()).into())),
            None => {
                LearnerSettings::defaults(self).ok_or_else(|| component("not a learned oracle".into()))?
            }
        };
        Ok(Box::new(TrainedResponse::against_responses(settings.0).map_err(|e| component(e.into()))?))
    }
}

/// A learned oracle's settings: the `[learner]` table of a PSRO config (the oracle's name
/// says the learner), or what `metagame respond --learner NAME` uses (the defaults). Any
/// learner of [`metagame_learners::LEARNERS`].
///
/// | oracle | `[learner]` fields |
/// |---|---|
/// | `q-learning` | [`QLearningConfig`](metagame_learners::QLearningConfig)'s: `episodes_per_response`, `batch_size`, `discount`, `epsilon`, `step_size`, `warm_start` |
/// | `actor-critic` | [`ActorCriticConfig`](metagame_learners::ActorCriticConfig)'s: `episodes_per_response`, `batch_size`, `discount`, `actor_step_size`, `critic_step_size`, `epsilon`, `output`, `warm_start` |
/// | `minimax-q` | `q-learning`'s, and a `[learner.shaping]` table: [`MinimaxConfig`]'s `alpha`, `discount`, `main_seat`, `shift` (`"auto"`, `"reward-min"`, `"value-min"`) |
/// | `ppo` | [`PpoConfig`](metagame_learners::PpoConfig)'s: `episodes_per_response`, `hidden`, `num_envs`, `num_steps`, `learning_rate`, `anneal_lr`, `discount`, `gae_lambda`, `num_minibatches`, `update_epochs`, `clip_coef`, `ent_coef`, `vf_coef`, `max_grad_norm`, `adam_eps`, `warm_start` |
/// | `dqn` | [`DqnConfig`](metagame_learners::DqnConfig)'s: `episodes_per_response`, `hidden`, `num_envs`, `batch_size`, `learning_rate`, `learn_every`, `update_target_every`, `target_update_coeff`, `replay_capacity`, `min_buffer_to_learn`, `epsilon_start`, `epsilon_end`, `epsilon_decay_duration`, `discount`, `warm_start` |
///
/// Schedules are tables: `epsilon = { kind = "per-visit", power = 0.5, floor = 0.01 }`,
/// `{ kind = "constant", value = 0.1 }`, `{ kind = "linear", start = 0.2, end = 0.01,
/// episodes = 10000 }`, `{ kind = "inverse-time", start = 0.1, scale = 1000 }`.
#[derive(Clone, Debug, PartialEq)]
pub struct LearnerSettings(LearnerChoice);

impl LearnerSettings {
    /// The default settings of a learned oracle; `None` for the exact ones.
    pub fn defaults(oracle: OracleName) -> Option<Self> {
        LearnerChoice::defaults(oracle.as_str()).ok().map(Self)
    }

    /// The oracle these settings are for.
    pub fn oracle(&self) -> OracleName {
        OracleName(self.0.name())
    }

    /// The learner's settings.
    pub fn choice(&self) -> &LearnerChoice {
        &self.0
    }

    /// The Minimax Exploiter's shaping of a shaped learner (`minimax-q`), to change; `None`
    /// for the others.
    pub fn shaping_mut(&mut self) -> Option<&mut MinimaxConfig> {
        self.0.config_mut().shaping_mut()
    }

    /// Episodes per trained response (when the request sets no budget).
    pub fn episodes_per_response(&self) -> u64 {
        self.0.config().episodes_per_response()
    }

    /// Settings of `oracle` from a `[learner]` table, checked.
    ///
    /// # Errors
    ///
    /// A message naming the field: unknown fields, wrong types, values out of range.
    pub fn from_table(oracle: OracleName, table: &Table) -> std::result::Result<Self, String> {
        if !oracle.is_learned() {
            let learned: Vec<&str> = OracleName::learned().map(OracleName::as_str).collect();
            return Err(format!(
                "field `learner` is not read by oracle `{oracle}` (only by the learned oracles: {})",
                learned.join(", ")
            ));
        }
        let fields = serde_json::to_value(table).map_err(|e| format!("learner: {e}"))?;
        match LearnerChoice::parse(oracle.as_str(), fields) {
            Ok(choice) => Ok(Self(choice)),
            Err(metagame_learners::Error::Fields(message)) => Err(message),
            Err(e) => Err(format!("learner: {e}")),
        }
    }

    /// Check every field's range.
    ///
    /// # Errors
    ///
    /// The learners crate's [`metagame_learners::Error::Config`] naming the field.
    pub fn validate(&self) -> std::result::Result<(), metagame_learners::Error> {
        self.0.config().validate()
    }

    /// The settings as a `[learner]` table, defaults written out.
    pub fn to_table(&self) -> Table {
        // INVARIANT: the settings are structs of scalars and schedule tables.
        Table::try_from(self.0.config().to_value()).expect("learner settings serialise to a table")
    }

    /// A fresh learner for `seat` of `tree` with these settings (`metagame respond`); a
    /// shaped learner (`minimax-q`) shapes with `main_values`, which it requires.
    ///
    /// # Errors
    ///
    /// Learner errors: a seat the game lacks, main values of another game or seat, a shaped
    /// learner without main values.
    pub fn learner(
        &self,
        tree: &GameTree,
        seat: usize,
        seed: u64,
        main_values: Option<&ValueTable>,
    ) -> std::result::Result<Box<dyn Learner>, metagame_learners::Error> {
        let config = self.0.config();
        let mut learner = config.build(tree, seat, seed, Start::Fresh)?;
        if let Some(shaping) = config.shaping() {
            let values = main_values.ok_or_else(|| {
                metagame_learners::Error::Config(format!("{} needs the main agent's values", self.0.name()))
            })?;
            learner.set_reward_shaping(Some(MinimaxShaping::new(tree, seat, values, shaping)?));
        }
        Ok(learner)
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
    /// Sampled episodes on a CUDA GPU (feature `cuda`): on a built tree the same outcomes as
    /// `cpu`; without one, rollouts with the networks answering on the GPU.
    Gpu,
    /// Batched rollouts on the game's states (or its tree's nodes, where built), whatever the
    /// policies; `cpu` takes this path itself where it is the faster one.
    Rollout,
}

impl EvaluatorName {
    /// Every evaluator.
    pub const ALL: &[EvaluatorName] =
        &[EvaluatorName::Exact, EvaluatorName::Cpu, EvaluatorName::Gpu, EvaluatorName::Rollout];

    /// The name.
    pub fn as_str(self) -> &'static str {
        match self {
            EvaluatorName::Exact => "exact",
            EvaluatorName::Cpu => "cpu",
            EvaluatorName::Gpu => "gpu",
            EvaluatorName::Rollout => "rollout",
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
            EvaluatorName::Rollout => Box::new(RolloutEvaluator::new()),
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

/// A policy back from the bytes of its file in a run folder.
pub type ReadPolicyFile = fn(&[u8]) -> Result<Arc<dyn Policy>>;

/// A kind of policy that commands and configs name: by a word, or by a file they read.
struct PolicyKind {
    info: Registered,
    /// Whether a policy spec (a word or a path) is of this kind.
    names: fn(&str) -> bool,
    /// The policy for `arena`.
    read: fn(Arena<'_>, &str) -> Result<Box<dyn Policy>>,
    /// For a kind whose policies a run folder keeps as files ([`Policy::to_file`]): the
    /// [`Policy::kind`] it writes, and the policy back from the file's bytes.
    from_file: Option<(&'static str, ReadPolicyFile)>,
}

/// The tree for a policy kind that needs one, or the error saying so.
fn tree_for<'a>(arena: Arena<'a>, spec: &str) -> Result<&'a GameTree> {
    Ok(arena.need_tree(&format!("policy `{spec}`"))?)
}

/// The one list of policy kinds, in the order a spec is tried against them.
const POLICY_KINDS: &[PolicyKind] = &[
    PolicyKind {
        info: Registered {
            name: "uniform",
            about: "uniform over the legal actions (a table where the tree is built)",
        },
        names: |spec| spec == "uniform",
        read: |arena, _| {
            Ok(match arena.game_tree() {
                Some(tree) => Box::new(TabularPolicy::uniform(tree)),
                None => Box::new(metagame_games::Uniform),
            })
        },
        from_file: Some(("uniform", |_| Ok(Arc::new(metagame_games::Uniform)))),
    },
    PolicyKind {
        info: Registered { name: "first-action", about: "always the lowest legal action" },
        names: |spec| spec == "first-action",
        read: |arena, _| {
            Ok(match arena.game_tree() {
                Some(tree) => Box::new(TabularPolicy::first_action(tree)),
                None => Box::new(FirstAction),
            })
        },
        from_file: Some(("first-action", |_| Ok(Arc::new(FirstAction)))),
    },
    PolicyKind {
        info: Registered {
            name: "minimax",
            about: "full-depth minimax (perfect-information games; needs the tree)",
        },
        names: |spec| spec == "minimax",
        read: |arena, spec| Ok(Box::new(metagame_games::minimax_policy(tree_for(arena, spec)?)?)),
        from_file: None,
    },
    PolicyKind {
        info: Registered {
            name: "alpha-beta(depth=N)",
            about: "connect four: depth-limited alpha-beta on the position (a win 1, a loss -1, else 0 at the horizon), uniform over the best moves; depth 1 is a one-ply lookahead",
        },
        names: |spec| spec.starts_with("alpha-beta(depth=") && spec.ends_with(')'),
        read: |arena, spec| {
            let depth = spec.trim_start_matches("alpha-beta(depth=").trim_end_matches(')');
            let depth: u32 = depth.parse().map_err(|_| {
                metagame_games::Error::Shape(format!("policy `{spec}`: the depth is a whole number of plies"))
            })?;
            if !arena.name().starts_with("connect_four") {
                return Err(metagame_games::Error::Unsupported(format!(
                    "policy `{spec}` searches connect four's positions, not {}'s",
                    arena.name()
                ))
                .into());
            }
            Ok(Box::new(metagame_games::ConnectFourSearch::new(depth)?))
        },
        from_file: None,
    },
    PolicyKind {
        info: Registered {
            name: "FILE.safetensors",
            about: "a network: PyTorch's nn.Sequential of Linear and ReLU saved by safetensors (its state_dict), reading the game's tensor",
        },
        names: |spec| spec.ends_with(".safetensors"),
        read: |arena, spec| {
            let network = metagame_networks::Mlp::read(spec)?;
            let Some(shape) = arena.tensor_shape() else {
                return Err(metagame_games::Error::Unsupported(format!(
                    "{} gives no tensor for a network to read",
                    arena.name()
                ))
                .into());
            };
            network.check_fits(shape.size(), arena.num_actions())?;
            Ok(Box::new(network))
        },
        from_file: Some(("mlp", |bytes| Ok(Arc::new(metagame_networks::Mlp::from_bytes(bytes)?)))),
    },
    PolicyKind {
        info: Registered {
            name: "FILE.json",
            about: "an OpenSpiel tabular policy (TabularPolicy.to_dict()); needs the tree",
        },
        // Any other file: OpenSpiel's JSON is the policy file a name does not otherwise tell.
        names: |_| true,
        read: |arena, spec| {
            let tree = tree_for(arena, spec)?;
            Ok(Box::new(TabularPolicy::read_openspiel_json(tree, std::path::Path::new(spec))?))
        },
        from_file: None,
    },
];

/// Every policy kind.
pub fn policy_kinds() -> impl Iterator<Item = Registered> {
    POLICY_KINDS.iter().map(|k| k.info)
}

/// The policy a spec names, for `arena`: a word (`uniform`) or a file whose ending says its
/// kind.
///
/// # Errors
///
/// [`Error::UnknownComponent`] for a spec of no kind; the kind's errors (a file that cannot
/// be read or does not fit the game; work that needs a tree the arena lacks).
pub fn policy(arena: Arena<'_>, spec: &str) -> Result<Box<dyn Policy>> {
    let kind = POLICY_KINDS.iter().find(|k| (k.names)(spec)).ok_or_else(|| Error::UnknownComponent {
        kind: "policy",
        name: spec.to_string(),
        known: POLICY_KINDS.iter().map(|k| k.info.name).collect::<Vec<_>>().join(", "),
        hint: "",
    })?;
    (kind.read)(arena, spec)
}

/// A policy of kind `kind` ([`Policy::kind`]) from the bytes of the file a run folder keeps
/// it in ([`Policy::to_file`]): how a resumed run loads its members that are not tables.
///
/// # Errors
///
/// [`Error::UnknownComponent`] for a kind no registered policy kind writes; the kind's own
/// errors for bytes it cannot read.
pub fn policy_from_file(kind: &str, bytes: &[u8]) -> Result<Arc<dyn Policy>> {
    let entry = POLICY_KINDS.iter().find_map(|k| k.from_file.filter(|(name, _)| *name == kind));
    let embedded = || {
        EMBEDDED_POLICY_FILES
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|(name, _)| *name == kind)
            .copied()
    };
    let Some((_, read)) = entry.or_else(embedded) else {
        let mut known: Vec<&str> = POLICY_KINDS.iter().filter_map(|k| k.from_file.map(|f| f.0)).collect();
        known.extend(EMBEDDED_POLICY_FILES.read().unwrap_or_else(|p| p.into_inner()).iter().map(|e| e.0));
        return Err(Error::UnknownComponent {
            kind: "policy kind",
            name: kind.to_string(),
            known: known.join(", "),
            hint: match kind {
                "python" => {
                    " (a member a Python oracle answered, pickled: read the run from Python, metagame.run(..., resume=True, allow_pickle=True))"
                }
                "torch" | "jax" => {
                    " (a member a Python oracle answered, a PyTorch or JAX network: read the run from Python, metagame.run(..., resume=True))"
                }
                _ => "",
            },
        });
    };
    read(bytes)
}

/// Kinds of policy files that an embedder reads ([`register_policy_file_kind`]).
static EMBEDDED_POLICY_FILES: std::sync::RwLock<Vec<(&'static str, ReadPolicyFile)>> =
    std::sync::RwLock::new(Vec::new());

/// Teach [`policy_from_file`] a kind of policy file that this crate cannot read itself: the
/// Python package registers `"python"` (a pickled callable) so that a run whose members are
/// Python objects resumes. A kind registered again replaces the earlier reader.
pub fn register_policy_file_kind(kind: &'static str, read: ReadPolicyFile) {
    let mut kinds = EMBEDDED_POLICY_FILES.write().unwrap_or_else(|p| p.into_inner());
    kinds.retain(|(name, _)| *name != kind);
    kinds.push((kind, read));
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
        OracleName::all().find(|v| v.as_str() == name).ok_or_else(|| unknown("oracle", name))
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
        for o in OracleName::all() {
            assert_eq!(o.build(1e-2, None).unwrap().name(), o.as_str());
            assert_eq!(o.as_str().parse::<OracleName>().unwrap(), o);
        }
        let names: Vec<&str> = OracleName::all().map(OracleName::as_str).collect();
        assert_eq!(
            names,
            ["exact-br", "exact-br-trembling", "q-learning", "actor-critic", "minimax-q", "ppo", "dqn"]
        );
        for e in EvaluatorName::ALL {
            assert_eq!(e.as_str().parse::<EvaluatorName>().unwrap(), *e);
        }
        let err = "sarsa".parse::<OracleName>().unwrap_err().to_string();
        assert!(
            err.contains("exact-br, exact-br-trembling, q-learning, actor-critic, minimax-q, ppo, dqn"),
            "{err}"
        );
        let err = meta_solver("regret-matching", None).err().unwrap().to_string();
        assert!(err.contains("rm+") && err.contains("plain regret matching"), "{err}");
        assert!(meta_solver("lp", Some(0)).is_err());
        assert!("magic".parse::<EvaluatorName>().unwrap_err().to_string().contains("exact, cpu, gpu"));
    }

    /// Every registered learner is a learned oracle whose settings survive the `[learner]`
    /// table, and whose table with a typo or a value out of range is refused naming it.
    #[test]
    fn every_learner_settings_round_trip_through_the_learner_table() {
        let learned: Vec<OracleName> = OracleName::learned().collect();
        assert_eq!(learned.len(), LEARNERS.len());
        for oracle in learned {
            assert!(oracle.is_learned() && !oracle.reads_tremble());
            let settings = LearnerSettings::defaults(oracle).unwrap();
            assert_eq!(settings.oracle(), oracle);
            let table = settings.to_table();
            assert_eq!(LearnerSettings::from_table(oracle, &table).unwrap(), settings, "{oracle}");
            let mut typo = table.clone();
            typo.insert("epsilom".into(), toml::Value::Float(0.1));
            let err = LearnerSettings::from_table(oracle, &typo).unwrap_err();
            assert!(err.starts_with("learner: unknown field `epsilom`"), "{oracle}: {err}");
            let mut out = table.clone();
            out.insert("discount".into(), toml::Value::Float(2.0));
            let err = LearnerSettings::from_table(oracle, &out).unwrap_err();
            assert!(err.contains("learner: invalid config: discount: 2 is not in [0, 1]"), "{oracle}: {err}");
        }
        let exact: OracleName = "exact-br".parse().unwrap();
        assert!(LearnerSettings::defaults(exact).is_none() && !exact.is_learned());
        let err = LearnerSettings::from_table(exact, &Table::new()).unwrap_err();
        assert!(
            err.contains("(only by the learned oracles: q-learning, actor-critic, minimax-q, ppo, dqn)"),
            "{err}"
        );
    }
}
