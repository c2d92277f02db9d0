//! `GameTree`: a whole game enumerated once into a flat arena (structure of arrays).
//!
//! Every tabular algorithm (expected returns, best response, NashConv, sampled matches, the
//! GPU kernel) walks these arrays, never `State` objects or strings. Nodes are numbered so
//! that a parent comes before its children and the children of a node are consecutive.

use std::collections::HashMap;

use std::ops::Range;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, PlayerId, State, TensorShape, Turn};
use crate::key_table::KeyTable;

/// Global index of an information set (all players' infosets, grouped by player).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InfosetId(pub usize);

/// What happens at a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum NodeKind {
    /// A player decides.
    Decision = 0,
    /// Nature draws a child with the children's `chance_prob`.
    Chance = 1,
    /// Game over; utilities in [`GameTree::terminal_utilities`].
    Terminal = 2,
}

/// The largest tree the arena indexes (node ids are `u32`).
pub const MAX_NODES: usize = u32::MAX as usize - 1;

/// Marks "no parent" (the root).
pub(crate) const NO_PARENT: u32 = u32::MAX;

/// A game enumerated into flat arrays, with its information sets per player.
///
/// # Examples
///
/// ```
/// use metagame_games::{registry, GameTree, PlayerId};
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// assert_eq!(tree.num_nodes(), 58);
/// assert_eq!(tree.infosets_of(PlayerId(0)).len(), 6);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct GameTree {
    pub(crate) name: String,
    pub(crate) num_players: usize,
    pub(crate) num_actions: usize,
    pub(crate) utility_sum: Option<f64>,

    // Per node.
    pub(crate) kind: Vec<NodeKind>,
    /// Acting player (decision nodes), else 0.
    pub(crate) player: Vec<u32>,
    /// Infoset id (decision nodes) or terminal index (terminals), else 0.
    pub(crate) slot: Vec<u32>,
    pub(crate) first_child: Vec<u32>,
    pub(crate) num_children: Vec<u32>,
    pub(crate) parent: Vec<u32>,
    /// The action or chance outcome that led here from the parent.
    pub(crate) action: Vec<u32>,
    /// Probability of this node given its chance parent (1 under decision nodes).
    pub(crate) chance_prob: Vec<f64>,

    // Per terminal.
    pub(crate) terminal_node: Vec<u32>,
    /// `[terminal * num_players + player]`.
    pub(crate) utilities: Vec<f64>,
    /// `[terminal * num_players + player]`: the player's last infoset-action before the
    /// terminal, or its empty sequence (meaningful with perfect recall only).
    pub(crate) terminal_parent_seq: Vec<u32>,

    // Per infoset.
    /// Each infoset's information-state string, and the infoset of each string.
    pub(crate) keys: KeyTable,
    pub(crate) infoset_player: Vec<u32>,
    /// Legal actions of infoset `i`: `legal_actions[legal_start[i]..legal_start[i + 1]]`;
    /// `legal_start[i] + k` is also the global index of the infoset-action pair (a sequence).
    pub(crate) legal_start: Vec<u32>,
    pub(crate) legal_actions: Vec<ActionId>,
    /// The acting player's sequence leading to the infoset (a parent infoset-action or the
    /// player's empty sequence `num_sequences + player`); with imperfect recall, that of the
    /// infoset's first node, and nothing may rely on it.
    pub(crate) infoset_parent_seq: Vec<u32>,
    /// Number of infosets whose histories differ in their player's own earlier
    /// infoset-action pairs (0: perfect recall).
    pub(crate) num_imperfect_recall: usize,
    pub(crate) player_infosets: Vec<Range<usize>>,
    /// The game's tensor shape, if it gives tensors.
    pub(crate) tensor_shape: Option<TensorShape>,
    /// `[infoset × tensor size]`: the acting player's tensor at each infoset, written once
    /// at the infoset's first node (empty without a tensor shape).
    pub(crate) tensors: Vec<f32>,
}

/// Histories of `game` counted along the first outcome of every chance node, its subtree
/// standing for those of all the outcomes; stops once the count passes `at_most`.
///
/// Exact for games whose chance outcomes all lead to subtrees of the same shape: the cards
/// dealt never change who acts, what is legal or when the game ends (Kuhn and Leduc poker).
///
/// # Complexity
///
/// O(nodes of the tree cut to one outcome per chance node), at most `at_most + 1` of them;
/// memory O(depth · actions).
pub(crate) fn count_histories_alike_chance<G: Game>(game: &G, at_most: u64) -> u64 {
    let mut total: u64 = 0;
    let mut stack = vec![(game.new_initial_state(), 1u64)];
    while let Some((state, weight)) = stack.pop() {
        total = total.saturating_add(weight);
        if total > at_most {
            break;
        }
        match state.turn() {
            Turn::Terminal => {}
            Turn::Chance => {
                let outcomes = state.chance_outcomes();
                if let Some(&(first, _)) = outcomes.first() {
                    let mut child = state;
                    child.apply_action(first);
                    stack.push((child, weight.saturating_mul(outcomes.len() as u64)));
                }
            }
            Turn::Player(_) => {
                for a in state.legal_actions() {
                    let mut child = state.clone();
                    child.apply_action(a);
                    stack.push((child, weight));
                }
            }
        }
    }
    total
}

impl GameTree {
    /// The node limit of [`GameTree::build`]: 10 million nodes, about 2.5 GB at the peak of
    /// the build (measured 230–260 bytes per node on Kuhn and Leduc poker). The largest
    /// registry games within it are `kuhn_poker(players=6)` (1.9 million nodes) and
    /// `leduc_poker(players=3)` (1.8 million); [`GameTree::build_with_limit`] takes another.
    pub const DEFAULT_MAX_NODES: usize = 10_000_000;

    /// The number of infosets reached with different own histories of their player (the
    /// sequence of its earlier infoset-action pairs). Histories are interned as
    /// (the history before, the last sequence) pairs, parents before children.
    ///
    /// # Complexity
    ///
    /// O(nodes · players) time and memory; run only for trees that some infoset's last
    /// sequences showed to lack perfect recall.
    pub(crate) fn count_imperfect_recall(&self) -> usize {
        const UNSEEN: u32 = u32::MAX;
        let n = self.num_players;
        // `own[node * n + p]`: player `p`'s own history at `node`, 0 the empty one.
        let mut own = vec![0u32; self.kind.len() * n];
        let mut interned: HashMap<(u32, u32), u32> = HashMap::new();
        let mut first = vec![UNSEEN; self.num_infosets()];
        let mut imperfect = vec![false; self.num_infosets()];
        for node in 0..self.kind.len() {
            let parent = self.parent[node];
            if parent != NO_PARENT {
                let par = parent as usize;
                own.copy_within(par * n..(par + 1) * n, node * n);
                if self.kind[par] == NodeKind::Decision {
                    let p = self.player[par] as usize;
                    let seq =
                        self.legal_start[self.slot[par] as usize] + (node as u32 - self.first_child[par]);
                    let next = interned.len() as u32 + 1;
                    own[node * n + p] = *interned.entry((own[par * n + p], seq)).or_insert(next);
                }
            }
            if self.kind[node] == NodeKind::Decision {
                let (i, history) = (self.slot[node] as usize, own[node * n + self.player[node] as usize]);
                if first[i] == UNSEEN {
                    first[i] = history;
                } else if first[i] != history {
                    imperfect[i] = true;
                }
            }
        }
        imperfect.iter().filter(|&&b| b).count()
    }

    /// Room for `nodes` nodes in every per-node vector.
    pub(crate) fn reserve_nodes(&mut self, nodes: usize) {
        self.kind.reserve(nodes);
        self.player.reserve(nodes);
        self.slot.reserve(nodes);
        self.first_child.reserve(nodes);
        self.num_children.reserve(nodes);
        self.parent.reserve(nodes);
        self.action.reserve(nodes);
        self.chance_prob.reserve(nodes);
    }

    pub(crate) fn push_node(&mut self, parent: u32, action: u32, chance_prob: f64) -> u32 {
        let id = self.kind.len() as u32;
        self.kind.push(NodeKind::Terminal);
        self.player.push(0);
        self.slot.push(0);
        self.first_child.push(0);
        self.num_children.push(0);
        self.parent.push(parent);
        self.action.push(action);
        self.chance_prob.push(chance_prob);
        id
    }

    /// The game string of the game this tree was built from.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Number of players.
    pub fn num_players(&self) -> usize {
        self.num_players
    }
    /// Width of a tabular policy row (the game's number of distinct actions).
    pub fn num_actions(&self) -> usize {
        self.num_actions
    }
    /// `Some(c)` when every terminal's utilities sum to `c`.
    pub fn utility_sum(&self) -> Option<f64> {
        self.utility_sum
    }
    /// Number of nodes (histories), chance and terminal nodes included.
    pub fn num_nodes(&self) -> usize {
        self.kind.len()
    }
    /// Number of terminal nodes.
    pub fn num_terminals(&self) -> usize {
        self.terminal_node.len()
    }
    /// Number of nodes of a kind.
    pub fn count(&self, kind: NodeKind) -> usize {
        self.kind.iter().filter(|&&k| k == kind).count()
    }
    /// Number of information sets of all players.
    pub fn num_infosets(&self) -> usize {
        self.keys.len()
    }
    /// Number of infoset-action pairs (sequences) of all players.
    pub fn num_sequences(&self) -> usize {
        self.legal_actions.len()
    }
    /// Whether every player recalls its own earlier information states and actions: all
    /// histories of an information state share the player's sequence of earlier
    /// (information state, action) pairs (Kuhn 1953). Realisation plans, the sequence form
    /// and reach-weighted aggregation need it; OpenSpiel's best response and CFR, keyed by
    /// information-state strings, run either way.
    pub fn has_perfect_recall(&self) -> bool {
        self.num_imperfect_recall == 0
    }
    /// The number of information states reached with different own histories of their
    /// player (0 with perfect recall). `goofspiel(num_cards=4)`, whose strings forget the
    /// order of a player's own bids, has 1056 of 6056.
    pub fn num_imperfect_recall_infosets(&self) -> usize {
        self.num_imperfect_recall
    }
    /// [`Error::ImperfectRecall`] unless the tree has perfect recall; `what` names the
    /// computation that needs it.
    pub(crate) fn require_perfect_recall(&self, what: &'static str) -> Result<()> {
        if self.has_perfect_recall() {
            return Ok(());
        }
        Err(Error::ImperfectRecall { game: self.name.clone(), num_infosets: self.num_imperfect_recall, what })
    }
    /// The global ids of `player`'s infosets.
    pub fn infosets_of(&self, player: PlayerId) -> Range<usize> {
        self.player_infosets[player.0].clone()
    }
    /// OpenSpiel's information-state string of an infoset.
    pub fn infoset_key(&self, infoset: InfosetId) -> &str {
        self.keys.key(infoset.0)
    }
    /// The player acting at an infoset.
    pub fn infoset_player(&self, infoset: InfosetId) -> usize {
        self.infoset_player[infoset.0] as usize
    }
    /// Legal actions at an infoset, ascending.
    pub fn legal_actions(&self, infoset: InfosetId) -> &[ActionId] {
        let i = infoset.0;
        &self.legal_actions[self.legal_start[i] as usize..self.legal_start[i + 1] as usize]
    }
    /// The game's tensor shape ([`Game::tensor_shape`]), if it gives tensors.
    pub fn tensor_shape(&self) -> Option<&TensorShape> {
        self.tensor_shape.as_ref()
    }
    /// The acting player's tensor at an infoset (flattened), if the game gives tensors.
    pub fn infoset_tensor(&self, infoset: InfosetId) -> Option<&[f32]> {
        let d = self.tensor_shape.as_ref()?.size();
        self.tensors.get(infoset.0 * d..(infoset.0 + 1) * d)
    }
    /// Every infoset's tensor, `[infosets × tensor size]` row-major in infoset order, if the
    /// game gives tensors.
    pub fn infoset_tensors(&self) -> Option<&[f32]> {
        self.tensor_shape.as_ref().map(|_| self.tensors.as_slice())
    }
    /// The infoset with this information-state string.
    pub fn infoset_by_key(&self, key: &str) -> Option<InfosetId> {
        self.keys.get(key).map(InfosetId)
    }
    /// The kind of a node.
    pub fn node_kind(&self, node: usize) -> NodeKind {
        self.kind[node]
    }
    /// The acting player at a decision node.
    pub fn node_player(&self, node: usize) -> usize {
        self.player[node] as usize
    }
    /// The infoset of a decision node.
    pub fn node_infoset(&self, node: usize) -> InfosetId {
        InfosetId(self.slot[node] as usize)
    }
    /// The children of a node (consecutive ids; empty at terminals).
    pub fn children(&self, node: usize) -> Range<usize> {
        let start = self.first_child[node] as usize;
        start..start + self.num_children[node] as usize
    }
    /// The action or chance outcome leading to a (non-root) node.
    pub fn node_action(&self, node: usize) -> ActionId {
        ActionId(self.action[node] as usize)
    }
    /// The probability of a node given its chance parent (1 below decision nodes).
    pub fn chance_prob(&self, node: usize) -> f64 {
        self.chance_prob[node]
    }
    /// The smallest and largest terminal utility of `player` (`(inf, -inf)` for a player the
    /// game lacks or a tree without terminals).
    pub fn utility_range(&self, player: PlayerId) -> (f64, f64) {
        let empty = (f64::INFINITY, f64::NEG_INFINITY);
        if player.0 >= self.num_players {
            return empty;
        }
        // One block of `num_players` utilities per terminal.
        self.utilities
            .iter()
            .skip(player.0)
            .step_by(self.num_players)
            .fold(empty, |(lo, hi), &u| (lo.min(u), hi.max(u)))
    }
    /// The smallest and largest terminal utility of any player: the range results are
    /// scored over (a win 1, a loss 0).
    pub fn utility_bounds(&self) -> (f64, f64) {
        self.utilities.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &u| (lo.min(u), hi.max(u)))
    }
    /// Utilities at a terminal node.
    pub fn terminal_utilities(&self, node: usize) -> &[f64] {
        let t = self.slot[node] as usize;
        &self.utilities[t * self.num_players..(t + 1) * self.num_players]
    }
    /// The same tree with every terminal's utilities replaced by its win/loss outcome: 1
    /// for each player whose utility is the largest at that terminal, −1 for each whose
    /// utility is the smallest, 0 for the others and for everyone when all are equal (a
    /// tie). In a 2-player game a player's expected utility on it is 2·(win probability +
    /// ½·tie probability) − 1. Leagues train and score on it when matches count wins, not
    /// payoffs.
    ///
    /// # Complexity
    ///
    /// A copy of the tree (O(nodes)).
    pub fn with_win_outcomes(&self) -> GameTree {
        let mut tree = self.clone();
        let n = self.num_players;
        for block in tree.utilities.chunks_mut(n.max(1)) {
            let hi = block.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let lo = block.iter().copied().fold(f64::INFINITY, f64::min);
            for u in block.iter_mut() {
                *u = if hi == lo {
                    0.0
                } else if *u == hi {
                    1.0
                } else if *u == lo {
                    -1.0
                } else {
                    0.0
                };
            }
        }
        let sums: Vec<f64> = tree.utilities.chunks(n.max(1)).map(|b| b.iter().sum()).collect();
        tree.utility_sum = match sums.first() {
            Some(&c) if sums.iter().all(|&s| s == c) => Some(c),
            _ => None,
        };
        tree
    }
    /// The parent of every node (`u32::MAX` at the root), for kernels that walk upwards.
    pub fn parents(&self) -> &[u32] {
        &self.parent
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn win_outcomes_are_the_sign_of_the_utility_difference() {
        let tree = GameTree::build(&crate::registry::load("kuhn_poker").unwrap()).unwrap();
        let wins = tree.with_win_outcomes();
        assert_eq!(wins.utility_sum(), Some(0.0));
        assert_eq!(wins.utility_range(PlayerId(0)), (-1.0, 1.0));
        for n in (0..tree.num_nodes()).filter(|&n| tree.node_kind(n) == NodeKind::Terminal) {
            let (u, w) = (tree.terminal_utilities(n), wins.terminal_utilities(n));
            assert_eq!(w[0], (u[0] - u[1]).signum());
            assert_eq!(w[1], -w[0]);
        }
    }

    #[test]
    fn utility_range_is_the_range_over_terminal_nodes() {
        for spec in ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)"] {
            let tree = GameTree::build(&crate::registry::load(spec).unwrap()).unwrap();
            for p in 0..tree.num_players() {
                let walked = (0..tree.num_nodes())
                    .filter(|&n| tree.node_kind(n) == NodeKind::Terminal)
                    .map(|n| tree.terminal_utilities(n)[p])
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), u| (lo.min(u), hi.max(u)));
                assert_eq!(tree.utility_range(PlayerId(p)), walked, "{spec} player {p}");
            }
            assert_eq!(tree.utility_range(PlayerId(9)), (f64::INFINITY, f64::NEG_INFINITY));
        }
    }
    use super::*;
    use crate::registry;

    #[test]
    fn counted_histories_are_the_built_trees_sizes() {
        for spec in
            ["kuhn_poker", "kuhn_poker(players=3)", "kuhn_poker(players=4)", "leduc_poker", "matrix_rps"]
        {
            let game = registry::load(spec).unwrap();
            let tree = GameTree::build(&game).unwrap();
            if let Some(count) = game.count_histories(u64::MAX) {
                assert_eq!(count, tree.num_nodes() as u64, "{spec}");
            }
        }
    }

    #[test]
    fn oversized_games_fail_before_building() {
        // Histories: kuhn 7 players 36 196 001, leduc 4 players 349 388 741.
        for spec in [
            "kuhn_poker(players=7)",
            "kuhn_poker(players=10)",
            "leduc_poker(players=4)",
            "leduc_poker(players=10)",
        ] {
            let game = registry::load(spec).unwrap();
            let err = GameTree::build(&game).unwrap_err();
            assert!(
                matches!(
                    err,
                    Error::LimitExceeded { limit: 10_000_000, raise: "`GameTree::build_with_limit`", .. }
                ),
                "{spec}: {err}"
            );
        }
    }

    #[test]
    fn the_limit_counts_nodes_exactly_and_can_be_raised() {
        let kuhn = registry::load("kuhn_poker").unwrap();
        assert_eq!(GameTree::build_with_limit(&kuhn, 58).unwrap().num_nodes(), 58);
        assert!(GameTree::build_with_limit(&kuhn, 57).is_err());
        // Matrix games do not count their histories: checked while building (13 nodes).
        let rps = registry::load("matrix_rps").unwrap();
        assert_eq!(rps.count_histories(u64::MAX), None);
        assert_eq!(GameTree::build_with_limit(&rps, 13).unwrap().num_nodes(), 13);
        assert!(matches!(GameTree::build_with_limit(&rps, 12), Err(Error::LimitExceeded { .. })));
    }
}
