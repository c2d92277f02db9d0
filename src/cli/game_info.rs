//! `metagame game-info --game SPEC [--json]`.

use anyhow::Context;
use metagame::games::{Game, GameTree, NodeKind, registry};
use serde_json::json;

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
    let infosets: Vec<usize> = (0..tree.num_players()).map(|p| tree.infosets_of(p).len()).collect();
    let sequences: Vec<usize> = (0..tree.num_players())
        .map(|p| tree.infosets_of(p).map(|i| tree.legal_actions(metagame::games::InfosetId(i)).len()).sum())
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
        println!("game                 {}", game.name());
        println!("players              {}", tree.num_players());
        println!("histories            {}", tree.num_nodes());
        println!("terminals            {}", tree.num_terminals());
        println!("decision nodes       {}", tree.count(NodeKind::Decision));
        println!("chance nodes         {}", tree.count(NodeKind::Chance));
        println!("infosets per player  {infosets:?}");
        println!("infoset-actions      {sequences:?}");
        println!("distinct actions     {}", tree.num_actions());
    }
    Ok(())
}
