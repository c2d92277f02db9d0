//! Replays the meta-game growth of a PSRO run and times the zero-sum LP on each step, cold
//! and warm-started from the previous step's answer, in one process: the fastest of five
//! cold solves of each step, and of five passes over the whole growth with a fresh solver
//! each (a warm solve remembers the last step's tableau, so it cannot be repeated alone).
//!
//! ```sh
//! cargo run --release --example warm_lp_replay -- RUN/meta_game.nfg
//! ```
//!
//! Step `t` is the leading `t × t` block of the run's final meta-game (PSRO adds one member
//! per player per iteration); the warm solve starts from step `t − 1`'s answer with the new
//! member given `1/t`, as PSRO's `warm_start` does.

use std::io::Write;
use std::time::Instant;

use metagame_games::{NormalFormGame, nfg};
use metagame_solvers::lp::LpNash;
use metagame_solvers::{MetaSolver, Solution};

/// Solves on a shared machine are preempted at random: each solve runs this many times and
/// the fastest counts.
const REPEATS: usize = 5;

/// `solve`'s answer and its fastest time of [`REPEATS`] runs.
fn fastest<T, E>(mut solve: impl FnMut() -> Result<T, E>) -> Result<(T, f64), E> {
    let mut best = f64::INFINITY;
    let mut answer = None;
    for _ in 0..REPEATS {
        let started = Instant::now();
        answer = Some(solve()?);
        best = best.min(started.elapsed().as_secs_f64());
    }
    // INVARIANT: REPEATS > 0.
    Ok((answer.expect("ran"), best))
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: warm_lp_replay META_GAME.nfg")?;
    let game = nfg::read_nfg(std::path::Path::new(&path))?;
    let a = game.matrix(0).ok_or("needs a two-player game")?;
    let last = a.nrows().min(a.ncols());
    let steps: Vec<NormalFormGame> = (1..=last)
        .map(|t| NormalFormGame::zero_sum(ndarray::Array2::from_shape_fn((t, t), |(i, j)| a[[i, j]])))
        .collect::<Result<_, _>>()?;
    // Warm starts at every size, to show where they pay.
    let lp = LpNash::default().with_warm_starts_from(1);
    let mut cold = Vec::with_capacity(last);
    for step in &steps {
        cold.push(fastest(|| lp.solve(step))?);
    }
    // Each pass replays the growth as PSRO does: step t starts from step t − 1's answer.
    let mut warm: Vec<(Solution, f64)> = Vec::with_capacity(last);
    for pass in 0..REPEATS {
        let lp = LpNash::default().with_warm_starts_from(1);
        let mut previous = cold[0].0.strategies.clone();
        for (t, step) in steps.iter().enumerate().skip(1) {
            let size = t + 1;
            let start = Solution::extend_start(&previous, &[size, size], 1.0 / size as f64);
            let started = Instant::now();
            let answer = lp.solve_from(step, &start)?;
            let took = started.elapsed().as_secs_f64();
            previous.clone_from(&answer.strategies);
            if pass == 0 {
                warm.push((answer, took));
            } else {
                warm[t - 1].1 = warm[t - 1].1.min(took);
            }
        }
    }
    let (mut cold_total, mut warm_total, mut differ) = (0.0, 0.0, 0);
    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "{:>5} {:>10} {:>10} {:>7} {:>12} {:>14}",
        "size", "cold ms", "warm ms", "ratio", "warm gap", "pivots c / w"
    )?;
    for (t, ((cold, cold_s), (warm, warm_s))) in cold.iter().skip(1).zip(&warm).enumerate() {
        let size = t + 2;
        cold_total += cold_s;
        warm_total += warm_s;
        if warm.strategies != cold.strategies {
            differ += 1;
        }
        if size % 25 == 0 || size == last || std::env::var("ALLSTEPS").is_ok() {
            writeln!(
                out,
                "{size:>5} {:>10.3} {:>10.3} {:>6.1}× {:>12.2e} {:>6} / {:<6}",
                1e3 * cold_s,
                1e3 * warm_s,
                cold_s / warm_s,
                warm.certificate.nash_conv,
                cold.iterations,
                warm.iterations
            )?;
        }
    }
    writeln!(
        out,
        "all steps: cold {cold_total:.3} s, warm {warm_total:.3} s ({:.1}×); warm answer differs from the cold one at {differ} of {} steps",
        cold_total / warm_total,
        last - 1
    )?;
    Ok(())
}
