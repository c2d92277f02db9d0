//! Lemke–Howson, vertex enumeration and `equilibrium_on_support` on the games long PSRO runs
//! make (issue 9): degenerate, full of near-duplicate strategies (rows and columns copied and
//! perturbed by 1e-14..1e-9, or mixtures of two others), at payoff scales 1e-3..1e3. Every
//! answer must be `solved` with NashConv within 1e-9 of the payoff range.

use std::path::{Path, PathBuf};

use metagame_games::{NormalFormGame, nfg};
use metagame_solvers::lemke_howson::LemkeHowson;
use metagame_solvers::support_enumeration::equilibrium_on_support;
use metagame_solvers::vertex_enumeration::VertexEnumeration;
use metagame_solvers::{MetaSolver, Solution, Status};
use ndarray::{Array2, Axis, array};
use proptest::prelude::*;

/// The largest payoff range of the game's players.
fn range(game: &NormalFormGame) -> f64 {
    (0..2)
        .map(|p| {
            let t = game.payoffs(p);
            let (lo, hi) =
                t.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
            hi - lo
        })
        .fold(0.0, f64::max)
}

fn certified(s: &Solution, game: &NormalFormGame) -> bool {
    s.status == Status::Solved
        && s.is_distribution(1e-12)
        && s.certificate.nash_conv <= 1e-9 * range(game)
        && s.certificate.nash_conv == game.nash_conv(&s.strategies)
}

/// How a copied strategy is made from the base game.
#[derive(Clone, Debug)]
enum Copy {
    /// Strategy `source` plus `noise · 10^exponent` entrywise (`exponent` in -14..=-9; an
    /// exponent below -14 means an exact duplicate).
    Perturbed { source: usize, exponent: i32, noise: Vec<f64> },
    /// `λ·first + (1 − λ)·second` plus noise at 1e-13: a response that mixes two others.
    Mixture { first: usize, second: usize, lambda: f64, noise: Vec<f64> },
}

impl Copy {
    fn make(&self, lines: &[Vec<f64>]) -> Vec<f64> {
        match self {
            Copy::Perturbed { source, exponent, noise } => {
                let base = &lines[source % lines.len()];
                let delta = if *exponent < -14 { 0.0 } else { 10f64.powi(*exponent) };
                base.iter().zip(noise.iter().cycle()).map(|(v, e)| v + delta * e).collect()
            }
            Copy::Mixture { first, second, lambda, noise } => {
                let (f, s) = (&lines[first % lines.len()], &lines[second % lines.len()]);
                f.iter()
                    .zip(s)
                    .zip(noise.iter().cycle())
                    .map(|((p, q), e)| lambda * p + (1.0 - lambda) * q + 1e-13 * e)
                    .collect()
            }
        }
    }
}

fn copies(max: usize) -> impl Strategy<Value = Vec<Copy>> {
    let noise = || proptest::collection::vec(-1.0f64..1.0, 1..=8);
    let one = prop_oneof![
        3 => (0usize..64, -15i32..=-9, noise()).prop_map(|(source, exponent, noise)| Copy::Perturbed { source, exponent, noise }),
        1 => (0usize..64, 0usize..64, 0.0f64..1.0, noise())
            .prop_map(|(first, second, lambda, noise)| Copy::Mixture { first, second, lambda, noise }),
    ];
    proptest::collection::vec(one, 1..=max)
}

/// Append the copied rows of `row_copies` and columns of `column_copies` to every matrix.
fn with_copies(mats: &[Array2<f64>], row_copies: &[Copy], column_copies: &[Copy]) -> Vec<Array2<f64>> {
    mats.iter()
        .map(|mat| {
            let mut rows: Vec<Vec<f64>> = mat.rows().into_iter().map(|r| r.to_vec()).collect();
            for c in row_copies {
                let r = c.make(&rows);
                rows.push(r);
            }
            let n = mat.ncols();
            let grown = Array2::from_shape_fn((rows.len(), n), |(i, j)| rows[i][j]);
            let mut cols: Vec<Vec<f64>> = grown.axis_iter(Axis(1)).map(|c| c.to_vec()).collect();
            for c in column_copies {
                let col = c.make(&cols);
                cols.push(col);
            }
            Array2::from_shape_fn((rows.len(), cols.len()), |(i, j)| cols[j][i])
        })
        .collect()
}

/// Near-duplicate games: a random `k × l` base (bimatrix or zero-sum), copied strategies
/// appended, all payoffs times `10^scale_exponent`.
fn near_duplicate_games(max_base: usize, max_copies: usize) -> impl Strategy<Value = NormalFormGame> {
    (2..=max_base, 2..=max_base, any::<bool>()).prop_flat_map(move |(k, l, zero_sum)| {
        (
            proptest::collection::vec(-1.0f64..1.0, k * l),
            proptest::collection::vec(-1.0f64..1.0, k * l),
            copies(max_copies),
            copies(max_copies),
            -3.0f64..=3.0,
        )
            .prop_map(move |(a, b, row_copies, column_copies, scale_exponent)| {
                let a = Array2::from_shape_vec((k, l), a).expect("k·l entries");
                let b = if zero_sum {
                    a.mapv(|v| -v)
                } else {
                    Array2::from_shape_vec((k, l), b).expect("k·l entries")
                };
                let scale = 10f64.powf(scale_exponent);
                let grown = with_copies(&[a, b], &row_copies, &column_copies);
                let (a, b) = (grown[0].mapv(|v| v * scale), grown[1].mapv(|v| v * scale));
                if zero_sum {
                    NormalFormGame::zero_sum(a).expect("finite payoffs")
                } else {
                    NormalFormGame::bimatrix(a, b).expect("finite payoffs")
                }
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn lemke_howson_solves_near_duplicate_games(game in near_duplicate_games(12, 14), label in 0usize..1000) {
        let labels = game.num_strategies(0) + game.num_strategies(1);
        let s = LemkeHowson::new(label % labels).solve(&game)?;
        prop_assert!(certified(&s, &game), "label {}: {:?} {:?}", label % labels, s.status, s.certificate);
    }

    #[test]
    fn vertex_enumeration_solves_near_duplicate_games(game in near_duplicate_games(4, 3)) {
        let all = VertexEnumeration::default().solve_all(&game)?;
        prop_assert!(!all.is_empty());
        for s in &all {
            prop_assert!(certified(s, &game), "{:?} {:?}", s.status, s.certificate);
        }
    }

    #[test]
    fn an_equilibrium_is_found_again_on_its_support(game in near_duplicate_games(10, 10)) {
        let s = LemkeHowson::default().solve(&game)?;
        let supports: Vec<Vec<usize>> =
            s.strategies.iter().map(|p| (0..p.len()).filter(|&i| p[i] > 0.0).collect()).collect();
        let again = equilibrium_on_support(&game, &supports)?;
        prop_assert!(again.is_some(), "{:?}", s.strategies);
        let again = again.unwrap_or(s);
        prop_assert!(certified(&again, &game));
        for (p, support) in again.strategies.iter().zip(&supports) {
            prop_assert!((0..p.len()).all(|i| p[i] == 0.0 || support.contains(&i)));
        }
    }
}

#[test]
fn degenerate_zero_sum_game_is_solved_from_every_label() {
    // A degenerate game with a continuum of equilibria, where naive Lemke–Howson fails.
    let g = NormalFormGame::zero_sum(array![[0., -1., 1.], [-1., 0., 1.], [-1., 0., 1.]]).unwrap();
    for label in 0..6 {
        let s = LemkeHowson::new(label).solve(&g).unwrap();
        assert!(certified(&s, &g), "label {label}: {s:?}");
        // The value of the game is −½ for the row player.
        let value: f64 = (0..3)
            .flat_map(|i| (0..3).map(move |j| (i, j)))
            .map(|(i, j)| s.strategies[0][i] * s.strategies[1][j] * g.payoff(0, &[i, j]))
            .sum();
        assert!((value + 0.5).abs() < 1e-12, "label {label}: {value}");
    }
    let all = LemkeHowson::default().solve_all(&g).unwrap();
    assert!(!all.is_empty() && all.iter().all(|s| certified(s, &g)));
}

#[test]
fn equilibrium_on_support_rejects_bad_supports_and_wrong_candidates() {
    let rps = NormalFormGame::zero_sum(array![[0., -1., 1.], [1., 0., -1.], [-1., 1., 0.]]).unwrap();
    assert!(equilibrium_on_support(&rps, &[vec![0, 3], vec![0]]).is_err());
    assert!(equilibrium_on_support(&rps, &[vec![], vec![0]]).is_err());
    assert!(equilibrium_on_support(&rps, &[vec![1, 1], vec![0]]).is_err());
    assert!(equilibrium_on_support(&rps, &[vec![0, 1, 2]]).is_err());
    assert!(equilibrium_on_support(&rps, &[vec![0, 1], vec![0, 1]]).unwrap().is_none());
    let s = equilibrium_on_support(&rps, &[vec![0, 1, 2], vec![0, 1, 2]]).unwrap().unwrap();
    assert!(certified(&s, &rps));
    assert!(s.strategies.iter().flatten().all(|&p| (p - 1. / 3.).abs() < 1e-14));
}

#[test]
fn equilibrium_on_support_drops_candidates_that_are_never_best() {
    // Matching pennies with a third row that is dominated: the candidate support includes
    // it, so the sub-game is solved and checked against the whole game.
    let a = array![[1., -1.], [-1., 1.], [-2., -2.]];
    let g = NormalFormGame::zero_sum(a).unwrap();
    let s = equilibrium_on_support(&g, &[vec![0, 1, 2], vec![0, 1]]).unwrap().unwrap();
    assert!(certified(&s, &g));
    assert_eq!(s.strategies[0][2], 0.0);
}

/// The 2-player meta-games written from PSRO runs.
fn fixture_games() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/meta_games");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "nfg"));
    files.sort();
    files
}

#[test]
fn lemke_howson_solves_every_psro_meta_game() {
    for path in fixture_games() {
        let game = nfg::read_nfg(&path).unwrap();
        if game.num_players() != 2 {
            continue;
        }
        let s = LemkeHowson::default().solve(&game).unwrap();
        assert!(certified(&s, &game), "{}: {:?} {:?}", path.display(), s.status, s.certificate.nash_conv);
    }
}
