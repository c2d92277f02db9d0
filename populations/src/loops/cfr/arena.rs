//! The tree as CFR's walks read it ([`Arena`]): its nodes in one array of [`Node`]s, with
//! chance probabilities, utilities and the sequences of each information set beside them.
//! The exact walks (`cfr.rs`, `lanes.rs`) and the sampled ones (`mccfr.rs`) share it.

use metagame_games::flat::cumulate;
use metagame_games::{GameTree, InfosetId, NodeKind, PlayerId, TabularPolicy};

/// One node of the walk's compact copy of the tree (shared with the sampled walks of
/// [`crate::loops::mccfr`]).
#[derive(Clone, Copy)]
pub(in crate::loops) enum Node {
    /// Utilities at `utilities[offset..offset + num_players]`.
    Terminal { offset: u32 },
    /// Children `first..first + count`, probabilities in `chance_prob`.
    Chance { first: u32, count: u32 },
    /// Children `first..first + count`, child `k` after the infoset's `k`-th legal action,
    /// whose sequence is `seq + k`.
    Decision { player: u32, seq: u32, first: u32, count: u32 },
}

/// The tree as the walks read it: nodes in one array, no accessor calls.
pub(in crate::loops) struct Arena {
    pub(in crate::loops) nodes: Vec<Node>,
    /// By child node: the probability of a chance node's child.
    pub(in crate::loops) chance_prob: Vec<f64>,
    /// By child node: a chance node's children's probabilities accumulated left to right,
    /// the last positive one's entry and those after it set to 2
    /// ([`metagame_games::flat::cumulate`]), for sampling.
    pub(in crate::loops) chance_cum: Vec<f64>,
    pub(in crate::loops) utilities: Vec<f64>,
    /// By node: the action (a chance outcome, or a player's) that leads to it; the hand walk
    /// matches chance children of different deals by it.
    pub(in crate::loops) action: Vec<u32>,
    /// `seq_start[i]..seq_start[i + 1]`: infoset `i`'s sequences.
    pub(in crate::loops) seq_start: Vec<usize>,
}

impl Arena {
    pub(in crate::loops) fn new(tree: &GameTree) -> Self {
        let n = tree.num_players();
        let mut seq_start = Vec::with_capacity(tree.num_infosets() + 1);
        seq_start.push(0);
        for i in 0..tree.num_infosets() {
            let last = seq_start[i];
            seq_start.push(last + tree.legal_actions(InfosetId(i)).len());
        }
        let mut utilities = Vec::with_capacity(tree.num_terminals() * n);
        let nodes: Vec<Node> = (0..tree.num_nodes())
            .map(|node| {
                let children = tree.children(node);
                let (first, count) = (children.start as u32, children.len() as u32);
                match tree.node_kind(node) {
                    NodeKind::Terminal => {
                        let offset = utilities.len() as u32;
                        utilities.extend_from_slice(tree.terminal_utilities(node));
                        Node::Terminal { offset }
                    }
                    NodeKind::Chance => Node::Chance { first, count },
                    NodeKind::Decision => Node::Decision {
                        player: tree.node_player(node) as u32,
                        seq: seq_start[tree.node_infoset(node).0] as u32,
                        first,
                        count,
                    },
                }
            })
            .collect();
        let chance_prob: Vec<f64> = (0..tree.num_nodes()).map(|node| tree.chance_prob(node)).collect();
        let mut chance_cum = vec![0.0; tree.num_nodes()];
        for node in &nodes {
            if let Node::Chance { first, count } = *node {
                let children = first as usize..(first + count) as usize;
                cumulate(chance_prob[children.clone()].iter().copied(), &mut chance_cum[children]);
            }
        }
        let action = (0..tree.num_nodes()).map(|node| tree.node_action(node).0 as u32).collect();
        Arena { nodes, chance_prob, chance_cum, utilities, action, seq_start }
    }

    /// The average policy of a cumulative policy (by sequence): normalised per infoset,
    /// uniform where it is all zero.
    pub(in crate::loops) fn average_policy(
        &self,
        tree: &GameTree,
        cumulative_policy: &[f64],
    ) -> TabularPolicy {
        self.policy_from(tree, cumulative_policy, |cum, row| {
            let sum: f64 = cum.iter().sum();
            if sum == 0.0 {
                row.fill(1.0 / cum.len() as f64);
            } else {
                for (r, &c) in row.iter_mut().zip(cum) {
                    *r = c / sum;
                }
            }
        })
    }

    /// A tabular policy whose row at each infoset `fill` computes from `table`'s entries of
    /// the infoset's sequences (in legal-action order).
    pub(in crate::loops) fn policy_from(
        &self,
        tree: &GameTree,
        table: &[f64],
        mut fill: impl FnMut(&[f64], &mut [f64]),
    ) -> TabularPolicy {
        let mut policy = TabularPolicy::uniform(tree);
        let mut row = Vec::new();
        for i in 0..tree.num_infosets() {
            let id = InfosetId(i);
            let s = self.seq_start[i]..self.seq_start[i + 1];
            row.clear();
            row.resize(s.len(), 0.0);
            fill(&table[s], &mut row);
            let out = policy.row_mut(id);
            for (a, &p) in tree.legal_actions(id).iter().zip(&row) {
                out[a.0] = p;
            }
        }
        policy
    }

    /// A player's sequences (infosets are grouped by player, so they are contiguous).
    pub(in crate::loops) fn player_sequences(
        &self,
        tree: &GameTree,
        player: usize,
    ) -> std::ops::Range<usize> {
        let infosets = tree.infosets_of(PlayerId(player));
        self.seq_start[infosets.start]..self.seq_start[infosets.end]
    }
}
