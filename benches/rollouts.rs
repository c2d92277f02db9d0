//! Batched rollouts of network members: two 2×128 ReLU networks (PyTorch's initialisation,
//! seeded) playing each other by the `RolloutEvaluator`, on 1 and 2 rayon threads.
//!
//! - `leduc_2x128/{states,tree}/{1t,2t}`: Leduc poker on its states and on its tree's nodes;
//!   `Throughput::Elements` = the decisions the networks are asked, counted once beforehand
//!   (the same every run: the outcomes are keyed by seed), so criterion prints decisions per
//!   second.
//! - `connect_four_2x128/{1t,2t}`: connect four on its states; elements = episodes.
//!
//! `cargo bench --bench rollouts`

use std::sync::atomic::{AtomicU64, Ordering};

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use metagame::games::{
    Arena, Cutoff, Decisions, Game, GameTree, MixedMatchup, Policy, Result, RolloutEvaluator, registry,
};
use metagame::networks::Mlp;
use ndarray::ArrayViewMut2;

const LEDUC_EPISODES: u64 = 1 << 16;
const CONNECT_FOUR_EPISODES: u64 = 1 << 12;

/// A policy that counts the decision points it is asked.
struct Counted<'a>(&'a dyn Policy, AtomicU64);

impl Policy for Counted<'_> {
    fn probabilities(&self, decisions: &Decisions<'_>, out: ArrayViewMut2<'_, f32>) -> Result<()> {
        self.1.fetch_add(decisions.len() as u64, Ordering::Relaxed);
        self.0.probabilities(decisions, out)
    }
    fn kind(&self) -> &str {
        self.0.kind()
    }
}

fn networks<G: Game>(game: &G) -> [Mlp; 2] {
    // INVARIANT: every registered game gives a tensor shape.
    let d = game.tensor_shape().expect("a tensor").size();
    let a = game.num_distinct_actions();
    [1, 2].map(|seed| Mlp::random(&[d, 128, 128, a], seed).expect("a network"))
}

fn matchups() -> Vec<MixedMatchup> {
    vec![
        MixedMatchup { seats: vec![vec![(0, 1.0)], vec![(1, 1.0)]] },
        MixedMatchup { seats: vec![vec![(1, 1.0)], vec![(0, 1.0)]] },
    ]
}

fn leduc(c: &mut Criterion) {
    let game = registry::load("leduc_poker").expect("leduc loads");
    let tree = GameTree::build(&game).expect("tree builds");
    let nets = networks(&game);
    let counted = [Counted(&nets[0], AtomicU64::new(0)), Counted(&nets[1], AtomicU64::new(0))];
    let refs: Vec<&dyn Policy> = counted.iter().map(|p| p as &dyn Policy).collect();
    let arena = Arena::both(&game, &tree);
    let ms = matchups();
    RolloutEvaluator::new().evaluate_on_states(arena, &refs, &ms, LEDUC_EPISODES, 7).expect("plays");
    let decisions: u64 = counted.iter().map(|p| p.1.load(Ordering::Relaxed)).sum();
    let plain: Vec<&dyn Policy> = nets.iter().map(|p| p as &dyn Policy).collect();
    let mut group = c.benchmark_group("leduc_2x128");
    group.throughput(Throughput::Elements(decisions));
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(500));
    group.measurement_time(std::time::Duration::from_secs(5));
    for threads in [1, 2] {
        let rollouts = RolloutEvaluator::new().with_threads(threads);
        group.bench_with_input(BenchmarkId::new("states", format!("{threads}t")), &threads, |b, _| {
            b.iter(|| rollouts.evaluate_on_states(arena, &plain, &ms, LEDUC_EPISODES, 7).expect("plays"))
        });
        group.bench_with_input(BenchmarkId::new("tree", format!("{threads}t")), &threads, |b, _| {
            b.iter(|| {
                rollouts
                    .evaluate_mixed(Arena::tree(&tree), &plain, &ms, LEDUC_EPISODES, 7, &Cutoff::never())
                    .expect("plays")
            })
        });
    }
    group.finish();
}

fn connect_four(c: &mut Criterion) {
    let game = registry::load("connect_four").expect("connect four loads");
    let nets = networks(&game);
    let plain: Vec<&dyn Policy> = nets.iter().map(|p| p as &dyn Policy).collect();
    let ms = matchups();
    let mut group = c.benchmark_group("connect_four_2x128");
    group.throughput(Throughput::Elements(CONNECT_FOUR_EPISODES * ms.len() as u64));
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(500));
    group.measurement_time(std::time::Duration::from_secs(5));
    for threads in [1, 2] {
        let rollouts = RolloutEvaluator::new().with_threads(threads);
        group.bench_with_input(BenchmarkId::new("states", format!("{threads}t")), &threads, |b, _| {
            b.iter(|| {
                rollouts
                    .evaluate_mixed(
                        Arena::rules(&game),
                        &plain,
                        &ms,
                        CONNECT_FOUR_EPISODES,
                        7,
                        &Cutoff::never(),
                    )
                    .expect("plays")
            })
        });
    }
    group.finish();
}

criterion_group!(benches, leduc, connect_four);
criterion_main!(benches);
