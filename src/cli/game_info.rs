//! `metagame game-info --game SPEC [--json]`.

use anyhow::Context;
use metagame::games::{Game, GameTree, NodeKind, PlayerId, registry};
use serde_json::json;

use super::outln;

#[derive(clap::Args)]
pub struct Args {
    /// OpenSpiel-style game string, e.g. `kuhn_poker(players=3)`.
    #[arg(long)]
    game: String,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let game = registry::load(&args.game)?;
    let tree = GameTree::build(&game).with_context(|| format!("building the tree of {}", args.game))?;
    let infosets: Vec<usize> = (0..tree.num_players()).map(|p| tree.infosets_of(PlayerId(p)).len()).collect();
    let sequences: Vec<usize> = (0..tree.num_players())
        .map(|p| {
            tree.infosets_of(PlayerId(p))
                .map(|i| tree.legal_actions(metagame::games::InfosetId(i)).len())
                .sum()
        })
        .collect();
    if args.json {
        super::print_json(&json!({
            "game": game.name(),
            "num_players": tree.num_players(),
            "num_histories": tree.num_nodes(),
            "num_terminals": tree.num_terminals(),
            "num_decision_nodes": tree.count(NodeKind::Decision),
            "num_chance_nodes": tree.count(NodeKind::Chance),
            "infosets_per_player": infosets,
            "infoset_actions_per_player": sequences,
            "num_distinct_actions": tree.num_actions(),
            "utility_sum": tree.utility_sum(),
        }));
    } else {
        outln!("game                 {}", game.name());
        outln!("players              {}", tree.num_players());
        outln!("histories            {}", tree.num_nodes());
        outln!("terminals            {}", tree.num_terminals());
        outln!("decision nodes       {}", tree.count(NodeKind::Decision));
        outln!("chance nodes         {}", tree.count(NodeKind::Chance));
        outln!("infosets per player  {infosets:?}");
        outln!("infoset-actions      {sequences:?}");
        outln!("distinct actions     {}", tree.num_actions());
    }
    Ok(())
}
