//! The conformance check every game passes: OpenSpiel's written contracts, checked on
//! random playouts and on the whole tree.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::game::{ActionId, Game, PlayerId, State, TensorKind, TensorShape, Turn};
use crate::registry;
use crate::tree::{GameTree, NodeKind};

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
/// this together with perfect recall). A game that gives tensors ([`Game::tensor_shape`])
/// writes finite values into every entry, the same for the same state; for an
/// information-state tensor, every node of an information set gives the acting player the
/// tensor the tree cached for it.
///
/// # Errors
///
/// [`Error::Unsupported`] describing the first broken contract.
pub fn check_game<G: Game>(game: &G, playouts: usize, seed: u64) -> Result<ConformanceReport> {
    let report = check_playouts(game, playouts, seed)?;
    let tree = GameTree::build(game)?;
    check_tree_tensors(game, &tree)?;
    Ok(ConformanceReport { tree_nodes: Some(tree.num_nodes()), ..report })
}

/// The tensor checks on the whole tree: its shape is the game's, and for information-state
/// tensors every decision node writes the tensor the tree cached for its infoset (from the
/// infoset's first node).
fn check_tree_tensors<G: Game>(game: &G, tree: &GameTree) -> Result<()> {
    let name = game.name();
    let shape = game.tensor_shape();
    if tree.tensor_shape() != shape.as_ref() {
        return Err(fail(
            &name,
            format!("the tree's tensor shape {:?} is not {shape:?}", tree.tensor_shape()),
        ));
    }
    let Some(shape) = shape.filter(|s| s.kind == TensorKind::InformationState) else {
        return Ok(());
    };
    let mut buf = Buffers::new(&shape);
    // The tree's children follow the legal actions and chance outcomes: walk both together.
    let mut stack = vec![(0, game.new_initial_state())];
    while let Some((node, state)) = stack.pop() {
        if tree.node_kind(node) == NodeKind::Decision {
            let (player, infoset) = (tree.node_player(node), tree.node_infoset(node));
            let tensor = buf.write(&name, &state, PlayerId(player))?;
            if tree.infoset_tensor(infoset) != Some(tensor) {
                return Err(fail(
                    &name,
                    format!(
                        "two nodes of information state {:?} give different tensors",
                        tree.infoset_key(infoset)
                    ),
                ));
            }
        }
        for child in tree.children(node) {
            let mut next = state.clone();
            next.apply_action(tree.node_action(child));
            stack.push((child, next));
        }
    }
    Ok(())
}

/// Two tensor buffers for [`Buffers::write`].
struct Buffers {
    first: Vec<f32>,
    second: Vec<f32>,
}

impl Buffers {
    fn new(shape: &TensorShape) -> Self {
        Self { first: vec![0.0; shape.size()], second: vec![0.0; shape.size()] }
    }

    /// `player`'s tensor at `state`, written twice: once over zeros, once over NaN, so that a
    /// value left unwritten or a second call that differs from the first is caught.
    fn write<S: State>(&mut self, game: &str, state: &S, player: PlayerId) -> Result<&[f32]> {
        self.first.fill(0.0);
        state.write_tensor(player, &mut self.first);
        self.second.fill(f32::NAN);
        state.write_tensor(player, &mut self.second);
        if let Some(i) = self.second.iter().position(|x| !x.is_finite()) {
            return Err(fail(
                game,
                format!(
                    "player {}'s tensor after {:?} holds {} at {i} (non-finite or not written)",
                    player.0,
                    state.history(),
                    self.second[i]
                ),
            ));
        }
        if self.first != self.second {
            return Err(fail(
                game,
                format!("player {}'s tensor after {:?} differs between two calls", player.0, state.history()),
            ));
        }
        Ok(&self.second)
    }
}

/// The random-playout half of [`check_game`], without building the tree: for games too large
/// to enumerate. Tensors are checked at every state visited, for every player, and (for
/// information-state tensors) compared across the visits of an information state.
///
/// # Errors
///
/// [`Error::Unsupported`] describing the first broken contract.
pub fn check_playouts<G: Game>(game: &G, playouts: usize, seed: u64) -> Result<ConformanceReport> {
    let name = game.name();
    let n = game.num_players();
    let mut rng = SplitMix(seed);
    let mut states_checked = 0;
    let shape = game.tensor_shape();
    if let Some(shape) = &shape
        && shape.size() == 0
    {
        return Err(fail(&name, format!("tensor shape {:?} holds no value", shape.dims)));
    }
    let mut buf = shape.as_ref().map(Buffers::new);
    let mut replayed_buf = shape.as_ref().map(Buffers::new);
    let infoset_tensors = shape.as_ref().is_some_and(|s| s.kind == TensorKind::InformationState);
    // Per information state: the acting player, the legal actions and (for information-state
    // tensors) the tensor.
    let mut seen_infostates: HashMap<String, (usize, Vec<ActionId>, Vec<f32>)> = HashMap::new();
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
            if !writers_agree(&state, n) {
                return Err(fail(
                    &name,
                    format!(
                        "at history {:?} the write_* methods (legal actions, chance outcomes, returns, information-state strings) disagree with the methods that return them",
                        state.history()
                    ),
                ));
            }
            if let (Some(buf), Some(replayed_buf)) = (&mut buf, &mut replayed_buf) {
                for p in (0..n).map(PlayerId) {
                    if buf.write(&name, &state, p)? != replayed_buf.write(&name, &replayed, p)? {
                        return Err(fail(
                            &name,
                            format!(
                                "replaying history {:?} gives player {} a different tensor",
                                state.history(),
                                p.0
                            ),
                        ));
                    }
                }
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
                    let tensor = match &mut buf {
                        Some(buf) if infoset_tensors => buf.write(&name, &state, PlayerId(p))?.to_vec(),
                        _ => Vec::new(),
                    };
                    let entry =
                        seen_infostates.entry(key.clone()).or_insert((p, legal.clone(), tensor.clone()));
                    if entry.0 != p || entry.1 != legal {
                        return Err(fail(
                            &name,
                            format!("information state {key:?} has different players or actions"),
                        ));
                    }
                    if entry.2 != tensor {
                        return Err(fail(
                            &name,
                            format!("two visits of information state {key:?} give different tensors"),
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
/// check (as OpenSpiel's `open_spiel/integration_tests/api_test.py` runs over its registry). Games
/// registered with [`Conformance::PlayoutsOnly`](registry::Conformance::PlayoutsOnly) get [`check_playouts`], and so do the
/// defaults of those registered with [`Conformance::ExampleTrees`](registry::Conformance::ExampleTrees). Each game's
/// [`Game::name`] must also load back a game of the same name, and every registered game must
/// give a tensor ([`Game::tensor_shape`]), which networks need to play it.
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
            if game.tensor_shape().is_none() {
                return Err(fail(&spec, "a registered game gives no tensor shape".into()));
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

/// The buffer-writing methods (a tree build's) give what the returning ones give, into
/// buffers that held something else.
fn writers_agree<S: State>(s: &S, n: usize) -> bool {
    let mut legal = vec![ActionId(usize::MAX)];
    s.write_legal_actions(&mut legal);
    let mut outcomes = vec![(ActionId(usize::MAX), 7.0)];
    s.write_chance_outcomes(&mut outcomes);
    let mut returns = vec![7.0; n + 1];
    s.write_returns(&mut returns);
    let mut key = String::from("stale");
    legal == s.legal_actions()
        && outcomes == s.chance_outcomes()
        && returns == s.returns()
        && (0..n).all(|p| {
            s.write_information_state_string(PlayerId(p), &mut key);
            key == s.information_state_string(PlayerId(p))
        })
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
    use crate::kuhn::{KuhnPoker, KuhnState};

    /// Kuhn poker with a tensor broken in one way.
    #[derive(Clone, Copy, Debug)]
    enum Broken {
        /// The last value is never written.
        Unwritten,
        /// The opponent's card shows: nodes of one infoset differ.
        Leaky,
        /// NaN in the first value.
        NotFinite,
    }

    #[derive(Clone, Debug)]
    struct BrokenKuhn(Broken);

    #[derive(Clone, Debug)]
    struct BrokenState(Broken, KuhnState);

    impl Game for BrokenKuhn {
        type State = BrokenState;
        fn name(&self) -> String {
            format!("broken {:?}", self.0)
        }
        fn num_players(&self) -> usize {
            2
        }
        fn num_distinct_actions(&self) -> usize {
            2
        }
        fn new_initial_state(&self) -> BrokenState {
            BrokenState(self.0, KuhnPoker::new(2).new_initial_state())
        }
        fn utility_sum(&self) -> Option<f64> {
            Some(0.0)
        }
        fn tensor_shape(&self) -> Option<TensorShape> {
            KuhnPoker::new(2).tensor_shape()
        }
    }

    impl State for BrokenState {
        fn turn(&self) -> Turn {
            self.1.turn()
        }
        fn legal_actions(&self) -> Vec<ActionId> {
            self.1.legal_actions()
        }
        fn chance_outcomes(&self) -> Vec<(ActionId, f64)> {
            self.1.chance_outcomes()
        }
        fn apply_action(&mut self, action: ActionId) {
            self.1.apply_action(action)
        }
        fn returns(&self) -> Vec<f64> {
            self.1.returns()
        }
        fn information_state_string(&self, player: PlayerId) -> String {
            self.1.information_state_string(player)
        }
        fn history(&self) -> &[ActionId] {
            self.1.history()
        }
        fn write_tensor(&self, player: PlayerId, out: &mut [f32]) {
            let last = out.len() - 1;
            match self.0 {
                Broken::Unwritten => self.1.write_tensor(player, &mut out[..last]),
                Broken::Leaky => {
                    self.1.write_tensor(player, out);
                    out[last] = self.1.history().get(1 - player.0).map_or(0.0, |a| a.0 as f32);
                }
                Broken::NotFinite => {
                    self.1.write_tensor(player, out);
                    out[0] = f32::NAN;
                }
            }
        }
    }

    #[test]
    fn broken_tensors_fail_the_check() {
        let err = |broken| check_game(&BrokenKuhn(broken), 20, 1).unwrap_err().to_string();
        assert!(err(Broken::Unwritten).contains("(non-finite or not written)"), "{}", err(Broken::Unwritten));
        assert!(err(Broken::NotFinite).contains("holds NaN at 0"), "{}", err(Broken::NotFinite));
        assert!(err(Broken::Leaky).contains("give different tensors"), "{}", err(Broken::Leaky));
        // The whole-tree walk finds the leak without playouts, too.
        let game = BrokenKuhn(Broken::Leaky);
        let tree = GameTree::build(&game).unwrap();
        let err = check_tree_tensors(&game, &tree).unwrap_err().to_string();
        assert!(err.contains("two nodes of information state"), "{err}");
        check_game(&KuhnPoker::new(2), 20, 1).unwrap();
    }

    /// The registry-wide run is the integration test's (`tests/it/games_known_values.rs`, in
    /// release); here every registered game's defaults and examples get playouts, and the
    /// whole check runs on the small ones.
    #[test]
    fn every_registered_spec_passes_the_playouts_and_small_trees_pass_the_whole_check() {
        for info in registry::games() {
            for (k, spec) in info.specs().enumerate() {
                let game = registry::load(&spec).unwrap();
                assert!(game.tensor_shape().is_some(), "{spec} gives no tensor");
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
