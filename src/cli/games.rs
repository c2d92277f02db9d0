//! `metagame games`: every registered game with its parameters, their defaults and the values they take.

use metagame::games::registry;

use super::outln;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    for game in registry::games() {
        outln!("{:<22} {}", game.name, game.about);
        for p in game.params {
            outln!("  {:<20} {} (default {}, {})", p.name, p.about, p.format(p.default), p.accepted());
        }
    }
    Ok(())
}
