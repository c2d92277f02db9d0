//! The zero-sum LP on the games long PSRO runs make (issue 9): degenerate, full of
//! near-duplicate strategies, with payoff differences far below the payoff range. Every
//! answer must be `solved` with NashConv ≤ 1e-9 × the payoff range (plus the rounding of
//! the certificate itself, 64 ε × max |A|), which is what [`LpNash`] documents.

use metagame::games::{NormalFormGame, nfg};
use metagame::solvers::lp::LpNash;
use metagame::solvers::nash::Nash;
use metagame::solvers::{MetaSolver, Solution, Status};
use ndarray::Array2;
use proptest::prelude::*;

/// `LpNash`'s documented tolerance for `a`: 1e-9 × range + 64 ε × max |a|.
fn tolerance(a: &Array2<f64>) -> f64 {
    let (lo, hi) = a.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &x| (lo.min(x), hi.max(x)));
    let largest = a.iter().fold(0.0_f64, |acc, &x| acc.max(x.abs()));
    LpNash::CERTIFICATE_TOLERANCE * (hi - lo) + 64.0 * f64::EPSILON * largest
}

/// Solve `a` and check everything the LP promises: solved, distributions, NashConv and
/// primal–dual gap within tolerance, the value between the two players' guarantees.
fn assert_solves(a: &Array2<f64>) -> Result<(), TestCaseError> {
    let game = NormalFormGame::zero_sum(a.clone()).unwrap();
    assert_certified(a, LpNash::default().solve_zero_sum(&game))
}

/// Everything the LP promises of its answer `solved` for `a`.
fn assert_certified(
    a: &Array2<f64>,
    solved: metagame::solvers::Result<metagame::solvers::lp::ZeroSumSolution>,
) -> Result<(), TestCaseError> {
    prop_assert!(solved.is_ok(), "{:?} on {a:?}", solved.err());
    let solved = solved.unwrap();
    let s = &solved.solution;
    let tol = tolerance(a);
    prop_assert_eq!(s.status, Status::Solved);
    prop_assert!(s.is_distribution(1e-12), "{:?}", s.strategies);
    prop_assert!(s.certificate.nash_conv <= tol, "NashConv {:e} > {tol:e} on {a:?}", s.certificate.nash_conv);
    let gap = s.certificate.primal_dual_gap.unwrap();
    prop_assert!(gap <= tol, "primal-dual gap {gap:e} > {tol:e}");
    let ay = a.dot(&ndarray::ArrayView1::from(&s.strategies[1][..]));
    let xa = a.t().dot(&ndarray::ArrayView1::from(&s.strategies[0][..]));
    let upper = ay.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let lower = xa.iter().copied().fold(f64::INFINITY, f64::min);
    prop_assert!(lower - tol <= solved.value && solved.value <= upper + tol);
    Ok(())
}

/// How a duplicated strategy is perturbed: no noise, or entries moved by up to 1e-14 … 1e-9
/// of the base payoffs' scale.
const PERTURBATIONS: [f64; 7] = [0.0, 1e-14, 1e-13, 1e-12, 1e-11, 1e-10, 1e-9];

/// A PSRO-like game: a small base game (small integers, so ties and degeneracy abound, or
/// uniform reals), maybe with a constant block, whose rows and columns are duplicated many
/// times with tiny perturbations, shuffled, and scaled by 1e-3 … 1e3.
fn duplicated_games() -> impl Strategy<Value = Array2<f64>> {
    (1usize..=8, 1usize..=8, any::<bool>(), 0usize..=24, 0usize..=24).prop_flat_map(
        |(m0, n0, integer, extra_rows, extra_cols)| {
            let entry =
                if integer { (-2i32..=2).prop_map(f64::from).boxed() } else { (-1.0..1.0f64).boxed() };
            let block = prop::option::weighted(0.3, (0..m0, 0..n0, -1.0..1.0f64));
            let rows = prop::collection::vec((0..m0, 0..PERTURBATIONS.len()), extra_rows);
            let cols = prop::collection::vec((0..n0, 0..PERTURBATIONS.len()), extra_cols);
            let noise = prop::collection::vec(-1.0..1.0f64, (m0 + extra_rows) * (n0 + extra_cols));
            let row_order = Just((0..m0 + extra_rows).collect::<Vec<_>>()).prop_shuffle();
            let col_order = Just((0..n0 + extra_cols).collect::<Vec<_>>()).prop_shuffle();
            (
                prop::collection::vec(entry, m0 * n0),
                block,
                rows,
                cols,
                noise,
                row_order,
                col_order,
                -3.0..3.0f64,
            )
                .prop_map(
                    move |(base, block, rows, cols, noise, row_order, col_order, exponent)| {
                        let mut base = Array2::from_shape_vec((m0, n0), base).unwrap();
                        if let Some((r0, c0, v)) = block {
                            for ((i, j), x) in base.indexed_iter_mut() {
                                if i >= r0 && j >= c0 {
                                    *x = v;
                                }
                            }
                        }
                        let rows: Vec<(usize, f64)> = (0..m0)
                            .map(|i| (i, 0.0))
                            .chain(rows.into_iter().map(|(i, d)| (i, PERTURBATIONS[d])))
                            .collect();
                        let cols: Vec<(usize, f64)> = (0..n0)
                            .map(|j| (j, 0.0))
                            .chain(cols.into_iter().map(|(j, d)| (j, PERTURBATIONS[d])))
                            .collect();
                        let (m, n) = (rows.len(), cols.len());
                        let scale = 10f64.powf(exponent);
                        Array2::from_shape_fn((m, n), |(i, j)| {
                            let (bi, di) = rows[row_order[i]];
                            let (bj, dj) = cols[col_order[j]];
                            (base[[bi, bj]] + (di + dj) * noise[row_order[i] * n + col_order[j]]) * scale
                        })
                    },
                )
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn lp_solves_games_of_near_duplicates(a in duplicated_games()) {
        assert_solves(&a)?;
    }

    /// The whole game shifted far from zero: the tolerance's rounding term covers the
    /// offset, and the answer still certifies.
    #[test]
    fn lp_solves_offset_games(a in duplicated_games(), offset in -1e3..1e3f64) {
        assert_solves(&a.mapv(|x| x + offset))?;
    }
}

/// The leading `k × l` block of `a` solved warm (from a uniform start), then the whole game
/// warm-started by the same solver (from what it remembers of the block) and from the block's
/// answer, the new strategies given `1/m` and `1/n` as PSRO does: certified like a cold solve,
/// with the same value within the tolerance.
fn assert_warm_solves(a: &Array2<f64>, k: usize, l: usize) -> Result<(), TestCaseError> {
    let (m, n) = a.dim();
    let (k, l) = (k.clamp(1, m), l.clamp(1, n));
    let block = NormalFormGame::zero_sum(Array2::from_shape_fn((k, l), |(i, j)| a[[i, j]])).unwrap();
    let lp = LpNash::default().with_warm_starts_from(1);
    let before = lp.solve_from(&block, &[vec![1.0; k], vec![1.0; l]]).unwrap().strategies;
    let start = vec![
        Solution::extend_start(&before[..1], &[m], 1.0 / m as f64).remove(0),
        Solution::extend_start(&before[1..], &[n], 1.0 / n as f64).remove(0),
    ];
    let game = NormalFormGame::zero_sum(a.clone()).unwrap();
    let warm = lp.solve_zero_sum_from(&game, &start);
    let cold = LpNash::default().solve_zero_sum(&game).unwrap();
    if let Ok(w) = &warm {
        let tol = tolerance(a);
        prop_assert!((w.value - cold.value).abs() <= 2.0 * tol, "warm value {} cold {}", w.value, cold.value);
    }
    assert_certified(a, warm)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// PSRO's step: a game grown by some rows and columns, warm-started from the smaller
    /// game's equilibrium.
    #[test]
    fn warm_starts_certify_on_grown_games_of_near_duplicates(
        a in duplicated_games(),
        k in 1usize..40,
        l in 1usize..40,
    ) {
        assert_warm_solves(&a, k, l)?;
    }

    /// A start unrelated to the game (any positive weights): the warm answer still certifies
    /// (through the cold stages when the double oracle from it does not).
    #[test]
    fn warm_starts_from_any_start_certify(
        a in duplicated_games(),
        weights in prop::collection::vec(0.0..1.0f64, 64),
    ) {
        let (m, n) = a.dim();
        let pick = |len: usize, offset: usize| -> Vec<f64> {
            let mut s: Vec<f64> = (0..len).map(|i| weights[(i + offset) % weights.len()]).collect();
            s[0] += 1e-3;
            s
        };
        let start = vec![pick(m, 0), pick(n, 7)];
        let game = NormalFormGame::zero_sum(a.clone()).unwrap();
        assert_certified(&a, LpNash::default().with_warm_starts_from(1).solve_zero_sum_from(&game, &start))?;
    }
}

/// Every real PSRO meta-game of the corpus replayed as PSRO grows it, by one solver warm
/// from the first step on: each leading block, warm-started from the last one's answer (and
/// from what the solver remembers of it), certifies; on the Leduc files the remembered
/// subgames take fewer pivots than the cold solves (and under half on the PSRO-nash file),
/// each on a tableau the size of a subgame rather than of the game.
#[test]
fn warm_starts_certify_along_the_real_psro_meta_games() {
    for (file, game) in two_player_corpus() {
        let a = game.matrix(0).unwrap().to_owned();
        let last = a.nrows().min(a.ncols());
        let lp = LpNash::default().with_warm_starts_from(1);
        let mut previous: Option<Vec<Vec<f64>>> = None;
        let (mut warm_pivots, mut cold_pivots) = (0, 0);
        for t in 1..=last {
            let step = NormalFormGame::zero_sum(Array2::from_shape_fn((t, t), |(i, j)| a[[i, j]])).unwrap();
            let solved = match previous.take() {
                None => lp.solve(&step),
                Some(before) => {
                    lp.solve_from(&step, &Solution::extend_start(&before, &[t, t], 1.0 / t as f64))
                }
            }
            .unwrap_or_else(|e| panic!("{file} at {t}: {e}"));
            assert_eq!(solved.status, Status::Solved, "{file} at {t}");
            let scale = step.payoff_scale();
            assert!(
                solved.certificate.nash_conv <= 1e-9 * scale,
                "{file} at {t}: {:e}",
                solved.certificate.nash_conv
            );
            warm_pivots += solved.iterations;
            cold_pivots += LpNash::default().solve(&step).unwrap().iterations;
            previous = Some(solved.strategies);
        }
        // PSRO-nash builds the meta-games the memory is for; the others' equilibria move more.
        let factor = if file == "leduc_nash.nfg" { 2 } else { 1 };
        if file.starts_with("leduc") {
            assert!(
                factor * warm_pivots < cold_pivots,
                "{file}: warm {warm_pivots} pivots, cold {cold_pivots}"
            );
        }
    }
}

/// The `nash` chain keeps one LP between solves: replayed along the Leduc PSRO-nash
/// meta-game from the LP's warm-start size on, one `Nash` (which remembers the last
/// subgame's tableau) takes fewer pivots than a fresh `Nash` per step (which has only the
/// start to go on), and every answer of both certifies.
#[test]
fn nash_remembers_its_lp_between_warm_solves() {
    let (_, game) = two_player_corpus().into_iter().find(|(file, _)| file == "leduc_nash.nfg").unwrap();
    let a = game.matrix(0).unwrap().to_owned();
    let step =
        |t: usize| NormalFormGame::zero_sum(Array2::from_shape_fn((t, t), |(i, j)| a[[i, j]])).unwrap();
    let kept = Nash::default();
    let (mut kept_pivots, mut fresh_pivots) = (0, 0);
    let mut previous = Nash::default().solve(&step(LpNash::WARM_FROM - 1)).unwrap().strategies;
    for t in LpNash::WARM_FROM..=a.nrows().min(a.ncols()) {
        let game = step(t);
        let start = Solution::extend_start(&previous, &[t, t], 1.0 / t as f64);
        let remembered = kept.solve_from(&game, &start).unwrap();
        let fresh = Nash::default().solve_from(&game, &start).unwrap();
        for s in [&remembered, &fresh] {
            assert_eq!(s.status, Status::Solved, "at {t}");
            assert!(s.certificate.nash_conv <= 1e-9 * game.payoff_scale(), "at {t}: {:?}", s.certificate);
        }
        kept_pivots += remembered.iterations;
        fresh_pivots += fresh.iterations;
        previous = remembered.strategies;
    }
    assert!(kept_pivots < fresh_pivots, "remembered {kept_pivots} pivots, fresh {fresh_pivots}");
}

/// What a solver remembers goes through a checkpoint bit for bit: a second solver given the
/// first one's memory (through JSON) halfway along the Leduc PSRO-nash meta-game gives the
/// same answers, bit for bit, as the first from there on; a memory that does not fit the
/// game is refused with one line.
#[test]
fn a_restored_memory_solves_as_the_remembering_solver() {
    let (_, game) = two_player_corpus().into_iter().find(|(file, _)| file == "leduc_nash.nfg").unwrap();
    let a = game.matrix(0).unwrap().to_owned();
    let step =
        |t: usize| NormalFormGame::zero_sum(Array2::from_shape_fn((t, t), |(i, j)| a[[i, j]])).unwrap();
    let (first, second) = (Nash::default(), Nash::default());
    let mut previous = first.solve(&step(LpNash::WARM_FROM - 1)).unwrap().strategies;
    let middle = 110;
    for t in LpNash::WARM_FROM..=middle + 20 {
        let game = step(t);
        let start = Solution::extend_start(&previous, &[t, t], 1.0 / t as f64);
        let solved = first.solve_from(&game, &start).unwrap();
        if t > middle {
            let again = second.solve_from(&game, &start).unwrap();
            assert_eq!(again, solved, "at {t}");
        }
        if t == middle {
            let memory = first.memory().expect("a warm solve remembers");
            let text = serde_json::to_string(&memory).unwrap();
            second.restore_memory(&game, &serde_json::from_str(&text).unwrap()).unwrap();
            // A smaller game cannot hold the remembered one.
            let err = second.restore_memory(&step(10), &memory).unwrap_err().to_string();
            assert!(err.contains("does not fit") && !err.contains('\n'), "{err}");
            second.restore_memory(&game, &memory).unwrap();
        }
        previous = solved.strategies;
    }
}

#[test]
fn a_warm_start_of_the_wrong_shape_is_an_error() {
    let game = NormalFormGame::zero_sum(ndarray::array![[0., 1.], [1., 0.]]).unwrap();
    for start in
        [vec![vec![1.0, 0.0]], vec![vec![1.0], vec![0.5, 0.5]], vec![vec![-1.0, 2.0], vec![0.5, 0.5]]]
    {
        let e = LpNash::default().solve_from(&game, &start).unwrap_err();
        assert!(matches!(e, metagame::solvers::SolveError::InvalidConfig { .. }), "{e}");
    }
}

#[test]
fn constant_and_all_equal_games_are_solved_exactly() {
    for a in [
        Array2::from_elem((1, 1), 3.0),
        Array2::from_elem((40, 17), -2.5),
        Array2::from_elem((5, 60), 1e-300),
    ] {
        let s = LpNash::default().solve_zero_sum(&NormalFormGame::zero_sum(a.clone()).unwrap()).unwrap();
        assert_eq!(s.solution.status, Status::Solved);
        assert_eq!(s.solution.certificate.nash_conv, 0.0);
        assert_eq!(s.value, a[[0, 0]]);
    }
}

#[test]
fn payoffs_near_the_f64_limit_are_rescaled() {
    let a = ndarray::array![[f64::MAX, -f64::MAX, 0.0], [-f64::MAX, f64::MAX, 0.0], [0.0, 0.0, -f64::MAX]];
    let s = LpNash::default().solve_zero_sum(&NormalFormGame::zero_sum(a).unwrap()).unwrap();
    assert_eq!(s.solution.status, Status::Solved);
    assert!(s.solution.certificate.nash_conv.is_finite());
    assert!(s.solution.certificate.nash_conv <= 64.0 * f64::EPSILON * f64::MAX);
    assert!((s.solution.strategies[0][0] - 0.5).abs() < 1e-12);
}

/// The 2-player files of the real PSRO corpus (tests/fixtures/meta_games/).
fn two_player_corpus() -> Vec<(String, NormalFormGame)> {
    crate::meta_game_corpus::corpus().into_iter().filter(|(_, g)| g.num_players() == 2).collect()
}

#[test]
fn lp_solves_the_real_psro_meta_games() {
    let corpus = two_player_corpus();
    assert!(corpus.len() >= 8, "the corpus has {} two-player files", corpus.len());
    for (file, game) in corpus {
        let s = LpNash::default().solve(&game).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(s.status, Status::Solved, "{file}");
        assert!(
            s.certificate.nash_conv <= 1e-9 * game.payoff_scale(),
            "{file}: NashConv {:e}",
            s.certificate.nash_conv
        );
        assert!(s.certificate.primal_dual_gap.unwrap() <= 1e-9 * game.payoff_scale(), "{file}");
    }
}

/// The meta-game of a 300-iteration Leduc PSRO-nash run ("301": the responses of 301
/// iterations; 245 × 236 distinct members), 300 iterations past convergence, the population
/// grown by near-duplicates of the equilibrium's responses. At 2.3 MB it is not committed:
/// the test makes it with the CLI, with the config of `scripts/make-meta-game-corpus.sh
/// --leduc-301` (about 9 s in release; the solve itself takes milliseconds). Its value is
/// Leduc's game value −0.0856064… (OpenSpiel 2.0.2's sequence-form LP).
#[test]
fn lp_solves_the_301_strategy_leduc_meta_game() {
    use crate::cli::{metagame, temp_dir};
    let dir = temp_dir("leduc-nash-301");
    let config = dir.join("leduc_nash_301.toml");
    std::fs::write(
        &config,
        "game = \"leduc_poker\"\nalgorithm = \"psro\"\nmeta_solver = \"nash\"\nevaluator = \"exact\"\n\
         max_iterations = 300\nseed = 0\noracle = \"exact-br-trembling\"\ntremble = 1e-2\n\
         convergence_tolerance = 0\n",
    )
    .unwrap();
    let run = dir.join("run");
    let out = metagame(&["run", config.to_str().unwrap(), "--out", run.to_str().unwrap(), "--overwrite"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let game = nfg::read_nfg(&run.join("meta_game.nfg")).unwrap();
    // 301 responses per player, repeats not added again: 245 × 236 members.
    assert!(game.num_strategies(0) > 200 && game.num_strategies(1) > 200, "{:?}", game.shape());
    let s = LpNash::default().solve_zero_sum(&game).unwrap();
    assert_eq!(s.solution.status, Status::Solved);
    assert!(s.solution.certificate.nash_conv <= 1e-9 * game.payoff_scale(), "{:?}", s.solution.certificate);
    assert!((s.value + 0.0856064240).abs() < 1e-6, "value {}", s.value);
}
