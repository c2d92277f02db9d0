//! `Population`: each player's members with stable ids and provenance, and their lineage.

use std::fmt::Write as _;

use metagame_games::TabularPolicy;
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};

/// A member's id, unique across all players of a population and stable across checkpoints.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PolicyId(pub u32);

/// Where a member came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The iteration that added it (0 for the initial members).
    pub iteration: usize,
    /// The opponents it answered: `(id, weight)` of every member with positive weight in the
    /// meta-mixture it was trained against.
    pub answered: Vec<(PolicyId, f64)>,
    /// The oracle that produced it ("initial" for starting members).
    pub oracle: String,
}

/// One policy of one player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Member {
    /// Stable id.
    pub id: PolicyId,
    /// The player it plays (its rows of `policy` are the ones that matter).
    pub player: usize,
    /// The policy.
    pub policy: TabularPolicy,
    /// Where it came from.
    pub provenance: Provenance,
}

/// Per-player lists of members.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Population {
    members: Vec<Vec<Member>>,
    next_id: u32,
}

impl Population {
    /// A population with one initial policy per player.
    pub fn new(initial: Vec<TabularPolicy>) -> Self {
        let mut pop = Self { members: vec![Vec::new(); initial.len()], next_id: 0 };
        for (player, policy) in initial.into_iter().enumerate() {
            pop.add(
                player,
                policy,
                Provenance { iteration: 0, answered: Vec::new(), oracle: "initial".into() },
            );
        }
        pop
    }

    /// Add a member to `player`'s list; returns its id.
    pub fn add(&mut self, player: usize, policy: TabularPolicy, provenance: Provenance) -> PolicyId {
        let id = PolicyId(self.next_id);
        self.next_id += 1;
        self.members[player].push(Member { id, player, policy, provenance });
        id
    }

    /// Number of players.
    pub fn num_players(&self) -> usize {
        self.members.len()
    }
    /// `player`'s members in the order they were added.
    pub fn members(&self, player: usize) -> &[Member] {
        &self.members[player]
    }
    /// Number of members per player.
    pub fn sizes(&self) -> Vec<usize> {
        self.members.iter().map(Vec::len).collect()
    }
    /// `player`'s policies in order.
    pub fn policies(&self, player: usize) -> Vec<&TabularPolicy> {
        self.members[player].iter().map(|m| &m.policy).collect()
    }

    /// `(id, weight)` of `player`'s members with positive weight in `weights` (one weight
    /// per member, in order): the opponents a response answered.
    pub fn weighted_ids(&self, player: usize, weights: &[f64]) -> Vec<(PolicyId, f64)> {
        self.members[player].iter().zip(weights).filter(|(_, w)| **w > 0.0).map(|(m, w)| (m.id, *w)).collect()
    }

    /// The lineage: an edge from every answered opponent to the member that answered it,
    /// weighted by its meta-mixture probability.
    pub fn lineage(&self) -> DiGraph<PolicyId, f64> {
        let mut graph = DiGraph::new();
        let mut index: std::collections::HashMap<PolicyId, NodeIndex> = std::collections::HashMap::new();
        for m in self.members.iter().flatten() {
            index.insert(m.id, graph.add_node(m.id));
        }
        for m in self.members.iter().flatten() {
            for (from, w) in &m.provenance.answered {
                if let (Some(&a), Some(&b)) = (index.get(from), index.get(&m.id)) {
                    graph.add_edge(a, b, *w);
                }
            }
        }
        graph
    }

    /// The lineage in Graphviz DOT, nodes labelled `p<player>#<id> it<iteration>`.
    pub fn lineage_dot(&self) -> String {
        let mut out = String::from("digraph lineage {\n  rankdir=LR;\n");
        for m in self.members.iter().flatten() {
            let _ = writeln!(
                out,
                "  n{} [label=\"p{}#{} it{} ({})\"];",
                m.id.0, m.player, m.id.0, m.provenance.iteration, m.provenance.oracle
            );
        }
        for m in self.members.iter().flatten() {
            for (from, w) in &m.provenance.answered {
                let _ = writeln!(out, "  n{} -> n{} [label=\"{w:.3}\"];", from.0, m.id.0);
            }
        }
        out.push_str("}\n");
        out
    }
}
