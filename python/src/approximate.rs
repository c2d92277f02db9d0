//! `metagame.approximate_nash_conv`: NashConv estimated where the tree cannot be built, by
//! best responses trained against the policy and then played (the CLI's `exploitability
//! --approximate`), for policies of any kind, Python callables included.

use metagame::games::{Cutoff, SeatMixture};
use metagame::learners::LearnerChoice;
use metagame::populations::approximate_nash_conv as estimate;
use pyo3::prelude::*;
use serde_json::json;

use crate::convert::json_to_py;
use crate::errors::value_error;
use crate::matches::{HeldGame, read_policy};

/// NashConv of ``policy`` played by every seat, estimated on ``game`` (a game string, a
/// ``Game`` or a ``PlayedGame``) by a fresh best response per seat, trained by ``learner``
/// (``"ppo"`` or ``"dqn"``, on the game's tensors) for ``budget`` episodes (default: the
/// learner's) against the policy, then played for ``episodes`` evaluation episodes: a dict
/// as the CLI's ``exploitability --approximate --json`` gives it (``nash_conv_estimate``,
/// ``stderr``, ``episodes``, ``training_episodes``, ``response_values``,
/// ``profile_values``, ``lower_bound``: True, for a trained response is at most a best
/// response). ``policy`` is a name, a policy file, a callable ``policy(obs, legal) ->
/// probs``, or on a ``Game`` any policy form.
#[pyfunction]
#[pyo3(signature = (game, policy, budget=None, episodes=10_000, learner="ppo", seed=0))]
fn approximate_nash_conv<'py>(
    py: Python<'py>,
    game: &Bound<'py, PyAny>,
    policy: &Bound<'py, PyAny>,
    budget: Option<u64>,
    episodes: u64,
    learner: &str,
    seed: u64,
) -> PyResult<Bound<'py, PyAny>> {
    let held = HeldGame::of(game, None)?;
    let arena = held.arena();
    let (policy, name) = read_policy(arena, policy, 0)?;
    let learner = LearnerChoice::defaults(learner).map_err(value_error)?;
    let budget = budget.unwrap_or_else(|| learner.config().episodes_per_response());
    let seats: Vec<SeatMixture<'_>> = (0..arena.num_players())
        .map(|seat| SeatMixture { seat, members: vec![(policy.as_ref(), 1.0)] })
        .collect();
    let got = py.detach(|| estimate(arena, &seats, &learner, budget, episodes, seed, &Cutoff::never()));
    held.check()?;
    let got = got.map_err(|e| value_error(format!("approximate NashConv of {name}: {e}")))?;
    let mut out = serde_json::to_value(&got).map_err(value_error)?;
    out["game"] = json!(arena.name());
    out["lower_bound"] = json!(true);
    json_to_py(py, &out)
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(approximate_nash_conv, m)?)?;
    Ok(())
}
