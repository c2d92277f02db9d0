//! The exact two-player solvers (LP, Lemke–Howson, support and vertex enumeration): known
//! equilibria of classic games (each with its source), invariants as properties, and `metagame solve`.

use std::process::{Command, Output};

use metagame_games::NormalFormGame;
use metagame_solvers::lemke_howson::LemkeHowson;
use metagame_solvers::lp::LpNash;
use metagame_solvers::support_enumeration::SupportEnumeration;
use metagame_solvers::vertex_enumeration::VertexEnumeration;
use metagame_solvers::{MetaSolver, Solution, SolveError, Status};
use ndarray::{Array2, array};
use proptest::prelude::*;

fn close(a: &[f64], b: &[f64], tolerance: f64) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tolerance)
}

fn same_profile(s: &Solution, x: &[f64], y: &[f64]) -> bool {
    close(&s.strategies[0], x, 1e-9) && close(&s.strategies[1], y, 1e-9)
}

/// True when the two lists hold the same profiles (in any order).
fn same_sets(a: &[Solution], b: &[Solution]) -> bool {
    a.len() == b.len()
        && a.iter().all(|s| b.iter().any(|t| same_profile(t, &s.strategies[0], &s.strategies[1])))
}

fn bimatrix(a: Array2<f64>, b: Array2<f64>) -> NormalFormGame {
    NormalFormGame::bimatrix(a, b).unwrap()
}

// ---- known values of classic games ----

#[test]
fn lp_known_zero_sum_games() {
    let third = [1.0 / 3.0; 3];
    let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]).unwrap();
    let s = LpNash::default().solve_zero_sum(&rps).unwrap();
    assert!(same_profile(&s.solution, &third, &third) && s.value.abs() < 1e-15);
    let brps = NormalFormGame::zero_sum(array![[0., -25., 50.], [25., 0., -5.], [-50., 5., 0.]]).unwrap();
    let s = LpNash::default().solve_zero_sum(&brps).unwrap();
    let biased = [1.0 / 16.0, 10.0 / 16.0, 5.0 / 16.0];
    assert!(same_profile(&s.solution, &biased, &biased), "{:?}", s.solution.strategies);
    assert!(s.value.abs() < 1e-13 && s.solution.certificate.nash_conv < 1e-13);
    let mp = NormalFormGame::zero_sum(array![[1., -1.], [-1., 1.]]).unwrap();
    let s = LpNash::default().solve_zero_sum(&mp).unwrap();
    assert!(same_profile(&s.solution, &[0.5, 0.5], &[0.5, 0.5]) && s.value == 0.0);
    assert_eq!(s.solution.status, Status::Solved);
}

#[test]
fn battle_of_the_sexes_has_three_equilibria() {
    let g = bimatrix(array![[3., 0.], [0., 2.]], array![[2., 0.], [0., 3.]]);
    for all in [
        SupportEnumeration::default().solve_all(&g).unwrap(),
        VertexEnumeration::default().solve_all(&g).unwrap(),
    ] {
        assert_eq!(all.len(), 3);
        assert!(all.iter().any(|s| same_profile(s, &[1., 0.], &[1., 0.])));
        assert!(all.iter().any(|s| same_profile(s, &[0., 1.], &[0., 1.])));
        assert!(all.iter().any(|s| same_profile(s, &[0.6, 0.4], &[0.4, 0.6])));
    }
    let lh = LemkeHowson::default().solve(&g).unwrap();
    assert!(lh.certificate.nash_conv < 1e-15);
}

#[test]
fn four_by_three_game_has_one_equilibrium() {
    // Shapley's game (unique Nash: uniform against uniform) with a fourth row that is
    // strictly dominated for the row player (−1 against everything), so it never carries
    // weight: the full equilibrium set is ((1/3, 1/3, 1/3, 0), (1/3, 1/3, 1/3)).
    let a = array![[0., 0., 1.], [1., 0., 0.], [0., 1., 0.], [-1., -1., -1.]];
    let b = array![[0., 1., 0.], [0., 0., 1.], [1., 0., 0.], [5., 0., 2.]];
    let g = bimatrix(a, b);
    let (x, y) = ([1. / 3., 1. / 3., 1. / 3., 0.], [1. / 3.; 3]);
    for all in [
        SupportEnumeration::default().solve_all(&g).unwrap(),
        VertexEnumeration::default().solve_all(&g).unwrap(),
        LemkeHowson::default().solve_all(&g).unwrap(),
    ] {
        assert_eq!(all.len(), 1);
        assert!(same_profile(&all[0], &x, &y), "{:?}", all[0].strategies);
    }
}

#[test]
fn three_equilibria_game() {
    // A=[[1,0],[−2,3]], B=[[3,2],[−1,0]]: two pure and (½,½)/(½,½).
    let g = bimatrix(array![[1., 0.], [-2., 3.]], array![[3., 2.], [-1., 0.]]);
    let se = SupportEnumeration::default().solve_all(&g).unwrap();
    let ve = VertexEnumeration::default().solve_all(&g).unwrap();
    assert_eq!(se.len(), 3);
    assert!(same_sets(&se, &ve));
    assert!(se.iter().any(|s| same_profile(s, &[0.5, 0.5], &[0.5, 0.5])));
}

#[test]
fn degenerate_zero_sum_game() {
    // A continuum of equilibria: rows 2 and 3 are identical. Naive Lemke–Howson fails.
    let a = array![[0., -1., 1.], [-1., 0., 1.], [-1., 0., 1.]];
    let g = NormalFormGame::zero_sum(a).unwrap();
    for label in 0..6 {
        let s = LemkeHowson::new(label).solve(&g).unwrap();
        assert_ne!(s.status, Status::MaxIterations, "label {label}");
        assert!(s.certificate.nash_conv < 1e-12 && s.is_distribution(1e-12), "label {label}");
    }
    let se = SupportEnumeration::default().solve_all(&g).unwrap();
    assert!(!se.is_empty() && se.iter().all(|s| s.status == Status::Degenerate));
    assert!(se.iter().all(|s| s.certificate.nash_conv < 1e-12));
    // Extreme equilibria: x ∈ {(½,½,0), (½,0,½)}, y = (½,½,0); value −½.
    let ve = VertexEnumeration::default().solve_all(&g).unwrap();
    assert_eq!(ve.len(), 2, "{ve:?}");
    assert!(ve.iter().any(|s| same_profile(s, &[0.5, 0.5, 0.], &[0.5, 0.5, 0.])));
    assert!(ve.iter().any(|s| same_profile(s, &[0.5, 0., 0.5], &[0.5, 0.5, 0.])));
    assert!((LpNash::default().value(&g).unwrap() + 0.5).abs() < 1e-14);
}

#[test]
fn two_player_solvers_refuse_three_players() {
    let g = NormalFormGame::new(vec![ndarray::ArrayD::zeros(vec![2, 2, 2]); 3]).unwrap();
    let solvers: [&dyn MetaSolver; 4] = [
        &LpNash::default(),
        &LemkeHowson::default(),
        &SupportEnumeration::default(),
        &VertexEnumeration::default(),
    ];
    for s in solvers {
        assert!(matches!(s.solve(&g), Err(SolveError::Unsupported { .. })), "{}", s.name());
    }
}

// ---- properties ----

fn matrix(
    rows: std::ops::RangeInclusive<usize>,
    cols: std::ops::RangeInclusive<usize>,
) -> impl Strategy<Value = Array2<f64>> {
    (rows, cols).prop_flat_map(|(m, n)| {
        proptest::collection::vec(-1.0f64..1.0, m * n)
            .prop_map(move |v| Array2::from_shape_vec((m, n), v).expect("m·n entries"))
    })
}

fn bimatrix_games(max: usize) -> impl Strategy<Value = NormalFormGame> {
    (1..=max, 1..=max).prop_flat_map(|(m, n)| {
        (proptest::collection::vec(-1.0f64..1.0, m * n), proptest::collection::vec(-1.0f64..1.0, m * n))
            .prop_map(move |(a, b)| {
                bimatrix(
                    Array2::from_shape_vec((m, n), a).unwrap(),
                    Array2::from_shape_vec((m, n), b).unwrap(),
                )
            })
    })
}

fn permuted(a: &Array2<f64>, rows: &[usize], cols: &[usize]) -> Array2<f64> {
    Array2::from_shape_fn(a.dim(), |(i, j)| a[[rows[i], cols[j]]])
}

/// A permutation of `0..n` drawn from a seed (a rotation and a reflection).
fn permutation(n: usize, seed: usize) -> Vec<usize> {
    let shift = seed % n.max(1);
    let mut p: Vec<usize> = (0..n).map(|i| (i + shift) % n).collect();
    if seed % 2 == 1 {
        p.reverse();
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn lp_returns_a_certified_equilibrium(a in matrix(1..=60, 1..=60)) {
        let game = NormalFormGame::zero_sum(a).unwrap();
        let s = LpNash::default().solve_zero_sum(&game)?;
        prop_assert!(s.solution.is_distribution(1e-12));
        prop_assert_eq!(s.solution.status, Status::Solved);
        prop_assert!(s.solution.certificate.nash_conv <= 1e-9 * game.payoff_scale());
        prop_assert!(s.solution.certificate.primal_dual_gap.unwrap() <= 1e-9 * game.payoff_scale());
    }

    #[test]
    fn lp_value_is_affine_equivariant(a in matrix(1..=25, 1..=25), scale in 0.01f64..100.0, shift in -50.0f64..50.0) {
        let v = LpNash::default().value(&NormalFormGame::zero_sum(a.clone()).unwrap())?;
        let w = LpNash::default().value(&NormalFormGame::zero_sum(a.mapv(|x| scale * x + shift)).unwrap())?;
        prop_assert!((w - (scale * v + shift)).abs() <= 1e-9 * (scale + shift.abs() + 1.0));
    }

    #[test]
    fn lp_value_is_invariant_to_relabelling(a in matrix(1..=25, 1..=25), seed in 0usize..1000) {
        let (m, n) = a.dim();
        let (rows, cols) = (permutation(m, seed), permutation(n, seed / 7));
        let g = NormalFormGame::zero_sum(a.clone()).unwrap();
        let h = NormalFormGame::zero_sum(permuted(&a, &rows, &cols)).unwrap();
        let (v, w) = (LpNash::default().value(&g)?, LpNash::default().value(&h)?);
        prop_assert!((v - w).abs() <= 1e-12);
    }

    #[test]
    fn lemke_howson_is_among_support_enumeration(game in bimatrix_games(7), label in 0usize..14) {
        let (m, n) = (game.num_strategies(0), game.num_strategies(1));
        let lh = LemkeHowson::new(label % (m + n)).solve(&game)?;
        prop_assert_eq!(lh.status, Status::Solved);
        prop_assert!(lh.is_distribution(1e-12));
        prop_assert!(lh.certificate.nash_conv <= 1e-9 * game.payoff_scale());
        let all = SupportEnumeration::default().solve_all(&game)?;
        prop_assert!(all.iter().any(|s| same_profile(s, &lh.strategies[0], &lh.strategies[1])));
    }

    #[test]
    fn lemke_howson_certificate_up_to_12(game in bimatrix_games(12), label in 0usize..24) {
        let (m, n) = (game.num_strategies(0), game.num_strategies(1));
        let lh = LemkeHowson::new(label % (m + n)).solve(&game)?;
        prop_assert!(lh.is_distribution(1e-12));
        prop_assert!(lh.certificate.nash_conv <= 1e-9 * game.payoff_scale());
    }

    #[test]
    fn vertex_and_support_enumeration_agree(game in bimatrix_games(6)) {
        let se = SupportEnumeration::default().solve_all(&game)?;
        let ve = VertexEnumeration::default().solve_all(&game)?;
        prop_assert!(se.iter().all(|s| s.status == Status::Solved));
        prop_assert!(se.len() % 2 == 1, "a nondegenerate game has an odd number of equilibria");
        prop_assert!(same_sets(&se, &ve), "se {} ve {}", se.len(), ve.len());
        for s in se.iter().chain(&ve) {
            prop_assert!(s.is_distribution(1e-12));
            prop_assert!(s.certificate.nash_conv <= 1e-9 * game.payoff_scale());
        }
    }

    #[test]
    fn relabelling_permutes_the_equilibria(a in matrix(4..=4, 5..=5), b in matrix(4..=4, 5..=5), seed in 0usize..100) {
        let (rows, cols) = (permutation(4, seed), permutation(5, seed / 3));
        let g = bimatrix(a.clone(), b.clone());
        let h = bimatrix(permuted(&a, &rows, &cols), permuted(&b, &rows, &cols));
        let all_g = VertexEnumeration::default().solve_all(&g)?;
        let all_h = VertexEnumeration::default().solve_all(&h)?;
        prop_assert_eq!(all_g.len(), all_h.len());
        for s in &all_h {
            // Strategy i of h is strategy rows[i] of g.
            let mut x = vec![0.0; 4];
            let mut y = vec![0.0; 5];
            for (i, &r) in rows.iter().enumerate() { x[r] = s.strategies[0][i]; }
            for (j, &c) in cols.iter().enumerate() { y[c] = s.strategies[1][j]; }
            prop_assert!(all_g.iter().any(|t| same_profile(t, &x, &y)));
        }
    }
}

#[test]
fn lemke_howson_solves_50x50_random_games() {
    // The size at which nashpy's integer pivoting cycles (measured with benches/peers/solvers.py).
    let mut state = 0x9e37_79b9_7f4a_7c15_u64;
    let mut uniform = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f64 / (1u64 << 53) as f64
    };
    for _ in 0..5 {
        let a = Array2::from_shape_fn((50, 50), |_| uniform());
        let b = Array2::from_shape_fn((50, 50), |_| uniform());
        let g = bimatrix(a, b);
        for label in [0, 17, 99] {
            let s = LemkeHowson::new(label).solve(&g).unwrap();
            assert_eq!(s.status, Status::Solved);
            assert!(s.certificate.nash_conv <= 1e-9, "{}", s.certificate.nash_conv);
        }
    }
}

// ---- `metagame solve` ----

fn metagame(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_metagame")).args(args).output().expect("run metagame")
}

fn json_of(out: &Output) -> serde_json::Value {
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(text.trim().lines().count(), 1, "one JSON line: {text}");
    serde_json::from_str(text.trim()).unwrap()
}

fn one_line_error(out: &Output) -> String {
    assert_eq!(out.status.code(), Some(2), "stdout: {}", String::from_utf8_lossy(&out.stdout));
    let err = String::from_utf8(out.stderr.clone()).unwrap();
    assert_eq!(err.trim().lines().count(), 1, "one line: {err}");
    assert!(!err.contains("panicked"), "{err}");
    err
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("metagame-solvers-exact-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn solve_cli_lp_on_rps() {
    let v = json_of(&metagame(&["solve", "--game", "matrix_rps", "--solver", "lp", "--json"]));
    assert_eq!(v["solver"], "lp");
    assert_eq!(v["status"], "solved");
    let eq = &v["equilibria"][0];
    for p in 0..2 {
        for k in 0..3 {
            assert!((eq[p][k].as_f64().unwrap() - 1.0 / 3.0).abs() < 1e-12);
        }
    }
    assert!(v["nash_conv"].as_f64().unwrap() < 1e-12);
    assert!(v["value"].as_f64().unwrap().abs() < 1e-12);
}

#[test]
fn solve_cli_nfg_file_all_equilibria() {
    let path = temp_file(
        "bos.nfg",
        "NFG 1 R \"Battle of the sexes\" { \"Row\" \"Column\" } { 2 2 }\n3 2 0 0 0 0 2 3\n",
    );
    let file = path.to_str().unwrap();
    for solver in ["support-enumeration", "vertex-enumeration"] {
        let v = json_of(&metagame(&["solve", file, "--solver", solver, "--all", "--json"]));
        assert_eq!(v["equilibria"].as_array().unwrap().len(), 3, "{solver}: {v}");
        assert!(v["nash_conv"].as_f64().unwrap() < 1e-12);
    }
    let v = json_of(&metagame(&["solve", file, "--solver", "lemke-howson", "--json", "--repeat", "3"]));
    assert!(v["seconds_per_solve"].as_f64().unwrap() >= 0.0);
    let text = metagame(&["solve", file, "--solver", "vertex-enumeration", "--all"]);
    assert!(text.status.success() && String::from_utf8_lossy(&text.stdout).contains("0.600000"));
}

#[test]
fn solve_cli_errors_are_one_line() {
    let bad = temp_file("bad.nfg", "NFG 1 R \"x\" { \"a\" \"b\" } { 2 2 }\n1 2 3\n");
    one_line_error(&metagame(&["solve", bad.to_str().unwrap(), "--solver", "lp"]));
    // A `nan` payoff is rejected by the parser.
    let nan = temp_file("nan.nfg", "NFG 1 R \"x\" { \"a\" \"b\" } { 1 1 }\nnan 0\n");
    let err = one_line_error(&metagame(&["solve", nan.to_str().unwrap(), "--solver", "lp"]));
    assert!(err.contains("finite") || err.contains("number"), "{err}");
    let three = temp_file(
        "three.nfg",
        "NFG 1 R \"x\" { \"a\" \"b\" \"c\" } { 2 2 2 }\n0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n",
    );
    let err = one_line_error(&metagame(&["solve", three.to_str().unwrap(), "--solver", "lp"]));
    assert!(err.contains("2 players"), "{err}");
    one_line_error(&metagame(&["solve", "--game", "matrix_bos", "--solver", "lp"]));
    one_line_error(&metagame(&["solve", "--game", "kuhn_poker", "--solver", "lp"]));
    let err = one_line_error(&metagame(&["solve", "--game", "matrix_rps", "--solver", "simplex"]));
    assert!(err.contains("lemke-howson"), "{err}");
    one_line_error(&metagame(&["solve", "/nonexistent/x.nfg", "--solver", "lp"]));
}
