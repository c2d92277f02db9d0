//! Exact expected returns, best responses and NashConv by walking the flat [`GameTree`].

use serde::{Deserialize, Serialize};

use crate::best_response_histories::best_response_by_histories;
use crate::error::{Error, Result};
use crate::game::PlayerId;
use crate::tabular_policy::TabularPolicy;
use crate::tree::{GameTree, InfosetId, NodeKind};

pub(crate) fn check_profile(tree: &GameTree, profile: &[&TabularPolicy]) -> Result<()> {
    if profile.len() != tree.num_players() {
        return Err(Error::Shape(format!(
            "a profile needs one policy per player ({}), got {}",
            tree.num_players(),
            profile.len()
        )));
    }
    if let Some(p) = profile.iter().position(|p| !p.fits(tree)) {
        return Err(Error::Shape(format!("player {p}'s policy was not made for {}", tree.name())));
    }
    Ok(())
}

/// Reach probability of every node: chance times every player's action probabilities,
/// except `excluded`'s (pass `None` for the full reach).
pub(crate) fn reach(
    tree: &GameTree,
    profile: &[&TabularPolicy],
    excluded: Option<usize>,
    out: &mut Vec<f64>,
) {
    reach_trembling(tree, profile, excluded, 0.0, out)
}

/// [`reach`] where every player plays `(1 − tremble)·π + tremble·uniform`.
pub(crate) fn reach_trembling(
    tree: &GameTree,
    profile: &[&TabularPolicy],
    excluded: Option<usize>,
    tremble: f64,
    out: &mut Vec<f64>,
) {
    let n = tree.num_nodes();
    out.clear();
    out.resize(n, 0.0);
    out[0] = 1.0;
    let excluded = excluded.map_or(u32::MAX, |p| p as u32);
    for c in 1..n {
        let par = tree.parent[c] as usize;
        let r = out[par];
        if r == 0.0 {
            continue;
        }
        let factor = match tree.kind[par] {
            NodeKind::Chance => tree.chance_prob[c],
            _ => {
                let q = tree.player[par];
                if q == excluded {
                    1.0
                } else {
                    let i = tree.slot[par] as usize;
                    let p = profile[q as usize].prob(i, tree.action[c] as usize);
                    if tremble == 0.0 {
                        p
                    } else {
                        let k = (tree.legal_start[i + 1] - tree.legal_start[i]) as f64;
                        (1.0 - tremble) * p + tremble / k
                    }
                }
            }
        };
        out[c] = r * factor;
    }
}

/// Each player's expected return when everyone plays `profile`.
///
/// # Errors
///
/// [`Error::Shape`] when the profile does not have one policy of this tree per player.
///
/// # Complexity
///
/// O(nodes).
pub fn expected_returns(tree: &GameTree, profile: &[&TabularPolicy]) -> Result<Vec<f64>> {
    check_profile(tree, profile)?;
    let mut r = Vec::new();
    reach(tree, profile, None, &mut r);
    Ok(expected_from_reach(tree, &r))
}

fn expected_from_reach(tree: &GameTree, reach: &[f64]) -> Vec<f64> {
    let n = tree.num_players();
    let mut values = vec![0.0; n];
    for (t, &node) in tree.terminal_node.iter().enumerate() {
        let r = reach[node as usize];
        if r != 0.0 {
            for (p, v) in values.iter_mut().enumerate() {
                *v += r * tree.utilities[t * n + p];
            }
        }
    }
    values
}

pub use crate::tie::TIE_TOLERANCE;

/// How a best response chooses among actions of equal value.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum TieBreak {
    /// The lowest action (OpenSpiel's rule). At information sets the opponents never reach
    /// every action is worth 0, so this plays the lowest action there.
    #[default]
    LowestAction,
    /// Among tied actions, the best against opponents who tremble: each opponent plays
    /// `(1 − ε)·π + ε·uniform`. This also decides information sets the opponents never
    /// reach, so the response is sensible off the path of play (a trembling-hand refinement,
    /// Selten 1975). The value is still the exact best-response value.
    Trembling(f64),
}

/// Scratch space for best responses, reused across calls.
#[derive(Default)]
struct Workspace {
    reach: Vec<f64>,
    /// Value of each sequence (infoset-action pair), then one empty sequence per player.
    q: Vec<f64>,
    /// The same under trembling opponents (only with [`TieBreak::Trembling`]).
    q_tremble: Vec<f64>,
}

/// Best-response value of `player`; fills `best` (if given) with the best legal action per
/// infoset of `player` (ties go to the lowest action). Trees of imperfect recall take
/// OpenSpiel's rule history by history ([`crate::best_response_histories`]).
fn best_response_into(
    tree: &GameTree,
    player: usize,
    profile: &[&TabularPolicy],
    tie_break: TieBreak,
    ws: &mut Workspace,
    best: Option<&mut Vec<usize>>,
) -> Result<f64> {
    let tremble = match tie_break {
        TieBreak::LowestAction => None,
        TieBreak::Trembling(eps) => Some(eps),
    };
    if !tree.has_perfect_recall() {
        let trembling = tremble.map(|eps| {
            let mut r = Vec::new();
            reach_trembling(tree, profile, Some(player), eps, &mut r);
            r
        });
        reach(tree, profile, Some(player), &mut ws.reach);
        return best_response_by_histories(tree, player, &ws.reach, trembling.as_deref(), best);
    }
    if let Some(eps) = tremble {
        reach_trembling(tree, profile, Some(player), eps, &mut ws.reach);
        accumulate_terminals(tree, player, &ws.reach, &mut ws.q_tremble);
    }
    reach(tree, profile, Some(player), &mut ws.reach);
    accumulate_terminals(tree, player, &ws.reach, &mut ws.q);
    Ok(backward(tree, player, tremble, ws, best))
}

/// The best-response pass over `player`'s infosets once `ws.q` (and `ws.q_tremble` when
/// trembling) hold the terminal sums: the best-response value, and the best action per
/// infoset into `best` when given. Needs perfect recall: an infoset's value goes to its one
/// parent sequence. On such trees it is OpenSpiel's rule (the history-by-history pass gives
/// the same values, up to rounding, and the same actions).
fn backward(
    tree: &GameTree,
    player: usize,
    tremble: Option<f64>,
    ws: &mut Workspace,
    mut best: Option<&mut Vec<usize>>,
) -> f64 {
    let num_seq = tree.num_sequences();
    // Children infosets come after their parents within a player: go backwards.
    for i in tree.infosets_of(PlayerId(player)).rev() {
        let start = tree.legal_start[i] as usize;
        let end = tree.legal_start[i + 1] as usize;
        let v = ws.q[start..end].iter().copied().fold(f64::NEG_INFINITY, f64::max);
        // Values equal up to rounding count as ties, so the choice does not depend on how
        // the opponents' policy was computed.
        let tie = TIE_TOLERANCE * (1.0 + v.abs());
        let mut best_k = (start..end).find(|&k| ws.q[k] >= v - tie).unwrap_or(start);
        if tremble.is_some() {
            for k in best_k + 1..end {
                if ws.q[k] >= v - tie && ws.q_tremble[k] > ws.q_tremble[best_k] {
                    best_k = k;
                }
            }
            let vt = ws.q_tremble[best_k];
            ws.q_tremble[tree.infoset_parent_seq[i] as usize] += vt;
        }
        ws.q[tree.infoset_parent_seq[i] as usize] += v;
        if let Some(b) = best.as_deref_mut() {
            b[i] = tree.legal_actions[best_k].0;
        }
    }
    ws.q[num_seq + player]
}

/// `q[seq] = Σ reach(z)·u_player(z)` over the terminals whose last `player` sequence is `seq`.
fn accumulate_terminals(tree: &GameTree, player: usize, reach: &[f64], q: &mut Vec<f64>) {
    let n = tree.num_players();
    q.clear();
    q.resize(tree.num_sequences() + n, 0.0);
    for (t, &node) in tree.terminal_node.iter().enumerate() {
        let r = reach[node as usize];
        if r != 0.0 {
            q[tree.terminal_parent_seq[t * n + player] as usize] += r * tree.utilities[t * n + player];
        }
    }
}

/// An exact best response of `player` against the others in `profile`, and its value.
///
/// The returned policy is pure at `player`'s infosets (ties broken towards the lowest
/// action, as OpenSpiel does; values within [`TIE_TOLERANCE`] relative count as ties) and
/// copies `profile[player]` elsewhere.
///
/// On a tree of imperfect recall ([`GameTree::has_perfect_recall`]) this is OpenSpiel's
/// best response (`TabularBestResponse`): at each information-state string the action that
/// maximises the sum over its histories of the others' reach times the value below, the
/// deeper strings playing their own choices. That is what OpenSpiel's `nash_conv` reports,
/// though a player who forgets may do better than it (docs/src/games.md, "Imperfect recall").
///
/// # Errors
///
/// [`Error::Shape`] for a profile of the wrong shape; [`Error::Unsupported`] for a player
/// out of range, or on a tree of imperfect recall whose information states of `player` lie
/// below each other in a cycle (OpenSpiel's rule has no answer there).
///
/// # Complexity
///
/// O(nodes + sequences).
pub fn best_response(
    tree: &GameTree,
    player: PlayerId,
    profile: &[&TabularPolicy],
) -> Result<(TabularPolicy, f64)> {
    best_response_with(tree, player, profile, TieBreak::LowestAction)
}

/// [`best_response`] with a choice of [`TieBreak`] rule.
///
/// # Errors
///
/// As [`best_response`]; [`Error::Unsupported`] for a tremble outside (0, 1).
pub fn best_response_with(
    tree: &GameTree,
    player: PlayerId,
    profile: &[&TabularPolicy],
    tie_break: TieBreak,
) -> Result<(TabularPolicy, f64)> {
    let player = player.0;
    check_profile(tree, profile)?;
    if let TieBreak::Trembling(eps) = tie_break
        && !(eps > 0.0 && eps < 1.0)
    {
        return Err(Error::Unsupported(format!("tremble must be in (0, 1), got {eps}")));
    }
    if player >= tree.num_players() {
        return Err(Error::Unsupported(format!("player {player} does not exist")));
    }
    let mut ws = Workspace::default();
    let mut best = vec![0usize; tree.num_infosets()];
    let value = best_response_into(tree, player, profile, tie_break, &mut ws, Some(&mut best))?;
    Ok((with_pure_rows(tree, player, profile[player], &best), value))
}

/// `base` with `player`'s rows replaced by the pure choice `best[infoset]`.
fn with_pure_rows(tree: &GameTree, player: usize, base: &TabularPolicy, best: &[usize]) -> TabularPolicy {
    let mut policy = base.clone();
    for i in tree.infosets_of(PlayerId(player)) {
        let row = policy.row_mut(InfosetId(i));
        row.fill(0.0);
        row[best[i]] = 1.0;
    }
    policy
}

/// An exact best response of `player` against a mixture of profiles: with probability
/// `weights[k]` everyone else plays `profiles[k]`. The others' choices are correlated
/// through `k` (a team that plays one of its policies as a whole), which one averaged
/// profile could not express. The policy is pure at `player`'s infosets (ties to the lowest
/// action) and copies `profiles[0][player]` elsewhere; the value is the mixture's.
///
/// # Errors
///
/// [`Error::Shape`] for no profiles, lengths that differ or a profile of the wrong shape;
/// [`Error::Unsupported`] for a player out of range or weights that are negative or not
/// finite.
///
/// # Complexity
///
/// O(profiles · nodes + sequences).
pub fn best_response_to_mixture(
    tree: &GameTree,
    player: PlayerId,
    profiles: &[Vec<&TabularPolicy>],
    weights: &[f64],
) -> Result<(TabularPolicy, f64)> {
    if profiles.is_empty() || profiles.len() != weights.len() {
        return Err(Error::Shape(format!("{} profiles with {} weights", profiles.len(), weights.len())));
    }
    for profile in profiles {
        check_profile(tree, profile)?;
    }
    if weights.iter().any(|w| !w.is_finite() || *w < 0.0) {
        return Err(Error::Unsupported(format!("mixture weights {weights:?} are not non-negative")));
    }
    let player = player.0;
    if player >= tree.num_players() {
        return Err(Error::Unsupported(format!("player {player} does not exist")));
    }
    let mut ws = Workspace::default();
    // The others' reach is linear in the mixture: add the components' reaches.
    let mut mixed = vec![0.0; tree.num_nodes()];
    for (profile, &w) in profiles.iter().zip(weights) {
        if w == 0.0 {
            continue;
        }
        reach(tree, profile, Some(player), &mut ws.reach);
        for (m, r) in mixed.iter_mut().zip(&ws.reach) {
            *m += w * r;
        }
    }
    let mut best = vec![0usize; tree.num_infosets()];
    let value = if tree.has_perfect_recall() {
        accumulate_terminals(tree, player, &mixed, &mut ws.q);
        backward(tree, player, None, &mut ws, Some(&mut best))
    } else {
        best_response_by_histories(tree, player, &mixed, None, Some(&mut best))?
    };
    Ok((with_pure_rows(tree, player, profiles[0][player], &best), value))
}

/// NashConv with its parts, OpenSpiel's definitions.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NashConvReport {
    /// Σ_p (best-response value − expected return).
    pub nash_conv: f64,
    /// Each player's best-response value against the others.
    pub best_response_values: Vec<f64>,
    /// Each player's expected return under the profile.
    pub expected_returns: Vec<f64>,
    /// `nash_conv / num_players` for 2-player constant-sum games, else `None`.
    pub exploitability: Option<f64>,
}

impl NashConvReport {
    /// Each player's gain from deviating to a best response.
    pub fn improvements(&self) -> Vec<f64> {
        self.best_response_values.iter().zip(&self.expected_returns).map(|(b, v)| b - v).collect()
    }
}

/// NashConv of `profile` and its parts, with [`best_response`]'s values (OpenSpiel's rule on
/// trees of imperfect recall).
///
/// # Errors
///
/// [`Error::Shape`] for a profile of the wrong shape; [`Error::Unsupported`] as
/// [`best_response`].
///
/// # Complexity
///
/// O(num_players · nodes).
pub fn nash_conv_report(tree: &GameTree, profile: &[&TabularPolicy]) -> Result<NashConvReport> {
    check_profile(tree, profile)?;
    let mut ws = Workspace::default();
    reach(tree, profile, None, &mut ws.reach);
    let expected = expected_from_reach(tree, &ws.reach);
    let br: Vec<f64> = (0..tree.num_players())
        .map(|p| best_response_into(tree, p, profile, TieBreak::LowestAction, &mut ws, None))
        .collect::<Result<_>>()?;
    let nash_conv = br.iter().zip(&expected).map(|(b, v)| b - v).sum();
    let exploitability = (tree.num_players() == 2 && tree.utility_sum().is_some()).then(|| nash_conv / 2.0);
    Ok(NashConvReport { nash_conv, best_response_values: br, expected_returns: expected, exploitability })
}

/// NashConv: the sum over players of the gain from a best response; 0 at a Nash equilibrium.
///
/// # Errors
///
/// [`Error::Shape`] for a profile of the wrong shape.
pub fn nash_conv(tree: &GameTree, profile: &[&TabularPolicy]) -> Result<f64> {
    Ok(nash_conv_report(tree, profile)?.nash_conv)
}

/// Exploitability = NashConv / 2, defined only for 2-player constant-sum games.
///
/// # Errors
///
/// [`Error::Unsupported`] for other games; [`Error::Shape`] for a bad profile.
pub fn exploitability(tree: &GameTree, profile: &[&TabularPolicy]) -> Result<f64> {
    nash_conv_report(tree, profile)?.exploitability.ok_or_else(|| {
        Error::Unsupported(format!(
            "exploitability is defined only for 2-player constant-sum games; {} is not one (use nash_conv)",
            tree.name()
        ))
    })
}
