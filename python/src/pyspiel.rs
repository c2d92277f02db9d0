//! Any OpenSpiel game as a metagame game: its tree walked once through pyspiel (every
//! history, with chance, any number of players, general-sum), then built and checked like
//! the built-in games.

use metagame::games::{ActionId, TensorKind, TensorShape, TreeBuilder};
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::errors::value_error;
use crate::game::PyGame;
use crate::observation_buffer::TensorReader;

/// How often (in nodes) the walk checks for Ctrl-C and redraws its progress.
const CHECK_EVERY: usize = 10_000;
/// Walks longer than this many nodes show a progress line on stderr.
const PROGRESS_AFTER: usize = 100_000;

fn enum_name(value: &Bound<'_, PyAny>) -> PyResult<String> {
    value.getattr("name")?.extract()
}

/// Who moves at a pyspiel state, from one call: OpenSpiel's `current_player()` is the
/// player, or `kTerminalPlayerId` (-4), `kChancePlayerId` (-1) or
/// `kSimultaneousPlayerId` (-2).
pub enum Mover {
    Player(usize),
    Chance,
    Terminal,
    Simultaneous,
}

/// The [`Mover`] of `state`; a player id OpenSpiel gives no such meaning is an error naming
/// `game`.
pub fn mover(state: &Bound<'_, PyAny>, game: &str) -> PyResult<Mover> {
    let player: i64 = state.call_method0(intern!(state.py(), "current_player"))?.extract()?;
    match player {
        -4 => Ok(Mover::Terminal),
        -1 => Ok(Mover::Chance),
        -2 => Ok(Mover::Simultaneous),
        p => usize::try_from(p)
            .map(Mover::Player)
            .map_err(|_| PyValueError::new_err(format!("{game}: a state's current player is {p}"))),
    }
}

/// Walk ``game`` (a ``pyspiel.Game``) into a metagame Game. Use
/// ``metagame.openspiel.from_pyspiel``, which documents it.
#[pyfunction]
#[pyo3(signature = (game, max_nodes, progress))]
fn walk_pyspiel(
    py: Python<'_>,
    game: &Bound<'_, PyAny>,
    max_nodes: usize,
    progress: bool,
) -> PyResult<PyGame> {
    let name: String = game.str()?.extract()?;
    let kind = game.call_method0("get_type")?;
    match enum_name(&kind.getattr("dynamics")?)?.as_str() {
        "SEQUENTIAL" => {}
        "SIMULTANEOUS" => {
            return Err(PyValueError::new_err(format!(
                "{name} is a simultaneous-move game; pass pyspiel.convert_to_turn_based(game)"
            )));
        }
        other => {
            return Err(PyValueError::new_err(format!(
                "{name} has {other} dynamics; only sequential games (and simultaneous ones through pyspiel.convert_to_turn_based) have a game tree to walk"
            )));
        }
    }
    // Asked of the states themselves: some games (python_iterated_prisoners_dilemma) give
    // the strings though their GameType declares none.
    let declared: bool = kind.getattr("provides_information_state_string")?.extract()?;
    let no_strings = |e: PyErr| {
        if declared {
            return e;
        }
        PyValueError::new_err(format!(
            "{name} has no information-state strings (its states do not give them, and its GameType.provides_information_state_string is False), which tabular policies are keyed by"
        ))
    };
    let num_players: usize = game.call_method0("num_players")?.extract()?;
    let num_actions: usize = game.call_method0("num_distinct_actions")?.extract()?;
    let utility_sum = utility_sum(game, &kind)?;
    let tensor = tensor_kind(game, &kind)?;
    let mut tensors =
        tensor.as_ref().map(|(shape, method)| TensorReader::new(game, shape.kind, shape.size(), method));
    let shape = tensor.map(|(shape, _)| shape);
    let mut builder = TreeBuilder::new(name.clone(), num_players, num_actions, utility_sum, shape, max_nodes);
    let bar = progress.then(|| {
        let bar = indicatif::ProgressBar::with_draw_target(None, indicatif::ProgressDrawTarget::stderr());
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{spinner} reading {msg} from pyspiel: {pos} nodes ({per_sec})",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
        );
        bar.set_message(name.clone());
        bar
    });
    let too_large = || {
        PyValueError::new_err(format!(
            "the game tree of {name} has more than {max_nodes} nodes; pass max_nodes= to raise the limit"
        ))
    };
    let tree_error = |e: metagame::games::Error| match e {
        metagame::games::Error::LimitExceeded { .. } => too_large(),
        other => value_error(other),
    };
    // Depth first, each node described straight into the tree. (Breadth first would hold a
    // level's states alive at once, and pybind11 slows with every live state it tracks.)
    let mut stack = vec![(game.call_method0("new_initial_state")?, builder.root())];
    let mut visited = 0usize;
    while let Some((state, node)) = stack.pop() {
        visited += 1;
        if visited.is_multiple_of(CHECK_EVERY) {
            py.check_signals()?;
            if let Some(bar) = &bar
                && visited >= PROGRESS_AFTER
            {
                bar.set_position(visited as u64);
            }
        }
        // One call says who moves (a node's other calls are the ones it needs).
        let player = match mover(&state, &name)? {
            Mover::Terminal => {
                let returns: Vec<f64> = state.call_method0(intern!(py, "returns"))?.extract()?;
                builder.terminal(node, &returns).map_err(value_error)?;
                continue;
            }
            Mover::Simultaneous => {
                return Err(PyValueError::new_err(format!(
                    "{name} has simultaneous moves; pass pyspiel.convert_to_turn_based(game)"
                )));
            }
            Mover::Chance => None,
            Mover::Player(p) => Some(p),
        };
        let (actions, children) = match player {
            None => {
                let outcomes: Vec<(usize, f64)> =
                    state.call_method0(intern!(py, "chance_outcomes"))?.extract()?;
                let outcomes: Vec<(ActionId, f64)> =
                    outcomes.into_iter().map(|(a, p)| (ActionId(a), p)).collect();
                let children = builder.chance(node, &outcomes).map_err(tree_error)?;
                (outcomes.into_iter().map(|o| o.0).collect::<Vec<_>>(), children)
            }
            Some(player) => {
                let key = state
                    .call_method1(intern!(py, "information_state_string"), (player,))
                    .map_err(no_strings)?;
                let key = key.cast::<PyString>().map_err(|e| no_strings(e.into()))?.to_str()?;
                let legal: Vec<usize> = state.call_method0(intern!(py, "legal_actions"))?.extract()?;
                let legal: Vec<ActionId> = legal.into_iter().map(ActionId).collect();
                let (children, new) = builder.decision(node, player, key, &legal).map_err(tree_error)?;
                if let (true, Some(tensors)) = (new, &mut tensors) {
                    builder.set_new_tensor(key, tensors.read(&state, player)?).map_err(value_error)?;
                }
                (legal, children)
            }
        };
        // The last child is the node's own state moved on (one copy fewer per node).
        let last = actions.len() - 1;
        for (k, (a, child)) in actions.iter().zip(children).enumerate() {
            if k == last {
                state.call_method1(intern!(py, "apply_action"), (a.0,))?;
                stack.push((state, child));
                break;
            }
            stack.push((state.call_method1(intern!(py, "child"), (a.0,))?, child));
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    let tree = py.detach(|| builder.finish()).map_err(tree_error)?;
    Ok(PyGame::read_from_pyspiel(tree))
}

/// The players' constant sum of returns where the game's type declares one (`ZERO_SUM`,
/// `CONSTANT_SUM`), else None.
pub fn utility_sum(game: &Bound<'_, PyAny>, kind: &Bound<'_, PyAny>) -> PyResult<Option<f64>> {
    Ok(match enum_name(&kind.getattr("utility")?)?.as_str() {
        "ZERO_SUM" => Some(0.0),
        "CONSTANT_SUM" => Some(game.call_method0("utility_sum")?.extract::<f64>()?),
        _ => None,
    })
}

/// The tensor a policy of the walked game reads, as OpenSpiel gives it, and the state
/// method that gives it: the information-state tensor where the game provides one, else
/// the observation tensor of a game of perfect information (where it is the state's).
pub fn tensor_kind(
    game: &Bound<'_, PyAny>,
    kind: &Bound<'_, PyAny>,
) -> PyResult<Option<(TensorShape, &'static str)>> {
    let flag = |name: &str| -> PyResult<bool> { kind.getattr(name)?.extract() };
    let (tensor, shape_method, state_method) = if flag("provides_information_state_tensor")? {
        (TensorKind::InformationState, "information_state_tensor_shape", "information_state_tensor")
    } else if flag("provides_observation_tensor")?
        && enum_name(&kind.getattr("information")?)? == "PERFECT_INFORMATION"
    {
        (TensorKind::Observation, "observation_tensor_shape", "observation_tensor")
    } else {
        return Ok(None);
    };
    let dims: Vec<usize> = game.call_method0(shape_method)?.extract()?;
    Ok(Some((TensorShape::new(tensor, dims), state_method)))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(walk_pyspiel, m)?)?;
    Ok(())
}
