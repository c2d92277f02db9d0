//! PPO's training throughput (issue 39's speed figures): the `ppo` learner at its defaults
//! trained for one seat against uniform play, on each game given, as PSRO trains it (on the
//! tree where the game's tree is built, on the states otherwise). Prints one JSON line per
//! game: learner decisions (environment steps of the seat), seconds, steps per second, and
//! the seconds spent in rollouts, gradients and the optimiser.
//! `benches/peers/ppo_throughput.py` runs it beside a CleanRL-style PPO in PyTorch.
//!
//! ```sh
//! cargo run --release --example ppo_throughput -- [EPISODES] [GAMES]
//! ```

use std::io::Write as _;
use std::time::Instant;

use metagame::LoadedGame;
use metagame::games::{Cutoff, SeatMixture, Uniform};
use metagame::learners::LearnerChoice;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let episodes: u64 = args.first().map_or(Ok(20_000), |s| s.parse())?;
    let games: Vec<&str> =
        args.get(1).map_or_else(|| vec!["leduc_poker", "connect_four"], |g| g.split(',').collect());
    let learner = LearnerChoice::defaults("ppo")?;
    for game in games {
        let loaded = LoadedGame::load(game, 1_000_000)?;
        let arena = loaded.arena();
        let opponents =
            [SeatMixture { seat: 1, members: vec![(&Uniform as &dyn metagame::games::Policy, 1.0)] }];
        let mut trainer =
            learner.config().build_network(arena, 0, 0, None).ok_or("ppo trains networks")??;
        let started = Instant::now();
        trainer.train_in(arena, &opponents, episodes, &Cutoff::never())?;
        let seconds = started.elapsed().as_secs_f64();
        let steps = trainer.stats().steps;
        let phases = trainer.phase_seconds().unwrap_or_default();
        let line = serde_json::json!({
                "game": game,
                "tree": arena.game_tree().is_some(),
                "episodes": trainer.stats().episodes,
                "steps": steps,
                "seconds": seconds,
                "steps_per_second": steps as f64 / seconds,
                "rollouts_s": phases.rollouts,
                "gradients_s": phases.gradients,
                "optimiser_s": phases.optimiser,
                "mean_return": trainer.stats().mean_return(),
        });
        writeln!(std::io::stdout(), "{line}")?;
    }
    Ok(())
}
