//! Tabular Q-learning over information states.

use metagame_games::{Cutoff, GameTree, InfosetId, TabularPolicy};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::episodes::{Layout, OpponentSampler, Trajectory};
use crate::error::{Error, Result};
use crate::learner::{
    Core, Learner, ShapedLearner, Start, Trainer, TrainingStats, base_policy, write_behaviour,
};
use crate::learner_config::{LearnerConfig, Registrable, SeatLearner, from_fields, plain_config, state_of};
use crate::saved_learner::SavedLearner;
use crate::schedule::Schedule;
use crate::shaping::MinimaxShaping;
use crate::values::ValueTable;

/// Settings of [`QLearner`] (and of its oracle, see `episodes_per_response`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct QLearningConfig {
    /// Episodes per trained response when the request sets no budget. Default 200 000.
    pub episodes_per_response: u64,
    /// Episodes per batch (played with one behaviour policy, in parallel). Default 1024.
    /// Results depend on it (not on the thread count).
    pub batch_size: usize,
    /// Discount of the learner's own returns, in [0, 1]. Default 1 (OpenSpiel's).
    pub discount: f64,
    /// Exploration ε of the ε-greedy behaviour policy, in [0, 1]. Default: per visit of the
    /// information state, `max(0.01, n^-0.5)`.
    pub epsilon: Schedule,
    /// Step size, in (0, 1]. Default: per visit of the state-action pair,
    /// `max(0.001, 1/n)` (each estimate the mean of its targets until the floor).
    pub step_size: Schedule,
    /// Whether a trained response starts from the request's warm-start policy (when it
    /// has one). Default false.
    pub warm_start: bool,
}

impl Default for QLearningConfig {
    fn default() -> Self {
        Self {
            episodes_per_response: 200_000,
            batch_size: 1024,
            discount: 1.0,
            epsilon: Schedule::PerVisit { power: 0.5, floor: 0.01 },
            step_size: Schedule::PerVisit { power: 1.0, floor: 0.001 },
            warm_start: false,
        }
    }
}

impl QLearningConfig {
    /// Check every field's range.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        check_common(self.episodes_per_response, self.batch_size, self.discount)?;
        self.epsilon.validate("epsilon", false)?;
        self.step_size.validate("step_size", true)
    }
}

pub(crate) fn check_common(episodes: u64, batch_size: usize, discount: f64) -> Result<()> {
    if episodes == 0 || episodes > metagame_games::MAX_EPISODES {
        return Err(Error::Config(format!(
            "episodes_per_response: must be in 1..={}, got {episodes}",
            metagame_games::MAX_EPISODES
        )));
    }
    if batch_size == 0 || batch_size > 1 << 24 {
        return Err(Error::Config(format!("batch_size: {batch_size} is not in 1..=16777216")));
    }
    if !(0.0..=1.0).contains(&discount) {
        return Err(Error::Config(format!("discount: {discount} is not in [0, 1]")));
    }
    Ok(())
}

#[derive(Clone, Debug)]
struct QCore {
    config: QLearningConfig,
    q: Vec<f64>,
    visits: Vec<u64>,
}

impl Core for QCore {
    fn fill_behaviour(&mut self, layout: &Layout, episodes: u64, behaviour: &mut [f64]) {
        let mut probs = [0.0; 64];
        let mut heap = Vec::new();
        for (_, start, legal) in &layout.infosets {
            let (s, k) = (*start as usize, legal.len());
            let p: &mut [f64] = if k <= probs.len() {
                &mut probs[..k]
            } else {
                heap.resize(k, 0.0);
                &mut heap[..]
            };
            let n: u64 = self.visits[s..s + k].iter().sum();
            let eps = self.config.epsilon.value(episodes, n);
            greedy_row(&self.q[s..s + k], 1.0 - eps, p);
            for x in p.iter_mut() {
                *x += eps / k as f64;
            }
            write_behaviour(behaviour, s, p);
        }
    }

    #[inline]
    fn apply(&mut self, t: Trajectory<'_>, episode: u64, shaping: Option<&MinimaxShaping>) -> f64 {
        let mut shaped_return = 0.0;
        let last = t.steps.len().wrapping_sub(1);
        for (i, step) in t.steps.iter().enumerate() {
            let terminal = i == last;
            let mut r = if terminal { t.reward } else { 0.0 };
            if let Some(sh) = shaping {
                r = sh.reward(r, step, terminal);
            }
            shaped_return += r;
            let target = if terminal {
                r
            } else {
                let next = &t.steps[i + 1];
                let row = &self.q[next.slot as usize..(next.slot + next.count) as usize];
                r + self.config.discount * row.iter().copied().fold(f64::NEG_INFINITY, f64::max)
            };
            let idx = (step.slot + step.action) as usize;
            self.visits[idx] += 1;
            let lr = self.config.step_size.value(episode, self.visits[idx]);
            self.q[idx] += lr * (target - self.q[idx]);
        }
        shaped_return
    }

    fn policy_row(&self, _layout: &Layout, start: usize, count: usize, out: &mut [f64]) {
        greedy_row(&self.q[start..start + count], 1.0, out);
    }

    fn values(&self) -> (&[f64], &[u64]) {
        (&self.q, &self.visits)
    }
}

/// `mass` split evenly over the maximisers of `q`, 0 elsewhere.
fn greedy_row(q: &[f64], mass: f64, out: &mut [f64]) {
    let best = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let ties = q.iter().filter(|&&x| x == best).count() as f64;
    for (o, &x) in out.iter_mut().zip(q) {
        *o = if x == best { mass / ties } else { 0.0 };
    }
}

/// Tabular Q-learning over information states, ε-greedy, one seat.
///
/// After each learner decision `(s_t, a_t)` the target is `r_t + γ · max_a Q(s_{t+1}, a)` at
/// the learner's next decision point `s_{t+1}` (`r_t` alone at its last decision, where
/// `r_t` is the terminal utility), as OpenSpiel's `tabular_qlearner`; updates run through an
/// episode in order. The behaviour policy is ε-greedy (ε spread uniformly, the rest evenly
/// over the greedy actions) and fixed for a batch; the output policy is greedy (ties split
/// evenly; unvisited information states uniform, as all their values are equal).
///
/// A warm start from a policy sets `Q(s, a) = 1e-9 · π(a | s)`: the greedy policy starts as
/// the policy's most likely actions, and the first update of a pair overwrites the bonus.
///
/// # Examples
///
/// ```
/// use metagame_games::{best_response, expected_returns, registry, GameTree, PlayerId, TabularPolicy};
/// use metagame_learners::{Learner, OpponentSampler, QLearner, QLearningConfig, Start};
///
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let uniform = TabularPolicy::uniform(&tree);
/// let mut learner = QLearner::new(&tree, 0, 7, QLearningConfig::default(), Start::Fresh)?;
/// learner.train(&tree, &OpponentSampler::fixed(&uniform), 50_000)?;
/// let (_, best) = best_response(&tree, PlayerId(0), &[&uniform, &uniform])?;
/// let learned = expected_returns(&tree, &[&learner.policy(), &uniform])?[0];
/// assert!(best - learned < 0.04); // 1% of Kuhn's payoff range
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct QLearner {
    trainer: Trainer<QCore>,
}

impl QLearner {
    /// A Q-learner for `seat` whose episodes are keyed by `seed` (see [`crate::episodes`]).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a config out of range; [`Error::Seat`]; a start policy of
    /// another game.
    pub fn new(
        tree: &GameTree,
        seat: usize,
        seed: u64,
        config: QLearningConfig,
        start: Start<'_>,
    ) -> Result<Self> {
        config.validate()?;
        let base = base_policy(tree, start)?;
        let s = tree.num_sequences();
        let core = QCore { q: vec![0.0; s], visits: vec![0; s], config: config.clone() };
        let mut trainer = Trainer::new(tree, seat, seed, config.batch_size, base, core)?;
        if let Start::From(policy) = start {
            for (i, start, legal) in &trainer.layout.infosets {
                for (k, &a) in legal.iter().enumerate() {
                    trainer.core.q[*start as usize + k] = 1e-9 * policy.prob(*i, a as usize);
                }
            }
        }
        Ok(Self { trainer })
    }

    /// The settings.
    pub fn config(&self) -> &QLearningConfig {
        &self.trainer.core.config
    }

    /// Everything training has changed, for a checkpoint (reward shaping is not part of it:
    /// set it again after [`QLearner::restore`]).
    pub fn save(&self) -> QLearnerState {
        let t = &self.trainer;
        QLearnerState {
            game: t.layout.game.clone(),
            seat: t.seat(),
            seed: t.engine.seed(),
            config: t.core.config.clone(),
            base: t.base.as_slice().to_vec(),
            q: t.core.q.clone(),
            visits: t.core.visits.clone(),
            stats: t.stats.clone(),
        }
    }

    /// The learner `state` was saved from, on `tree`: it trains on exactly as the saved one
    /// would have.
    ///
    /// # Errors
    ///
    /// [`Error::Values`] for a state of another game or with tables of the wrong size;
    /// [`Error::Config`] for settings out of range.
    pub fn restore(tree: &GameTree, state: QLearnerState) -> Result<Self> {
        let mut base = TabularPolicy::uniform(tree);
        let sizes_fit = state.game == tree.name()
            && state.base.len() == base.as_slice().len()
            && state.q.len() == tree.num_sequences()
            && state.visits.len() == tree.num_sequences();
        if !sizes_fit {
            return Err(Error::Values(format!(
                "a Q-learner saved on `{}` cannot be restored on `{}` (or its tables were altered)",
                state.game,
                tree.name()
            )));
        }
        if state.q.iter().any(|v| !v.is_finite()) {
            return Err(Error::Values("a saved Q-value is not finite".into()));
        }
        for i in 0..tree.num_infosets() {
            let n = base.num_actions();
            base.row_mut(InfosetId(i)).copy_from_slice(&state.base[i * n..(i + 1) * n]);
        }
        base.validate(tree)?;
        let mut learner = Self::new(tree, state.seat, state.seed, state.config, Start::From(&base))?;
        learner.trainer.core.q = state.q;
        learner.trainer.core.visits = state.visits;
        learner.trainer.stats = state.stats;
        Ok(learner)
    }
}

/// A [`QLearner`] as data ([`QLearner::save`]), for checkpoints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct QLearnerState {
    game: String,
    seat: usize,
    seed: u64,
    config: QLearningConfig,
    base: Vec<f64>,
    q: Vec<f64>,
    visits: Vec<u64>,
    stats: TrainingStats,
}

impl Learner for QLearner {
    fn name(&self) -> &'static str {
        "q-learning"
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

impl ShapedLearner for QLearner {
    fn set_reward_shaping(&mut self, shaping: Option<MinimaxShaping>) {
        self.trainer.set_shaping(shaping);
    }
}

impl LearnerConfig for QLearningConfig {
    plain_config!(QLearningConfig, QLearner);
}

impl Registrable for QLearningConfig {
    const NAME: &'static str = "q-learning";
    const ABOUT: &'static str = "tabular Q-learning over information states (epsilon-greedy)";
    fn restore(tree: &GameTree, state: Value) -> Result<Box<dyn SeatLearner>> {
        Ok(Box::new(QLearner::restore(tree, state_of::<QLearnerState>(Self::NAME, state)?)?))
    }
    fn parse(fields: Value) -> std::result::Result<Self, String> {
        from_fields(fields, "learner")
    }
}

impl SeatLearner for QLearner {
    fn clone_box(&self) -> Box<dyn SeatLearner> {
        Box::new(self.clone())
    }
    fn save(&self) -> SavedLearner {
        SavedLearner::new(QLearningConfig::NAME, &QLearner::save(self))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use metagame_games::registry;

    #[test]
    fn configs_round_trip_and_reject_unknown_fields() {
        let config = QLearningConfig::default();
        let text = serde_json::to_string(&config).unwrap();
        assert_eq!(serde_json::from_str::<QLearningConfig>(&text).unwrap(), config);
        let custom: QLearningConfig = serde_json::from_str(
            r#"{"epsilon": {"kind": "linear", "start": 0.2, "end": 0.0, "episodes": 1000}}"#,
        )
        .unwrap();
        assert_eq!(custom.epsilon, Schedule::Linear { start: 0.2, end: 0.0, episodes: 1000 });
        assert_eq!(custom.batch_size, 1024);
        assert!(serde_json::from_str::<QLearningConfig>(r#"{"epsilom": 0.1}"#).is_err());
    }

    #[test]
    fn training_in_whole_batches_is_the_same_in_one_call_or_two() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let sampler = OpponentSampler::fixed(&uniform);
        let mut once = QLearner::new(&tree, 1, 3, QLearningConfig::default(), Start::Fresh).unwrap();
        once.train(&tree, &sampler, 4096).unwrap();
        let mut twice = QLearner::new(&tree, 1, 3, QLearningConfig::default(), Start::Fresh).unwrap();
        twice.train(&tree, &sampler, 2048).unwrap();
        twice.train(&tree, &sampler, 2048).unwrap();
        assert_eq!(once.values(), twice.values());
        assert_eq!(once.stats().episodes, 4096);
        assert_eq!(once.stats().batches, 4);
    }

    /// A cut keeps the whole batches trained: training on from there is training that
    /// budget in one call.
    #[test]
    fn a_cut_training_keeps_whole_batches_and_continues() {
        use std::time::{Duration, Instant};
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let sampler = OpponentSampler::fixed(&uniform);
        let config = QLearningConfig::default();
        let mut cut = QLearner::new(&tree, 1, 3, config.clone(), Start::Fresh).unwrap();
        let passed = cut.train_until(&tree, &sampler, 4096, &Cutoff::at(Instant::now()));
        assert!(matches!(passed, Err(Error::CutOff)), "{passed:?}");
        assert_eq!(cut.stats().episodes, 0);
        let started = Instant::now();
        let soon = Cutoff::at(started + Duration::from_millis(100));
        let huge = cut.train_until(&tree, &sampler, 1_000_000_000_000, &soon);
        assert!(matches!(huge, Err(Error::CutOff)), "{huge:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "stopped after {:?}", started.elapsed());
        let done = cut.stats().episodes;
        assert!(done > 0 && done.is_multiple_of(config.batch_size as u64), "{done} episodes");
        cut.train(&tree, &sampler, 2048).unwrap();
        let mut whole = QLearner::new(&tree, 1, 3, config, Start::Fresh).unwrap();
        whole.train(&tree, &sampler, done + 2048).unwrap();
        assert_eq!(cut.values(), whole.values());
        assert_eq!(cut.stats(), whole.stats());
    }
}
