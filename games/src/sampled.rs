//! `SampledEvaluator`: Monte Carlo matches on the CPU (rayon), deterministic on any thread
//! count and bit-identical to the GPU evaluator of `metagame-cuda`.

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::evaluator::{MatchEvaluator, MatchTotals, Matchup};
use crate::flat::{FlatTree, fold_block_partials, policy_cum_table};
use crate::policy::TabularPolicy;
use crate::tree::GameTree;

/// The most episodes any one count may ask for (per payoff entry, league round or learned
/// response): 10^12, about a day and a half of one matchup at the 8.5 million Leduc episodes
/// per second one core samples. Configs and the CLI refuse larger counts up front, so that
/// a typo cannot start a step that never ends.
pub const MAX_EPISODES: u64 = 1_000_000_000_000;

/// Plays sampled episodes between tabular policies on the CPU.
///
/// Episode `e` of matchup `m` draws from the Philox stream keyed by `(seed, m, e)` (see
/// [`crate::philox`]); episodes are summed in fixed blocks reduced in a fixed order (see
/// [`crate::flat`]), so the totals do not depend on the number of rayon threads and equal
/// the GPU evaluator's bit for bit. Work is spread over the current rayon pool (run inside
/// `ThreadPool::install` to choose the thread count), or over a pool of its own built per
/// call when [`SampledEvaluator::with_threads`] set a count.
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
/// let sampled = SampledEvaluator::new().evaluate(&tree, &[&uniform], &matchups, 10_000, 7)?;
/// let exact = ExactEvaluator.evaluate(&tree, &[&uniform], &matchups, 0, 0)?;
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
        let total_blocks = blocks.checked_mul(matchups.len() as u64).filter(|&b| usize::try_from(b).is_ok());
        let Some(total_blocks) = total_blocks else {
            return Err(Error::Shape(format!(
                "{episodes} episodes × {} matchups is too many",
                matchups.len()
            )));
        };
        // One work item per (matchup, block); `collect` keeps the order, and each matchup's
        // blocks are then added in block order, so scheduling cannot change the result.
        let partials: Vec<f64> = self.run(|| {
            (0..total_blocks)
                .into_par_iter()
                .map_init(
                    || vec![0.0; 2 * np],
                    |out, item| {
                        let (m, b) = (item / blocks, item % blocks);
                        let cum = &table[m as usize * s..(m as usize + 1) * s];
                        flat.block_partial(cum, seed, (first + m) as u32, b, episodes, out);
                        out.clone()
                    },
                )
                .flatten_iter()
                .collect()
        })?;
        let per_matchup = blocks as usize * 2 * np;
        Ok((0..matchups.len())
            .map(|m| {
                let part = &partials[m * per_matchup..(m + 1) * per_matchup];
                fold_block_partials(part, np, episodes)
            })
            .collect())
    }
}

impl MatchEvaluator for SampledEvaluator {
    fn name(&self) -> &'static str {
        "cpu"
    }

    fn evaluate(
        &self,
        tree: &GameTree,
        policies: &[&TabularPolicy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> Result<Vec<MatchTotals>> {
        self.evaluate_flat(tree, &FlatTree::new(tree), policies, matchups, episodes, seed)
    }
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
            let one =
                on_threads(1, || SampledEvaluator::new().evaluate(&tree, &refs, &ms, episodes, 42).unwrap());
            let own =
                SampledEvaluator::new().with_threads(3).evaluate(&tree, &refs, &ms, episodes, 42).unwrap();
            assert_eq!(one, own, "{game}");
            let two =
                on_threads(2, || SampledEvaluator::new().evaluate(&tree, &refs, &ms, episodes, 42).unwrap());
            let four =
                on_threads(4, || SampledEvaluator::new().evaluate(&tree, &refs, &ms, episodes, 42).unwrap());
            assert_eq!(one, two, "{game}");
            assert_eq!(one, four, "{game}");
            let other_seed = SampledEvaluator::new().evaluate(&tree, &refs, &ms, episodes, 43).unwrap();
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
            let exact = ExactEvaluator.evaluate(&tree, &refs, &ms, 0, 0).unwrap();
            let sampled = SampledEvaluator::new().evaluate(&tree, &refs, &ms, 200_000, 5).unwrap();
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
            .evaluate(&tree, &[&first], &[Matchup { seats: vec![0, 0] }], 1000, 1)
            .unwrap();
        let exact =
            ExactEvaluator.evaluate(&tree, &[&first], &[Matchup { seats: vec![0, 0] }], 0, 0).unwrap();
        assert_eq!(t[0].mean(), exact[0].sums);
        assert_eq!(t[0].stderr(), vec![0.0, 0.0]);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        assert!(
            SampledEvaluator::new()
                .evaluate(&tree, &[&uniform], &[Matchup { seats: vec![0, 1] }], 10, 0)
                .is_err()
        );
        assert!(
            SampledEvaluator::new()
                .evaluate(&tree, &[&uniform], &[Matchup { seats: vec![0] }], 10, 0)
                .is_err()
        );
        let mut broken = uniform.clone();
        broken.row_mut(crate::InfosetId(0)).fill(0.0);
        let err =
            SampledEvaluator::new().evaluate(&tree, &[&broken], &[Matchup { seats: vec![0, 0] }], 10, 0);
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

    #[test]
    fn zero_episodes_give_empty_totals() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let t = SampledEvaluator::new()
            .evaluate(&tree, &[&uniform], &[Matchup { seats: vec![0, 0] }], 0, 0)
            .unwrap();
        assert_eq!(t[0].episodes, 0);
        assert_eq!(t[0].sums, vec![0.0, 0.0]);
    }
}
