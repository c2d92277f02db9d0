//! Sampled episodes on the flat tree, with the learner's trajectory.
//!
//! # Randomness
//!
//! Episode `e` (counted from the learner's first training episode) of the learner seated at
//! `seat` under `seed` draws every uniform from the Philox stream
//! [`EpisodeStream::new(seed, seat, e)`](metagame_games::philox::EpisodeStream): first one
//! uniform per opponent seat, in seat order, choosing that seat's opponent policy (from the
//! cumulative weights, as an action is chosen from cumulative probabilities); then one per
//! chance or decision node visited, exactly as
//! [`FlatTree::play_episode`](metagame_games::flat::FlatTree::play_episode) walks.
//!
//! # Batches
//!
//! Episodes are played in batches with one fixed behaviour policy, in parallel (rayon), each
//! into its own slot of a buffer; the learner then applies them in episode order. What is
//! learned depends on the seed and the batch size, never on the number of threads.

use metagame_games::flat::{FlatTree, policy_cum_table};
use metagame_games::philox::EpisodeStream;
use metagame_games::{GameTree, InfosetId, Matchup, NodeKind, PlayerId, TabularPolicy};
use rayon::prelude::*;

use crate::error::{Error, Result};

/// Marks "no such node" in a [`Step`].
pub(crate) const NONE: u32 = u32::MAX;

/// Episodes one rayon task plays.
const EPISODES_PER_TASK: usize = 64;

/// One opponent policy a learner may meet, with its probability.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct Opponent<'a> {
    /// The seat it plays.
    pub seat: usize,
    /// Its policy (its `seat` rows are the ones that matter).
    pub policy: &'a TabularPolicy,
    /// Its probability among the policies of its seat (finite, >= 0; a seat's weights are
    /// normalised to sum to 1).
    pub weight: f64,
}

impl<'a> Opponent<'a> {
    /// An opponent policy at `seat` with weight `weight`.
    pub fn new(seat: usize, policy: &'a TabularPolicy, weight: f64) -> Self {
        Self { seat, policy, weight }
    }
}

/// One opponent seat and its tables with their probabilities.
pub type SeatTables<'a> = (usize, Vec<(&'a TabularPolicy, f64)>);

/// A distribution over opponent policies: each episode draws one policy per opponent seat
/// (independently across seats), as OpenSpiel's `rl_oracle` does.
#[derive(Clone, Debug)]
pub struct OpponentSampler<'a> {
    fixed: Option<&'a TabularPolicy>,
    members: Vec<Opponent<'a>>,
}

impl<'a> OpponentSampler<'a> {
    /// A mixture per seat: every opponent seat needs a positive total weight. Checked
    /// against the game when training starts.
    pub fn new(members: Vec<Opponent<'a>>) -> Self {
        Self { fixed: None, members }
    }

    /// One fixed policy at every seat but the learner's.
    pub fn fixed(policy: &'a TabularPolicy) -> Self {
        Self { fixed: Some(policy), members: Vec::new() }
    }

    /// The members with their weights (a fixed sampler lists none).
    pub fn members(&self) -> &[Opponent<'a>] {
        &self.members
    }

    /// Per opponent seat of a `tree` game with the learner at `seat`, in seat order: its
    /// policies with probabilities (weights normalised; zero weights left out).
    ///
    /// # Errors
    ///
    /// [`Error::Opponents`] for a member at the learner's seat or a seat the game lacks, a
    /// weight that is not a finite number >= 0, or a seat with no positive weight.
    pub fn mixtures(&self, tree: &GameTree, seat: usize) -> Result<Vec<SeatTables<'a>>> {
        let n = tree.num_players();
        let mut seats: Vec<SeatTables<'a>> = (0..n).filter(|&q| q != seat).map(|q| (q, Vec::new())).collect();
        let expanded: Vec<Opponent<'a>> = match self.fixed {
            Some(policy) => (0..n).filter(|&q| q != seat).map(|q| Opponent::new(q, policy, 1.0)).collect(),
            None => self.members.clone(),
        };
        for m in expanded {
            if !(m.weight.is_finite() && m.weight >= 0.0) {
                return Err(Error::Opponents(format!("weight {} is not a finite number >= 0", m.weight)));
            }
            let entry = seats.iter_mut().find(|s| s.0 == m.seat).ok_or_else(|| {
                Error::Opponents(format!(
                    "an opponent at seat {} (the learner plays seat {seat} of {n})",
                    m.seat
                ))
            })?;
            if m.weight > 0.0 {
                entry.1.push((m.policy, m.weight));
            }
        }
        for (q, members) in &mut seats {
            let total: f64 = members.iter().map(|m| m.1).sum();
            if !(total > 0.0 && total.is_finite()) {
                return Err(Error::Opponents(format!("seat {q} has no opponent with positive weight")));
            }
            for m in members.iter_mut() {
                m.1 /= total;
            }
        }
        Ok(seats)
    }
}

/// The opponents made ready for sampling: one cumulative table per member, and per seat the
/// cumulative weights over its members.
pub(crate) struct PreparedOpponents {
    tables: Vec<Vec<f64>>,
    /// Per opponent seat (ascending): the seat, its members' table indices, cumulative weights.
    seats: Vec<(usize, Vec<u32>, Vec<f64>)>,
}

/// One decision of the learner in an episode.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Step {
    /// First sequence (global infoset-action index) of the infoset: `slot + action` is the
    /// state-action pair.
    pub slot: u32,
    /// Number of legal actions.
    pub count: u32,
    /// Index of the action taken among the legal ones.
    pub action: u32,
    /// First sequence of the watched seat's next decision after this one and before the
    /// learner's next ([`NONE`] if it does not act in between).
    pub main_slot: u32,
    /// Its number of legal actions.
    pub main_count: u32,
}

/// One played episode as the learner saw it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Trajectory<'a> {
    /// The learner's decisions in order.
    pub steps: &'a [Step],
    /// The learner's terminal utility (the only reward of a game tree).
    pub reward: f64,
}

/// Where the learner's policy lives in a tree: its infosets, their sequences and actions.
#[derive(Clone, Debug)]
pub(crate) struct Layout {
    pub game: String,
    pub num_infosets: usize,
    pub num_actions: usize,
    pub num_sequences: usize,
    /// The seat's infosets: (global infoset id, first sequence, legal action ids).
    pub infosets: Vec<(usize, u32, Vec<u32>)>,
}

impl Layout {
    pub fn new(tree: &GameTree, seat: usize) -> Self {
        let mut seq_start = Vec::with_capacity(tree.num_infosets() + 1);
        let mut acc = 0u32;
        for i in 0..tree.num_infosets() {
            seq_start.push(acc);
            acc += tree.legal_actions(InfosetId(i)).len() as u32;
        }
        seq_start.push(acc);
        let infosets = tree
            .infosets_of(PlayerId(seat))
            .map(|i| {
                let legal = tree.legal_actions(InfosetId(i)).iter().map(|a| a.0 as u32).collect();
                (i, seq_start[i], legal)
            })
            .collect();
        Self {
            game: tree.name().to_owned(),
            num_infosets: tree.num_infosets(),
            num_actions: tree.num_actions(),
            num_sequences: tree.num_sequences(),
            infosets,
        }
    }

    /// True when `tree` has this layout's shape.
    pub fn fits(&self, tree: &GameTree) -> bool {
        tree.name() == self.game
            && tree.num_infosets() == self.num_infosets
            && tree.num_actions() == self.num_actions
            && tree.num_sequences() == self.num_sequences
    }
}

pub(crate) use metagame_games::flat::cumulate;

/// The episode engine of one learner: the tree as arrays, the keying, the batch buffers.
#[derive(Clone, Debug)]
pub(crate) struct Engine {
    /// `[first_child, num_children, kind | player << 2, slot]` per node.
    nodes: Vec<[u32; 4]>,
    chance_cum: Vec<f64>,
    utilities: Vec<f64>,
    num_players: usize,
    seat: usize,
    seed: u64,
    /// The seat whose next decisions are recorded in [`Step::main_slot`] (or [`NONE`]).
    watch: u32,
    /// Most learner decisions on one path.
    max_steps: usize,
    steps: Vec<Step>,
    lens: Vec<u32>,
    rewards: Vec<f64>,
}

impl Engine {
    /// # Errors
    ///
    /// [`Error::Seat`] for a seat the game does not have.
    /// The seed that keys this engine's episodes.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    pub fn new(tree: &GameTree, seat: usize, seed: u64) -> Result<Self> {
        if seat >= tree.num_players() {
            return Err(Error::Seat { seat, num_players: tree.num_players() });
        }
        let flat = FlatTree::new(tree);
        let n = tree.num_nodes();
        let words = flat.nodes();
        let mut nodes = Vec::with_capacity(n);
        let mut depth = vec![0usize; n];
        for i in 0..n {
            let w = &words[4 * i..4 * i + 4];
            let player = if tree.node_kind(i) == NodeKind::Decision { tree.node_player(i) as u32 } else { 0 };
            nodes.push([w[0], w[1], w[2] | (player << 2), w[3]]);
        }
        // Children come after parents: fold the deepest count of seat decisions upwards.
        for i in (0..n).rev() {
            let below = tree.children(i).map(|c| depth[c]).max().unwrap_or(0);
            let own = usize::from(tree.node_kind(i) == NodeKind::Decision && tree.node_player(i) == seat);
            depth[i] = below + own;
        }
        Ok(Self {
            nodes,
            chance_cum: flat.chance_cum().to_vec(),
            utilities: flat.utilities().to_vec(),
            num_players: tree.num_players(),
            seat,
            seed,
            watch: NONE,
            max_steps: depth.first().copied().unwrap_or(0).max(1),
            steps: Vec::new(),
            lens: Vec::new(),
            rewards: Vec::new(),
        })
    }

    /// Record the next decisions of `seat` after each learner step (None: record nothing).
    pub fn watch(&mut self, seat: Option<usize>) {
        self.watch = seat.map_or(NONE, |s| s as u32);
    }

    pub fn seat(&self) -> usize {
        self.seat
    }

    /// Check the opponents against the tree and make their tables.
    ///
    /// # Errors
    ///
    /// [`Error::Opponents`] for a seat out of range or the learner's own, a weight that is not
    /// finite and non-negative, a seat without positive weight; the games crate's errors for
    /// a policy of another game or a row that is not a distribution.
    pub fn prepare(&self, tree: &GameTree, opponents: &OpponentSampler<'_>) -> Result<PreparedOpponents> {
        let n = tree.num_players();
        let expanded: Vec<Opponent<'_>> = match opponents.fixed {
            Some(policy) => {
                (0..n).filter(|&q| q != self.seat).map(|q| Opponent::new(q, policy, 1.0)).collect()
            }
            None => opponents.members.clone(),
        };
        let mut tables = Vec::with_capacity(expanded.len());
        let mut seats: Vec<(usize, Vec<u32>, Vec<f64>)> =
            (0..n).filter(|&q| q != self.seat).map(|q| (q, Vec::new(), Vec::new())).collect();
        let all_zero = Matchup { seats: vec![0; n] };
        for m in &expanded {
            if m.seat >= n || m.seat == self.seat {
                return Err(Error::Opponents(format!(
                    "an opponent at seat {} (the learner plays seat {} of {n})",
                    m.seat, self.seat
                )));
            }
            if !(m.weight.is_finite() && m.weight >= 0.0) {
                return Err(Error::Opponents(format!("weight {} is not a finite number >= 0", m.weight)));
            }
            let entry = seats
                .iter_mut()
                .find(|s| s.0 == m.seat)
                .ok_or_else(|| Error::Opponents(format!("seat {} is not an opponent seat", m.seat)))?;
            entry.1.push(tables.len() as u32);
            entry.2.push(m.weight);
            tables.push(policy_cum_table(tree, &[m.policy], std::slice::from_ref(&all_zero))?);
        }
        for (q, _, weights) in &mut seats {
            let total: f64 = weights.iter().sum();
            if !(total > 0.0 && total.is_finite()) {
                return Err(Error::Opponents(format!("seat {q} has no opponent with positive weight")));
            }
            let probs: Vec<f64> = weights.iter().map(|w| w / total).collect();
            cumulate(probs.into_iter(), weights);
        }
        Ok(PreparedOpponents { tables, seats })
    }

    /// Play episodes `first .. first + count` with the learner's cumulative rows `behaviour`
    /// (indexed by sequence; only the seat's rows are read) into the batch buffers.
    pub fn play_batch(&mut self, behaviour: &[f64], opponents: &PreparedOpponents, first: u64, count: usize) {
        let ms = self.max_steps;
        self.steps.clear();
        self.steps.resize(count * ms, Step::default());
        self.lens.clear();
        self.lens.resize(count, 0);
        self.rewards.clear();
        self.rewards.resize(count, 0.0);
        let (mut steps, mut lens, mut rewards) = (
            std::mem::take(&mut self.steps),
            std::mem::take(&mut self.lens),
            std::mem::take(&mut self.rewards),
        );
        let this = &*self;
        let play_chunk = |c: usize, st: &mut [Step], ln: &mut [u32], rw: &mut [f64]| {
            let mut chosen = vec![0u32; this.num_players];
            for j in 0..ln.len() {
                let e = first + (c * EPISODES_PER_TASK + j) as u64;
                let (len, reward) =
                    this.play_one(behaviour, opponents, e, &mut chosen, &mut st[j * ms..(j + 1) * ms]);
                ln[j] = len;
                rw[j] = reward;
            }
        };
        if count <= EPISODES_PER_TASK {
            play_chunk(0, &mut steps, &mut lens, &mut rewards);
        } else {
            steps
                .par_chunks_mut(EPISODES_PER_TASK * ms)
                .zip(lens.par_chunks_mut(EPISODES_PER_TASK))
                .zip(rewards.par_chunks_mut(EPISODES_PER_TASK))
                .enumerate()
                .for_each(|(c, ((st, ln), rw))| play_chunk(c, st, ln, rw));
        }
        self.steps = steps;
        self.lens = lens;
        self.rewards = rewards;
    }

    /// Episode `j` of the last batch.
    #[inline]
    pub fn trajectory(&self, j: usize) -> Trajectory<'_> {
        let start = j * self.max_steps;
        Trajectory { steps: &self.steps[start..start + self.lens[j] as usize], reward: self.rewards[j] }
    }

    #[inline]
    fn play_one(
        &self,
        behaviour: &[f64],
        opponents: &PreparedOpponents,
        episode: u64,
        chosen: &mut [u32],
        out: &mut [Step],
    ) -> (u32, f64) {
        let mut stream = EpisodeStream::new(self.seed, self.seat as u32, episode);
        for (q, members, cum) in &opponents.seats {
            let u = stream.next_uniform();
            let k = cum[..cum.len() - 1].iter().map(|&c| usize::from(c <= u)).sum::<usize>();
            chosen[*q] = members[k];
        }
        let seat = self.seat as u32;
        let mut len = 0usize;
        let mut awaiting = false;
        let mut node = 0u32;
        loop {
            let [first, count, kind_player, slot] = self.nodes[node as usize];
            let kind = kind_player & 3;
            if kind == NodeKind::Terminal as u32 {
                let reward = self.utilities[slot as usize * self.num_players + self.seat];
                return (len as u32, reward);
            }
            let player = kind_player >> 2;
            let cum = if kind == NodeKind::Chance as u32 {
                &self.chance_cum[slot as usize..]
            } else if player == seat {
                &behaviour[slot as usize..]
            } else {
                if awaiting && player == self.watch {
                    out[len - 1].main_slot = slot;
                    out[len - 1].main_count = count;
                    awaiting = false;
                }
                &opponents.tables[chosen[player as usize] as usize][slot as usize..]
            };
            let u = stream.next_uniform();
            let row = &cum[..count as usize - 1];
            let k = row.iter().map(|&c| u32::from(c <= u)).sum::<u32>();
            if kind != NodeKind::Chance as u32 && player == seat {
                out[len] = Step { slot, count, action: k, main_slot: NONE, main_count: 0 };
                len += 1;
                awaiting = true;
            }
            node = first + k;
        }
    }
}
