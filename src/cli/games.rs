//! `metagame games`: every registered game with its parameters, their defaults and ranges.

use metagame::games::registry;

use super::outln;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> anyhow::Result<()> {
    for game in registry::games() {
        outln!("{:<22} {}", game.name, game.about);
        for p in game.params {
            outln!(
                "  {:<20} {} (default {}, {}..={})",
                p.name,
                p.about,
                p.default,
                p.range.start(),
                p.range.end()
            );
        }
    }
    Ok(())
}
