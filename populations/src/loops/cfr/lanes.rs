//! CFR's walk over the public tree, one lane per deal: the same arithmetic as the history
//! walk ([`super::Walk`]), entry for entry, in an order that keeps every sum bit-identical.
//!
//! Many games deal all their private information first and then play a tree whose shape
//! does not depend on the deal: liar's dice (the dice, then the bids), Kuhn poker (the
//! cards, then the bets). The history walk visits that tree once per deal; this walk visits
//! it once, with a vector of one value per deal ("lane") at every position, so the per-node
//! work (matching the node, the calls, loading the children) is paid once per position
//! instead of once per history, and a position is skipped outright when no lane reaches it.
//!
//! [`Lanes::new`] accepts a tree when
//! - the root is a chance node and the chance nodes above the first decision or terminal of
//!   every path (the deals) are the only chance nodes, with at least two deals;
//! - every deal's subtree has the same shape: at each position the same kind, the same
//!   acting player and the same number of children in every lane;
//! - each information set lies at one position (its histories differ only in the deal).
//!
//! Why the sums are the history walk's bit for bit: the values `v(h)` are computed per lane
//! with the same operations in the same order; a regret or cumulative-policy entry belongs to
//! one infoset, so to one position, where the lanes add to it in deal order, the order in
//! which the history walk reaches the infoset's histories; and a lane in which no player
//! reaches a decision node gets the value 0 and adds nothing, as the history walk's pruning.

use super::{Arena, AverageWeight, Node};

/// A position of the shared subtree.
#[derive(Clone, Copy)]
enum Position {
    /// Every lane's utilities at `utilities[offset + player * lanes + lane]`.
    Terminal { offset: u32 },
    /// Children `first..first + count`; lane `l`'s sequences start at `seqs[at + l]` in the
    /// walk's order of sequences ([`Lanes::rows`]).
    Decision { player: u32, at: u32, first: u32, count: u32 },
}

/// The shared subtree of the deals and what differs between them.
pub(super) struct Lanes {
    num_players: usize,
    /// Number of deals.
    lanes: usize,
    /// Positions; the deals' roots are position 0, a node's children are contiguous.
    positions: Vec<Position>,
    seqs: Vec<u32>,
    utilities: Vec<f64>,
    /// Each lane's chance reach: the product of the chance probabilities on its path, root
    /// first (as the history walk multiplies them).
    chance_reach: Vec<f64>,
    /// Longest path of positions (a terminal deal root is depth 1).
    depth: usize,
    /// Most children of a position.
    max_children: usize,
    /// By player: where its infosets' sequences lie in the walk's own order, which puts the
    /// infosets of a position side by side and the positions in the order the walk visits
    /// them, so that the walk reads and writes its tables front to back. The walk copies
    /// the tables into that order and back.
    /// `(local, seq)` for each of the player's sequences: the walk's index, the tree's.
    rows: Vec<Vec<(u32, u32)>>,
    num_sequences: usize,
}

/// Why a tree is not walked in lanes (only to stop the build).
struct NotShared;

impl Lanes {
    /// The lanes of `arena`'s tree, or `None` where the conditions of the module docs fail.
    ///
    /// # Complexity
    ///
    /// O(nodes) time, O(nodes + sequences) memory.
    pub(super) fn new(arena: &Arena, num_players: usize, num_sequences: usize) -> Option<Self> {
        if !matches!(arena.nodes.first(), Some(Node::Chance { .. })) {
            return None;
        }
        let mut deals = Vec::new();
        let mut chance_reach = Vec::new();
        collect_deals(arena, 0, 1.0, &mut deals, &mut chance_reach);
        if deals.len() < 2 {
            return None;
        }
        let mut lanes = Lanes {
            num_players,
            lanes: deals.len(),
            positions: vec![Position::Terminal { offset: 0 }],
            seqs: Vec::new(),
            utilities: Vec::new(),
            chance_reach,
            depth: 0,
            max_children: 0,
            rows: vec![Vec::new(); num_players],
            num_sequences,
        };
        let mut owner = vec![u32::MAX; num_sequences];
        lanes.fill(arena, 0, &deals, 1, &mut owner).ok()?;
        // INVARIANT: `fill` saw every decision node, so every sequence, below the deals.
        let mut local = vec![u32::MAX; num_sequences];
        let mut next = 0;
        lanes.order(0, &mut local, &mut next);
        Some(lanes)
    }

    /// Number the sequences of the positions below `at` in the walk's order (pre-order, a
    /// position's infosets in lane order) into `local`, and rewrite `seqs` to that numbering.
    fn order(&mut self, at: usize, local: &mut [u32], next: &mut u32) {
        let Position::Decision { player, at: seq_at, first, count } = self.positions[at] else { return };
        for l in 0..self.lanes {
            let seq = self.seqs[seq_at as usize + l];
            if local[seq as usize] == u32::MAX {
                local[seq as usize] = *next;
                self.rows[player as usize].extend((0..count).map(|c| (*next + c, seq + c)));
                *next += count;
            }
            self.seqs[seq_at as usize + l] = local[seq as usize];
        }
        for c in 0..count {
            self.order((first + c) as usize, local, next);
        }
    }

    /// Fill position `at` from the lanes' nodes `nodes` (one per lane) at depth `depth`.
    fn fill(
        &mut self,
        arena: &Arena,
        at: usize,
        nodes: &[usize],
        depth: usize,
        owner: &mut [u32],
    ) -> Result<(), NotShared> {
        self.depth = self.depth.max(depth);
        let (n, k) = (self.num_players, self.lanes);
        match arena.nodes[nodes[0]] {
            Node::Chance { .. } => Err(NotShared),
            Node::Terminal { .. } => {
                let offset = self.utilities.len();
                self.utilities.resize(offset + n * k, 0.0);
                for (l, &node) in nodes.iter().enumerate() {
                    let Node::Terminal { offset: u } = arena.nodes[node] else { return Err(NotShared) };
                    for p in 0..n {
                        self.utilities[offset + p * k + l] = arena.utilities[u as usize + p];
                    }
                }
                self.positions[at] = Position::Terminal { offset: offset as u32 };
                Ok(())
            }
            Node::Decision { player, count, .. } => {
                self.max_children = self.max_children.max(count as usize);
                let seq_at = self.seqs.len();
                let mut firsts = Vec::with_capacity(k);
                for &node in nodes {
                    match arena.nodes[node] {
                        Node::Decision { player: q, seq, first, count: c } if q == player && c == count => {
                            let o = &mut owner[seq as usize];
                            if *o != u32::MAX && *o != at as u32 {
                                return Err(NotShared);
                            }
                            *o = at as u32;
                            self.seqs.push(seq);
                            firsts.push(first as usize);
                        }
                        _ => return Err(NotShared),
                    }
                }
                let first = self.positions.len();
                self.positions.resize(first + count as usize, Position::Terminal { offset: 0 });
                self.positions[at] =
                    Position::Decision { player, at: seq_at as u32, first: first as u32, count };
                let mut children = vec![0; k];
                for c in 0..count as usize {
                    for (child, &f) in children.iter_mut().zip(&firsts) {
                        *child = f + c;
                    }
                    self.fill(arena, first + c, &children, depth + 1, owner)?;
                }
                Ok(())
            }
        }
    }

    /// The buffers a walk needs.
    pub(super) fn buffers(&self) -> Buffers {
        let (m, k) = (self.num_sequences, self.lanes);
        let stack = self.depth * ((self.num_players + 2 + self.max_children) * k);
        Buffers {
            tables: vec![0.0; 3 * m + stack],
            live: vec![0; (self.depth + 1) * k],
            children: Vec::new(),
        }
    }

    /// Walk for `player`: add its counterfactual regrets and reach-weighted policy, as
    /// [`super::Walk`] does from the root.
    pub(super) fn walk(
        &self,
        player: usize,
        current: &[f64],
        regrets: &mut [f64],
        cumulative_policy: &mut [f64],
        weight: AverageWeight,
        b: &mut Buffers,
    ) {
        let (n, k, m) = (self.num_players, self.lanes, self.num_sequences);
        let (local_current, rest) = b.tables.split_at_mut(m);
        let (local_regrets, rest) = rest.split_at_mut(m);
        let (local_cumulative, rest) = rest.split_at_mut(m);
        for &(local, seq) in self.rows.iter().flatten() {
            local_current[local as usize] = current[seq as usize];
        }
        for &(local, seq) in &self.rows[player] {
            local_regrets[local as usize] = regrets[seq as usize];
            local_cumulative[local as usize] = cumulative_policy[seq as usize];
        }
        let (reach, rest) = rest.split_at_mut((n + 1) * k);
        reach[..n * k].fill(1.0);
        reach[n * k..].copy_from_slice(&self.chance_reach);
        let (out, rest) = rest.split_at_mut(k);
        let (all, live) = b.live.split_at_mut(k);
        for (l, a) in all.iter_mut().enumerate() {
            *a = l as u32;
        }
        let mut walk = LaneWalk {
            lanes: self,
            player,
            current: local_current,
            regrets: local_regrets,
            cumulative_policy: local_cumulative,
            weight,
            children: &mut b.children,
        };
        walk.value(0, reach, all, out, rest, live);
        for &(local, seq) in &self.rows[player] {
            regrets[seq as usize] = local_regrets[local as usize];
            cumulative_policy[seq as usize] = local_cumulative[local as usize];
        }
    }
}

/// The walk's buffers ([`Lanes::buffers`]): the current policy, the regrets and the
/// cumulative policy in the walk's order, then the reach, value and probability slabs of
/// every depth; the lists of live lanes (all lanes, then one list per depth); the stack of
/// children's values.
pub(super) struct Buffers {
    tables: Vec<f64>,
    live: Vec<u32>,
    children: Vec<f64>,
}

/// The first non-chance nodes below `node` in child order, with their chance reach.
fn collect_deals(
    arena: &Arena,
    node: usize,
    reach: f64,
    deals: &mut Vec<usize>,
    chance_reach: &mut Vec<f64>,
) {
    match arena.nodes[node] {
        Node::Chance { first, count } => {
            for child in first as usize..(first + count) as usize {
                collect_deals(arena, child, reach * arena.chance_prob[child], deals, chance_reach);
            }
        }
        _ => {
            deals.push(node);
            chance_reach.push(reach);
        }
    }
}

/// What one player's lane walk reads and writes.
struct LaneWalk<'a> {
    lanes: &'a Lanes,
    player: usize,
    current: &'a [f64],
    regrets: &'a mut [f64],
    cumulative_policy: &'a mut [f64],
    weight: AverageWeight,
    /// Children's values of the walking player's positions on the path: per child, its live
    /// lanes' values in lane order.
    children: &'a mut Vec<f64>,
}

impl LaneWalk<'_> {
    /// The walking player's value at position `at` into `out[l]` for each lane `l` of
    /// `lanes` (the others are left as they are), with `reach` the lanes' reach
    /// probabilities (`[player * lanes + lane]`, chance last); `stack` and `live_stack` are
    /// scratch for the positions below.
    fn value(
        &mut self,
        at: usize,
        reach: &[f64],
        lanes: &[u32],
        out: &mut [f64],
        stack: &mut [f64],
        live_stack: &mut [u32],
    ) {
        let (n, k) = (self.lanes.num_players, self.lanes.lanes);
        match self.lanes.positions[at] {
            Position::Terminal { offset } => {
                let from = offset as usize + self.player * k;
                let utilities = &self.lanes.utilities[from..from + k];
                for &l in lanes {
                    out[l as usize] = utilities[l as usize];
                }
            }
            Position::Decision { player, at: seq_at, first, count } => {
                // A lane no player reaches is pruned, as in the history walk: its value is 0
                // and the walk below skips it.
                let (live, live_rest) = live_stack.split_at_mut(k);
                let mut m = 0;
                for &l in lanes {
                    let l = l as usize;
                    if (0..n).any(|i| reach[i * k + l] != 0.0) {
                        live[m] = l as u32;
                        m += 1;
                    }
                    out[l] = 0.0;
                }
                if m == 0 {
                    return;
                }
                let live = &live[..m];
                let (q, first, count) = (player as usize, first as usize, count as usize);
                let seqs = &self.lanes.seqs[seq_at as usize..seq_at as usize + k];
                let current = self.current;
                // The children's probabilities, `[child * lanes + lane]`, gathered once.
                let (probs, rest) = stack.split_at_mut(count * k);
                for &l in live {
                    let l = l as usize;
                    let seq = seqs[l] as usize;
                    for (c, &p) in current[seq..seq + count].iter().enumerate() {
                        probs[c * k + l] = p;
                    }
                }
                let (child_reach, rest) = rest.split_at_mut((n + 1) * k);
                let (child_out, rest) = rest.split_at_mut(k);
                for &l in live {
                    for i in 0..=n {
                        child_reach[i * k + l as usize] = reach[i * k + l as usize];
                    }
                }
                let updating = q == self.player;
                let base = self.children.len();
                for (c, probs) in probs.chunks_exact(k).enumerate() {
                    for &l in live {
                        let l = l as usize;
                        child_reach[q * k + l] = reach[q * k + l] * probs[l];
                    }
                    self.value(first + c, child_reach, live, child_out, rest, live_rest);
                    for &l in live {
                        let l = l as usize;
                        out[l] += probs[l] * child_out[l];
                    }
                    if updating {
                        self.children.extend(live.iter().map(|&l| child_out[l as usize]));
                    }
                }
                if updating {
                    for (j, &l) in live.iter().enumerate() {
                        let l = l as usize;
                        // OpenSpiel's CounterFactualReachProb: the others' reaches in player
                        // order, chance last.
                        let mut others = 1.0;
                        for i in (0..=n).filter(|&i| i != q) {
                            others *= reach[i * k + l];
                        }
                        let (v, s) = (out[l], reach[q * k + l]);
                        let seq = seqs[l] as usize;
                        for c in 0..count {
                            let p = probs[c * k + l];
                            self.regrets[seq + c] += others * (self.children[base + c * m + j] - v);
                            self.cumulative_policy[seq + c] += match self.weight {
                                AverageWeight::One => s * p,
                                AverageWeight::Before(w) => w * s * p,
                                AverageWeight::After(w) => s * p * w,
                            };
                        }
                    }
                    self.children.truncate(base);
                }
            }
        }
    }
}
