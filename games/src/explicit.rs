//! `ExplicitGame`: a game given node by node (a tree walked once elsewhere, such as an
//! OpenSpiel game read through pyspiel), so that [`GameTree::build`](crate::GameTree::build)
//! checks and flattens it like any other game.
//!
//! Nodes are added parent first ([`ExplicitGameBuilder`]); information states are interned,
//! so a node holds an index, not its string.

use std::collections::HashMap;
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, PlayerId, State, TensorShape, Turn};

/// What one node of an [`ExplicitGame`] is.
#[derive(Clone, Debug, PartialEq)]
enum Node {
    Decision {
        player: u32,
        infoset: u32,
        children: Vec<(ActionId, u32)>,
    },
    Chance {
        outcomes: Vec<(ActionId, f64, u32)>,
    },
    Terminal {
        returns: Vec<f64>,
    },
    /// Added as a child, not described yet.
    Pending,
}

#[derive(Debug)]
struct Nodes {
    nodes: Vec<Node>,
    infosets: Vec<String>,
    num_players: usize,
    /// Each information state's tensor, `tensor_shape.size()` values per interned state.
    tensor_shape: Option<TensorShape>,
    tensors: Vec<f32>,
}

/// A game given by its nodes. Build it with [`ExplicitGame::builder`].
///
/// # Examples
///
/// Matching pennies written out: player 1 does not see player 0's choice.
///
/// ```
/// use metagame_games::{ActionId, ExplicitGame, GameTree, nash_conv, TabularPolicy};
///
/// let mut b = ExplicitGame::builder("pennies", 2, 2, Some(0.0));
/// let root = b.root();
/// let kids = b.decision(root, 0, "p0", &[ActionId(0), ActionId(1)])?;
/// for (i, &k) in kids.iter().enumerate() {
///     let leaves = b.decision(k, 1, "p1", &[ActionId(0), ActionId(1)])?;
///     for (j, &leaf) in leaves.iter().enumerate() {
///         let u = if i == j { 1.0 } else { -1.0 };
///         b.terminal(leaf, vec![u, -u])?;
///     }
/// }
/// let tree = GameTree::build(&b.finish()?)?;
/// let uniform = TabularPolicy::uniform(&tree);
/// assert!(nash_conv(&tree, &[&uniform, &uniform])?.abs() < 1e-12);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct ExplicitGame {
    name: String,
    num_players: usize,
    num_actions: usize,
    utility_sum: Option<f64>,
    nodes: Arc<Nodes>,
}

/// Adds the nodes of an [`ExplicitGame`], each node after its parent.
#[derive(Debug)]
pub struct ExplicitGameBuilder {
    name: String,
    num_players: usize,
    num_actions: usize,
    utility_sum: Option<f64>,
    nodes: Vec<Node>,
    infosets: Vec<String>,
    lookup: HashMap<String, u32>,
    tensor_shape: Option<TensorShape>,
    /// Per interned information state, its tensor once given ([`ExplicitGameBuilder::set_tensor`]).
    tensors: Vec<Option<Vec<f32>>>,
}

impl ExplicitGame {
    /// A builder for a game of `num_players` players whose policy rows have `num_actions`
    /// entries (every decision action is below it); `utility_sum` as [`Game::utility_sum`].
    pub fn builder(
        name: impl Into<String>,
        num_players: usize,
        num_actions: usize,
        utility_sum: Option<f64>,
    ) -> ExplicitGameBuilder {
        ExplicitGameBuilder {
            name: name.into(),
            num_players,
            num_actions,
            utility_sum,
            nodes: vec![Node::Pending],
            infosets: Vec::new(),
            lookup: HashMap::new(),
            tensor_shape: None,
            tensors: Vec::new(),
        }
    }

    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.nodes.len()
    }
}

impl ExplicitGameBuilder {
    /// A game whose information states each carry a tensor of this shape (OpenSpiel's
    /// information-state tensor, or its observation tensor for perfect information), given
    /// by [`ExplicitGameBuilder::set_tensor`] once per information state.
    #[must_use]
    pub fn with_tensors(mut self, shape: TensorShape) -> Self {
        self.tensor_shape = Some(shape);
        self
    }

    /// True when a decision at `infoset` has been described already (its tensor, if the game
    /// has them, is then known or being given).
    pub fn has_infoset(&self, infoset: &str) -> bool {
        self.lookup.contains_key(infoset)
    }

    /// Give the tensor of `infoset` (a state described by [`ExplicitGameBuilder::decision`]).
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a game built without tensors, an unknown information
    /// state, or a tensor of another size or with a value that is not finite.
    pub fn set_tensor(&mut self, infoset: &str, tensor: &[f32]) -> Result<()> {
        let Some(shape) = &self.tensor_shape else {
            return Err(Error::Unsupported(format!("{}: the game was built without tensors", self.name)));
        };
        let Some(&id) = self.lookup.get(infoset) else {
            return Err(Error::Unsupported(format!("{}: no decision at {infoset:?} yet", self.name)));
        };
        if tensor.len() != shape.size() || tensor.iter().any(|x| !x.is_finite()) {
            return Err(Error::Unsupported(format!(
                "{}: the tensor at {infoset:?} has {} values (finite: {}), the game's shape {:?} holds {}",
                self.name,
                tensor.len(),
                tensor.iter().all(|x| x.is_finite()),
                shape.dims,
                shape.size()
            )));
        }
        self.tensors[id as usize] = Some(tensor.to_vec());
        Ok(())
    }

    /// The root node's id.
    pub fn root(&self) -> u32 {
        0
    }

    /// Number of nodes added so far (described or not).
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }

    fn pending(&self, node: u32) -> Result<()> {
        match self.nodes.get(node as usize) {
            Some(Node::Pending) => Ok(()),
            Some(_) => Err(Error::Unsupported(format!("{}: node {node} is described twice", self.name))),
            None => Err(Error::Unsupported(format!("{}: node {node} was never added", self.name))),
        }
    }

    fn add_children(&mut self, count: usize) -> Result<Vec<u32>> {
        let first = self.nodes.len();
        if first + count > u32::MAX as usize - 1 {
            return Err(Error::TreeTooLarge(u32::MAX as usize - 1));
        }
        self.nodes.extend(std::iter::repeat_n(Node::Pending, count));
        Ok((first..first + count).map(|i| i as u32).collect())
    }

    /// Describe `node` as `player`'s decision at information state `infoset` with these
    /// legal actions (ascending); returns the children's ids, one per action.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a node already described, a player or action out of range,
    /// or no legal action.
    pub fn decision(
        &mut self,
        node: u32,
        player: usize,
        infoset: &str,
        legal: &[ActionId],
    ) -> Result<Vec<u32>> {
        self.pending(node)?;
        if player >= self.num_players {
            return Err(Error::Unsupported(format!(
                "{}: player {player} acts at {infoset:?}, the game has {} players",
                self.name, self.num_players
            )));
        }
        if legal.is_empty() {
            return Err(Error::Unsupported(format!("{}: no legal action at {infoset:?}", self.name)));
        }
        if let Some(a) = legal.iter().find(|a| a.0 >= self.num_actions) {
            return Err(Error::Unsupported(format!(
                "{}: action {} at {infoset:?} is not below the game's {} distinct actions",
                self.name, a.0, self.num_actions
            )));
        }
        if legal.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::Unsupported(format!(
                "{}: the legal actions at {infoset:?} are not ascending and unique",
                self.name
            )));
        }
        let next = self.infosets.len() as u32;
        let id = *self.lookup.entry(infoset.to_string()).or_insert(next);
        if id == next {
            self.infosets.push(infoset.to_string());
            self.tensors.push(None);
        }
        let children = self.add_children(legal.len())?;
        let edges = legal.iter().copied().zip(children.iter().copied()).collect();
        self.nodes[node as usize] = Node::Decision { player: player as u32, infoset: id, children: edges };
        Ok(children)
    }

    /// Describe `node` as a chance node with these outcomes and probabilities; returns the
    /// children's ids, one per outcome.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a node already described, no outcome, or a probability
    /// that is not finite and positive (the tree build checks their sum).
    pub fn chance(&mut self, node: u32, outcomes: &[(ActionId, f64)]) -> Result<Vec<u32>> {
        self.pending(node)?;
        if outcomes.is_empty() {
            return Err(Error::Unsupported(format!("{}: a chance node has no outcome", self.name)));
        }
        if let Some((a, p)) = outcomes.iter().find(|(_, p)| !(p.is_finite() && *p > 0.0)) {
            return Err(Error::Unsupported(format!(
                "{}: chance outcome {} has probability {p}",
                self.name, a.0
            )));
        }
        let children = self.add_children(outcomes.len())?;
        let edges = outcomes.iter().zip(children.iter()).map(|(&(a, p), &c)| (a, p, c)).collect();
        self.nodes[node as usize] = Node::Chance { outcomes: edges };
        Ok(children)
    }

    /// Describe `node` as a terminal with one return per player.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a node already described or returns that are not one
    /// finite number per player.
    pub fn terminal(&mut self, node: u32, returns: Vec<f64>) -> Result<()> {
        self.pending(node)?;
        if returns.len() != self.num_players || returns.iter().any(|r| !r.is_finite()) {
            return Err(Error::Unsupported(format!(
                "{}: terminal returns {returns:?} are not {} finite numbers",
                self.name, self.num_players
            )));
        }
        self.nodes[node as usize] = Node::Terminal { returns };
        Ok(())
    }

    /// The game, once every node is described.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] naming a node that was added but never described.
    pub fn finish(self) -> Result<ExplicitGame> {
        if let Some(i) = self.nodes.iter().position(|n| *n == Node::Pending) {
            return Err(Error::Unsupported(format!("{}: node {i} was added but never described", self.name)));
        }
        if self.tensor_shape.is_some()
            && let Some(i) = self.tensors.iter().position(Option::is_none)
        {
            return Err(Error::Unsupported(format!(
                "{}: the information state {:?} was given no tensor",
                self.name, self.infosets[i]
            )));
        }
        let tensors = self.tensors.into_iter().flatten().flatten().collect();
        Ok(ExplicitGame {
            name: self.name,
            num_players: self.num_players,
            num_actions: self.num_actions,
            utility_sum: self.utility_sum,
            nodes: Arc::new(Nodes {
                nodes: self.nodes,
                infosets: self.infosets,
                num_players: self.num_players,
                tensor_shape: self.tensor_shape,
                tensors,
            }),
        })
    }
}

/// A state of an [`ExplicitGame`]: a node and the actions that led there.
#[derive(Clone, Debug)]
pub struct ExplicitState {
    nodes: Arc<Nodes>,
    node: u32,
    history: Vec<ActionId>,
}

impl ExplicitState {
    fn node(&self) -> &Node {
        &self.nodes.nodes[self.node as usize]
    }
}

impl Game for ExplicitGame {
    type State = ExplicitState;

    fn name(&self) -> String {
        self.name.clone()
    }
    fn num_players(&self) -> usize {
        self.num_players
    }
    fn num_distinct_actions(&self) -> usize {
        self.num_actions
    }
    fn new_initial_state(&self) -> ExplicitState {
        ExplicitState { nodes: Arc::clone(&self.nodes), node: 0, history: Vec::new() }
    }
    fn utility_sum(&self) -> Option<f64> {
        self.utility_sum
    }
    fn count_histories(&self, _at_most: u64) -> Option<u64> {
        Some(self.nodes.nodes.len() as u64)
    }
    fn tensor_shape(&self) -> Option<TensorShape> {
        self.nodes.tensor_shape.clone()
    }
}

impl State for ExplicitState {
    fn turn(&self) -> Turn {
        match self.node() {
            Node::Decision { player, .. } => Turn::Player(PlayerId(*player as usize)),
            Node::Chance { .. } => Turn::Chance,
            Node::Terminal { .. } | Node::Pending => Turn::Terminal,
        }
    }
    fn legal_actions(&self) -> Vec<ActionId> {
        match self.node() {
            Node::Decision { children, .. } => children.iter().map(|c| c.0).collect(),
            _ => Vec::new(),
        }
    }
    fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
        match self.node() {
            Node::Chance { outcomes } => outcomes.iter().map(|&(a, p, _)| (a, p)).collect(),
            _ => Vec::new(),
        }
    }
    fn apply_action(&mut self, action: ActionId) {
        let child = match self.node() {
            Node::Decision { children, .. } => children.iter().find(|c| c.0 == action).map(|c| c.1),
            Node::Chance { outcomes } => outcomes.iter().find(|c| c.0 == action).map(|c| c.2),
            _ => None,
        };
        // INVARIANT (the trait's contract): callers apply legal actions only.
        self.node = child.expect("a legal action");
        self.history.push(action);
    }
    fn returns(&self) -> Vec<f64> {
        match self.node() {
            Node::Terminal { returns } => returns.clone(),
            _ => vec![0.0; self.nodes.num_players],
        }
    }
    fn information_state_string(&self, _player: PlayerId) -> String {
        // Only the acting player's information state is recorded (all the tree reads).
        match self.node() {
            Node::Decision { infoset, .. } => self.nodes.infosets[*infoset as usize].clone(),
            _ => String::new(),
        }
    }
    fn history(&self) -> &[ActionId] {
        &self.history
    }
    /// The acting player's tensor, as given for the node's information state.
    fn write_tensor(&self, _player: PlayerId, out: &mut [f32]) {
        if let (Node::Decision { infoset, .. }, Some(shape)) = (self.node(), &self.nodes.tensor_shape) {
            let size = shape.size();
            out.copy_from_slice(
                &self.nodes.tensors[*infoset as usize * size..(*infoset as usize + 1) * size],
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GameTree, TabularPolicy, nash_conv, registry};

    /// Kuhn poker written out node by node from the registry game equals the registry game.
    #[test]
    fn kuhn_written_out_has_the_same_nash_conv() {
        let game = registry::load("kuhn_poker").unwrap();
        let mut b = ExplicitGame::builder("kuhn_poker", 2, 2, Some(0.0));
        let mut stack = vec![(game.new_initial_state(), b.root())];
        while let Some((state, node)) = stack.pop() {
            match state.turn() {
                Turn::Terminal => b.terminal(node, state.returns()).unwrap(),
                Turn::Chance => {
                    let outcomes = state.chance_outcomes();
                    let kids = b.chance(node, &outcomes).unwrap();
                    for ((a, _), k) in outcomes.into_iter().zip(kids) {
                        let mut s = state.clone();
                        s.apply_action(a);
                        stack.push((s, k));
                    }
                }
                Turn::Player(p) => {
                    let legal = state.legal_actions();
                    let key = state.information_state_string(p);
                    let kids = b.decision(node, p.0, &key, &legal).unwrap();
                    for (a, k) in legal.into_iter().zip(kids) {
                        let mut s = state.clone();
                        s.apply_action(a);
                        stack.push((s, k));
                    }
                }
            }
        }
        let tree = GameTree::build(&b.finish().unwrap()).unwrap();
        assert_eq!(tree.num_nodes(), 58);
        let uniform = TabularPolicy::uniform(&tree);
        let value = nash_conv(&tree, &[&uniform, &uniform]).unwrap();
        assert!((value - 11.0 / 12.0).abs() < 1e-12);
    }

    /// Kuhn written out with its tensors: the tree caches the registry game's tensors.
    #[test]
    fn tensors_given_per_information_state_are_the_trees() {
        let game = registry::load("kuhn_poker").unwrap();
        let shape = game.tensor_shape().unwrap();
        let mut b = ExplicitGame::builder("kuhn_poker", 2, 2, Some(0.0)).with_tensors(shape.clone());
        let mut stack = vec![(game.new_initial_state(), b.root())];
        while let Some((state, node)) = stack.pop() {
            let (actions, kids) = match state.turn() {
                Turn::Terminal => {
                    b.terminal(node, state.returns()).unwrap();
                    continue;
                }
                Turn::Chance => {
                    let outcomes = state.chance_outcomes();
                    (outcomes.iter().map(|o| o.0).collect::<Vec<_>>(), b.chance(node, &outcomes).unwrap())
                }
                Turn::Player(p) => {
                    let (legal, key) = (state.legal_actions(), state.information_state_string(p));
                    let new = !b.has_infoset(&key);
                    let kids = b.decision(node, p.0, &key, &legal).unwrap();
                    if new {
                        let mut t = vec![0.0; shape.size()];
                        state.write_tensor(p, &mut t);
                        b.set_tensor(&key, &t).unwrap();
                    }
                    (legal, kids)
                }
            };
            for (a, k) in actions.into_iter().zip(kids) {
                let mut s = state.clone();
                s.apply_action(a);
                stack.push((s, k));
            }
        }
        let written = GameTree::build(&b.finish().unwrap()).unwrap();
        let registry = GameTree::build(&game).unwrap();
        assert_eq!(written.tensor_shape(), registry.tensor_shape());
        for i in 0..registry.num_infosets() {
            let id = crate::InfosetId(i);
            let other = written.infoset_by_key(registry.infoset_key(id)).unwrap();
            let size = shape.size();
            assert_eq!(
                written.infoset_tensors().unwrap()[other.0 * size..(other.0 + 1) * size],
                registry.infoset_tensors().unwrap()[i * size..(i + 1) * size]
            );
        }
        // A tensor missing, or of the wrong size, is refused.
        let mut b = ExplicitGame::builder("g", 1, 2, None).with_tensors(shape);
        let root = b.root();
        let kids = b.decision(root, 0, "s", &[ActionId(0), ActionId(1)]).unwrap();
        for k in kids {
            b.terminal(k, vec![0.0]).unwrap();
        }
        assert!(b.set_tensor("s", &[1.0]).unwrap_err().to_string().contains("has 1 values"));
        assert!(b.finish().unwrap_err().to_string().contains("was given no tensor"));
    }

    #[test]
    fn an_undescribed_node_is_refused() {
        let mut b = ExplicitGame::builder("g", 1, 2, None);
        let root = b.root();
        b.decision(root, 0, "s", &[ActionId(0), ActionId(1)]).unwrap();
        let err = b.finish().unwrap_err().to_string();
        assert!(err.contains("never described"), "{err}");
    }
}
