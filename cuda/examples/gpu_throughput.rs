//! Leduc poker, uniform against uniform: episodes per second on the GPU and on 2 CPU
//! threads, their ratio, and a check that both draw identical totals. Then connect four
//! between two frozen networks (126 → 64 → 64 → 7, the league example's shape): network
//! rollouts per second with the networks on cuBLAS, against the CPU's rollouts on 2 threads
//! and on every core, and the two means side by side.
//!
//! `cargo run --release -p metagame-cuda --example gpu_throughput` (scripts/gpu-check.sh).

#![allow(missing_docs, clippy::print_stdout)]

use std::time::Instant;

use metagame_cuda::GpuEvaluator;
use metagame_games::{
    Arena, GameTree, MatchEvaluator, MatchTotals, Matchup, Policy, RolloutEvaluator, SampledEvaluator,
    TabularPolicy, registry,
};
use metagame_networks::Mlp;

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
    networks(&gpu)
}

/// Episodes per second of `play(episodes)`, doubling from `start` episodes until a run takes
/// a second (or `most` episodes), with the last run's mean return of the first player.
fn rate(
    start: u64,
    most: u64,
    mut play: impl FnMut(u64) -> Result<Vec<MatchTotals>, Box<dyn std::error::Error>>,
) -> Result<(f64, u64, f64), Box<dyn std::error::Error>> {
    let mut episodes = start;
    loop {
        let begin = Instant::now();
        let totals = play(episodes)?;
        let seconds = begin.elapsed().as_secs_f64();
        if seconds >= 1.0 || episodes >= most {
            return Ok((episodes as f64 / seconds, episodes, totals[0].mean()[0]));
        }
        episodes *= 2;
    }
}

fn networks(gpu: &GpuEvaluator) -> Result<(), Box<dyn std::error::Error>> {
    let game = registry::load("connect_four")?;
    let arena = Arena::rules(&game);
    let (a, b) = (Mlp::random(&[126, 64, 64, 7], 1)?, Mlp::random(&[126, 64, 64, 7], 2)?);
    let policies: [&dyn Policy; 2] = [&a, &b];
    let matchups = [Matchup { seats: vec![0, 1] }];
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let cpu2 = RolloutEvaluator::new().with_threads(2);
    let cpu_all = RolloutEvaluator::new();
    let (cpu2_rate, cpu2_n, cpu2_mean) =
        rate(1 << 12, 1 << 20, |n| Ok(cpu2.evaluate(arena, &policies, &matchups, n, 3)?))?;
    let (all_rate, all_n, all_mean) =
        rate(1 << 12, 1 << 22, |n| Ok(cpu_all.evaluate(arena, &policies, &matchups, n, 3)?))?;
    gpu.evaluate(arena, &policies, &matchups, 1 << 12, 3)?; // networks uploaded, kernels warm
    let (gpu_rate, gpu_n, gpu_mean) =
        rate(1 << 12, 1 << 24, |n| Ok(gpu.evaluate(arena, &policies, &matchups, n, 3)?))?;
    println!("connect four, two networks 126-64-64-7 (mean return of the first seat in brackets):");
    println!("cpu (2 threads): {cpu2_rate:.3e} episodes/s ({cpu2_n} episodes) [{cpu2_mean:.4}]");
    println!("cpu ({cores} threads): {all_rate:.3e} episodes/s ({all_n} episodes) [{all_mean:.4}]");
    println!(
        "gpu (cuBLAS, {cores} threads stepping): {gpu_rate:.3e} episodes/s ({gpu_n} episodes) [{gpu_mean:.4}]"
    );
    println!("ratio gpu / cpu(2 threads): {:.1}", gpu_rate / cpu2_rate);
    println!("ratio gpu / cpu({cores} threads): {:.1}", gpu_rate / all_rate);
    Ok(())
}
