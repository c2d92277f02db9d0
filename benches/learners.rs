//! Learner training throughput: tabular Q-learning (and actor-critic) on Leduc poker against
//! the uniform policy, on 1 and 2 rayon threads (`Throughput::Elements` = training episodes,
//! so criterion prints episodes per second). Each iteration continues training the same
//! learner for `EPISODES` episodes (batches of the default 1024, played in parallel and
//! applied in episode order).
//!
//! `cargo bench --bench learners`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use metagame::games::{GameTree, TabularPolicy, registry};
use metagame_learners::{
    ActorCritic, ActorCriticConfig, Learner, OpponentSampler, QLearner, QLearningConfig, Start,
};

const EPISODES: u64 = 1 << 18;

fn leduc_training(c: &mut Criterion) {
    let tree = GameTree::build(&registry::load("leduc_poker").expect("leduc loads")).expect("tree builds");
    let uniform = TabularPolicy::uniform(&tree);
    let sampler = OpponentSampler::fixed(&uniform);
    let mut group = c.benchmark_group("learner_training");
    group.throughput(Throughput::Elements(EPISODES));
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(500));
    group.measurement_time(std::time::Duration::from_secs(4));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool starts");
        let mut q = QLearner::new(&tree, 0, 1, QLearningConfig::default(), Start::Fresh).expect("q-learner");
        group.bench_with_input(
            BenchmarkId::new("leduc_q_learning", format!("{threads}t")),
            &threads,
            |b, _| b.iter(|| pool.install(|| q.train(&tree, &sampler, EPISODES).expect("trains"))),
        );
        let mut ac =
            ActorCritic::new(&tree, 0, 1, ActorCriticConfig::default(), Start::Fresh).expect("actor-critic");
        group.bench_with_input(
            BenchmarkId::new("leduc_actor_critic", format!("{threads}t")),
            &threads,
            |b, _| b.iter(|| pool.install(|| ac.train(&tree, &sampler, EPISODES).expect("trains"))),
        );
    }
    group.finish();
}

criterion_group!(benches, leduc_training);
criterion_main!(benches);
