//! `metagame games [--max-nodes N]`: every registered game with its parameters, their
//! defaults and the values they take, and for the default and each example parameter set
//! the size of its tree and whether it can be built within the node limit (found without
//! building it).

use std::time::Duration;

use metagame::games::{registry, tree_size};

use super::args::TreeLimit;
use super::output::outln;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    limit: TreeLimit,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let limit = args.limit.max_nodes;
    for game in registry::games() {
        outln!("{:<22} {}", game.name, game.about);
        for p in game.params {
            outln!("  {:<20} {} (default {}, {})", p.name, p.about, p.format(p.default), p.accepted());
        }
        for spec in game.specs() {
            let loaded = registry::load(&spec)?;
            let size = tree_size(&loaded, limit, Duration::from_secs(2));
            let verdict =
                if size.fits(limit) { "tree can be built" } else { "tree too large: rollouts only" };
            outln!("  {spec:<40} {size}: {verdict}");
        }
    }
    outln!("(tree limit {limit} nodes: --max-nodes; game-info --game SPEC for any parameter set)");
    Ok(())
}
