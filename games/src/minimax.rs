//! The minimax policy of a game of perfect information: backward induction on its tree.
//!
//! At every decision the acting player takes the action whose subgame value is best for it
//! (ties to the lowest action, as OpenSpiel's minimax search breaks them); chance nodes are
//! worth their expectation. In a two-player zero-sum game this is full-depth minimax, the
//! opponent the Minimax Exploiter paper trains against on tic-tac-toe; in any game it is a
//! subgame-perfect equilibrium.

use crate::error::{Error, Result};
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, InfosetId, NodeKind};

/// The minimax policy of `tree` (pure at every information state).
///
/// # Errors
///
/// [`Error::Unsupported`] for a game of imperfect information (an information state holding
/// more than one history), where backward induction does not apply.
///
/// # Complexity
///
/// O(nodes · players).
///
/// # Examples
///
/// ```
/// use metagame_games::{GameTree, minimax_policy, nash_conv, registry};
/// let tree = GameTree::build(&registry::load("tic_tac_toe")?)?;
/// let minimax = minimax_policy(&tree)?;
/// // Both players playing minimax is an equilibrium: no one gains by deviating.
/// assert!(nash_conv(&tree, &[&minimax, &minimax])?.abs() < 1e-12);
/// # Ok::<(), metagame_games::Error>(())
/// ```
pub fn minimax_policy(tree: &GameTree) -> Result<TabularPolicy> {
    let n = tree.num_players();
    let mut histories = vec![0u32; tree.num_infosets()];
    for node in 0..tree.num_nodes() {
        if tree.node_kind(node) == NodeKind::Decision {
            let i = tree.node_infoset(node).0;
            histories[i] += 1;
            if histories[i] > 1 {
                return Err(Error::Unsupported(format!(
                    "minimax needs a game of perfect information; in {} the information state {:?} holds several histories",
                    tree.name(),
                    tree.infoset_key(InfosetId(i))
                )));
            }
        }
    }
    // Children come after their parent, so one pass from the last node up sees every
    // subgame's value before its root's.
    let mut value = vec![0.0; tree.num_nodes() * n];
    let mut policy = TabularPolicy::uniform(tree);
    for node in (0..tree.num_nodes()).rev() {
        let (here, below) = value.split_at_mut((node + 1) * n);
        let out = &mut here[node * n..];
        match tree.node_kind(node) {
            NodeKind::Terminal => out.copy_from_slice(tree.terminal_utilities(node)),
            NodeKind::Chance => {
                out.fill(0.0);
                for child in tree.children(node) {
                    let v = &below[(child - node - 1) * n..(child - node) * n];
                    let p = tree.chance_prob(child);
                    out.iter_mut().zip(v).for_each(|(o, x)| *o += p * x);
                }
            }
            NodeKind::Decision => {
                let player = tree.node_player(node);
                let mut best = tree.children(node).start;
                for child in tree.children(node) {
                    let of = |c: usize| below[(c - node - 1) * n + player];
                    if of(child) > of(best) {
                        best = child;
                    }
                }
                out.copy_from_slice(&below[(best - node - 1) * n..(best - node) * n]);
                let row = policy.row_mut(tree.node_infoset(node));
                row.fill(0.0);
                row[tree.node_action(best).0] = 1.0;
            }
        }
    }
    Ok(policy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry;

    #[test]
    fn minimax_of_an_imperfect_information_game_is_refused() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let err = minimax_policy(&tree).unwrap_err().to_string();
        assert!(err.contains("perfect information"), "{err}");
    }
}
