//! `TrainedResponse`: an [`Oracle`] whose responses are learned from sampled episodes by any
//! learner registered in `metagame-learners` (Q-learning, actor-critic, a Minimax-shaped
//! Q-learner, …), chosen by its settings.

use std::borrow::Cow;
use std::sync::Arc;
use std::time::Instant;

use metagame_games::{SeatMixture, TabularPolicy};
use metagame_networks::Mlp;

use metagame_learners::{
    LearnerChoice, LearnerConfig, MinimaxConfig, MinimaxShaping, Opponent, OpponentSampler, SeatLearner,
    Start, ValueTable,
};

use crate::error::{Error, Result};
use crate::oracle::{Budget, Oracle, Response, ResponseRequest, TrainingStats};

/// Whose values shape the responses of a learner with reward shaping (`minimax-q`).
#[derive(Clone, Debug)]
enum MainAgent {
    /// A frozen main agent's values, given once.
    Fixed(ValueTable),
    /// The learned values of the last response this oracle trained for the main seat (in
    /// PSRO: the newest member of the opponent's population).
    LastResponse,
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
/// let mut oracle = TrainedResponse::new(QLearningConfig::default())?;
/// let response = oracle.respond(&request)?;
/// assert_eq!(response.stats.episodes, 20_000);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, Debug)]
pub struct TrainedResponse {
    config: LearnerChoice,
    /// Whose values shape the responses, for a learner with reward shaping.
    main: MainAgent,
    last_values: Option<ValueTable>,
    /// The values of the last response per seat (kept for [`MainAgent::LastResponse`]).
    values_by_seat: Vec<Option<ValueTable>>,
}

/// A learners error as a populations error (game errors keep their type, a cut training
/// is a cut step).
pub(crate) fn learner_error(e: metagame_learners::Error) -> Error {
    match e {
        metagame_learners::Error::Game(g) => Error::from(g),
        metagame_learners::Error::CutOff => Error::CutOff,
        other => Error::Learner(other),
    }
}

impl TrainedResponse {
    /// Responses learned by the learner whose settings are `config` (`QLearningConfig`:
    /// config name `q-learning`, `ActorCriticConfig`: `actor-critic`, …). A learner with
    /// reward shaping (`MinimaxQConfig`, `minimax-q`) is shaped as
    /// [`against_responses`](TrainedResponse::against_responses) says.
    ///
    /// # Errors
    ///
    /// [`Error::Learner`] for settings out of range.
    pub fn new(config: impl LearnerConfig + 'static) -> Result<Self> {
        Self::against_responses(LearnerChoice::new(config))
    }

    /// Responses learned by the chosen learner; a learner with reward shaping (`minimax-q`
    /// in PSRO) is shaped by the other seat's newest response: each response by the learned
    /// values of the response this oracle trained last for the main seat (the other seat of
    /// a 2-player game, or `shaping.main_seat`); in PSRO, player 1's response of an iteration
    /// is shaped by player 0's response of the same iteration, the policy it will face next.
    /// Until the main seat has a learned response (player 0 in PSRO's first iteration, and in
    /// the first iteration after a resume: the values are not checkpointed), the response is
    /// the unshaped learner's.
    ///
    /// # Errors
    ///
    /// [`Error::Learner`] for settings out of range (α or γ outside [0, 1] included).
    pub fn against_responses(config: LearnerChoice) -> Result<Self> {
        Self::with(config, MainAgent::LastResponse)
    }

    /// Responses learned by the chosen learner, a learner with reward shaping (`minimax-q`)
    /// shaped by a frozen main agent's values (checked against the game at each request);
    /// other learners ignore them.
    ///
    /// # Errors
    ///
    /// [`Error::Learner`] for settings out of range (α or γ outside [0, 1] included).
    pub fn with_main_values(config: LearnerChoice, main_values: ValueTable) -> Result<Self> {
        Self::with(config, MainAgent::Fixed(main_values))
    }

    fn with(config: LearnerChoice, main: MainAgent) -> Result<Self> {
        config.config().validate().map_err(learner_error)?;
        Ok(Self { config, main, last_values: None, values_by_seat: Vec::new() })
    }

    /// The learner's settings.
    pub fn config(&self) -> &LearnerChoice {
        &self.config
    }

    /// The value estimates of the learner that answered the last request, if any.
    pub fn last_values(&self) -> Option<&ValueTable> {
        self.last_values.as_ref()
    }

    /// The main agent's values for a response at `seat` of a `num_players` game, if any.
    fn main_values(&self, shaping: &MinimaxConfig, seat: usize, num_players: usize) -> Option<&ValueTable> {
        match &self.main {
            MainAgent::Fixed(values) => Some(values),
            MainAgent::LastResponse => {
                let main_seat =
                    shaping.main_seat.unwrap_or(if num_players == 2 { 1 - seat.min(1) } else { usize::MAX });
                self.values_by_seat.get(main_seat).and_then(Option::as_ref)
            }
        }
    }

    fn train(&self, request: &ResponseRequest<'_>) -> metagame_learners::Result<(Box<dyn SeatLearner>, u64)> {
        let config = self.config.config();
        let (per_response, warm) = (config.episodes_per_response(), config.warm_start());
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
        let mut learner = config.build(tree, seat, seed, start)?;
        if let Some(shaping) = config.shaping()
            && let Some(values) = self.main_values(shaping, seat, tree.num_players())
        {
            learner.set_reward_shaping(Some(MinimaxShaping::new(tree, seat, values, shaping)?));
        }
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

impl TrainedResponse {
    /// For a learner that trains a network (`ppo`): trained on the request's arena (its tree
    /// not needed) against the opponents as they are, the network the response. `None` for
    /// the tabular learners.
    fn train_network(&mut self, request: &ResponseRequest<'_>, started: Instant) -> Option<Result<Response>> {
        let config = self.config.config();
        let episodes = match request.budget {
            Budget::Unlimited => config.episodes_per_response(),
            Budget::Episodes(n) => n,
        };
        // A warm start, where the settings ask for one, is a network where the previous
        // response was one.
        let warm = request
            .warm_start
            .filter(|_| config.warm_start())
            .and_then(|p| p.to_file().ok().flatten())
            .filter(|f| f.kind == "mlp")
            .and_then(|f| Mlp::from_bytes(&f.bytes).ok());
        let (seat, seed) = (request.player.0, request.seed);
        let mut learner = match config.build_network(request.arena, seat, seed, warm.as_ref())? {
            Ok(l) => l,
            Err(e) => return Some(Err(learner_error(e))),
        };
        let mut seats: Vec<SeatMixture<'_>> = Vec::new();
        for m in &request.opponents {
            match seats.iter_mut().find(|s| s.seat == m.player.0) {
                Some(s) => s.members.push((m.policy, m.weight)),
                None => seats.push(SeatMixture { seat: m.player.0, members: vec![(m.policy, m.weight)] }),
            }
        }
        let trained = learner
            .train_in(request.arena, &seats, episodes, &request.cutoff)
            .and_then(|()| learner.network())
            .map_err(learner_error);
        self.last_values = None;
        Some(trained.and_then(|mlp| {
            Response::of(
                Arc::new(mlp),
                TrainingStats {
                    episodes: learner.stats().episodes,
                    seconds: started.elapsed().as_secs_f64(),
                },
            )
        }))
    }
}

impl Oracle for TrainedResponse {
    fn name(&self) -> &'static str {
        self.config.name()
    }

    /// Only a shaped learner against the other seat's responses reads an earlier response
    /// back (its values); every other response is a fresh learner (warm started from the
    /// request's policy, not from this object).
    fn remembers_requests(&self) -> bool {
        self.config.config().shaping().is_some() && matches!(self.main, MainAgent::LastResponse)
    }

    fn respond(&mut self, request: &ResponseRequest<'_>) -> Result<Response> {
        let started = Instant::now();
        if let Some(response) = self.train_network(request, started) {
            return response;
        }
        let (learner, episodes) = self.train(request).map_err(learner_error)?;
        let values = learner.values();
        // Only a shaped learner against the other seat's responses reads them back.
        if self.config.config().shaping().is_some() && matches!(self.main, MainAgent::LastResponse) {
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
