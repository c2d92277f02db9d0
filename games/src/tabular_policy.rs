//! `TabularPolicy`: dense `[infosets × actions]` probabilities over a [`GameTree`], with
//! OpenSpiel's JSON format (`TabularPolicy.to_dict()`) for exchange.

use std::collections::BTreeMap;
use std::collections::btree_map::Entry;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result, read_text_capped};
use crate::game::PlayerId;
use crate::tree::{GameTree, InfosetId};

/// Tolerance on a row's sum when reading or validating policies.
pub const ROW_SUM_TOLERANCE: f64 = 1e-9;

/// Action probabilities for every information set of every player of one game tree.
///
/// Row `i` belongs to infoset `InfosetId(i)` of the tree; column `a` is action id `a`;
/// illegal actions hold 0. A profile is one policy per player (`&[&TabularPolicy]`); player
/// `p` reads only its own rows of `profile[p]`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TabularPolicy {
    num_actions: usize,
    probs: Vec<f64>,
}

impl TabularPolicy {
    /// Uniform over the legal actions at every infoset.
    pub fn uniform(tree: &GameTree) -> Self {
        let mut p = Self::zeros(tree);
        for i in 0..tree.num_infosets() {
            let legal = tree.legal_actions(InfosetId(i));
            let w = 1.0 / legal.len() as f64;
            for a in legal {
                p.probs[i * p.num_actions + a.0] = w;
            }
        }
        p
    }

    /// Always the first (lowest) legal action.
    pub fn first_action(tree: &GameTree) -> Self {
        let mut p = Self::zeros(tree);
        for i in 0..tree.num_infosets() {
            let a = tree.legal_actions(InfosetId(i))[0];
            p.probs[i * p.num_actions + a.0] = 1.0;
        }
        p
    }

    /// All zeros (not a valid policy until every row is filled).
    pub(crate) fn zeros(tree: &GameTree) -> Self {
        Self { num_actions: tree.num_actions(), probs: vec![0.0; tree.num_infosets() * tree.num_actions()] }
    }

    /// Build from a function giving each infoset's probabilities over its legal actions
    /// (in the order of `tree.legal_actions`).
    ///
    /// # Errors
    ///
    /// [`Error::BadPolicyRow`] when a row is not a distribution.
    pub fn from_fn(tree: &GameTree, mut row: impl FnMut(InfosetId) -> Vec<f64>) -> Result<Self> {
        let mut p = Self::zeros(tree);
        for i in 0..tree.num_infosets() {
            let id = InfosetId(i);
            let values = row(id);
            let legal = tree.legal_actions(id);
            if values.len() != legal.len() {
                return Err(Error::BadPolicyRow {
                    info_state: tree.infoset_key(id).into(),
                    reason: format!("{} probabilities for {} legal actions", values.len(), legal.len()),
                });
            }
            for (a, v) in legal.iter().zip(values) {
                p.probs[i * p.num_actions + a.0] = v;
            }
        }
        p.validate(tree)?;
        Ok(p)
    }

    /// A policy from its dense row-major table (`[infoset * num_actions + action]`, as
    /// [`TabularPolicy::as_slice`] gives it), checked with [`TabularPolicy::validate`].
    ///
    /// # Errors
    ///
    /// As [`TabularPolicy::validate`].
    pub fn from_dense(tree: &GameTree, probs: Vec<f64>) -> Result<Self> {
        let p = Self { probs, num_actions: tree.num_actions() };
        p.validate(tree)?;
        Ok(p)
    }

    /// Number of columns (the game's distinct actions).
    pub fn num_actions(&self) -> usize {
        self.num_actions
    }
    /// Number of rows (infosets).
    pub fn num_infosets(&self) -> usize {
        self.probs.len().checked_div(self.num_actions).unwrap_or(0)
    }
    /// Probabilities at an infoset, indexed by action id.
    pub fn row(&self, infoset: InfosetId) -> &[f64] {
        &self.probs[infoset.0 * self.num_actions..(infoset.0 + 1) * self.num_actions]
    }
    /// Mutable probabilities at an infoset (keep it a distribution over legal actions).
    pub fn row_mut(&mut self, infoset: InfosetId) -> &mut [f64] {
        &mut self.probs[infoset.0 * self.num_actions..(infoset.0 + 1) * self.num_actions]
    }
    /// Probability of `action` at `infoset`.
    #[inline]
    pub fn prob(&self, infoset: usize, action: usize) -> f64 {
        self.probs[infoset * self.num_actions + action]
    }
    /// The dense row-major table, `[infoset * num_actions + action]`.
    pub fn as_slice(&self) -> &[f64] {
        &self.probs
    }
    /// Copy `player`'s rows from `other` (same tree).
    pub fn copy_player_rows(&mut self, tree: &GameTree, player: PlayerId, other: &TabularPolicy) {
        let r = tree.infosets_of(player);
        let (a, b) = (r.start * self.num_actions, r.end * self.num_actions);
        self.probs[a..b].copy_from_slice(&other.probs[a..b]);
    }

    /// True when the policy has the tree's shape.
    pub fn fits(&self, tree: &GameTree) -> bool {
        self.num_actions == tree.num_actions() && self.probs.len() == tree.num_infosets() * tree.num_actions()
    }

    /// Check that every row is a distribution over the legal actions.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for a policy of another tree; [`Error::BadPolicyRow`] naming the
    /// information state of the first bad row.
    pub fn validate(&self, tree: &GameTree) -> Result<()> {
        if !self.fits(tree) {
            return Err(Error::Shape(format!(
                "policy has {} rows of {} actions, the tree {} infosets of {}",
                self.num_infosets(),
                self.num_actions,
                tree.num_infosets(),
                tree.num_actions()
            )));
        }
        for i in 0..tree.num_infosets() {
            let id = InfosetId(i);
            let row = self.row(id);
            let legal = tree.legal_actions(id);
            let bad =
                |reason: String| Error::BadPolicyRow { info_state: tree.infoset_key(id).into(), reason };
            let mut sum = 0.0;
            for (a, &p) in row.iter().enumerate() {
                if !p.is_finite() || p < 0.0 {
                    return Err(bad(format!(
                        "probability {p} of action {a} is not a finite non-negative number"
                    )));
                }
                if p != 0.0 && !legal.iter().any(|l| l.0 == a) {
                    return Err(bad(format!("illegal action {a} has probability {p}")));
                }
                sum += p;
            }
            if (sum - 1.0).abs() > ROW_SUM_TOLERANCE {
                return Err(bad(format!("probabilities sum to {sum}, not 1")));
            }
        }
        Ok(())
    }

    /// Read OpenSpiel's JSON: an object mapping every information-state string to a list of
    /// `[action, probability]` pairs (illegal actions may be listed with probability 0).
    ///
    /// # Errors
    ///
    /// [`Error::PolicyFormat`] for malformed JSON; [`Error::UnknownInfoState`] for a key the
    /// game does not have; [`Error::BadPolicyRow`] for a missing infoset, an action out of
    /// range, or a row that is not a distribution over the legal actions.
    pub fn from_openspiel_json(tree: &GameTree, text: &str) -> Result<Self> {
        let PolicyRows { map, duplicate } = serde_json::from_str(text).map_err(|e| {
            Error::PolicyFormat(format!(
                "expected an object of info state -> [[action, probability], ...]: {e}"
            ))
        })?;
        if let Some(key) = duplicate {
            return Err(Error::PolicyFormat(format!("information state {key:?} is listed twice")));
        }
        let mut p = Self::zeros(tree);
        let mut seen = vec![false; tree.num_infosets()];
        for (key, pairs) in &map {
            let id = tree.infoset_by_key(key).ok_or_else(|| Error::UnknownInfoState(key.clone()))?;
            seen[id.0] = true;
            for &(a, prob) in pairs {
                if a.fract() != 0.0 || a < 0.0 || a >= p.num_actions as f64 {
                    return Err(Error::BadPolicyRow {
                        info_state: key.clone(),
                        reason: format!("action {a} is not one of 0..{}", p.num_actions),
                    });
                }
                p.probs[id.0 * p.num_actions + a as usize] = prob;
            }
        }
        if let Some(missing) = seen.iter().position(|s| !s) {
            return Err(Error::BadPolicyRow {
                info_state: tree.infoset_key(InfosetId(missing)).into(),
                reason: "missing from the policy".into(),
            });
        }
        p.validate(tree)?;
        Ok(p)
    }

    /// Read a policy file (OpenSpiel JSON) of at most [`TabularPolicy::max_json_bytes`] bytes.
    ///
    /// # Errors
    ///
    /// As [`TabularPolicy::read_openspiel_json_with_limit`].
    pub fn read_openspiel_json(tree: &GameTree, path: &std::path::Path) -> Result<Self> {
        Self::read_openspiel_json_with_limit(tree, path, Self::max_json_bytes(tree))
    }

    /// Read a policy file (OpenSpiel JSON) of at most `max_bytes` bytes.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] if it cannot be read; [`Error::LimitExceeded`] for a larger file (read no
    /// further than the limit); otherwise as [`TabularPolicy::from_openspiel_json`].
    pub fn read_openspiel_json_with_limit(
        tree: &GameTree,
        path: &std::path::Path,
        max_bytes: u64,
    ) -> Result<Self> {
        let text = read_text_capped(path, max_bytes, "`TabularPolicy::read_openspiel_json_with_limit`")?;
        Self::from_openspiel_json(tree, &text)
    }

    /// The size of a policy file of `tree` that [`TabularPolicy::read_openspiel_json`] reads:
    /// more than any policy of the tree takes, however indented (1 MiB, plus 6 bytes per
    /// character of every information-state string and 256 bytes per action of every infoset).
    pub fn max_json_bytes(tree: &GameTree) -> u64 {
        let per_infoset = |i: usize| {
            let key = tree.infoset_key(InfosetId(i)).len() as u64;
            key.saturating_mul(6).saturating_add(256 * (tree.num_actions() as u64 + 1))
        };
        (0..tree.num_infosets()).fold(1 << 20, |acc: u64, i| acc.saturating_add(per_infoset(i)))
    }

    /// Write OpenSpiel's JSON: every infoset, every action id (illegal ones with 0).
    pub fn to_openspiel_json(&self, tree: &GameTree) -> String {
        let map: BTreeMap<&str, Vec<(usize, f64)>> = (0..tree.num_infosets())
            .map(|i| {
                let row = self.row(InfosetId(i));
                (tree.infoset_key(InfosetId(i)), row.iter().copied().enumerate().collect())
            })
            .collect();
        // INVARIANT: string keys and numeric pairs always serialise.
        serde_json::to_string(&map).expect("policy serialises")
    }
}

/// A policy file's rows, sorted by information state, with the first key given twice
/// (`serde_json` alone would keep the last silently).
struct PolicyRows {
    map: BTreeMap<String, Vec<(f64, f64)>>,
    duplicate: Option<String>,
}

impl<'de> Deserialize<'de> for PolicyRows {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        struct Rows;
        impl<'de> serde::de::Visitor<'de> for Rows {
            type Value = PolicyRows;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut access: A,
            ) -> std::result::Result<PolicyRows, A::Error> {
                let mut rows = PolicyRows { map: BTreeMap::new(), duplicate: None };
                while let Some((key, pairs)) = access.next_entry::<String, Vec<(f64, f64)>>()? {
                    match rows.map.entry(key) {
                        Entry::Occupied(e) => {
                            rows.duplicate.get_or_insert_with(|| e.key().clone());
                        }
                        Entry::Vacant(e) => {
                            e.insert(pairs);
                        }
                    }
                }
                Ok(rows)
            }
        }
        deserializer.deserialize_map(Rows)
    }
}
