//! OpenSpiel's best response computed history by history, for trees of imperfect recall.
//!
//! OpenSpiel (`open_spiel/algorithms/best_response.cc`, `TabularBestResponse`; the Python
//! `open_spiel/python/algorithms/best_response.py` is the same rule) keys the best responder's
//! choices by information-state string. At an information state `I` it plays
//!
//! `argmax_a Σ_{h ∈ I} r₋ᵢ(h) · v(h·a)`
//!
//! where `r₋ᵢ(h)` is the reach of `h` by chance and the other players and `v` is the
//! responder's expected return below a history when it plays its own choices at the deeper
//! information states (the lowest action among ties). With perfect recall this is the best
//! response; with imperfect recall it is not one in general (a player that forgets may
//! gain by mixing, or by choosing differently in the histories it cannot tell apart), but
//! it is the number OpenSpiel's `nash_conv` reports, so it is the number this crate
//! reports for such games.
//!
//! The pass works on `g(h) = r₋ᵢ(h) · v(h)`, which is linear in the others' reach (so a
//! mixture of profiles is the sum of their reaches) and is summed bottom-up without a
//! division: `g` at a terminal is `r₋ᵢ(z) · uᵢ(z)`, at a chance or another player's node
//! the sum over its children, at the responder's node `g` of the chosen child; the value
//! of action `a` at `I` is `Σ_{h ∈ I} g(h·a)`. Information states are decided deepest first:
//! `I` waits for every information state of the responder that some history of `I` has
//! below it before the next decision of the responder. OpenSpiel's recursion would never
//! end where two information states wait for each other (or one for itself: an
//! absent-minded player); this pass returns an error there.

use std::collections::VecDeque;

use crate::error::{Error, Result};
use crate::game::PlayerId;
use crate::tie::TIE_TOLERANCE;
use crate::tree::{GameTree, NO_PARENT, NodeKind};

/// Marks "no information state above".
const NONE: u32 = u32::MAX;

/// The best-response value of `player` by OpenSpiel's rule over `tree`'s histories, and its
/// choice (a legal action) per infoset of `player` into `best` when given.
///
/// `reach` is the others' and chance's reach of every node ([`crate::exact::reach`] with
/// `player` excluded). With `tremble_reach` (the same reach under trembling opponents),
/// actions whose values tie within [`TIE_TOLERANCE`] are told apart by their value against
/// the trembling opponents, as the perfect-recall pass does; otherwise the lowest wins.
///
/// # Errors
///
/// [`Error::Unsupported`] when information states of `player` lie below each other in a
/// cycle (OpenSpiel's recursion would not end).
///
/// # Complexity
///
/// O(nodes) time and memory.
pub(crate) fn best_response_by_histories(
    tree: &GameTree,
    player: usize,
    reach: &[f64],
    tremble_reach: Option<&[f64]>,
    mut best: Option<&mut Vec<usize>>,
) -> Result<f64> {
    let infosets = tree.infosets_of(PlayerId(player));
    let base = infosets.start;
    let num = infosets.len();
    let num_nodes = tree.num_nodes();
    let is_own = |node: usize| tree.kind[node] == NodeKind::Decision && tree.player[node] as usize == player;

    // The responder's nodes grouped by infoset (ascending node ids within each), and the
    // infoset of each node's nearest strict ancestor where the responder acts.
    let mut above = vec![NONE; num_nodes];
    let mut start = vec![0usize; num + 1];
    // `waits[k]`: (infoset below, infoset above) pairs: the one above waits for the one below.
    let mut waits: Vec<(u32, u32)> = Vec::new();
    for node in 0..num_nodes {
        let parent = tree.parent[node];
        if parent != NO_PARENT {
            let par = parent as usize;
            above[node] = if is_own(par) { (tree.slot[par] as usize - base) as u32 } else { above[par] };
        }
        if is_own(node) {
            let i = tree.slot[node] as usize - base;
            start[i + 1] += 1;
            if above[node] != NONE {
                waits.push((i as u32, above[node]));
            }
        }
    }
    for i in 0..num {
        start[i + 1] += start[i];
    }
    let mut nodes_of = vec![0u32; start[num]];
    let mut fill = start.clone();
    for node in (0..num_nodes).filter(|&n| is_own(n)) {
        let i = tree.slot[node] as usize - base;
        nodes_of[fill[i]] = node as u32;
        fill[i] += 1;
    }
    // Kahn's order: an infoset is decided once every infoset it waits for is.
    waits.sort_unstable();
    waits.dedup();
    let mut pending = vec![0usize; num];
    for &(_, upper) in &waits {
        pending[upper as usize] += 1;
    }
    let mut ready: VecDeque<usize> = (0..num).filter(|&i| pending[i] == 0).collect();

    let mut values = Values::new(tree, player, reach, tremble_reach);
    let mut decided = 0;
    let (mut q, mut qt) = (Vec::new(), Vec::new());
    while let Some(i) = ready.pop_front() {
        decided += 1;
        let global = base + i;
        let seqs = tree.legal_start[global] as usize..tree.legal_start[global + 1] as usize;
        let k_max = seqs.len();
        q.clear();
        q.resize(k_max, 0.0);
        qt.clear();
        qt.resize(k_max, 0.0);
        for &h in &nodes_of[start[i]..start[i + 1]] {
            let first = tree.first_child[h as usize] as usize;
            for k in 0..k_max {
                let (v, vt) = values.evaluate(first + k);
                q[k] += v;
                qt[k] += vt;
            }
        }
        let v = q.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Values equal up to rounding count as ties, as in the perfect-recall pass.
        let tie = TIE_TOLERANCE * (1.0 + v.abs());
        let mut best_k = (0..k_max).find(|&k| q[k] >= v - tie).unwrap_or(0);
        if tremble_reach.is_some() {
            for k in best_k + 1..k_max {
                if q[k] >= v - tie && qt[k] > qt[best_k] {
                    best_k = k;
                }
            }
        }
        for &h in &nodes_of[start[i]..start[i + 1]] {
            values.copy(h as usize, tree.first_child[h as usize] as usize + best_k);
        }
        if let Some(b) = best.as_deref_mut() {
            b[global] = tree.legal_actions[seqs.start + best_k].0;
        }
        // Infosets above this one: one wait less each.
        let from = waits.partition_point(|&(below, _)| (below as usize) < i);
        for &(_, upper) in waits[from..].iter().take_while(|&&(below, _)| below as usize == i) {
            pending[upper as usize] -= 1;
            if pending[upper as usize] == 0 {
                ready.push_back(upper as usize);
            }
        }
    }
    if decided < num {
        let stuck =
            (0..num).find(|&i| pending[i] > 0).map_or("", |i| tree.infoset_key(crate::InfosetId(base + i)));
        return Err(Error::Unsupported(format!(
            "{}: player {player}'s information states lie below each other in a cycle (at {stuck:?}), so OpenSpiel's best response is not defined",
            tree.name()
        )));
    }
    Ok(values.evaluate(0).0)
}

/// `g(h)` (and its value against trembling opponents) at the nodes computed so far.
struct Values<'a> {
    tree: &'a GameTree,
    player: usize,
    reach: &'a [f64],
    tremble_reach: Option<&'a [f64]>,
    g: Vec<f64>,
    /// Empty without `tremble_reach`.
    g_tremble: Vec<f64>,
    done: Vec<bool>,
    order: Vec<usize>,
    stack: Vec<usize>,
}

impl<'a> Values<'a> {
    fn new(tree: &'a GameTree, player: usize, reach: &'a [f64], tremble_reach: Option<&'a [f64]>) -> Self {
        let n = tree.num_nodes();
        Values {
            tree,
            player,
            reach,
            tremble_reach,
            g: vec![0.0; n],
            g_tremble: if tremble_reach.is_some() { vec![0.0; n] } else { Vec::new() },
            done: vec![false; n],
            order: Vec::new(),
            stack: Vec::new(),
        }
    }

    /// The responder's node `node` plays its child `chosen`.
    fn copy(&mut self, node: usize, chosen: usize) {
        self.g[node] = self.g[chosen];
        if !self.g_tremble.is_empty() {
            self.g_tremble[node] = self.g_tremble[chosen];
        }
        self.done[node] = true;
    }

    /// `g` (and its trembling value, 0 without) at `root`, computing it and what lies below
    /// it down to nodes already done: the responder's nodes below `root` are, since their
    /// infosets were decided first.
    fn evaluate(&mut self, root: usize) -> (f64, f64) {
        let tree = self.tree;
        if !self.done[root] {
            // Pre-order (a parent before its descendants), then values in reverse.
            self.order.clear();
            self.stack.clear();
            self.stack.push(root);
            while let Some(node) = self.stack.pop() {
                self.order.push(node);
                if tree.kind[node] != NodeKind::Terminal {
                    let done = &self.done;
                    self.stack.extend(tree.children(node).filter(|&c| !done[c]));
                }
            }
            let n = tree.num_players;
            for &node in self.order.iter().rev() {
                if tree.kind[node] == NodeKind::Terminal {
                    let u = tree.utilities[tree.slot[node] as usize * n + self.player];
                    self.g[node] = self.reach[node] * u;
                    if let Some(r) = self.tremble_reach {
                        self.g_tremble[node] = r[node] * u;
                    }
                } else {
                    // Chance's or another player's node: its children are done.
                    self.g[node] = tree.children(node).map(|c| self.g[c]).sum();
                    if self.tremble_reach.is_some() {
                        self.g_tremble[node] = tree.children(node).map(|c| self.g_tremble[c]).sum();
                    }
                }
                self.done[node] = true;
            }
        }
        (self.g[root], self.g_tremble.get(root).copied().unwrap_or(0.0))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::exact::{TieBreak, best_response, best_response_with, reach};
    use crate::game::ActionId;
    use crate::{InfosetId, TabularPolicy, TreeBuilder, registry};

    fn tree(spec: &str) -> GameTree {
        GameTree::build(&registry::load(spec).unwrap()).unwrap()
    }

    /// A policy that is not uniform: weights `1 + (7·infoset + 3·k) mod 5` on the `k`-th
    /// legal action.
    fn skewed(t: &GameTree) -> TabularPolicy {
        TabularPolicy::from_fn(t, |i| {
            let k = t.legal_actions(i).len();
            let w: Vec<f64> = (0..k).map(|a| 1.0 + ((7 * i.0 + 3 * a) % 5) as f64).collect();
            let total: f64 = w.iter().sum();
            w.into_iter().map(|x| x / total).collect()
        })
        .unwrap()
    }

    /// OpenSpiel's `TabularBestResponse` (best_response.cc) transcribed: values memoised by
    /// history, choices by information state, the first strict maximum in action order.
    struct OpenSpielRecursion<'a> {
        tree: &'a GameTree,
        player: usize,
        profile: &'a TabularPolicy,
        counterfactual: Vec<f64>,
        nodes_of: HashMap<usize, Vec<usize>>,
        value: HashMap<usize, f64>,
        choice: HashMap<usize, usize>,
    }

    impl OpenSpielRecursion<'_> {
        fn value(&mut self, node: usize) -> f64 {
            if let Some(&v) = self.value.get(&node) {
                return v;
            }
            let t = self.tree;
            let v = match t.node_kind(node) {
                NodeKind::Terminal => t.terminal_utilities(node)[self.player],
                NodeKind::Chance => t.children(node).map(|c| t.chance_prob(c) * self.value(c)).sum(),
                NodeKind::Decision if t.node_player(node) == self.player => {
                    let k = self.choice(t.node_infoset(node).0);
                    self.value(t.children(node).start + k)
                }
                NodeKind::Decision => {
                    let i = t.node_infoset(node).0;
                    t.children(node).map(|c| self.profile.prob(i, t.node_action(c).0) * self.value(c)).sum()
                }
            };
            self.value.insert(node, v);
            v
        }

        fn choice(&mut self, infoset: usize) -> usize {
            if let Some(&k) = self.choice.get(&infoset) {
                return k;
            }
            let histories = self.nodes_of[&infoset].clone();
            let (mut best, mut best_value) = (0, f64::MIN);
            for k in 0..self.tree.legal_actions(InfosetId(infoset)).len() {
                let mut v = 0.0;
                for &h in &histories {
                    v += self.counterfactual[h] * self.value(self.tree.children(h).start + k);
                }
                if v > best_value {
                    (best, best_value) = (k, v);
                }
            }
            self.choice.insert(infoset, best);
            best
        }
    }

    /// The transcription's value and choices (legal actions by infoset) for `player`.
    fn openspiel_recursion(
        t: &GameTree,
        player: usize,
        profile: &TabularPolicy,
    ) -> (f64, HashMap<usize, usize>) {
        let mut counterfactual = Vec::new();
        reach(t, &vec![profile; t.num_players()], Some(player), &mut counterfactual);
        let mut nodes_of: HashMap<usize, Vec<usize>> = HashMap::new();
        for node in (0..t.num_nodes()).filter(|&n| t.node_kind(n) == NodeKind::Decision) {
            nodes_of.entry(t.node_infoset(node).0).or_default().push(node);
        }
        let mut r = OpenSpielRecursion {
            tree: t,
            player,
            profile,
            counterfactual,
            nodes_of,
            value: HashMap::new(),
            choice: HashMap::new(),
        };
        let v = r.value(0);
        let choices = r.choice.iter().map(|(&i, &k)| (i, t.legal_actions(InfosetId(i))[k].0)).collect();
        (v, choices)
    }

    #[test]
    fn the_pass_is_openspiels_recursion_on_imperfect_recall() {
        let t = tree("goofspiel(num_cards=4)");
        assert!(!t.has_perfect_recall());
        for policy in [TabularPolicy::uniform(&t), skewed(&t)] {
            for player in 0..2 {
                let (want, choices) = openspiel_recursion(&t, player, &policy);
                let (br, got) = best_response(&t, PlayerId(player), &[&policy, &policy]).unwrap();
                assert!((got - want).abs() < 1e-12, "player {player}: {got} vs {want}");
                // Every choice the recursion made (those its value needed) is ours.
                assert!(!choices.is_empty());
                for (i, a) in choices {
                    assert_eq!(
                        br.row(InfosetId(i))[a],
                        1.0,
                        "player {player} at {:?}",
                        t.infoset_key(InfosetId(i))
                    );
                }
            }
        }
    }

    #[test]
    fn on_perfect_recall_the_pass_is_the_sequence_pass() {
        for spec in
            ["kuhn_poker", "leduc_poker", "kuhn_poker(players=3)", "goofspiel(imp_info=True,num_cards=4)"]
        {
            let t = tree(spec);
            assert!(t.has_perfect_recall(), "{spec}");
            for policy in [TabularPolicy::uniform(&t), skewed(&t)] {
                let profile = vec![&policy; t.num_players()];
                for player in 0..t.num_players() {
                    let mut r = Vec::new();
                    reach(&t, &profile, Some(player), &mut r);
                    for tie_break in [TieBreak::LowestAction, TieBreak::Trembling(1e-3)] {
                        let (br, want) =
                            best_response_with(&t, PlayerId(player), &profile, tie_break).unwrap();
                        let trembling = match tie_break {
                            TieBreak::Trembling(eps) => {
                                let mut r = Vec::new();
                                crate::exact::reach_trembling(&t, &profile, Some(player), eps, &mut r);
                                Some(r)
                            }
                            TieBreak::LowestAction => None,
                        };
                        let mut best = vec![0; t.num_infosets()];
                        let got =
                            best_response_by_histories(&t, player, &r, trembling.as_deref(), Some(&mut best))
                                .unwrap();
                        assert!((got - want).abs() < 1e-12, "{spec} player {player}: {got} vs {want}");
                        if tie_break == TieBreak::LowestAction {
                            for i in t.infosets_of(PlayerId(player)) {
                                assert_eq!(br.row(InfosetId(i))[best[i]], 1.0, "{spec} infoset {i}");
                            }
                        }
                        // Trembling values that tie up to rounding may pick another action,
                        // which is then as good: the choices earn the best-response value.
                        let mut ours = policy.clone();
                        for i in t.infosets_of(PlayerId(player)) {
                            ours.row_mut(InfosetId(i)).fill(0.0);
                            ours.row_mut(InfosetId(i))[best[i]] = 1.0;
                        }
                        let mut deviated = profile.clone();
                        deviated[player] = &ours;
                        let earned = crate::expected_returns(&t, &deviated).unwrap()[player];
                        assert!((earned - want).abs() < 1e-12, "{spec} {tie_break:?}: {earned} vs {want}");
                    }
                }
            }
        }
    }

    /// One player bids L or R at `A`, then l or r at `B`, forgetting the first bid.
    fn forgetful() -> GameTree {
        let mut b = TreeBuilder::new("forgetful", 1, 2, None, None, 100);
        let (first, _) = b.decision(b.root(), 0, "A", &[ActionId(0), ActionId(1)]).unwrap();
        for (node, payoffs) in first.zip([[3.0, 0.0], [0.0, 2.0]]) {
            let (second, _) = b.decision(node, 0, "B", &[ActionId(0), ActionId(1)]).unwrap();
            for (leaf, u) in second.zip(payoffs) {
                b.terminal(leaf, &[u]).unwrap();
            }
        }
        b.finish().unwrap()
    }

    #[test]
    fn a_forgetful_player_decides_the_later_state_first() {
        let t = forgetful();
        assert_eq!(t.num_imperfect_recall_infosets(), 1);
        let uniform = TabularPolicy::uniform(&t);
        // At B: l is worth 3 + 0 over B's histories, r 0 + 2, so l; then L (3) beats R (0).
        let (br, value) = best_response(&t, PlayerId(0), &[&uniform]).unwrap();
        assert_eq!(value, 3.0);
        let a = t.infoset_by_key("A").unwrap();
        let b = t.infoset_by_key("B").unwrap();
        assert_eq!((br.row(a), br.row(b)), (&[1.0, 0.0][..], &[1.0, 0.0][..]));
    }

    #[test]
    fn an_absent_minded_player_is_refused() {
        // The absent-minded driver: the same state at the first exit and below it.
        let mut b = TreeBuilder::new("absent_minded", 1, 2, None, None, 100);
        let (first, _) = b.decision(b.root(), 0, "X", &[ActionId(0), ActionId(1)]).unwrap();
        b.terminal(first.start, &[0.0]).unwrap();
        let (second, _) = b.decision(first.start + 1, 0, "X", &[ActionId(0), ActionId(1)]).unwrap();
        b.terminal(second.start, &[4.0]).unwrap();
        b.terminal(second.start + 1, &[1.0]).unwrap();
        let t = b.finish().unwrap();
        assert!(!t.has_perfect_recall());
        let uniform = TabularPolicy::uniform(&t);
        let err = best_response(&t, PlayerId(0), &[&uniform]).unwrap_err().to_string();
        assert!(err.contains("lie below each other in a cycle (at \"X\")"), "{err}");
    }
}
