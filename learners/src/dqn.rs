//! DQN (Mnih et al. 2015) as OpenSpiel's PSRO uses it: the JAX `dqn.py` agent with the
//! settings `psro_v2_example.py` gives it (4 hidden layers of 256, batch 32, Adam at 1e-2,
//! a learning step every 10 transitions, the target network updated every 1 000 as
//! `θ' ← 0.995 θ + 0.005 θ'`), and `dqn.py`'s own defaults for the rest (a replay buffer of
//! 10 000 transitions, learning from 1 000, ε from 1 to 0.1 on an exponential schedule over
//! 10⁶ transitions, discount 1, the squared loss `½(q − y)²`). Illegal actions are masked
//! out of the greedy choices and of the targets' maxima.
//!
//! Episodes come from a [`VecEnv`] of `num_envs` lanes (OpenSpiel plays one; the lanes'
//! transitions are taken in lane order, so counters advance as one agent's would). The
//! response is the Q-network played greedily ([`Output::Greedy`], as OpenSpiel's DQN policy
//! in evaluation). Every draw is keyed by the seed: the same seed gives the same weights bit
//! for bit.

use metagame_games::philox::{EpisodeStream, derive_seed};
use metagame_games::{ActionId, Arena, Cutoff, GameTree, SeatMixture, TensorShape, VecEnv};
use metagame_networks::{Mlp, Output};
use ndarray::ArrayView2;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};
use crate::learner::{Start, TrainingStats};
use crate::learner_config::{LearnerConfig, Registrable, SeatLearner, from_fields, state_of};
use crate::network_learner::NetworkLearner;
use crate::on_tree::OnTree;
use crate::params::{Adam, Params, candle, forward, gradients, matrix, values};
use crate::saved_learner::SavedLearner;
use crate::values::ValueTable;

/// The purpose ([`derive_seed`]) of the stream that samples the replay buffer.
const REPLAY_DRAWS: u32 = u32::from_be_bytes(*b"dqnr");

/// Settings of [`Dqn`] (and of its oracle): OpenSpiel's, as the module docs say.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct DqnConfig {
    /// Episodes per trained response when the request sets no budget. Default 10 000
    /// (`psro_v2_example.py`'s `number_training_episodes`).
    pub episodes_per_response: u64,
    /// Hidden layer sizes of the Q-network. Default `[256, 256, 256, 256]`.
    pub hidden: Vec<usize>,
    /// Lanes played at once. Default 16.
    pub num_envs: usize,
    /// Transitions per gradient step. Default 32.
    pub batch_size: usize,
    /// Adam's step size. Default 1e-2.
    pub learning_rate: f64,
    /// Transitions between learning steps. Default 10.
    pub learn_every: u64,
    /// Transitions between target-network updates. Default 1 000.
    pub update_target_every: u64,
    /// The target update's weight on the online network (τ). Default 0.995.
    pub target_update_coeff: f64,
    /// Replay buffer capacity, in transitions. Default 10 000.
    pub replay_capacity: usize,
    /// Transitions in the buffer before learning starts. Default 1 000.
    pub min_buffer_to_learn: usize,
    /// Exploration ε at the start. Default 1.
    pub epsilon_start: f64,
    /// Exploration ε in the limit. Default 0.1.
    pub epsilon_end: f64,
    /// Transitions of the exponential decay `ε_end + (ε_start − ε_end)·exp(−t / d)`.
    /// Default 1 000 000.
    pub epsilon_decay_duration: u64,
    /// Discount, in [0, 1]. Default 1.
    pub discount: f64,
    /// Whether a trained response starts from the request's warm-start network (a network
    /// of the same sizes; otherwise from scratch). Default false.
    pub warm_start: bool,
}

impl Default for DqnConfig {
    fn default() -> Self {
        Self {
            episodes_per_response: 10_000,
            hidden: vec![256; 4],
            num_envs: 16,
            batch_size: 32,
            learning_rate: 1e-2,
            learn_every: 10,
            update_target_every: 1000,
            target_update_coeff: 0.995,
            replay_capacity: 10_000,
            min_buffer_to_learn: 1000,
            epsilon_start: 1.0,
            epsilon_end: 0.1,
            epsilon_decay_duration: 1_000_000,
            discount: 1.0,
            warm_start: false,
        }
    }
}

impl DqnConfig {
    /// Check every field's range.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the first field out of range.
    pub fn validate(&self) -> Result<()> {
        crate::q_learning::check_common(self.episodes_per_response, self.num_envs, self.discount)?;
        let bad = |field: &str, value: String, range: &str| {
            Err(Error::Config(format!("{field}: {value} is not in {range}")))
        };
        if self.hidden.is_empty() || self.hidden.iter().any(|&h| h == 0 || h > 4096) {
            return bad(
                "hidden",
                format!("{:?}", self.hidden),
                "1 to 4096 units per layer, at least one layer",
            );
        }
        if self.batch_size == 0 || self.batch_size > self.replay_capacity {
            return bad("batch_size", self.batch_size.to_string(), "1..=replay_capacity");
        }
        if self.replay_capacity == 0 || self.replay_capacity > 1 << 24 {
            return bad("replay_capacity", self.replay_capacity.to_string(), "1..=16777216");
        }
        for (field, v) in
            [("learn_every", self.learn_every), ("update_target_every", self.update_target_every)]
        {
            if v == 0 {
                return bad(field, v.to_string(), "1..");
            }
        }
        if !(self.learning_rate > 0.0 && self.learning_rate <= 1.0) {
            return bad("learning_rate", self.learning_rate.to_string(), "(0, 1]");
        }
        for (field, v) in [
            ("target_update_coeff", self.target_update_coeff),
            ("epsilon_start", self.epsilon_start),
            ("epsilon_end", self.epsilon_end),
        ] {
            if !(0.0..=1.0).contains(&v) {
                return bad(field, v.to_string(), "[0, 1]");
            }
        }
        if self.epsilon_end > self.epsilon_start {
            return bad("epsilon_end", self.epsilon_end.to_string(), "[0, epsilon_start]");
        }
        if self.epsilon_decay_duration == 0 {
            return bad("epsilon_decay_duration", "0".into(), "1..");
        }
        Ok(())
    }

    fn epsilon(&self, t: u64) -> f64 {
        self.epsilon_end
            + (self.epsilon_start - self.epsilon_end)
                * (-(t as f64) / self.epsilon_decay_duration as f64).exp()
    }
}

/// One transition of the learner's seat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Transition {
    obs: Vec<f32>,
    action: u32,
    reward: f32,
    /// The next decision's tensor and legal actions (empty at the end of an episode).
    next_obs: Vec<f32>,
    next_legal: Vec<bool>,
    done: bool,
}

/// A DQN learner for one seat: online and target Q-networks, Adam's moments, the replay
/// buffer, statistics.
#[derive(Clone, Debug)]
pub struct Dqn {
    state: DqnState,
}

/// Everything [`Dqn`] has learned, as saved (the replay buffer included).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DqnState {
    config: DqnConfig,
    seat: usize,
    seed: u64,
    game: Option<String>,
    q: Params,
    target: Params,
    adam: Adam,
    buffer: Vec<Transition>,
    /// Where the next transition goes once the buffer is full.
    next_slot: usize,
    /// Transitions seen (OpenSpiel's step counter).
    transitions: u64,
    learn_steps: u64,
    stats: TrainingStats,
}

impl Dqn {
    /// A fresh learner for `seat` of a game with `tensor_size`-value tensors and
    /// `num_actions` actions (the Q-network drawn with PyTorch's initialisation from `seed`,
    /// the target a copy), or from `warm` where its sizes are the config's.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for settings out of range or a game without tensors.
    pub fn new(
        config: DqnConfig,
        seat: usize,
        tensor_size: usize,
        num_actions: usize,
        seed: u64,
        warm: Option<&Mlp>,
    ) -> Result<Self> {
        config.validate()?;
        if tensor_size == 0 {
            return Err(Error::Config(
                "dqn reads the game's tensors, and this game gives none (see `metagame games`)".into(),
            ));
        }
        let mut sizes = vec![tensor_size];
        sizes.extend(&config.hidden);
        sizes.push(num_actions);
        let q = match warm {
            Some(mlp) if mlp.sizes() == sizes => Params::of(mlp),
            _ => Params::random(&sizes, derive_seed(seed, u32::from_be_bytes(*b"qnet"), &[]))?,
        };
        let state = DqnState {
            adam: Adam::new(&q, 1e-8),
            target: q.clone(),
            q,
            config,
            seat,
            seed,
            game: None,
            buffer: Vec::new(),
            next_slot: 0,
            transitions: 0,
            learn_steps: 0,
            stats: TrainingStats::default(),
        };
        Ok(Self { state })
    }

    /// A fresh learner for `seat` of `tree`'s game (see [`Dqn::new`]).
    ///
    /// # Errors
    ///
    /// As [`Dqn::new`]; [`Error::Seat`].
    pub fn on_tree(tree: &GameTree, seat: usize, seed: u64, config: DqnConfig) -> Result<Self> {
        if seat >= tree.num_players() {
            return Err(Error::Seat { seat, num_players: tree.num_players() });
        }
        let d = tree.tensor_shape().map_or(0, TensorShape::size);
        let mut dqn = Self::new(config, seat, d, tree.num_actions(), seed, None)?;
        dqn.state.game = Some(tree.name().to_string());
        Ok(dqn)
    }

    /// A learner from its saved state (checked against `tree` where it was made for one).
    ///
    /// # Errors
    ///
    /// [`Error::Values`] for a state of another game; [`Error::Network`] for weights that do
    /// not make a network.
    pub fn restore(tree: Option<&GameTree>, state: DqnState) -> Result<Self> {
        if let (Some(tree), Some(game)) = (tree, &state.game)
            && tree.name() != game
        {
            return Err(Error::Values(format!("a dqn learner of {game}, not {}", tree.name())));
        }
        if let Some(tree) = tree {
            let d = tree.tensor_shape().map_or(0, TensorShape::size);
            state.q.to_mlp()?.check_fits(d, tree.num_actions())?;
        }
        state.config.validate()?;
        Ok(Self { state })
    }

    /// Keep a transition (the oldest is replaced once the buffer is full).
    fn remember(&mut self, t: Transition) {
        let cap = self.state.config.replay_capacity;
        if self.state.buffer.len() < cap {
            self.state.buffer.push(t);
        } else {
            self.state.buffer[self.state.next_slot] = t;
        }
        self.state.next_slot = (self.state.next_slot + 1) % cap;
    }

    /// One gradient step on a batch drawn from the buffer (with replacement).
    fn learn(&mut self, d: usize, a: usize) -> Result<()> {
        let c = &self.state.config;
        let n = c.batch_size;
        let mut stream =
            EpisodeStream::new(derive_seed(self.state.seed, REPLAY_DRAWS, &[]), 0, self.state.learn_steps);
        let len = self.state.buffer.len();
        let picks: Vec<&Transition> = (0..n)
            .map(|_| &self.state.buffer[((stream.next_uniform() * len as f64) as usize).min(len - 1)])
            .collect();
        let obs: Vec<f32> = picks.iter().flat_map(|t| t.obs.iter().copied()).collect();
        let next: Vec<f32> =
            picks.iter().flat_map(|t| if t.done { vec![0.0; d] } else { t.next_obs.clone() }).collect();
        // Targets from the target network: r + γ (1 − done) max over the next legal actions.
        let target_vars = self.state.target.vars()?;
        let next_q = values(&forward(&target_vars, &matrix(&next, n, d)?)?)?;
        let targets: Vec<f32> = picks
            .iter()
            .enumerate()
            .map(|(i, t)| {
                if t.done {
                    return t.reward;
                }
                let best = (0..a)
                    .filter(|&k| t.next_legal[k])
                    .map(|k| next_q[i * a + k])
                    .fold(f32::NEG_INFINITY, f32::max);
                t.reward + c.discount as f32 * best
            })
            .collect();
        let q_vars = self.state.q.vars()?;
        let q = forward(&q_vars, &matrix(&obs, n, d)?)?;
        let actions: Vec<u32> = picks.iter().map(|t| t.action).collect();
        let act =
            candle_core::Tensor::from_slice(&actions, (n, 1), &candle_core::Device::Cpu).map_err(candle)?;
        let predicted = q.gather(&act, 1).and_then(|t| t.squeeze(1)).map_err(candle)?;
        let y = crate::params::vector(&targets)?;
        let loss = (&predicted - &y)
            .and_then(|t| t.sqr())
            .and_then(|t| t.mean_all())
            .and_then(|t| t.affine(0.5, 0.0))
            .map_err(candle)?;
        let value = loss.to_scalar::<f32>().map_err(candle)?;
        if !value.is_finite() {
            return Err(Error::Diverged(format!("the dqn loss is {value}")));
        }
        let grads = gradients(&q_vars, &loss.backward().map_err(candle)?)?;
        let lr = c.learning_rate as f32;
        let mut q = self.state.q.clone();
        self.state.adam.step(&mut q, &grads, lr);
        if q.tensors.iter().flatten().any(|w| !w.is_finite()) {
            return Err(Error::Diverged("a weight is no longer finite".into()));
        }
        self.state.q = q;
        self.state.learn_steps += 1;
        Ok(())
    }

    /// θ' ← τ θ + (1 − τ) θ'.
    fn update_target(&mut self) {
        let tau = self.state.config.target_update_coeff as f32;
        for (t, q) in self.state.target.tensors.iter_mut().zip(&self.state.q.tensors) {
            for (t, &q) in t.iter_mut().zip(q) {
                *t = tau * q + (1.0 - tau) * *t;
            }
        }
    }
}

impl NetworkLearner for Dqn {
    fn name(&self) -> &'static str {
        DqnConfig::NAME
    }

    fn seat(&self) -> usize {
        self.state.seat
    }

    fn train_in(
        &mut self,
        arena: Arena<'_>,
        opponents: &[SeatMixture<'_>],
        episodes: u64,
        cutoff: &Cutoff,
    ) -> Result<()> {
        if episodes == 0 {
            return Err(Error::ZeroBudget);
        }
        let (d, a) = (arena.tensor_shape().map_or(0, |s| s.size()), arena.num_actions());
        if d == 0 {
            return Err(Error::Config(format!(
                "dqn reads the game's tensors, and {} gives none",
                arena.name()
            )));
        }
        self.state.q.to_mlp()?.check_fits(d, a)?;
        let first = self.state.stats.episodes;
        let n = self.state.config.num_envs;
        let mut env = VecEnv::starting_at(
            arena,
            self.state.seat,
            opponents,
            n,
            self.state.seed,
            first,
            Some(first + episodes),
        )?;
        let (mut obs, mut legal) = (vec![0.0; n * d], vec![false; n * a]);
        let (mut next_obs, mut next_legal) = (vec![0.0; n * d], vec![false; n * a]);
        let mut steps = 0u64;
        env.observe(&mut obs, &mut legal);
        while !env.is_finished() {
            if cutoff.passed() {
                return Err(Error::CutOff);
            }
            let active: Vec<usize> = (0..n).filter(|&l| env.is_active(l)).collect();
            let q_values =
                self.state.q.to_mlp()?.logits(
                    ArrayView2::from_shape((n, d), &obs).map_err(|e| Error::Diverged(e.to_string()))?,
                )?;
            let eps = self.state.config.epsilon(self.state.transitions);
            let mut actions = vec![ActionId(0); n];
            for &l in &active {
                let ids: Vec<usize> = (0..a).filter(|&k| legal[l * a + k]).collect();
                let (u, v) = (env.next_uniform(l), env.next_uniform(l));
                let k = if u < eps {
                    ids[((v * ids.len() as f64) as usize).min(ids.len() - 1)]
                } else {
                    let row = q_values.row(l);
                    // The lowest action of the largest value, as jnp.argmax.
                    ids.iter().copied().fold(ids[0], |best, k| if row[k] > row[best] { k } else { best })
                };
                actions[l] = ActionId(k);
            }
            let outcomes = env.step(&actions)?;
            env.observe(&mut next_obs, &mut next_legal);
            for &l in &active {
                let done = outcomes[l].done;
                self.remember(Transition {
                    obs: obs[l * d..(l + 1) * d].to_vec(),
                    action: actions[l].0 as u32,
                    reward: outcomes[l].reward as f32,
                    next_obs: if done { Vec::new() } else { next_obs[l * d..(l + 1) * d].to_vec() },
                    next_legal: if done { Vec::new() } else { next_legal[l * a..(l + 1) * a].to_vec() },
                    done,
                });
                self.state.transitions += 1;
                steps += 1;
                let c = &self.state.config;
                let ready = self.state.buffer.len() >= c.batch_size.max(c.min_buffer_to_learn);
                if self.state.transitions.is_multiple_of(c.learn_every) && ready {
                    self.learn(d, a)?;
                }
                if self.state.transitions.is_multiple_of(self.state.config.update_target_every) {
                    self.update_target();
                }
            }
            std::mem::swap(&mut obs, &mut next_obs);
            std::mem::swap(&mut legal, &mut next_legal);
            self.state.stats.batches += 1;
        }
        let (done, return_sum) = env.finished();
        self.state.stats.episodes = first + done;
        self.state.stats.steps += steps;
        self.state.stats.return_sum += return_sum;
        self.state.stats.shaped_return_sum += return_sum;
        Ok(())
    }

    fn network(&self) -> Result<Mlp> {
        Ok(self.state.q.to_mlp()?.with_output(Output::Greedy))
    }

    fn stats(&self) -> &TrainingStats {
        &self.state.stats
    }

    fn values_on(&self, tree: &GameTree) -> Result<ValueTable> {
        let seat = self.state.seat;
        let (range, x) = crate::params::seat_tensors(tree, seat)?;
        let q = values(&forward(&self.state.q.vars()?, &x)?)?;
        Ok(ValueTable::from_action_values(tree, seat, |i, a| {
            f64::from(q[(i.0 - range.start) * tree.num_actions() + a])
        }))
    }

    fn save(&self) -> SavedLearner {
        SavedLearner::new(DqnConfig::NAME, &self.state)
    }

    fn clone_box(&self) -> Box<dyn NetworkLearner> {
        Box::new(self.clone())
    }
}

impl LearnerConfig for DqnConfig {
    fn name(&self) -> &'static str {
        Self::NAME
    }
    fn validate(&self) -> Result<()> {
        DqnConfig::validate(self)
    }
    fn to_value(&self) -> Value {
        // INVARIANT: settings are scalars and a list of sizes.
        serde_json::to_value(self).expect("dqn settings serialise")
    }
    fn episodes_per_response(&self) -> u64 {
        self.episodes_per_response
    }
    fn warm_start(&self) -> bool {
        self.warm_start
    }
    /// The episodes played at once (a league's matches are counted in them), not the
    /// transitions per gradient step (`batch_size`, OpenSpiel's name for those).
    #[allow(clippy::misnamed_getters)]
    fn batch_size(&self) -> usize {
        self.num_envs
    }
    fn build(&self, tree: &GameTree, seat: usize, seed: u64, _: Start<'_>) -> Result<Box<dyn SeatLearner>> {
        Ok(Box::new(OnTree::new(tree, Box::new(Dqn::on_tree(tree, seat, seed, self.clone())?))?))
    }
    fn trains_networks(&self) -> bool {
        true
    }
    fn build_network(
        &self,
        arena: Arena<'_>,
        seat: usize,
        seed: u64,
        warm: Option<&Mlp>,
    ) -> Option<Result<Box<dyn NetworkLearner>>> {
        let (d, np) = (arena.tensor_shape().map_or(0, |s| s.size()), arena.num_players());
        Some(if seat >= np {
            Err(Error::Seat { seat, num_players: np })
        } else {
            Dqn::new(self.clone(), seat, d, arena.num_actions(), seed, warm)
                .map(|l| Box::new(l) as Box<dyn NetworkLearner>)
        })
    }
    fn clone_box(&self) -> Box<dyn LearnerConfig> {
        Box::new(self.clone())
    }
}

impl Registrable for DqnConfig {
    const NAME: &'static str = "dqn";
    const ABOUT: &'static str = "a Q-network trained by DQN with OpenSpiel's PSRO settings on the game's tensors, played greedily, any game";
    fn restore(tree: &GameTree, state: Value) -> Result<Box<dyn SeatLearner>> {
        let dqn = Dqn::restore(Some(tree), state_of::<DqnState>(Self::NAME, state)?)?;
        Ok(Box::new(OnTree::new(tree, Box::new(dqn))?))
    }
    fn restore_network(state: Value) -> Option<Result<Box<dyn NetworkLearner>>> {
        Some(
            state_of::<DqnState>(Self::NAME, state)
                .and_then(|s| Dqn::restore(None, s))
                .map(|l| Box::new(l) as Box<dyn NetworkLearner>),
        )
    }
    fn parse(fields: Value) -> std::result::Result<Self, String> {
        from_fields(fields, "learner")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::episodes::OpponentSampler;
    use crate::learner::Learner;
    use metagame_games::{PlayerId, TabularPolicy, best_response, expected_returns, registry};

    fn trained(game: &str, seat: usize, episodes: u64, config: DqnConfig) -> (f64, OnTree) {
        let tree = GameTree::build(&registry::load(game).unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let mut learner =
            OnTree::new(&tree, Box::new(Dqn::on_tree(&tree, seat, 3, config).unwrap())).unwrap();
        learner.train(&tree, &OpponentSampler::fixed(&uniform), episodes).unwrap();
        let mut seats = vec![&uniform; tree.num_players()];
        let (_, best) = best_response(&tree, PlayerId(seat), &seats).unwrap();
        let policy = learner.policy();
        seats[seat] = &policy;
        (best - expected_returns(&tree, &seats).unwrap()[seat], learner)
    }

    /// Against uniform play on Kuhn, OpenSpiel's settings learn a near best response in its
    /// budget of 10 000 episodes; the policy is greedy.
    #[test]
    fn dqn_learns_a_near_best_response_and_plays_greedily() {
        let (gap, learner) = trained("kuhn_poker", 1, 10_000, DqnConfig::default());
        assert!(gap < 0.05, "kuhn gap {gap}");
        assert!(learner.policy().as_slice().iter().all(|&p| p == 0.0 || p == 1.0 || (p - 0.5).abs() < 1e-12));
        assert_eq!(learner.network().network().unwrap().output(), Output::Greedy);
    }

    #[test]
    fn the_same_seed_gives_the_same_weights() {
        let small = DqnConfig { hidden: vec![32], ..DqnConfig::default() };
        let a = trained("leduc_poker", 0, 2000, small.clone()).1.save();
        let b = trained("leduc_poker", 0, 2000, small).1.save();
        assert_eq!(a, b);
    }

    #[test]
    fn settings_out_of_range_name_the_field() {
        for (bad, field) in [
            (DqnConfig { hidden: vec![0], ..DqnConfig::default() }, "hidden"),
            (DqnConfig { batch_size: 0, ..DqnConfig::default() }, "batch_size"),
            (DqnConfig { learn_every: 0, ..DqnConfig::default() }, "learn_every"),
            (DqnConfig { epsilon_end: 2.0, ..DqnConfig::default() }, "epsilon_end"),
        ] {
            assert!(matches!(bad.validate(), Err(Error::Config(m)) if m.contains(field)), "{field}");
        }
    }
}
