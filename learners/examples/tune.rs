//! Gap of a learner's response to the exact best response on one game, for tuning:
//! `cargo run --release -p metagame-learners --example tune -- GAME LEARNER EPISODES ACTOR_LR EPS_POWER`.
#![allow(clippy::print_stdout)]

use metagame_games::{GameTree, TabularPolicy, best_response, expected_returns, registry};
use metagame_learners::{
    ActorCritic, ActorCriticConfig, Learner, OpponentSampler, QLearner, QLearningConfig, Schedule, Start,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let tree = GameTree::build(&registry::load(&args[1])?)?;
    let episodes: u64 = args[3].parse()?;
    let lr: f64 = args.get(4).map_or(Ok(1.0), |a| a.parse())?;
    let power: f64 = args.get(5).map_or(Ok(0.5), |a| a.parse())?;
    let opp = TabularPolicy::uniform(&tree);
    for seat in 0..2 {
        let mut gaps = Vec::new();
        for seed in 0..5 {
            let mut learner: Box<dyn Learner> = if args[2] == "q" {
                let mut c = QLearningConfig::default();
                c.epsilon = Schedule::PerVisit { power, floor: 0.01 };
                Box::new(QLearner::new(&tree, seat, seed, c, Start::Fresh)?)
            } else {
                let mut c = ActorCriticConfig::default();
                c.actor_step_size = Schedule::constant(lr);
                c.epsilon = Schedule::PerVisit { power, floor: 0.0 };
                Box::new(ActorCritic::new(&tree, seat, seed, c, Start::Fresh)?)
            };
            learner.train(&tree, &OpponentSampler::fixed(&opp), episodes)?;
            let mut profile = vec![&opp; 2];
            let (_, best) = best_response(&tree, seat, &profile)?;
            let p = learner.policy();
            profile[seat] = &p;
            gaps.push(best - expected_returns(&tree, &profile)?[seat]);
        }
        println!("seat {seat}: {:?}", gaps.iter().map(|g| format!("{g:.4}")).collect::<Vec<_>>());
    }
    Ok(())
}
