//! How batched episodes step a game, on its states or on its tree's nodes, and how one
//! policy decides for a batch of them at once: what the rollout evaluator and the seat
//! environment share.

use std::borrow::Borrow;

use ndarray::{ArrayView2, ArrayViewMut2};

use crate::error::{Error, Result};
use crate::flat::cumulate;
use crate::game::{ActionId, PlayerId, State, Turn};
use crate::philox::EpisodeStream;
use crate::policy::{Decisions, Policy, check_probabilities};
use crate::tabular_policy::ROW_SUM_TOLERANCE;
use crate::tree::{GameTree, InfosetId, NodeKind};

/// How episodes step a game: on its states, or on its tree's nodes.
pub(crate) trait Board: Sync {
    /// Where an episode is.
    type Cursor: Clone + Send;
    /// The start of an episode.
    fn root(&self) -> Self::Cursor;
    /// Who moves.
    fn turn(&self, at: &Self::Cursor) -> Turn;
    /// Move a chance cursor to the outcome drawn by `u` (`cum` is scratch space).
    fn chance(&self, at: &mut Self::Cursor, u: f64, cum: &mut Vec<f64>);
    /// The legal actions at a decision, ascending, into `out`.
    fn legal(&self, at: &Self::Cursor, out: &mut Vec<ActionId>);
    /// The tensor of `player` at a decision into `out`.
    fn tensor(&self, at: &Self::Cursor, player: PlayerId, out: &mut [f32]);
    /// The information set of a decision, on a tree.
    fn infoset(&self, at: &Self::Cursor) -> Option<InfosetId>;
    /// Take the `k`-th legal action, `action`.
    fn apply(&self, at: &mut Self::Cursor, k: usize, action: ActionId);
    /// The returns at a terminal into `out`.
    fn returns(&self, at: &Self::Cursor, out: &mut [f64]);
}

/// The index of the first entry of `cum` (a [`cumulate`]d row) above `u`.
#[inline]
pub(crate) fn pick(cum: &[f64], u: f64) -> usize {
    cum[..cum.len() - 1].iter().map(|&c| usize::from(c <= u)).sum()
}

/// Rollouts on a game's states, each episode a clone of the initial state.
pub(crate) struct StateBoard<S> {
    pub(crate) root: S,
}

impl<S: State + Sync> Board for StateBoard<S> {
    type Cursor = S;
    fn root(&self) -> S {
        self.root.clone()
    }
    fn turn(&self, at: &S) -> Turn {
        at.turn()
    }
    fn chance(&self, at: &mut S, u: f64, cum: &mut Vec<f64>) {
        let outcomes = at.chance_outcomes();
        cum.clear();
        cum.resize(outcomes.len(), 0.0);
        cumulate(outcomes.iter().map(|o| o.1), cum);
        at.apply_action(outcomes[pick(cum, u)].0);
    }
    fn legal(&self, at: &S, out: &mut Vec<ActionId>) {
        *out = at.legal_actions();
    }
    fn tensor(&self, at: &S, player: PlayerId, out: &mut [f32]) {
        at.write_tensor(player, out);
    }
    fn infoset(&self, _: &S) -> Option<InfosetId> {
        None
    }
    fn apply(&self, at: &mut S, _: usize, action: ActionId) {
        at.apply_action(action);
    }
    fn returns(&self, at: &S, out: &mut [f64]) {
        out.copy_from_slice(&at.returns());
    }
}

/// Rollouts on a built tree's nodes, tensors read from its per-infoset cache.
/// `T` is `&GameTree` where the caller holds the tree, `Arc<GameTree>` where the board shares it.
pub(crate) struct TreeBoard<T> {
    pub(crate) tree: T,
}

impl<T: Borrow<GameTree> + Sync> Board for TreeBoard<T> {
    type Cursor = u32;
    fn root(&self) -> u32 {
        0
    }
    fn turn(&self, &at: &u32) -> Turn {
        match self.tree.borrow().kind[at as usize] {
            NodeKind::Decision => Turn::Player(PlayerId(self.tree.borrow().player[at as usize] as usize)),
            NodeKind::Chance => Turn::Chance,
            NodeKind::Terminal => Turn::Terminal,
        }
    }
    fn chance(&self, at: &mut u32, u: f64, cum: &mut Vec<f64>) {
        let children = self.tree.borrow().children(*at as usize);
        cum.clear();
        cum.resize(children.len(), 0.0);
        cumulate(self.tree.borrow().chance_prob[children.clone()].iter().copied(), cum);
        *at = (children.start + pick(cum, u)) as u32;
    }
    fn legal(&self, &at: &u32, out: &mut Vec<ActionId>) {
        out.clear();
        out.extend_from_slice(self.tree.borrow().legal_actions(self.tree.borrow().node_infoset(at as usize)));
    }
    fn tensor(&self, &at: &u32, _: PlayerId, out: &mut [f32]) {
        if let Some(t) = self.tree.borrow().infoset_tensor(self.tree.borrow().node_infoset(at as usize)) {
            out.copy_from_slice(t);
        }
    }
    fn infoset(&self, &at: &u32) -> Option<InfosetId> {
        Some(self.tree.borrow().node_infoset(at as usize))
    }
    fn apply(&self, at: &mut u32, k: usize, _: ActionId) {
        *at = self.tree.borrow().first_child[*at as usize] + k as u32;
    }
    fn returns(&self, &at: &u32, out: &mut [f64]) {
        out.copy_from_slice(self.tree.borrow().terminal_utilities(at as usize));
    }
}

/// One episode in flight.
pub(crate) struct Lane<C> {
    pub(crate) at: C,
    pub(crate) stream: EpisodeStream,
    /// The episode's index in the chunk (a rollout's row of the returns; an environment's lane).
    pub(crate) slot: usize,
    /// The policy at each seat this episode.
    pub(crate) seated: Vec<usize>,
}

/// `policy` (number `index` of the caller's list, for messages) decides at seat `player`
/// for lanes `who`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn decide<B: Board>(
    board: &B,
    (policy, index): (&dyn Policy, usize),
    player: PlayerId,
    who: &[usize],
    lanes: &mut [Lane<B::Cursor>],
    (a, d): (usize, usize),
    s: &mut Scratch,
) -> Result<()> {
    let failed = |source: Error| Error::PolicyFailed {
        policy: index,
        kind: policy.kind().to_string(),
        source: Box::new(source),
    };
    let table = policy.as_tabular();
    if let Some(table) = table.filter(|_| board.infoset(&lanes[who[0]].at).is_some()) {
        for &l in who {
            let lane = &mut lanes[l];
            // INVARIANT: the filter above saw a tree board, whose decisions all have one.
            let infoset = board.infoset(&lane.at).expect("a tree's decision");
            board.legal(&lane.at, &mut s.legal);
            if infoset.0 >= table.num_infosets() || table.num_actions() != a {
                return Err(failed(Error::Shape("a table of another game tree".into())));
            }
            s.cum.clear();
            s.cum.resize(s.legal.len(), 0.0);
            let row = table.row(infoset);
            let sum = cumulate(s.legal.iter().map(|x| row[x.0]), &mut s.cum);
            let negative = s.legal.iter().any(|x| row[x.0].is_nan() || row[x.0] < 0.0);
            if negative || (sum - 1.0).abs().is_nan() || (sum - 1.0).abs() > ROW_SUM_TOLERANCE {
                return Err(failed(Error::BadProbabilities {
                    row: 0,
                    reason: format!(
                        "the table's row of information set {} is not a distribution over its legal actions (sum {sum})",
                        infoset.0
                    ),
                }));
            }
            let k = pick(&s.cum, lane.stream.next_uniform());
            let action = s.legal[k];
            board.apply(&mut lane.at, k, action);
        }
        return Ok(());
    }
    let b = who.len();
    s.tensors.clear();
    s.tensors.resize(b * d, 0.0);
    s.mask.clear();
    s.mask.resize(b * a, false);
    s.infosets.clear();
    for (r, &l) in who.iter().enumerate() {
        let at = &lanes[l].at;
        if d > 0 {
            board.tensor(at, player, &mut s.tensors[r * d..(r + 1) * d]);
        }
        board.legal(at, &mut s.legal);
        for x in &s.legal {
            s.mask[r * a + x.0] = true;
        }
        if let Some(i) = board.infoset(at) {
            s.infosets.push(i);
        }
    }
    let tensors = ArrayView2::from_shape((b, d), &s.tensors).map_err(|e| Error::Shape(e.to_string()))?;
    let legal = ArrayView2::from_shape((b, a), &s.mask).map_err(|e| Error::Shape(e.to_string()))?;
    let infosets = (s.infosets.len() == b).then_some(s.infosets.as_slice());
    s.probs.clear();
    s.probs.resize(b * a, 0.0);
    let mut out = ArrayViewMut2::from_shape((b, a), &mut s.probs).map_err(|e| Error::Shape(e.to_string()))?;
    let decisions = Decisions { player, tensors, legal, infosets };
    policy.probabilities(&decisions, out.view_mut()).map_err(failed)?;
    check_probabilities(legal, out.view()).map_err(failed)?;
    for (r, &l) in who.iter().enumerate() {
        let lane = &mut lanes[l];
        board.legal(&lane.at, &mut s.legal);
        let probs = &s.probs[r * a..(r + 1) * a];
        s.cum.clear();
        s.cum.resize(s.legal.len(), 0.0);
        cumulate(s.legal.iter().map(|x| f64::from(probs[x.0])), &mut s.cum);
        let k = pick(&s.cum, lane.stream.next_uniform());
        let action = s.legal[k];
        board.apply(&mut lane.at, k, action);
    }
    Ok(())
}

/// Buffers a worker reuses from step to step.
#[derive(Default)]
pub(crate) struct Scratch {
    pub(crate) legal: Vec<ActionId>,
    pub(crate) cum: Vec<f64>,
    pub(crate) tensors: Vec<f32>,
    pub(crate) mask: Vec<bool>,
    pub(crate) probs: Vec<f32>,
    pub(crate) infosets: Vec<InfosetId>,
}
