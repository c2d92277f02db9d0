//! `Arena`: what matches are played on — a game's rules (its states, for rollouts on games
//! of any size) and its tree where one was built (for the exact algorithms and the tabular
//! samplers).

use crate::error::{Error, Result};
use crate::game::{Game, TensorShape};
use crate::registry::AnyGame;
use crate::tree::GameTree;

/// A game as the match evaluators play it: its rules, its tree, or both.
///
/// A registry game too large to enumerate has rules and no tree; a game read from
/// elsewhere as a tree (OpenSpiel's through pyspiel) has a tree and no rules of its own,
/// and rollouts then walk the tree. An evaluator that needs the tree asks for it with
/// [`Arena::need_tree`].
///
/// # Examples
///
/// ```
/// use metagame_games::{Arena, GameTree, registry};
/// let leduc = registry::load("leduc_poker")?;
/// let tree = GameTree::build(&leduc)?;
/// assert!(Arena::tree(&tree).game_tree().is_some());
/// let tic_tac_toe = registry::load("tic_tac_toe")?;
/// let rules = Arena::rules(&tic_tac_toe);
/// assert!(rules.need_tree("NashConv").is_err());
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Arena<'a> {
    rules: Option<&'a AnyGame>,
    tree: Option<&'a GameTree>,
}

impl<'a> From<&'a GameTree> for Arena<'a> {
    fn from(tree: &'a GameTree) -> Self {
        Arena::tree(tree)
    }
}

impl<'a> Arena<'a> {
    /// A game played on its tree alone.
    pub fn tree(tree: &'a GameTree) -> Self {
        Self { rules: None, tree: Some(tree) }
    }
    /// A game played on its states alone (no tree was built).
    pub fn rules(game: &'a AnyGame) -> Self {
        Self { rules: Some(game), tree: None }
    }
    /// A game with both its rules and its tree (`tree` must be `game`'s).
    pub fn both(game: &'a AnyGame, tree: &'a GameTree) -> Self {
        Self { rules: Some(game), tree: Some(tree) }
    }

    /// The tree, where one was built.
    pub fn game_tree(&self) -> Option<&'a GameTree> {
        self.tree
    }
    /// The rules, where the game has states of its own.
    pub fn game_rules(&self) -> Option<&'a AnyGame> {
        self.rules
    }

    /// The tree, for work that needs it (`what` says which, for the message).
    ///
    /// # Errors
    ///
    /// [`Error::NoTree`] when no tree was built.
    pub fn need_tree(&self, what: &str) -> Result<&'a GameTree> {
        self.tree.ok_or_else(|| Error::NoTree { game: self.name(), what: what.to_string() })
    }

    /// The game string.
    pub fn name(&self) -> String {
        match (self.tree, self.rules) {
            (Some(t), _) => t.name().to_string(),
            (None, Some(g)) => g.name(),
            // INVARIANT: every constructor sets one of them.
            (None, None) => unreachable!("an arena has rules or a tree"),
        }
    }
    /// Number of players.
    pub fn num_players(&self) -> usize {
        self.tree.map_or_else(|| self.rules.map_or(0, Game::num_players), GameTree::num_players)
    }
    /// Number of distinct actions (the width of a policy's answer).
    pub fn num_actions(&self) -> usize {
        self.tree.map_or_else(|| self.rules.map_or(0, Game::num_distinct_actions), GameTree::num_actions)
    }
    /// The tensor a policy reads, if the game gives one.
    pub fn tensor_shape(&self) -> Option<TensorShape> {
        match (self.tree, self.rules) {
            (Some(t), _) => t.tensor_shape().cloned(),
            (None, Some(g)) => g.tensor_shape(),
            (None, None) => None,
        }
    }
}
