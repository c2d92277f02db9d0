//! How big a game's tree is, found without building it: exact where the game counts its
//! histories or a walk within the limit can, estimated by random probes where not.

use std::time::{Duration, Instant};

use serde::Serialize;

use crate::game::{Game, State, Turn};
use crate::philox::EpisodeStream;

/// The number of histories (nodes, chance and terminal included) of a game's tree.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum TreeSize {
    /// Counted exactly.
    Exact {
        /// The number of histories.
        histories: u64,
    },
    /// Estimated by Knuth's random probes (Knuth 1975, "Estimating the efficiency of
    /// backtrack programs", Math. Comp. 29): each probe walks from the root to a terminal,
    /// choosing children uniformly, and counts `1 + b₁ + b₁b₂ + …` for the branching factors
    /// `bᵢ` on its way; the mean over probes is an unbiased estimate of the size.
    Estimate {
        /// The mean over the probes.
        histories: f64,
        /// The standard error of that mean, relative to it.
        relative_error: f64,
        /// The probes walked.
        probes: u64,
        /// A count known exactly to be exceeded (0 when none): the game's own count stops
        /// once it passes the limit.
        more_than: u64,
    },
}

impl TreeSize {
    /// The number of histories, exact or estimated.
    pub fn histories(&self) -> f64 {
        match *self {
            TreeSize::Exact { histories } => histories as f64,
            TreeSize::Estimate { histories, .. } => histories,
        }
    }

    /// Whether a tree of this size fits within `max_nodes` (an estimate fits when even its
    /// upper end, three standard errors up, does).
    pub fn fits(&self, max_nodes: u64) -> bool {
        match *self {
            TreeSize::Exact { histories } => histories <= max_nodes,
            TreeSize::Estimate { histories, relative_error, more_than, .. } => {
                more_than < max_nodes && histories * (1.0 + 3.0 * relative_error) <= max_nodes as f64
            }
        }
    }
}

impl std::fmt::Display for TreeSize {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            TreeSize::Exact { histories } => write!(f, "{histories} histories"),
            TreeSize::Estimate { histories, relative_error, probes, more_than } => {
                if more_than > 0 {
                    write!(f, "more than {more_than} histories (counted), ")?;
                }
                // Knuth's estimator is unbiased but heavy-tailed on unbalanced trees: the rare
                // deep probes that carry most of the mean are often missed, so it errs low.
                write!(
                    f,
                    "about {histories:.2e} (estimated from {probes} random probes, ±{:.1}%, likely low on unbalanced trees)",
                    100.0 * relative_error
                )
            }
        }
    }
}

/// The size of `game`'s tree without building it: the game's own count
/// ([`Game::count_histories`]) where it has one and the count is within `max_nodes`;
/// otherwise 20 000 random probes (fewer once `budget` has passed), and, where those put the
/// tree within twice `max_nodes`, an exact count by a depth-first walk that stops past
/// `max_nodes`.
///
/// # Complexity
///
/// O(`budget`), plus a walk of at most `max_nodes + 1` histories when the estimate says the
/// tree may fit; memory O(depth).
pub fn tree_size<G: Game>(game: &G, max_nodes: u64, budget: Duration) -> TreeSize {
    let size = quick_tree_size(game, max_nodes, budget);
    if let TreeSize::Estimate { histories, more_than: 0, .. } = size
        && histories <= 2.0 * max_nodes as f64
    {
        let count = count_by_walk(game, max_nodes);
        if count <= max_nodes {
            return TreeSize::Exact { histories: count };
        }
    }
    size
}

/// [`tree_size`] without the walk: the game's own count where it has one within
/// `max_nodes`, else the estimate of random probes for about `budget` (which says so when the
/// game's count passed `max_nodes`).
///
/// # Complexity
///
/// O(`budget`), or the game's count.
pub fn quick_tree_size<G: Game>(game: &G, max_nodes: u64, budget: Duration) -> TreeSize {
    let counted = game.count_histories(max_nodes);
    if let Some(count) = counted
        && count <= max_nodes
    {
        return TreeSize::Exact { histories: count };
    }
    let mut estimate = knuth_estimate(game, budget);
    if let (Some(_), TreeSize::Estimate { more_than, .. }) = (counted, &mut estimate) {
        *more_than = max_nodes;
    }
    estimate
}

/// Probes an estimate walks: the same game gives the same estimate, unless `budget` runs out
/// first (deep games with costly states).
pub const PROBES: u64 = 20_000;

/// Knuth's estimator over [`PROBES`] probes (fewer, at least 64, once `budget` has passed),
/// seeded so that the same game gives the same estimate.
fn knuth_estimate<G: Game>(game: &G, budget: Duration) -> TreeSize {
    const MIN_PROBES: u64 = 64;
    let started = Instant::now();
    let (mut sum, mut sum_sq, mut probes) = (0.0f64, 0.0f64, 0u64);
    while probes < MIN_PROBES || (probes < PROBES && started.elapsed() < budget) {
        let mut stream = EpisodeStream::new(0x7265_6553_697A_6553, 0, probes);
        let mut state = game.new_initial_state();
        let (mut weight, mut size) = (1.0f64, 1.0f64);
        loop {
            let branching = match state.turn() {
                Turn::Terminal => break,
                Turn::Chance => {
                    let outcomes = state.chance_outcomes();
                    let k = (stream.next_uniform() * outcomes.len() as f64) as usize;
                    state.apply_action(outcomes[k.min(outcomes.len() - 1)].0);
                    outcomes.len()
                }
                Turn::Player(_) => {
                    let legal = state.legal_actions();
                    let k = (stream.next_uniform() * legal.len() as f64) as usize;
                    state.apply_action(legal[k.min(legal.len() - 1)]);
                    legal.len()
                }
            };
            weight *= branching as f64;
            size += weight;
        }
        sum += size;
        sum_sq += size * size;
        probes += 1;
    }
    let n = probes as f64;
    let mean = sum / n;
    let variance = ((sum_sq - sum * sum / n) / (n - 1.0)).max(0.0);
    TreeSize::Estimate { histories: mean, relative_error: (variance / n).sqrt() / mean, probes, more_than: 0 }
}

/// Histories counted by a depth-first walk, stopping once the count passes `at_most`.
fn count_by_walk<G: Game>(game: &G, at_most: u64) -> u64 {
    let mut count = 0u64;
    let mut stack = vec![game.new_initial_state()];
    while let Some(state) = stack.pop() {
        count += 1;
        if count > at_most {
            break;
        }
        let children = match state.turn() {
            Turn::Terminal => continue,
            Turn::Chance => state.chance_outcomes().into_iter().map(|o| o.0).collect(),
            Turn::Player(_) => state.legal_actions(),
        };
        for a in children {
            let mut child = state.clone();
            child.apply_action(a);
            stack.push(child);
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GameTree, registry};

    #[test]
    fn small_trees_are_counted_exactly() {
        for spec in ["kuhn_poker", "leduc_poker", "tic_tac_toe", "matrix_rps", "liars_dice(dice_sides=3)"] {
            let game = registry::load(spec).unwrap();
            let built = GameTree::build(&game).unwrap().num_nodes() as u64;
            let size = tree_size(&game, 10_000_000, Duration::from_millis(50));
            assert_eq!(size, TreeSize::Exact { histories: built }, "{spec}");
            assert!(size.fits(built) && !size.fits(built - 1));
        }
    }

    /// Knuth's estimate of trees whose size is known: within a few of its standard errors.
    #[test]
    fn estimates_bracket_known_sizes() {
        for (spec, nodes) in
            [("tic_tac_toe", 549_946.0), ("leduc_poker", 9457.0), ("kuhn_poker(players=7)", 36_196_001.0)]
        {
            let game = registry::load(spec).unwrap();
            let TreeSize::Estimate { histories, relative_error, probes, .. } =
                knuth_estimate(&game, Duration::from_secs(5))
            else {
                panic!("an estimate")
            };
            assert!(probes >= 64);
            let z = (histories - nodes).abs() / (histories * relative_error);
            assert!(z < 4.0, "{spec}: {histories} ± {relative_error}, known {nodes}");
        }
        // Past the limit: an estimate, not a walk.
        let big = registry::load("kuhn_poker(players=7)").unwrap();
        let size = tree_size(&big, 10_000_000, Duration::from_millis(50));
        assert!(matches!(size, TreeSize::Estimate { .. }) && !size.fits(10_000_000), "{size}");
    }
}
