//! The certified n-player Nash solver (`logit`): hand-written 3-5 player games with known
//! equilibria (tests/fixtures/nplayer/), random 3-4 player games, near-duplicate strategies
//! as PSRO makes them, and two-player games against the LP and Lemke–Howson.

use std::path::Path;

use metagame::games::{NormalFormGame, nfg};
use metagame::registry::meta_solver as solver_by_name;
use metagame::solvers::lemke_howson::LemkeHowson;
use metagame::solvers::logit::Logit;
use metagame::solvers::lp::LpNash;
use metagame::solvers::{MetaSolver, Solution, Status};
use ndarray::{ArrayD, Dimension, IxDyn, array};
use proptest::prelude::*;

const TARGET: f64 = 1e-9;

fn fixture(name: &str) -> NormalFormGame {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/nplayer").join(name);
    nfg::read_nfg(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// `Solved` with a certificate within the target, every strategy a distribution.
fn assert_certified(game: &NormalFormGame, solution: &Solution, what: &str) {
    assert_eq!(solution.status, Status::Solved, "{what}: {solution:?}");
    assert!(
        solution.certificate.nash_conv <= TARGET * game.payoff_scale(),
        "{what}: NashConv {}",
        solution.certificate.nash_conv
    );
    assert!(solution.is_distribution(1e-12), "{what}: {:?}", solution.strategies);
    // The certificate is the game's, not the solver's.
    assert!((game.nash_conv(&solution.strategies) - solution.certificate.nash_conv).abs() < 1e-15);
}

/// A `Solved` answer must be certified; anything else must say `MaxIterations`.
fn assert_honest(game: &NormalFormGame, solution: &Solution) {
    assert!(solution.is_distribution(1e-12));
    match solution.status {
        Status::Solved => assert!(solution.certificate.nash_conv <= TARGET * game.payoff_scale()),
        status => assert_eq!(status, Status::MaxIterations),
    }
}

fn assert_strategies(solution: &Solution, expected: &[&[f64]], what: &str) {
    for (got, want) in solution.strategies.iter().zip(expected) {
        for (g, w) in got.iter().zip(*want) {
            assert!((g - w).abs() < 1e-9, "{what}: {:?} vs {expected:?}", solution.strategies);
        }
    }
}

#[test]
fn hand_written_games_with_unique_equilibria() {
    let cases: [(&str, &[&[f64]]); 5] = [
        ("pennies3.nfg", &[&[0.5, 0.5], &[0.5, 0.5], &[0.5, 0.5]]),
        ("weighted_pennies3.nfg", &[&[2.0 / 3.0, 1.0 / 3.0], &[0.25, 0.75], &[2.0 / 3.0, 1.0 / 3.0]]),
        ("weighted_pennies4.nfg", &[&[0.2, 0.8], &[1.0 / 3.0, 2.0 / 3.0], &[0.75, 0.25], &[0.5, 0.5]]),
        ("dominant5.nfg", &[&[0.0, 0.0, 1.0], &[1.0, 0.0], &[0.0, 1.0], &[0.0, 1.0], &[1.0, 0.0]]),
        ("iterated_dominance3.nfg", &[&[1.0, 0.0, 0.0], &[1.0, 0.0, 0.0], &[0.0, 1.0, 0.0]]),
    ];
    for (name, expected) in cases {
        let game = fixture(name);
        let solution = Logit::default().solve(&game).unwrap();
        assert_certified(&game, &solution, name);
        assert_strategies(&solution, expected, name);
    }
}

#[test]
fn the_registry_name_solves_through_a_trait_object() {
    let game = fixture("weighted_pennies4.nfg");
    let solver = solver_by_name("logit", None).unwrap();
    assert_eq!(solver.name(), "logit");
    assert_certified(&game, &solver.solve(&game).unwrap(), "logit by name");
    // `iterations` caps the path steps; the answer stays honest.
    let capped = solver_by_name("logit", Some(1)).unwrap().solve(&game).unwrap();
    assert!(capped.iterations <= 1);
    assert_honest(&game, &capped);
}

/// A deterministic stream of numbers in [0, 1).
fn stream(seed: u64) -> impl FnMut() -> f64 {
    let mut state = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn random_game(shape: &[usize], seed: u64) -> NormalFormGame {
    let mut next = stream(seed);
    let payoffs = (0..shape.len()).map(|_| ArrayD::from_shape_fn(IxDyn(shape), |_| next())).collect();
    NormalFormGame::new(payoffs).unwrap()
}

/// Every player's odd strategies copy the even one before them, plus noise of size `noise`
/// (0 for exact duplicates): PSRO's repeated best responses.
fn with_twins(game: &NormalFormGame, noise: f64, seed: u64) -> NormalFormGame {
    let mut next = stream(seed);
    let payoffs = (0..game.num_players())
        .map(|p| {
            ArrayD::from_shape_fn(IxDyn(game.shape()), |idx| {
                let source: Vec<usize> = idx.slice().iter().map(|a| a - a % 2).collect();
                game.payoff(p, &source) + noise * next()
            })
        })
        .collect();
    NormalFormGame::new(payoffs).unwrap()
}

#[test]
fn random_three_and_four_player_games_are_certified() {
    // All of these are solved today; a handful of failures would still be acceptable for a
    // path method, a wrong `Solved` never is.
    for (shape, count) in [(vec![3, 3, 3], 30), (vec![4, 4, 4], 30), (vec![3, 3, 3, 3], 10), (vec![2; 5], 10)]
    {
        let mut solved = 0;
        for seed in 0..count {
            let game = random_game(&shape, seed);
            let solution = Logit::default().solve(&game).unwrap();
            assert_honest(&game, &solution);
            solved += usize::from(solution.status == Status::Solved);
        }
        assert!(solved * 10 >= count as usize * 9, "{shape:?}: {solved}/{count} solved");
    }
}

#[test]
fn duplicated_and_near_duplicated_strategies() {
    for seed in 0..8 {
        let base = random_game(&[3, 3, 3], 100 + seed);
        // 6x6x6: strategies 2k and 2k+1 are twins.
        let shape = [6, 6, 6];
        let wide = NormalFormGame::new(
            (0..3)
                .map(|p| {
                    ArrayD::from_shape_fn(IxDyn(&shape), |idx| {
                        base.payoff(p, &[idx[0] / 2, idx[1] / 2, idx[2] / 2])
                    })
                })
                .collect(),
        )
        .unwrap();
        for noise in [0.0, 1e-7, 1e-4] {
            let game = with_twins(&wide, noise, seed);
            let solution = Logit::default().solve(&game).unwrap();
            assert_certified(&game, &solution, &format!("seed {seed}, noise {noise}"));
        }
    }
}

#[test]
fn two_player_games_agree_with_lp_and_lemke_howson() {
    // Biased RPS: unique equilibrium (1/16, 10/16, 5/16) for both.
    let biased = NormalFormGame::zero_sum(array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]]).unwrap();
    let solution = Logit::default().solve(&biased).unwrap();
    assert_certified(&biased, &solution, "biased rps");
    let expected: &[f64] = &[1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0];
    assert_strategies(&solution, &[expected, expected], "biased rps");
    for seed in 0..10 {
        // Zero-sum: the value is unique, whichever equilibrium each method finds.
        let mut next = stream(500 + seed);
        let a = ndarray::Array2::from_shape_fn((7, 5), |_| next() * 2.0 - 1.0);
        let game = NormalFormGame::zero_sum(a).unwrap();
        let logit = Logit::default().solve(&game).unwrap();
        assert_certified(&game, &logit, "zero-sum");
        let lp = LpNash::default().solve(&game).unwrap();
        let value = |s: &Solution| game.expected_payoffs(&s.strategies)[0];
        assert!((value(&logit) - value(&lp)).abs() < 1e-9, "{} vs {}", value(&logit), value(&lp));
        // General-sum: both certified (possibly different equilibria).
        let game = random_game(&[6, 6], 600 + seed);
        assert_certified(&game, &Logit::default().solve(&game).unwrap(), "bimatrix");
        let lh = LemkeHowson::default().solve(&game).unwrap();
        assert!(lh.certificate.nash_conv <= TARGET * game.payoff_scale());
    }
}

#[test]
fn degenerate_games_stay_honest() {
    // All payoffs equal: every profile is an equilibrium.
    let flat = NormalFormGame::new(vec![ArrayD::zeros(IxDyn(&[3, 2, 4])); 3]).unwrap();
    assert_certified(&flat, &Logit::default().solve(&flat).unwrap(), "flat");
    // A player with a single strategy.
    let single = random_game(&[1, 3, 3], 7);
    assert_certified(&single, &Logit::default().solve(&single).unwrap(), "single strategy");
    // Integer payoffs in {-1, 0, 1}: many ties.
    for seed in 0..10 {
        let mut next = stream(900 + seed);
        let payoffs = (0..3)
            .map(|_| ArrayD::from_shape_fn(IxDyn(&[4, 4, 4]), |_| (next() * 3.0).floor() - 1.0))
            .collect();
        let game = NormalFormGame::new(payoffs).unwrap();
        assert_honest(&game, &Logit::default().solve(&game).unwrap());
    }
}

#[test]
fn settings_out_of_range_are_errors() {
    let game = fixture("pennies3.nfg");
    assert!(Logit::default().with_max_steps(0).solve(&game).is_err());
    assert!(Logit::default().with_max_lambda(-1.0).solve(&game).is_err());
    assert!(Logit::default().with_target(f64::INFINITY).solve(&game).is_err());
    assert!(solver_by_name("logit", Some(0)).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// Never `Solved` with a bad certificate, always distributions, also after an affine
    /// change of the payoffs (the tolerance follows the payoff scale).
    #[test]
    fn random_games_are_answered_honestly(
        k in 2usize..=4,
        payoffs in proptest::collection::vec(-10.0f64..10.0, 3 * 64),
        scale in 0.01f64..100.0,
        shift in -50.0f64..50.0,
    ) {
        let shape = [k, k, k];
        let cells = k * k * k;
        let tensor = |p: usize, a: f64, b: f64| {
            ArrayD::from_shape_vec(IxDyn(&shape), payoffs[p * 64..p * 64 + cells].iter().map(|u| a * u + b).collect())
                .unwrap()
        };
        let game = NormalFormGame::new((0..3).map(|p| tensor(p, 1.0, 0.0)).collect()).unwrap();
        let solution = Logit::default().solve(&game).unwrap();
        assert_honest(&game, &solution);
        let moved = NormalFormGame::new((0..3).map(|p| tensor(p, scale, shift)).collect()).unwrap();
        let moved_solution = Logit::default().solve(&moved).unwrap();
        assert_honest(&moved, &moved_solution);
    }
}
