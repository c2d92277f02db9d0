//! `Population`: each player's members with stable ids and provenance, and their lineage.

use std::fmt::Write as _;
use std::ops::Range;
use std::sync::Arc;

use metagame_games::{PlayerId, Policy, TabularPolicy};
use petgraph::graph::{DiGraph, NodeIndex};
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::member_policy::{MemberPolicy, StoredPolicy};

/// One opponent member a response is asked to answer, with its meta-probability.
#[derive(Clone)]
#[non_exhaustive]
pub struct WeightedMember<'a> {
    /// The seat it plays.
    pub player: PlayerId,
    /// Its id in the population.
    pub id: PolicyId,
    /// Its policy, of any kind (a table's `player` rows are the ones that matter).
    pub policy: &'a dyn Policy,
    /// Its probability in the mixture to answer (> 0).
    pub weight: f64,
    /// The same policy with shared ownership, where the population holds it so (an oracle
    /// that keeps its opponents past the request, a Python trainer's environment, needs it).
    pub shared: Option<Arc<dyn Policy>>,
}

impl std::fmt::Debug for WeightedMember<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WeightedMember")
            .field("player", &self.player)
            .field("id", &self.id)
            .field("kind", &self.policy.kind())
            .field("weight", &self.weight)
            .finish()
    }
}

impl<'a> WeightedMember<'a> {
    /// An opponent member with its weight.
    pub fn new(player: PlayerId, id: PolicyId, policy: &'a dyn Policy, weight: f64) -> Self {
        Self { player, id, policy, weight, shared: None }
    }

    /// The member with its policy's shared handle.
    #[must_use]
    pub fn sharing(mut self, shared: Arc<dyn Policy>) -> Self {
        self.shared = Some(shared);
        self
    }
}

/// A member's id, unique across all players of a population and stable across checkpoints:
/// the one id of a member (a member's index in its player's list is only a payoff-table axis
/// position).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct PolicyId(pub u32);

/// Where a member came from.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Provenance {
    /// The iteration that added it (0 for the initial members).
    pub iteration: usize,
    /// The opponents it answered: `(id, weight)` of every member with positive weight in the
    /// meta-mixture it was trained against.
    pub answered: Vec<(PolicyId, f64)>,
    /// The oracle that produced it ("initial" for starting members).
    pub oracle: String,
    /// Later responses that came out identical to this member and were counted as it instead
    /// of being added again, oldest first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub reused: Vec<Reuse>,
}

impl Provenance {
    /// A member added at `iteration` by `oracle`, answering `answered`.
    pub fn new(iteration: usize, answered: Vec<(PolicyId, f64)>, oracle: impl Into<String>) -> Self {
        Self { iteration, answered, oracle: oracle.into(), reused: Vec::new() }
    }

    /// How many responses the member stands for: the one that added it and every reuse.
    pub fn multiplicity(&self) -> usize {
        1 + self.reused.len()
    }
}

/// A response identical to an existing member (the same rows of its player, bit for bit):
/// the member is reused rather than added again.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Reuse {
    /// The iteration whose response it was.
    pub iteration: usize,
    /// The opponents that response answered, as in [`Provenance::answered`].
    pub answered: Vec<(PolicyId, f64)>,
}

impl Reuse {
    /// A response of `iteration` answering `answered`.
    pub fn new(iteration: usize, answered: Vec<(PolicyId, f64)>) -> Self {
        Self { iteration, answered }
    }
}

/// One policy of one player.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct Member {
    /// Stable id.
    pub id: PolicyId,
    /// The player it plays (a table's rows of that player are the ones that matter).
    pub player: PlayerId,
    /// The policy, of any kind.
    pub policy: MemberPolicy,
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
    pub fn new(initial: Vec<MemberPolicy>) -> Self {
        let mut pop = Self { members: vec![Vec::new(); initial.len()], next_id: 0 };
        for (player, policy) in initial.into_iter().enumerate() {
            pop.add(PlayerId(player), policy, Provenance::new(0, Vec::new(), "initial"));
        }
        pop
    }

    /// Add a member to `player`'s list; returns its id.
    ///
    /// # Panics
    ///
    /// If `player` is not a player of the population (a caller bug).
    #[track_caller]
    pub fn add(&mut self, player: PlayerId, policy: MemberPolicy, provenance: Provenance) -> PolicyId {
        let id = PolicyId(self.next_id);
        self.next_id += 1;
        self.members[player.0].push(Member { id, player, policy, provenance });
        id
    }

    /// Record that a response of `player` was identical to its member at `index`.
    ///
    /// # Panics
    ///
    /// If `player` or `index` is out of range (a caller bug).
    #[track_caller]
    pub fn reuse(&mut self, player: PlayerId, index: usize, reuse: Reuse) {
        self.members[player.0][index].provenance.reused.push(reuse);
    }

    /// The index of `player`'s member that is a table whose rows `infosets` (the player's
    /// infosets in the tree) equal `policy`'s bit for bit, if any. Duplicates are found among
    /// tables only: members of other kinds are never equal to one.
    ///
    /// # Complexity
    ///
    /// O(members × rows).
    pub fn position_of(
        &self,
        player: PlayerId,
        policy: &TabularPolicy,
        infosets: Range<usize>,
    ) -> Option<usize> {
        self.members[player.0]
            .iter()
            .position(|m| m.policy.as_table().is_some_and(|t| same_rows(t, policy, infosets.clone())))
    }

    /// `player`'s responses in the order they were produced, each as the index of the member
    /// it is: a member's own response first, then its reuses, ordered by iteration (and by
    /// member within an iteration). Its length is the sum of the members' multiplicities.
    pub fn responses(&self, player: PlayerId) -> Vec<usize> {
        let mut out: Vec<(usize, usize)> = Vec::new();
        for (k, m) in self.members[player.0].iter().enumerate() {
            out.push((m.provenance.iteration, k));
            out.extend(m.provenance.reused.iter().map(|r| (r.iteration, k)));
        }
        out.sort_unstable();
        out.into_iter().map(|(_, k)| k).collect()
    }

    /// Number of players.
    pub fn num_players(&self) -> usize {
        self.members.len()
    }
    /// `player`'s members in the order they were added.
    pub fn members(&self, player: PlayerId) -> &[Member] {
        &self.members[player.0]
    }
    /// The member with `id`, if any.
    pub fn member(&self, id: PolicyId) -> Option<&Member> {
        self.members.iter().flatten().find(|m| m.id == id)
    }
    /// Number of members per player.
    pub fn sizes(&self) -> Vec<usize> {
        self.members.iter().map(Vec::len).collect()
    }
    /// `player`'s policies in order.
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`](crate::Error::SavedState) for a member read from a checkpoint
    /// whose file was not loaded.
    pub fn policies(&self, player: PlayerId) -> Result<Vec<&dyn Policy>> {
        self.members[player.0].iter().map(|m| m.policy.policy()).collect()
    }

    /// `player`'s policies in order when every one is a table.
    pub fn tables(&self, player: PlayerId) -> Option<Vec<&TabularPolicy>> {
        self.members[player.0].iter().map(|m| m.policy.as_table()).collect()
    }

    /// True when every member of every player is a table.
    pub fn all_tables(&self) -> bool {
        self.members.iter().flatten().all(|m| m.policy.as_table().is_some())
    }

    /// The members' files the run's driver has not written yet, as `(file, bytes)`.
    pub fn pending_files(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.members.iter().flatten().filter_map(|m| m.policy.pending_file())
    }

    /// Every member kept as a file, to load it after a checkpoint is read or mark it written.
    pub fn stored_mut(&mut self) -> impl Iterator<Item = &mut StoredPolicy> {
        self.members.iter_mut().flatten().filter_map(|m| m.policy.as_stored_mut())
    }

    /// `(id, weight)` of `player`'s members with positive weight in `weights` (one weight
    /// per member, in order): the opponents a response answered.
    pub fn weighted_ids(&self, player: PlayerId, weights: &[f64]) -> Vec<(PolicyId, f64)> {
        self.members[player.0]
            .iter()
            .zip(weights)
            .filter(|(_, w)| **w > 0.0)
            .map(|(m, &w)| (m.id, w))
            .collect()
    }

    /// `player`'s members with positive weight in `weights` (one weight per member, in
    /// order), as an oracle is handed them.
    ///
    /// # Errors
    ///
    /// As [`Population::policies`].
    pub fn weighted_members(&self, player: PlayerId, weights: &[f64]) -> Result<Vec<WeightedMember<'_>>> {
        self.members[player.0]
            .iter()
            .zip(weights)
            .filter(|(_, w)| **w > 0.0)
            .map(|(m, &w)| {
                Ok(WeightedMember::new(player, m.id, m.policy.policy()?, w).sharing(m.policy.shared()?))
            })
            .collect()
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
            for (from, w) in answers(m) {
                if let (Some(&a), Some(&b)) = (index.get(from), index.get(&m.id)) {
                    graph.add_edge(a, b, *w);
                }
            }
        }
        graph
    }

    /// The lineage in Graphviz DOT, nodes labelled `p<player>#<id> it<iteration>` (and the
    /// iterations that reused the member); a reuse's edges are dashed.
    pub fn lineage_dot(&self) -> String {
        let mut out = String::from("digraph lineage {\n  rankdir=LR;\n");
        for m in self.members.iter().flatten() {
            let reused: String = m.provenance.reused.iter().map(|r| format!(" it{}", r.iteration)).collect();
            let reused = if reused.is_empty() { reused } else { format!("; reused{reused}") };
            let _ = writeln!(
                out,
                "  n{} [label=\"p{}#{} it{} ({}){reused}\"];",
                m.id.0, m.player.0, m.id.0, m.provenance.iteration, m.provenance.oracle
            );
        }
        for m in self.members.iter().flatten() {
            for (from, w) in &m.provenance.answered {
                let _ = writeln!(out, "  n{} -> n{} [label=\"{w:.3}\"];", from.0, m.id.0);
            }
            for r in &m.provenance.reused {
                for (from, w) in &r.answered {
                    let _ = writeln!(
                        out,
                        "  n{} -> n{} [label=\"{w:.3} it{}\", style=dashed];",
                        from.0, m.id.0, r.iteration
                    );
                }
            }
        }
        out.push_str("}\n");
        out
    }
}

/// Every `(opponent, weight)` a member's responses answered: the one that added it, then its
/// reuses'.
fn answers(m: &Member) -> impl Iterator<Item = &(PolicyId, f64)> {
    m.provenance.answered.iter().chain(m.provenance.reused.iter().flat_map(|r| &r.answered))
}

/// True when `a` and `b` have the same rows `infosets`, bit for bit (and the same width).
pub(crate) fn same_rows(a: &TabularPolicy, b: &TabularPolicy, infosets: Range<usize>) -> bool {
    let k = a.num_actions();
    if b.num_actions() != k {
        return false;
    }
    let (Some(x), Some(y)) = (
        a.as_slice().get(infosets.start * k..infosets.end * k),
        b.as_slice().get(infosets.start * k..infosets.end * k),
    ) else {
        return false;
    };
    x.iter().zip(y).all(|(p, q)| p.to_bits() == q.to_bits())
}
