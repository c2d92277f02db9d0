//! Sampled match evaluation throughput: Leduc poker, uniform against uniform, on 1 and 2
//! rayon threads (`Throughput::Elements` = episodes, so criterion prints episodes per second).
//!
//! `cargo bench --bench evaluation`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use metagame::games::{GameTree, MatchEvaluator, Matchup, SampledEvaluator, TabularPolicy, registry};

const EPISODES: u64 = 1 << 20;

fn leduc_uniform(c: &mut Criterion) {
    let tree = GameTree::build(&registry::load("leduc_poker").expect("leduc loads")).expect("tree builds");
    let uniform = TabularPolicy::uniform(&tree);
    let matchups = [Matchup { seats: vec![0, 0] }];
    let mut group = c.benchmark_group("sampled_episodes");
    group.throughput(Throughput::Elements(EPISODES));
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(500));
    group.measurement_time(std::time::Duration::from_secs(3));
    for threads in [1, 2] {
        let evaluator = SampledEvaluator::new().with_threads(threads);
        group.bench_with_input(
            BenchmarkId::new("leduc_uniform_cpu", format!("{threads}t")),
            &threads,
            |b, _| {
                b.iter(|| {
                    evaluator.evaluate_tables(&tree, &[&uniform], &matchups, EPISODES, 7).expect("evaluates")
                })
            },
        );
    }
    group.finish();
}

criterion_group!(benches, leduc_uniform);
criterion_main!(benches);
