//! Tabular actor-critic: a softmax policy trained by policy gradient against a learned critic.

use metagame_games::{Cutoff, GameTree, InfosetId, TabularPolicy};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::episodes::{Layout, OpponentSampler, Trajectory};
use crate::error::{Error, Result};
use crate::learner::{
    Core, Learner, ShapedLearner, Start, Trainer, TrainingStats, base_policy, write_behaviour,
};
use crate::learner_config::{LearnerConfig, Registrable, SeatLearner, from_fields, plain_config, state_of};
use crate::q_learning::check_common;
use crate::saved_learner::SavedLearner;
use crate::schedule::Schedule;
use crate::shaping::MinimaxShaping;
use crate::values::ValueTable;

/// Which policy an [`ActorCritic`] hands out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum PolicyOutput {
    /// The current softmax policy.
    #[default]
    Current,
    /// The average of the softmax policies at each visit of an information state (states
    /// never visited: the current policy).
    Average,
}

/// Settings of [`ActorCritic`] (and of its oracle).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct ActorCriticConfig {
    /// Episodes per trained response when the request sets no budget. Default 200 000.
    pub episodes_per_response: u64,
    /// Episodes per batch (one behaviour policy, played in parallel). Default 1024.
    pub batch_size: usize,
    /// Discount of returns, in [0, 1]. Default 1.
    pub discount: f64,
    /// Step size of the policy logits, in (0, 1]. Default constant 1.
    pub actor_step_size: Schedule,
    /// Step size of the critic `Q(s, a)`, in (0, 1]. Default per visit `max(0.01, 1/n)`.
    pub critic_step_size: Schedule,
    /// Exploration ε mixed uniformly into the behaviour policy, in [0, 1] (keeps the critic's
    /// estimates of unlikely actions fresh). Default per visit of the information state,
    /// `n^-0.5`.
    pub epsilon: Schedule,
    /// Which policy is the output. Default the current one.
    pub output: PolicyOutput,
    /// Whether a trained response starts from the request's warm-start policy. Default false.
    pub warm_start: bool,
}

impl Default for ActorCriticConfig {
    fn default() -> Self {
        Self {
            episodes_per_response: 200_000,
            batch_size: 1024,
            discount: 1.0,
            actor_step_size: Schedule::constant(1.0),
            critic_step_size: Schedule::PerVisit { power: 1.0, floor: 0.01 },
            epsilon: Schedule::PerVisit { power: 0.5, floor: 0.0 },
            output: PolicyOutput::Current,
            warm_start: false,
        }
    }
}

impl ActorCriticConfig {
    /// Check every field's range.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Config`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        check_common(self.episodes_per_response, self.batch_size, self.discount)?;
        self.actor_step_size.validate("actor_step_size", true)?;
        self.critic_step_size.validate("critic_step_size", true)?;
        self.epsilon.validate("epsilon", false)
    }
}

#[derive(Clone, Debug)]
struct AcCore {
    config: ActorCriticConfig,
    logits: Vec<f64>,
    q: Vec<f64>,
    visits: Vec<u64>,
    /// Sum of the policy at each visit, per sequence.
    average: Vec<f64>,
    probs: Vec<f64>,
}

/// Softmax of `logits` into `out`.
fn softmax(logits: &[f64], out: &mut [f64]) {
    let max = logits.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mut sum = 0.0;
    for (o, &x) in out.iter_mut().zip(logits) {
        *o = (x - max).exp();
        sum += *o;
    }
    for o in out.iter_mut() {
        *o /= sum;
    }
}

impl Core for AcCore {
    fn fill_behaviour(&mut self, layout: &Layout, episodes: u64, behaviour: &mut [f64]) {
        for (_, start, legal) in &layout.infosets {
            let (s, k) = (*start as usize, legal.len());
            self.probs.resize(k.max(self.probs.len()), 0.0);
            softmax(&self.logits[s..s + k], &mut self.probs[..k]);
            let n: u64 = self.visits[s..s + k].iter().sum();
            let eps = self.config.epsilon.value(episodes, n);
            for p in &mut self.probs[..k] {
                *p = (1.0 - eps) * *p + eps / k as f64;
            }
            write_behaviour(behaviour, s, &self.probs[..k]);
        }
    }

    fn apply(&mut self, t: Trajectory<'_>, episode: u64, shaping: Option<&MinimaxShaping>) -> f64 {
        let len = t.steps.len();
        let mut shaped_return = 0.0;
        let lr_actor = self.config.actor_step_size.value(episode, 0);
        for (i, step) in t.steps.iter().enumerate() {
            let terminal = i + 1 == len;
            let mut r = if terminal { t.reward } else { 0.0 };
            if let Some(sh) = shaping {
                r = sh.reward(r, step, terminal);
            }
            shaped_return += r;
            let target = if terminal {
                r
            } else {
                // Expected SARSA: the value of the current policy at the next decision.
                let next = &t.steps[i + 1];
                let (s, k) = (next.slot as usize, next.count as usize);
                self.probs.resize(k.max(self.probs.len()), 0.0);
                softmax(&self.logits[s..s + k], &mut self.probs[..k]);
                let v: f64 = self.probs[..k].iter().zip(&self.q[s..s + k]).map(|(a, b)| a * b).sum();
                r + self.config.discount * v
            };
            let (s, k) = (step.slot as usize, step.count as usize);
            let idx = s + step.action as usize;
            self.visits[idx] += 1;
            let lr = self.config.critic_step_size.value(episode, self.visits[idx]);
            self.q[idx] += lr * (target - self.q[idx]);
            // All-actions policy gradient: d/dθ_b Σ_a π_a Q_a = π_b (Q_b − V).
            self.probs.resize(k.max(self.probs.len()), 0.0);
            let p = &mut self.probs[..k];
            softmax(&self.logits[s..s + k], p);
            let v: f64 = p.iter().zip(&self.q[s..s + k]).map(|(a, b)| a * b).sum();
            for (a, &pa) in p.iter().enumerate() {
                self.logits[s + a] += lr_actor * pa * (self.q[s + a] - v);
                self.average[s + a] += pa;
            }
        }
        shaped_return
    }

    fn policy_row(&self, _layout: &Layout, start: usize, count: usize, out: &mut [f64]) {
        let avg = &self.average[start..start + count];
        let total: f64 = avg.iter().sum();
        if self.config.output == PolicyOutput::Average && total > 0.0 {
            for (o, &a) in out.iter_mut().zip(avg) {
                *o = a / total;
            }
        } else {
            softmax(&self.logits[start..start + count], out);
        }
    }

    fn values(&self) -> (&[f64], &[u64]) {
        (&self.q, &self.visits)
    }
}

/// Tabular actor-critic: softmax policy over logits per information state, trained by the
/// all-actions policy gradient `θ(s, b) += η · π(b | s) · (Q(s, b) − V(s))` with
/// `V(s) = Σ_a π(a | s) Q(s, a)` as the baseline, at each state the learner visits; the
/// critic `Q(s, a)` learns the (discounted, possibly shaped) Monte Carlo return of the taken
/// action. The behaviour policy is the softmax itself (fixed for a batch); the output is the
/// current softmax policy or its average over visits ([`PolicyOutput`]).
///
/// A warm start sets the logits to `ln(max(π(a | s), 1e-4))`.
///
/// # References
///
/// S. Srinivasan et al., "Actor-Critic Policy Optimization in Partially Observable
/// Multiagent Environments", NeurIPS 2018, <https://arxiv.org/abs/1810.09026> (QPG).
#[derive(Clone, Debug)]
pub struct ActorCritic {
    trainer: Trainer<AcCore>,
}

impl ActorCritic {
    /// An actor-critic for `seat` whose episodes are keyed by `seed`.
    ///
    /// # Errors
    ///
    /// [`crate::Error::Config`] for a config out of range; [`crate::Error::Seat`]; a start
    /// policy of another game.
    pub fn new(
        tree: &GameTree,
        seat: usize,
        seed: u64,
        config: ActorCriticConfig,
        start: Start<'_>,
    ) -> Result<Self> {
        config.validate()?;
        let base = base_policy(tree, start)?;
        let s = tree.num_sequences();
        let core = AcCore {
            logits: vec![0.0; s],
            q: vec![0.0; s],
            visits: vec![0; s],
            average: vec![0.0; s],
            probs: Vec::new(),
            config: config.clone(),
        };
        let mut trainer = Trainer::new(tree, seat, seed, config.batch_size, base, core)?;
        if let Start::From(policy) = start {
            for (i, start, legal) in &trainer.layout.infosets {
                for (k, &a) in legal.iter().enumerate() {
                    trainer.core.logits[*start as usize + k] = policy.prob(*i, a as usize).max(1e-4).ln();
                }
            }
        }
        Ok(Self { trainer })
    }

    /// The settings.
    pub fn config(&self) -> &ActorCriticConfig {
        &self.trainer.core.config
    }

    /// Everything training has changed, for a checkpoint (reward shaping is not part of it:
    /// set it again after [`ActorCritic::restore`]).
    pub fn save(&self) -> ActorCriticState {
        let t = &self.trainer;
        ActorCriticState {
            game: t.layout.game.clone(),
            seat: t.seat(),
            seed: t.engine.seed(),
            config: t.core.config.clone(),
            base: t.base.as_slice().to_vec(),
            logits: t.core.logits.clone(),
            q: t.core.q.clone(),
            visits: t.core.visits.clone(),
            average: t.core.average.clone(),
            stats: t.stats.clone(),
        }
    }

    /// The learner `state` was saved from, on `tree`: it trains on exactly as the saved one
    /// would have.
    ///
    /// # Errors
    ///
    /// [`Error::Values`] for a state of another game, with tables of the wrong size or with
    /// numbers that are not finite; [`Error::Config`] for settings out of range.
    pub fn restore(tree: &GameTree, state: ActorCriticState) -> Result<Self> {
        let s = tree.num_sequences();
        let mut base = TabularPolicy::uniform(tree);
        let sizes_fit = state.game == tree.name()
            && state.base.len() == base.as_slice().len()
            && [state.logits.len(), state.q.len(), state.visits.len(), state.average.len()] == [s; 4];
        if !sizes_fit {
            return Err(Error::Values(format!(
                "an actor-critic saved on `{}` cannot be restored on `{}` (or its tables were altered)",
                state.game,
                tree.name()
            )));
        }
        if state.logits.iter().chain(&state.q).chain(&state.average).any(|v| !v.is_finite()) {
            return Err(Error::Values("a saved actor-critic number is not finite".into()));
        }
        let n = base.num_actions();
        for i in 0..tree.num_infosets() {
            base.row_mut(InfosetId(i)).copy_from_slice(&state.base[i * n..(i + 1) * n]);
        }
        base.validate(tree)?;
        let mut learner = Self::new(tree, state.seat, state.seed, state.config, Start::From(&base))?;
        learner.trainer.core.logits = state.logits;
        learner.trainer.core.q = state.q;
        learner.trainer.core.visits = state.visits;
        learner.trainer.core.average = state.average;
        learner.trainer.stats = state.stats;
        Ok(learner)
    }
}

/// An [`ActorCritic`] as data ([`ActorCritic::save`]), for checkpoints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ActorCriticState {
    game: String,
    seat: usize,
    seed: u64,
    config: ActorCriticConfig,
    base: Vec<f64>,
    logits: Vec<f64>,
    q: Vec<f64>,
    visits: Vec<u64>,
    average: Vec<f64>,
    stats: TrainingStats,
}

impl Learner for ActorCritic {
    fn name(&self) -> &'static str {
        "actor-critic"
    }
    fn seat(&self) -> usize {
        self.trainer.seat()
    }
    fn train_until(
        &mut self,
        tree: &GameTree,
        opponents: &OpponentSampler<'_>,
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()> {
        self.trainer.train(tree, opponents, episodes, cutoff)
    }
    fn policy(&self) -> TabularPolicy {
        self.trainer.policy()
    }
    fn values(&self) -> ValueTable {
        self.trainer.values()
    }
    fn stats(&self) -> &TrainingStats {
        &self.trainer.stats
    }
}

impl ShapedLearner for ActorCritic {
    fn set_reward_shaping(&mut self, shaping: Option<MinimaxShaping>) {
        self.trainer.set_shaping(shaping);
    }
}

impl LearnerConfig for ActorCriticConfig {
    plain_config!(ActorCriticConfig, ActorCritic);
}

impl Registrable for ActorCriticConfig {
    const NAME: &'static str = "actor-critic";
    const ABOUT: &'static str = "tabular actor-critic: a softmax policy trained against a learned critic";
    fn restore(tree: &GameTree, state: Value) -> Result<Box<dyn SeatLearner>> {
        Ok(Box::new(ActorCritic::restore(tree, state_of::<ActorCriticState>(Self::NAME, state)?)?))
    }
    fn parse(fields: Value) -> std::result::Result<Self, String> {
        from_fields(fields, "learner")
    }
}

impl SeatLearner for ActorCritic {
    fn clone_box(&self) -> Box<dyn SeatLearner> {
        Box::new(self.clone())
    }
    fn save(&self) -> SavedLearner {
        SavedLearner::new(ActorCriticConfig::NAME, &ActorCritic::save(self))
    }
}
