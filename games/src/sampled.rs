//! `SampledEvaluator`: Monte Carlo matches on the CPU (rayon), deterministic on any thread
//! count and bit-identical to the GPU evaluator of `metagame-cuda`.

use rayon::prelude::*;

use crate::arena::Arena;
use crate::cutoff::Cutoff;
use crate::error::{Error, Result};
use crate::evaluator::{MAX_EPISODES, MatchEvaluator, MatchTotals, Matchup, tables};
use crate::flat::{FlatTree, policy_cum_table};
use crate::policy::Policy;
use crate::rollout::RolloutEvaluator;
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, NodeKind};

/// Plays sampled episodes between tabular policies on the CPU.
///
/// Episode `e` of matchup `m` draws from the Philox stream keyed by `(seed, m, e)` (see
/// [`crate::philox`]); episodes are summed in fixed blocks reduced in a fixed order (see
/// [`crate::flat`]), so the totals do not depend on the number of rayon threads and equal
/// the GPU evaluator's bit for bit. Work is spread over the current rayon pool (run inside
/// `ThreadPool::install` to choose the thread count), or over a pool of its own built per
/// call when [`SampledEvaluator::with_threads`] set a count.
///
/// Blocks are played a chunk at a time (256 per thread) and each chunk's partials added into
/// running sums per matchup, so a call holds O(matchups + threads) numbers however many
/// episodes it plays, and [`MatchEvaluator::evaluate_until`] gives up between chunks (some
/// 150 ms of Leduc episodes) once its cutoff has passed.
///
/// # Examples
///
/// ```
/// use metagame_games::{
///     registry, ExactEvaluator, GameTree, MatchEvaluator, Matchup, SampledEvaluator, TabularPolicy,
/// };
///
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let uniform = TabularPolicy::uniform(&tree);
/// let matchups = [Matchup { seats: vec![0, 0] }];
/// let sampled = SampledEvaluator::new().evaluate_tables(&tree, &[&uniform], &matchups, 10_000, 7)?;
/// let exact = ExactEvaluator.evaluate_tables(&tree, &[&uniform], &matchups, 0, 0)?;
/// assert_eq!(sampled[0].episodes, 10_000);
/// assert!((sampled[0].mean()[0] - exact[0].sums[0]).abs() < 4.0 * sampled[0].stderr()[0]);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct SampledEvaluator {
    threads: Option<usize>,
}

impl SampledEvaluator {
    /// Evaluate on the current rayon pool.
    pub fn new() -> Self {
        Self::default()
    }

    /// Evaluate on a pool of `threads` threads of its own (0: the current pool). The totals
    /// are the same whatever the count.
    pub fn with_threads(self, threads: usize) -> Self {
        Self { threads: (threads > 0).then_some(threads) }
    }

    /// Evaluate against an already flattened tree (saves the O(nodes) flattening when the
    /// same tree is evaluated many times).
    ///
    /// # Errors
    ///
    /// As [`MatchEvaluator::evaluate`]; [`Error::Shape`] when `flat` is not `tree`'s.
    pub fn evaluate_flat(
        &self,
        tree: &GameTree,
        flat: &FlatTree,
        policies: &[&TabularPolicy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        self.evaluate_flat_from(tree, flat, policies, matchups, 0, episodes, seed)
    }

    /// [`SampledEvaluator::evaluate_flat`] for matchups `first..first + matchups.len()` of a
    /// larger call: matchup `k` here draws the streams of matchup `first + k` there, so a
    /// call split into parts (across processes or machines) gives the totals of the whole
    /// call bit for bit.
    ///
    /// # Errors
    ///
    /// As [`SampledEvaluator::evaluate_flat`]; [`Error::Shape`] when the matchup indices
    /// pass `u32::MAX`.
    #[allow(clippy::too_many_arguments)]
    pub fn evaluate_flat_from(
        &self,
        tree: &GameTree,
        flat: &FlatTree,
        policies: &[&TabularPolicy],
        matchups: &[Matchup],
        first: u64,
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        self.totals(tree, flat, policies, matchups, first, episodes, seed, &Cutoff::never())
    }

    /// [`SampledEvaluator::evaluate_flat_from`], giving up with [`Error::CutOff`] once
    /// `cutoff` has passed (checked before each chunk of blocks).
    #[allow(clippy::too_many_arguments)]
    fn totals(
        &self,
        tree: &GameTree,
        flat: &FlatTree,
        policies: &[&TabularPolicy],
        matchups: &[Matchup],
        first: u64,
        episodes: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<Vec<MatchTotals>> {
        if episodes > MAX_EPISODES {
            return Err(Error::Shape(format!(
                "{episodes} episodes per matchup: more than the cap of {MAX_EPISODES}"
            )));
        }
        if first.checked_add(matchups.len() as u64).is_none_or(|end| end > u64::from(u32::MAX)) {
            return Err(Error::Shape(format!(
                "matchups {first}.. pass the {} matchups of one call",
                u32::MAX
            )));
        }
        if flat.num_nodes() != tree.num_nodes() || flat.num_sequences() != tree.num_sequences() {
            return Err(Error::Shape(format!("the flat tree is not the tree of {}", tree.name())));
        }
        if u32::try_from(matchups.len()).is_err() {
            return Err(Error::Shape(format!("{} matchups, at most {} per call", matchups.len(), u32::MAX)));
        }
        let table = policy_cum_table(tree, policies, matchups)?;
        let s = flat.num_sequences();
        let np = flat.num_players();
        let blocks = FlatTree::num_blocks(episodes);
        let Some(total_blocks) = blocks.checked_mul(matchups.len() as u64) else {
            return Err(Error::Shape(format!(
                "{episodes} episodes × {} matchups is too many",
                matchups.len()
            )));
        };
        self.run(|| {
            let per_chunk = BLOCKS_PER_THREAD * rayon::current_num_threads();
            let mut totals = RunningTotals::new(matchups.len(), np, per_chunk);
            totals.add_blocks(total_blocks, blocks, cutoff, |item, out| {
                let (m, b) = (item / blocks, item % blocks);
                let cum = &table[m as usize * s..(m as usize + 1) * s];
                flat.block_partial(cum, seed, (first + m) as u32, b, episodes, out);
            })?;
            Ok(totals.into_totals(episodes))
        })?
    }
}

/// Blocks a chunk holds per rayon thread: at about 0.6 ms a Leduc block on one core, a
/// chunk is some 150 ms of work, the granularity at which a cutoff is checked (chunks of 64
/// measured some 2% slower than one pass over all blocks on 2 cores; 256 as fast).
const BLOCKS_PER_THREAD: usize = 256;

/// The running totals of one call: per matchup, the sums of its block partials added so far
/// (in block order, from 0, as [`fold_block_partials`](crate::flat::fold_block_partials)
/// adds them), and the buffer of the chunk of blocks in flight. It holds
/// O((matchups + chunk) × players) numbers, whatever the number of episodes.
struct RunningTotals {
    num_players: usize,
    blocks_per_chunk: u64,
    /// `[matchup × 2 * num_players]`: Σ return per player, then Σ return² per player.
    sums: Vec<f64>,
    /// `[chunk × 2 * num_players]`: the partials of the chunk of blocks being played.
    chunk: Vec<f64>,
}

impl RunningTotals {
    fn new(num_matchups: usize, num_players: usize, blocks_per_chunk: usize) -> Self {
        let q = 2 * num_players;
        let blocks_per_chunk = blocks_per_chunk.max(1);
        Self {
            num_players,
            blocks_per_chunk: blocks_per_chunk as u64,
            sums: vec![0.0; num_matchups * q],
            chunk: vec![0.0; blocks_per_chunk * q],
        }
    }

    /// Numbers held (the capacity of both buffers).
    #[cfg(test)]
    fn held(&self) -> usize {
        self.sums.capacity() + self.chunk.capacity()
    }

    /// Play work items `0..total` (item `i`: block `i % blocks` of matchup `i / blocks`) a
    /// chunk at a time, `block(i, out)` writing item `i`'s partial into `out`, and add each
    /// chunk's partials in item order, so that every matchup's blocks are added in block
    /// order whatever the chunk size and thread count. Checks `cutoff` before each chunk.
    ///
    /// # Errors
    ///
    /// [`Error::CutOff`] once `cutoff` has passed; the totals are then partial.
    fn add_blocks(
        &mut self,
        total: u64,
        blocks: u64,
        cutoff: &Cutoff,
        block: impl Fn(u64, &mut [f64]) + Sync,
    ) -> Result<()> {
        let q = 2 * self.num_players;
        let mut start = 0;
        while start < total {
            if cutoff.passed() {
                return Err(Error::CutOff);
            }
            let n = self.blocks_per_chunk.min(total - start);
            let chunk = &mut self.chunk[..n as usize * q];
            chunk.par_chunks_mut(q).enumerate().for_each(|(j, out)| block(start + j as u64, out));
            for (j, partial) in chunk.chunks_exact(q).enumerate() {
                let m = ((start + j as u64) / blocks) as usize;
                for (sum, &x) in self.sums[m * q..(m + 1) * q].iter_mut().zip(partial) {
                    *sum += x;
                }
            }
            start += n;
        }
        Ok(())
    }

    /// Each matchup's totals over `episodes` episodes.
    fn into_totals(self, episodes: u64) -> Vec<MatchTotals> {
        let np = self.num_players;
        self.sums
            .chunks_exact(2 * np)
            .map(|s| MatchTotals::sampled(s[..np].to_vec(), s[np..].to_vec(), episodes))
            .collect()
    }
}

/// The `cpu` evaluator takes the fastest sampled path for the policies it is given: on a
/// tree, tables on the flat tree (policies that are not tables tabulated first, when their
/// information sets are fewer than the decisions the rollouts would ask them); otherwise the
/// [`RolloutEvaluator`] (on the tree's nodes, or on the game's states where no tree was
/// built). With tables on a tree both paths give the same totals bit for bit.
impl MatchEvaluator for SampledEvaluator {
    fn name(&self) -> &'static str {
        "cpu"
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

    /// Checks `cutoff` between chunks of 256 blocks per thread.
    fn evaluate_until(
        &self,
        arena: Arena<'_>,
        policies: &[&dyn Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
        cutoff: &Cutoff,
    ) -> Result<Vec<MatchTotals>> {
        match arena.game_tree() {
            Some(tree) if tabulating_pays(tree, policies, matchups.len() as u64 * episodes) => {
                let tables = tables(tree, policies)?;
                let refs: Vec<&TabularPolicy> = tables.iter().map(|t| t.as_ref()).collect();
                self.totals(tree, &FlatTree::new(tree), &refs, matchups, 0, episodes, seed, cutoff)
            }
            _ => {
                let rollouts = RolloutEvaluator::new().with_threads(self.threads.unwrap_or(0));
                rollouts.evaluate_until(arena, policies, matchups, episodes, seed, cutoff)
            }
        }
    }
}

/// True when tabulating the policies that are not tables over `tree` asks them fewer
/// decisions than `episodes` rollouts would (counted at uniform play's mean number of
/// decisions per episode).
fn tabulating_pays(tree: &GameTree, policies: &[&dyn Policy], episodes: u64) -> bool {
    let untabled = policies.iter().filter(|p| p.as_tabular().is_none()).count();
    if untabled == 0 {
        return true;
    }
    let tabulation = (untabled * tree.num_infosets()) as f64;
    tabulation <= episodes as f64 * mean_decisions(tree)
}

/// The expected number of decisions in an episode of uniform play on `tree`.
///
/// # Complexity
///
/// O(nodes).
fn mean_decisions(tree: &GameTree) -> f64 {
    let mut reach = vec![0.0; tree.num_nodes()];
    let mut total = 0.0;
    reach[0] = 1.0;
    for node in 0..tree.num_nodes() {
        let r = reach[node];
        let children = tree.children(node);
        match tree.node_kind(node) {
            NodeKind::Terminal => {}
            NodeKind::Chance => {
                for c in children {
                    reach[c] = r * tree.chance_prob(c);
                }
            }
            NodeKind::Decision => {
                total += r;
                let share = r / children.len() as f64;
                for c in children {
                    reach[c] = share;
                }
            }
        }
    }
    total
}

impl SampledEvaluator {
    fn run<T: Send>(&self, job: impl FnOnce() -> T + Send) -> Result<T> {
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

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::evaluator::ExactEvaluator;
    use crate::registry;

    fn random_policy(tree: &GameTree, salt: u64) -> TabularPolicy {
        let mut k = 0u64;
        TabularPolicy::from_fn(tree, |id| {
            let n = tree.legal_actions(id).len();
            let w: Vec<f64> = (0..n)
                .map(|_| {
                    k += 1;
                    let b = crate::philox::philox4x32_10([k as u32, salt as u32, 0, 0], [9, 9]);
                    0.05 + crate::philox::uniform_f64(b[0])
                })
                .collect();
            let s: f64 = w.iter().sum();
            w.iter().map(|x| x / s).collect()
        })
        .unwrap()
    }

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

    fn on_threads<T: Send>(n: usize, f: impl FnOnce() -> T + Send) -> T {
        rayon::ThreadPoolBuilder::new().num_threads(n).build().unwrap().install(f)
    }

    /// A call split into parts with their first matchup indices gives the whole call's
    /// totals: what lets payoff entries run on other processes (Ray tasks) bit for bit.
    #[test]
    fn a_split_call_equals_the_whole_call() {
        let tree = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
        let flat = FlatTree::new(&tree);
        let pols = [TabularPolicy::uniform(&tree), random_policy(&tree, 1), random_policy(&tree, 2)];
        let refs: Vec<&TabularPolicy> = pols.iter().collect();
        let ms = all_matchups(2, refs.len());
        let e = SampledEvaluator::new();
        let whole = e.evaluate_flat(&tree, &flat, &refs, &ms, 5000, 7).unwrap();
        let mut parts = Vec::new();
        for (start, chunk) in [(0, &ms[..4]), (4, &ms[4..5]), (5, &ms[5..])] {
            parts.extend(e.evaluate_flat_from(&tree, &flat, &refs, chunk, start, 5000, 7).unwrap());
        }
        assert_eq!(whole, parts);
        let shifted = e.evaluate_flat_from(&tree, &flat, &refs, &ms[1..2], 0, 5000, 7).unwrap();
        assert_ne!(shifted[0], whole[1], "the index keys the streams");
    }

    #[test]
    fn same_totals_on_one_and_two_threads() {
        for game in ["kuhn_poker", "leduc_poker", "matrix_shapleys_game", "kuhn_poker(players=3)"] {
            let tree = GameTree::build(&registry::load(game).unwrap()).unwrap();
            let pols = [TabularPolicy::uniform(&tree), random_policy(&tree, 1), random_policy(&tree, 2)];
            let refs: Vec<&TabularPolicy> = pols.iter().collect();
            let ms = all_matchups(tree.num_players(), refs.len());
            let episodes = 3 * crate::flat::EPISODES_PER_BLOCK + 123;
            let one = on_threads(1, || {
                SampledEvaluator::new().evaluate_tables(&tree, &refs, &ms, episodes, 42).unwrap()
            });
            let own = SampledEvaluator::new()
                .with_threads(3)
                .evaluate_tables(&tree, &refs, &ms, episodes, 42)
                .unwrap();
            assert_eq!(one, own, "{game}");
            let two = on_threads(2, || {
                SampledEvaluator::new().evaluate_tables(&tree, &refs, &ms, episodes, 42).unwrap()
            });
            let four = on_threads(4, || {
                SampledEvaluator::new().evaluate_tables(&tree, &refs, &ms, episodes, 42).unwrap()
            });
            assert_eq!(one, two, "{game}");
            assert_eq!(one, four, "{game}");
            let other_seed =
                SampledEvaluator::new().evaluate_tables(&tree, &refs, &ms, episodes, 43).unwrap();
            assert_ne!(one, other_seed, "{game}");
        }
    }

    #[test]
    fn sampled_means_agree_with_exact_within_four_standard_errors() {
        for game in ["kuhn_poker", "leduc_poker", "matrix_rps", "matrix_bos"] {
            let tree = GameTree::build(&registry::load(game).unwrap()).unwrap();
            let pols = [random_policy(&tree, 3), random_policy(&tree, 4)];
            let refs: Vec<&TabularPolicy> = pols.iter().collect();
            let ms = all_matchups(tree.num_players(), refs.len());
            let exact = ExactEvaluator.evaluate_tables(&tree, &refs, &ms, 0, 0).unwrap();
            let sampled = SampledEvaluator::new().evaluate_tables(&tree, &refs, &ms, 200_000, 5).unwrap();
            for (e, s) in exact.iter().zip(&sampled) {
                assert_eq!(s.episodes, 200_000);
                for p in 0..tree.num_players() {
                    let (mean, se) = (s.mean()[p], s.stderr()[p]);
                    assert!(se > 0.0 || e.sums[p] == mean, "{game}: zero stderr");
                    assert!(
                        (mean - e.sums[p]).abs() <= 4.0 * se + 1e-12,
                        "{game} player {p}: sampled {mean} ± {se}, exact {}",
                        e.sums[p]
                    );
                }
            }
        }
    }

    #[test]
    fn pure_policies_give_zero_variance_on_deterministic_games() {
        let tree = GameTree::build(&registry::load("matrix_pd").unwrap()).unwrap();
        let first = TabularPolicy::first_action(&tree);
        let t = SampledEvaluator::new()
            .evaluate_tables(&tree, &[&first], &[Matchup { seats: vec![0, 0] }], 1000, 1)
            .unwrap();
        let exact =
            ExactEvaluator.evaluate_tables(&tree, &[&first], &[Matchup { seats: vec![0, 0] }], 0, 0).unwrap();
        assert_eq!(t[0].mean(), exact[0].sums);
        assert_eq!(t[0].stderr(), vec![0.0, 0.0]);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        assert!(
            SampledEvaluator::new()
                .evaluate_tables(&tree, &[&uniform], &[Matchup { seats: vec![0, 1] }], 10, 0)
                .is_err()
        );
        assert!(
            SampledEvaluator::new()
                .evaluate_tables(&tree, &[&uniform], &[Matchup { seats: vec![0] }], 10, 0)
                .is_err()
        );
        let mut broken = uniform.clone();
        broken.row_mut(crate::InfosetId(0)).fill(0.0);
        let err = SampledEvaluator::new().evaluate_tables(
            &tree,
            &[&broken],
            &[Matchup { seats: vec![0, 0] }],
            10,
            0,
        );
        assert!(matches!(err, Err(Error::BadPolicyRow { .. })), "{err:?}");
        let leduc = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
        assert!(
            SampledEvaluator::new()
                .evaluate_flat(
                    &tree,
                    &FlatTree::new(&leduc),
                    &[&uniform],
                    &[Matchup { seats: vec![0, 0] }],
                    10,
                    0
                )
                .is_err()
        );
    }

    /// A matrix game whose payoffs are not sums of powers of two, so that a change in the
    /// order of additions shows in the totals' bits.
    fn fractional_game() -> GameTree {
        let a =
            ndarray::arr2(&[[0.1, -1.0 / 3.0, 0.7], [2.0f64.sqrt(), 0.3, -0.45], [-0.2, 1.0 / 7.0, 0.05]])
                .into_dyn();
        let b = a.mapv(|x| -1.1 * x + 0.01);
        let game = crate::NormalFormGame::new(vec![a, b]).unwrap();
        GameTree::build(&crate::MatrixGame::new("fractional", game)).unwrap()
    }

    /// Probabilities 1 : 2 : 3 … over the legal actions.
    fn skewed_policy(tree: &GameTree) -> TabularPolicy {
        TabularPolicy::from_fn(tree, |id| {
            let n = tree.legal_actions(id).len();
            let total = (n * (n + 1) / 2) as f64;
            (1..=n).map(|k| k as f64 / total).collect()
        })
        .unwrap()
    }

    /// The totals of the evaluator as it was before it summed in chunks (every block's
    /// partial collected, then folded in block order): recorded with that code, one and two
    /// threads.
    #[test]
    fn totals_are_bit_identical_to_the_evaluator_that_kept_every_block() {
        let tree = fractional_game();
        let (uniform, skewed) = (TabularPolicy::uniform(&tree), skewed_policy(&tree));
        let ms = [Matchup { seats: vec![0, 1] }, Matchup { seats: vec![1, 0] }];
        let episodes = 7 * crate::flat::EPISODES_PER_BLOCK + 99;
        let pinned: [([u64; 2], [u64; 2]); 2] = [
            ([4660696358609130176, 13884283508836591898], [4664617240535572128, 4665957178971330710]),
            ([4661923593505660966, 13885499447750466153], [4665908436492217150, 4666836193482207335]),
        ];
        for threads in [1, 2] {
            let t = SampledEvaluator::new()
                .with_threads(threads)
                .evaluate_tables(&tree, &[&uniform, &skewed], &ms, episodes, 11)
                .unwrap();
            for (m, (sums, squares)) in t.iter().zip(&pinned) {
                assert_eq!(m.sums.iter().map(|x| x.to_bits()).collect::<Vec<_>>(), sums, "{threads} threads");
                assert_eq!(
                    m.sums_of_squares.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                    squares,
                    "{threads} threads"
                );
            }
        }
    }

    /// Every chunk size gives the totals of all blocks folded at once, and what the totals
    /// hold does not grow with the number of blocks.
    #[test]
    fn running_totals_fold_in_block_order_in_bounded_memory() {
        let tree = fractional_game();
        let flat = FlatTree::new(&tree);
        let (uniform, skewed) = (TabularPolicy::uniform(&tree), skewed_policy(&tree));
        let ms =
            [Matchup { seats: vec![0, 1] }, Matchup { seats: vec![1, 1] }, Matchup { seats: vec![1, 0] }];
        let table = policy_cum_table(&tree, &[&uniform, &skewed], &ms).unwrap();
        let s = flat.num_sequences();
        let block = |episodes: u64| {
            let blocks = FlatTree::num_blocks(episodes);
            let flat = &flat;
            let table = &table;
            move |item: u64, out: &mut [f64]| {
                let (m, b) = (item / blocks, item % blocks);
                flat.block_partial(
                    &table[m as usize * s..(m as usize + 1) * s],
                    3,
                    m as u32,
                    b,
                    episodes,
                    out,
                );
            }
        };
        let mut held = Vec::new();
        for episodes in [5 * crate::flat::EPISODES_PER_BLOCK + 1, 40 * crate::flat::EPISODES_PER_BLOCK] {
            let blocks = FlatTree::num_blocks(episodes);
            let mut all = vec![0.0; blocks as usize * 4];
            let whole: Vec<MatchTotals> = (0..ms.len() as u64)
                .map(|m| {
                    for (b, out) in all.chunks_exact_mut(4).enumerate() {
                        block(episodes)(m * blocks + b as u64, out);
                    }
                    crate::flat::fold_block_partials(&all, 2, episodes)
                })
                .collect();
            for per_chunk in [1, 3, 16, 1000] {
                let mut totals = RunningTotals::new(ms.len(), 2, per_chunk);
                totals
                    .add_blocks(blocks * ms.len() as u64, blocks, &Cutoff::never(), block(episodes))
                    .unwrap();
                if per_chunk == 16 {
                    held.push(totals.held());
                }
                assert_eq!(totals.into_totals(episodes), whole, "{episodes} episodes, chunks of {per_chunk}");
            }
        }
        assert_eq!(held[0], held[1], "8 times the blocks, the same numbers held");
        assert_eq!(held[0], (ms.len() + 16) * 4);
    }

    #[test]
    fn a_passed_cutoff_stops_an_evaluation() {
        let tree = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let ms = [Matchup { seats: vec![0, 0] }];
        let e = SampledEvaluator::new();
        let cut = e.evaluate_until(
            Arena::tree(&tree),
            &[&uniform as &dyn Policy],
            &ms,
            10_000,
            1,
            &Cutoff::at(Instant::now()),
        );
        assert!(matches!(cut, Err(Error::CutOff)), "{cut:?}");
        let whole = e
            .evaluate_until(Arena::tree(&tree), &[&uniform as &dyn Policy], &ms, 10_000, 1, &Cutoff::never())
            .unwrap();
        assert_eq!(whole, e.evaluate_tables(&tree, &[&uniform], &ms, 10_000, 1).unwrap());
        // The cap's worth of episodes, cut 0.2 s in: it stops at the next chunk.
        let started = Instant::now();
        let deadline = Cutoff::at(started + Duration::from_millis(200));
        let cut =
            e.evaluate_until(Arena::tree(&tree), &[&uniform as &dyn Policy], &ms, MAX_EPISODES, 1, &deadline);
        assert!(matches!(cut, Err(Error::CutOff)), "{cut:?}");
        assert!(started.elapsed() < Duration::from_secs(5), "stopped after {:?}", started.elapsed());
    }

    /// The rollout evaluator plays tables on a tree as this sampler does, bit for bit.
    #[test]
    fn tables_on_a_tree_give_the_flat_samplers_totals_bit_for_bit() {
        for game in ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"] {
            let tree = GameTree::build(&registry::load(game).unwrap()).unwrap();
            let tables = [TabularPolicy::uniform(&tree), skewed_policy(&tree)];
            let refs: Vec<&TabularPolicy> = tables.iter().collect();
            let dyns: Vec<&dyn crate::Policy> = tables.iter().map(|t| t as &dyn crate::Policy).collect();
            let ms = all_matchups(tree.num_players(), 2);
            let episodes = 2 * crate::flat::EPISODES_PER_BLOCK + 77;
            let flat = SampledEvaluator::new()
                .evaluate_flat(&tree, &crate::flat::FlatTree::new(&tree), &refs, &ms, episodes, 5)
                .unwrap();
            for (lanes, threads) in [(1, 1), (7, 2), (1024, 3)] {
                let rollouts = crate::RolloutEvaluator::new()
                    .with_lanes(lanes)
                    .with_threads(threads)
                    .evaluate(crate::Arena::tree(&tree), &dyns, &ms, episodes, 5)
                    .unwrap();
                assert_eq!(rollouts, flat, "{game}, {lanes} lanes, {threads} threads");
            }
        }
    }

    #[test]
    fn the_cpu_evaluator_tabulates_or_rolls_out_as_it_pays() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        assert!(tabulating_pays(&tree, &[&uniform], 1));
        // 12 information sets against 2 decisions at least per episode.
        assert!(!tabulating_pays(&tree, &[&crate::Uniform], 5));
        assert!(tabulating_pays(&tree, &[&crate::Uniform], 100));
        // Kuhn: 2 decisions, then a third after pass-bet (probability 1/4 under uniform).
        assert!((mean_decisions(&tree) - 2.25).abs() < 1e-12);
    }

    #[test]
    fn zero_episodes_give_empty_totals() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let t = SampledEvaluator::new()
            .evaluate_tables(&tree, &[&uniform], &[Matchup { seats: vec![0, 0] }], 0, 0)
            .unwrap();
        assert_eq!(t[0].episodes, 0);
        assert_eq!(t[0].sums, vec![0.0, 0.0]);
    }
}
