//! The `Learner` trait and the training driver the tabular learners share.

use metagame_games::{Cutoff, GameTree, InfosetId, TabularPolicy};

use crate::episodes::{Engine, Layout, OpponentSampler, Trajectory, cumulate};
use crate::error::{Error, Result};
use crate::shaping::MinimaxShaping;
use crate::values::ValueTable;

/// Where a learner starts.
#[derive(Clone, Copy, Debug, Default)]
pub enum Start<'a> {
    /// From scratch (values 0, uniform policy).
    #[default]
    Fresh,
    /// From a given policy of the game (its rows at the learner's seat; each learner says how
    /// it turns a policy into its parameters). Rows of other seats are copied into the
    /// learner's output policy.
    From(&'a TabularPolicy),
}

/// What training has cost and earned so far.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[non_exhaustive]
pub struct TrainingStats {
    /// Episodes trained on.
    pub episodes: u64,
    /// Learner decisions (state-action updates) in them.
    pub steps: u64,
    /// Batches played (one behaviour policy each).
    pub batches: u64,
    /// Sum of the learner's returns (the game's utility).
    pub return_sum: f64,
    /// Sum of the returns the learner was trained on (after any reward shaping).
    pub shaped_return_sum: f64,
}

/// Seconds a network learner spent in each phase of training since it was made or restored:
/// playing episodes (the environment and the network's forward passes that act),
/// computing losses and gradients, and applying the optimiser. Wall time is not part of
/// what a learner learned, so it is not saved.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct PhaseSeconds {
    /// Collecting episodes.
    pub rollouts: f64,
    /// Forward and backward passes of the updates (advantages and targets included).
    pub gradients: f64,
    /// The optimiser's steps (gradient clipping and the finiteness checks included).
    pub optimiser: f64,
}

impl PhaseSeconds {
    /// The seconds spent since `earlier`, a reading of the same clock.
    pub fn since(&self, earlier: &PhaseSeconds) -> PhaseSeconds {
        PhaseSeconds {
            rollouts: self.rollouts - earlier.rollouts,
            gradients: self.gradients - earlier.gradients,
            optimiser: self.optimiser - earlier.optimiser,
        }
    }
    /// Both added, phase by phase.
    pub fn plus(&self, other: &PhaseSeconds) -> PhaseSeconds {
        PhaseSeconds {
            rollouts: self.rollouts + other.rollouts,
            gradients: self.gradients + other.gradients,
            optimiser: self.optimiser + other.optimiser,
        }
    }
}

impl TrainingStats {
    /// Mean return per episode (0 before any episode).
    pub fn mean_return(&self) -> f64 {
        if self.episodes == 0 { 0.0 } else { self.return_sum / self.episodes as f64 }
    }
}

/// Trains one seat of a game from sampled episodes against an [`OpponentSampler`].
///
/// Dyn-compatible so that configs choose a learner at run time.
pub trait Learner: Send {
    /// Short stable name used in configs and reports ("q-learning").
    fn name(&self) -> &'static str;

    /// The seat it learns to play.
    fn seat(&self) -> usize;

    /// Train on `episodes` more episodes against `opponents` (one opponent policy per seat
    /// drawn per episode). Episode numbers continue from earlier calls, so two calls of `n`
    /// episodes equal one call of `2n` when `n` is a multiple of the batch size.
    ///
    /// # Errors
    ///
    /// [`Error::ZeroBudget`] for `episodes == 0`; a tree other than the learner's; opponents
    /// that do not fit (see [`OpponentSampler`]).
    fn train(&mut self, tree: &GameTree, opponents: &OpponentSampler<'_>, episodes: u64) -> Result<()> {
        self.train_until(tree, opponents, episodes, &Cutoff::never())
    }

    /// [`train`](Learner::train), checking `cutoff` before each batch: once it has passed,
    /// training stops with [`Error::CutOff`], the learner holding the whole batches it
    /// trained (its [`stats`](Learner::stats) count them), so a later call continues from
    /// there as if the budget had been split at that batch.
    ///
    /// # Errors
    ///
    /// As [`train`](Learner::train); [`Error::CutOff`].
    fn train_until(
        &mut self,
        tree: &GameTree,
        opponents: &OpponentSampler<'_>,
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()>;

    /// The current policy as a full tabular policy of the game (the learner defines which:
    /// greedy, softmax or average); rows of other seats are uniform or the start policy's.
    fn policy(&self) -> TabularPolicy;

    /// The current action-value estimates of the learner's seat.
    fn values(&self) -> ValueTable;

    /// Training statistics so far.
    fn stats(&self) -> &TrainingStats;
}

/// A learner whose rewards can be shaped (the [`MinimaxExploiter`](crate::MinimaxExploiter)
/// wraps one).
pub trait ShapedLearner: Learner {
    /// Train from now on with `shaping` (None: the game's rewards).
    fn set_reward_shaping(&mut self, shaping: Option<MinimaxShaping>);
}

/// The tabular part of a learner: a behaviour policy and an update per episode.
pub(crate) trait Core: Send {
    /// Write the cumulative behaviour rows of the seat's infosets (`layout.infosets`) into
    /// `behaviour` (indexed by sequence), after `episodes` episodes.
    fn fill_behaviour(&mut self, layout: &Layout, episodes: u64, behaviour: &mut [f64]);
    /// Learn from one episode (number `episode`); returns the shaped return.
    fn apply(&mut self, trajectory: Trajectory<'_>, episode: u64, shaping: Option<&MinimaxShaping>) -> f64;
    /// The seat's probabilities at one infoset (by legal-action index) into `out`.
    fn policy_row(&self, layout: &Layout, start: usize, count: usize, out: &mut [f64]);
    /// Values and visit counts per sequence.
    fn values(&self) -> (&[f64], &[u64]);
}

/// The shared driver: engine, layout, batches, statistics.
#[derive(Clone, Debug)]
pub(crate) struct Trainer<C> {
    pub layout: Layout,
    pub engine: Engine,
    pub behaviour: Vec<f64>,
    pub base: TabularPolicy,
    pub stats: TrainingStats,
    pub shaping: Option<MinimaxShaping>,
    pub batch_size: usize,
    pub core: C,
}

/// Check a start policy and make the base of the output policy.
pub(crate) fn base_policy(tree: &GameTree, start: Start<'_>) -> Result<TabularPolicy> {
    match start {
        Start::Fresh => Ok(TabularPolicy::uniform(tree)),
        Start::From(policy) => {
            policy.validate(tree)?;
            Ok(policy.clone())
        }
    }
}

impl<C: Core> Trainer<C> {
    pub fn new(
        tree: &GameTree,
        seat: usize,
        seed: u64,
        batch_size: usize,
        base: TabularPolicy,
        core: C,
    ) -> Result<Self> {
        let engine = Engine::new(tree, seat, seed)?;
        let layout = Layout::new(tree, seat);
        Ok(Self {
            behaviour: vec![0.0; layout.num_sequences],
            layout,
            engine,
            base,
            stats: TrainingStats::default(),
            shaping: None,
            batch_size,
            core,
        })
    }

    pub fn seat(&self) -> usize {
        self.engine.seat()
    }

    pub fn train(
        &mut self,
        tree: &GameTree,
        opponents: &OpponentSampler<'_>,
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()> {
        if episodes == 0 {
            return Err(Error::ZeroBudget);
        }
        if !self.layout.fits(tree) {
            return Err(Error::Game(metagame_games::Error::Shape(format!(
                "the learner was made for {}, not {}",
                self.layout.game,
                tree.name()
            ))));
        }
        let prepared = self.engine.prepare(tree, opponents)?;
        let mut left = episodes;
        while left > 0 {
            if cutoff.passed() {
                return Err(Error::CutOff);
            }
            let n = left.min(self.batch_size as u64) as usize;
            let first = self.stats.episodes;
            self.core.fill_behaviour(&self.layout, first, &mut self.behaviour);
            self.engine.play_batch(&self.behaviour, &prepared, first, n);
            for j in 0..n {
                let t = self.engine.trajectory(j);
                self.stats.steps += t.steps.len() as u64;
                self.stats.return_sum += t.reward;
                self.stats.shaped_return_sum += self.core.apply(t, first + j as u64, self.shaping.as_ref());
            }
            self.stats.episodes += n as u64;
            self.stats.batches += 1;
            left -= n as u64;
        }
        Ok(())
    }

    pub fn policy(&self) -> TabularPolicy {
        let mut out = self.base.clone();
        let mut probs = vec![0.0; self.layout.num_actions];
        for (i, start, legal) in &self.layout.infosets {
            let k = legal.len();
            self.core.policy_row(&self.layout, *start as usize, k, &mut probs[..k]);
            let row = out.row_mut(InfosetId(*i));
            row.fill(0.0);
            for (&a, &p) in legal.iter().zip(&probs[..k]) {
                row[a as usize] = p;
            }
        }
        out
    }

    pub fn values(&self) -> ValueTable {
        let (q, visits) = self.core.values();
        ValueTable::from_sequences(&self.layout, self.seat(), q, visits)
    }

    pub fn set_shaping(&mut self, shaping: Option<MinimaxShaping>) {
        self.engine.watch(shaping.as_ref().map(MinimaxShaping::main_seat));
        self.shaping = shaping;
    }
}

/// Write `probs` (a distribution by legal-action index) cumulated into `behaviour[start..]`.
pub(crate) fn write_behaviour(behaviour: &mut [f64], start: usize, probs: &[f64]) {
    cumulate(probs.iter().copied(), &mut behaviour[start..start + probs.len()]);
}
