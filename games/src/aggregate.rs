//! Turn a mixture of tabular policies into one behaviour policy by realisation weighting.
//!
//! λ₁π₁ + λ₂π₂ is realisation-equivalent to σ(s,a) ∝ Σ_j λ_j·x_j(s)·π_j(s,a), where x_j(s)
//! is the acting player's own reach probability of s under π_j (Heinrich & Silver 2016,
//! arXiv:1603.01121, Eq. 1).

use crate::error::{Error, Result};
use crate::game::PlayerId;
use crate::policy::TabularPolicy;
use crate::tree::{GameTree, InfosetId};

/// Aggregate `player`'s rows of `policies` mixed with `weights` into `out` (other rows of
/// `out` are left alone). Infosets that no policy reaches get the weighted average of rows.
///
/// # Errors
///
/// [`Error::Shape`] when lengths differ, a policy belongs to another tree, or there are no
/// policies; [`Error::Unsupported`] when weights are negative, non-finite or all zero.
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
    let infosets = tree.infosets_of(player);
    let player = player.0;
    if infosets.is_empty() {
        return Ok(());
    }
    let a = tree.num_actions();
    let seq_lo = tree.legal_start[infosets.start] as usize;
    let seq_hi = tree.legal_start[infosets.end] as usize;
    let empty = tree.num_sequences() + player;
    let mut seq_reach = vec![0.0; seq_hi - seq_lo];
    let mut numer = vec![0.0; infosets.len() * a];
    let mut denom = vec![0.0; infosets.len()];
    let mut fallback = vec![0.0; infosets.len() * a];
    for (pol, &w) in policies.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        for i in infosets.clone() {
            let parent = tree.infoset_parent_seq[i] as usize;
            let x = if parent == empty { 1.0 } else { seq_reach[parent - seq_lo] };
            let li = i - infosets.start;
            denom[li] += w * x;
            let start = tree.legal_start[i] as usize;
            for (k, act) in tree.legal_actions(InfosetId(i)).iter().enumerate() {
                let p = pol.prob(i, act.0);
                seq_reach[start + k - seq_lo] = x * p;
                numer[li * a + act.0] += w * x * p;
                fallback[li * a + act.0] += w * p;
            }
        }
    }
    for i in infosets.clone() {
        let li = i - infosets.start;
        let row_numer = &numer[li * a..(li + 1) * a];
        let numer_sum: f64 = row_numer.iter().sum();
        // Σ_a numer = denom in exact arithmetic; when reach probabilities are so small that
        // the products underflow, the row is normalised by what is left of it instead.
        let (src, total) = if denom[li] > 0.0 && numer_sum >= 0.5 * denom[li] {
            (row_numer, denom[li])
        } else if numer_sum > 0.0 {
            (row_numer, numer_sum)
        } else {
            let f = &fallback[li * a..(li + 1) * a];
            (f, f.iter().sum())
        };
        let row = out.row_mut(InfosetId(i));
        for (dst, s) in row.iter_mut().zip(src) {
            *dst = s / total;
        }
    }
    Ok(())
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
