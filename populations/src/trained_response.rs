//! `TrainedResponse`: an [`Oracle`] whose responses are learned from sampled episodes by a
//! learner of `metagame-learners` (Q-learning, actor-critic, or a Minimax-shaped Q-learner).

use std::borrow::Cow;
use std::time::Instant;

use metagame_games::TabularPolicy;

use metagame_learners::{
    ActorCritic, ActorCriticConfig, Learner, MinimaxConfig, MinimaxExploiter, Opponent, OpponentSampler,
    QLearner, QLearningConfig, Start, ValueTable,
};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::oracle::{Budget, Oracle, Response, ResponseRequest, TrainingStats};

/// Settings of the Minimax-shaped Q-learning oracle: the learner's and the shaping's.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct MinimaxQConfig {
    /// The Q-learner (its `episodes_per_response` and `warm_start` apply).
    pub learner: QLearningConfig,
    /// α, γ and the main agent's seat.
    pub shaping: MinimaxConfig,
}

/// Whose values shape a `minimax-q` response.
#[derive(Clone, Debug)]
enum MainAgent {
    /// A frozen main agent's values, given once.
    Fixed(ValueTable),
    /// The learned values of the last response this oracle trained for the main seat (in
    /// PSRO: the newest member of the opponent's population).
    LastResponse,
}

#[derive(Clone, Debug)]
enum Method {
    QLearning(QLearningConfig),
    ActorCritic(ActorCriticConfig),
    MinimaxQ(MinimaxQConfig, MainAgent),
}

/// An oracle that trains a fresh learner per request (or one warm started from the
/// request's policy, when its config's `warm_start` is set): the request's opponents with
/// their weights become the learner's opponent sampler, `request.seed` its seed,
/// [`Budget::Episodes`] its budget (the config's `episodes_per_response` when the budget is
/// unlimited). The response is the learner's policy (its seat's rows; the other rows are
/// uniform or the warm start's) and carries the episodes used. The request's cutoff is
/// checked before each of the learner's batches: a cut request answers
/// [`Error::CutOff`] and leaves the oracle as it was.
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, GameTree, PlayerId, TabularPolicy};
/// use metagame_learners::QLearningConfig;
/// use metagame_populations::{Budget, Oracle, PolicyId, ResponseRequest, TrainedResponse, WeightedMember};
///
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let uniform = TabularPolicy::uniform(&tree);
/// let opponents = vec![WeightedMember::new(PlayerId(1), PolicyId(0), &uniform, 1.0)];
/// let request = ResponseRequest::new(&tree, PlayerId(0), opponents, &uniform, 7)
///     .with_budget(Budget::Episodes(20_000));
/// let mut oracle = TrainedResponse::q_learning(QLearningConfig::default())?;
/// let response = oracle.respond(&request)?;
/// assert_eq!(response.stats.episodes, 20_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct TrainedResponse {
    method: Method,
    last_values: Option<ValueTable>,
    /// The values of the last response per seat (kept for [`MainAgent::LastResponse`]).
    values_by_seat: Vec<Option<ValueTable>>,
}

/// A learners error as a populations error (game errors keep their type, a cut training
/// is a cut step).
fn learner_error(e: metagame_learners::Error) -> Error {
    match e {
        metagame_learners::Error::Game(g) => Error::from(g),
        metagame_learners::Error::CutOff => Error::CutOff,
        other => Error::Learner(other),
    }
}

impl TrainedResponse {
    fn with(method: Method) -> Self {
        Self { method, last_values: None, values_by_seat: Vec::new() }
    }

    /// Responses learned by tabular Q-learning (config name `q-learning`).
    ///
    /// # Errors
    ///
    /// [`Error::Learner`] for settings out of range.
    pub fn q_learning(config: QLearningConfig) -> Result<Self> {
        config.validate().map_err(learner_error)?;
        Ok(Self::with(Method::QLearning(config)))
    }

    /// Responses learned by tabular actor-critic (config name `actor-critic`).
    ///
    /// # Errors
    ///
    /// [`Error::Learner`] for settings out of range.
    pub fn actor_critic(config: ActorCriticConfig) -> Result<Self> {
        config.validate().map_err(learner_error)?;
        Ok(Self::with(Method::ActorCritic(config)))
    }

    /// Responses learned by Q-learning with the Minimax Exploiter's reward shaping from a
    /// frozen main agent's values (config name `minimax-q`); the values are checked against
    /// the game at each request.
    ///
    /// # Errors
    ///
    /// [`Error::Learner`] for settings out of range (α or γ outside [0, 1] included).
    pub fn minimax_q(config: MinimaxQConfig, main_values: ValueTable) -> Result<Self> {
        config.learner.validate().map_err(learner_error)?;
        config.shaping.validate().map_err(learner_error)?;
        Ok(Self::with(Method::MinimaxQ(config, MainAgent::Fixed(main_values))))
    }

    /// Minimax-shaped Q-learning where the main agent is the other seat's newest response
    /// (config name `minimax-q` in PSRO): each response is shaped by the learned values of
    /// the response this oracle trained last for the main seat (the other seat of a 2-player
    /// game, or `shaping.main_seat`); in PSRO, player 1's response of an iteration is shaped
    /// by player 0's response of the same iteration, the policy it will face next. Until the
    /// main seat has a learned response (player 0 in PSRO's first iteration, and in the first
    /// iteration after a resume: the values are not checkpointed), the response is plain
    /// Q-learning.
    ///
    /// # Errors
    ///
    /// [`Error::Learner`] for settings out of range (α or γ outside [0, 1] included).
    pub fn minimax_q_against_responses(config: MinimaxQConfig) -> Result<Self> {
        config.learner.validate().map_err(learner_error)?;
        config.shaping.validate().map_err(learner_error)?;
        Ok(Self::with(Method::MinimaxQ(config, MainAgent::LastResponse)))
    }

    /// The value estimates of the learner that answered the last request, if any.
    pub fn last_values(&self) -> Option<&ValueTable> {
        self.last_values.as_ref()
    }

    /// The main agent's values for a response at `seat` of a `num_players` game, if any.
    fn main_values<'s>(
        &'s self,
        main: &'s MainAgent,
        config: &MinimaxQConfig,
        seat: usize,
        num_players: usize,
    ) -> Option<&'s ValueTable> {
        match main {
            MainAgent::Fixed(values) => Some(values),
            MainAgent::LastResponse => {
                let main_seat = config.shaping.main_seat.unwrap_or(if num_players == 2 {
                    1 - seat.min(1)
                } else {
                    usize::MAX
                });
                self.values_by_seat.get(main_seat).and_then(Option::as_ref)
            }
        }
    }

    fn train(&self, request: &ResponseRequest<'_>) -> metagame_learners::Result<(Box<dyn Learner>, u64)> {
        let (per_response, warm) = match &self.method {
            Method::QLearning(c) => (c.episodes_per_response, c.warm_start),
            Method::ActorCritic(c) => (c.episodes_per_response, c.warm_start),
            Method::MinimaxQ(c, _) => (c.learner.episodes_per_response, c.learner.warm_start),
        };
        let episodes = match request.budget {
            Budget::Unlimited => per_response,
            Budget::Episodes(n) => n,
        };
        if episodes == 0 {
            return Err(metagame_learners::Error::ZeroBudget);
        }
        // Tabular learners play the tree: the opponents and the warm start as tables of it.
        let tree = request.arena.need_tree(self.name())?;
        let warm_table = match request.warm_start {
            Some(policy) if warm => Some(TabularPolicy::of(tree, policy)?),
            _ => None,
        };
        let start = match &warm_table {
            Some(table) => Start::From(table.as_ref()),
            None => Start::Fresh,
        };
        let tables: Vec<Cow<'_, TabularPolicy>> =
            request.opponents.iter().map(|m| TabularPolicy::of(tree, m.policy)).collect::<Result<_, _>>()?;
        let (seat, seed) = (request.player.0, request.seed);
        let mut learner: Box<dyn Learner> = match &self.method {
            Method::QLearning(c) => Box::new(QLearner::new(tree, seat, seed, c.clone(), start)?),
            Method::ActorCritic(c) => Box::new(ActorCritic::new(tree, seat, seed, c.clone(), start)?),
            Method::MinimaxQ(c, main) => {
                let q = QLearner::new(tree, seat, seed, c.learner.clone(), start)?;
                match self.main_values(main, c, seat, tree.num_players()) {
                    Some(values) => Box::new(MinimaxExploiter::new(tree, q, values, &c.shaping)?),
                    None => Box::new(q),
                }
            }
        };
        let opponents = OpponentSampler::new(
            request
                .opponents
                .iter()
                .zip(&tables)
                .map(|(m, table)| Opponent::new(m.player.0, table.as_ref(), m.weight))
                .collect(),
        );
        learner.train_until(tree, &opponents, episodes, &request.cutoff)?;
        Ok((learner, episodes))
    }
}

impl Oracle for TrainedResponse {
    fn name(&self) -> &'static str {
        match self.method {
            Method::QLearning(_) => "q-learning",
            Method::ActorCritic(_) => "actor-critic",
            Method::MinimaxQ(..) => "minimax-q",
        }
    }

    fn respond(&mut self, request: &ResponseRequest<'_>) -> Result<Response> {
        let started = Instant::now();
        let (learner, episodes) = self.train(request).map_err(learner_error)?;
        let values = learner.values();
        // Only `minimax-q` against the other seat's responses reads them back.
        if matches!(self.method, Method::MinimaxQ(_, MainAgent::LastResponse)) {
            let seat = request.player.0;
            if self.values_by_seat.len() <= seat {
                self.values_by_seat.resize(seat + 1, None);
            }
            self.values_by_seat[seat] = Some(values.clone());
        }
        self.last_values = Some(values);
        Ok(Response::new(
            learner.policy(),
            TrainingStats { episodes, seconds: started.elapsed().as_secs_f64() },
        ))
    }
}
