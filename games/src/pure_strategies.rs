//! The normal form of a small extensive-form game: every player's pure strategies (one
//! action per information set) and the exact payoff of every pure profile.

use ndarray::{ArrayD, IxDyn};

use crate::error::{Error, Result};
use crate::exact::expected_returns;
use crate::game::PlayerId;
use crate::normal_form::NormalFormGame;
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, InfosetId};

/// Largest number of pure profiles [`NormalFormGame::from_tree`] will build.
pub const MAX_PURE_PROFILES: usize = 1 << 22;

/// `player`'s pure strategy number `index` as a policy (mixed radix over its infosets,
/// first infoset fastest); other players' rows are uniform.
pub fn pure_strategy(tree: &GameTree, player: PlayerId, mut index: usize) -> TabularPolicy {
    let mut policy = TabularPolicy::uniform(tree);
    for i in tree.infosets_of(player) {
        let legal = tree.legal_actions(InfosetId(i));
        let choice = legal[index % legal.len()];
        index /= legal.len();
        let row = policy.row_mut(InfosetId(i));
        row.fill(0.0);
        row[choice.0] = 1.0;
    }
    policy
}

/// Number of pure strategies of `player` (saturating).
pub fn num_pure_strategies(tree: &GameTree, player: PlayerId) -> usize {
    tree.infosets_of(player)
        .map(|i| tree.legal_actions(InfosetId(i)).len())
        .fold(1usize, |acc, k| acc.saturating_mul(k))
}

impl NormalFormGame {
    /// The (unreduced) normal form of a small game tree: strategy `s` of player `p` is
    /// [`pure_strategy`]`(tree, p, s)`. Kuhn poker gives a 64×64 game.
    ///
    /// # Errors
    ///
    /// As [`NormalFormGame::from_tree_with_limit`] with [`MAX_PURE_PROFILES`].
    ///
    /// # Complexity
    ///
    /// O(profiles · nodes).
    pub fn from_tree(tree: &GameTree) -> Result<Self> {
        Self::from_tree_with_limit(tree, MAX_PURE_PROFILES)
    }

    /// [`NormalFormGame::from_tree`] with at most `max_profiles` pure profiles.
    ///
    /// # Errors
    ///
    /// [`Error::LimitExceeded`] when there would be more than `max_profiles` profiles
    /// (counted without overflow, before anything is allocated).
    ///
    /// # Complexity
    ///
    /// O(profiles · nodes).
    pub fn from_tree_with_limit(tree: &GameTree, max_profiles: usize) -> Result<Self> {
        let n = tree.num_players();
        let counts: Vec<Option<usize>> = (0..n)
            .map(|p| {
                tree.infosets_of(PlayerId(p))
                    .try_fold(1usize, |acc, i| acc.checked_mul(tree.legal_actions(InfosetId(i)).len()))
            })
            .collect();
        let total = counts.iter().try_fold(1usize, |acc, &k| acc.checked_mul(k?));
        let Some(total) = total.filter(|&t| t <= max_profiles) else {
            let size = match total {
                Some(t) => format!("{t} pure profiles"),
                None => "at least 2^64 pure profiles".to_string(),
            };
            return Err(Error::LimitExceeded {
                what: format!("the normal form of {} has {size}", tree.name()),
                limit: max_profiles as u64,
                unit: "pure profiles",
                raise: "`NormalFormGame::from_tree_with_limit`",
            });
        };
        // INVARIANT: every count divides the total, which did not overflow.
        let shape: Vec<usize> = counts.into_iter().map(|k| k.expect("counted")).collect();
        let strategies: Vec<Vec<TabularPolicy>> =
            (0..n).map(|p| (0..shape[p]).map(|s| pure_strategy(tree, PlayerId(p), s)).collect()).collect();
        let mut payoffs: Vec<ArrayD<f64>> = (0..n).map(|_| ArrayD::zeros(IxDyn(&shape))).collect();
        let mut idx = vec![0usize; n];
        for _ in 0..total {
            let profile: Vec<&TabularPolicy> = (0..n).map(|p| &strategies[p][idx[p]]).collect();
            let values = expected_returns(tree, &profile)?;
            for (p, v) in values.into_iter().enumerate() {
                payoffs[p][IxDyn(&idx)] = v;
            }
            for p in (0..n).rev() {
                idx[p] += 1;
                if idx[p] < shape[p] {
                    break;
                }
                idx[p] = 0;
            }
        }
        Ok(NormalFormGame::new(payoffs)?.with_title(tree.name()))
    }
}
