//! Turn a mixture of tabular policies into one behaviour policy by realisation weighting.
//!
//! λ₁π₁ + λ₂π₂ is realisation-equivalent to σ(s,a) ∝ Σ_j λ_j·x_j(s)·π_j(s,a), where x_j(s)
//! is the acting player's own reach probability of s under π_j (Heinrich & Silver 2016,
//! arXiv:1603.01121, Eq. 1).

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::game::PlayerId;
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, InfosetId};

/// What needs perfect recall here, for [`Error::ImperfectRecall`].
const AGGREGATION: &str = "mixing policies into one behaviour policy (realisation weighting)";

/// Aggregate `player`'s rows of `policies` mixed with `weights` into `out` (other rows of
/// `out` are left alone). Infosets that no policy reaches get the weighted average of rows.
///
/// # Errors
///
/// [`Error::Shape`] when lengths differ, a policy belongs to another tree, or there are no
/// policies; [`Error::Unsupported`] when weights are negative, non-finite or all zero;
/// [`Error::ImperfectRecall`] on a tree without perfect recall, where a player's own reach
/// differs between the histories of an information state and the formula has no one `x(s)`.
///
/// # Complexity
///
/// O(policies · sequences of `player`).
pub fn aggregate_into(
    tree: &GameTree,
    player: PlayerId,
    policies: &[&TabularPolicy],
    weights: &[f64],
    out: &mut TabularPolicy,
) -> Result<()> {
    if policies.is_empty() || policies.len() != weights.len() {
        return Err(Error::Shape(format!("{} policies with {} weights", policies.len(), weights.len())));
    }
    if policies.iter().any(|p| !p.fits(tree)) || !out.fits(tree) {
        return Err(Error::Shape(format!("a policy was not made for {}", tree.name())));
    }
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) || weights.iter().sum::<f64>() <= 0.0 {
        return Err(Error::Unsupported(format!("mixture weights {weights:?} are not a distribution")));
    }
    tree.require_perfect_recall(AGGREGATION)?;
    // The sums over the rows each policy reaches, then the fallback of the rows none
    // reaches from all the policies: PSRO's members are mostly pure strategies, which reach
    // a few of their player's rows. The same sums, in the same order, as `MixtureSum`'s.
    let mut sums = MixtureSum::new(tree);
    for (pol, &w) in policies.iter().zip(weights) {
        sums.add_rows(tree, player, pol, w, false);
    }
    let a = tree.num_actions();
    for i in tree.infosets_of(player) {
        if sums.row_total(i, a).is_none() {
            let fallback = &mut sums.fallback[i * a..(i + 1) * a];
            for (pol, &w) in policies.iter().zip(weights) {
                if w != 0.0 {
                    for act in tree.legal_actions(InfosetId(i)) {
                        fallback[act.0] += w * pol.prob(i, act.0);
                    }
                }
            }
        }
    }
    sums.write_rows(tree, player, out);
    Ok(())
}

/// A running realisation-weighted sum of policies (the numerators and denominators of
/// [`aggregate`]'s formula), for mixtures that grow one policy at a time: adding a policy
/// costs O(sequences) however many came before, where [`aggregate`] over `k` policies costs
/// O(k · sequences). [`MixtureSum::policy`] is the mixture as one behaviour policy; adding
/// the same policies with the same weights in the same order gives [`aggregate`]'s answer
/// bit for bit.
///
/// # Examples
///
/// ```
/// use metagame_games::{aggregate, registry, GameTree, MixtureSum, TabularPolicy};
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let (u, z) = (TabularPolicy::uniform(&tree), TabularPolicy::first_action(&tree));
/// let mut sum = MixtureSum::new(&tree);
/// sum.add(&tree, &u, 1.0)?;
/// sum.add(&tree, &z, 1.0)?;
/// assert_eq!(sum.policy(&tree)?, aggregate(&tree, &[&u, &z], &[1.0, 1.0])?);
/// # Ok::<(), metagame_games::Error>(())
/// ```
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(try_from = "MixtureSumState")]
pub struct MixtureSum {
    game: String,
    /// `[infoset · actions + action]`: Σ_j w_j·x_j(s)·π_j(s, a).
    numer: Vec<f64>,
    /// `[infoset]`: Σ_j w_j·x_j(s).
    denom: Vec<f64>,
    /// `[infoset · actions + action]`: Σ_j w_j·π_j(s, a), for infosets no policy reaches.
    fallback: Vec<f64>,
    total_weight: f64,
    /// Scratch: own reach of every sequence under the policy being added (not saved; sized
    /// by [`MixtureSum::add`]).
    #[serde(skip)]
    seq_reach: Vec<f64>,
}

/// Equal sums: the same game, numerators, denominators, fallbacks and total weight (the
/// scratch is not part of the sum).
impl PartialEq for MixtureSum {
    fn eq(&self, other: &Self) -> bool {
        self.game == other.game
            && self.numer == other.numer
            && self.denom == other.denom
            && self.fallback == other.fallback
            && self.total_weight == other.total_weight
    }
}

/// The unchecked serde form of [`MixtureSum`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MixtureSumState {
    game: String,
    numer: Vec<f64>,
    denom: Vec<f64>,
    fallback: Vec<f64>,
    total_weight: f64,
}

impl TryFrom<MixtureSumState> for MixtureSum {
    type Error = Error;
    fn try_from(s: MixtureSumState) -> Result<Self> {
        let cells = s.numer.len();
        // `infosets × actions` numerators and fallbacks for `infosets` denominators.
        if s.fallback.len() != cells
            || !cells.is_multiple_of(s.denom.len())
            || (cells == 0) != s.denom.is_empty()
        {
            return Err(Error::Shape(format!(
                "a mixture sum with {cells} numerators, {} fallbacks and {} denominators",
                s.fallback.len(),
                s.denom.len()
            )));
        }
        let sums = s.numer.iter().chain(&s.denom).chain(&s.fallback).chain([&s.total_weight]);
        if sums.copied().any(|x| !x.is_finite() || x < 0.0) {
            return Err(Error::Shape("a mixture sum's sums must be finite and non-negative".into()));
        }
        let MixtureSumState { game, numer, denom, fallback, total_weight } = s;
        Ok(MixtureSum { game, numer, denom, fallback, total_weight, seq_reach: Vec::new() })
    }
}

impl MixtureSum {
    /// The empty sum for `tree`.
    pub fn new(tree: &GameTree) -> Self {
        let cells = tree.num_infosets() * tree.num_actions();
        Self {
            game: tree.name().to_string(),
            numer: vec![0.0; cells],
            denom: vec![0.0; tree.num_infosets()],
            fallback: vec![0.0; cells],
            total_weight: 0.0,
            seq_reach: vec![0.0; tree.num_sequences()],
        }
    }

    /// Add `policy` with weight `weight` (every player's rows).
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for a policy or a sum of another tree; [`Error::Unsupported`] for a
    /// negative or non-finite weight; [`Error::ImperfectRecall`] as [`aggregate_into`].
    pub fn add(&mut self, tree: &GameTree, policy: &TabularPolicy, weight: f64) -> Result<()> {
        if !policy.fits(tree) || !self.fits(tree) {
            return Err(Error::Shape(format!("a policy was not made for {}", tree.name())));
        }
        if !weight.is_finite() || weight < 0.0 {
            return Err(Error::Unsupported(format!("mixture weight {weight} is not a probability mass")));
        }
        tree.require_perfect_recall(AGGREGATION)?;
        // A loaded sum comes without its scratch.
        self.seq_reach.resize(tree.num_sequences(), 0.0);
        for p in 0..tree.num_players() {
            self.add_rows(tree, PlayerId(p), policy, weight, true);
        }
        self.total_weight += weight;
        Ok(())
    }

    /// The mixture as one behaviour policy.
    ///
    /// # Errors
    ///
    /// [`Error::Shape`] for a sum of another tree; [`Error::Unsupported`] while nothing of
    /// positive weight has been added.
    pub fn policy(&self, tree: &GameTree) -> Result<TabularPolicy> {
        if !self.fits(tree) {
            return Err(Error::Shape(format!("a mixture sum was not made for {}", tree.name())));
        }
        if self.total_weight <= 0.0 {
            return Err(Error::Unsupported("an empty mixture has no policy".into()));
        }
        let mut out = TabularPolicy::zeros(tree);
        for p in 0..tree.num_players() {
            self.write_rows(tree, PlayerId(p), &mut out);
        }
        Ok(out)
    }

    /// Whether this is a sum for `tree` (its game and shapes).
    pub fn fits(&self, tree: &GameTree) -> bool {
        self.game == tree.name()
            && self.denom.len() == tree.num_infosets()
            && self.numer.len() == tree.num_infosets() * tree.num_actions()
    }

    /// Add `player`'s rows of `policy` with weight `w` (the caller checked the shapes); with
    /// `fallback`, to the fallback too. Without it the rows `policy` does not reach (whose
    /// terms are zeros) are skipped: [`aggregate_into`] sums the fallback of the rows that
    /// need it afterwards.
    fn add_rows(
        &mut self,
        tree: &GameTree,
        player: PlayerId,
        policy: &TabularPolicy,
        w: f64,
        fallback: bool,
    ) {
        if w == 0.0 {
            return;
        }
        let a = tree.num_actions();
        let empty = tree.num_sequences() + player.0;
        for i in tree.infosets_of(player) {
            let parent = tree.infoset_parent_seq[i] as usize;
            let x = if parent == empty { 1.0 } else { self.seq_reach[parent] };
            let start = tree.legal_start[i] as usize;
            let legal = tree.legal_actions(InfosetId(i));
            if x == 0.0 && !fallback {
                self.seq_reach[start..start + legal.len()].fill(0.0);
                continue;
            }
            self.denom[i] += w * x;
            for (k, act) in legal.iter().enumerate() {
                let p = policy.prob(i, act.0);
                self.seq_reach[start + k] = x * p;
                self.numer[i * a + act.0] += w * x * p;
                if fallback {
                    self.fallback[i * a + act.0] += w * p;
                }
            }
        }
    }

    /// What row `i`'s numerators are divided by, or `None` when the row is the fallback's.
    /// Σ_a numer = denom in exact arithmetic; when reach probabilities are so small that the
    /// products underflow, the row is normalised by what is left of it instead.
    fn row_total(&self, i: usize, a: usize) -> Option<f64> {
        let numer_sum: f64 = self.numer[i * a..(i + 1) * a].iter().sum();
        if self.denom[i] > 0.0 && numer_sum >= 0.5 * self.denom[i] {
            Some(self.denom[i])
        } else if numer_sum > 0.0 {
            Some(numer_sum)
        } else {
            None
        }
    }

    /// Write `player`'s rows of the normalised mixture into `out`.
    fn write_rows(&self, tree: &GameTree, player: PlayerId, out: &mut TabularPolicy) {
        let a = tree.num_actions();
        for i in tree.infosets_of(player) {
            let (src, total) = match self.row_total(i, a) {
                Some(total) => (&self.numer[i * a..(i + 1) * a], total),
                None => {
                    let f = &self.fallback[i * a..(i + 1) * a];
                    (f, f.iter().sum())
                }
            };
            let row = out.row_mut(InfosetId(i));
            for (dst, s) in row.iter_mut().zip(src) {
                *dst = s / total;
            }
        }
    }
}

/// One behaviour policy realisation-equivalent to playing `policies[j]` with probability
/// `weights[j]` (every player's rows are mixed with the same weights).
///
/// # Errors
///
/// As [`aggregate_into`].
///
/// # Examples
///
/// ```
/// use metagame_games::{aggregate, registry, GameTree, TabularPolicy};
/// let tree = GameTree::build(&registry::load("kuhn_poker")?)?;
/// let u = TabularPolicy::uniform(&tree);
/// let mixed = aggregate(&tree, &[&u, &u], &[0.3, 0.7])?;
/// let diff = mixed.as_slice().iter().zip(u.as_slice()).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
/// assert!(diff < 1e-15);
/// # Ok::<(), metagame_games::Error>(())
/// ```
pub fn aggregate(tree: &GameTree, policies: &[&TabularPolicy], weights: &[f64]) -> Result<TabularPolicy> {
    let mut out = TabularPolicy::zeros(tree);
    for p in 0..tree.num_players() {
        aggregate_into(tree, PlayerId(p), policies, weights, &mut out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    /// A sum saved and loaded between two additions ends as the unsaved one, bit for bit; a
    /// malformed saved sum is refused.
    #[test]
    fn a_saved_sum_goes_on_bit_for_bit() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let (u, z) = (TabularPolicy::uniform(&tree), TabularPolicy::first_action(&tree));
        let mut sum = MixtureSum::new(&tree);
        sum.add(&tree, &u, 1.0).unwrap();
        let json = serde_json::to_string(&sum).unwrap();
        let mut loaded: MixtureSum = serde_json::from_str(&json).unwrap();
        assert!(loaded.fits(&tree) && loaded == sum);
        sum.add(&tree, &z, 1.0).unwrap();
        loaded.add(&tree, &z, 1.0).unwrap();
        let bits = |p: TabularPolicy| p.as_slice().iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(loaded.policy(&tree).unwrap()), bits(sum.policy(&tree).unwrap()));
        let short = json.replacen("\"denom\":[", "\"denom\":[1.0,", 1);
        assert!(serde_json::from_str::<MixtureSum>(&short).is_err());
        let negative = json.replacen("\"total_weight\":1.0", "\"total_weight\":-1.0", 1);
        assert!(serde_json::from_str::<MixtureSum>(&negative).is_err());
    }

    /// `aggregate_into`, which sums the rows each policy reaches and the fallback of the
    /// rows none reaches, gives `MixtureSum`'s policy bit for bit: pure best responses (which
    /// leave rows unreached), a mixed policy, zero weights, and rows no policy reaches.
    #[test]
    fn the_reached_rows_give_the_full_sums_bits() {
        let bits = |p: &[f64]| p.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for name in ["kuhn_poker", "leduc_poker"] {
            let tree = GameTree::build(&registry::load(name).unwrap()).unwrap();
            let u = TabularPolicy::uniform(&tree);
            let mut k = 0u64;
            let mixed = TabularPolicy::from_fn(&tree, |id| {
                let w: Vec<f64> = (0..tree.legal_actions(id).len())
                    .map(|_| {
                        k += 1;
                        0.05 + crate::philox::uniform_f64(
                            crate::philox::philox4x32_10([k as u32, 7, 0, 0], [9, 9])[0],
                        )
                    })
                    .collect();
                let s: f64 = w.iter().sum();
                w.iter().map(|x| x / s).collect()
            })
            .unwrap();
            let first = TabularPolicy::first_action(&tree);
            let br0 = crate::best_response(&tree, PlayerId(0), &[&mixed, &mixed]).unwrap().0;
            let br1 = crate::best_response(&tree, PlayerId(1), &[&first, &first]).unwrap().0;
            let policies = [&br0, &first, &mixed, &br1, &u];
            for weights in [[0.3, 0.2, 0.1, 0.15, 0.25], [0.5, 0.5, 0.0, 0.0, 0.0], [0.0, 0.7, 0.0, 0.3, 0.0]]
            {
                let mut sum = MixtureSum::new(&tree);
                for (p, &w) in policies.iter().zip(&weights) {
                    sum.add(&tree, p, w).unwrap();
                }
                let want = sum.policy(&tree).unwrap();
                let mut got = TabularPolicy::uniform(&tree);
                for player in 0..2 {
                    aggregate_into(&tree, PlayerId(player), &policies, &weights, &mut got).unwrap();
                }
                assert_eq!(bits(got.as_slice()), bits(want.as_slice()), "{name} {weights:?}");
            }
        }
    }

    /// Realisation weights need one own reach per information state: trees of imperfect
    /// recall are refused with a typed error.
    #[test]
    fn mixtures_need_perfect_recall() {
        let tree = GameTree::build(&registry::load("goofspiel(num_cards=4)").unwrap()).unwrap();
        let u = TabularPolicy::uniform(&tree);
        let err = aggregate(&tree, &[&u, &u], &[0.5, 0.5]).unwrap_err();
        assert!(matches!(err, Error::ImperfectRecall { num_infosets: 1056, .. }), "{err}");
        assert!(err.to_string().starts_with("mixing policies into one behaviour policy"), "{err}");
        let err = MixtureSum::new(&tree).add(&tree, &u, 1.0).unwrap_err();
        assert!(matches!(err, Error::ImperfectRecall { .. }), "{err}");
        let err = crate::RealizationPlan::of(&tree, &u, PlayerId(0)).unwrap_err();
        assert!(matches!(err, Error::ImperfectRecall { what: "a realisation plan", .. }), "{err}");
    }
}
