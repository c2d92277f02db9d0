//! Iterative meta-solvers, alpha-Rank and (C)CE on random games (uniform [0, 1) payoffs from
//! a fixed-seed xorshift, so runs are comparable).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use metagame_games::{DeviationPayoffs, NormalFormGame};
use metagame_solvers::alpha_rank::{AlphaRank, Populations};
use metagame_solvers::correlated::CorrelatedEquilibrium;
use metagame_solvers::regret_matching::RegretMatching;
use metagame_solvers::replicator::ProjectedReplicator;
use metagame_solvers::{Copies, MetaSolver};
use ndarray::{Array2, ArrayD, IxDyn};

mod common;
use common::uniform;

fn zero_sum(n: usize) -> NormalFormGame {
    NormalFormGame::zero_sum(Array2::from_shape_vec((n, n), uniform(n * n, n as u64)).unwrap()).unwrap()
}

fn general(players: usize, n: usize) -> NormalFormGame {
    let size = n.pow(players as u32);
    let shape = vec![n; players];
    let tensors = (0..players)
        .map(|p| ArrayD::from_shape_vec(IxDyn(&shape), uniform(size, (100 * p + n) as u64)).unwrap())
        .collect();
    NormalFormGame::new(tensors).unwrap()
}

/// A general-sum game of any shape, payoffs as [`general`]'s.
fn general_shaped(shape: &[usize]) -> NormalFormGame {
    let size: usize = shape.iter().product();
    let tensors = (0..shape.len())
        .map(|p| ArrayD::from_shape_vec(IxDyn(shape), uniform(size, (100 * p + size) as u64)).unwrap())
        .collect();
    NormalFormGame::new(tensors).unwrap()
}

fn bench(c: &mut Criterion) {
    let mut group = c.benchmark_group("solvers_iterative");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(10);
    for n in [10, 20, 50] {
        let game = zero_sum(n);
        let prd = ProjectedReplicator::default().with_iterations(50_000);
        group.bench_with_input(BenchmarkId::new("prd_50k", format!("{n}x{n}")), &game, |b, g| {
            b.iter(|| black_box(prd.solve(g).unwrap()))
        });
    }
    // PRD on a game with duplicate strategies: solved on the members with multiplicities
    // (`solve_collapsed`) against the expanded game of one strategy per copy. The 3-player
    // shape is 3-player Kuhn PSRO's at iteration 35 (11×14×10 members, 36 responses each);
    // the 2-player one has 50 members with 100 copies.
    for (members, responses) in [(vec![11, 14, 10], 36), (vec![50, 50], 100)] {
        let game = general_shaped(&members);
        let copies = Copies::new(
            &members,
            members
                .iter()
                .map(|&k| (0..responses).map(|c| if c < k { c } else { (c * 7) % k }).collect())
                .collect(),
        )
        .unwrap();
        let expanded = copies.expand(&game).unwrap().into_owned();
        let label = format!(
            "{} as {}",
            members.iter().map(usize::to_string).collect::<Vec<_>>().join("x"),
            vec![responses.to_string(); members.len()].join("x")
        );
        let prd = ProjectedReplicator::default().with_gamma(1e-10).with_iterations(5_000);
        group.bench_with_input(BenchmarkId::new("prd_5k_expanded", &label), &expanded, |b, g| {
            b.iter(|| black_box(prd.solve(g).unwrap()))
        });
        group.bench_with_input(BenchmarkId::new("prd_5k_collapsed", &label), &game, |b, g| {
            b.iter(|| black_box(prd.solve_collapsed(g, &copies, None).unwrap()))
        });
    }
    for n in [10, 50] {
        let game = zero_sum(n);
        let rm = RegretMatching::default().with_iterations(100_000);
        group.bench_with_input(BenchmarkId::new("rm+_100k", format!("{n}x{n}")), &game, |b, g| {
            b.iter(|| black_box(rm.solve(g).unwrap()))
        });
    }
    for n in [10, 50, 100] {
        let game = zero_sum(n);
        let alpha_rank = AlphaRank::default().with_populations(Populations::Multiple);
        group.bench_with_input(BenchmarkId::new("alpha_rank_multipop", format!("{n}x{n}")), &game, |b, g| {
            b.iter(|| black_box(alpha_rank.solve(g).unwrap()))
        });
    }
    for n in [5, 10] {
        for (label, game) in [(format!("{n}x{n}"), general(2, n)), (format!("{n}x{n}x{n}"), general(3, n))] {
            for (name, solver) in
                [("mgce", CorrelatedEquilibrium::ce()), ("mgcce", CorrelatedEquilibrium::cce())]
            {
                group.bench_with_input(BenchmarkId::new(name, &label), &game, |b, g| {
                    b.iter(|| black_box(solver.solve(g).unwrap()))
                });
            }
        }
    }
    group.finish();
}

/// The deviation-payoff pass as it was before issue 9 (one profile at a time, the others'
/// probability as prefix·suffix products): the baseline of `deviation_payoffs`, which must
/// give the same bits (tests/it/warm_start.rs).
fn plain_pass(game: &NormalFormGame, strategies: &[Vec<f64>], out: &mut [Vec<f64>]) {
    let shape = game.shape();
    let n = shape.len();
    let payoffs: Vec<&[f64]> = (0..n).map(|p| game.payoffs(p).as_slice().unwrap()).collect();
    let (mut prefix, mut suffix, mut index) = (vec![1.0; n + 1], vec![1.0; n + 1], vec![0; n]);
    out.iter_mut().for_each(|o| o.fill(0.0));
    // `flat` indexes every player's tensor, not just one.
    #[allow(clippy::needless_range_loop)]
    for flat in 0..game.num_profiles() {
        for p in 0..n {
            prefix[p + 1] = prefix[p] * strategies[p][index[p]];
        }
        for p in (0..n).rev() {
            suffix[p] = suffix[p + 1] * strategies[p][index[p]];
        }
        for p in 0..n {
            let w = prefix[p] * suffix[p + 1];
            if w != 0.0 {
                out[p][index[p]] += w * payoffs[p][flat];
            }
        }
        for p in (0..n).rev() {
            index[p] += 1;
            if index[p] < shape[p] {
                break;
            }
            index[p] = 0;
        }
    }
}

/// The n-player tensor path (issue 9): one deviation-payoff pass, and a PRD solve whose every
/// step is one such pass, on the meta-game sizes of a long 3-player PSRO run.
fn bench_tensor(c: &mut Criterion) {
    let mut group = c.benchmark_group("solvers_tensor");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(3)).sample_size(10);
    for (players, n) in [(3, 20), (3, 40), (4, 15)] {
        let game = general(players, n);
        let label = vec![n.to_string(); players].join("x");
        let profile: Vec<Vec<f64>> = (0..players)
            .map(|p| {
                let w = uniform(n, 7 + p as u64);
                let total: f64 = w.iter().sum();
                w.iter().map(|x| x / total).collect()
            })
            .collect();
        let mut out: Vec<Vec<f64>> = vec![vec![0.0; n]; players];
        group.bench_with_input(BenchmarkId::new("deviation_payoffs_plain", &label), &game, |b, g| {
            b.iter(|| {
                plain_pass(g, black_box(&profile), &mut out);
                black_box(&out);
            })
        });
        group.bench_with_input(BenchmarkId::new("deviation_payoffs", &label), &game, |b, g| {
            let mut pass = DeviationPayoffs::new(g);
            b.iter(|| {
                pass.compute(black_box(&profile), &mut out);
                black_box(&out);
            })
        });
    }
    let game = general(3, 40);
    let prd = ProjectedReplicator::default().with_iterations(1_000);
    group.bench_with_input(BenchmarkId::new("prd_1k", "40x40x40"), &game, |b, g| {
        b.iter(|| black_box(prd.solve(g).unwrap()))
    });
    group.finish();
}

criterion_group!(benches, bench, bench_tensor);
criterion_main!(benches);
