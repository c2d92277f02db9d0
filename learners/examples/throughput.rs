//! Training throughput on Leduc poker against uniform, for machines where criterion's wall
//! times are disturbed by other load (compare with the CPU time that `time` reports):
//! `cargo run --release -p metagame-learners --example throughput -- [q|ac] THREADS EPISODES`.
#![allow(clippy::print_stdout)]

use std::time::Instant;

use metagame_games::{GameTree, TabularPolicy, registry};
use metagame_learners::{
    ActorCritic, ActorCriticConfig, Learner, OpponentSampler, QLearner, QLearningConfig, Start,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let kind = args.get(1).map_or("q", String::as_str);
    let threads: usize = args.get(2).map_or(Ok(1), |a| a.parse())?;
    let episodes: u64 = args.get(3).map_or(Ok(10_000_000), |a| a.parse())?;
    let tree = GameTree::build(&registry::load("leduc_poker")?)?;
    let uniform = TabularPolicy::uniform(&tree);
    let mut learner: Box<dyn Learner> = if kind == "ac" {
        Box::new(ActorCritic::new(&tree, 0, 1, ActorCriticConfig::default(), Start::Fresh)?)
    } else {
        Box::new(QLearner::new(&tree, 0, 1, QLearningConfig::default(), Start::Fresh)?)
    };
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build()?;
    let start = Instant::now();
    pool.install(|| learner.train(&tree, &OpponentSampler::fixed(&uniform), episodes))?;
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "{} on {threads} thread(s): {episodes} episodes in {seconds:.3} s = {:.3} M episodes/s (wall)",
        learner.name(),
        episodes as f64 / seconds / 1e6
    );
    Ok(())
}
