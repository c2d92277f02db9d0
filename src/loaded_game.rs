//! `LoadedGame`: a registry game loaded for a command or a run, with its tree where the tree
//! fits the node limit, and its size known either way.

use std::time::Duration;

use metagame_games::{AnyGame, Arena, Game, GameTree, TreeSize, quick_tree_size, registry};

use crate::error::{Error, Result};

/// A game from a game string, its tree built where it fits within `max_nodes`.
///
/// # Examples
///
/// ```
/// use metagame::LoadedGame;
/// use metagame::games::GameTree;
///
/// let leduc = LoadedGame::load("leduc_poker", GameTree::DEFAULT_MAX_NODES as u64)?;
/// assert_eq!(leduc.tree("NashConv")?.num_nodes(), 9457);
/// let dice = LoadedGame::load("liars_dice(numdice=2)", GameTree::DEFAULT_MAX_NODES as u64)?;
/// assert!(dice.arena().game_tree().is_none());
/// let err = dice.tree("NashConv").unwrap_err().to_string();
/// assert!(err.starts_with("NashConv needs the game tree of liars_dice(numdice=2)"), "{err}");
/// assert!(err.contains("more than the limit of 10000000 nodes"), "{err}");
/// # Ok::<(), metagame::Error>(())
/// ```
#[derive(Debug)]
pub struct LoadedGame {
    game: AnyGame,
    tree: Option<GameTree>,
    size: TreeSize,
    max_nodes: u64,
    /// Why the tree was not built, when it fit but its build failed (an information state
    /// with two acting players or two lists of legal actions).
    build_error: Option<String>,
}

impl LoadedGame {
    /// The most time spent estimating a tree that the game cannot count (its probes take
    /// some 100 ms on the registry's largest games).
    const ESTIMATE_BUDGET: Duration = Duration::from_secs(2);

    /// Load `spec` and build its tree when the tree fits within `max_nodes` (counted by the
    /// game, or estimated by random probes and then built with the limit).
    ///
    /// # Errors
    ///
    /// Unknown games and bad parameters.
    pub fn load(spec: &str, max_nodes: u64) -> Result<Self> {
        let game = registry::load(spec)?;
        Self::from_game(game, max_nodes)
    }

    /// [`LoadedGame::load`] for a game already loaded.
    ///
    /// # Errors
    ///
    /// None today; kept so that a failing build of another kind can be reported.
    pub fn from_game(game: AnyGame, max_nodes: u64) -> Result<Self> {
        let limit = usize::try_from(max_nodes).unwrap_or(usize::MAX);
        let size = quick_tree_size(&game, max_nodes, Self::ESTIMATE_BUDGET);
        let mut loaded = Self { game, tree: None, size, max_nodes, build_error: None };
        // An estimate near the limit is settled by the build itself, which stops past it.
        let may_fit = match size {
            TreeSize::Exact { histories } => histories <= max_nodes,
            TreeSize::Estimate { histories, more_than, .. } => {
                more_than == 0 && histories <= 2.0 * max_nodes as f64
            }
            _ => false,
        };
        if may_fit {
            match GameTree::build_with_limit(&loaded.game, limit) {
                Ok(tree) => {
                    loaded.size = TreeSize::Exact { histories: tree.num_nodes() as u64 };
                    loaded.tree = Some(tree);
                }
                Err(metagame_games::Error::LimitExceeded { .. }) => {}
                Err(e) => loaded.build_error = Some(e.to_string()),
            }
        }
        Ok(loaded)
    }

    /// The game.
    pub fn game(&self) -> &AnyGame {
        &self.game
    }
    /// The size of its tree (exact when built or counted, else estimated).
    pub fn size(&self) -> TreeSize {
        self.size
    }
    /// The node limit it was loaded with.
    pub fn max_nodes(&self) -> u64 {
        self.max_nodes
    }
    /// What matches are played on: the rules, and the tree when built.
    pub fn arena(&self) -> Arena<'_> {
        match &self.tree {
            Some(tree) => Arena::both(&self.game, tree),
            None => Arena::rules(&self.game),
        }
    }

    /// The tree, for work that needs it (`what` names the work, for the message).
    ///
    /// # Errors
    ///
    /// [`Error::TreeTooLarge`] naming the work, the size and the limit (and how to raise it),
    /// or the build's own error when the tree fit but could not be built.
    pub fn tree(&self, what: &str) -> Result<&GameTree> {
        if let Some(tree) = &self.tree {
            return Ok(tree);
        }
        if let Some(why) = &self.build_error {
            return Err(Error::Game(metagame_games::Error::Unsupported(why.clone())));
        }
        Err(Error::TreeTooLarge {
            what: what.to_string(),
            game: self.game.name(),
            size: self.size.to_string(),
            limit: self.max_nodes,
        })
    }

    /// The game and its tree where it was built, taken apart (an embedder keeps the tree).
    pub fn into_parts(self) -> (AnyGame, Option<GameTree>) {
        (self.game, self.tree)
    }
}
