//! Any policy as a table: [`TabularPolicy::tabulate`] asks a policy for every information
//! set of a tree, one batch per player, so that the exact algorithms run on it.

use std::borrow::Cow;

use ndarray::{Array2, ArrayView2};

use crate::error::{Error, Result};
use crate::game::PlayerId;
use crate::policy::{Decisions, Policy, check_probabilities};
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, InfosetId};

impl TabularPolicy {
    /// Any policy as a table over `tree`: each player's information sets asked in one batch
    /// (their tensors, cached in the tree, and legal actions), every answer checked
    /// ([`check_probabilities`]) and its `f32` row renormalised in `f64`, so that the exact
    /// algorithms run on it. A policy that is a table ([`Policy::as_tabular`]) is checked and
    /// copied.
    ///
    /// # Errors
    ///
    /// The policy's own errors; [`Error::BadProbabilities`] naming the information state of
    /// a row that is not a distribution over its legal actions; [`Error::Shape`] for a table
    /// of another tree.
    ///
    /// # Complexity
    ///
    /// One call of the policy per player on all of its information sets.
    pub fn tabulate(tree: &GameTree, policy: &dyn Policy) -> Result<Self> {
        if let Some(table) = policy.as_tabular() {
            table.validate(tree)?;
            return Ok(table.clone());
        }
        let (a, d) = (tree.num_actions(), tree.tensor_shape().map_or(0, crate::TensorShape::size));
        let mut p = Self::zeros(tree);
        let all_tensors = tree.infoset_tensors().unwrap_or_default();
        for player in 0..tree.num_players() {
            let range = tree.infosets_of(PlayerId(player));
            let infosets: Vec<InfosetId> = range.clone().map(InfosetId).collect();
            let legal = Array2::from_shape_fn((infosets.len(), a), |(r, k)| {
                tree.legal_actions(infosets[r]).iter().any(|l| l.0 == k)
            });
            let tensors = if d == 0 {
                ArrayView2::from_shape((infosets.len(), 0), &[][..])
            } else {
                ArrayView2::from_shape((infosets.len(), d), &all_tensors[range.start * d..range.end * d])
            }
            .map_err(|e| Error::Shape(e.to_string()))?;
            let decisions = Decisions {
                player: PlayerId(player),
                tensors,
                legal: legal.view(),
                infosets: Some(&infosets),
            };
            let mut out = Array2::<f32>::zeros((infosets.len(), a));
            policy.probabilities(&decisions, out.view_mut())?;
            check_probabilities(legal.view(), out.view()).map_err(|e| match e {
                Error::BadProbabilities { row, reason } => {
                    Error::BadPolicyRow { info_state: tree.infoset_key(infosets[row]).into(), reason }
                }
                other => other,
            })?;
            for (r, &id) in infosets.iter().enumerate() {
                let row = out.row(r);
                let sum: f64 = row.iter().map(|&x| f64::from(x)).sum();
                for (q, &x) in p.row_mut(id).iter_mut().zip(row) {
                    *q = f64::from(x) / sum;
                }
            }
        }
        p.validate(tree)?;
        Ok(p)
    }

    /// `policy` as a table over `tree`: borrowed when it is one, else
    /// [tabulated](TabularPolicy::tabulate).
    ///
    /// # Errors
    ///
    /// As [`TabularPolicy::tabulate`]; [`Error::Shape`] for a table of another tree.
    pub fn of<'a>(tree: &GameTree, policy: &'a dyn Policy) -> Result<Cow<'a, TabularPolicy>> {
        match policy.as_tabular() {
            Some(table) if table.fits(tree) => Ok(Cow::Borrowed(table)),
            Some(_) => Err(Error::Shape(format!("a table that was not made for {}", tree.name()))),
            None => Ok(Cow::Owned(Self::tabulate(tree, policy)?)),
        }
    }
}
