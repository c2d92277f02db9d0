//! Iterative meta-solvers, alpha-Rank, (C)CE and Nash averaging: known values (sources in
//! comments) and property tests.

use metagame_games::NormalFormGame;
use metagame_solvers::alpha_rank::{Alpha, AlphaRank, Populations, SelectionModel};
use metagame_solvers::correlated::{self, CorrelatedEquilibrium, EquilibriumKind, Objective};
use metagame_solvers::fictitious_play::FictitiousPlay;
use metagame_solvers::hedge::Hedge;
use metagame_solvers::nash_averaging::NashAveraging;
use metagame_solvers::regret_matching::RegretMatching;
use metagame_solvers::replicator::{ProjectedReplicator, Replicator};
use metagame_solvers::{MetaSolver, Status};
use ndarray::{Array2, ArrayD, IxDyn, array};
use proptest::prelude::*;

fn rps() -> NormalFormGame {
    NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]).unwrap()
}

fn pennies() -> NormalFormGame {
    NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap()
}

/// Biased RPS (OpenSpiel's python/algorithms/projected_replicator_dynamics_test.py): equilibrium (1/16, 10/16, 5/16).
fn biased_rps() -> NormalFormGame {
    NormalFormGame::zero_sum(array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]]).unwrap()
}

fn close(a: &[f64], b: &[f64], tol: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol)
}

#[test]
fn prd_average_approaches_biased_rps_equilibrium() {
    let sol = ProjectedReplicator::default().solve(&biased_rps()).unwrap();
    let expected = [1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0];
    for s in &sol.strategies {
        assert!(close(s, &expected, 2e-2), "{:?}", sol.strategies);
    }
    assert_eq!(sol.status, Status::MaxIterations);
}

#[test]
fn learning_dynamics_solve_rps_and_pennies() {
    let solvers: Vec<Box<dyn MetaSolver>> = vec![
        Box::new(FictitiousPlay::default()),
        Box::new(RegretMatching::default().with_iterations(20_000)),
        Box::new(RegretMatching::plain().with_iterations(20_000)),
        Box::new(Hedge::default().with_iterations(20_000)),
        Box::new(Replicator::default().with_iterations(20_000)),
    ];
    for game in [rps(), pennies()] {
        for solver in &solvers {
            let sol = solver.solve(&game).unwrap();
            assert!(sol.is_distribution(1e-12));
            assert!(sol.certificate.nash_conv < 3e-2, "{}: {}", solver.name(), sol.certificate.nash_conv);
            let uniform = vec![1.0 / game.num_strategies(0) as f64; game.num_strategies(0)];
            assert!(close(&sol.strategies[0], &uniform, 2e-2), "{}: {:?}", solver.name(), sol.strategies);
        }
    }
}

#[test]
fn target_nash_conv_stops_early_with_solved() {
    let sol = RegretMatching::default().with_target_nash_conv(1e-2, 100).solve(&rps()).unwrap();
    assert_eq!(sol.status, Status::Solved);
    assert!(sol.certificate.nash_conv <= 1e-2);
    assert!(sol.iterations < 100_000);
}

/// Shapley (1964): unique Nash is uniform, fictitious play cycles.
#[test]
fn fictitious_play_cycles_on_shapleys_game() {
    let a = array![[1., 0., 0.], [0., 1., 0.], [0., 0., 1.]];
    let b = array![[0., 1., 0.], [0., 0., 1.], [1., 0., 0.]];
    let game = NormalFormGame::bimatrix(a, b).unwrap();
    let sol = FictitiousPlay::default()
        .with_iterations(20_000)
        .with_target_nash_conv(1e-3, 100)
        .solve(&game)
        .unwrap();
    assert_eq!(sol.status, Status::MaxIterations);
    assert!(sol.certificate.nash_conv > 0.05, "{}", sol.certificate.nash_conv);
}

/// Han et al. 2013 through OpenSpiel `python/egt/alpharank_test.py` (m = 20, α = 0.1,
/// global selection).
#[test]
fn alpha_rank_han_et_al() {
    let (r, t, p, s, delta, eps) = (1., 2., 0., -1., 4., 0.25);
    let a = array![
        [r - eps / 2., r - eps, 0., s + delta - eps, r - eps],
        [r, r, s, s, s],
        [0., t, p, p, p],
        [t - delta, t, p, p, p],
        [r, t, p, p, p]
    ];
    let game = NormalFormGame::bimatrix(a.clone(), a.t().to_owned()).unwrap();
    let sol = AlphaRank::default()
        .with_population_size(20)
        .with_alpha(Alpha::Finite(0.1))
        .with_selection(SelectionModel::Global)
        .solve(&game)
        .unwrap();
    assert_eq!(sol.status, Status::Solved);
    let expected = [0.40966787, 0.07959841, 0.20506998, 0.08505983, 0.2206039];
    let stationary = sol.stationary().unwrap();
    assert!(close(&stationary[0], &expected, 1e-6), "{stationary:?}");
    assert!(close(&sol.strategies[0], &expected, 1e-6));
}

#[test]
fn alpha_rank_infinite_alpha_rps_is_uniform() {
    let sol = AlphaRank::default().with_alpha(Alpha::Infinite).solve(&rps()).unwrap();
    assert_eq!(sol.status, Status::Solved);
    let stationary = sol.stationary().unwrap();
    assert!(close(&stationary[0], &[1.0 / 3.0; 3], 1e-9), "{stationary:?}");
}

#[test]
fn alpha_rank_coordination_game_has_two_stationary_distributions() {
    let a = array![[1., 0.], [0., 1.]];
    let game = NormalFormGame::bimatrix(a.clone(), a).unwrap();
    let sol = AlphaRank::default()
        .with_alpha(Alpha::Infinite)
        .with_populations(Populations::Multiple)
        .solve(&game)
        .unwrap();
    assert_eq!(sol.status, Status::MultipleStationary);
    let stationary = sol.stationary().unwrap();
    assert_eq!(stationary.len(), 2);
    assert!(close(&stationary[0], &[1., 0., 0., 0.], 1e-12), "{stationary:?}");
    assert!(close(&stationary[1], &[0., 0., 0., 1.], 1e-12), "{stationary:?}");
    assert!(sol.is_distribution(1e-12));
}

#[test]
fn alpha_rank_sweep_settles() {
    let sol = AlphaRank::default().with_alpha(Alpha::Sweep { start: 1e-4 }).rank(&rps()).unwrap();
    assert!(sol.alpha > 1e-4);
    assert!(close(&sol.stationary[0], &[1.0 / 3.0; 3], 1e-6), "{:?}", sol.stationary);
}

/// Chicken (Aumann 1974), the welfare-maximising CE is uniform on {DC, CD, CC} (8/3 each).
#[test]
fn chicken_welfare_maximising_ce() {
    let a = array![[0., 4.], [1., 3.]];
    let game = NormalFormGame::bimatrix(a.clone(), a.t().to_owned()).unwrap();
    let sol = CorrelatedEquilibrium::ce().with_objective(Objective::MaxWelfare).solve(&game).unwrap();
    let joint = sol.joint().unwrap();
    let value =
        |p: usize| -> f64 { joint.indexed_iter().map(|(i, &w)| w * game.payoff(p, &[i[0], i[1]])).sum() };
    assert!((value(0) - 8.0 / 3.0).abs() < 1e-7 && (value(1) - 8.0 / 3.0).abs() < 1e-7);
    assert!(sol.certificate.max_violation.unwrap() <= 1e-7);
}

/// Balduzzi et al. 2018 (arXiv:1806.02643).
#[test]
fn nash_averaging_transitive_and_cyclic() {
    let transitive = array![[0., -1., -1.], [1., 0., -1.], [1., 1., 0.]];
    let result = NashAveraging::default().rate(&transitive).unwrap();
    assert!(close(&result.maxent_nash, &[0., 0., 1.], 1e-7), "{:?}", result.maxent_nash);
    assert!(close(&result.skill, &[-1., -1., 0.], 1e-7), "{:?}", result.skill);
    let sol = NashAveraging::default().solve(&rps()).unwrap();
    assert!(close(&sol.strategies[0], &[1.0 / 3.0; 3], 1e-7));
    assert!(sol.certificate.nash_conv < 1e-7);
}

// ---------------------------------------------------------------------------------------
// Property tests (small case counts: the whole file runs in seconds in release).

fn zero_sum_games(max: usize) -> impl Strategy<Value = NormalFormGame> {
    (2..=max, 2..=max).prop_flat_map(|(r, c)| {
        prop::collection::vec(-1.0f64..1.0, r * c)
            .prop_map(move |v| NormalFormGame::zero_sum(Array2::from_shape_vec((r, c), v).unwrap()).unwrap())
    })
}

fn three_player_games(max: usize) -> impl Strategy<Value = NormalFormGame> {
    (2..=max, 2..=max, 2..=max).prop_flat_map(|(a, b, c)| {
        prop::collection::vec(-1.0f64..1.0, 3 * a * b * c).prop_map(move |v| {
            let n = a * b * c;
            let tensors = (0..3)
                .map(|p| ArrayD::from_shape_vec(IxDyn(&[a, b, c]), v[p * n..(p + 1) * n].to_vec()).unwrap())
                .collect();
            NormalFormGame::new(tensors).unwrap()
        })
    })
}

fn bimatrix_games(max: usize) -> impl Strategy<Value = NormalFormGame> {
    (2..=max, 2..=max).prop_flat_map(|(r, c)| {
        prop::collection::vec(-1.0f64..1.0, 2 * r * c).prop_map(move |v| {
            let a = Array2::from_shape_vec((r, c), v[..r * c].to_vec()).unwrap();
            let b = Array2::from_shape_vec((r, c), v[r * c..].to_vec()).unwrap();
            NormalFormGame::bimatrix(a, b).unwrap()
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn learning_dynamics_improve_on_zero_sum_games(game in zero_sum_games(10)) {
        let pairs: Vec<(Box<dyn MetaSolver>, Box<dyn MetaSolver>)> = vec![
            (Box::new(FictitiousPlay::default().with_iterations(100)), Box::new(FictitiousPlay::default().with_iterations(10_000))),
            (Box::new(RegretMatching::default().with_iterations(100)), Box::new(RegretMatching::default().with_iterations(10_000))),
            (Box::new(Hedge::default().with_iterations(100)), Box::new(Hedge::default().with_iterations(10_000))),
        ];
        for (short, long) in &pairs {
            let a = short.solve(&game)?;
            let b = long.solve(&game)?;
            prop_assert!(a.is_distribution(1e-12) && b.is_distribution(1e-12));
            prop_assert!(b.certificate.nash_conv <= 0.1 * game.payoff_scale(), "{} {}", long.name(), b.certificate.nash_conv);
            prop_assert!(b.certificate.nash_conv <= a.certificate.nash_conv + 1e-9, "{}: {} > {}", long.name(), b.certificate.nash_conv, a.certificate.nash_conv);
            prop_assert!((b.certificate.nash_conv - game.nash_conv(&b.strategies)).abs() < 1e-12);
        }
    }

    #[test]
    fn learning_dynamics_return_distributions_on_three_player_games(game in three_player_games(4)) {
        let solvers: Vec<Box<dyn MetaSolver>> = vec![
            Box::new(FictitiousPlay::default().with_iterations(2_000)),
            Box::new(RegretMatching::default().with_iterations(2_000)),
            Box::new(Hedge::default().with_iterations(2_000)),
            Box::new(ProjectedReplicator::default().with_iterations(2_000)),
        ];
        for solver in &solvers {
            let sol = solver.solve(&game)?;
            prop_assert!(sol.is_distribution(1e-12));
            prop_assert!(sol.certificate.nash_conv >= 0.0);
            prop_assert!((sol.certificate.nash_conv - game.nash_conv(&sol.strategies)).abs() < 1e-12);
        }
    }

    #[test]
    fn prd_respects_its_floor(game in bimatrix_games(8), gamma in 1e-4f64..0.1) {
        let sol = ProjectedReplicator::default().with_iterations(3_000).with_dt(1e-2).with_gamma(gamma).solve(&game)?;
        for s in &sol.strategies {
            prop_assert!(s.iter().all(|&p| p >= gamma - 1e-12), "{s:?}");
            prop_assert!((s.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
    }

    #[test]
    fn correlated_equilibria_satisfy_their_constraints(game in three_player_games(3), cce in any::<bool>(), gini in any::<bool>()) {
        let kind = if cce { EquilibriumKind::Cce } else { EquilibriumKind::Ce };
        let objective = if gini { Objective::MaxGini } else { Objective::MaxWelfare };
        let sol = CorrelatedEquilibrium::new(kind, objective).solve(&game)?;
        let joint = sol.joint().unwrap();
        prop_assert!((joint.sum() - 1.0).abs() < 1e-12 && joint.iter().all(|&w| w >= 0.0));
        let violation = correlated::max_violation(&game, joint.as_slice().unwrap(), kind);
        prop_assert!(violation <= 1e-7, "{violation}");
        prop_assert_eq!(sol.certificate.max_violation, Some(violation));
        prop_assert!(sol.is_distribution(1e-12));
    }

    #[test]
    fn correlated_equilibria_on_bimatrix_games(game in bimatrix_games(6)) {
        for solver in [CorrelatedEquilibrium::ce(), CorrelatedEquilibrium::cce()] {
            let sol = solver.solve(&game)?;
            prop_assert!(sol.certificate.max_violation.unwrap() <= 1e-7);
        }
    }

    #[test]
    fn alpha_rank_is_a_distribution_and_relabelling_invariant(game in bimatrix_games(5), seed in any::<u64>()) {
        let (a, b) = game.bimatrix_payoffs().unwrap();
        let (r, c) = a.dim();
        // A permutation of each player's strategies from the seed.
        let perm = |k: usize, salt: u64| {
            let mut p: Vec<usize> = (0..k).collect();
            p.sort_by_key(|&i| (i as u64 + 1).wrapping_mul(seed ^ salt).rotate_left(17));
            p
        };
        let (pr, pc) = (perm(r, 1), perm(c, 2));
        let permuted = |m: &Array2<f64>| Array2::from_shape_fn((r, c), |(i, j)| m[[pr[i], pc[j]]]);
        let relabelled = NormalFormGame::bimatrix(permuted(&a), permuted(&b)).unwrap();
        let solver = AlphaRank::default().with_alpha(Alpha::Finite(5.0)).with_populations(Populations::Multiple);
        let x = solver.solve(&game)?;
        let y = solver.solve(&relabelled)?;
        let (x, y) = (x.stationary().unwrap(), y.stationary().unwrap());
        prop_assert_eq!(x.len(), y.len());
        for pi in x {
            prop_assert!((pi.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        if x.len() == 1 {
            for (i, &pi) in pr.iter().enumerate() {
                for (j, &pj) in pc.iter().enumerate() {
                    let diff = (y[0][i * c + j] - x[0][pi * c + pj]).abs();
                    prop_assert!(diff < 1e-9, "{diff}");
                }
            }
        }
    }
}

/// The setters are plain `fn(T, usize) -> T` items (the umbrella's registry takes them as
/// values) and the defaults are those the docs state.
#[test]
fn setters_are_fn_items_and_defaults_hold() {
    fn cap<T>(solver: T, set: fn(T, usize) -> T, get: fn(&T) -> usize, default: usize) {
        assert_eq!(get(&solver), default);
        assert_eq!(get(&set(solver, 7)), 7);
    }
    cap(FictitiousPlay::default(), FictitiousPlay::with_iterations, FictitiousPlay::iterations, 10_000);
    cap(RegretMatching::default(), RegretMatching::with_iterations, RegretMatching::iterations, 100_000);
    cap(RegretMatching::plain(), RegretMatching::with_iterations, RegretMatching::iterations, 100_000);
    cap(Hedge::default(), Hedge::with_iterations, Hedge::iterations, 100_000);
    cap(Replicator::default(), Replicator::with_iterations, Replicator::iterations, 100_000);
    cap(
        ProjectedReplicator::default(),
        ProjectedReplicator::with_iterations,
        ProjectedReplicator::iterations,
        100_000,
    );
}
