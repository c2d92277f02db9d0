//! The kernel input: a [`GameTree`] flattened for sampling, shared by the CPU evaluator
//! ([`SampledEvaluator`](crate::SampledEvaluator)) and the GPU kernel (`metagame-cuda`
//! uploads exactly these arrays), plus the episode walk and the fixed reduction structure
//! that make both sides draw and sum identically.
//!
//! # Arrays
//!
//! - [`FlatTree::nodes`]: four `u32` per node, `[first_child, num_children, kind, slot]`
//!   with `kind` 0 decision, 1 chance, 2 terminal (as [`NodeKind`]); `slot` is the offset
//!   into the matchup's policy table at decision nodes (`legal_start` of the infoset), the
//!   offset into [`FlatTree::chance_cum`] at chance nodes, the terminal index at terminals.
//! - [`FlatTree::chance_cum`]: cumulative chance probabilities, children in order.
//! - [`FlatTree::utilities`]: `[terminal * num_players + player]`.
//! - [`policy_cum_table`]: per matchup, `num_sequences` cumulative action probabilities, an
//!   infoset's legal actions in order (the order of its children).
//!
//! # Sampling
//!
//! At a chance or decision node with children `c_0 … c_{k-1}` and cumulative row `cum`, draw
//! `u` (the next uniform of the episode's stream, see [`crate::philox`]) and move to the first
//! `c_i` with `u < cum[i]` (equivalently `c_j` with `j` = the number of `i < k - 1` with
//! `cum[i] <= u`, which is how both sides compute it). Rows are accumulated once on the host, left to right in `f64`,
//! and the entry of the last child with positive probability is set to 2 (above any `u`), so
//! rounding never selects a probability-0 child and the scan always stops. No arithmetic on
//! the sampling path differs between CPU and GPU.
//!
//! # Reduction
//!
//! The episodes of a matchup are cut into blocks of [`EPISODES_PER_BLOCK`] =
//! [`LANES_PER_BLOCK`] × [`EPISODES_PER_LANE`]. Lane `t` of block `b` plays episodes
//! `b * EPISODES_PER_BLOCK + t * EPISODES_PER_LANE ..` (up to `EPISODES_PER_LANE` of them, fewer
//! at the end) and sums per player the return and its square, in episode order, from 0.
//! The lanes of a block are then added pairwise (`lane[t] += lane[t + s]` for
//! `s = 128, 64, …, 1`), and the block partials of a matchup are added in block order from 0
//! ([`fold_block_partials`]). On the GPU a lane is a thread and a block a thread block, so
//! the totals are bit-identical on CPU and GPU and on any thread count.

use crate::error::{Error, Result};
use crate::evaluator::{MatchTotals, Matchup};
use crate::philox::EpisodeStream;
use crate::tabular_policy::{ROW_SUM_TOLERANCE, TabularPolicy};
use crate::tree::{GameTree, InfosetId, NodeKind};

/// Lanes (GPU threads) per reduction block; a power of two.
pub const LANES_PER_BLOCK: usize = 256;
/// Consecutive episodes one lane plays and sums.
pub const EPISODES_PER_LANE: u64 = 16;
/// Episodes per reduction block.
pub const EPISODES_PER_BLOCK: u64 = LANES_PER_BLOCK as u64 * EPISODES_PER_LANE;

/// Episodes a CPU lane walks at once (their loads overlap); results do not depend on it.
const INTERLEAVE: usize = 4;

/// Word index of `first_child` in a node of [`FlatTree::nodes`].
pub const NODE_FIRST_CHILD: usize = 0;
/// Word index of `num_children`.
pub const NODE_NUM_CHILDREN: usize = 1;
/// Word index of `kind` (0 decision, 1 chance, 2 terminal).
pub const NODE_KIND: usize = 2;
/// Word index of `slot`.
pub const NODE_SLOT: usize = 3;

const KIND_DECISION: u32 = NodeKind::Decision as u32;
const KIND_CHANCE: u32 = NodeKind::Chance as u32;
const KIND_TERMINAL: u32 = NodeKind::Terminal as u32;

/// A game tree flattened for sampled play (see the module docs for the layout).
#[derive(Clone, Debug, PartialEq)]
pub struct FlatTree {
    nodes: Vec<[u32; 4]>,
    chance_cum: Vec<f64>,
    utilities: Vec<f64>,
    num_players: usize,
    num_sequences: usize,
}

/// Cumulative sums of `probs` into `out`, left to right, with the last positive entry (and
/// everything after it) set to 2, so that a uniform draw in [0, 1) always lands on an action
/// with positive probability: the row layout every sampler of the flat tree reads (the
/// evaluators here, the GPU kernel, the learners). Returns the plain sum.
pub fn cumulate(probs: impl Iterator<Item = f64>, out: &mut [f64]) -> f64 {
    let mut acc = 0.0;
    let mut last_positive = None;
    for (i, (p, o)) in probs.zip(out.iter_mut()).enumerate() {
        acc += p;
        *o = acc;
        if p > 0.0 {
            last_positive = Some(i);
        }
    }
    if let Some(i) = last_positive {
        out[i..].fill(2.0);
    }
    acc
}

impl FlatTree {
    /// Flatten `tree`.
    ///
    /// # Complexity
    ///
    /// O(nodes).
    pub fn new(tree: &GameTree) -> Self {
        let n = tree.num_nodes();
        let mut nodes = Vec::with_capacity(n);
        let mut chance_cum = Vec::new();
        for i in 0..n {
            let (first, count) = (tree.first_child[i], tree.num_children[i]);
            let (kind, slot) = match tree.kind[i] {
                NodeKind::Decision => (KIND_DECISION, tree.legal_start[tree.slot[i] as usize]),
                NodeKind::Chance => {
                    let offset = chance_cum.len();
                    chance_cum.resize(offset + count as usize, 0.0);
                    let children = first as usize..(first + count) as usize;
                    cumulate(tree.chance_prob[children].iter().copied(), &mut chance_cum[offset..]);
                    (KIND_CHANCE, offset as u32)
                }
                NodeKind::Terminal => (KIND_TERMINAL, tree.slot[i]),
            };
            nodes.push([first, count, kind, slot]);
        }
        Self {
            nodes,
            chance_cum,
            utilities: tree.utilities.clone(),
            num_players: tree.num_players(),
            num_sequences: tree.num_sequences(),
        }
    }

    /// `[first_child, num_children, kind, slot]` per node, flattened (4 words a node).
    pub fn nodes(&self) -> &[u32] {
        self.nodes.as_flattened()
    }
    /// Number of nodes.
    pub fn num_nodes(&self) -> usize {
        self.nodes.len()
    }
    /// Cumulative chance probabilities (chance nodes' `slot` points here).
    pub fn chance_cum(&self) -> &[f64] {
        &self.chance_cum
    }
    /// Terminal utilities, `[terminal * num_players + player]`.
    pub fn utilities(&self) -> &[f64] {
        &self.utilities
    }
    /// Number of players.
    pub fn num_players(&self) -> usize {
        self.num_players
    }
    /// Length of one matchup's policy table (the tree's infoset-action pairs).
    pub fn num_sequences(&self) -> usize {
        self.num_sequences
    }

    /// Play episode `episode` of matchup `matchup` under `seed`; returns the terminal node.
    ///
    /// `policy_cum` is this matchup's row of [`policy_cum_table`] (`num_sequences` values).
    ///
    /// # Panics
    ///
    /// If `policy_cum` is shorter than [`FlatTree::num_sequences`].
    #[inline]
    pub fn play_episode(&self, policy_cum: &[f64], seed: u64, matchup: u32, episode: u64) -> u32 {
        let mut stream = EpisodeStream::new(seed, matchup, episode);
        let mut node = 0u32;
        loop {
            let [first, count, kind, slot] = self.nodes[node as usize];
            if kind == KIND_TERMINAL {
                return node;
            }
            let cum = if kind == KIND_CHANCE {
                &self.chance_cum[slot as usize..]
            } else {
                &policy_cum[slot as usize..]
            };
            let u = stream.next_uniform();
            // The first child with `u < cum[k]` is the number of entries `<= u` (rows are
            // non-decreasing and end in 2); counting avoids a data-dependent branch.
            let row = &cum[..count as usize - 1];
            let k = row.iter().map(|&c| u32::from(c <= u)).sum::<u32>();
            node = first + k;
        }
    }

    /// Play `N` consecutive episodes from `first_episode` at once (the same outcomes as
    /// [`FlatTree::play_episode`] one by one): independent walks interleaved so that their
    /// memory loads overlap. Returns the terminal nodes in episode order.
    #[inline]
    fn play_episodes<const N: usize>(
        &self,
        policy_cum: &[f64],
        seed: u64,
        matchup: u32,
        first_episode: u64,
    ) -> [u32; N] {
        let mut streams: [EpisodeStream; N] =
            std::array::from_fn(|g| EpisodeStream::new(seed, matchup, first_episode + g as u64));
        let mut nodes = [0u32; N];
        let mut live = [true; N];
        let mut any = true;
        while any {
            any = false;
            for g in 0..N {
                if !live[g] {
                    continue;
                }
                let [first, count, kind, slot] = self.nodes[nodes[g] as usize];
                if kind == KIND_TERMINAL {
                    live[g] = false;
                    continue;
                }
                any = true;
                let cum = if kind == KIND_CHANCE {
                    &self.chance_cum[slot as usize..]
                } else {
                    &policy_cum[slot as usize..]
                };
                let u = streams[g].next_uniform();
                let row = &cum[..count as usize - 1];
                nodes[g] = first + row.iter().map(|&c| u32::from(c <= u)).sum::<u32>();
            }
        }
        nodes
    }

    /// Terminal index of a terminal node.
    #[inline]
    pub fn terminal_index(&self, node: u32) -> usize {
        self.nodes[node as usize][NODE_SLOT] as usize
    }

    /// Number of reduction blocks for `episodes` episodes.
    pub fn num_blocks(episodes: u64) -> u64 {
        episodes.div_ceil(EPISODES_PER_BLOCK)
    }

    /// The partial sums of block `block` of a matchup, `[Σ return per player, Σ return² per
    /// player]` (length `2 * num_players`), computed lane by lane and reduced pairwise
    /// exactly as the GPU kernel does.
    pub fn block_partial(
        &self,
        policy_cum: &[f64],
        seed: u64,
        matchup: u32,
        block: u64,
        episodes: u64,
        out: &mut [f64],
    ) {
        let np = self.num_players;
        let mut lanes = vec![0.0; 2 * np * LANES_PER_BLOCK];
        let block_start = block * EPISODES_PER_BLOCK;
        for t in 0..LANES_PER_BLOCK {
            let start = block_start + t as u64 * EPISODES_PER_LANE;
            let end = (start + EPISODES_PER_LANE).min(episodes);
            let mut e = start;
            while e < end {
                let terminals: [u32; INTERLEAVE] = if end - e >= INTERLEAVE as u64 {
                    self.play_episodes(policy_cum, seed, matchup, e)
                } else {
                    let mut one = [u32::MAX; INTERLEAVE];
                    one[0] = self.play_episode(policy_cum, seed, matchup, e);
                    one
                };
                for &node in terminals.iter().take_while(|&&n| n != u32::MAX) {
                    let term = self.terminal_index(node);
                    let u = &self.utilities[term * np..(term + 1) * np];
                    for (p, &x) in u.iter().enumerate() {
                        lanes[p * LANES_PER_BLOCK + t] += x;
                        lanes[(np + p) * LANES_PER_BLOCK + t] += x * x;
                    }
                    e += 1;
                }
            }
        }
        let mut s = LANES_PER_BLOCK / 2;
        while s > 0 {
            for row in lanes.chunks_exact_mut(LANES_PER_BLOCK) {
                for t in 0..s {
                    row[t] += row[t + s];
                }
            }
            s /= 2;
        }
        for (o, row) in out.iter_mut().zip(lanes.chunks_exact(LANES_PER_BLOCK)) {
            *o = row[0];
        }
    }
}

/// The partial sums of one block from its episodes' returns (`[episodes × num_players]` in
/// episode order, at most [`EPISODES_PER_BLOCK`] episodes), lane by lane and reduced pairwise
/// exactly as [`FlatTree::block_partial`] sums the episodes it plays: what lets other
/// samplers (the rollout evaluator) give the same totals for the same outcomes.
///
/// # Panics
///
/// If `returns` holds more than a block of episodes or `out` is not `2 * num_players` long.
pub(crate) fn reduce_block(returns: &[f64], num_players: usize, out: &mut [f64]) {
    let np = num_players;
    assert!(returns.len() <= EPISODES_PER_BLOCK as usize * np && out.len() == 2 * np);
    let mut lanes = vec![0.0; 2 * np * LANES_PER_BLOCK];
    for (e, u) in returns.chunks_exact(np.max(1)).enumerate() {
        let t = e / EPISODES_PER_LANE as usize;
        for (p, &x) in u.iter().enumerate() {
            lanes[p * LANES_PER_BLOCK + t] += x;
            lanes[(np + p) * LANES_PER_BLOCK + t] += x * x;
        }
    }
    let mut s = LANES_PER_BLOCK / 2;
    while s > 0 {
        for row in lanes.chunks_exact_mut(LANES_PER_BLOCK) {
            for t in 0..s {
                row[t] += row[t + s];
            }
        }
        s /= 2;
    }
    for (o, row) in out.iter_mut().zip(lanes.chunks_exact(LANES_PER_BLOCK)) {
        *o = row[0];
    }
}

/// Add block partials (`[blocks × 2 * num_players]`, block order) into a matchup's totals,
/// left to right from 0.
///
/// # Panics
///
/// If `partials.len()` is not a multiple of `2 * num_players`.
pub fn fold_block_partials(partials: &[f64], num_players: usize, episodes: u64) -> MatchTotals {
    let q = 2 * num_players;
    assert_eq!(partials.len() % q.max(1), 0, "partials are not whole blocks");
    let mut acc = vec![0.0; q];
    for block in partials.chunks_exact(q) {
        for (a, &x) in acc.iter_mut().zip(block) {
            *a += x;
        }
    }
    let squares = acc.split_off(num_players);
    MatchTotals { sums: acc, sums_of_squares: squares, episodes, exact: false }
}

/// Per-matchup cumulative policy tables, `[matchup * num_sequences + legal_start[i] + k]`
/// (see the module docs), each infoset's row taken from the policy seated at its player.
///
/// # Errors
///
/// As [`check_matchups`](crate::check_matchups); [`Error::BadPolicyRow`] when a row used by a
/// matchup is not a distribution over the legal actions.
pub fn policy_cum_table(
    tree: &GameTree,
    policies: &[&TabularPolicy],
    matchups: &[Matchup],
) -> Result<Vec<f64>> {
    crate::evaluator::check_matchups(tree, policies, matchups)?;
    let s = tree.num_sequences();
    let mut table = vec![0.0; matchups.len() * s];
    for (m, row) in matchups.iter().zip(table.chunks_exact_mut(s.max(1))) {
        for i in 0..tree.num_infosets() {
            let id = InfosetId(i);
            let policy = policies[m.seats[tree.infoset_player[i] as usize]];
            let legal = tree.legal_actions(id);
            let start = tree.legal_start[i] as usize;
            let bad =
                |reason: String| Error::BadPolicyRow { info_state: tree.infoset_key(id).into(), reason };
            if let Some(a) = legal.iter().find(|a| {
                let p = policy.prob(i, a.0);
                !p.is_finite() || p < 0.0
            }) {
                return Err(bad(format!(
                    "probability of action {} is not a finite non-negative number",
                    a.0
                )));
            }
            let sum =
                cumulate(legal.iter().map(|a| policy.prob(i, a.0)), &mut row[start..start + legal.len()]);
            if (sum - 1.0).abs() > ROW_SUM_TOLERANCE {
                return Err(bad(format!("legal actions' probabilities sum to {sum}, not 1")));
            }
        }
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn cumulate_never_picks_zero_probability_tails() {
        let mut out = [0.0; 4];
        let sum = cumulate([0.0, 0.5, 0.5, 0.0].into_iter(), &mut out);
        assert_eq!(sum, 1.0);
        assert_eq!(out, [0.0, 0.5, 2.0, 2.0]);
    }

    #[test]
    fn flat_tree_mirrors_the_tree() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let flat = FlatTree::new(&tree);
        assert_eq!(flat.num_nodes(), tree.num_nodes());
        assert_eq!(flat.nodes().len(), 4 * tree.num_nodes());
        for i in 0..tree.num_nodes() {
            let w = &flat.nodes()[4 * i..4 * i + 4];
            assert_eq!(w[NODE_KIND], tree.node_kind(i) as u32);
            let c = tree.children(i);
            assert_eq!((w[NODE_FIRST_CHILD] as usize, w[NODE_NUM_CHILDREN] as usize), (c.start, c.len()));
        }
    }

    #[test]
    fn episodes_reach_terminals_with_first_action() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let first = TabularPolicy::first_action(&tree);
        let flat = FlatTree::new(&tree);
        let table = policy_cum_table(&tree, &[&first], &[Matchup { seats: vec![0, 0] }]).unwrap();
        for e in 0..100 {
            let node = flat.play_episode(&table, 3, 0, e) as usize;
            assert_eq!(tree.node_kind(node), NodeKind::Terminal);
            // Check, check: the higher card wins 1.
            assert_eq!(tree.terminal_utilities(node).iter().map(|u| u.abs()).sum::<f64>(), 2.0);
        }
    }
}
