//! `RolloutEvaluator`: Monte Carlo matches between policies of any kind on games of any
//! size, played many episodes at a time in lock-step so that every policy answers whole
//! batches.
//!
//! # Lock-step play
//!
//! A worker holds up to `lanes` episodes at once. Each step it moves every episode through
//! chance to its next decision, groups the decisions by the policy to act (and its seat),
//! and asks each policy once for the whole group: tensors `[b × d]` and legal masks
//! `[b × A]` in, probabilities out (a [`Policy`] call), each answer checked with
//! [`check_probabilities`]. A table on a tree answers from its rows directly. An episode that
//! ends hands its lane to the next one.
//!
//! # What is drawn, and why results do not depend on scheduling
//!
//! Episode `e` of matchup `m` draws its chance outcomes and actions from the Philox stream
//! keyed `(seed, m, e)` ([`crate::philox`]), one uniform per chance or decision node in the
//! order visited, as [`FlatTree::play_episode`](crate::flat::FlatTree::play_episode) does;
//! a seat played by a mixture draws its policy once per episode from a second stream, keyed
//! by the seed derived for [`SEAT_DRAWS`]. The returns of each block of
//! [`EPISODES_PER_BLOCK`](crate::flat::EPISODES_PER_BLOCK) episodes are summed in episode
//! order and the blocks in block order, as the tabular sampler sums them. So the totals do
//! not depend on the number of lanes or threads, provided each policy answers a decision the
//! same whatever else is in its batch (tables and the networks of `metagame-networks` do);
//! and with tables on a tree they equal [`SampledEvaluator`](crate::SampledEvaluator)'s bit
//! for bit. On a tree and on the same game's states the outcomes are the same.

use rayon::prelude::*;

use crate::arena::Arena;
use crate::board::{Board, Lane, Scratch, StateBoard, TreeBoard, decide, pick};
use crate::cutoff::Cutoff;
use crate::error::{Error, Result};
use crate::evaluator::{MAX_EPISODES, MatchEvaluator, MatchTotals, Matchup};
use crate::flat::{EPISODES_PER_BLOCK, cumulate, fold_block_partials, reduce_block};
use crate::game::{Game, PlayerId, Turn};
use crate::philox::{EpisodeStream, derive_seed};
use crate::policy::Policy;
use crate::tabular_policy::ROW_SUM_TOLERANCE;

/// The purpose ([`derive_seed`]) of the seed of the streams that draw mixture seats'
/// policies, apart from the episodes' chance and action draws so that they never shift them.
pub const SEAT_DRAWS: u32 = u32::from_be_bytes(*b"seat");

/// A matchup whose seats may be mixtures: each episode draws one policy per seat.
#[derive(Clone, Debug, PartialEq)]
pub struct MixedMatchup {
    /// Per seat, `(policy index, probability)` pairs (probabilities positive, summing to 1).
    pub seats: Vec<Vec<(usize, f64)>>,
}

impl From<&Matchup> for MixedMatchup {
    fn from(m: &Matchup) -> Self {
        Self { seats: m.seats.iter().map(|&s| vec![(s, 1.0)]).collect() }
    }
}

/// Plays batched sampled episodes between policies of any kind (see the module docs).
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, Arena, MatchEvaluator, Matchup, Policy, RolloutEvaluator, Uniform};
///
/// let game = registry::load("tic_tac_toe")?;
/// let policies: [&dyn Policy; 1] = [&Uniform];
/// let totals = RolloutEvaluator::new().evaluate(Arena::rules(&game), &policies, &[Matchup { seats: vec![0, 0] }], 2000, 7)?;
/// // Uniform play: the first player wins more often than it loses.
/// assert!(totals[0].mean()[0] > 0.0);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct RolloutEvaluator {
    lanes: usize,
    threads: Option<usize>,
}

impl Default for RolloutEvaluator {
    fn default() -> Self {
        Self { lanes: Self::DEFAULT_LANES, threads: None }
    }
}

impl RolloutEvaluator {
    /// Episodes a worker plays at once by default: batches of up to 1 024 decisions.
    pub const DEFAULT_LANES: usize = 1024;

    /// Lanes [`RolloutEvaluator::DEFAULT_LANES`], the current rayon pool.
    pub fn new() -> Self {
        Self::default()
    }
    /// Play `lanes` episodes at once per worker (at least 1); the totals do not depend on it.
    pub fn with_lanes(self, lanes: usize) -> Self {
        Self { lanes: lanes.max(1), ..self }
    }
    /// Play on a pool of `threads` threads of its own (0: the current pool); the totals do not
    /// depend on it.
    pub fn with_threads(self, threads: usize) -> Self {
        Self { threads: (threads > 0).then_some(threads), ..self }
    }

    /// Play `episodes` episodes of each matchup, seats drawn per episode from their mixtures,
    /// on the arena's tree where it has one, else on the game's states.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for matchups that do not fit the game or the policy list, or for
    /// more than [`MAX_EPISODES`]; [`Error::PolicyFailed`] naming a policy that failed or
    /// answered probabilities that are not a distribution over the legal actions;
    /// [`Error::CutOff`] once `cutoff` has passed (checked between chunks of episodes).
    pub fn evaluate_mixed(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[MixedMatchup],
        episodes: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<Vec<MatchTotals>> {
        self.evaluate_mixed_from(arena, policies, matchups, 0, episodes, seed, cutoff)
    }

    /// [`RolloutEvaluator::evaluate_mixed`] for matchups `first, first + 1, …` of a larger
    /// call: the totals that call gives them, bit for bit (a Ray task's share of an
    /// iteration's entries).
    ///
    /// # Errors
    ///
    /// As [`RolloutEvaluator::evaluate_mixed`]; [`Error::Shape`] when the matchups' places
    /// pass `u32::MAX`.
    #[allow(clippy::too_many_arguments)]
    pub fn evaluate_mixed_from(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[MixedMatchup],
        first: u32,
        episodes: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<Vec<MatchTotals>> {
        check_mixed(arena, policies, matchups, episodes)?;
        if u32::try_from(matchups.len()).ok().and_then(|n| first.checked_add(n)).is_none() {
            return Err(Error::Shape(format!("matchups {first}.. of {}: past u32::MAX", matchups.len())));
        }
        match (arena.game_tree(), arena.game_rules()) {
            (Some(tree), _) => {
                self.run(&TreeBoard { tree }, arena, policies, matchups, first, episodes, seed, cutoff)
            }
            (None, Some(game)) => {
                let board = StateBoard { root: game.new_initial_state() };
                self.run(&board, arena, policies, matchups, first, episodes, seed, cutoff)
            }
            // INVARIANT: an arena has rules or a tree.
            (None, None) => unreachable!("an arena has rules or a tree"),
        }
    }

    /// [`RolloutEvaluator::evaluate_mixed`] on the game's states even where the arena has a
    /// tree (the same outcomes as on the tree; for tests and benchmarks of the state path).
    ///
    /// # Errors
    ///
    /// As [`RolloutEvaluator::evaluate_mixed`]; [`Error::Unsupported`] for an arena without
    /// rules.
    pub fn evaluate_on_states(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[MixedMatchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        check_mixed(arena, policies, matchups, episodes)?;
        let Some(game) = arena.game_rules() else {
            return Err(Error::Unsupported(format!("{} has no states of its own to play", arena.name())));
        };
        let board = StateBoard { root: game.new_initial_state() };
        self.run(&board, arena, policies, matchups, 0, episodes, seed, &Cutoff::never())
    }

    #[allow(clippy::too_many_arguments)]
    fn run<B: Board>(
        &self,
        board: &B,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[MixedMatchup],
        first: u32,
        episodes: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<Vec<MatchTotals>> {
        let np = arena.num_players();
        let blocks = episodes.div_ceil(EPISODES_PER_BLOCK);
        let items: Vec<(u32, u64)> =
            (0..matchups.len() as u32).flat_map(|m| (0..blocks).map(move |b| (m, b))).collect();
        let setup = Setup {
            board,
            policies,
            matchups,
            episodes,
            seed,
            first,
            num_players: np,
            num_actions: arena.num_actions(),
            tensor_size: arena.tensor_shape().map_or(0, |s| s.size()),
            lanes: self.lanes,
        };
        let partials = self.on_pool(|| -> Result<Vec<f64>> {
            let chunks = chunk_items(&items, episodes, self.lanes, rayon::current_num_threads());
            let mut partials = Vec::with_capacity(items.len() * 2 * np);
            // Chunks of chunks, so that a cutoff is seen between rounds of parallel work.
            for round in chunks.chunks(rayon::current_num_threads().max(1) * 2) {
                if cutoff.passed() {
                    return Err(Error::CutOff);
                }
                let done: Vec<Result<Vec<f64>>> = round.par_iter().map(|c| setup.play_chunk(c)).collect();
                for part in done {
                    partials.extend(part?);
                }
            }
            Ok(partials)
        })??;
        let q = 2 * np;
        let per_matchup = blocks as usize * q;
        Ok((0..matchups.len())
            .map(|m| {
                let chunk = &partials[m * per_matchup..(m + 1) * per_matchup];
                fold_block_partials(chunk, np, episodes)
            })
            .collect())
    }

    fn on_pool<T: Send>(&self, job: impl FnOnce() -> T + Send) -> Result<T> {
        match self.threads {
            None => Ok(job()),
            Some(n) => {
                let pool = rayon::ThreadPoolBuilder::new()
                    .num_threads(n)
                    .build()
                    .map_err(|e| Error::Unsupported(format!("cannot start {n} threads: {e}")))?;
                Ok(pool.install(job))
            }
        }
    }
}

impl MatchEvaluator for RolloutEvaluator {
    fn name(&self) -> &'static str {
        "rollout"
    }

    fn evaluate(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        self.evaluate_until(arena, policies, matchups, episodes, seed, &Cutoff::never())
    }

    fn evaluate_until(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<Vec<MatchTotals>> {
        let mixed: Vec<MixedMatchup> = matchups.iter().map(MixedMatchup::from).collect();
        self.evaluate_mixed(arena, policies, &mixed, episodes, seed, cutoff)
    }
}

fn check_mixed(
    arena: Arena<'_>,
    policies: &[&dyn Policy],
    matchups: &[MixedMatchup],
    episodes: u64,
) -> Result<()> {
    if episodes > MAX_EPISODES {
        return Err(Error::Shape(format!(
            "{episodes} episodes per matchup: more than the cap of {MAX_EPISODES}"
        )));
    }
    if u32::try_from(matchups.len()).is_err() {
        return Err(Error::Shape(format!("{} matchups, at most {} per call", matchups.len(), u32::MAX)));
    }
    let np = arena.num_players();
    for m in matchups {
        if m.seats.len() != np {
            return Err(Error::Shape(format!(
                "a matchup of {} seats for {}, which has {np} players",
                m.seats.len(),
                arena.name()
            )));
        }
        for seat in &m.seats {
            let total: f64 = seat.iter().map(|s| s.1).sum();
            let bad = seat.is_empty()
                || seat.iter().any(|&(i, w)| i >= policies.len() || !(w > 0.0 && w.is_finite()))
                || (total - 1.0).abs() > ROW_SUM_TOLERANCE;
            if bad {
                return Err(Error::Shape(format!(
                    "a seat of {seat:?} is not a distribution over the {} policies given",
                    policies.len()
                )));
            }
        }
    }
    Ok(())
}

/// Group `(matchup, block)` items into chunks a worker plays in lock-step: enough episodes to
/// keep its lanes full, and enough chunks to keep every thread busy.
fn chunk_items(items: &[(u32, u64)], episodes: u64, lanes: usize, threads: usize) -> Vec<Vec<(u32, u64)>> {
    let total: u64 = items.iter().map(|&(_, b)| block_len(b, episodes)).sum();
    let target = (4 * lanes as u64).max(total / (4 * threads.max(1) as u64)).max(1);
    let mut chunks = Vec::new();
    let mut current = Vec::new();
    let mut size = 0;
    for &item in items {
        current.push(item);
        size += block_len(item.1, episodes);
        if size >= target {
            chunks.push(std::mem::take(&mut current));
            size = 0;
        }
    }
    if !current.is_empty() {
        chunks.push(current);
    }
    chunks
}

/// Episodes in block `block` of a matchup of `episodes` episodes.
fn block_len(block: u64, episodes: u64) -> u64 {
    (episodes - block * EPISODES_PER_BLOCK).min(EPISODES_PER_BLOCK)
}

/// What every worker of one call shares.
struct Setup<'s, B> {
    board: &'s B,
    policies: &'s [&'s dyn Policy],
    matchups: &'s [MixedMatchup],
    episodes: u64,
    seed: u64,
    /// The place of the first matchup in the whole call.
    first: u32,
    num_players: usize,
    num_actions: usize,
    tensor_size: usize,
    lanes: usize,
}

impl<B: Board> Setup<'_, B> {
    /// Play a chunk's episodes in lock-step; its items' block partials, in item order.
    fn play_chunk(&self, items: &[(u32, u64)]) -> Result<Vec<f64>> {
        let np = self.num_players;
        // The chunk's episodes in item order: (matchup, episode).
        let starts: Vec<usize> = items
            .iter()
            .scan(0usize, |acc, &(_, b)| {
                let s = *acc;
                *acc += block_len(b, self.episodes) as usize;
                Some(s)
            })
            .collect();
        let total: usize = items.iter().map(|&(_, b)| block_len(b, self.episodes) as usize).sum();
        let episode_of = |slot: usize| -> (u32, u64) {
            let i = starts.partition_point(|&s| s <= slot) - 1;
            let (m, b) = items[i];
            (m, b * EPISODES_PER_BLOCK + (slot - starts[i]) as u64)
        };
        let mut returns = vec![0.0; total * np];
        let mut lanes: Vec<Lane<B::Cursor>> = Vec::with_capacity(self.lanes.min(total));
        let mut next = 0;
        while lanes.len() < self.lanes && next < total {
            lanes.push(self.start(next, episode_of(next)));
            next += 1;
        }
        let mut scratch = Scratch::default();
        let mut live: Vec<usize> = (0..lanes.len()).collect();
        while !live.is_empty() {
            // Every live episode to its next decision; finished lanes take the next episode.
            let mut deciding = Vec::with_capacity(live.len());
            for &l in &live {
                loop {
                    let lane = &mut lanes[l];
                    match self.board.turn(&lane.at) {
                        Turn::Chance => {
                            let u = lane.stream.next_uniform();
                            self.board.chance(&mut lane.at, u, &mut scratch.cum);
                        }
                        Turn::Terminal => {
                            let row = &mut returns[lane.slot * np..(lane.slot + 1) * np];
                            self.board.returns(&lane.at, row);
                            if next == total {
                                break;
                            }
                            lanes[l] = self.start(next, episode_of(next));
                            next += 1;
                        }
                        Turn::Player(p) => {
                            deciding.push((lane.seated[p.0], p.0, l));
                            break;
                        }
                    }
                }
            }
            // One call per policy and seat, in a fixed order.
            deciding.sort_unstable();
            for group in deciding.chunk_by(|a, b| (a.0, a.1) == (b.0, b.1)) {
                let (policy, player) = (group[0].0, group[0].1);
                let who: Vec<usize> = group.iter().map(|g| g.2).collect();
                self.decide(policy, PlayerId(player), &who, &mut lanes, &mut scratch)?;
            }
            live = deciding.iter().map(|d| d.2).collect();
            live.sort_unstable();
        }
        let mut partials = vec![0.0; items.len() * 2 * np];
        for (i, out) in partials.chunks_exact_mut(2 * np).enumerate() {
            let end = starts.get(i + 1).copied().unwrap_or(total);
            reduce_block(&returns[starts[i] * np..end * np], np, out);
        }
        Ok(partials)
    }

    /// A lane at the start of episode `episode` of matchup `m`, its seats drawn.
    fn start(&self, slot: usize, (m, episode): (u32, u64)) -> Lane<B::Cursor> {
        // Streams are keyed by the matchup's place in the whole call (`first` + its place in
        // this part), so that a call split into parts plays the same episodes.
        let key = self.first + m;
        let mut seat_stream = EpisodeStream::new(derive_seed(self.seed, SEAT_DRAWS, &[]), key, episode);
        let seated = self.matchups[m as usize]
            .seats
            .iter()
            .map(|seat| {
                if seat.len() == 1 {
                    return seat[0].0;
                }
                let u = seat_stream.next_uniform();
                let mut cum = vec![0.0; seat.len()];
                cumulate(seat.iter().map(|s| s.1), &mut cum);
                seat[pick(&cum, u)].0
            })
            .collect();
        Lane { at: self.board.root(), stream: EpisodeStream::new(self.seed, key, episode), slot, seated }
    }

    /// Policy `policy` decides at seat `player` for lanes `who`.
    fn decide(
        &self,
        policy: usize,
        player: PlayerId,
        who: &[usize],
        lanes: &mut [Lane<B::Cursor>],
        s: &mut Scratch,
    ) -> Result<()> {
        let held = (self.policies[policy], policy);
        decide(self.board, held, player, who, lanes, (self.num_actions, self.tensor_size), s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Decisions;
    use crate::tabular_policy::TabularPolicy;
    use crate::tree::GameTree;
    use crate::{ExactEvaluator, Uniform, registry};
    use ndarray::ArrayViewMut2;

    fn all_matchups(players: usize, k: usize) -> Vec<Matchup> {
        (0..k.pow(players as u32))
            .map(|mut i| {
                let mut seats = vec![0; players];
                for s in seats.iter_mut().rev() {
                    *s = i % k;
                    i /= k;
                }
                Matchup { seats }
            })
            .collect()
    }

    /// Probabilities 1 : 2 : 3 … over the legal actions, from the table's rows (a table
    /// that is not seen as one, so it takes the batched path).
    struct Skewed;
    impl Policy for Skewed {
        fn probabilities(&self, d: &Decisions<'_>, mut out: ArrayViewMut2<'_, f32>) -> Result<()> {
            for (legal, mut row) in d.legal.rows().into_iter().zip(out.rows_mut()) {
                let mut k = 0.0;
                for (p, &l) in row.iter_mut().zip(legal) {
                    k += f32::from(u8::from(l));
                    *p = if l { k } else { 0.0 };
                }
                let sum: f32 = row.iter().sum();
                row.mapv_inplace(|p| p / sum);
            }
            Ok(())
        }
        fn kind(&self) -> &str {
            "skewed"
        }
    }

    #[test]
    fn states_and_tree_give_the_same_outcomes_whatever_the_lanes_and_threads() {
        for game in ["kuhn_poker", "leduc_poker", "tic_tac_toe", "kuhn_poker(players=3)"] {
            let rules = registry::load(game).unwrap();
            let tree = GameTree::build(&rules).unwrap();
            let policies: [&dyn Policy; 2] = [&Uniform, &Skewed];
            let ms: Vec<MixedMatchup> =
                all_matchups(tree.num_players(), 2).iter().map(MixedMatchup::from).collect();
            let on_tree = RolloutEvaluator::new()
                .evaluate_mixed(Arena::both(&rules, &tree), &policies, &ms, 3000, 9, &Cutoff::never())
                .unwrap();
            for (lanes, threads) in [(1, 1), (5, 2), (512, 2)] {
                let on_states = RolloutEvaluator::new()
                    .with_lanes(lanes)
                    .with_threads(threads)
                    .evaluate_on_states(Arena::both(&rules, &tree), &policies, &ms, 3000, 9)
                    .unwrap();
                assert_eq!(on_states, on_tree, "{game}, {lanes} lanes, {threads} threads");
            }
            let other_seed = RolloutEvaluator::new()
                .evaluate_mixed(Arena::both(&rules, &tree), &policies, &ms, 3000, 10, &Cutoff::never())
                .unwrap();
            assert_ne!(other_seed, on_tree, "{game}");
        }
    }

    /// Seats drawn from mixtures: the means agree with the exact value of the mixture (the
    /// weighted sum of its pure matchups' exact values), on the tree (a table and a batched
    /// policy) and on the states (the batched policies alone).
    #[test]
    fn a_call_split_into_parts_gives_the_whole_calls_totals_bit_for_bit() {
        let rules = registry::load("connect_four").unwrap();
        let policies: [&dyn Policy; 2] = [&Uniform, &Skewed];
        let ms: Vec<MixedMatchup> = all_matchups(2, 2).iter().map(MixedMatchup::from).collect();
        let eval = RolloutEvaluator::new();
        let never = Cutoff::never();
        let whole = eval.evaluate_mixed(Arena::rules(&rules), &policies, &ms, 300, 4, &never).unwrap();
        let mut parts =
            eval.evaluate_mixed_from(Arena::rules(&rules), &policies, &ms[..1], 0, 300, 4, &never).unwrap();
        parts.extend(
            eval.evaluate_mixed_from(Arena::rules(&rules), &policies, &ms[1..], 1, 300, 4, &never).unwrap(),
        );
        assert_eq!(parts, whole);
        // A part keyed as another place plays other episodes.
        let elsewhere =
            eval.evaluate_mixed_from(Arena::rules(&rules), &policies, &ms[1..2], 0, 300, 4, &never).unwrap();
        assert_ne!(elsewhere[0], whole[1]);
    }

    #[test]
    fn mixture_seats_agree_with_the_exact_values_within_four_standard_errors() {
        let rules = registry::load("leduc_poker").unwrap();
        let tree = GameTree::build(&rules).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let on_tree: [&dyn Policy; 2] = [&uniform, &Skewed];
        let exact = ExactEvaluator.evaluate(Arena::tree(&tree), &on_tree, &all_matchups(2, 2), 0, 0).unwrap();
        let (w0, w1) = ([0.25, 0.75], [0.4, 0.6]);
        let want: f64 = (0..2)
            .flat_map(|a| (0..2).map(move |b| (a, b)))
            .map(|(a, b)| w0[a] * w1[b] * exact[a * 2 + b].sums[0])
            .sum();
        let mixed = MixedMatchup { seats: vec![vec![(0, 0.25), (1, 0.75)], vec![(1, 0.6), (0, 0.4)]] };
        let on_states: [&dyn Policy; 2] = [&Uniform, &Skewed];
        for (arena, policies) in [(Arena::tree(&tree), on_tree), (Arena::rules(&rules), on_states)] {
            let t = RolloutEvaluator::new()
                .evaluate_mixed(arena, &policies, std::slice::from_ref(&mixed), 200_000, 3, &Cutoff::never())
                .unwrap();
            let (mean, se) = (t[0].mean()[0], t[0].stderr()[0]);
            assert!((mean - want).abs() <= 4.0 * se, "{}: {mean} ± {se}, exact {want}", arena.name());
        }
    }

    #[test]
    fn a_policy_that_answers_garbage_is_named() {
        struct Broken;
        impl Policy for Broken {
            fn probabilities(&self, _: &Decisions<'_>, mut out: ArrayViewMut2<'_, f32>) -> Result<()> {
                out.fill(0.5);
                Ok(())
            }
            fn kind(&self) -> &str {
                "broken"
            }
        }
        let rules = registry::load("tic_tac_toe").unwrap();
        let policies: [&dyn Policy; 2] = [&Uniform, &Broken];
        let err = RolloutEvaluator::new()
            .evaluate(Arena::rules(&rules), &policies, &[Matchup { seats: vec![0, 1] }], 10, 0)
            .unwrap_err();
        assert!(matches!(err, Error::PolicyFailed { policy: 1, .. }), "{err}");
        assert!(err.to_string().starts_with("policy 1 (broken): bad probabilities"), "{err}");
        // A table cannot play a game's states.
        let tree = GameTree::build(&rules).unwrap();
        let table = TabularPolicy::uniform(&tree);
        let policies: [&dyn Policy; 1] = [&table];
        let err = RolloutEvaluator::new()
            .evaluate(Arena::rules(&rules), &policies, &[Matchup { seats: vec![0, 0] }], 10, 0)
            .unwrap_err();
        assert!(err.to_string().contains("game tree"), "{err}");
        // Bad matchups.
        let bad = |ms: &[MixedMatchup]| {
            RolloutEvaluator::new().evaluate_mixed(
                Arena::rules(&rules),
                &[&Uniform],
                ms,
                10,
                0,
                &Cutoff::never(),
            )
        };
        assert!(bad(&[MixedMatchup { seats: vec![vec![(0, 1.0)]] }]).is_err());
        assert!(bad(&[MixedMatchup { seats: vec![vec![(0, 1.0)], vec![(1, 1.0)]] }]).is_err());
        assert!(bad(&[MixedMatchup { seats: vec![vec![(0, 0.5)], vec![(0, 1.0)]] }]).is_err());
    }
}
