//! Monte Carlo CFR (Lanctot et al. 2009): outcome sampling and external sampling, as
//! OpenSpiel's `OutcomeSamplingMCCFRSolver` and `ExternalSamplingMCCFRSolver` run them.
//!
//! One OpenSpiel iteration is one sampled traversal of the tree per player, player 0 first;
//! every traversal reads the regrets the previous one wrote. An iteration of this loop
//! ([`Mccfr::step`]) runs `traversals_per_iteration` of them and then scores the average
//! policy, so that the exact NashConv (a walk of the whole tree) is paid once per batch of
//! cheap traversals rather than once per traversal: with the default 1000 on Leduc poker, an
//! iteration's NashConv (0.15 ms) costs a third of its outcome-sampling traversals (0.45
//! ms) and a sixth of its external-sampling ones (1.1 ms). It is also paid only on CFR's
//! evaluation schedule ([`NashConvSchedule`], `nash_conv_every`): every iteration up to 20,
//! then about 5% of the iterations apart, so that over a long run it costs next to nothing.
//!
//! - **Outcome sampling** samples one terminal history per traversal. At the traversing
//!   player's nodes it samples from `ε·uniform + (1 − ε)·σ` (ε = `epsilon`, default 0.6),
//!   elsewhere from σ and chance. Going back up, at each of the traversing player's nodes it
//!   adds the sampled counterfactual regrets `ṽ(I, a) − ṽ(I)` (the sampled value divided by
//!   the sampling probability of the history, Lanctot et al. 2009, Eq. 7, with the
//!   opponents' and chance's reach) and the **stochastically weighted** average
//!   contribution `π_i(h)·σ(I, a) / q(h)` (its own reach over the sampling reach; Lanctot
//!   2013, thesis §4.2), as OpenSpiel's C++ and Python solvers both do.
//! - **External sampling** samples chance and the other players' actions (from σ) and walks
//!   every action of the traversing player, adding `v(I, a) − v(I)` to its regrets. The
//!   average policy (`average`): `simple` (OpenSpiel's default) adds σ, unweighted, at the
//!   nodes of player `(p + 1) mod n` during player `p`'s traversal (in two players: at the
//!   opponent's nodes, where the sampling already weights σ by the reach); `full` adds
//!   `π_i(h)·σ(I, a)` at every node in a walk of the whole tree after each OpenSpiel
//!   iteration (O(nodes), exact for n > 2 players).
//!
//! Both tables start at 10⁻⁶ for every sequence, as OpenSpiel's entries when a traversal
//! first reaches an infoset (`kInitialTableValues`): regret matching then gives the uniform
//! policy, and an infoset that no traversal reached keeps a uniform average, OpenSpiel's
//! default policy.
//!
//! Randomness: traversal `t` (0-based, counted over the run: the `t`-th OpenSpiel
//! iteration) of player `p` draws its uniforms, one per chance node and per sampled
//! decision, in the order visited, from the Philox stream keyed by `(seed, p, t)`
//! ([`metagame_games::philox::EpisodeStream`], matchup `p`, episode `t`). A run is therefore
//! a function of the seed alone: resuming a checkpoint continues it bit for bit, and a run
//! of 10 iterations of 1000 traversals ends in the state of 1 iteration of 10 000. The
//! traversals run one after another on one thread (each reads the regrets the last one
//! wrote), so no thread count enters.
//!
//! Reports: the core `nash_conv` is the exact NashConv of the **average** policy after the
//! iteration (on the iterations the schedule evaluates, iteration 0, the run's last and one
//! that ends past the time budget; `None` on the others), `exploitability` `nash_conv / 2`
//! in 2-player constant-sum games,
//! `population_sizes` `vec![1; num_players]`, `times.oracle_s` the traversals and
//! `times.nash_conv_s` the exact NashConv. The loop's own part, [`MccfrReport`], holds the
//! number of traversals per player so far (OpenSpiel's iteration count). As for CFR, with
//! more than two players the average approaches the coarse correlated equilibria, and
//! NashConv need not reach 0.
//!
//! Config (the `mccfr` algorithm's section; every field optional, defaults shown):
//!
//! ```toml
//! sampling = "external"             # or "outcome"
//! epsilon = 0.6                     # outcome only: exploration, in (0, 1]
//! average = "simple"                # external only: or "full"
//! traversals_per_iteration = 1000   # OpenSpiel iterations (a traversal per player) per report
//! seed = 0
//! # nash_conv_every = 1             # evaluate every iteration (default: CFR's schedule)
//! ```
//!
//! # Complexity
//!
//! An outcome-sampling traversal is O(depth · actions); an external-sampling one visits the
//! traversing player's whole subtree under one sampled opponent and chance path (for Leduc
//! poker, about a hundred nodes); `full` averaging adds an O(nodes) walk per OpenSpiel
//! iteration. Each iteration ends with an exact NashConv, O(num_players · nodes). Memory:
//! two tables of one `f64` per sequence besides the tree; nothing is allocated inside a
//! traversal.
//!
//! # Examples
//!
//! ```
//! use metagame_games::{registry, GameTree};
//! use metagame_populations::loops::mccfr::{Mccfr, MccfrConfig, Sampling};
//! use metagame_populations::{run_loop, RunLimits};
//!
//! let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
//! let config = MccfrConfig::builder().sampling(Sampling::External).seed(3).build()?;
//! let mut mccfr = Mccfr::new(&tree, config)?;
//! run_loop(&mut mccfr, &RunLimits::iterations(10), &mut ())?;
//! assert_eq!(mccfr.state().traversals, 10_000);
//! assert!(mccfr.last_report().nash_conv.is_some_and(|x| x < 0.1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # References
//!
//! - M. Lanctot, K. Waugh, M. Zinkevich, M. Bowling, "Monte Carlo Sampling for Regret
//!   Minimization in Extensive Games", NIPS 2009 (outcome and external sampling, §3).
//! - M. Lanctot, "Monte Carlo Sampling and Regret Minimization for Equilibrium Computation
//!   and Decision-Making in Large Extensive Form Games", PhD thesis, University of Alberta,
//!   2013, §4.2 (stochastically weighted averaging).
//! - OpenSpiel `open_spiel/algorithms/outcome_sampling_mccfr.cc` and
//!   `external_sampling_mccfr.cc`, whose update order and defaults this follows.

use std::time::Instant;

use metagame_games::philox::EpisodeStream;
use metagame_games::{GameTree, TabularPolicy, nash_conv_report};
use serde::{Deserialize, Serialize};

use super::cfr::arena::{Arena, Node};
use super::cfr::{NashConvSchedule, check_saved_tables, regret_matching};
use crate::error::{Error, Result};
use crate::report::{Details, IterationReport, PhaseTimes};
use crate::settings::{built_by, setters};
use crate::training_loop::{Cutoff, TrainingLoop};

/// What a traversal samples.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Sampling {
    /// `"outcome"`: one terminal history per traversal, the traversing player exploring
    /// with `epsilon` (Lanctot et al. 2009, §3.1).
    Outcome,
    /// `"external"`: chance and the other players sampled, every action of the traversing
    /// player walked (Lanctot et al. 2009, §3.2). The default: on Leduc poker it is at a
    /// NashConv of 0.15 after 10⁵ iterations, outcome sampling at 1.0, for about twice the
    /// time per iteration (`benches/peers/mccfr_speed.py`).
    #[default]
    External,
}

impl Sampling {
    /// The name configs and reports use.
    pub fn as_str(self) -> &'static str {
        match self {
            Sampling::Outcome => "outcome",
            Sampling::External => "external",
        }
    }
}

/// How external sampling accumulates the average policy (OpenSpiel's `AverageType`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum AverageType {
    /// `"simple"`: σ added at the nodes of player `(p + 1) mod n` in player `p`'s
    /// traversal (OpenSpiel's default).
    #[default]
    Simple,
    /// `"full"`: a walk of the whole tree after each OpenSpiel iteration adds
    /// `π_i(h)·σ(I, a)` at every decision node.
    Full,
}

impl AverageType {
    /// The name configs use.
    pub fn as_str(self) -> &'static str {
        match self {
            AverageType::Simple => "simple",
            AverageType::Full => "full",
        }
    }
}

/// MCCFR settings; always valid (built by [`MccfrConfig::builder`] or deserialised through
/// it).
///
/// How long a run lasts is every loop's [`RunLimits`](crate::RunLimits).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "MccfrConfigBuilder", into = "MccfrConfigBuilder")]
pub struct MccfrConfig {
    sampling: Sampling,
    epsilon: f64,
    average: AverageType,
    traversals_per_iteration: u64,
    seed: u64,
    nash_conv_every: Option<usize>,
}

/// Builder and serde form of [`MccfrConfig`]; every field optional with its default.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MccfrConfigBuilder {
    /// What a traversal samples. Default [`Sampling::External`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sampling: Option<Sampling>,
    /// Outcome sampling's exploration: the traversing player samples from
    /// `ε·uniform + (1 − ε)·σ`; in (0, 1]. Default 0.6 (OpenSpiel's). Only for `outcome`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub epsilon: Option<f64>,
    /// External sampling's average policy. Default [`AverageType::Simple`] (OpenSpiel's).
    /// Only for `external`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub average: Option<AverageType>,
    /// OpenSpiel iterations (one traversal per player) per iteration of the loop, that is
    /// per report and exact NashConv; ≥ 1, at most 10¹². Default 1000.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub traversals_per_iteration: Option<u64>,
    /// The key of every traversal's random stream. Default 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
    /// Evaluate the exact NashConv every this many iterations (≥ 1; 1 is every iteration).
    /// Default: on [`NashConvSchedule`]'s schedule, as CFR. Iteration 0, the run's last
    /// iteration and one that ends past the time budget are always evaluated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nash_conv_every: Option<usize>,
}

/// The most traversals per iteration a config may ask for (10¹², as the sampled
/// evaluator's episode cap), so that a typo cannot start a step that never ends.
pub const MAX_TRAVERSALS_PER_ITERATION: u64 = 1_000_000_000_000;

impl MccfrConfigBuilder {
    /// The names of the fields, as configs spell them.
    pub const FIELDS: &'static [&'static str] =
        &["sampling", "epsilon", "average", "traversals_per_iteration", "seed", "nash_conv_every"];

    setters!(
        sampling: Sampling,
        epsilon: f64,
        average: AverageType,
        traversals_per_iteration: u64,
        seed: u64,
        nash_conv_every: usize
    );

    /// Validate.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the field: `epsilon` outside (0, 1], `traversals_per_iteration`
    /// 0 or above [`MAX_TRAVERSALS_PER_ITERATION`], a field the sampling scheme does not
    /// read (`epsilon` with `external`, `average` with `outcome`), `nash_conv_every` 0.
    pub fn build(self) -> Result<MccfrConfig> {
        let sampling = self.sampling.unwrap_or_default();
        let only = |name: &str, reader: Sampling| {
            Error::Config(format!(
                "{name}: only {} sampling reads it (sampling is {})",
                reader.as_str(),
                sampling.as_str()
            ))
        };
        if sampling != Sampling::Outcome && self.epsilon.is_some() {
            return Err(only("epsilon", Sampling::Outcome));
        }
        if sampling != Sampling::External && self.average.is_some() {
            return Err(only("average", Sampling::External));
        }
        let epsilon = self.epsilon.unwrap_or(0.6);
        if !(epsilon > 0.0 && epsilon <= 1.0) {
            return Err(Error::Config(format!("epsilon: {epsilon} is not in (0, 1]")));
        }
        let traversals_per_iteration = self.traversals_per_iteration.unwrap_or(1000);
        if traversals_per_iteration == 0 {
            return Err(Error::Config("traversals_per_iteration: 0; at least 1".into()));
        }
        if traversals_per_iteration > MAX_TRAVERSALS_PER_ITERATION {
            return Err(Error::Config(format!(
                "traversals_per_iteration: {traversals_per_iteration} is more than the cap of \
                 {MAX_TRAVERSALS_PER_ITERATION}"
            )));
        }
        if self.nash_conv_every == Some(0) {
            return Err(Error::Config(
                "nash_conv_every: 0 would never evaluate; 1 is every iteration".into(),
            ));
        }
        Ok(MccfrConfig {
            sampling,
            epsilon,
            average: self.average.unwrap_or_default(),
            traversals_per_iteration,
            seed: self.seed.unwrap_or(0),
            nash_conv_every: self.nash_conv_every,
        })
    }
}

built_by!(MccfrConfig, MccfrConfigBuilder);

impl From<MccfrConfig> for MccfrConfigBuilder {
    fn from(c: MccfrConfig) -> Self {
        let outcome = c.sampling == Sampling::Outcome;
        MccfrConfigBuilder {
            sampling: Some(c.sampling),
            epsilon: outcome.then_some(c.epsilon),
            average: (!outcome).then_some(c.average),
            traversals_per_iteration: Some(c.traversals_per_iteration),
            seed: Some(c.seed),
            nash_conv_every: c.nash_conv_every,
        }
    }
}

impl MccfrConfig {
    /// What a traversal samples.
    pub fn sampling(&self) -> Sampling {
        self.sampling
    }
    /// Outcome sampling's exploration ε (0.6 unless set; read only by `outcome`).
    pub fn epsilon(&self) -> f64 {
        self.epsilon
    }
    /// External sampling's average policy (`simple` unless set; read only by `external`).
    pub fn average(&self) -> AverageType {
        self.average
    }
    /// OpenSpiel iterations (one traversal per player) per iteration of the loop.
    pub fn traversals_per_iteration(&self) -> u64 {
        self.traversals_per_iteration
    }
    /// The random streams' key.
    pub fn seed(&self) -> u64 {
        self.seed
    }
    /// How often the exact NashConv is evaluated.
    pub fn nash_conv_schedule(&self) -> NashConvSchedule {
        self.nash_conv_every.map_or(NashConvSchedule::Auto, NashConvSchedule::Every)
    }
}

/// MCCFR's part of an iteration's report.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct MccfrReport {
    /// Traversals per player so far: OpenSpiel's iteration count (iteration 0: none).
    pub traversals: u64,
}

/// Everything an MCCFR run needs to continue: what a checkpoint stores (the random streams
/// are keyed by the traversal count, so no generator state is saved).
///
/// Both tables are indexed by the tree's sequences, as [`CfrState`](super::cfr::CfrState)'s.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MccfrState {
    /// Iterations done.
    pub iteration: usize,
    /// Traversals per player done (OpenSpiel iterations).
    pub traversals: u64,
    /// Cumulative sampled counterfactual regrets (10⁻⁶ at the start).
    pub regrets: Vec<f64>,
    /// Cumulative policy (10⁻⁶ at the start); normalised per infoset it is the average
    /// policy.
    pub cumulative_policy: Vec<f64>,
}

/// The value both tables start at, OpenSpiel's `kInitialTableValues`.
const INITIAL_TABLE_VALUE: f64 = 0.000001;

/// How often (in OpenSpiel iterations) a step looks at its cutoff.
const CUTOFF_EVERY: u64 = 1024;

/// The index of the child a uniform `u` selects in a cumulative row (non-decreasing, its
/// last positive entry 2): the number of entries `<= u` before the last.
#[inline(always)]
fn pick(cum: &[f64], u: f64) -> usize {
    cum[..cum.len() - 1].iter().map(|&c| usize::from(c <= u)).sum()
}

/// The action a uniform `u` selects from probabilities `prob(0..count)`, as OpenSpiel's
/// `SampleActionIndex`: the first `a` with `u < Σ_{b ≤ a} prob(b)`; when rounding leaves
/// the total at or below `u`, the last action of positive probability (never one of
/// probability 0).
#[inline(always)]
fn sample(count: usize, u: f64, prob: impl Fn(usize) -> f64) -> usize {
    let mut acc = 0.0;
    let mut last_positive = 0;
    for a in 0..count {
        let p = prob(a);
        acc += p;
        if u < acc {
            return a;
        }
        if p > 0.0 {
            last_positive = a;
        }
    }
    last_positive
}

/// One decision node on an outcome-sampling path.
#[derive(Clone, Copy)]
struct Frame {
    player: u32,
    seq: u32,
    count: u32,
    /// The sampled action's index.
    sampled: u32,
    /// Where σ at the node starts in the policy stack.
    policy_at: u32,
    /// The traversing player's reach, the others' and chance's, and the sampling reach, at
    /// the node.
    my_reach: f64,
    opp_reach: f64,
    sample_reach: f64,
}

/// The scratch space the traversals reuse (grown to the deepest path's need, then no
/// allocation).
#[derive(Default)]
struct Scratch {
    frames: Vec<Frame>,
    /// σ at the nodes of the current path, stacked.
    policies: Vec<f64>,
    /// External sampling: children's values at the traversing player's nodes, stacked.
    values: Vec<f64>,
    /// Full averaging: every player's reach.
    reach: Vec<f64>,
}

/// The tables one traversal reads and writes.
struct Tables<'a> {
    arena: &'a Arena,
    regrets: &'a mut [f64],
    cumulative_policy: &'a mut [f64],
    scratch: &'a mut Scratch,
    num_players: usize,
}

impl Tables<'_> {
    /// σ at the infoset whose sequences start at `seq`, pushed on the policy stack; returns
    /// where it starts.
    #[inline(always)]
    fn push_policy(&mut self, seq: usize, count: usize) -> usize {
        let at = self.scratch.policies.len();
        self.scratch.policies.resize(at + count, 0.0);
        regret_matching(&self.regrets[seq..seq + count], &mut self.scratch.policies[at..]);
        at
    }

    /// One outcome-sampling traversal for `player` (OpenSpiel's `SampleEpisode` from the
    /// root with all reaches 1), iteratively: down the sampled path, then its updates in
    /// reverse. Returns the sampled value estimate at the root.
    fn outcome(&mut self, player: usize, epsilon: f64, stream: &mut EpisodeStream) -> f64 {
        let arena = self.arena;
        self.scratch.frames.clear();
        self.scratch.policies.clear();
        let (mut my_reach, mut opp_reach, mut sample_reach) = (1.0, 1.0, 1.0);
        let mut node = 0usize;
        let mut value = loop {
            match arena.nodes[node] {
                Node::Terminal { offset } => break arena.utilities[offset as usize + player],
                Node::Chance { first, count } => {
                    let children = first as usize..(first + count) as usize;
                    let child = first as usize + pick(&arena.chance_cum[children], stream.next_uniform());
                    let p = arena.chance_prob[child];
                    opp_reach *= p;
                    sample_reach *= p;
                    node = child;
                }
                Node::Decision { player: q, seq, first, count } => {
                    let c = count as usize;
                    let at = self.push_policy(seq as usize, c);
                    let sigma = &self.scratch.policies[at..at + c];
                    let u = stream.next_uniform();
                    let mine = q as usize == player;
                    let k = if mine {
                        sample(c, u, |a| epsilon * 1.0 / c as f64 + (1.0 - epsilon) * sigma[a])
                    } else {
                        sample(c, u, |a| sigma[a])
                    };
                    let sampled_prob =
                        if mine { epsilon * 1.0 / c as f64 + (1.0 - epsilon) * sigma[k] } else { sigma[k] };
                    self.scratch.frames.push(Frame {
                        player: q,
                        seq,
                        count,
                        sampled: k as u32,
                        policy_at: at as u32,
                        my_reach,
                        opp_reach,
                        sample_reach,
                    });
                    if mine {
                        my_reach *= sigma[k];
                    } else {
                        opp_reach *= sigma[k];
                    }
                    sample_reach *= sampled_prob;
                    node = first as usize + k;
                }
            }
        };
        for f in self.scratch.frames.iter().rev() {
            let (c, k, seq) = (f.count as usize, f.sampled as usize, f.seq as usize);
            let sigma = &self.scratch.policies[f.policy_at as usize..f.policy_at as usize + c];
            let mine = f.player as usize == player;
            let sampled_prob =
                if mine { epsilon * 1.0 / c as f64 + (1.0 - epsilon) * sigma[k] } else { sigma[k] };
            // OpenSpiel's baseline-corrected child values with the baseline 0: the sampled
            // child's value over its sampling probability, the others 0.
            let child_value = value / sampled_prob;
            let estimate = sigma[k] * child_value;
            if mine {
                let cf_value = estimate * f.opp_reach / f.sample_reach;
                for (a, r) in self.regrets[seq..seq + c].iter_mut().enumerate() {
                    let cf_action_value =
                        if a == k { child_value * f.opp_reach / f.sample_reach } else { 0.0 };
                    *r += cf_action_value - cf_value;
                }
                for (cum, &p) in self.cumulative_policy[seq..seq + c].iter_mut().zip(sigma) {
                    *cum += f.my_reach * p / f.sample_reach;
                }
            }
            value = estimate;
        }
        value
    }

    /// External sampling's value of `node` for `player` (OpenSpiel's `UpdateRegrets`),
    /// updating `player`'s regrets below and, with simple averaging, the cumulative policy
    /// of player `(player + 1) mod n`.
    fn external(&mut self, node: usize, player: usize, simple: bool, stream: &mut EpisodeStream) -> f64 {
        let arena = self.arena;
        match arena.nodes[node] {
            Node::Terminal { offset } => arena.utilities[offset as usize + player],
            Node::Chance { first, count } => {
                let children = first as usize..(first + count) as usize;
                let child = first as usize + pick(&arena.chance_cum[children], stream.next_uniform());
                self.external(child, player, simple, stream)
            }
            Node::Decision { player: q, seq, first, count } => {
                let (q, seq, first, c) = (q as usize, seq as usize, first as usize, count as usize);
                let at = self.push_policy(seq, c);
                let value = if q != player {
                    let u = stream.next_uniform();
                    let k = sample(c, u, |a| self.scratch.policies[at + a]);
                    self.external(first + k, player, simple, stream)
                } else {
                    let base = self.scratch.values.len();
                    let mut value = 0.0;
                    for a in 0..c {
                        let child = self.external(first + a, player, simple, stream);
                        self.scratch.values.push(child);
                        value += self.scratch.policies[at + a] * child;
                    }
                    for a in 0..c {
                        self.regrets[seq + a] += self.scratch.values[base + a] - value;
                    }
                    self.scratch.values.truncate(base);
                    value
                };
                if simple && q == (player + 1) % self.num_players {
                    for a in 0..c {
                        self.cumulative_policy[seq + a] += self.scratch.policies[at + a];
                    }
                }
                self.scratch.policies.truncate(at);
                value
            }
        }
    }

    /// Full averaging (OpenSpiel's `FullUpdateAverage`): every decision node below `node`
    /// with some player's reach positive adds its player's reach times σ; `scratch.reach`
    /// holds the players' reaches at `node` (chance's is not part of it).
    fn full_average(&mut self, node: usize) {
        let arena = self.arena;
        match arena.nodes[node] {
            Node::Terminal { .. } => {}
            Node::Chance { first, count } => {
                for child in first..first + count {
                    self.full_average(child as usize);
                }
            }
            Node::Decision { player: q, seq, first, count } => {
                if self.scratch.reach.iter().sum::<f64>() == 0.0 {
                    return;
                }
                let (q, seq, first, c) = (q as usize, seq as usize, first as usize, count as usize);
                let at = self.push_policy(seq, c);
                let saved = self.scratch.reach[q];
                for a in 0..c {
                    self.scratch.reach[q] = saved * self.scratch.policies[at + a];
                    self.full_average(first + a);
                }
                self.scratch.reach[q] = saved;
                for a in 0..c {
                    self.cumulative_policy[seq + a] += saved * self.scratch.policies[at + a];
                }
                self.scratch.policies.truncate(at);
            }
        }
    }
}

/// An iteration computed but not yet committed.
struct Staged {
    regrets: Vec<f64>,
    cumulative_policy: Vec<f64>,
    report: IterationReport,
}

/// An MCCFR run (outcome or external sampling).
pub struct Mccfr<'t> {
    tree: &'t GameTree,
    config: MccfrConfig,
    arena: Arena,
    state: MccfrState,
    /// The last committed iteration's report.
    last: IterationReport,
    cutoff: Cutoff,
    /// The run's last iteration, always evaluated ([`TrainingLoop::set_last_iteration`]).
    last_iteration: Option<usize>,
}

impl<'t> Mccfr<'t> {
    /// Start from OpenSpiel's initial tables (the uniform policy).
    ///
    /// # Errors
    ///
    /// Errors of the exact NashConv (none for trees built by `GameTree::build`).
    pub fn new(tree: &'t GameTree, config: MccfrConfig) -> Result<Self> {
        // Iteration 0 is the construction: its wall time is the report's.
        let started = Instant::now();
        let m = tree.num_sequences();
        let state = MccfrState {
            iteration: 0,
            traversals: 0,
            regrets: vec![INITIAL_TABLE_VALUE; m],
            cumulative_policy: vec![INITIAL_TABLE_VALUE; m],
        };
        let placeholder = IterationReport::new(0, vec![1; tree.num_players()], Some(0.0), None);
        let mut mccfr = Self::with_state(tree, config, state, placeholder);
        let mut report = mccfr.report(0, 0, &mccfr.state.cumulative_policy, 0.0, true)?;
        report.elapsed_s = started.elapsed().as_secs_f64();
        mccfr.last = report;
        Ok(mccfr)
    }

    /// Continue from a saved state, after checking it: both tables have one finite entry per
    /// sequence of this tree, the cumulative policy is non-negative, the reports are those of
    /// iterations 0 to `iteration` with as many MCCFR parts, the last one counts the state's
    /// traversals, and it has the average policy's NashConv (recomputed).
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] naming what does not fit.
    pub fn resume(
        tree: &'t GameTree,
        config: MccfrConfig,
        state: MccfrState,
        reports: &[IterationReport],
    ) -> Result<Self> {
        let bad = |why: String| Error::SavedState(why);
        check_saved_tables(tree, &state.regrets, &state.cumulative_policy)?;
        crate::checkpoint::check_reports(reports, 0, state.iteration)?;
        let mut parts = Vec::with_capacity(reports.len());
        for r in reports {
            match r.details.get::<MccfrReport>() {
                Some(part) => parts.push(part),
                None => {
                    return Err(bad(format!("the report of iteration {} has no MCCFR part", r.iteration)));
                }
            }
        }
        // INVARIANT: check_reports saw iteration + 1 ≥ 1 reports.
        let counted = parts.last().expect("a report").traversals;
        if counted != state.traversals {
            return Err(bad(format!(
                "the state has {} traversals, the report of iteration {} {counted}",
                state.traversals, state.iteration
            )));
        }
        let last = reports.last().expect("a report").clone();
        let mccfr = Self::with_state(tree, config, state, last);
        let average = mccfr.average_policy();
        crate::checkpoint::check_scheduled_nash_conv(
            tree,
            mccfr.state.iteration,
            mccfr.last.nash_conv,
            &average,
        )?;
        Ok(mccfr)
    }

    fn with_state(tree: &'t GameTree, config: MccfrConfig, state: MccfrState, last: IterationReport) -> Self {
        Self {
            tree,
            config,
            arena: Arena::new(tree),
            state,
            last,
            cutoff: Cutoff::default(),
            last_iteration: None,
        }
    }

    /// The settings.
    pub fn config(&self) -> &MccfrConfig {
        &self.config
    }
    /// The loop state.
    pub fn state(&self) -> &MccfrState {
        &self.state
    }
    /// The last committed iteration's report (iteration 0's at the start).
    pub fn last_report(&self) -> &IterationReport {
        &self.last
    }

    /// The average policy: the cumulative policy normalised per infoset.
    pub fn average_policy(&self) -> TabularPolicy {
        self.arena.average_policy(self.tree, &self.state.cumulative_policy)
    }

    /// The current policy: regret matching on the cumulative regrets (what the next
    /// traversal plays).
    pub fn current_policy(&self) -> TabularPolicy {
        self.arena.policy_from(self.tree, &self.state.regrets, regret_matching)
    }

    /// Run OpenSpiel iterations `from..to` (each a traversal per player, player 0 first) on
    /// the tables, then (with full averaging) the average walk after each.
    ///
    /// # Errors
    ///
    /// [`Error::CutOff`] when the cutoff passed between two batches of [`CUTOFF_EVERY`].
    fn traverse(&self, from: u64, to: u64, regrets: &mut [f64], cumulative_policy: &mut [f64]) -> Result<()> {
        let n = self.tree.num_players();
        let mut scratch = Scratch { reach: vec![1.0; n], ..Scratch::default() };
        let mut tables =
            Tables { arena: &self.arena, regrets, cumulative_policy, scratch: &mut scratch, num_players: n };
        let c = &self.config;
        let simple = c.average == AverageType::Simple;
        for t in from..to {
            if t > from && (t - from).is_multiple_of(CUTOFF_EVERY) && self.cutoff.passed() {
                return Err(Error::CutOff);
            }
            for p in 0..n {
                let mut stream = EpisodeStream::new(c.seed, p as u32, t);
                match c.sampling {
                    Sampling::Outcome => {
                        tables.outcome(p, c.epsilon, &mut stream);
                    }
                    Sampling::External => {
                        tables.external(0, p, simple, &mut stream);
                    }
                }
            }
            if c.sampling == Sampling::External && !simple {
                tables.scratch.reach.fill(1.0);
                tables.full_average(0);
            }
        }
        Ok(())
    }

    /// One iteration (`traversals_per_iteration` OpenSpiel iterations, then the exact
    /// NashConv of the average policy); nothing is committed unless it succeeds.
    ///
    /// # Errors
    ///
    /// [`Error::CutOff`] when the time budget ran out inside the step; [`Error::AtIteration`]
    /// wrapping exact NashConv errors (none on a valid state). The state is then the one
    /// before the call.
    pub fn step(&mut self) -> Result<&mut IterationReport> {
        let iteration = self.state.iteration + 1;
        let Staged { regrets, cumulative_policy, report } = self.stage(iteration).map_err(|e| match e {
            Error::CutOff => e,
            e => Error::AtIteration { iteration, source: Box::new(e) },
        })?;
        self.state.regrets = regrets;
        self.state.cumulative_policy = cumulative_policy;
        self.state.traversals += self.config.traversals_per_iteration;
        self.state.iteration = iteration;
        self.last = report.after(Some(&self.last));
        Ok(&mut self.last)
    }

    fn stage(&self, iteration: usize) -> Result<Staged> {
        let started = Instant::now();
        let mut regrets = self.state.regrets.clone();
        let mut cumulative_policy = self.state.cumulative_policy.clone();
        let from = self.state.traversals;
        let to = from
            .checked_add(self.config.traversals_per_iteration)
            .ok_or_else(|| Error::SavedState(format!("{from} traversals: the count would overflow")))?;
        self.traverse(from, to, &mut regrets, &mut cumulative_policy)?;
        let oracle_s = started.elapsed().as_secs_f64();
        let evaluated = self.config.nash_conv_schedule().evaluates_in_run(
            iteration,
            self.last_iteration,
            self.cutoff.passed(),
        );
        let report = self.report(iteration, to, &cumulative_policy, oracle_s, evaluated)?;
        Ok(Staged { regrets, cumulative_policy, report })
    }

    /// The report of a state with this cumulative policy; NashConv only where `evaluated`.
    fn report(
        &self,
        iteration: usize,
        traversals: u64,
        cumulative_policy: &[f64],
        oracle_s: f64,
        evaluated: bool,
    ) -> Result<IterationReport> {
        let n = self.tree.num_players();
        if !evaluated {
            let mut report = IterationReport::new(iteration, vec![1; n], None, None);
            report.times = PhaseTimes { oracle_s, ..PhaseTimes::default() };
            report.details = Details::of(&MccfrReport { traversals });
            return Ok(report);
        }
        let started = Instant::now();
        let average = self.arena.average_policy(self.tree, cumulative_policy);
        let r = nash_conv_report(self.tree, &vec![&average; n])?;
        let times =
            PhaseTimes { oracle_s, nash_conv_s: started.elapsed().as_secs_f64(), ..PhaseTimes::default() };
        let mut report = IterationReport::new(iteration, vec![1; n], Some(r.nash_conv), r.exploitability);
        report.times = times;
        report.details = Details::of(&MccfrReport { traversals });
        Ok(report)
    }
}

impl TrainingLoop for Mccfr<'_> {
    type State = MccfrState;

    fn name(&self) -> &'static str {
        "mccfr"
    }
    fn step(&mut self) -> Result<&mut IterationReport> {
        Mccfr::step(self)
    }
    fn state(&self) -> &MccfrState {
        &self.state
    }
    fn last_report(&self) -> Option<&IterationReport> {
        Some(&self.last)
    }
    fn set_cutoff(&mut self, cutoff: Cutoff) {
        self.cutoff = cutoff;
    }
    fn set_last_iteration(&mut self, iteration: usize) {
        self.last_iteration = Some(iteration);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagame_games::registry;

    #[test]
    fn sampling_never_picks_a_zero_probability_action() {
        let probs = [0.0, 0.5, 0.5, 0.0];
        for (u, want) in [(0.0, 1), (0.49, 1), (0.5, 2), (0.999_999, 2)] {
            assert_eq!(sample(4, u, |a| probs[a]), want, "u = {u}");
        }
        // Rounding leaves the total below u: the last positive action.
        let short = [0.3, 0.3, 0.3, 0.0];
        assert_eq!(sample(4, 0.95, |a| short[a]), 2);
        assert_eq!(pick(&[0.25, 2.0, 2.0], 0.9), 1);
    }

    #[test]
    fn the_defaults_are_valid_and_round_trip() {
        let c = MccfrConfig::default();
        assert_eq!(
            (c.sampling(), c.average(), c.traversals_per_iteration(), c.seed()),
            (Sampling::External, AverageType::Simple, 1000, 0)
        );
        let o = MccfrConfig::builder().sampling(Sampling::Outcome).build().unwrap();
        assert_eq!(o.epsilon(), 0.6);
        let e = MccfrConfig::builder().average(AverageType::Full).build().unwrap();
        for config in [c, o, e] {
            let json = serde_json::to_string(&config).unwrap();
            assert_eq!(serde_json::from_str::<MccfrConfig>(&json).unwrap(), config, "{json}");
        }
    }

    /// Iterations of different sizes over the same traversals end in the same state: the
    /// streams are keyed by the traversal, not by the iteration.
    #[test]
    fn the_batch_size_does_not_change_the_run() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        for sampling in [Sampling::Outcome, Sampling::External] {
            let run = |per: u64, steps: usize| {
                let config = MccfrConfig::builder()
                    .sampling(sampling)
                    .traversals_per_iteration(per)
                    .seed(9)
                    .build()
                    .unwrap();
                let mut mccfr = Mccfr::new(&tree, config).unwrap();
                for _ in 0..steps {
                    mccfr.step().unwrap();
                }
                mccfr.state().clone()
            };
            let (a, b) = (run(10, 30), run(300, 1));
            assert_eq!((a.traversals, b.traversals), (300, 300));
            assert_eq!(a.regrets, b.regrets, "{sampling:?}");
            assert_eq!(a.cumulative_policy, b.cumulative_policy, "{sampling:?}");
        }
    }
}
