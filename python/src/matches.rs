//! `metagame.matches`: the full payoff table among policies of any kind (tables, files,
//! names, Python callables) on any game, as the CLI's `matches --json` gives it.

use std::time::Instant;

use metagame::games::{AnyGame, Arena, Matchup, Policy, TabularPolicy};
use metagame::{EvaluatorName, LoadedGame};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyString;

use crate::callable_policy::CallablePolicy;
use crate::convert::json_to_py;
use crate::errors::{run_error, value_error};
use crate::game::PyGame;
use crate::played::PyPlayedGame;
use crate::policy::as_policy;

/// A game as the functions that play it take it: a `Game` (its tree), a `PlayedGame`, or a
/// game string loaded as the CLI loads it (its tree built where it fits within
/// `max_nodes`).
pub enum HeldGame {
    Tree(PyGame),
    Played(AnyGame),
    Loaded(Box<LoadedGame>),
}

impl HeldGame {
    /// `game` held.
    ///
    /// # Errors
    ///
    /// `TypeError` for anything else; the loader's errors for a game string.
    pub fn of(game: &Bound<'_, PyAny>, max_nodes: Option<u64>) -> PyResult<Self> {
        if let Ok(g) = game.cast::<PyGame>() {
            Ok(HeldGame::Tree(g.get().handle()))
        } else if let Ok(g) = game.cast::<PyPlayedGame>() {
            Ok(HeldGame::Played(g.get().game.clone()))
        } else if let Ok(spec) = game.cast::<PyString>() {
            let limit = max_nodes.unwrap_or(metagame::games::GameTree::DEFAULT_MAX_NODES as u64);
            let spec = spec.to_string();
            let loaded = game.py().detach(|| LoadedGame::load(&spec, limit)).map_err(|e| run_error(&e))?;
            Ok(HeldGame::Loaded(Box::new(loaded)))
        } else {
            Err(PyTypeError::new_err(format!(
                "game: a metagame.Game, a metagame.PlayedGame or a game string, not {}",
                game.get_type().name()?
            )))
        }
    }

    /// What it is played on.
    pub fn arena(&self) -> Arena<'_> {
        match self {
            HeldGame::Tree(g) => Arena::tree(&g.tree),
            HeldGame::Played(g) => Arena::rules(g),
            HeldGame::Loaded(l) => l.arena(),
        }
    }

    /// The failure a played game's states met since last asked, as a `ValueError`.
    ///
    /// # Errors
    ///
    /// That failure.
    pub fn check(&self) -> PyResult<()> {
        match self {
            HeldGame::Played(g) => PyPlayedGame::check(g),
            _ => Ok(()),
        }
    }
}

/// One policy of the list and the name messages give it.
pub fn read_policy(
    arena: Arena<'_>,
    obj: &Bound<'_, PyAny>,
    index: usize,
) -> PyResult<(Box<dyn Policy>, String)> {
    if let Ok(spec) = obj.cast::<PyString>() {
        let spec = spec.to_string();
        let policy = metagame::registry::policy(arena, &spec).map_err(|e| run_error(&e))?;
        return Ok((policy, spec));
    }
    // A callable plays as itself (asked in batches), on a tree or on the game's states.
    if !obj.hasattr("action_probabilities")?
        && !obj.hasattr("state_lookup")?
        && let Some(callable) = CallablePolicy::of(obj)?
    {
        let name = callable.name().to_string();
        return Ok((Box::new(callable), name));
    }
    let Some(tree) = arena.game_tree() else {
        return Err(PyValueError::new_err(format!(
            "policy {index}: a table needs the game tree of {}, which was not built (play a callable or a named policy)",
            arena.name()
        )));
    };
    let table: TabularPolicy = as_policy(tree, obj)?;
    Ok((Box::new(table), format!("policy {index}")))
}

/// The payoff table among ``policies`` on ``game``: every joint choice of one policy per
/// seat (``len(policies) ** players`` entries), as the CLI's ``matches --json`` gives it:
/// a dict with ``entries`` (each ``{"policies", "mean", "stderr", "episodes"}``, seat 0 most
/// significant), ``batch_elo`` (two-player games with a known utility range: each policy's
/// batch Elo from both seatings, the lowest at 0; else None), ``evaluator``, ``exact``,
/// ``seconds`` and the rest.
///
/// ``game`` is a ``Game`` or a game string (a game too large for its tree, such as
/// ``"connect_four"``, is played on its states). A policy is a name (``"uniform"``,
/// ``"first-action"``), a policy file (OpenSpiel JSON, PyTorch safetensors), any policy
/// form ``Policy`` takes (on a game whose tree is built), or a callable
/// ``policy(obs, legal) -> probs`` asked for whole batches (``obs`` ``[B × d]`` float32,
/// OpenSpiel's tensor; ``legal`` ``[B × A]`` bool). ``evaluator`` is ``"cpu"`` (sampled),
/// ``"rollout"``, ``"exact"`` (needs the tree) or ``"gpu"``; ``episodes`` per entry for the
/// sampled ones, drawn from ``seed``.
#[pyfunction]
#[pyo3(signature = (game, policies, episodes=100_000, seed=0, evaluator="cpu", max_nodes=None))]
fn matches<'py>(
    py: Python<'py>,
    game: &Bound<'py, PyAny>,
    policies: Vec<Bound<'py, PyAny>>,
    episodes: u64,
    seed: u64,
    evaluator: &str,
    max_nodes: Option<u64>,
) -> PyResult<Bound<'py, PyAny>> {
    let kind: EvaluatorName = evaluator.parse().map_err(|e| run_error(&e))?;
    if kind.samples() && episodes == 0 {
        return Err(PyValueError::new_err("episodes must be positive for the sampled evaluators"));
    }
    if policies.is_empty() {
        return Err(PyValueError::new_err("matches: give at least one policy"));
    }
    let held = HeldGame::of(game, max_nodes)?;
    let arena = held.arena();
    if kind == EvaluatorName::Exact && arena.game_tree().is_none() {
        return Err(PyValueError::new_err(format!(
            "the exact evaluator needs the game tree of {}, which was not built",
            arena.name()
        )));
    }
    let (policies, names): (Vec<Box<dyn Policy>>, Vec<String>) = policies
        .iter()
        .enumerate()
        .map(|(i, p)| read_policy(arena, p, i))
        .collect::<PyResult<Vec<_>>>()?
        .into_iter()
        .unzip();
    let entries = Matchup::every(policies.len(), arena.num_players(), 1 << 20).ok_or_else(|| {
        PyValueError::new_err(format!(
            "{} policies and {} players make too many entries",
            policies.len(),
            arena.num_players()
        ))
    })?;
    let built = kind.build().map_err(|e| run_error(&e))?;
    let refs: Vec<&dyn Policy> = policies.iter().map(AsRef::as_ref).collect();
    let start = Instant::now();
    // The GIL released: callables take it back for each batch, from whichever thread asks.
    let totals =
        py.detach(|| built.evaluate(arena, &refs, &entries, episodes, seed)).map_err(|e| match &e {
            metagame::games::Error::PolicyFailed { policy, .. } => {
                value_error(format!("{}: {e}", names.get(*policy).map_or("a policy", String::as_str)))
            }
            _ => value_error(e),
        })?;
    held.check()?;
    let played = metagame::MatchesPlayed {
        evaluator: built.name(),
        exact: !kind.samples(),
        policies: &names,
        seed,
        episodes,
        seconds: start.elapsed().as_secs_f64(),
    };
    let report = metagame::matches_json(arena, &played, &entries, &totals);
    json_to_py(py, &report)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(matches, m)?)?;
    Ok(())
}
