//! CFR's walk over the public tree with a vector of private hands per player, for two-player
//! games that deal each player a private hand first and may deal public cards later (Leduc
//! poker): the vector form of Johanson, Bard, Lanctot, Gibson and Bowling, "Efficient Nash
//! equilibrium approximation through Monte Carlo counterfactual regret minimization" (AAMAS
//! 2012), walked exactly (no sampling).
//!
//! A position of the public tree holds, for the walking player, one counterfactual value per
//! own hand, and for the other, one reach per hand. A terminal position's values are one
//! small matrix product, `v[i] = Σ_j W[i][j]·reach[j]`, where `W[i][j]` is the chance
//! probability of the deal (hand `i`, hand `j`) reaching the terminal times the walking
//! player's utility there (0 for a deal that cannot: a card held twice). The per-history work
//! of the history walk becomes per-hand work, a few multiply-adds on short dense vectors.
//!
//! [`Hands::new`] accepts a tree when it has two players, its top chance nodes deal at least
//! two deals, every deal's subtree has the same shape (chance nodes below the deal matched
//! by outcome, as Leduc's public card), each information set lies at one position, and each
//! deal is one pair of hands, a player's hand being the class of deals its information sets
//! never tell apart. The sums run in another order than the history walk's, so the tables
//! agree with it within rounding (the tests hold them to 1e-12), not bit for bit; they do
//! not depend on the threads (the walk is one thread).

use std::collections::HashMap;

use super::arena::{Arena, Node};
use super::weight::AverageWeight;

/// A player's hand not dealt at a position (its cards clash with a public card there).
const ABSENT: u32 = u32::MAX;

/// A position of the public tree.
#[derive(Clone, Copy)]
enum Position {
    /// Player `p`'s matrix `[own hand × other's hand]` at `weights[offsets[p]..]`.
    Terminal { offsets: [u32; 2] },
    /// Children `first..first + count`, one per outcome (the chance probabilities are in the
    /// terminals' weights).
    Chance { first: u32, count: u32 },
    /// Children `first..first + count`; hand `h` of `player` has its sequences from
    /// `seqs[at + h]` and `deals[at + h]` deals behind it (0: not dealt here, and its
    /// sequences are another hand's).
    Decision { player: u32, at: u32, first: u32, count: u32 },
}

/// The public tree with its hands (see the module docs).
pub(super) struct Hands {
    /// Hands of each player.
    hands: [usize; 2],
    positions: Vec<Position>,
    seqs: Vec<u32>,
    /// Deals behind each hand at a decision: the history walk adds the average policy once
    /// per history, so the vector walk adds it this many times over.
    deals: Vec<f64>,
    weights: Vec<f64>,
    depth: usize,
    max_children: usize,
}

/// Why a tree is not walked in hands (only to stop the build).
struct NotShared;

/// What the build tracks per deal.
struct Lane {
    node: usize,
    reach: f64,
}

impl Hands {
    /// The hands of `arena`'s tree, or `None` where the conditions of the module docs fail.
    pub(super) fn new(arena: &Arena, num_players: usize, num_sequences: usize) -> Option<Self> {
        if num_players != 2 || !matches!(arena.nodes.first(), Some(Node::Chance { .. })) {
            return None;
        }
        let mut deals = Vec::new();
        collect_deals(arena, 0, 1.0, &mut deals);
        if deals.len() < 2 {
            return None;
        }
        let lanes: Vec<Option<Lane>> = deals.into_iter().map(Some).collect();
        // First pass: each player's hand of each deal, from the information sets.
        let mut hands = [UnionFind::new(lanes.len()), UnionFind::new(lanes.len())];
        let mut owner = vec![u32::MAX; num_sequences];
        let mut count = 0;
        group(arena, &lanes, &mut hands, &mut owner, &mut count).ok()?;
        let hand_of: [Vec<usize>; 2] = [hands[0].classes(), hands[1].classes()];
        let sizes = [1 + *hand_of[0].iter().max()?, 1 + *hand_of[1].iter().max()?];
        // Each deal is one pair of hands.
        let mut pairs = HashMap::new();
        for (l, pair) in hand_of[0].iter().zip(&hand_of[1]).enumerate() {
            if pairs.insert(pair, l).is_some() {
                return None;
            }
        }
        let mut built = Hands {
            hands: sizes,
            positions: vec![Position::Terminal { offsets: [0, 0] }],
            seqs: Vec::new(),
            deals: Vec::new(),
            weights: Vec::new(),
            depth: 0,
            max_children: 0,
        };
        built.fill(arena, 0, &lanes, &hand_of, 1).ok()?;
        Some(built)
    }

    /// Position `at` from the deals' nodes `lanes` at depth `depth`.
    fn fill(
        &mut self,
        arena: &Arena,
        at: usize,
        lanes: &[Option<Lane>],
        hand_of: &[Vec<usize>; 2],
        depth: usize,
    ) -> Result<(), NotShared> {
        self.depth = self.depth.max(depth);
        let some = lanes.iter().flatten().next().ok_or(NotShared)?;
        match arena.nodes[some.node] {
            Node::Terminal { .. } => {
                let [h0, h1] = self.hands;
                let offsets = [self.weights.len() as u32, (self.weights.len() + h0 * h1) as u32];
                self.weights.resize(self.weights.len() + 2 * h0 * h1, 0.0);
                for (l, lane) in lanes.iter().enumerate() {
                    let Some(lane) = lane else { continue };
                    let Node::Terminal { offset } = arena.nodes[lane.node] else { return Err(NotShared) };
                    let (i, j) = (hand_of[0][l], hand_of[1][l]);
                    let u = &arena.utilities[offset as usize..offset as usize + 2];
                    self.weights[offsets[0] as usize + i * h1 + j] = lane.reach * u[0];
                    self.weights[offsets[1] as usize + j * h0 + i] = lane.reach * u[1];
                }
                self.positions[at] = Position::Terminal { offsets };
                Ok(())
            }
            Node::Chance { .. } => {
                let outcomes = chance_outcomes(arena, lanes)?;
                let count = outcomes.len();
                self.max_children = self.max_children.max(count);
                let mut children: Vec<Vec<Option<Lane>>> =
                    (0..count).map(|_| lanes.iter().map(|_| None).collect()).collect();
                for (l, lane) in lanes.iter().enumerate() {
                    let Some(lane) = lane else { continue };
                    let Node::Chance { first, count: c } = arena.nodes[lane.node] else {
                        return Err(NotShared);
                    };
                    for child in first as usize..(first + c) as usize {
                        // INVARIANT: `outcomes` holds every lane's outcomes.
                        let o = outcomes.binary_search(&arena.action[child]).expect("an outcome");
                        children[o][l] =
                            Some(Lane { node: child, reach: lane.reach * arena.chance_prob[child] });
                    }
                }
                let first = self.positions.len();
                self.positions.resize(first + count, Position::Terminal { offsets: [0, 0] });
                self.positions[at] = Position::Chance { first: first as u32, count: count as u32 };
                for (c, lanes) in children.iter().enumerate() {
                    self.fill(arena, first + c, lanes, hand_of, depth + 1)?;
                }
                Ok(())
            }
            Node::Decision { player, count, .. } => {
                let p = player as usize;
                self.max_children = self.max_children.max(count as usize);
                let at_seqs = self.seqs.len();
                self.seqs.resize(at_seqs + self.hands[p], ABSENT);
                self.deals.resize(at_seqs + self.hands[p], 0.0);
                let mut firsts = vec![None; lanes.len()];
                for (l, lane) in lanes.iter().enumerate() {
                    let Some(lane) = lane else { continue };
                    let Node::Decision { player: q, seq, first, count: c } = arena.nodes[lane.node] else {
                        return Err(NotShared);
                    };
                    if q != player || c != count {
                        return Err(NotShared);
                    }
                    let h = hand_of[p][l];
                    let slot = &mut self.seqs[at_seqs + h];
                    if *slot != ABSENT && *slot != seq {
                        return Err(NotShared);
                    }
                    *slot = seq;
                    self.deals[at_seqs + h] += 1.0;
                    firsts[l] = Some(first as usize);
                }
                // A hand not dealt here reaches no terminal below (its weights there are 0), so
                // any probabilities carry it: it borrows a dealt hand's sequences, and the walk
                // loops without a branch (its `deals` of 0 marks it for the tables).
                let dealt = self.seqs[at_seqs..].iter().copied().find(|&s| s != ABSENT).ok_or(NotShared)?;
                for s in &mut self.seqs[at_seqs..] {
                    if *s == ABSENT {
                        *s = dealt;
                    }
                }
                let first = self.positions.len();
                self.positions.resize(first + count as usize, Position::Terminal { offsets: [0, 0] });
                self.positions[at] =
                    Position::Decision { player, at: at_seqs as u32, first: first as u32, count };
                for c in 0..count as usize {
                    let children: Vec<Option<Lane>> = lanes
                        .iter()
                        .zip(&firsts)
                        .map(|(lane, f)| {
                            lane.as_ref().zip(*f).map(|(lane, f)| Lane { node: f + c, reach: lane.reach })
                        })
                        .collect();
                    self.fill(arena, first + c, &children, hand_of, depth + 1)?;
                }
                Ok(())
            }
        }
    }

    /// Walk for `player`: add its counterfactual regrets and reach-weighted policy, as the
    /// history walk does from the root (within rounding).
    pub(super) fn walk(
        &self,
        player: usize,
        current: &[f64],
        regrets: &mut [f64],
        cumulative_policy: &mut [f64],
        weight: AverageWeight,
        scratch: &mut Vec<f64>,
    ) {
        let [own_hands, other_hands] = [self.hands[player], self.hands[1 - player]];
        let per_depth = 2 * own_hands + other_hands + self.max_children * own_hands;
        scratch.clear();
        scratch.resize(own_hands + other_hands + own_hands + self.depth * per_depth, 0.0);
        let (own, rest) = scratch.split_at_mut(own_hands);
        let (other, rest) = rest.split_at_mut(other_hands);
        let (out, stack) = rest.split_at_mut(own_hands);
        own.fill(1.0);
        other.fill(1.0);
        let mut walk = HandWalk { hands: self, player, current, regrets, cumulative_policy, weight };
        walk.value(0, own, other, out, stack);
    }
}

/// What one player's walk reads and writes.
struct HandWalk<'a> {
    hands: &'a Hands,
    player: usize,
    current: &'a [f64],
    regrets: &'a mut [f64],
    cumulative_policy: &'a mut [f64],
    weight: AverageWeight,
}

impl HandWalk<'_> {
    /// The walking player's counterfactual value of each of its hands at position `at` into
    /// `out`, given its own reach per hand `own` and the other player's `other`.
    fn value(&mut self, at: usize, own: &[f64], other: &[f64], out: &mut [f64], stack: &mut [f64]) {
        let q = self.player;
        let (mine, theirs) = (own.len(), other.len());
        match self.hands.positions[at] {
            Position::Terminal { offsets } => {
                let w = &self.hands.weights[offsets[q] as usize..offsets[q] as usize + mine * theirs];
                for (o, row) in out.iter_mut().zip(w.chunks_exact(theirs)) {
                    *o = row.iter().zip(other).map(|(w, r)| w * r).sum();
                }
            }
            Position::Chance { first, count } => {
                out.fill(0.0);
                let (child_out, rest) = stack.split_at_mut(mine);
                for c in 0..count as usize {
                    self.value(first as usize + c, own, other, child_out, rest);
                    for (o, v) in out.iter_mut().zip(&*child_out) {
                        *o += v;
                    }
                }
            }
            Position::Decision { player, at: seq_at, first, count } => {
                let (p, count, first) = (player as usize, count as usize, first as usize);
                let seqs = &self.hands.seqs[seq_at as usize..seq_at as usize + self.hands.hands[p]];
                let current = self.current;
                let prob = |h: usize, a: usize| current[seqs[h] as usize + a];
                out.fill(0.0);
                if p != q {
                    let (child_other, rest) = stack.split_at_mut(theirs);
                    let (child_out, rest) = rest.split_at_mut(mine);
                    for a in 0..count {
                        for (h, (c, &r)) in child_other.iter_mut().zip(other).enumerate() {
                            *c = r * prob(h, a);
                        }
                        // No one reaches the child: nothing below counts, as the history walk
                        // prunes.
                        if child_other.iter().all(|&r| r == 0.0) && own.iter().all(|&r| r == 0.0) {
                            continue;
                        }
                        self.value(first + a, own, child_other, child_out, rest);
                        for (o, v) in out.iter_mut().zip(&*child_out) {
                            *o += v;
                        }
                    }
                    return;
                }
                let (child_own, rest) = stack.split_at_mut(mine);
                let (values, rest) = rest.split_at_mut(count * mine);
                for a in 0..count {
                    for (h, (c, &r)) in child_own.iter_mut().zip(own).enumerate() {
                        *c = r * prob(h, a);
                    }
                    let value = &mut values[a * mine..(a + 1) * mine];
                    if child_own.iter().all(|&r| r == 0.0) && other.iter().all(|&r| r == 0.0) {
                        value.fill(0.0);
                        continue;
                    }
                    self.value(first + a, child_own, other, value, rest);
                    for (h, (o, v)) in out.iter_mut().zip(&*value).enumerate() {
                        *o += prob(h, a) * v;
                    }
                }
                let deals = &self.hands.deals[seq_at as usize..seq_at as usize + mine];
                for (h, &seq) in seqs.iter().enumerate() {
                    let (s, n) = (own[h], deals[h]);
                    if n == 0.0 {
                        continue;
                    }
                    for a in 0..count {
                        let (p, seq) = (current[seq as usize + a], seq as usize + a);
                        self.regrets[seq] += values[a * mine + h] - out[h];
                        self.cumulative_policy[seq] += n * self.weight.weigh(s, p);
                    }
                }
            }
        }
    }
}

/// The outcomes of the lanes' chance nodes, sorted; each lane's own in increasing order (so
/// that a lane's children are in the order the tree has them).
fn chance_outcomes(arena: &Arena, lanes: &[Option<Lane>]) -> Result<Vec<u32>, NotShared> {
    let mut outcomes = Vec::new();
    for lane in lanes.iter().flatten() {
        let Node::Chance { first, count } = arena.nodes[lane.node] else { return Err(NotShared) };
        let actions = &arena.action[first as usize..(first + count) as usize];
        if actions.windows(2).any(|w| w[0] >= w[1]) {
            return Err(NotShared);
        }
        outcomes.extend_from_slice(actions);
    }
    outcomes.sort_unstable();
    outcomes.dedup();
    Ok(outcomes)
}

/// Join the deals that share an information set, per player, walking the positions as
/// [`Hands::fill`] does; every information set must lie at one position (`owner`, `count`
/// numbering the positions).
fn group(
    arena: &Arena,
    lanes: &[Option<Lane>],
    hands: &mut [UnionFind; 2],
    owner: &mut [u32],
    count: &mut u32,
) -> Result<(), NotShared> {
    let position = *count;
    *count += 1;
    let some = lanes.iter().flatten().next().ok_or(NotShared)?;
    match arena.nodes[some.node] {
        Node::Terminal { .. } => {
            if lanes.iter().flatten().any(|l| !matches!(arena.nodes[l.node], Node::Terminal { .. })) {
                return Err(NotShared);
            }
            Ok(())
        }
        Node::Chance { .. } => {
            let outcomes = chance_outcomes(arena, lanes)?;
            for &outcome in &outcomes {
                let children: Vec<Option<Lane>> = lanes
                    .iter()
                    .map(|lane| {
                        let lane = lane.as_ref()?;
                        let Node::Chance { first, count } = arena.nodes[lane.node] else { return None };
                        (first as usize..(first + count) as usize)
                            .find(|&c| arena.action[c] == outcome)
                            .map(|node| Lane { node, reach: 0.0 })
                    })
                    .collect();
                group(arena, &children, hands, owner, count)?;
            }
            Ok(())
        }
        Node::Decision { player, count: actions, .. } => {
            let mut by_seq: HashMap<u32, usize> = HashMap::new();
            let mut firsts = vec![None; lanes.len()];
            for (l, lane) in lanes.iter().enumerate() {
                let Some(lane) = lane else { continue };
                let Node::Decision { player: q, seq, first, count: c } = arena.nodes[lane.node] else {
                    return Err(NotShared);
                };
                if q != player || c != actions {
                    return Err(NotShared);
                }
                let o = &mut owner[seq as usize];
                if *o != u32::MAX && *o != position {
                    return Err(NotShared);
                }
                *o = position;
                match by_seq.get(&seq) {
                    Some(&other) => hands[player as usize].join(l, other),
                    None => {
                        by_seq.insert(seq, l);
                    }
                }
                firsts[l] = Some(first as usize);
            }
            for a in 0..actions as usize {
                let children: Vec<Option<Lane>> =
                    firsts.iter().map(|f| f.map(|f| Lane { node: f + a, reach: 0.0 })).collect();
                group(arena, &children, hands, owner, count)?;
            }
            Ok(())
        }
    }
}

/// The first non-chance nodes below `node` in child order, with their chance reach.
fn collect_deals(arena: &Arena, node: usize, reach: f64, deals: &mut Vec<Lane>) {
    match arena.nodes[node] {
        Node::Chance { first, count } => {
            for child in first as usize..(first + count) as usize {
                collect_deals(arena, child, reach * arena.chance_prob[child], deals);
            }
        }
        _ => deals.push(Lane { node, reach }),
    }
}

/// Classes of deals (union–find, by index).
struct UnionFind(Vec<usize>);

impl UnionFind {
    fn new(n: usize) -> Self {
        UnionFind((0..n).collect())
    }

    fn root(&mut self, mut x: usize) -> usize {
        while self.0[x] != x {
            self.0[x] = self.0[self.0[x]];
            x = self.0[x];
        }
        x
    }

    fn join(&mut self, a: usize, b: usize) {
        let (a, b) = (self.root(a), self.root(b));
        if a != b {
            self.0[a.max(b)] = a.min(b);
        }
    }

    /// Each element's class, numbered 0, 1, … in order of first element.
    fn classes(&mut self) -> Vec<usize> {
        let mut number = HashMap::new();
        (0..self.0.len())
            .map(|x| {
                let r = self.root(x);
                let next = number.len();
                *number.entry(r).or_insert(next)
            })
            .collect()
    }
}
