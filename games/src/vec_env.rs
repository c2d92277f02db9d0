//! `VecEnv`: one seat of a game as a vectorised environment for a learner, the other seats
//! played by frozen policies drawn per episode from their mixtures (Gymnasium's `VectorEnv`
//! form: every lane always waits at a decision of the learner's seat, and a lane whose
//! episode ends starts the next one at once).
//!
//! # What is drawn, and why training does not depend on scheduling
//!
//! Episode `e` (counted from the environment's first) draws every uniform from the Philox
//! stream keyed `(seed, seat, e)` ([`crate::philox`]), in the order the episode visits its
//! nodes: chance outcomes, the opponents' actions, and whatever the learner draws through
//! [`VecEnv::next_uniform`]; each opponent seat's policy is drawn once per episode from a
//! second stream keyed by the seed derived for [`SEAT_DRAWS`]. Episodes start in lane order,
//! each lane taking the next number as its episode ends, and the opponents answer whole
//! batches of lanes. So an episode's course depends on the seed, its number and the learner's
//! choices, never on which other episodes share a batch (for policies that answer a decision
//! the same whatever else is in their batch, as tables and the crate's networks do).

use std::sync::Arc;

use crate::arena::Arena;
use crate::board::{Board, Lane, Scratch, StateBoard, TreeBoard, decide, pick};
use crate::error::{Error, Result};
use crate::flat::cumulate;
use crate::game::{ActionId, Game, PlayerId, Turn};
use crate::philox::{EpisodeStream, derive_seed};
use crate::policy::Policy;
use crate::registry::{AnyGame, AnyState};
use crate::rollout::SEAT_DRAWS;
use crate::tabular_policy::ROW_SUM_TOLERANCE;
use crate::tree::GameTree;

/// The policies that may play one opponent seat, with their probabilities.
#[derive(Clone)]
pub struct SeatMixture<'a> {
    /// The seat.
    pub seat: usize,
    /// `(policy, probability)`: probabilities positive, summing to 1.
    pub members: Vec<(&'a dyn Policy, f64)>,
}

impl std::fmt::Debug for SeatMixture<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let members: Vec<(&str, f64)> = self.members.iter().map(|(p, w)| (p.kind(), *w)).collect();
        f.debug_struct("SeatMixture").field("seat", &self.seat).field("members", &members).finish()
    }
}

/// What one step gave a lane.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct LaneStep {
    /// The learner's reward: its return when the episode ended after this action, else 0.
    pub reward: f64,
    /// True when the episode ended after this action (the lane now waits in the next
    /// episode, or is idle once the episode limit is reached).
    pub done: bool,
}

/// One seat of a game as a vectorised environment (see the module docs).
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, ActionId, Arena, SeatMixture, Uniform, VecEnv};
///
/// let game = registry::load("kuhn_poker")?;
/// let opponents = [SeatMixture { seat: 1, members: vec![(&Uniform, 1.0)] }];
/// let mut env = VecEnv::new(Arena::rules(&game), 0, &opponents, 4, 7)?;
/// let (d, a) = (env.tensor_size(), env.num_actions());
/// let (mut obs, mut legal) = (vec![0.0; 4 * d], vec![false; 4 * a]);
/// env.observe(&mut obs, &mut legal);
/// // Always pass (action 0): episodes end after one or two of the learner's turns.
/// let steps = env.step(&[ActionId(0); 4])?;
/// assert_eq!(steps.len(), 4);
/// # Ok::<(), metagame_games::Error>(())
/// ```
pub struct VecEnv<'a> {
    inner: Inner<'a>,
}

enum Inner<'a> {
    Tree(Box<Env<'a, TreeBoard<&'a GameTree>>>),
    SharedTree(Box<Env<'a, TreeBoard<Arc<GameTree>>>>),
    States(Box<Env<'a, StateBoard<AnyState>>>),
}

/// One opponent seat's mixture of shared policies: `(seat, [(policy, probability)])`.
pub type SharedSeat = (usize, Vec<(Arc<dyn Policy>, f64)>);

macro_rules! each {
    ($self:expr, $env:ident => $body:expr) => {
        match $self {
            Inner::Tree($env) => $body,
            Inner::SharedTree($env) => $body,
            Inner::States($env) => $body,
        }
    };
}

impl std::fmt::Debug for VecEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        each!(&self.inner, e => f
            .debug_struct("VecEnv")
            .field("seat", &e.c.seat)
            .field("lanes", &e.lanes.len())
            .field("episodes_started", &e.c.next_episode)
            .finish_non_exhaustive())
    }
}

impl<'a> VecEnv<'a> {
    /// `num_envs` lanes of `seat` of the arena's game (on its tree where it has one, else on
    /// its states) against `opponents` (one mixture per other seat), episodes keyed by `seed`
    /// and numbered from 0; every lane is made to wait at its first decision.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for a seat the game lacks, `num_envs` of 0, or opponents that do not
    /// give every other seat one mixture (probabilities positive, summing to 1);
    /// [`Error::PolicyFailed`] for an opponent that fails on the first decisions.
    pub fn new(
        arena: Arena<'a>,
        seat: usize,
        opponents: &[SeatMixture<'a>],
        num_envs: usize,
        seed: u64,
    ) -> Result<Self> {
        Self::starting_at(arena, seat, opponents, num_envs, seed, 0, None)
    }

    /// [`VecEnv::new`] with episodes numbered from `first` (a learner that continues
    /// training from episode `first`), starting no episode at or past `limit` (lanes then go
    /// idle: [`VecEnv::is_active`] is false).
    ///
    /// # Errors
    ///
    /// As [`VecEnv::new`].
    pub fn starting_at(
        arena: Arena<'a>,
        seat: usize,
        opponents: &[SeatMixture<'a>],
        num_envs: usize,
        seed: u64,
        first: u64,
        limit: Option<u64>,
    ) -> Result<Self> {
        let mixtures = opponents
            .iter()
            .map(|m| (m.seat, m.members.iter().map(|&(p, w)| (Held::Borrowed(p), w)).collect()))
            .collect();
        let common = Common::new(arena, seat, mixtures, seed, first, limit)?;
        let inner = match (arena.game_tree(), arena.game_rules()) {
            (Some(tree), _) => Inner::Tree(Box::new(Env::new(TreeBoard { tree }, common, num_envs)?)),
            (None, Some(game)) => Inner::States(Box::new(Env::new(
                StateBoard { root: game.new_initial_state() },
                common,
                num_envs,
            )?)),
            // INVARIANT: an arena has rules or a tree.
            (None, None) => unreachable!("an arena has rules or a tree"),
        };
        Ok(Self { inner })
    }

    /// [`VecEnv::new`] on `game`'s states, the environment sharing its opponents' policies
    /// rather than borrowing them (`opponents`: per other seat, `(seat, [(policy,
    /// probability)])`), so that it can be kept anywhere (a Python object holds one).
    /// Opponents that are tables need a tree, and do not play here.
    ///
    /// # Errors
    ///
    /// As [`VecEnv::new`].
    pub fn on_states(
        game: &AnyGame,
        seat: usize,
        opponents: &[SharedSeat],
        num_envs: usize,
        seed: u64,
    ) -> Result<VecEnv<'static>> {
        let common = Common::new(Arena::rules(game), seat, shared(opponents), seed, 0, None)?;
        let board = StateBoard { root: game.new_initial_state() };
        Ok(VecEnv { inner: Inner::States(Box::new(Env::new(board, common, num_envs)?)) })
    }

    /// [`VecEnv::on_states`] on a tree the environment shares: its opponents may be tables.
    ///
    /// # Errors
    ///
    /// As [`VecEnv::new`].
    pub fn on_tree(
        tree: Arc<GameTree>,
        seat: usize,
        opponents: &[SharedSeat],
        num_envs: usize,
        seed: u64,
    ) -> Result<VecEnv<'static>> {
        let common = Common::new(Arena::tree(&tree), seat, shared(opponents), seed, 0, None)?;
        Ok(VecEnv { inner: Inner::SharedTree(Box::new(Env::new(TreeBoard { tree }, common, num_envs)?)) })
    }

    /// Number of lanes.
    pub fn num_envs(&self) -> usize {
        each!(&self.inner, e => e.lanes.len())
    }
    /// Values in a decision's tensor (0 for a game that gives none).
    pub fn tensor_size(&self) -> usize {
        each!(&self.inner, e => e.c.shape.tensor_size)
    }
    /// Number of distinct actions (the width of a legal mask).
    pub fn num_actions(&self) -> usize {
        each!(&self.inner, e => e.c.shape.num_actions)
    }
    /// The seat the learner plays.
    pub fn seat(&self) -> usize {
        each!(&self.inner, e => e.c.seat)
    }
    /// Whether lane `lane` waits at a decision (false once the episode limit idles it).
    pub fn is_active(&self, lane: usize) -> bool {
        each!(&self.inner, e => e.active[lane])
    }
    /// True when every lane is idle.
    pub fn is_finished(&self) -> bool {
        each!(&self.inner, e => !e.active.iter().any(|&a| a))
    }
    /// The episode lane `lane` plays now.
    pub fn episode(&self, lane: usize) -> u64 {
        each!(&self.inner, e => e.episode[lane])
    }
    /// Episodes ended so far, and the sum of the learner's returns in them (episodes in
    /// which the learner never decided included).
    pub fn finished(&self) -> (u64, f64) {
        each!(&self.inner, e => (e.finished, e.return_sum))
    }

    /// Every lane's tensor (`[num_envs × tensor_size]`) and legal actions (`[num_envs ×
    /// num_actions]`) at the decision it waits at; idle lanes' rows are zeros and all false.
    ///
    /// # Panics
    ///
    /// If the slices are not of those sizes (a caller bug).
    pub fn observe(&self, tensors: &mut [f32], legal: &mut [bool]) {
        each!(&self.inner, e => e.observe(tensors, legal));
    }

    /// A uniform in [0, 1) from lane `lane`'s episode stream, for the learner's own draws
    /// (its action, its exploration), so that they too are fixed by the episode's number.
    pub fn next_uniform(&mut self, lane: usize) -> f64 {
        each!(&mut self.inner, e => e.lanes[lane].stream.next_uniform())
    }

    /// From now on, note in each lane the tensor of `seat` (another seat than the learner's)
    /// at its first decision after the learner's action, if it decides before the
    /// learner's next decision and before the episode ends ([`VecEnv::watched`]): a Minimax
    /// Exploiter's reward reads the main agent's critic there. `None` stops watching.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for the learner's own seat or a seat the game lacks.
    pub fn watch(&mut self, seat: Option<usize>) -> Result<()> {
        each!(&mut self.inner, e => e.watch(seat))
    }

    /// The watched seat's tensor in lane `lane` after the last [`step`](VecEnv::step), where
    /// it decided after the learner's action and before the lane's next learner decision
    /// or the episode's end; `None` otherwise.
    pub fn watched(&self, lane: usize) -> Option<&[f32]> {
        each!(&self.inner, e => e.watched(lane))
    }

    /// Take `actions[lane]` in every active lane (idle lanes' entries are ignored), play the
    /// opponents and chance until each lane waits at the learner's next decision, and say
    /// what each lane got.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for a slice of another length or an illegal action (the environment
    /// is then unchanged); [`Error::PolicyFailed`] naming an opponent that failed (the
    /// environment cannot be stepped on after it).
    pub fn step(&mut self, actions: &[ActionId]) -> Result<Vec<LaneStep>> {
        each!(&mut self.inner, e => e.step(actions))
    }
}

/// The sizes a step needs.
#[derive(Clone, Copy)]
struct Shape {
    num_players: usize,
    num_actions: usize,
    tensor_size: usize,
}

/// Shared mixtures as the environment holds them.
fn shared(opponents: &[SharedSeat]) -> Vec<(usize, Vec<(Held<'static>, f64)>)> {
    opponents
        .iter()
        .map(|(s, members)| (*s, members.iter().map(|(p, w)| (Held::Shared(Arc::clone(p)), *w)).collect()))
        .collect()
}

/// An opponent's policy: borrowed from the caller, or shared with it.
enum Held<'a> {
    Borrowed(&'a dyn Policy),
    Shared(Arc<dyn Policy>),
}

impl Held<'_> {
    fn policy(&self) -> &dyn Policy {
        match self {
            Held::Borrowed(p) => *p,
            Held::Shared(p) => p.as_ref(),
        }
    }
}

/// What does not depend on the board.
struct Common<'a> {
    seat: usize,
    policies: Vec<Held<'a>>,
    /// Per seat: `(policy index, probability)`; empty at the learner's seat.
    seats: Vec<Vec<(usize, f64)>>,
    seed: u64,
    shape: Shape,
    next_episode: u64,
    limit: Option<u64>,
}

impl<'a> Common<'a> {
    /// The checked setup of `seat` of the arena's game against `mixtures` (per other seat,
    /// `(seat, [(policy, probability)])`).
    fn new(
        arena: Arena<'_>,
        seat: usize,
        mixtures: Vec<(usize, Vec<(Held<'a>, f64)>)>,
        seed: u64,
        first: u64,
        limit: Option<u64>,
    ) -> Result<Self> {
        let np = arena.num_players();
        if seat >= np {
            return Err(Error::Shape(format!("seat {seat} of {}, which has {np} players", arena.name())));
        }
        let mut policies: Vec<Held<'a>> = Vec::new();
        let mut seats = vec![Vec::new(); np];
        for (s, members) in mixtures {
            if s >= np || s == seat || !seats[s].is_empty() {
                return Err(Error::Shape(format!(
                    "an opponent mixture for seat {s}: the learner plays seat {seat} of {np}, and each other seat takes one mixture"
                )));
            }
            let total: f64 = members.iter().map(|m| m.1).sum();
            let bad = members.is_empty()
                || members.iter().any(|m| !(m.1 > 0.0 && m.1.is_finite()))
                || (total - 1.0).abs() > ROW_SUM_TOLERANCE;
            if bad {
                return Err(Error::Shape(format!(
                    "the mixture of seat {s} is not a distribution (probabilities positive, summing to 1)"
                )));
            }
            for (policy, weight) in members {
                seats[s].push((policies.len(), weight));
                policies.push(policy);
            }
        }
        if let Some(missing) = (0..np).find(|&s| s != seat && seats[s].is_empty()) {
            return Err(Error::Shape(format!("no opponent mixture for seat {missing}")));
        }
        let shape = Shape {
            num_players: np,
            num_actions: arena.num_actions(),
            tensor_size: arena.tensor_shape().map_or(0, |s| s.size()),
        };
        Ok(Common { seat, policies, seats, seed, shape, next_episode: first, limit })
    }
}

struct Env<'a, B: Board> {
    board: B,
    c: Common<'a>,
    lanes: Vec<Lane<B::Cursor>>,
    episode: Vec<u64>,
    active: Vec<bool>,
    /// Whether the lane's episode has had a decision of the learner yet.
    decided: Vec<bool>,
    finished: u64,
    return_sum: f64,
    scratch: Scratch,
    returns: Vec<f64>,
    /// The watched seat ([`VecEnv::watch`]), per lane whether it is still awaited since the
    /// learner's last action and whether it was seen, and the tensors seen.
    watch: Option<usize>,
    awaiting: Vec<bool>,
    seen: Vec<bool>,
    seen_tensors: Vec<f32>,
}

impl<'a, B: Board> Env<'a, B> {
    fn new(board: B, c: Common<'a>, num_envs: usize) -> Result<Self> {
        if num_envs == 0 {
            return Err(Error::Shape("an environment of 0 lanes".into()));
        }
        let mut env = Self {
            lanes: Vec::with_capacity(num_envs),
            episode: vec![0; num_envs],
            active: vec![false; num_envs],
            decided: vec![false; num_envs],
            finished: 0,
            return_sum: 0.0,
            scratch: Scratch::default(),
            returns: vec![0.0; c.shape.num_players],
            watch: None,
            awaiting: vec![false; num_envs],
            seen: vec![false; num_envs],
            seen_tensors: Vec::new(),
            board,
            c,
        };
        for l in 0..num_envs {
            let lane = env.start_lane(l);
            env.lanes.push(lane);
        }
        let all: Vec<usize> = (0..num_envs).collect();
        let mut steps = vec![LaneStep::default(); num_envs];
        env.advance(&all, &mut steps)?;
        Ok(env)
    }

    /// A lane at the start of the next episode (active unless the limit is reached).
    fn start_lane(&mut self, l: usize) -> Lane<B::Cursor> {
        let e = self.c.next_episode;
        let open = self.c.limit.is_none_or(|limit| e < limit);
        self.active[l] = open;
        self.decided[l] = false;
        self.episode[l] = e;
        if open {
            self.c.next_episode += 1;
        }
        let seat = self.c.seat as u32;
        let mut seat_stream = EpisodeStream::new(derive_seed(self.c.seed, SEAT_DRAWS, &[]), seat, e);
        let seated = self
            .c
            .seats
            .iter()
            .map(|members| match members.len() {
                0 => usize::MAX,
                1 => members[0].0,
                n => {
                    let u = seat_stream.next_uniform();
                    let mut cum = vec![0.0; n];
                    cumulate(members.iter().map(|m| m.1), &mut cum);
                    members[pick(&cum, u)].0
                }
            })
            .collect();
        Lane { at: self.board.root(), stream: EpisodeStream::new(self.c.seed, seat, e), slot: l, seated }
    }

    fn watch(&mut self, seat: Option<usize>) -> Result<()> {
        if let Some(s) = seat
            && (s == self.c.seat || s >= self.c.shape.num_players)
        {
            return Err(Error::Shape(format!(
                "watching seat {s}: the learner plays seat {} of {}",
                self.c.seat, self.c.shape.num_players
            )));
        }
        self.watch = seat;
        self.awaiting.fill(false);
        self.seen.fill(false);
        self.seen_tensors =
            vec![0.0; if seat.is_some() { self.lanes.len() * self.c.shape.tensor_size } else { 0 }];
        Ok(())
    }

    fn watched(&self, l: usize) -> Option<&[f32]> {
        let d = self.c.shape.tensor_size;
        (self.watch.is_some() && self.seen[l]).then(|| &self.seen_tensors[l * d..(l + 1) * d])
    }

    fn observe(&self, tensors: &mut [f32], legal: &mut [bool]) {
        let Shape { num_actions: a, tensor_size: d, .. } = self.c.shape;
        assert_eq!(tensors.len(), self.lanes.len() * d, "tensors of num_envs × tensor_size");
        assert_eq!(legal.len(), self.lanes.len() * a, "legal of num_envs × num_actions");
        tensors.fill(0.0);
        legal.fill(false);
        let mut actions = Vec::new();
        let player = PlayerId(self.c.seat);
        for (l, lane) in self.lanes.iter().enumerate() {
            if !self.active[l] {
                continue;
            }
            if d > 0 {
                self.board.tensor(&lane.at, player, &mut tensors[l * d..(l + 1) * d]);
            }
            self.board.legal(&lane.at, &mut actions);
            for x in &actions {
                legal[l * a + x.0] = true;
            }
        }
    }

    fn step(&mut self, actions: &[ActionId]) -> Result<Vec<LaneStep>> {
        if actions.len() != self.lanes.len() {
            return Err(Error::Shape(format!(
                "{} actions for an environment of {} lanes",
                actions.len(),
                self.lanes.len()
            )));
        }
        let mut legal = Vec::new();
        let mut moves = Vec::with_capacity(self.lanes.len());
        for (l, &action) in actions.iter().enumerate() {
            if !self.active[l] {
                continue;
            }
            self.board.legal(&self.lanes[l].at, &mut legal);
            let Some(k) = legal.iter().position(|&x| x == action) else {
                return Err(Error::Shape(format!(
                    "action {} is not legal in lane {l} (legal: {:?})",
                    action.0,
                    legal.iter().map(|x| x.0).collect::<Vec<_>>()
                )));
            };
            moves.push((l, k, action));
        }
        let mut steps = vec![LaneStep::default(); self.lanes.len()];
        let mut moved = Vec::with_capacity(moves.len());
        if self.watch.is_some() {
            self.seen.fill(false);
        }
        for (l, k, action) in moves {
            self.board.apply(&mut self.lanes[l].at, k, action);
            self.decided[l] = true;
            self.awaiting[l] = self.watch.is_some();
            moved.push(l);
        }
        self.advance(&moved, &mut steps)?;
        Ok(steps)
    }

    /// Move lanes `which` through chance, ends of episodes and the opponents' decisions
    /// until each waits at the learner's decision or is idle.
    fn advance(&mut self, which: &[usize], steps: &mut [LaneStep]) -> Result<()> {
        let seat = self.c.seat;
        let mut live: Vec<usize> = which.to_vec();
        while !live.is_empty() {
            let mut deciding = Vec::with_capacity(live.len());
            for &l in &live {
                loop {
                    if !self.active[l] {
                        break;
                    }
                    match self.board.turn(&self.lanes[l].at) {
                        Turn::Chance => {
                            let u = self.lanes[l].stream.next_uniform();
                            self.board.chance(&mut self.lanes[l].at, u, &mut self.scratch.cum);
                        }
                        Turn::Terminal => {
                            // The episode ended before the watched seat decided.
                            self.awaiting[l] = false;
                            self.board.returns(&self.lanes[l].at, &mut self.returns);
                            let r = self.returns[seat];
                            self.finished += 1;
                            self.return_sum += r;
                            if self.decided[l] {
                                steps[l] = LaneStep { reward: r, done: true };
                            }
                            let lane = self.start_lane(l);
                            self.lanes[l] = lane;
                        }
                        Turn::Player(p) if p.0 == seat => break,
                        Turn::Player(p) => {
                            if self.awaiting[l] && self.watch == Some(p.0) {
                                let d = self.c.shape.tensor_size;
                                let out = &mut self.seen_tensors[l * d..(l + 1) * d];
                                if d > 0 {
                                    self.board.tensor(&self.lanes[l].at, p, out);
                                }
                                self.awaiting[l] = false;
                                self.seen[l] = true;
                            }
                            deciding.push((self.lanes[l].seated[p.0], p.0, l));
                            break;
                        }
                    }
                }
            }
            deciding.sort_unstable();
            for group in deciding.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
                let (policy, player) = (group[0].0, group[0].1);
                let who: Vec<usize> = group.iter().map(|g| g.2).collect();
                let Shape { num_actions, tensor_size, .. } = self.c.shape;
                decide(
                    &self.board,
                    (self.c.policies[policy].policy(), policy),
                    PlayerId(player),
                    &who,
                    &mut self.lanes,
                    (num_actions, tensor_size),
                    &mut self.scratch,
                )?;
            }
            live = deciding.iter().map(|d| d.2).collect();
            live.sort_unstable();
        }
        debug_assert!(self.c.shape.num_players == self.returns.len());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::{FirstAction, Uniform};
    use crate::tabular_policy::TabularPolicy;
    use crate::tree::GameTree;
    use crate::{Cutoff, MixedMatchup, RolloutEvaluator, registry};

    /// The learner's seat played uniformly through the environment's own draws.
    fn play_uniform(env: &mut VecEnv<'_>, steps: usize) -> Vec<(u64, LaneStep)> {
        let (n, a) = (env.num_envs(), env.num_actions());
        let mut out = Vec::new();
        let (mut obs, mut legal) = (vec![0.0; n * env.tensor_size()], vec![false; n * a]);
        for _ in 0..steps {
            if env.is_finished() {
                break;
            }
            env.observe(&mut obs, &mut legal);
            let mut actions = vec![ActionId(0); n];
            for l in (0..n).filter(|&l| env.is_active(l)).collect::<Vec<_>>() {
                let ids: Vec<usize> = (0..a).filter(|&x| legal[l * a + x]).collect();
                let u = env.next_uniform(l);
                actions[l] = ActionId(ids[((u * ids.len() as f64) as usize).min(ids.len() - 1)]);
            }
            let episodes: Vec<u64> = (0..n).map(|l| env.episode(l)).collect();
            for (l, s) in env.step(&actions).unwrap().into_iter().enumerate() {
                if s.done {
                    out.push((episodes[l], s));
                }
            }
        }
        out.sort_by_key(|x| x.0);
        out
    }

    #[test]
    fn episodes_do_not_depend_on_the_number_of_lanes_or_on_tree_or_states() {
        for game in ["kuhn_poker", "leduc_poker", "tic_tac_toe"] {
            let rules = registry::load(game).unwrap();
            let tree = GameTree::build(&rules).unwrap();
            let table = TabularPolicy::uniform(&tree);
            let on_tree = [SeatMixture { seat: 1, members: vec![(&table, 0.5), (&FirstAction, 0.5)] }];
            let on_states = [SeatMixture { seat: 1, members: vec![(&Uniform, 0.5), (&FirstAction, 0.5)] }];
            let mut reference = None;
            for (arena, lanes) in
                [(Arena::tree(&tree), 1), (Arena::tree(&tree), 7), (Arena::rules(&rules), 64)]
            {
                let opponents = if arena.game_tree().is_some() { &on_tree } else { &on_states };
                let mut env = VecEnv::starting_at(arena, 0, opponents, lanes, 3, 0, Some(300)).unwrap();
                let got = play_uniform(&mut env, 100_000);
                assert_eq!(got.len(), 300, "{game}");
                assert_eq!(env.finished().0, 300);
                match &reference {
                    None => reference = Some(got),
                    Some(r) => assert_eq!(&got, r, "{game}, {lanes} lanes"),
                }
            }
        }
    }

    /// An environment sharing its opponents (`on_states`) plays the episodes of one
    /// borrowing them, and refuses the same bad setups.
    #[test]
    fn shared_opponents_play_the_borrowed_ones_episodes() {
        let rules = registry::load("leduc_poker").unwrap();
        let borrowed = [SeatMixture { seat: 1, members: vec![(&Uniform, 0.25), (&FirstAction, 0.75)] }];
        let mut env = VecEnv::new(Arena::rules(&rules), 0, &borrowed, 5, 11).unwrap();
        let reference = play_uniform(&mut env, 400);
        let shared: Vec<SharedSeat> =
            vec![(1, vec![(Arc::new(Uniform), 0.25), (Arc::new(FirstAction), 0.75)])];
        let mut env = VecEnv::on_states(&rules, 0, &shared, 5, 11).unwrap();
        assert_eq!(play_uniform(&mut env, 400), reference);
        let tree = Arc::new(GameTree::build(&rules).unwrap());
        let table: Arc<dyn Policy> = Arc::new(TabularPolicy::uniform(&tree));
        let on_tree: Vec<SharedSeat> = vec![(1, vec![(table, 0.25), (Arc::new(FirstAction), 0.75)])];
        let mut env = VecEnv::on_tree(Arc::clone(&tree), 0, &on_tree, 5, 11).unwrap();
        assert_eq!(play_uniform(&mut env, 400), reference);
        assert!(VecEnv::on_states(&rules, 0, &shared, 0, 11).is_err());
        assert!(VecEnv::on_states(&rules, 1, &shared, 5, 11).is_err());
    }

    #[test]
    fn uniform_play_through_the_environment_matches_uniform_rollouts() {
        let rules = registry::load("leduc_poker").unwrap();
        let policies: [&dyn Policy; 1] = [&Uniform];
        let m = [MixedMatchup { seats: vec![vec![(0, 1.0)], vec![(0, 1.0)]] }];
        let exact = RolloutEvaluator::new()
            .evaluate_mixed(Arena::rules(&rules), &policies, &m, 200_000, 1, &Cutoff::never())
            .unwrap()[0]
            .mean()[1];
        let opponents = [SeatMixture { seat: 0, members: vec![(&Uniform, 1.0)] }];
        let mut env =
            VecEnv::starting_at(Arena::rules(&rules), 1, &opponents, 256, 5, 0, Some(200_000)).unwrap();
        play_uniform(&mut env, 10_000_000);
        let (n, sum) = env.finished();
        assert_eq!(n, 200_000);
        // Two independent means of the same game (returns within ±13): well within 0.1.
        assert!((sum / n as f64 - exact).abs() < 0.1, "{} vs {exact}", sum / n as f64);
    }

    #[test]
    fn bad_setups_and_illegal_actions_are_shape_errors() {
        let rules = registry::load("kuhn_poker").unwrap();
        let arena = Arena::rules(&rules);
        let ok = [SeatMixture { seat: 1, members: vec![(&Uniform as &dyn Policy, 1.0)] }];
        assert!(matches!(VecEnv::new(arena, 2, &ok, 4, 0), Err(Error::Shape(_))));
        assert!(matches!(VecEnv::new(arena, 0, &ok, 0, 0), Err(Error::Shape(_))));
        assert!(matches!(VecEnv::new(arena, 0, &[], 4, 0), Err(Error::Shape(_))));
        let half = [SeatMixture { seat: 1, members: vec![(&Uniform as &dyn Policy, 0.5)] }];
        assert!(matches!(VecEnv::new(arena, 0, &half, 4, 0), Err(Error::Shape(_))));
        let mut env = VecEnv::new(arena, 0, &ok, 2, 0).unwrap();
        assert!(matches!(env.step(&[ActionId(0)]), Err(Error::Shape(_))));
        assert!(matches!(env.step(&[ActionId(0), ActionId(7)]), Err(Error::Shape(_))));
        assert!(env.step(&[ActionId(0), ActionId(1)]).is_ok());
    }

    /// The watched seat's tensor is the one it decides on right after the learner's action;
    /// a step that ends the episode first sees nothing.
    #[test]
    fn watching_the_other_seat_sees_its_tensor_after_the_learners_action() {
        use crate::game::{Game, State};
        let game = registry::load("tic_tac_toe").unwrap();
        let opponents = [SeatMixture { seat: 1, members: vec![(&FirstAction as &dyn Policy, 1.0)] }];
        let mut env = VecEnv::new(Arena::rules(&game), 0, &opponents, 1, 5).unwrap();
        assert!(env.watch(Some(0)).is_err(), "the learner's own seat");
        env.watch(Some(1)).unwrap();
        assert_eq!(env.watched(0), None, "nothing before a step");
        // Seat 0 plays 4, 8, 2 while seat 1 answers with its first legal action (0, 1).
        let mut state = game.new_initial_state();
        let d = env.tensor_size();
        for (k, action) in [4usize, 8, 2].into_iter().enumerate() {
            let steps = env.step(&[ActionId(action)]).unwrap();
            state.apply_action(ActionId(action));
            let mut expected = vec![0.0; d];
            state.write_tensor(PlayerId(1), &mut expected);
            assert_eq!(env.watched(0), Some(&expected[..]), "move {k}");
            assert!(!steps[0].done);
            let answer = state.legal_actions()[0];
            state.apply_action(answer);
        }
        // 0 takes 6: the diagonal 2-4-6 wins before seat 1 decides.
        let steps = env.step(&[ActionId(6)]).unwrap();
        assert!(steps[0].done && steps[0].reward == 1.0);
        assert_eq!(env.watched(0), None);
        env.watch(None).unwrap();
        env.step(&[ActionId(4)]).unwrap();
        assert_eq!(env.watched(0), None);
    }
}
