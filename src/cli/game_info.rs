//! `metagame game-info --game SPEC [--max-nodes N] [--json]`: the size of a game's tree
//! (counted in the tree when it fits the node limit, estimated without building it when it
//! does not), its players, actions, whether it has perfect recall, and the tensor its
//! policies read.

use metagame::games::{Game, GameTree, InfosetId, NodeKind, PlayerId, TensorKind};
use serde_json::json;

use super::args::TreeLimit;
use super::output::outln;

#[derive(clap::Args)]
pub struct Args {
    /// OpenSpiel-style game string, e.g. `kuhn_poker(players=3)`.
    #[arg(long)]
    game: String,
    #[command(flatten)]
    limit: TreeLimit,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let loaded = args.limit.load(&args.game)?;
    let game = loaded.game();
    let tensor = game.tensor_shape();
    let tensor_json = tensor.as_ref().map(|t| json!({ "kind": t.kind, "dims": t.dims }));
    let tensor_text = match &tensor {
        Some(t) => {
            let kind = match t.kind {
                TensorKind::InformationState => "information state",
                TensorKind::Observation => "observation",
            };
            format!("{kind} {:?} ({} values)", t.dims, t.size())
        }
        None => "none (networks cannot play it)".into(),
    };
    let Some(tree) = loaded.arena().game_tree() else {
        if args.json {
            super::output::print_json(&json!({
                "game": game.name(),
                "num_players": game.num_players(),
                "tree_built": false,
                "tree_size": loaded.size(),
                "max_nodes": loaded.max_nodes(),
                "num_distinct_actions": game.num_distinct_actions(),
                "utility_sum": game.utility_sum(),
                "tensor": tensor_json,
            }));
        } else {
            outln!("game                 {}", game.name());
            outln!("players              {}", game.num_players());
            outln!("histories            {}", loaded.size());
            outln!(
                "tree                 not built: more than the limit of {} nodes (--max-nodes); matches play it by rollouts",
                loaded.max_nodes()
            );
            outln!("distinct actions     {}", game.num_distinct_actions());
            outln!("tensor               {tensor_text}");
        }
        return Ok(());
    };
    let infosets: Vec<usize> = (0..tree.num_players()).map(|p| tree.infosets_of(PlayerId(p)).len()).collect();
    let sequences: Vec<usize> = (0..tree.num_players())
        .map(|p| tree.infosets_of(PlayerId(p)).map(|i| tree.legal_actions(InfosetId(i)).len()).sum())
        .collect();
    if args.json {
        super::output::print_json(&json!({
            "game": game.name(),
            "num_players": tree.num_players(),
            "tree_built": true,
            "num_histories": tree.num_nodes(),
            "num_terminals": tree.num_terminals(),
            "num_decision_nodes": tree.count(NodeKind::Decision),
            "num_chance_nodes": tree.count(NodeKind::Chance),
            "infosets_per_player": infosets,
            "infoset_actions_per_player": sequences,
            "num_distinct_actions": tree.num_actions(),
            "utility_sum": tree.utility_sum(),
            "perfect_recall": tree.has_perfect_recall(),
            "imperfect_recall_infosets": tree.num_imperfect_recall_infosets(),
            "tensor": tensor_json,
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
        let recall = if tree.has_perfect_recall() { "perfect".into() } else { imperfect_recall_line(tree) };
        outln!("recall               {recall}");
        outln!("tensor               {tensor_text}");
    }
    Ok(())
}

/// What the commands print of a tree without perfect recall, on one line.
pub(super) fn imperfect_recall_line(tree: &GameTree) -> String {
    format!(
        "imperfect: {} of {} information states are reached with different own histories; best responses are OpenSpiel's, per information-state string",
        tree.num_imperfect_recall_infosets(),
        tree.num_infosets()
    )
}
