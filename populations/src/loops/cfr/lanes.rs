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
//!
//! The walk runs on the pool's threads ([`rayon::join`]): at the positions with the largest
//! subtrees ("forks") each child's subtree is a task of its own, and the fork's values and
//! regrets are summed in child order once its children are done; the tasks are small enough
//! (a sixteenth of the tree or less) for a thread to take over another's when the core is
//! busy. The bits do not depend on the threads: an infoset lies at one position, so every
//! entry of the tables is written by one task, in the order a single thread would write it,
//! and the walk's order of sequences (pre-order) gives each task a contiguous range of the
//! tables.

use std::collections::HashMap;
use std::sync::Mutex;

use super::arena::{Arena, Node};
use super::weight::AverageWeight;

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
    /// The terminal positions' utilities, each distinct block once: a game has few outcomes
    /// (liar's dice: who called on which bid), and a small table stays in the cache.
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
    /// The forks, in pre-order; where the root is one, it is the first.
    forks: Vec<Fork>,
    /// The root's task: the first fork, or the one sequential walk.
    root: Branch,
}

/// Positions with at most this share of the tree's positions below them are walked by one
/// thread (a leaf task); a larger decision position with two children or more forks.
const LEAF_SHARE: usize = 16;

/// Nor does a position fork with fewer histories than this below it (positions × lanes):
/// a fork costs about a microsecond, the walk some 5 ns per history.
pub(super) const MIN_FORK_HISTORIES: usize = 1 << 14;

/// A position whose children's subtrees are walked as separate tasks.
struct Fork {
    at: u32,
    /// The end of the position's own sequences, in the walk's order.
    own_end: u32,
    /// Each child's task.
    children: Vec<Branch>,
}

/// Where a task's share of the tables and buffers starts: its subtree's sequences and its
/// forks (its own first, when it is a fork; none when it is a leaf task).
#[derive(Clone, Copy)]
struct Branch {
    seq: u32,
    fork: u32,
    forks: bool,
}

/// A subtree in the walk's order of sequences: where its root's own sequences end, where
/// the subtree's end, and how many positions it has.
#[derive(Clone, Copy, Default)]
struct Span {
    own_end: u32,
    end: u32,
    positions: u32,
}

/// Why a tree is not walked in lanes (only to stop the build).
struct NotShared;

impl Lanes {
    /// The lanes of `arena`'s tree, or `None` where the conditions of the module docs fail;
    /// forks where more than [`MIN_FORK_HISTORIES`] histories lie below.
    ///
    /// # Complexity
    ///
    /// O(nodes) time, O(nodes + sequences) memory.
    pub(super) fn new(arena: &Arena, num_players: usize, num_sequences: usize) -> Option<Self> {
        Self::forking_from(arena, num_players, num_sequences, MIN_FORK_HISTORIES)
    }

    /// [`Lanes::new`], with forks where more than `min_histories` histories lie below.
    pub(super) fn forking_from(
        arena: &Arena,
        num_players: usize,
        num_sequences: usize,
        min_histories: usize,
    ) -> Option<Self> {
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
            forks: Vec::new(),
            root: Branch { seq: 0, fork: 0, forks: false },
        };
        let mut owner = vec![u32::MAX; num_sequences];
        lanes.fill(arena, 0, &deals, 1, &mut owner, &mut HashMap::new()).ok()?;
        // INVARIANT: `fill` saw every decision node, so every sequence, below the deals.
        let mut local = vec![u32::MAX; num_sequences];
        let mut next = 0;
        let mut spans = vec![Span::default(); lanes.positions.len()];
        lanes.order(0, &mut local, &mut next, &mut spans);
        let threshold = (lanes.positions.len() / LEAF_SHARE).max(min_histories / lanes.lanes);
        lanes.root = lanes.plan(0, 0, &spans, threshold);
        Some(lanes)
    }

    /// Number of forks (0: the walk runs on one thread).
    pub(super) fn forks(&self) -> usize {
        self.forks.len()
    }

    /// The task of position `at`, whose subtree's sequences start at `seq`: a fork where more
    /// than `threshold` positions lie below it and it has two children or more (its own
    /// children's tasks planned in turn), a leaf task otherwise; `spans` from
    /// [`Lanes::order`].
    fn plan(&mut self, at: usize, seq: u32, spans: &[Span], threshold: usize) -> Branch {
        let branch = Branch { seq, fork: self.forks.len() as u32, forks: false };
        match self.positions[at] {
            Position::Decision { first, count, .. }
                if count >= 2 && spans[at].positions as usize > threshold =>
            {
                let own_end = spans[at].own_end;
                self.forks.push(Fork { at: at as u32, own_end, children: Vec::new() });
                let mut children = Vec::with_capacity(count as usize);
                let mut start = own_end;
                for child in first as usize..(first + count) as usize {
                    children.push(self.plan(child, start, spans, threshold));
                    start = spans[child].end;
                }
                self.forks[branch.fork as usize].children = children;
                Branch { forks: true, ..branch }
            }
            _ => branch,
        }
    }

    /// Number the sequences of the positions below `at` in the walk's order (pre-order, a
    /// position's infosets in lane order) into `local`, and rewrite `seqs` to that numbering.
    /// `spans[at]` becomes `at`'s subtree's [`Span`].
    fn order(&mut self, at: usize, local: &mut [u32], next: &mut u32, spans: &mut [Span]) {
        let Position::Decision { player, at: seq_at, first, count } = self.positions[at] else {
            spans[at] = Span { own_end: *next, end: *next, positions: 1 };
            return;
        };
        for l in 0..self.lanes {
            let seq = self.seqs[seq_at as usize + l];
            if local[seq as usize] == u32::MAX {
                local[seq as usize] = *next;
                self.rows[player as usize].extend((0..count).map(|c| (*next + c, seq + c)));
                *next += count;
            }
            self.seqs[seq_at as usize + l] = local[seq as usize];
        }
        let own_end = *next;
        let mut positions = 1;
        for c in 0..count {
            let child = (first + c) as usize;
            self.order(child, local, next, spans);
            positions += spans[child].positions;
        }
        spans[at] = Span { own_end, end: *next, positions };
    }

    /// Fill position `at` from the lanes' nodes `nodes` (one per lane) at depth `depth`;
    /// `blocks` finds a terminal's utilities among those already stored.
    fn fill(
        &mut self,
        arena: &Arena,
        at: usize,
        nodes: &[usize],
        depth: usize,
        owner: &mut [u32],
        blocks: &mut HashMap<Vec<u64>, u32>,
    ) -> Result<(), NotShared> {
        self.depth = self.depth.max(depth);
        let (n, k) = (self.num_players, self.lanes);
        match arena.nodes[nodes[0]] {
            Node::Chance { .. } => Err(NotShared),
            Node::Terminal { .. } => {
                let mut block = vec![0.0; n * k];
                for (l, &node) in nodes.iter().enumerate() {
                    let Node::Terminal { offset: u } = arena.nodes[node] else { return Err(NotShared) };
                    for p in 0..n {
                        block[p * k + l] = arena.utilities[u as usize + p];
                    }
                }
                let bits = block.iter().map(|u| u.to_bits()).collect();
                let offset = *blocks.entry(bits).or_insert_with(|| {
                    let offset = self.utilities.len() as u32;
                    self.utilities.extend_from_slice(&block);
                    offset
                });
                self.positions[at] = Position::Terminal { offset };
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
                    self.fill(arena, first + c, &children, depth + 1, owner, blocks)?;
                }
                Ok(())
            }
        }
    }

    /// The buffers a walk needs.
    pub(super) fn buffers(&self) -> Buffers {
        let (n, m, k) = (self.num_players, self.num_sequences, self.lanes);
        let fork = |f: &Fork| {
            let count = f.children.len();
            ForkBuffers {
                live: vec![0; k],
                probs: vec![0.0; count * k],
                values: vec![0.0; count * k],
                reaches: vec![0.0; count * (n + 1) * k],
            }
        };
        let leaf = || Leaf {
            stack: vec![0.0; self.depth * ((n + 2 + self.max_children) * k)],
            live: vec![0; self.depth * k],
            children: Vec::new(),
        };
        Buffers {
            tables: vec![0.0; 3 * m],
            root: vec![0.0; (n + 2) * k],
            all: (0..k as u32).collect(),
            forks: self.forks.iter().map(fork).collect(),
            // One per thread: a thread walks one leaf task at a time.
            leaves: (0..rayon::current_num_threads()).map(|_| Mutex::new(leaf())).collect(),
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
        let (local_regrets, local_cumulative) = rest.split_at_mut(m);
        for &(local, seq) in self.rows.iter().flatten() {
            local_current[local as usize] = current[seq as usize];
        }
        for &(local, seq) in &self.rows[player] {
            local_regrets[local as usize] = regrets[seq as usize];
            local_cumulative[local as usize] = cumulative_policy[seq as usize];
        }
        let (reach, out) = b.root.split_at_mut((n + 1) * k);
        reach[..n * k].fill(1.0);
        reach[n * k..].copy_from_slice(&self.chance_reach);
        let tables =
            Tables { regrets: local_regrets, cumulative_policy: local_cumulative, offset: 0, weight };
        let tasks = Tasks { lanes: self, player, current: local_current, leaves: &b.leaves };
        tasks.run(self.root, 0, reach, &b.all, out, tables, &mut b.forks);
        for &(local, seq) in &self.rows[player] {
            regrets[seq as usize] = local_regrets[local as usize];
            cumulative_policy[seq as usize] = local_cumulative[local as usize];
        }
    }
}

/// The walk's buffers ([`Lanes::buffers`]): the current policy, the regrets and the
/// cumulative policy in the walk's order; the root's reach and values; every lane's index;
/// each fork's scratch, in the order of [`Lanes::forks`]; the leaf tasks' scratch, one per
/// thread (shared between the tasks a thread walks: fresh buffers per task cost cache misses).
pub(super) struct Buffers {
    tables: Vec<f64>,
    root: Vec<f64>,
    all: Vec<u32>,
    forks: Vec<ForkBuffers>,
    leaves: Vec<Mutex<Leaf>>,
}

/// A fork's scratch: its live lanes, its children's probabilities and values
/// (`[child * lanes + lane]`) and its children's reaches (`[(child * (players + 1) + player)
/// * lanes + lane]`, chance last).
struct ForkBuffers {
    live: Vec<u32>,
    probs: Vec<f64>,
    values: Vec<f64>,
    reaches: Vec<f64>,
}

/// A leaf task's scratch: the reach, value and probability slabs of every depth, the lists
/// of live lanes of every depth, the stack of children's values.
struct Leaf {
    stack: Vec<f64>,
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

/// The part of the walking player's tables a walk writes: the walk's sequences
/// `offset..offset + regrets.len()`.
struct Tables<'a> {
    regrets: &'a mut [f64],
    cumulative_policy: &'a mut [f64],
    offset: usize,
    weight: AverageWeight,
}

impl<'a> Tables<'a> {
    /// The sequences before `at` (in the walk's order) and from `at` on.
    fn split_at(self, at: usize) -> (Tables<'a>, Tables<'a>) {
        let Tables { regrets, cumulative_policy, offset, weight } = self;
        let (regrets_a, regrets_b) = regrets.split_at_mut(at - offset);
        let (cumulative_a, cumulative_b) = cumulative_policy.split_at_mut(at - offset);
        (
            Tables { regrets: regrets_a, cumulative_policy: cumulative_a, offset, weight },
            Tables { regrets: regrets_b, cumulative_policy: cumulative_b, offset: at, weight },
        )
    }

    /// Add the regrets and the reach-weighted policy of the walking player `q`'s infosets at a
    /// position (lane `l`'s sequences from `seqs[l]`), for the live lanes `live`, from the
    /// lanes' reaches, values `out`, children's probabilities (`[child * lanes + lane]`) and
    /// children's values (`child_value(child, j, l)` for the `j`-th live lane, `l`).
    #[allow(clippy::too_many_arguments)]
    fn settle(
        &mut self,
        (n, k, q): (usize, usize, usize),
        seqs: &[u32],
        live: &[u32],
        reach: &[f64],
        out: &[f64],
        probs: &[f64],
        child_value: impl Fn(usize, usize, usize) -> f64,
    ) {
        let count = probs.len() / k;
        for (j, &l) in live.iter().enumerate() {
            let l = l as usize;
            // OpenSpiel's CounterFactualReachProb: the others' reaches in player order,
            // chance last.
            let mut others = 1.0;
            for i in (0..=n).filter(|&i| i != q) {
                others *= reach[i * k + l];
            }
            let (v, s) = (out[l], reach[q * k + l]);
            let seq = seqs[l] as usize - self.offset;
            for c in 0..count {
                let p = probs[c * k + l];
                self.regrets[seq + c] += others * (child_value(c, j, l) - v);
                self.cumulative_policy[seq + c] += self.weight.weigh(s, p);
            }
        }
    }
}

/// What a walk's tasks share.
struct Tasks<'a> {
    lanes: &'a Lanes,
    player: usize,
    current: &'a [f64],
    leaves: &'a [Mutex<Leaf>],
}

impl Tasks<'_> {
    /// Task `branch`, at position `at`: the walking player's value into `out[l]` for each
    /// lane `l` of `lanes`, with `reach` the lanes' reach probabilities; `tables` is the
    /// subtree's share of the tables, `forks` starts at the task's own.
    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        branch: Branch,
        at: usize,
        reach: &[f64],
        lanes: &[u32],
        out: &mut [f64],
        tables: Tables,
        forks: &mut [ForkBuffers],
    ) {
        if branch.forks {
            self.fork(branch.fork as usize, reach, lanes, out, tables, forks);
        } else {
            // A thread of another pool, or of none, shares a slot: it waits for the lock.
            let slot = rayon::current_thread_index().unwrap_or(0) % self.leaves.len();
            let mut leaf = self.leaves[slot].lock().unwrap_or_else(|p| p.into_inner());
            let Leaf { stack, live, children } = &mut *leaf;
            let mut walk =
                LaneWalk { lanes: self.lanes, player: self.player, current: self.current, tables, children };
            walk.value(at, reach, lanes, out, stack, live);
        }
    }

    /// Fork `index` (its buffers first in `forks`): its children's tasks in parallel, then its
    /// values and its own infosets' entries, as [`LaneWalk::value`] computes them.
    #[allow(clippy::too_many_arguments)]
    fn fork(
        &self,
        index: usize,
        reach: &[f64],
        lanes: &[u32],
        out: &mut [f64],
        tables: Tables,
        forks: &mut [ForkBuffers],
    ) {
        let (n, k) = (self.lanes.num_players, self.lanes.lanes);
        let fork = &self.lanes.forks[index];
        // INVARIANT: `plan` forks decisions only.
        let Position::Decision { player: q, at: seq_at, first, count } =
            self.lanes.positions[fork.at as usize]
        else {
            unreachable!("a fork is a decision")
        };
        let (q, first, count) = (q as usize, first as usize, count as usize);
        let (mine, forks) = forks.split_first_mut().expect("a fork's buffers");
        let ForkBuffers { live, probs, values, reaches } = mine;
        let Some(m) = live_lanes(n, k, reach, lanes, out, live) else { return };
        let live = &live[..m];
        let seqs = &self.lanes.seqs[seq_at as usize..seq_at as usize + k];
        gather_probs(self.current, seqs, live, k, probs);
        for (probs, child_reach) in probs.chunks_exact(k).zip(reaches.chunks_exact_mut((n + 1) * k)) {
            for &l in live {
                let l = l as usize;
                for i in 0..=n {
                    child_reach[i * k + l] = reach[i * k + l];
                }
                child_reach[q * k + l] = reach[q * k + l] * probs[l];
            }
        }
        let (mut own, below) = tables.split_at(fork.own_end as usize);
        let children = Children { fork, first, reaches, live };
        self.children(&children, 0..count, below, forks, values);
        for (probs, values) in probs.chunks_exact(k).zip(values.chunks_exact(k)) {
            for &l in live {
                let l = l as usize;
                out[l] += probs[l] * values[l];
            }
        }
        if q == self.player {
            own.settle((n, k, q), seqs, live, reach, out, probs, |c, _, l| values[c * k + l]);
        }
    }

    /// The tasks of a fork's children `range`, halved into [`rayon::join`] until one is
    /// left; `tables`, `forks` and `values` start at the first one's share.
    fn children(
        &self,
        children: &Children,
        range: std::ops::Range<usize>,
        tables: Tables,
        forks: &mut [ForkBuffers],
        values: &mut [f64],
    ) {
        let (n, k) = (self.lanes.num_players, self.lanes.lanes);
        let branches = &children.fork.children;
        if range.len() == 1 {
            let c = range.start;
            let reach = &children.reaches[c * (n + 1) * k..(c + 1) * (n + 1) * k];
            let out = &mut values[..k];
            self.run(branches[c], children.first + c, reach, children.live, out, tables, forks);
            return;
        }
        let mid = range.start + range.len() / 2;
        let (from, to) = (branches[range.start], branches[mid]);
        let (tables_a, tables_b) = tables.split_at(to.seq as usize);
        let (forks_a, forks_b) = forks.split_at_mut((to.fork - from.fork) as usize);
        let (values_a, values_b) = values.split_at_mut((mid - range.start) * k);
        rayon::join(
            || self.children(children, range.start..mid, tables_a, forks_a, values_a),
            || self.children(children, mid..range.end, tables_b, forks_b, values_b),
        );
    }
}

/// A fork's children as its tasks read them.
struct Children<'a> {
    fork: &'a Fork,
    /// The first child's position.
    first: usize,
    reaches: &'a [f64],
    live: &'a [u32],
}

/// The children's probabilities at a position, `probs[child * lanes + lane]` for the live
/// lanes `live` (lane `l`'s infoset's sequences from `seqs[l]`), gathered once.
#[inline]
fn gather_probs(current: &[f64], seqs: &[u32], live: &[u32], k: usize, probs: &mut [f64]) {
    let count = probs.len() / k;
    for &l in live {
        let l = l as usize;
        let seq = seqs[l] as usize;
        for (c, &p) in current[seq..seq + count].iter().enumerate() {
            probs[c * k + l] = p;
        }
    }
}

/// Write into `live` the lanes of `lanes` that some player reaches, and set every lane's
/// value in `out` to 0; `None` when no lane is live (the position is pruned, as in the
/// history walk: its value is 0 and nothing below is walked).
#[inline]
fn live_lanes(
    n: usize,
    k: usize,
    reach: &[f64],
    lanes: &[u32],
    out: &mut [f64],
    live: &mut [u32],
) -> Option<usize> {
    let mut m = 0;
    for &l in lanes {
        let l = l as usize;
        if (0..n).any(|i| reach[i * k + l] != 0.0) {
            live[m] = l as u32;
            m += 1;
        }
        out[l] = 0.0;
    }
    (m > 0).then_some(m)
}

/// What one player's lane walk reads and writes.
struct LaneWalk<'a> {
    lanes: &'a Lanes,
    player: usize,
    current: &'a [f64],
    tables: Tables<'a>,
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
                if lanes.len() == k {
                    out[..k].copy_from_slice(utilities);
                } else {
                    for &l in lanes {
                        out[l as usize] = utilities[l as usize];
                    }
                }
            }
            Position::Decision { player, at: seq_at, first, count } => {
                // A lane no player reaches is pruned, as in the history walk: its value is 0
                // and the walk below skips it.
                let (live, live_rest) = live_stack.split_at_mut(k);
                let Some(m) = live_lanes(n, k, reach, lanes, out, live) else { return };
                let live = &live[..m];
                let (q, first, count) = (player as usize, first as usize, count as usize);
                let seqs = &self.lanes.seqs[seq_at as usize..seq_at as usize + k];
                let current = self.current;
                let (probs, rest) = stack.split_at_mut(count * k);
                gather_probs(current, seqs, live, k, probs);
                let (child_reach, rest) = rest.split_at_mut((n + 1) * k);
                let (child_out, rest) = rest.split_at_mut(k);
                // Every lane live (`live` is `0..k`): the same operations lane by lane, without
                // the list, so that they vectorise.
                let dense = m == k;
                if dense {
                    child_reach.copy_from_slice(&reach[..(n + 1) * k]);
                } else {
                    for &l in live {
                        for i in 0..=n {
                            child_reach[i * k + l as usize] = reach[i * k + l as usize];
                        }
                    }
                }
                let updating = q == self.player;
                let base = self.children.len();
                let own_reach = &reach[q * k..(q + 1) * k];
                for (c, probs) in probs.chunks_exact(k).enumerate() {
                    let child_own = &mut child_reach[q * k..(q + 1) * k];
                    if dense {
                        for ((to, &r), &p) in child_own.iter_mut().zip(own_reach).zip(probs) {
                            *to = r * p;
                        }
                    } else {
                        for &l in live {
                            let l = l as usize;
                            child_own[l] = own_reach[l] * probs[l];
                        }
                    }
                    self.value(first + c, child_reach, live, child_out, rest, live_rest);
                    if dense {
                        for ((o, &p), &v) in out[..k].iter_mut().zip(probs).zip(&*child_out) {
                            *o += p * v;
                        }
                        if updating {
                            self.children.extend_from_slice(child_out);
                        }
                    } else {
                        for &l in live {
                            let l = l as usize;
                            out[l] += probs[l] * child_out[l];
                        }
                        if updating {
                            self.children.extend(live.iter().map(|&l| child_out[l as usize]));
                        }
                    }
                }
                if updating {
                    let children = &self.children[base..];
                    let child_value = |c: usize, j: usize, _| children[c * m + j];
                    self.tables.settle((n, k, q), seqs, live, reach, out, probs, child_value);
                    self.children.truncate(base);
                }
            }
        }
    }
}
