//! Warm starts and early stops of the iterative meta-solvers, and the n-player
//! deviation-payoff pass (issue 9).

use metagame_games::{DeviationPayoffs, NormalFormGame};
use metagame_solvers::fictitious_play::FictitiousPlay;
use metagame_solvers::hedge::Hedge;
use metagame_solvers::lp::LpNash;
use metagame_solvers::regret_matching::RegretMatching;
use metagame_solvers::replicator::{ProjectedReplicator, Replicator};
use metagame_solvers::{MetaSolver, Solution, SolveError, Status};
use ndarray::{ArrayD, IxDyn};

/// SplitMix64 numbers in [0, 1): fixed seeds, no dependency.
fn numbers(count: usize, seed: u64) -> Vec<f64> {
    let mut state = seed;
    (0..count)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            (z >> 11) as f64 / (1u64 << 53) as f64
        })
        .collect()
}

fn random_game(shape: &[usize], seed: u64) -> NormalFormGame {
    let size: usize = shape.iter().product();
    let tensors = (0..shape.len())
        .map(|p| ArrayD::from_shape_vec(IxDyn(shape), numbers(size, seed + p as u64)).unwrap())
        .collect();
    NormalFormGame::new(tensors).unwrap()
}

fn random_profile(shape: &[usize], seed: u64) -> Vec<Vec<f64>> {
    shape
        .iter()
        .enumerate()
        .map(|(p, &k)| {
            let w = numbers(k, seed * 31 + p as u64);
            let total: f64 = w.iter().sum();
            w.iter().map(|x| x / total).collect()
        })
        .collect()
}

fn bits(strategies: &[Vec<f64>]) -> Vec<Vec<u64>> {
    strategies.iter().map(|s| s.iter().map(|x| x.to_bits()).collect()).collect()
}

/// FNV-1a over the bits of some numbers: a compact fingerprint of exact results.
fn fingerprint<'a>(numbers: impl IntoIterator<Item = &'a f64>) -> u64 {
    numbers.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, x| (h ^ x.to_bits()).wrapping_mul(0x100_0000_01b3))
}

/// The plain one-profile-at-a-time pass (the games crate's pass before issue 9), kept as the
/// reference the vectorised pass must equal bit for bit.
fn simple_pass(game: &NormalFormGame, strategies: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let shape = game.shape();
    let n = shape.len();
    let mut out: Vec<Vec<f64>> = shape.iter().map(|&k| vec![0.0; k]).collect();
    let (mut prefix, mut suffix) = (vec![1.0; n + 1], vec![1.0; n + 1]);
    let mut index = vec![0; n];
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
                out[p][index[p]] += w * game.payoffs(p).as_slice().unwrap()[flat];
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
    out
}

fn pass(game: &NormalFormGame, strategies: &[Vec<f64>]) -> Vec<Vec<f64>> {
    let mut out: Vec<Vec<f64>> = game.shape().iter().map(|&k| vec![0.0; k]).collect();
    DeviationPayoffs::new(game).compute(strategies, &mut out);
    out
}

/// Cold solves give the bits they gave before warm starts and the new pass existed:
/// fingerprints recorded with the code at commit cbf0636 (3000 iterations each), PRD's,
/// replicator's and regret matching's re-recorded when their average began to include the
/// starting point and plain regret matching's regrets to start at 1e-6 (as OpenSpiel's).
#[test]
fn cold_solves_are_bit_identical_to_the_old_code() {
    let g3 = random_game(&[5, 4, 3], 11);
    let g2 = random_game(&[6, 7], 21);
    let solvers: Vec<(Box<dyn MetaSolver>, [u64; 2])> = vec![
        (
            Box::new(ProjectedReplicator::default().with_iterations(3000)),
            [0x96d7_d824_44c4_1d18, 0x3173_b804_7531_866b],
        ),
        (
            Box::new(Replicator::default().with_iterations(3000)),
            [0x8052_dfb1_e37d_d2b3, 0xd25f_e042_eb19_bd55],
        ),
        (
            Box::new(RegretMatching::default().with_iterations(3000)),
            [0xe5bb_90f8_3c33_bd89, 0x5c0d_5cf5_debc_9c83],
        ),
        (
            Box::new(RegretMatching::plain().with_iterations(3000)),
            [0x4c01_7e4b_1062_382b, 0xa5fa_2bd0_e9ad_f230],
        ),
        (Box::new(Hedge::default().with_iterations(3000)), [0x74c4_bf4f_7c55_d790, 0x483d_dbe7_a1ec_cde0]),
        (
            Box::new(FictitiousPlay::default().with_iterations(3000)),
            [0x7003_ec20_ef87_f8b3, 0xdf30_0168_04f0_b7a8],
        ),
    ];
    for (solver, expected) in &solvers {
        for (game, expected) in [&g3, &g2].into_iter().zip(expected) {
            let sol = solver.solve(game).unwrap();
            let print = fingerprint(sol.strategies.iter().flatten().chain([&sol.certificate.nash_conv]));
            assert_eq!(print, *expected, "{} on {:?}", solver.name(), game.shape());
        }
    }
    for (shape, expected) in
        [(&[5usize, 4, 3][..], 0x43af_91a1_f7d4_96c5u64), (&[3, 4, 2, 5], 0xe82f_2d4f_6d11_dc1c)]
    {
        let out = pass(&random_game(shape, 41), &random_profile(shape, 5));
        assert_eq!(fingerprint(out.iter().flatten()), expected, "{shape:?}");
    }
}

/// The same game restricted to each player's first `k` strategies.
fn restricted(game: &NormalFormGame, k: usize) -> NormalFormGame {
    let tensors = (0..game.num_players())
        .map(|p| {
            let mut t = game.payoffs(p).clone();
            for axis in 0..game.num_players() {
                t = t.slice_axis(ndarray::Axis(axis), (0..k).into()).to_owned();
            }
            t
        })
        .collect();
    NormalFormGame::new(tensors).unwrap()
}

fn iterative_solvers(target: f64, check_every: usize, iterations: usize) -> Vec<Box<dyn MetaSolver>> {
    vec![
        Box::new(
            ProjectedReplicator::default()
                .with_iterations(iterations)
                .with_target_nash_conv(target, check_every),
        ),
        Box::new(
            Replicator::default().with_iterations(iterations).with_target_nash_conv(target, check_every),
        ),
        Box::new(
            RegretMatching::default().with_iterations(iterations).with_target_nash_conv(target, check_every),
        ),
        Box::new(
            RegretMatching::plain().with_iterations(iterations).with_target_nash_conv(target, check_every),
        ),
        Box::new(Hedge::default().with_iterations(iterations).with_target_nash_conv(target, check_every)),
        Box::new(
            FictitiousPlay::default().with_iterations(iterations).with_target_nash_conv(target, check_every),
        ),
    ]
}

/// A start at an equilibrium meets the target before any step: 0 iterations, `Solved`, and
/// the certificate (computed by the game, not the solver) agrees.
#[test]
fn a_start_at_an_equilibrium_returns_at_once() {
    let biased =
        NormalFormGame::zero_sum(ndarray::array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]]).unwrap();
    let equilibrium = vec![vec![1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0]; 2];
    // A 3-player game with the strict pure equilibrium (1, 0, 2).
    let shape = [3usize, 2, 4];
    let mut tensors: Vec<ArrayD<f64>> =
        (0..3).map(|p| ArrayD::from_shape_vec(IxDyn(&shape), numbers(24, 90 + p)).unwrap()).collect();
    for (p, t) in tensors.iter_mut().enumerate() {
        t[IxDyn(&[1, 0, 2])] = 2.0 + p as f64;
    }
    let three = NormalFormGame::new(tensors).unwrap();
    let pure = vec![vec![0.0, 1.0, 0.0], vec![1.0, 0.0], vec![0.0, 0.0, 1.0, 0.0]];
    for (game, start, target) in [(&biased, &equilibrium, 1e-12), (&three, &pure, 1e-4)] {
        for solver in iterative_solvers(target, 1000, 100_000) {
            let sol = solver.solve_from(game, start).unwrap();
            assert_eq!((sol.status, sol.iterations), (Status::Solved, 0), "{}", solver.name());
            assert!(sol.certificate.nash_conv <= target, "{}: {}", solver.name(), sol.certificate.nash_conv);
            assert!(sol.is_distribution(1e-12));
        }
    }
}

/// A random zero-sum game (`players` = 2) or general-sum game with `k` strategies each.
fn grown_game(players: usize, k: usize, seed: u64) -> NormalFormGame {
    let shape = vec![k; players];
    let size = k.pow(players as u32);
    if players == 2 {
        let a = ndarray::Array2::from_shape_vec((k, k), numbers(size, seed)).unwrap();
        return NormalFormGame::zero_sum(a).unwrap();
    }
    let tensors = (0..players)
        .map(|p| ArrayD::from_shape_vec(IxDyn(&shape), numbers(size, seed + 10 * p as u64)).unwrap())
        .collect();
    NormalFormGame::new(tensors).unwrap()
}

/// As PSRO grows a meta-game by one strategy per player, starting from the previous answer
/// (each new strategy at mass 1/k) reaches the target in fewer steps than starting from
/// uniform: PRD on zero-sum games, RM+ and RM on 3-player general-sum games (where the
/// cold runs often miss the target altogether).
#[test]
fn warm_starts_on_a_grown_game_need_fewer_steps() {
    let prd = ProjectedReplicator::default().with_iterations(200_000).with_target_nash_conv(0.05, 100);
    let rm_plus = RegretMatching::default().with_iterations(100_000).with_target_nash_conv(0.02, 100);
    let rm = RegretMatching::plain().with_iterations(100_000).with_target_nash_conv(0.02, 100);
    let cases: Vec<(&dyn MetaSolver, usize, usize, u64)> = vec![
        (&prd, 2, 20, 3),
        (&prd, 2, 30, 7),
        (&prd, 2, 25, 11),
        (&rm_plus, 3, 8, 5),
        (&rm_plus, 3, 8, 17),
        (&rm, 3, 8, 5),
        (&rm, 3, 8, 29),
    ];
    for (solver, players, k, seed) in cases {
        let grown = grown_game(players, k, seed);
        let before = restricted(&grown, k - 1);
        let previous = solver.solve(&before).unwrap();
        let start = Solution::extend_start(&previous.strategies, grown.shape(), 1.0 / k as f64);
        let cold = solver.solve(&grown).unwrap();
        let warm = solver.solve_from(&grown, &start).unwrap();
        let name = solver.name();
        assert_eq!(warm.status, Status::Solved, "{name} {players}x{k} seed {seed}");
        assert!(warm.certificate.nash_conv <= 0.05);
        assert!(
            warm.iterations < cold.iterations,
            "{name} {players}x{k} seed {seed}: warm {} steps, cold {}",
            warm.iterations,
            cold.iterations
        );
    }
}

/// Random profiles with some exact zeros (sparse meta-mixtures), so the pass's skipping of
/// zero-weight rows is exercised too.
fn sparse_profile(shape: &[usize], seed: u64) -> Vec<Vec<f64>> {
    let mut profile = random_profile(shape, seed);
    for (p, s) in profile.iter_mut().enumerate() {
        let len = s.len();
        if len > 2 {
            s[(seed as usize + p) % len] = 0.0;
        }
        let total: f64 = s.iter().sum();
        s.iter_mut().for_each(|x| *x /= total);
    }
    profile
}

/// The vectorised pass equals the plain pass bit for bit on random 3- and 4-player games,
/// small ones (one thread) and ones large enough to be split over threads (2^18
/// multiply-adds and more).
#[test]
fn deviation_payoffs_equal_the_simple_pass_bit_for_bit() {
    let shapes: [&[usize]; 8] = [
        &[2, 3, 4],
        &[1, 5, 1],
        &[7, 1, 3, 2],
        &[3, 4, 2, 5],
        &[50, 51, 49],
        &[24, 23, 22, 21],
        &[5, 40, 9],
        &[2, 2, 2, 2, 2],
    ];
    for (i, shape) in shapes.iter().enumerate() {
        let game = random_game(shape, 100 + i as u64);
        for profile in [random_profile(shape, i as u64), sparse_profile(shape, i as u64)] {
            assert_eq!(bits(&pass(&game, &profile)), bits(&simple_pass(&game, &profile)), "{shape:?}");
        }
    }
}

/// The same bits on 1, 2 and 3 threads, and the same through `NormalFormGame::nash_conv`.
#[test]
fn deviation_payoffs_do_not_depend_on_the_thread_count() {
    for (shape, seed) in [(&[50usize, 51, 49][..], 1u64), (&[24, 23, 22, 21], 2)] {
        let game = random_game(shape, seed);
        let profile = sparse_profile(shape, seed);
        let on = |threads: usize| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
            pool.install(|| (bits(&pass(&game, &profile)), game.nash_conv(&profile).to_bits()))
        };
        let one = on(1);
        assert_eq!(one, on(2), "{shape:?}");
        assert_eq!(one, on(3), "{shape:?}");
    }
}

/// Solvers that are not iterative ignore the start; iterative ones reject malformed starts.
#[test]
fn starts_are_checked_or_ignored() {
    let game =
        NormalFormGame::zero_sum(ndarray::array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]).unwrap();
    let lp = LpNash::default();
    assert_eq!(lp.solve_from(&game, &vec![vec![1.0, 0.0, 0.0]; 2]).unwrap(), lp.solve(&game).unwrap());
    let bad: [Vec<Vec<f64>>; 5] = [
        vec![vec![0.5, 0.5, 0.0]],
        vec![vec![0.5, 0.5], vec![0.2, 0.3, 0.5]],
        vec![vec![0.5, 0.6, -0.1], vec![0.2, 0.3, 0.5]],
        vec![vec![0.5, f64::NAN, 0.5], vec![0.2, 0.3, 0.5]],
        vec![vec![0.0; 3], vec![0.2, 0.3, 0.5]],
    ];
    for solver in iterative_solvers(1e-3, 10, 100) {
        for start in &bad {
            let result = solver.solve_from(&game, start);
            assert!(matches!(result, Err(SolveError::InvalidConfig { .. })), "{}: {start:?}", solver.name());
        }
        // An unnormalised start is rescaled.
        let sol = solver.solve_from(&game, &[vec![2.0, 2.0, 2.0], vec![1.0, 1.0, 1.0]]).unwrap();
        assert_eq!((sol.status, sol.iterations), (Status::Solved, 0), "{}", solver.name());
    }
}
