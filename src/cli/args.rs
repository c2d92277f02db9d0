//! The arguments several subcommands take: the node limit of the trees they build
//! ([`TreeLimit`]) and the policies they read ([`read_policy`], [`read_table`]).

use std::path::Path;

use anyhow::Context;
use metagame::LoadedGame;
use metagame::games::{Arena, GameTree, Policy, TabularPolicy};

/// The node limit of the game trees a command builds (`--max-nodes`).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct TreeLimit {
    /// The most nodes of a game tree the command builds; a game past it is played by
    /// rollouts on its states, and work that needs the tree says so. About 250 bytes a node.
    #[arg(long, value_name = "N", default_value_t = GameTree::DEFAULT_MAX_NODES as u64)]
    pub max_nodes: u64,
}

impl TreeLimit {
    /// `spec`, its tree built where it fits the limit.
    pub fn load(self, spec: &str) -> anyhow::Result<LoadedGame> {
        Ok(LoadedGame::load(spec, self.max_nodes)?)
    }
}

/// A policy of `arena`'s game, as the registry's policy kinds read it: `uniform`,
/// `first-action`, `minimax` (games of perfect information), an OpenSpiel policy JSON file.
/// A JSON file none of whose information states the game has is named as a policy of
/// another game.
pub fn read_policy(arena: Arena<'_>, spec: &str) -> anyhow::Result<Box<dyn Policy>> {
    metagame::registry::policy(arena, spec).map_err(|e| {
        let unknown = matches!(e, metagame::Error::Game(metagame::games::Error::UnknownInfoState(_)));
        let what = match arena.game_tree() {
            Some(tree) if unknown && !shares_an_infoset(tree, Path::new(spec)) => {
                format!("{spec} is not a policy of {}", tree.name())
            }
            _ => format!("reading policy {spec}"),
        };
        anyhow::Error::new(e).context(what)
    })
}

/// A policy as a table over `tree` (read as [`read_policy`], tabulated when it is not one):
/// for the commands that run the tabular algorithms.
pub fn read_table(tree: &GameTree, spec: &str) -> anyhow::Result<TabularPolicy> {
    let policy = read_policy(Arena::tree(tree), spec)?;
    TabularPolicy::tabulate(tree, policy.as_ref()).with_context(|| format!("tabulating policy {spec}"))
}

/// An evaluator's error with the policy it names given by its spec.
pub fn name_policy(e: metagame::games::Error, specs: &[String]) -> anyhow::Error {
    let name = match &e {
        metagame::games::Error::PolicyFailed { policy, .. } => specs.get(*policy).cloned(),
        _ => None,
    };
    match name {
        Some(spec) => anyhow::Error::new(e).context(format!("policy {spec}")),
        None => e.into(),
    }
}

/// True when the policy file has at least one of `tree`'s information states.
fn shares_an_infoset(tree: &GameTree, file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else { return true };
    let Ok(serde_json::Value::Object(states)) = serde_json::from_str(&text) else { return true };
    states.keys().any(|key| tree.infoset_by_key(key).is_some())
}
