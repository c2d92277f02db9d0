//! Every solver on every real PSRO meta-game of the corpus (tests/fixtures/meta_games/, made
//! by scripts/make-meta-game-corpus.sh): degenerate games full of near-duplicate strategies,
//! where solvers that pass every random test used to break.
//!
//! Exact solvers must end `solved` with NashConv ≤ 1e-9 × the payoff scale. Every other
//! solver must return distributions with a finite certificate and an honest status: `solved`
//! only with a certificate within tolerance.

use std::path::PathBuf;

use rayon::prelude::*;

use metagame::games::{NormalFormGame, nfg};
use metagame::registry::{meta_solver, meta_solvers};
use metagame::solvers::nash::Nash;
use metagame::solvers::{MetaSolver, Solution, Status};

/// Every file of the corpus, sorted by name, read.
pub(crate) fn corpus() -> Vec<(String, NormalFormGame)> {
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
    if solver == "uniform" {
        // Its claim is the uniform mixture (fictitious self-play), not an equilibrium.
        for (p, strategy) in s.strategies.iter().enumerate() {
            let k = game.num_strategies(p) as f64;
            assert!(strategy.iter().all(|&x| (x - 1.0 / k).abs() <= 1e-15), "{file}: uniform");
        }
    } else if let Some(violation) = s.certificate.max_violation {
        assert!(
            violation <= 1e-6 * game.payoff_scale(),
            "{file}: {solver} says solved at violation {violation:e}"
        );
    } else if let Some(stationary) = s.stationary() {
        for pi in stationary {
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
            let solution = meta_solver(name, None).unwrap().solve(game).unwrap();
            assert_certified(file, name, game, &solution);
        }
        assert_certified(file, "nash", game, &Nash::default().solve(game).unwrap());
    }
}

#[test]
fn nash_certifies_every_n_player_corpus_game() {
    for (file, game) in corpus().iter().filter(|(_, g)| g.num_players() > 2) {
        assert_certified(file, "logit", game, &meta_solver("logit", None).unwrap().solve(game).unwrap());
        assert_certified(file, "nash", game, &Nash::default().solve(game).unwrap());
    }
}

/// Support pairs or bases an enumeration may visit per file: enumerating every equilibrium
/// of a degenerate 100×100 meta-game is exponential, so here the enumerations must end with
/// an honest status under a cap rather than finish (at 2 000, support enumeration took
/// 25 s on leduc_nash.nfg alone, `metagame solve --iterations`, 2-core EPYC under load).
const ENUMERATION_CAP: usize = 500;

/// Path steps for `logit` on 2-player files: its steps cost the cube of the strategy count,
/// so on a 151×151 meta-game it runs about a minute (LP and Lemke–Howson certify those in
/// well under a second, and `nash` uses them); capped, it must still answer honestly (at
/// 200 steps leduc_nash.nfg took 49 s, 2-core EPYC under load).
const LOGIT_TWO_PLAYER_CAP: usize = 50;

/// Iterations of the iterative solvers: their status and certificate are what is checked,
/// and a tenth of their default run keeps the whole corpus pass short.
const ITERATIVE_CAP: usize = 10_000;

/// CE/CCE are an LP / QP with one variable per joint profile, and on these 2-player files
/// clarabel takes over 60 s per solve (`metagame solve F --solver ce`, measured on the
/// 61×61 Leduc RM file and every 101×101 and 151×151 file; CCE 7–11 s on some), too long for
/// CI; so are CE (27 s) and CCE (10 s) on kuhn3_uniform.nfg. They run on the other files
/// (the Kuhn Nash file and two of the three 3-player files).
const CORRELATED_TOO_SLOW: &[&str] = &[
    "kuhn3_uniform.nfg",
    "kuhn_prd.nfg",
    "kuhn_rm.nfg",
    "kuhn_uniform.nfg",
    "leduc_nash.nfg",
    "leduc_prd.nfg",
    "leduc_rm.nfg",
    "leduc_uniform.nfg",
];

#[test]
fn every_registered_solver_is_honest_on_every_corpus_game() {
    corpus().into_par_iter().for_each(|(file, game)| {
        for registered in meta_solvers() {
            let name = registered.name;
            let cap = match name {
                "support-enumeration" | "vertex-enumeration" => Some(ENUMERATION_CAP),
                "logit" if game.num_players() == 2 => Some(LOGIT_TWO_PLAYER_CAP),
                "fictitious-play" | "rm" | "rm+" | "hedge" | "replicator" | "prd" => Some(ITERATIVE_CAP),
                "ce" | "cce" if CORRELATED_TOO_SLOW.contains(&file.as_str()) => continue,
                _ => None,
            };
            let solver = meta_solver(name, cap).unwrap();
            let solution = match solver.solve(&game) {
                Ok(s) => s,
                // A solver for another kind of game (e.g. 2-player only) must say so, not fail.
                Err(metagame::solvers::SolveError::Unsupported { .. }) => continue,
                Err(e) => panic!("{file}: {name} failed: {e}"),
            };
            assert_honest(&file, name, &game, &solution);
        }
    });
}
