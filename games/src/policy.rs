//! `Policy`: action probabilities for a batch of decision points, whatever the policy is made
//! of (a table, a network, a callable of the user's).
//!
//! The contract is OpenSpiel's `Policy` with the batch made explicit: a policy sees each
//! decision point as the game's tensor ([`Game::tensor_shape`](crate::Game::tensor_shape))
//! and its legal actions, and answers a whole batch at once, so that a network makes one
//! forward pass per batch. A [`TabularPolicy`] is one kind among others; the exact
//! algorithms ask for it through [`Policy::as_tabular`] or tabulate any policy over a tree
//! ([`TabularPolicy::tabulate`]).

use std::sync::Arc;

use ndarray::{ArrayView2, ArrayViewMut2};

use crate::error::{Error, Result};
use crate::game::PlayerId;
use crate::tabular_policy::TabularPolicy;
use crate::tree::InfosetId;

/// A batch of one player's decision points, as a policy reads them.
#[derive(Clone, Copy, Debug)]
pub struct Decisions<'a> {
    /// The player deciding at every row.
    pub player: PlayerId,
    /// `[B × d]`: each decision point's tensor, flattened (`d` is the size of the game's
    /// [`TensorShape`](crate::TensorShape), 0 for a game that gives none).
    pub tensors: ArrayView2<'a, f32>,
    /// `[B × A]`: each decision point's legal actions (`A`: the game's distinct actions).
    pub legal: ArrayView2<'a, bool>,
    /// Each row's information set, when the decision points are nodes of a built
    /// [`GameTree`](crate::GameTree) (tables need it; policies that read tensors ignore it).
    pub infosets: Option<&'a [InfosetId]>,
}

impl Decisions<'_> {
    /// Number of decision points.
    pub fn len(&self) -> usize {
        self.legal.nrows()
    }
    /// True when the batch is empty.
    pub fn is_empty(&self) -> bool {
        self.legal.nrows() == 0
    }
}

/// Action probabilities for a batch of decision points, whatever the policy is made of.
///
/// Dyn-compatible, `Send + Sync` and answered through `&self`: a frozen member shares nothing
/// mutable, so matches run it on many threads at once.
///
/// # Examples
///
/// ```
/// use metagame_games::{Decisions, PlayerId, Policy, Uniform};
/// use ndarray::{Array2, array};
///
/// let legal = array![[true, false, true]];
/// let tensors = Array2::<f32>::zeros((1, 0));
/// let batch = Decisions { player: PlayerId(0), tensors: tensors.view(), legal: legal.view(), infosets: None };
/// let mut out = Array2::<f32>::zeros((1, 3));
/// Uniform.probabilities(&batch, out.view_mut())?;
/// assert_eq!(out, array![[0.5, 0.0, 0.5]]);
/// # Ok::<(), metagame_games::Error>(())
/// ```
pub trait Policy: Send + Sync {
    /// Write each decision point's action probabilities into `out` (`[B × A]`): finite,
    /// non-negative, zero on illegal actions, each row summing to 1 (within `f32` rounding;
    /// [`check_probabilities`] holds a policy to this).
    ///
    /// # Errors
    ///
    /// A batch the policy cannot answer (a table without information sets, tensors of
    /// another width) or a failure of the policy itself.
    fn probabilities(&self, decisions: &Decisions<'_>, out: ArrayViewMut2<'_, f32>) -> Result<()>;

    /// The table, for a policy that is one: the exact algorithms (best response, NashConv,
    /// CFR, the tree evaluators) read it directly. Default `None`.
    fn as_tabular(&self) -> Option<&TabularPolicy> {
        None
    }

    /// What the policy is made of (`"table"`, `"mlp"`, `"uniform"`), for messages and for
    /// reading a [`PolicyFile`] back.
    fn kind(&self) -> &str;

    /// The policy as a file its kind reads back, for run folders that keep members that are
    /// not tables; `Ok(None)` (the default) for a policy that cannot be written.
    ///
    /// # Errors
    ///
    /// A failure to serialise.
    fn to_file(&self) -> Result<Option<PolicyFile>> {
        Ok(None)
    }

    /// The policy as [`Any`](std::any::Any), for an embedder that gives its own kinds back
    /// as themselves (the Python package hands a user's callable back, not a copy).
    /// Default `None`.
    fn as_any(&self) -> Option<&dyn std::any::Any> {
        None
    }

    /// The policy answering on `device` (a GPU), for an evaluator that plays many batches
    /// of it there; `None` (the default, where [`Device::place`] takes nothing this policy
    /// [`as_any`](Policy::as_any) gives) when it stays where it is. A policy made of others
    /// gives itself back with its parts placed.
    fn on_device(&self, device: &dyn Device) -> Option<Arc<dyn Policy>> {
        self.as_any().and_then(|any| device.place(any))
    }
}

/// Where a policy's batches can be answered faster than by the policy itself (a GPU): the
/// device places the kinds of policy it runs, given as [`Policy::as_any`], and leaves the
/// rest.
pub trait Device: Send + Sync {
    /// `policy` answering on this device, or `None` for a kind it does not run.
    fn place(&self, policy: &dyn std::any::Any) -> Option<Arc<dyn Policy>>;
}

/// A policy written out as bytes, with the kind that reads it back: how a run folder keeps a
/// member that is not a table (a network's safetensors file).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PolicyFile {
    /// The kind that reads it back ([`Policy::kind`]).
    pub kind: String,
    /// The file name's extension, without the dot (`"safetensors"`).
    pub extension: String,
    /// The contents.
    pub bytes: Vec<u8>,
}

/// Uniform over the legal actions, on any game (no tree, no tensors needed).
#[derive(Clone, Copy, Debug, Default)]
pub struct Uniform;

impl Policy for Uniform {
    fn probabilities(&self, decisions: &Decisions<'_>, mut out: ArrayViewMut2<'_, f32>) -> Result<()> {
        check_batch(decisions, &out)?;
        for (legal, mut row) in decisions.legal.rows().into_iter().zip(out.rows_mut()) {
            let k = legal.iter().filter(|&&l| l).count().max(1) as f32;
            for (p, &l) in row.iter_mut().zip(legal) {
                *p = if l { 1.0 / k } else { 0.0 };
            }
        }
        Ok(())
    }
    fn kind(&self) -> &str {
        "uniform"
    }
    /// Its name: nothing else to keep.
    fn to_file(&self) -> Result<Option<PolicyFile>> {
        Ok(Some(PolicyFile {
            kind: "uniform".into(),
            extension: "policy".into(),
            bytes: b"uniform".to_vec(),
        }))
    }
}

/// Always the first (lowest) legal action, on any game.
#[derive(Clone, Copy, Debug, Default)]
pub struct FirstAction;

impl Policy for FirstAction {
    fn probabilities(&self, decisions: &Decisions<'_>, mut out: ArrayViewMut2<'_, f32>) -> Result<()> {
        check_batch(decisions, &out)?;
        for (legal, mut row) in decisions.legal.rows().into_iter().zip(out.rows_mut()) {
            row.fill(0.0);
            if let Some(first) = legal.iter().position(|&l| l) {
                row[first] = 1.0;
            }
        }
        Ok(())
    }
    fn kind(&self) -> &str {
        "first-action"
    }
    /// Its name: nothing else to keep.
    fn to_file(&self) -> Result<Option<PolicyFile>> {
        Ok(Some(PolicyFile {
            kind: "first-action".into(),
            extension: "policy".into(),
            bytes: b"first-action".to_vec(),
        }))
    }
}

impl Policy for TabularPolicy {
    /// The rows of the batch's information sets, rounded to `f32`.
    ///
    /// # Errors
    ///
    /// [`Error::Unsupported`] for a batch without information sets (decision points that are
    /// not nodes of a tree); [`Error::Shape`] for a batch of another width or an information
    /// set the table does not have.
    fn probabilities(&self, decisions: &Decisions<'_>, mut out: ArrayViewMut2<'_, f32>) -> Result<()> {
        check_batch(decisions, &out)?;
        let Some(infosets) = decisions.infosets else {
            return Err(Error::Unsupported(
                "a tabular policy answers only decision points of the game tree it was made for".into(),
            ));
        };
        if out.ncols() != self.num_actions() || infosets.len() != decisions.len() {
            return Err(Error::Shape(format!(
                "a table of {} actions asked for {} rows of {} actions",
                self.num_actions(),
                infosets.len(),
                out.ncols()
            )));
        }
        for (&infoset, mut row) in infosets.iter().zip(out.rows_mut()) {
            if infoset.0 >= self.num_infosets() {
                return Err(Error::Shape(format!(
                    "information set {} is not one of the table's {}",
                    infoset.0,
                    self.num_infosets()
                )));
            }
            for (p, &q) in row.iter_mut().zip(self.row(infoset)) {
                *p = q as f32;
            }
        }
        Ok(())
    }
    fn as_tabular(&self) -> Option<&TabularPolicy> {
        Some(self)
    }
    fn kind(&self) -> &str {
        "table"
    }
}

/// Check that `out` has a row per decision point and a column per action.
fn check_batch(decisions: &Decisions<'_>, out: &ArrayViewMut2<'_, f32>) -> Result<()> {
    if out.dim() != decisions.legal.dim() || decisions.tensors.nrows() != decisions.len() {
        return Err(Error::Shape(format!(
            "a batch of {} tensors and {:?} legal masks answered into {:?}",
            decisions.tensors.nrows(),
            decisions.legal.dim(),
            out.dim()
        )));
    }
    Ok(())
}

/// How far a row of `f32` probabilities may sum from 1 (a float32 softmax over a few
/// thousand actions rounds well within it).
pub const PROBABILITY_SUM_TOLERANCE: f32 = 1e-4;

/// Check a policy's answer: every row finite, non-negative, zero on the illegal actions and
/// summing to 1 within [`PROBABILITY_SUM_TOLERANCE`].
///
/// # Errors
///
/// [`Error::BadProbabilities`] naming the first bad row and what is wrong with it.
pub fn check_probabilities(legal: ArrayView2<'_, bool>, probabilities: ArrayView2<'_, f32>) -> Result<()> {
    if legal.dim() != probabilities.dim() {
        return Err(Error::Shape(format!(
            "{:?} probabilities for {:?} legal actions",
            probabilities.dim(),
            legal.dim()
        )));
    }
    for (row, (legal, probs)) in legal.rows().into_iter().zip(probabilities.rows()).enumerate() {
        let bad = |reason: String| Error::BadProbabilities { row, reason };
        let mut sum = 0.0f32;
        for (a, (&l, &p)) in legal.iter().zip(probs).enumerate() {
            if !p.is_finite() || p < 0.0 {
                return Err(bad(format!(
                    "probability {p} of action {a} is not a finite non-negative number"
                )));
            }
            if p > 0.0 && !l {
                return Err(bad(format!("illegal action {a} has probability {p}")));
            }
            sum += p;
        }
        if (sum - 1.0).abs() > PROBABILITY_SUM_TOLERANCE {
            return Err(bad(format!("probabilities sum to {sum}, not 1")));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use ndarray::{Array2, array};

    use super::*;
    use crate::{GameTree, registry};

    #[test]
    fn a_table_answers_its_rows_and_refuses_decisions_without_infosets() {
        let tree = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
        let uniform = TabularPolicy::uniform(&tree);
        let infosets = [InfosetId(0), InfosetId(5)];
        let legal = Array2::from_shape_fn((2, 3), |(r, a)| uniform.row(infosets[r])[a] > 0.0);
        let tensors = Array2::<f32>::zeros((2, 30));
        let mut out = Array2::<f32>::zeros((2, 3));
        let batch = Decisions {
            player: PlayerId(0),
            tensors: tensors.view(),
            legal: legal.view(),
            infosets: Some(&infosets),
        };
        uniform.probabilities(&batch, out.view_mut()).unwrap();
        for (r, i) in infosets.iter().enumerate() {
            let want: Vec<f32> = uniform.row(*i).iter().map(|&p| p as f32).collect();
            assert_eq!(out.row(r).to_vec(), want);
        }
        check_probabilities(legal.view(), out.view()).unwrap();
        let untreed = Decisions { infosets: None, ..batch };
        assert!(matches!(uniform.probabilities(&untreed, out.view_mut()), Err(Error::Unsupported(_))));
        assert!(uniform.as_tabular().is_some() && Uniform.as_tabular().is_none());
    }

    #[test]
    fn bad_answers_are_named_by_row() {
        let legal = array![[true, true, false], [true, false, true]];
        let check = |p: Array2<f32>| check_probabilities(legal.view(), p.view());
        check(array![[0.5, 0.5, 0.0], [0.25, 0.0, 0.75]]).unwrap();
        let err = |p| match check(p) {
            Err(Error::BadProbabilities { row, reason }) => (row, reason),
            other => panic!("{other:?}"),
        };
        assert_eq!(err(array![[0.5, 0.5, 0.0], [0.5, 0.0, 0.6]]).0, 1);
        assert!(err(array![[0.5, 0.5, 0.0], [0.5, 0.5, 0.0]]).1.contains("illegal action 1"));
        assert!(err(array![[f32::NAN, 1.0, 0.0], [1.0, 0.0, 0.0]]).1.contains("NaN"));
        assert!(err(array![[-0.5, 1.5, 0.0], [1.0, 0.0, 0.0]]).1.contains("-0.5"));
        assert!(check(array![[1.0, 0.0]]).is_err());
    }
}
