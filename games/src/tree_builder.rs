//! `TreeBuilder`: a [`GameTree`] grown node by node, each node described after its parent,
//! and [`GameTree::build`], which grows one from a [`Game`]'s states.
//!
//! [`GameTree::build`] drives the builder depth first; a walk of a game
//! held elsewhere (an OpenSpiel game read through pyspiel) drives it directly, so nothing
//! is built twice. It checks what the tree relies on (one acting player and one list of
//! legal actions per information state, chance probabilities summing to 1), numbers the
//! players' sequences and finds imperfect recall.

use std::ops::Range;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, State, TensorShape, Turn};
use crate::key_table::KeyTable;
use crate::tree::{GameTree, MAX_NODES, NO_PARENT, NodeKind};

/// Marks a player's empty sequence while building: `EMPTY - player`, resolved at the end.
const EMPTY: u32 = u32::MAX;

impl GameTree {
    /// Enumerate `game` into a flat arena of at most [`GameTree::DEFAULT_MAX_NODES`] nodes,
    /// numbered breadth first.
    ///
    /// # Errors
    ///
    /// As [`GameTree::build_with_limit`].
    ///
    /// # Complexity
    ///
    /// O(nodes) state clones and information-state strings; done once per game.
    pub fn build<G: Game>(game: &G) -> Result<Self> {
        Self::build_with_limit(game, Self::DEFAULT_MAX_NODES)
    }

    /// Enumerate `game` into a flat arena of at most `max_nodes` nodes, numbered breadth
    /// first (the walk itself is depth first, so only a path's states are held). Games
    /// that count their histories ([`Game::count_histories`]) are checked before anything is
    /// allocated, others as the tree grows.
    ///
    /// # Errors
    ///
    /// [`Error::LimitExceeded`] past `max_nodes`; [`Error::TreeTooLarge`] past [`MAX_NODES`];
    /// [`Error::Unsupported`] when the game breaks a contract the tree relies on (one acting
    /// player and one list of legal actions per information state, chance probabilities
    /// summing to 1).
    ///
    /// Games of imperfect recall build, as OpenSpiel keys them: by the information-state
    /// string, whatever the player's own earlier decisions
    /// ([`GameTree::has_perfect_recall`]).
    ///
    /// # Complexity
    ///
    /// O(nodes) state clones and information-state strings; done once per game.
    pub fn build_with_limit<G: Game>(game: &G, max_nodes: usize) -> Result<Self> {
        if game.count_histories(max_nodes as u64).is_some_and(|count| count > max_nodes as u64) {
            return Err(Error::LimitExceeded {
                what: format!("the game tree of {}", game.name()),
                limit: max_nodes as u64,
                unit: "nodes",
                raise: "`GameTree::build_with_limit`",
            });
        }
        let mut b = TreeBuilder::for_game(game, max_nodes);
        // Counted games: every per-node vector allocated once.
        if let Some(count) = game.count_histories(max_nodes as u64) {
            b.reserve_nodes(count as usize);
        }
        // Depth first: the pending states are a path's siblings, not a whole level. Each is
        // described where it lies on the stack and then moved on to its first child in place
        // (a registry state is hundreds of bytes: one copy per node, the sibling's clone).
        // The node's lists and string are written into buffers reused from node to node.
        let mut stack: Vec<(u32, G::State)> = vec![(b.root(), game.new_initial_state())];
        let mut legal = Vec::new();
        let mut outcomes = Vec::new();
        let mut returns = Vec::new();
        let mut key = String::new();
        while let Some(top) = stack.len().checked_sub(1) {
            let (node, state) = &stack[top];
            let children = match state.turn() {
                Turn::Terminal => {
                    state.write_returns(&mut returns);
                    b.terminal(*node, &returns)?;
                    stack.truncate(top);
                    continue;
                }
                Turn::Chance => {
                    state.write_chance_outcomes(&mut outcomes);
                    legal.clear();
                    legal.extend(outcomes.iter().map(|o| o.0));
                    b.chance(*node, &outcomes)?
                }
                Turn::Player(p) => {
                    state.write_legal_actions(&mut legal);
                    state.write_information_state_string(p, &mut key);
                    let (children, new) = b.decision(*node, p.0, &key, &legal)?;
                    if new {
                        state.write_tensor(p, b.new_tensor());
                    }
                    children
                }
            };
            let first = children.start;
            for (child, &a) in children.zip(&legal).skip(1) {
                // Cloned straight into the stack's spare room.
                stack.extend_from_within(top..=top);
                if let Some((node, next)) = stack.last_mut() {
                    *node = child;
                    next.apply_action(a);
                }
            }
            let (node, state) = &mut stack[top];
            *node = first;
            state.apply_action(legal[0]);
        }
        b.finish()
    }
}

/// An information set as discovered; its legal actions and tensor are in the builder's
/// discovery-order buffers.
#[derive(Default)]
struct RawInfoset {
    player: u32,
    /// Its legal actions are `raw_legal[legal_start..legal_start + num_legal]`; while
    /// building, `legal_start + k` is also its `k`-th sequence (one per legal action, in
    /// discovery order).
    legal_start: usize,
    num_legal: u32,
    parent_seq: u32,
}

/// Grows a [`GameTree`]: [`TreeBuilder::new`] adds the root (node 0); describing a node as a
/// [`decision`](TreeBuilder::decision) or [`chance`](TreeBuilder::chance) node adds its
/// children, numbered consecutively; [`TreeBuilder::finish`] gives the tree. The nodes may be
/// described in any order that puts each after its parent (breadth first, depth first):
/// the tree is numbered breadth first either way, and is the tree [`GameTree::build`] gives.
///
/// # Examples
///
/// Matching pennies: player 1 does not see player 0's choice.
///
/// ```
/// use metagame_games::{ActionId, TreeBuilder, nash_conv, TabularPolicy};
///
/// let mut b = TreeBuilder::new("pennies", 2, 2, Some(0.0), None, 100);
/// let moves = [ActionId(0), ActionId(1)];
/// let (kids, _) = b.decision(0, 0, "p0", &moves)?;
/// for (i, k) in kids.enumerate() {
///     let (leaves, _) = b.decision(k, 1, "p1", &moves)?;
///     for (j, leaf) in leaves.enumerate() {
///         let u = if i == j { 1.0 } else { -1.0 };
///         b.terminal(leaf, &[u, -u])?;
///     }
/// }
/// let tree = b.finish()?;
/// let uniform = TabularPolicy::uniform(&tree);
/// assert!(nash_conv(&tree, &[&uniform, &uniform])?.abs() < 1e-12);
/// # Ok::<(), metagame_games::Error>(())
/// ```
pub struct TreeBuilder {
    t: GameTree,
    max_nodes: usize,
    tensor_size: usize,
    raw: Vec<RawInfoset>,
    raw_legal: Vec<ActionId>,
    /// Each key's infoset, by discovery (the tree's keys once renumbered).
    raw_keys: KeyTable,
    /// `[infoset (discovery order) × tensor size]`.
    raw_tensors: Vec<f32>,
    /// `[node × players]`: each player's current sequence (discovery numbering) at the node.
    node_seqs: Vec<u32>,
    /// Some infoset met again after another last sequence of its player.
    recall_broken: bool,
    /// Nodes added and not yet described.
    pending: usize,
}

impl TreeBuilder {
    /// A tree of `num_players` players whose policy rows have `num_actions` entries, holding
    /// its root; `utility_sum` as [`GameTree::utility_sum`]; with a tensor of `tensor_shape`
    /// per information state when given; at most `max_nodes` nodes.
    pub fn new(
        name: impl Into<String>,
        num_players: usize,
        num_actions: usize,
        utility_sum: Option<f64>,
        tensor_shape: Option<TensorShape>,
        max_nodes: usize,
    ) -> Self {
        let tensor_size = tensor_shape.as_ref().map_or(0, TensorShape::size);
        let mut t = GameTree {
            name: name.into(),
            num_players,
            num_actions,
            utility_sum,
            kind: Vec::new(),
            player: Vec::new(),
            slot: Vec::new(),
            first_child: Vec::new(),
            num_children: Vec::new(),
            parent: Vec::new(),
            action: Vec::new(),
            chance_prob: Vec::new(),
            terminal_node: Vec::new(),
            utilities: Vec::new(),
            terminal_parent_seq: Vec::new(),
            keys: KeyTable::default(),
            infoset_player: Vec::new(),
            legal_start: Vec::new(),
            legal_actions: Vec::new(),
            infoset_parent_seq: Vec::new(),
            num_imperfect_recall: 0,
            player_infosets: Vec::new(),
            tensor_shape,
            tensors: Vec::new(),
        };
        t.push_node(NO_PARENT, 0, 1.0);
        Self {
            t,
            max_nodes,
            tensor_size,
            raw: Vec::new(),
            raw_legal: Vec::new(),
            raw_keys: KeyTable::default(),
            raw_tensors: Vec::new(),
            node_seqs: (0..num_players as u32).map(|p| EMPTY - p).collect(),
            recall_broken: false,
            pending: 1,
        }
    }

    /// A tree of `game`'s players, actions, utility sum and tensors, of at most `max_nodes`
    /// nodes.
    pub fn for_game<G: Game>(game: &G, max_nodes: usize) -> Self {
        Self::new(
            game.name(),
            game.num_players(),
            game.num_distinct_actions(),
            game.utility_sum(),
            game.tensor_shape(),
            max_nodes,
        )
    }

    /// Room for `nodes` nodes in every per-node vector (the build is mostly allocation
    /// otherwise).
    pub fn reserve_nodes(&mut self, nodes: usize) {
        self.t.reserve_nodes(nodes);
        self.node_seqs.reserve(nodes * self.t.num_players);
    }

    /// The root's id.
    pub fn root(&self) -> u32 {
        0
    }

    /// Number of nodes added so far (described or not).
    pub fn num_nodes(&self) -> usize {
        self.t.kind.len()
    }

    fn name(&self) -> &str {
        &self.t.name
    }

    /// `node`'s index, checked to be added and not yet described.
    fn undescribed(&self, node: u32) -> Result<usize> {
        let idx = node as usize;
        // Added nodes start as terminals with no slot and no children; a described
        // terminal is marked by its slot pointing at itself.
        let described = match self.t.kind.get(idx) {
            None => return Err(Error::Unsupported(format!("{}: node {node} was never added", self.name()))),
            Some(NodeKind::Terminal) => {
                self.t.terminal_node.get(self.t.slot[idx] as usize).is_some_and(|&n| n == node)
            }
            Some(_) => true,
        };
        if described {
            return Err(Error::Unsupported(format!("{}: node {node} is described twice", self.name())));
        }
        Ok(idx)
    }

    /// Describe `node` as a terminal with one return per player.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a node not added or already described, or returns that
    /// are not one finite number per player.
    pub fn terminal(&mut self, node: u32, returns: &[f64]) -> Result<()> {
        let idx = self.undescribed(node)?;
        let n = self.t.num_players;
        if returns.len() != n || returns.iter().any(|r| !r.is_finite()) {
            return Err(Error::Unsupported(format!(
                "{}: terminal returns {returns:?} are not {n} finite numbers",
                self.name()
            )));
        }
        self.t.kind[idx] = NodeKind::Terminal;
        self.t.slot[idx] = self.t.terminal_node.len() as u32;
        self.t.terminal_node.push(node);
        self.t.utilities.extend_from_slice(returns);
        self.t.terminal_parent_seq.extend_from_slice(&self.node_seqs[idx * n..(idx + 1) * n]);
        self.pending -= 1;
        Ok(())
    }

    /// Describe `node` as a chance node with these outcomes and probabilities; returns the
    /// children's ids, one per outcome.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a node not added or already described, no outcome, or
    /// probabilities that are negative or do not sum to 1; the node limit as
    /// [`TreeBuilder::finish`].
    pub fn chance(&mut self, node: u32, outcomes: &[(ActionId, f64)]) -> Result<Range<u32>> {
        let idx = self.undescribed(node)?;
        if let Some((a, p)) = outcomes.iter().find(|(_, p)| !(p.is_finite() && *p >= 0.0)) {
            return Err(Error::Unsupported(format!(
                "{}: chance outcome {} has probability {p}",
                self.name(),
                a.0
            )));
        }
        let total: f64 = outcomes.iter().map(|o| o.1).sum();
        if outcomes.is_empty() || (total - 1.0).abs() > 1e-9 {
            return Err(Error::Unsupported(format!("{}: chance probabilities sum to {total}", self.name())));
        }
        self.t.kind[idx] = NodeKind::Chance;
        let n = self.t.num_players;
        let first = self.t.kind.len() as u32;
        self.t.first_child[idx] = first;
        self.t.num_children[idx] = outcomes.len() as u32;
        for &(a, p) in outcomes {
            self.t.push_node(node, a.0 as u32, p);
            self.node_seqs.extend_from_within(idx * n..(idx + 1) * n);
        }
        self.added(outcomes.len())?;
        Ok(first..first + outcomes.len() as u32)
    }

    /// Describe `node` as `player`'s decision at the information state `key` with these
    /// legal actions; returns the children's ids, one per action, and whether `key` is new
    /// (its tensor, if the tree has tensors, is then written through
    /// [`TreeBuilder::new_tensor`] before the next decision).
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a node not added or already described, a player or action
    /// out of range, no legal action, or an information state met before with another
    /// player or other legal actions; the node limit as [`TreeBuilder::finish`].
    pub fn decision(
        &mut self,
        node: u32,
        player: usize,
        key: &str,
        legal: &[ActionId],
    ) -> Result<(Range<u32>, bool)> {
        let idx = self.undescribed(node)?;
        let n = self.t.num_players;
        if player >= n {
            return Err(Error::Unsupported(format!(
                "{}: player {player} acts at {key:?}, the game has {n} players",
                self.name()
            )));
        }
        if legal.is_empty() {
            return Err(Error::Unsupported(format!("{}: no legal action at {key:?}", self.name())));
        }
        if let Some(a) = legal.iter().find(|a| a.0 >= self.t.num_actions) {
            return Err(Error::Unsupported(format!(
                "{}: action {} at {key:?} is not below the game's {} distinct actions",
                self.name(),
                a.0,
                self.t.num_actions
            )));
        }
        let p = player as u32;
        if legal.windows(2).any(|w| w[0] >= w[1]) {
            return Err(Error::Unsupported(format!(
                "{}: the legal actions at {key:?} are not ascending and unique",
                self.name()
            )));
        }
        let (i, new) = self.raw_keys.insert(key);
        let info = i as u32;
        if new {
            self.raw_tensors.resize(self.raw_tensors.len() + self.tensor_size, 0.0);
            self.raw.push(RawInfoset {
                player: p,
                legal_start: self.raw_legal.len(),
                num_legal: legal.len() as u32,
                parent_seq: self.node_seqs[idx * n + player],
            });
            self.raw_legal.extend_from_slice(legal);
        } else {
            let r = &self.raw[i];
            if self.raw_legal[r.legal_start..r.legal_start + r.num_legal as usize] != *legal || r.player != p
            {
                return Err(Error::Unsupported(format!(
                    "{}: information state {key:?} is inconsistent (another acting player or other legal actions)",
                    self.name()
                )));
            }
            self.recall_broken |= r.parent_seq != self.node_seqs[idx * n + player];
        }
        self.t.kind[idx] = NodeKind::Decision;
        self.t.player[idx] = p;
        self.t.slot[idx] = info;
        let first = self.t.kind.len() as u32;
        self.t.first_child[idx] = first;
        self.t.num_children[idx] = legal.len() as u32;
        let base = self.raw[i].legal_start as u32;
        for (k, &a) in legal.iter().enumerate() {
            let child = self.t.push_node(node, a.0 as u32, 1.0);
            self.node_seqs.extend_from_within(idx * n..(idx + 1) * n);
            self.node_seqs[child as usize * n + player] = base + k as u32;
        }
        self.added(legal.len())?;
        Ok((first..first + legal.len() as u32, new))
    }

    /// The tensor of the information state discovered last, zeros until written: write it
    /// when [`TreeBuilder::decision`] says the state is new. Empty without tensors.
    pub fn new_tensor(&mut self) -> &mut [f32] {
        let at = self.raw_tensors.len() - self.tensor_size;
        &mut self.raw_tensors[at..]
    }

    /// Give the tensor of the information state `key` discovered last, as
    /// [`TreeBuilder::new_tensor`] but checked: a tensor given from outside.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a tree without tensors, or a tensor of another size or
    /// with a value that is not finite.
    pub fn set_new_tensor(&mut self, key: &str, values: &[f32]) -> Result<()> {
        let Some(shape) = &self.t.tensor_shape else {
            return Err(Error::Unsupported(format!("{}: the game was built without tensors", self.name())));
        };
        if values.len() != self.tensor_size || values.iter().any(|x| !x.is_finite()) {
            return Err(Error::Unsupported(format!(
                "{}: the tensor at {key:?} has {} values (finite: {}), the game's shape {:?} holds {}",
                self.name(),
                values.len(),
                values.iter().all(|x| x.is_finite()),
                shape.dims,
                self.tensor_size
            )));
        }
        self.new_tensor().copy_from_slice(values);
        Ok(())
    }

    /// `count` children added to a node just described.
    fn added(&mut self, count: usize) -> Result<()> {
        self.pending += count;
        self.pending -= 1;
        let nodes = self.t.kind.len();
        if nodes > self.max_nodes {
            return Err(Error::LimitExceeded {
                what: format!("the game tree of {}", self.t.name),
                limit: self.max_nodes as u64,
                unit: "nodes",
                raise: "`GameTree::build_with_limit`",
            });
        }
        if nodes > MAX_NODES {
            return Err(Error::TreeTooLarge(MAX_NODES));
        }
        Ok(())
    }

    /// Number the nodes breadth first, and the terminals and information sets in the order
    /// a breadth-first walk meets them, as [`GameTree::build`] numbers them: nodes described
    /// in another order (depth first) give the same tree. Nothing moves when they were
    /// described breadth first.
    fn renumber_breadth_first(&mut self) {
        let t = &mut self.t;
        let n = t.num_players;
        let len = t.kind.len();
        // `order[new] = old`: children of a node stay consecutive.
        let mut order: Vec<u32> = Vec::with_capacity(len);
        order.push(0);
        let mut at = 0;
        while at < order.len() {
            let old = order[at] as usize;
            let first = t.first_child[old];
            order.extend(first..first + t.num_children[old]);
            at += 1;
        }
        let nodes_moved = order.iter().enumerate().any(|(new, &old)| new as u32 != old);
        if nodes_moved {
            let mut new_of = vec![0u32; len];
            for (new, &old) in order.iter().enumerate() {
                new_of[old as usize] = new as u32;
            }
            let moved = |v: &[u32]| -> Vec<u32> { order.iter().map(|&old| v[old as usize]).collect() };
            t.first_child = order
                .iter()
                .map(|&old| match t.num_children[old as usize] {
                    0 => 0,
                    _ => new_of[t.first_child[old as usize] as usize],
                })
                .collect();
            t.kind = order.iter().map(|&old| t.kind[old as usize]).collect();
            t.player = moved(&t.player);
            t.slot = moved(&t.slot);
            t.num_children = moved(&t.num_children);
            t.action = moved(&t.action);
            t.chance_prob = order.iter().map(|&old| t.chance_prob[old as usize]).collect();
            t.parent = order
                .iter()
                .map(|&old| match t.parent[old as usize] {
                    NO_PARENT => NO_PARENT,
                    p => new_of[p as usize],
                })
                .collect();
            self.node_seqs = rows_in_order(&self.node_seqs, &order, n);
            for node in t.terminal_node.iter_mut() {
                *node = new_of[*node as usize];
            }
        }
        // Terminals in node order.
        if t.terminal_node.windows(2).any(|w| w[0] > w[1]) {
            let by_node: Vec<u32> = (0..len)
                .filter(|&node| t.kind[node] == NodeKind::Terminal)
                .map(|node| t.slot[node])
                .collect();
            t.utilities = rows_in_order(&t.utilities, &by_node, n);
            t.terminal_parent_seq = rows_in_order(&t.terminal_parent_seq, &by_node, n);
            t.terminal_node = by_node.iter().map(|&k| t.terminal_node[k as usize]).collect();
            for (k, &node) in t.terminal_node.iter().enumerate() {
                t.slot[node as usize] = k as u32;
            }
        }
        // Information sets in the order of their first node, each with the sequence of its
        // player at that node (what a breadth-first build records).
        const UNSEEN: u32 = u32::MAX;
        let mut info_order: Vec<u32> = Vec::with_capacity(self.raw.len());
        let mut new_info = vec![UNSEEN; self.raw.len()];
        let mut first_node = Vec::with_capacity(self.raw.len());
        for node in 0..len {
            if t.kind[node] == NodeKind::Decision {
                let old = t.slot[node] as usize;
                if new_info[old] == UNSEEN {
                    new_info[old] = info_order.len() as u32;
                    info_order.push(old as u32);
                    first_node.push(node);
                }
            }
        }
        let renumbered = info_order.iter().enumerate().any(|(new, &old)| new as u32 != old);
        if renumbered {
            // Sequences follow their infosets.
            let seq_map = sequences_in_order(&self.raw, &info_order);
            let remap = |seq: u32| if seq > EMPTY - n as u32 { seq } else { seq_map[seq as usize] };
            for s in self.node_seqs.iter_mut() {
                *s = remap(*s);
            }
            for s in t.terminal_parent_seq.iter_mut() {
                *s = remap(*s);
            }
            // Each infoset moves to its place (its parent sequence is set below).
            let mut discovered = std::mem::take(&mut self.raw);
            self.raw = info_order.iter().map(|&old| std::mem::take(&mut discovered[old as usize])).collect();
            self.raw_tensors = rows_in_order(&self.raw_tensors, &info_order, self.tensor_size);
            self.raw_keys.reorder(&info_order);
            for node in 0..len {
                if t.kind[node] == NodeKind::Decision {
                    t.slot[node] = new_info[t.slot[node] as usize];
                }
            }
        }
        if renumbered || nodes_moved {
            for (info, &node) in first_node.iter().enumerate() {
                let player = self.raw[info].player as usize;
                self.raw[info].parent_seq = self.node_seqs[node * n + player];
            }
        }
    }

    /// The tree, once every node added is described.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] naming a node added but never described;
    /// [`Error::LimitExceeded`] past `max_nodes` and [`Error::TreeTooLarge`] past
    /// [`MAX_NODES`] (raised as the nodes are added).
    pub fn finish(mut self) -> Result<GameTree> {
        if self.pending == 0 {
            self.renumber_breadth_first();
        }
        let Self {
            mut t,
            raw,
            raw_legal,
            mut raw_keys,
            raw_tensors,
            tensor_size,
            recall_broken,
            pending,
            ..
        } = self;
        if pending > 0 {
            let node = (0..t.kind.len())
                .find(|&i| {
                    t.kind[i] == NodeKind::Terminal
                        && t.terminal_node.get(t.slot[i] as usize).is_none_or(|&n| n as usize != i)
                })
                .unwrap_or(0);
            return Err(Error::Unsupported(format!("{}: node {node} was added but never described", t.name)));
        }
        let n = t.num_players;
        // Renumber infosets grouped by player, keeping discovery order within a player (a
        // parent infoset is discovered before its children).
        let mut order: Vec<u32> = (0..raw.len() as u32).collect();
        order.sort_by_key(|&i| raw[i as usize].player);
        let mut new_id = vec![0u32; raw.len()];
        for (new, &old) in order.iter().enumerate() {
            new_id[old as usize] = new as u32;
        }
        t.legal_start.push(0);
        for &old in &order {
            let r = &raw[old as usize];
            t.legal_actions
                .extend_from_slice(&raw_legal[r.legal_start..r.legal_start + r.num_legal as usize]);
            t.legal_start.push(t.legal_actions.len() as u32);
        }
        let num_sequences = t.legal_actions.len() as u32;
        let new_seq = sequences_in_order(&raw, &order);
        let remap = |seq: u32| -> u32 {
            if seq > EMPTY - n as u32 {
                // Player `EMPTY - seq`'s empty sequence.
                return num_sequences + (EMPTY - seq);
            }
            new_seq[seq as usize]
        };
        t.tensors.reserve(raw_tensors.len());
        for &old in &order {
            let r = &raw[old as usize];
            t.infoset_player.push(r.player);
            t.infoset_parent_seq.push(remap(r.parent_seq));
            let at = old as usize * tensor_size;
            t.tensors.extend_from_slice(&raw_tensors[at..at + tensor_size]);
        }
        for s in t.terminal_parent_seq.iter_mut() {
            *s = remap(*s);
        }
        for i in 0..t.kind.len() {
            if t.kind[i] == NodeKind::Decision {
                t.slot[i] = new_id[t.slot[i] as usize];
            }
        }
        for p in 0..n {
            let start = t.infoset_player.partition_point(|&q| (q as usize) < p);
            let end = t.infoset_player.partition_point(|&q| (q as usize) <= p);
            t.player_infosets.push(start..end);
        }
        // The discovered keys become the tree's, renumbered in place.
        raw_keys.reorder(&order);
        t.keys = raw_keys;
        if recall_broken {
            t.num_imperfect_recall = t.count_imperfect_recall();
        }
        Ok(t)
    }
}

/// Each sequence's number once the infosets `raw` (whose sequences are numbered
/// consecutively, infoset by infoset) take the order `order` (`order[new] = old`).
fn sequences_in_order(raw: &[RawInfoset], order: &[u32]) -> Vec<u32> {
    let mut new_base = vec![0u32; raw.len()];
    let mut next = 0u32;
    for &old in order {
        new_base[old as usize] = next;
        next += raw[old as usize].num_legal;
    }
    raw.iter().zip(new_base).flat_map(|(r, base)| base..base + r.num_legal).collect()
}

/// The rows of `v` (`n` values each) in the order `order` names them.
fn rows_in_order<T: Copy>(v: &[T], order: &[u32], n: usize) -> Vec<T> {
    order.iter().flat_map(|&k| v[k as usize * n..(k as usize + 1) * n].iter().copied()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{State, Turn};
    use crate::registry;

    /// `game` described breadth first (each node in the order it was added: nothing is
    /// renumbered), or depth first, the last child first.
    fn described<G: Game>(game: &G, breadth_first: bool) -> GameTree {
        let mut b = TreeBuilder::for_game(game, GameTree::DEFAULT_MAX_NODES);
        let mut pending = std::collections::VecDeque::from([(game.new_initial_state(), b.root())]);
        while let Some((state, node)) = if breadth_first { pending.pop_front() } else { pending.pop_back() } {
            let (actions, children): (Vec<ActionId>, Range<u32>) = match state.turn() {
                Turn::Terminal => {
                    b.terminal(node, &state.returns()).unwrap();
                    continue;
                }
                Turn::Chance => {
                    let outcomes = state.chance_outcomes();
                    let children = b.chance(node, &outcomes).unwrap();
                    (outcomes.iter().map(|o| o.0).collect(), children)
                }
                Turn::Player(p) => {
                    let legal = state.legal_actions();
                    let (children, new) =
                        b.decision(node, p.0, &state.information_state_string(p), &legal).unwrap();
                    if new {
                        state.write_tensor(p, b.new_tensor());
                    }
                    (legal, children)
                }
            };
            for (a, child) in actions.into_iter().zip(children) {
                let mut next = state.clone();
                next.apply_action(a);
                pending.push_back((next, child));
            }
        }
        b.finish().unwrap()
    }

    fn assert_same(a: &GameTree, b: &GameTree) {
        assert_eq!(a.kind, b.kind);
        assert_eq!(a.player, b.player);
        assert_eq!(a.slot, b.slot);
        assert_eq!(a.first_child, b.first_child);
        assert_eq!(a.num_children, b.num_children);
        assert_eq!(a.parent, b.parent);
        assert_eq!(a.action, b.action);
        assert_eq!(a.chance_prob, b.chance_prob);
        assert_eq!(a.terminal_node, b.terminal_node);
        assert_eq!(a.utilities, b.utilities);
        assert_eq!(a.terminal_parent_seq, b.terminal_parent_seq);
        assert!(a.keys.iter().eq(b.keys.iter()));
        assert_eq!(a.infoset_player, b.infoset_player);
        assert_eq!(a.legal_start, b.legal_start);
        assert_eq!(a.legal_actions, b.legal_actions);
        assert_eq!(a.infoset_parent_seq, b.infoset_parent_seq);
        assert_eq!(a.num_imperfect_recall, b.num_imperfect_recall);
        assert_eq!(a.player_infosets, b.player_infosets);
        assert!((0..a.keys.len()).all(|i| a.keys.get(a.keys.key(i)) == Some(i)));
        assert!((0..b.keys.len()).all(|i| b.keys.get(b.keys.key(i)) == Some(i)));
        assert_eq!(a.tensors, b.tensors);
    }

    /// Nodes described depth first (by a walk, or by `GameTree::build`, first child last)
    /// give the tree of a breadth-first description, field for field: two and three
    /// players, chance, imperfect recall.
    #[test]
    fn nodes_described_depth_first_give_the_breadth_first_tree() {
        for name in
            ["kuhn_poker", "kuhn_poker(players=3)", "leduc_poker", "goofspiel(num_cards=4)", "tic_tac_toe"]
        {
            let game = registry::load(name).unwrap();
            let reference = described(&game, true);
            let built = GameTree::build(&game).unwrap();
            assert_same(&built, &reference);
            let walked = described(&game, false);
            assert_same(&walked, &reference);
            if name.starts_with("goofspiel") {
                assert!(built.num_imperfect_recall > 0, "{name} has imperfect recall");
            }
        }
    }

    #[test]
    fn bad_descriptions_are_errors() {
        let moves = [ActionId(0), ActionId(1)];
        let mut b = TreeBuilder::new("g", 2, 2, None, None, 5);
        let (kids, _) = b.decision(0, 0, "root", &moves).unwrap();
        let err = |r: Result<()>| r.unwrap_err().to_string();
        assert!(err(b.terminal(0, &[0.0, 0.0])).contains("described twice"));
        assert!(err(b.terminal(9, &[0.0, 0.0])).contains("never added"));
        assert!(err(b.terminal(kids.start, &[0.0])).contains("not 2 finite numbers"));
        assert!(
            b.decision(kids.start, 2, "x", &moves)
                .unwrap_err()
                .to_string()
                .contains("the game has 2 players")
        );
        assert!(
            b.decision(kids.start, 1, "x", &[ActionId(2)]).unwrap_err().to_string().contains("not below")
        );
        assert!(
            b.decision(kids.start, 1, "x", &[ActionId(1), ActionId(0)])
                .unwrap_err()
                .to_string()
                .contains("ascending")
        );
        assert!(b.decision(kids.start, 1, "root", &moves).unwrap_err().to_string().contains("inconsistent"));
        assert!(b.chance(kids.start, &[(ActionId(0), 0.5)]).unwrap_err().to_string().contains("sum to 0.5"));
        assert!(
            b.chance(kids.start, &[(ActionId(0), -1.0), (ActionId(1), 2.0)])
                .unwrap_err()
                .to_string()
                .contains("probability -1")
        );
        b.terminal(kids.start, &[1.0, -1.0]).unwrap();
        let mut unfinished = TreeBuilder::new("g", 2, 2, None, None, 5);
        unfinished.decision(0, 0, "root", &moves).unwrap();
        assert!(
            unfinished.finish().unwrap_err().to_string().contains("node 1 was added but never described")
        );
        // Past the limit: the root and its two children fit in 3, not 2.
        let mut small = TreeBuilder::new("g", 2, 2, None, None, 2);
        assert!(matches!(small.decision(0, 0, "root", &moves), Err(Error::LimitExceeded { .. })));
        // Tensors given from outside are checked.
        let shape = TensorShape::new(crate::TensorKind::Observation, vec![3]);
        let mut b = TreeBuilder::new("g", 1, 2, None, Some(shape), 5);
        b.decision(0, 0, "s", &moves).unwrap();
        assert!(b.set_new_tensor("s", &[1.0]).unwrap_err().to_string().contains("has 1 values"));
        assert!(
            b.set_new_tensor("s", &[1.0, f32::NAN, 0.0]).unwrap_err().to_string().contains("finite: false")
        );
        b.set_new_tensor("s", &[1.0, 2.0, 3.0]).unwrap();
        b.terminal(1, &[0.0]).unwrap();
        b.terminal(2, &[0.0]).unwrap();
        assert_eq!(b.finish().unwrap().infoset_tensors().unwrap(), &[1.0, 2.0, 3.0][..]);
        let mut plain = TreeBuilder::new("g", 1, 2, None, None, 5);
        plain.decision(0, 0, "s", &moves).unwrap();
        assert!(plain.set_new_tensor("s", &[1.0]).unwrap_err().to_string().contains("without tensors"));
    }
}
