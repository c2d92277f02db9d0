//! Every solver on every real PSRO meta-game of the corpus (tests/fixtures/meta_games/, made
//! by scripts/make-meta-game-corpus.sh): degenerate games full of near-duplicate strategies,
//! where solvers that pass every random test used to break.
//!
//! Exact solvers must end `solved` with NashConv ≤ 1e-9 × the payoff scale. Every other
//! solver must return distributions with a finite certificate and an honest status: `solved`
//! only with a certificate within tolerance.

use std::path::PathBuf;

use metagame::games::{NormalFormGame, nfg};
use metagame::populations::meta::Nash;
use metagame::solvers::registry::{SOLVER_NAMES, solver_by_name};
use metagame::solvers::{MetaSolver, Solution, Status};

fn corpus() -> Vec<(String, NormalFormGame)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/meta_games");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "nfg"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "the corpus has {} files", files.len());
    files
        .into_iter()
        .map(|p| (p.file_name().unwrap().to_string_lossy().into_owned(), nfg::read_nfg(&p).unwrap()))
        .collect()
}

fn tolerance(game: &NormalFormGame) -> f64 {
    1e-9 * game.payoff_scale()
}

/// A certified equilibrium: solved, distributions, NashConv within tolerance.
fn assert_certified(file: &str, solver: &str, game: &NormalFormGame, s: &Solution) {
    assert!(s.is_distribution(1e-9), "{file}: {solver} returned a non-distribution");
    assert_eq!(s.status, Status::Solved, "{file}: {solver} ended {:?}", s.status);
    assert!(
        s.certificate.nash_conv <= tolerance(game),
        "{file}: {solver} NashConv {:e}",
        s.certificate.nash_conv
    );
}

/// Whatever a solver answers, it is a distribution with a finite certificate, and `solved`
/// only when its own claim holds: a Nash gap within tolerance for Nash solvers, the
/// (coarse) correlated constraints for CE/CCE, a stationary distribution for alpha-Rank.
fn assert_honest(file: &str, solver: &str, game: &NormalFormGame, s: &Solution) {
    assert!(s.is_distribution(1e-9), "{file}: {solver} returned a non-distribution");
    assert!(s.certificate.nash_conv.is_finite(), "{file}: {solver} certificate {:?}", s.certificate);
    if s.status != Status::Solved {
        return;
    }
    if let Some(violation) = s.certificate.max_violation {
        assert!(
            violation <= 1e-6 * game.payoff_scale(),
            "{file}: {solver} says solved at violation {violation:e}"
        );
    } else if !s.stationary.is_empty() {
        for pi in &s.stationary {
            assert!(pi.iter().all(|&p| p >= -1e-12), "{file}: {solver} stationary has negative mass");
            assert!((pi.iter().sum::<f64>() - 1.0).abs() <= 1e-9, "{file}: {solver} stationary sum");
        }
    } else {
        assert!(
            s.certificate.nash_conv <= 1e-6 * game.payoff_scale(),
            "{file}: {solver} says solved at NashConv {:e}",
            s.certificate.nash_conv
        );
    }
}

#[test]
fn exact_two_player_solvers_certify_every_corpus_game() {
    for (file, game) in corpus().iter().filter(|(_, g)| g.num_players() == 2) {
        let zero_sum = game.constant_sum(1e-9 * game.payoff_scale()).is_some();
        let mut solvers = vec!["lemke-howson"];
        if zero_sum {
            solvers.push("lp");
        }
        for name in solvers {
            let solution = solver_by_name(name, None).unwrap().solve(game).unwrap();
            assert_certified(file, name, game, &solution);
        }
        assert_certified(file, "nash", game, &Nash.solve(game).unwrap());
    }
}

#[test]
fn nash_certifies_every_n_player_corpus_game() {
    for (file, game) in corpus().iter().filter(|(_, g)| g.num_players() > 2) {
        assert_certified(file, "logit", game, &solver_by_name("logit", None).unwrap().solve(game).unwrap());
        assert_certified(file, "nash", game, &Nash.solve(game).unwrap());
    }
}

#[test]
fn every_registered_solver_is_honest_on_every_corpus_game() {
    for (file, game) in corpus() {
        for &name in SOLVER_NAMES {
            let solver = solver_by_name(name, None).unwrap();
            let solutions = match solver.solve(&game) {
                Ok(s) => vec![s],
                // A solver for another kind of game (e.g. 2-player only) must say so, not fail.
                Err(metagame::solvers::SolveError::Unsupported { .. }) => continue,
                Err(e) => panic!("{file}: {name} failed: {e}"),
            };
            for s in &solutions {
                assert_honest(&file, name, &game, s);
            }
        }
    }
}
