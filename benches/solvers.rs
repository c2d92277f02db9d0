//! The exact two-player solvers on random games (uniform [0, 1) payoffs from a fixed-seed
//! xorshift64*): zero-sum LP, Lemke–Howson, support and vertex enumeration; and the zero-sum
//! LP's PSRO step, cold and warm, on the largest Leduc corpus meta-game.
//!
//! `cargo bench --bench solvers`; sizes follow the peer script `benches/peers/solvers.py`
//! (it runs nashpy, pygambit and scipy on numpy-seeded games).

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use metagame_games::NormalFormGame;
use metagame_solvers::MetaSolver;
use metagame_solvers::lemke_howson::LemkeHowson;
use metagame_solvers::lp::LpNash;
use metagame_solvers::support_enumeration::SupportEnumeration;
use metagame_solvers::vertex_enumeration::VertexEnumeration;
use ndarray::Array2;

mod common;
use common::uniform;

fn matrix(n: usize, seed: u64) -> Array2<f64> {
    // INVARIANT: n·n entries.
    Array2::from_shape_vec((n, n), uniform(n * n, seed)).expect("n·n entries")
}

fn zero_sum(n: usize) -> NormalFormGame {
    NormalFormGame::zero_sum(matrix(n, n as u64)).expect("finite payoffs")
}

fn bimatrix(n: usize) -> NormalFormGame {
    NormalFormGame::bimatrix(matrix(n, 1000 + n as u64), matrix(n, 2000 + n as u64)).expect("finite payoffs")
}

fn lp(c: &mut Criterion) {
    let mut group = c.benchmark_group("lp");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(10);
    for n in [10, 50, 100, 200, 500] {
        let game = zero_sum(n);
        group.bench_with_input(BenchmarkId::new("lp", format!("{n}x{n}")), &game, |b, g| {
            b.iter(|| LpNash::default().solve(black_box(g)).expect("zero-sum"))
        });
    }
    group.finish();
}

fn lemke_howson(c: &mut Criterion) {
    let mut group = c.benchmark_group("lemke_howson");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(1)).sample_size(10);
    for n in [5, 10, 20, 50] {
        let game = bimatrix(n);
        group.bench_with_input(BenchmarkId::new("label0", format!("{n}x{n}")), &game, |b, g| {
            b.iter(|| LemkeHowson::default().solve(black_box(g)).expect("bimatrix"))
        });
    }
    group.finish();
}

fn enumeration(c: &mut Criterion) {
    let mut group = c.benchmark_group("enumeration");
    group.warm_up_time(Duration::from_millis(100)).measurement_time(Duration::from_secs(1)).sample_size(10);
    for n in [5, 10, 15] {
        let game = bimatrix(n);
        group.bench_with_input(BenchmarkId::new("support", format!("{n}x{n}")), &game, |b, g| {
            b.iter(|| SupportEnumeration::default().solve_all(black_box(g)).expect("bimatrix"))
        });
    }
    for n in [10, 15, 20] {
        let game = bimatrix(n);
        group.bench_with_input(BenchmarkId::new("vertex", format!("{n}x{n}")), &game, |b, g| {
            b.iter(|| VertexEnumeration::default().solve_all(black_box(g)).expect("bimatrix"))
        });
    }
    group.finish();
}

/// PSRO's meta-solve step on the largest Leduc corpus meta-game: its leading `t × t` block
/// solved cold; warm by a solver that has just solved the `(t − 1) × (t − 1)` block warm and
/// remembers its subgame (PSRO's case); and warm from the smaller block's answer alone (a
/// fresh solver, as after a resume), the new member given `1/t` as PSRO does.
fn lp_warm(c: &mut Criterion) {
    let path =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/meta_games/leduc_nash.nfg");
    let a = metagame_games::nfg::read_nfg(&path)
        .expect("the corpus file")
        .matrix(0)
        .expect("2 players")
        .to_owned();
    let t = a.nrows().min(a.ncols());
    let block = |k: usize| {
        NormalFormGame::zero_sum(Array2::from_shape_fn((k, k), |(i, j)| a[[i, j]])).expect("finite")
    };
    let (before, step) = (block(t - 1), block(t));
    let lp = LpNash::default().with_warm_starts_from(1);
    let previous = LpNash::default().solve(&before).expect("zero-sum").strategies;
    let start_before = metagame_solvers::Solution::extend_start(&previous, &[t - 1, t - 1], 1.0);
    // A solver that has just solved the previous step warm: it remembers that step's subgame.
    let remembering = || {
        let lp = lp.clone();
        lp.solve_from(&before, &start_before).expect("zero-sum");
        lp
    };
    let start = metagame_solvers::Solution::extend_start(&previous, &[t, t], 1.0 / t as f64);
    let mut group = c.benchmark_group("lp_step");
    group.warm_up_time(Duration::from_millis(300)).measurement_time(Duration::from_secs(2)).sample_size(10);
    group.bench_function(BenchmarkId::new("cold", format!("leduc {t}x{t}")), |b| {
        b.iter(|| lp.solve(black_box(&step)).expect("zero-sum"))
    });
    group.bench_function(BenchmarkId::new("warm", format!("leduc {t}x{t}")), |b| {
        b.iter_batched(
            remembering,
            |lp| lp.solve_from(black_box(&step), black_box(&start)).expect("zero-sum"),
            criterion::BatchSize::PerIteration,
        )
    });
    group.bench_function(BenchmarkId::new("warm from the start alone", format!("leduc {t}x{t}")), |b| {
        b.iter(|| lp.clone().solve_from(black_box(&step), black_box(&start)).expect("zero-sum"))
    });
    group.finish();
}

criterion_group!(benches, lp, lp_warm, lemke_howson, enumeration);
criterion_main!(benches);
