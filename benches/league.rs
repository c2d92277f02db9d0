//! League training throughput on Leduc poker: rounds of the default league (one main agent,
//! one main exploiter, one league exploiter; 10 000 episodes per agent per round, so 30 000
//! training episodes per round) on 1 and 2 rayon threads. `Throughput::Elements` = training
//! episodes, so criterion prints episodes per second; each iteration is one round, including
//! opponent choice, exact match results, snapshots and the main agent's exact NashConv.
//!
//!
//! `batch_elo_fit`: the batch-Elo fit a long league runs at each evaluation point, on a
//! members × members score matrix of a league that has grown to that many members (scores
//! from a hidden skill per member; the bench prints the fit's iterations).
//!
//! `connect_four_network_rounds`: rounds of a league of PPO networks on connect four (the
//! example config's league: 1 024 episodes per agent and round, networks of 64 × 64 hidden
//! units, a Minimax main exploiter, the league exploiter matched by Elo), on 2 threads; the
//! bench prints the learners' split of one round (rollouts, gradients, optimiser).
//!
//! `cargo bench --bench league`

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use metagame::games::{GameTree, registry};
use metagame::populations::{League, LeagueConfig};

fn leduc_league(c: &mut Criterion) {
    let tree = GameTree::build(&registry::load("leduc_poker").expect("leduc loads")).expect("tree builds");
    let config = LeagueConfig::builder()
        .episodes_per_round(10_000)
        .snapshot_min_episodes(30_000)
        .snapshot_max_episodes(60_000)
        .build()
        .expect("valid settings");
    let mut group = c.benchmark_group("league_rounds");
    group.throughput(Throughput::Elements(3 * config.episodes_per_round()));
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(500));
    group.measurement_time(std::time::Duration::from_secs(4));
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("pool starts");
        let mut league = League::new(&tree, config.clone()).expect("league starts");
        group.bench_with_input(BenchmarkId::new("leduc", format!("{threads}t")), &threads, |b, _| {
            b.iter(|| pool.install(|| league.step().map(|_| ()).expect("a round")))
        });
    }
    group.finish();
}

fn batch_elo_fit(c: &mut Criterion) {
    use metagame::populations::rating::{BatchElo, BatchEloConfig};
    let mut group = c.benchmark_group("batch_elo_fit");
    group.sample_size(10);
    for n in [500usize, 1500] {
        // Member i's skill rises with i (later snapshots are stronger), jittered.
        let skill: Vec<f64> =
            (0..n).map(|i| i as f64 / n as f64 + 0.1 * ((i * 7919 % 101) as f64 / 101.0)).collect();
        let scores = ndarray::Array2::from_shape_fn((n, n), |(i, j)| {
            if i == j { 0.0 } else { 1.0 / (1.0 + (-(skill[i] - skill[j])).exp()) }
        });
        let config = BatchEloConfig::default();
        let fit = BatchElo::fit(&config, scores.view(), None).expect("a fit");
        eprintln!("batch_elo_fit/members/{n}: {} MM iterations", fit.iterations());
        group.bench_with_input(BenchmarkId::new("members", n), &n, |b, _| {
            b.iter(|| BatchElo::fit(&config, scores.view(), None).expect("a fit"))
        });
    }
    group.finish();
}

fn connect_four_network_rounds(c: &mut Criterion) {
    use metagame::games::Arena;
    let rules = registry::load("connect_four").expect("connect four loads");
    let text = include_str!("../examples/connect_four_league.toml");
    let example =
        metagame::ExperimentConfig::from_toml_str(text, std::path::Path::new("connect_four_league.toml"))
            .expect("the example parses");
    let metagame::AlgorithmConfig::League(section) = example.algorithm() else {
        panic!("the example is a league")
    };
    // Rounds only: the evaluation points are timed by the league benches above.
    let config = metagame::populations::LeagueConfigBuilder::from(section.league.clone())
        .eval_every(0)
        .build()
        .expect("the example's league");
    let mut league = League::new_on(Arena::rules(&rules), config.clone()).expect("league starts");
    let round = league.step().expect("a round").times.clone();
    eprintln!(
        "connect_four_network_rounds: one round's learners {:?}, oracle {:.3} s",
        round.learners, round.oracle_s
    );
    let mut group = c.benchmark_group("connect_four_network_rounds");
    group.throughput(Throughput::Elements(3 * config.episodes_per_round()));
    group.sample_size(10);
    group.warm_up_time(std::time::Duration::from_millis(500));
    group.measurement_time(std::time::Duration::from_secs(10));
    group.bench_function("ppo_2t", |b| b.iter(|| league.step().map(|_| ()).expect("a round")));
    group.finish();
}

criterion_group!(benches, leduc_league, batch_elo_fit, connect_four_network_rounds);
criterion_main!(benches);
