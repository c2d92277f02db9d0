//! The conformance check every game passes: OpenSpiel's written contracts, checked on
//! random playouts and on the whole tree.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, PlayerId, State, Turn};
use crate::registry;
use crate::tree::GameTree;

/// What [`check_game`] looked at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConformanceReport {
    /// Random playouts run.
    pub playouts: usize,
    /// States visited in those playouts.
    pub states_checked: usize,
    /// Nodes in the full tree; `None` when only playouts were checked
    /// ([`check_playouts`], or a game registered with [`Conformance::PlayoutsOnly`](registry::Conformance::PlayoutsOnly)).
    pub tree_nodes: Option<usize>,
}

/// SplitMix64: a tiny deterministic generator, enough to pick random playouts.
struct SplitMix(u64);

impl SplitMix {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

fn fail(game: &str, what: String) -> Error {
    Error::Unsupported(format!("{game} breaks the game contract: {what}"))
}

/// Check `game` against the contracts: random playouts terminate; legal actions are
/// ascending, unique and non-empty at decision nodes; chance probabilities are positive and
/// sum to 1; replaying a history gives an equal state; returns sum to the declared constant;
/// information states determine the acting player and legal actions (the tree build checks
/// this together with perfect recall).
///
/// # Errors
///
/// [`Error::Unsupported`] describing the first broken contract.
pub fn check_game<G: Game>(game: &G, playouts: usize, seed: u64) -> Result<ConformanceReport> {
    let report = check_playouts(game, playouts, seed)?;
    let tree = GameTree::build(game)?;
    Ok(ConformanceReport { tree_nodes: Some(tree.num_nodes()), ..report })
}

/// The random-playout half of [`check_game`], without building the tree: for games too large
/// to enumerate.
///
/// # Errors
///
/// [`Error::Unsupported`] describing the first broken contract.
pub fn check_playouts<G: Game>(game: &G, playouts: usize, seed: u64) -> Result<ConformanceReport> {
    let name = game.name();
    let n = game.num_players();
    let mut rng = SplitMix(seed);
    let mut states_checked = 0;
    let mut seen_infostates: HashMap<String, (usize, Vec<ActionId>)> = HashMap::new();
    for _ in 0..playouts {
        let mut state = game.new_initial_state();
        let mut steps = 0;
        loop {
            states_checked += 1;
            steps += 1;
            if steps > 100_000 {
                return Err(fail(&name, "a random playout did not terminate in 100000 steps".into()));
            }
            let replayed = replay(game, state.history());
            if !same_state(&replayed, &state, n) {
                return Err(fail(
                    &name,
                    format!("replaying history {:?} gives a different state", state.history()),
                ));
            }
            match state.turn() {
                Turn::Terminal => {
                    let r = state.returns();
                    if r.len() != n || r.iter().any(|x| !x.is_finite()) {
                        return Err(fail(&name, format!("returns {r:?}")));
                    }
                    if let Some(c) = game.utility_sum() {
                        let s: f64 = r.iter().sum();
                        if (s - c).abs() > 1e-9 {
                            return Err(fail(&name, format!("returns sum to {s}, declared {c}")));
                        }
                    }
                    if !state.legal_actions().is_empty() {
                        return Err(fail(&name, "legal actions at a terminal".into()));
                    }
                    break;
                }
                Turn::Chance => {
                    let outcomes = state.chance_outcomes();
                    let total: f64 = outcomes.iter().map(|o| o.1).sum();
                    if outcomes.is_empty()
                        || (total - 1.0).abs() > 1e-12
                        || outcomes.iter().any(|o| o.1 <= 0.0)
                    {
                        return Err(fail(&name, format!("chance outcomes {outcomes:?}")));
                    }
                    if !outcomes.windows(2).all(|w| w[0].0 < w[1].0) {
                        return Err(fail(&name, "chance outcomes not ascending".into()));
                    }
                    let a = outcomes[rng.below(outcomes.len())].0;
                    state.apply_action(a);
                }
                Turn::Player(PlayerId(p)) => {
                    if p >= n {
                        return Err(fail(&name, format!("player {p} of {n} to move")));
                    }
                    let legal = state.legal_actions();
                    if legal.is_empty() || !legal.windows(2).all(|w| w[0] < w[1]) {
                        return Err(fail(
                            &name,
                            format!("legal actions {legal:?} are empty or not ascending"),
                        ));
                    }
                    if legal.iter().any(|a| a.0 >= game.num_distinct_actions()) {
                        return Err(fail(&name, format!("legal action out of range in {legal:?}")));
                    }
                    let key = state.information_state_string(PlayerId(p));
                    let entry = seen_infostates.entry(key.clone()).or_insert((p, legal.clone()));
                    if entry.0 != p || entry.1 != legal {
                        return Err(fail(
                            &name,
                            format!("information state {key:?} has different players or actions"),
                        ));
                    }
                    let a = legal[rng.below(legal.len())];
                    state.apply_action(a);
                }
            }
        }
    }
    Ok(ConformanceReport { playouts, states_checked, tree_nodes: None })
}

/// Run [`check_game`] on every registered game, with its default parameters and with each
/// example parameter set it lists ([`registry::GameInfo::specs`]), so that no game skips the
/// check (as OpenSpiel's `python/tests/api_test.py` runs over its registry). Games
/// registered with [`Conformance::PlayoutsOnly`](registry::Conformance::PlayoutsOnly) get [`check_playouts`], and so do the
/// defaults of those registered with [`Conformance::ExampleTrees`](registry::Conformance::ExampleTrees). Each game's
/// [`Game::name`] must also load back a game of the same name.
///
/// Returns the game strings checked with their reports, in registration order.
///
/// # Errors
///
/// The first failure: the game string does not load, or [`check_game`]'s error.
///
/// # Complexity
///
/// Builds every listed tree, the largest `leduc_poker(players=3)` (1.8 million nodes): seconds
/// in a release build, a minute or more in a debug one.
pub fn check_registry(playouts: usize, seed: u64) -> Result<Vec<(String, ConformanceReport)>> {
    let mut checked = Vec::new();
    for info in registry::games() {
        for (k, spec) in info.specs().enumerate() {
            let game = registry::load(&spec)?;
            if registry::load(&game.name())?.name() != game.name() {
                return Err(fail(&spec, format!("its name {:?} loads a different game", game.name())));
            }
            let report = if info.conformance.builds_tree(k == 0) {
                check_game(&game, playouts, seed)?
            } else {
                check_playouts(&game, playouts, seed)?
            };
            checked.push((spec, report));
        }
    }
    Ok(checked)
}

fn replay<G: Game>(game: &G, history: &[ActionId]) -> G::State {
    let mut s = game.new_initial_state();
    for &a in history {
        s.apply_action(a);
    }
    s
}

fn same_state<S: State>(a: &S, b: &S, n: usize) -> bool {
    a.turn() == b.turn()
        && a.history() == b.history()
        && a.legal_actions() == b.legal_actions()
        && a.chance_outcomes() == b.chance_outcomes()
        && a.returns() == b.returns()
        && (0..n).all(|p| a.information_state_string(PlayerId(p)) == b.information_state_string(PlayerId(p)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The registry-wide run is the integration test's (`tests/it/games_known_values.rs`, in
    /// release); here every registered game's defaults and examples get playouts, and the
    /// whole check runs on the small ones.
    #[test]
    fn every_registered_spec_passes_the_playouts_and_small_trees_pass_the_whole_check() {
        for info in registry::games() {
            for (k, spec) in info.specs().enumerate() {
                let game = registry::load(&spec).unwrap();
                let report = check_playouts(&game, 50, 3).unwrap_or_else(|e| panic!("{spec}: {e}"));
                assert!(report.states_checked > 50, "{spec}");
                if game.count_histories(100_000).is_none_or(|n| n <= 100_000)
                    && info.conformance.builds_tree(k == 0)
                {
                    check_game(&game, 20, 4).unwrap_or_else(|e| panic!("{spec}: {e}"));
                }
            }
        }
    }
}
