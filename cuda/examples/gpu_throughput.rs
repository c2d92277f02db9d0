//! Leduc poker, uniform against uniform: episodes per second on the GPU and on 2 CPU
//! threads, their ratio, and a check that both draw identical totals.
//!
//! `cargo run --release -p metagame-cuda --example gpu_throughput` (scripts/gpu-check.sh).

#![allow(missing_docs, clippy::print_stdout)]

use std::time::Instant;

use metagame_cuda::GpuEvaluator;
use metagame_games::{GameTree, MatchEvaluator, Matchup, SampledEvaluator, TabularPolicy, registry};

fn main() -> std::process::ExitCode {
    match run() {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpu_throughput: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

fn run() -> Result<(), Box<dyn std::error::Error>> {
    let tree = GameTree::build(&registry::load("leduc_poker")?)?;
    let uniform = TabularPolicy::uniform(&tree);
    let policies = [&uniform];
    let matchups = [Matchup { seats: vec![0, 0] }];
    let gpu = GpuEvaluator::new()?;
    println!("device: {}", gpu.device_name());

    // Same seed, same totals (and the tree is uploaded here, outside the timed runs).
    let check = 1 << 22;
    let g = gpu.evaluate_tables(&tree, &policies, &matchups, check, 9)?;
    let c = SampledEvaluator::new().evaluate_tables(&tree, &policies, &matchups, check, 9)?;
    if g != c {
        return Err(format!("GPU and CPU totals differ: {g:?} vs {c:?}").into());
    }
    println!("identical totals on {check} episodes: {:?}", g[0].sums);

    let cpu = SampledEvaluator::new().with_threads(2);
    let cpu_episodes = 1u64 << 23;
    let start = Instant::now();
    cpu.evaluate_tables(&tree, &policies, &matchups, cpu_episodes, 1)?;
    let cpu_rate = cpu_episodes as f64 / start.elapsed().as_secs_f64();

    // Double the batch until one run takes a second (or 2^34 episodes).
    let mut episodes = 1u64 << 24;
    let gpu_rate = loop {
        let start = Instant::now();
        let t = gpu.evaluate_tables(&tree, &policies, &matchups, episodes, 1)?;
        let seconds = start.elapsed().as_secs_f64();
        assert_eq!(t[0].episodes, episodes);
        if seconds >= 1.0 || episodes >= 1 << 34 {
            break episodes as f64 / seconds;
        }
        episodes *= 2;
    };
    println!("cpu (2 threads): {cpu_rate:.3e} episodes/s ({cpu_episodes} episodes)");
    println!("gpu: {gpu_rate:.3e} episodes/s ({episodes} episodes)");
    println!("ratio gpu / cpu(2 threads): {:.1}", gpu_rate / cpu_rate);
    Ok(())
}
