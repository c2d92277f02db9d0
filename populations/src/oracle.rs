//! `Oracle`: produces a new policy for one player against the opponents' members, weighted
//! by their meta-probabilities. Exact best responses and trained responses (learners) answer
//! the same [`ResponseRequest`].

use std::time::Instant;

use metagame_games::{
    Arena, Cutoff, GameTree, PlayerId, Policy, TabularPolicy, TieBreak, best_response, best_response_with,
    expected_returns,
};

use crate::error::{Error, Result};
use crate::member_policy::MemberPolicy;
use crate::population::WeightedMember;

/// How much training a response may use.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Budget {
    /// No limit (exact methods, which play no episodes).
    #[default]
    Unlimited,
    /// At most this many sampled episodes.
    Episodes(u64),
}

/// What an oracle is asked: a response for `player` against `opponents`.
#[derive(Clone)]
#[non_exhaustive]
pub struct ResponseRequest<'a> {
    /// The game: its rules and its tree where one was built.
    pub arena: Arena<'a>,
    /// The seat to respond for.
    pub player: PlayerId,
    /// Every opponent member with positive weight, seat by seat (the weights of one seat sum
    /// to 1), as policies of any kind.
    pub opponents: Vec<WeightedMember<'a>>,
    /// The opponents' mixtures aggregated into one behaviour policy (realisation weighting;
    /// rows of every seat but `player`), for exact methods: present where the game's tree was
    /// built (members that are not tables tabulated over it), absent otherwise.
    pub profile: Option<&'a TabularPolicy>,
    /// The seed of any sampling, keyed by the loop with its iteration and the request.
    pub seed: u64,
    /// How much training the response may use.
    pub budget: Budget,
    /// A policy to start training from (e.g. the player's previous response), if any.
    pub warm_start: Option<&'a dyn Policy>,
    /// When to give up: an oracle that trains checks it between its batches and answers
    /// [`Error::CutOff`](crate::Error::CutOff) once it has passed (exact oracles, one pass
    /// over the tree, ignore it). Default: never.
    pub cutoff: Cutoff,
}

impl std::fmt::Debug for ResponseRequest<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResponseRequest")
            .field("game", &self.arena.name())
            .field("player", &self.player)
            .field("opponents", &self.opponents)
            .field("profile", &self.profile.is_some())
            .field("seed", &self.seed)
            .field("budget", &self.budget)
            .field("warm_start", &self.warm_start.map(Policy::kind))
            .finish()
    }
}

impl<'a> ResponseRequest<'a> {
    /// A request on a game tree with the opponents' aggregated profile, no warm start and an
    /// unlimited budget.
    pub fn new(
        tree: &'a GameTree,
        player: PlayerId,
        opponents: Vec<WeightedMember<'a>>,
        profile: &'a TabularPolicy,
        seed: u64,
    ) -> Self {
        Self::in_arena(Arena::tree(tree), player, opponents, Some(profile), seed)
    }

    /// A request on any game (`profile`: the aggregated opponents, where the tree was built),
    /// no warm start and an unlimited budget.
    pub fn in_arena(
        arena: Arena<'a>,
        player: PlayerId,
        opponents: Vec<WeightedMember<'a>>,
        profile: Option<&'a TabularPolicy>,
        seed: u64,
    ) -> Self {
        Self {
            arena,
            player,
            opponents,
            profile,
            seed,
            budget: Budget::Unlimited,
            warm_start: None,
            cutoff: Cutoff::never(),
        }
    }

    /// The game's tree, for oracles that need it (`what` names the oracle).
    ///
    /// # Errors
    ///
    /// [`Error::Game`] ([`NoTree`](metagame_games::Error::NoTree)) on a game whose tree was
    /// not built.
    pub fn tree(&self, what: &str) -> Result<&'a GameTree> {
        Ok(self.arena.need_tree(what)?)
    }

    /// The aggregated opponents, for exact oracles (`what` names the oracle).
    ///
    /// # Errors
    ///
    /// As [`ResponseRequest::tree`].
    pub fn profile(&self, what: &str) -> Result<&'a TabularPolicy> {
        match self.profile {
            Some(p) => Ok(p),
            None => Err(self.arena.need_tree(what).err().map_or_else(
                || Error::Config(format!("{what} needs the opponents' aggregated profile")),
                Error::from,
            )),
        }
    }
    /// The same request with `budget`.
    pub fn with_budget(mut self, budget: Budget) -> Self {
        self.budget = budget;
        self
    }
    /// The same request starting from `policy`.
    pub fn with_warm_start(mut self, policy: &'a dyn Policy) -> Self {
        self.warm_start = Some(policy);
        self
    }
    /// The same request giving up at `cutoff`.
    pub fn with_cutoff(mut self, cutoff: Cutoff) -> Self {
        self.cutoff = cutoff;
        self
    }
}

/// What a response cost.
#[derive(Clone, Debug, Default, PartialEq)]
#[non_exhaustive]
pub struct TrainingStats {
    /// Episodes played (0 for exact methods).
    pub episodes: u64,
    /// Wall time of the response, in seconds.
    pub seconds: f64,
}

/// An oracle's answer: the new policy and what it cost.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Response {
    /// The new policy, of any kind (a table's `player` rows are the response).
    pub policy: MemberPolicy,
    /// What training it took.
    pub stats: TrainingStats,
}

impl Response {
    /// A table with its statistics.
    pub fn new(policy: TabularPolicy, stats: TrainingStats) -> Self {
        Self { policy: MemberPolicy::from(policy), stats }
    }

    /// A policy of any kind with its statistics (see [`MemberPolicy::new`]).
    ///
    /// # Errors
    ///
    /// As [`MemberPolicy::new`]: a policy that cannot be written to a run folder.
    pub fn of(policy: std::sync::Arc<dyn Policy>, stats: TrainingStats) -> Result<Self> {
        Ok(Self { policy: MemberPolicy::new(policy)?, stats })
    }
}

/// Something that trains or computes a response for one player.
///
/// Dyn-compatible so that configs choose it at run time; `&mut self` so that a learner can
/// keep its networks, tables and optimiser state between requests.
pub trait Oracle: Send {
    /// Short stable name used in configs and provenance ("exact-br").
    fn name(&self) -> &'static str;

    /// A new policy for `request.player` against `request.opponents`.
    ///
    /// # Errors
    ///
    /// A request that does not fit the game, or a failure of the training method.
    fn respond(&mut self, request: &ResponseRequest<'_>) -> Result<Response>;

    /// True when every response is an exact best response to the request's profile, so that
    /// its gap to the best-response value is 0 by construction and need not be measured.
    /// Default false: loops measure the gap of every response.
    fn is_exact(&self) -> bool {
        false
    }

    /// True when a response may depend on the requests answered before it (state kept
    /// between requests), so that every response must come from this one object. False
    /// lets a response be computed by a copy of the oracle elsewhere (a Ray task) and equal
    /// the one this object would give. Default true: only an oracle that says so is copied.
    fn remembers_requests(&self) -> bool {
        true
    }
}

/// The exact best response on the game tree against the aggregated profile; `tie_break`
/// chooses among equally good actions (default: the lowest action, as OpenSpiel).
#[derive(Clone, Copy, Debug, Default)]
pub struct ExactBestResponse {
    /// How ties (and information sets the opponents never reach) are decided.
    pub tie_break: TieBreak,
}

impl ExactBestResponse {
    /// Ties broken against trembling opponents (see [`TieBreak::Trembling`]).
    pub fn trembling(tremble: f64) -> Self {
        Self { tie_break: TieBreak::Trembling(tremble) }
    }
}

impl Oracle for ExactBestResponse {
    fn name(&self) -> &'static str {
        match self.tie_break {
            TieBreak::LowestAction => "exact-br",
            TieBreak::Trembling(_) => "exact-br-trembling",
        }
    }

    /// Both tie rules pick a best response at every reached information set.
    fn is_exact(&self) -> bool {
        true
    }

    fn remembers_requests(&self) -> bool {
        false
    }

    fn respond(&mut self, request: &ResponseRequest<'_>) -> Result<Response> {
        let start = Instant::now();
        let (tree, profile) = (request.tree(self.name())?, request.profile(self.name())?);
        let profile = vec![profile; tree.num_players()];
        let (policy, _) = best_response_with(tree, PlayerId(request.player.0), &profile, self.tie_break)?;
        Ok(Response::new(policy, TrainingStats { episodes: 0, seconds: start.elapsed().as_secs_f64() }))
    }
}

/// How far `response` falls short of the exact best response for `player` against
/// `profile` (the aggregate of the opponents it answered, at every seat): the best
/// response's value minus the response's own. 0 for exact oracles (`exact`), whose answers
/// are best responses by construction.
///
/// # Errors
///
/// Policies that do not fit the tree.
pub fn response_gap(
    tree: &GameTree,
    player: PlayerId,
    profile: &TabularPolicy,
    response: &TabularPolicy,
    exact: bool,
) -> Result<f64> {
    if exact {
        return Ok(0.0);
    }
    let mut seats = vec![profile; tree.num_players()];
    let (_, best) = best_response(tree, player, &seats)?;
    seats[player.0] = response;
    let value = expected_returns(tree, &seats)?[player.0];
    // A learned response can only tie the best response; clamp rounding below 0.
    Ok((best - value).max(0.0))
}
