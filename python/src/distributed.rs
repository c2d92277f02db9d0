//! What `metagame.distributed` needs from the native side: payoff entries evaluated for a
//! slice of an iteration's matchups (a Ray task's work), keyed as in the whole call so that
//! the parts equal the whole bit for bit, and an evaluator that hands an iteration's
//! matchups to Python (which spreads them over Ray tasks).

use std::sync::Arc;

use metagame::games::{
    Arena, Cutoff, ExactEvaluator, GameTree, MatchEvaluator, MatchTotals, Matchup, MixedMatchup,
    RolloutEvaluator, SampledEvaluator, TabularPolicy, flat::FlatTree, registry,
};
use metagame::learners::SavedLearner;
use metagame::populations::{LeagueTrainer, SeatLearners, TrainingJob, TrainingJobData, restore_pair};
use numpy::IntoPyArray;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyString};

use crate::errors::{interruptible, run_error, value_error};
use crate::game::PyGame;
use crate::policy::as_policy;

/// A matchup's totals as Python sees them: `(sums, sums_of_squares, episodes, exact)`.
type Totals = (Vec<f64>, Vec<f64>, u64, bool);

fn to_python(t: MatchTotals) -> Totals {
    (t.sums, t.sums_of_squares, t.episodes, t.exact)
}

fn from_python((sums, sums_of_squares, episodes, exact): Totals) -> MatchTotals {
    if exact { MatchTotals::exact(sums) } else { MatchTotals::sampled(sums, sums_of_squares, episodes) }
}

/// The totals of ``matchups`` (each a list of policy indices, one per seat), which are
/// matchups ``first, first + 1, ...`` of an iteration, with the evaluator ``evaluator``:
/// each a tuple ``(sums, sums_of_squares, episodes, exact)``. On a ``Game`` (``"exact"``
/// or ``"cpu"``) the policies are ``[infosets × actions]`` arrays; on a game string, played
/// on its states (``"rollout"``), ``(kind, bytes)`` policy files as a run folder keeps
/// them (networks in safetensors, pickled callables). The work of one Ray task of
/// ``metagame.distributed``.
#[pyfunction]
#[pyo3(signature = (game, policies, matchups, first, episodes, seed, evaluator))]
#[allow(clippy::too_many_arguments)]
fn evaluate_matchups(
    py: Python<'_>,
    game: &Bound<'_, PyAny>,
    policies: Vec<Bound<'_, PyAny>>,
    matchups: Vec<Vec<usize>>,
    first: u64,
    episodes: u64,
    seed: u64,
    evaluator: &str,
) -> PyResult<Vec<Totals>> {
    let matchups: Vec<Matchup> = matchups.into_iter().map(|seats| Matchup { seats }).collect();
    if let Ok(spec) = game.cast::<PyString>() {
        if evaluator != "rollout" {
            return Err(PyValueError::new_err(format!(
                "evaluator `{evaluator}` does not run in a Ray task on a game played on its states (rollout does)"
            )));
        }
        let rules = registry::load(&spec.to_string()).map_err(value_error)?;
        let files: Vec<(String, Vec<u8>)> = policies.iter().map(|p| p.extract()).collect::<PyResult<_>>()?;
        let first = u32::try_from(first).map_err(|_| PyValueError::new_err("first: past u32::MAX"))?;
        // The members the driver sent (pickled ones only from a run that allows pickle).
        let before = crate::callable_policy::allow_pickle_reads(true);
        let policies: metagame::Result<Vec<Arc<dyn metagame::games::Policy>>> =
            files.iter().map(|(kind, bytes)| metagame::registry::policy_from_file(kind, bytes)).collect();
        crate::callable_policy::allow_pickle_reads(before);
        let policies = policies.map_err(|e| run_error(&e))?;
        let mixed: Vec<MixedMatchup> = matchups.iter().map(MixedMatchup::from).collect();
        let totals = py.detach(|| {
            let refs: Vec<&dyn metagame::games::Policy> = policies.iter().map(AsRef::as_ref).collect();
            RolloutEvaluator::new().evaluate_mixed_from(
                Arena::rules(&rules),
                &refs,
                &mixed,
                first,
                episodes,
                seed,
                &Cutoff::never(),
            )
        });
        return Ok(totals.map_err(value_error)?.into_iter().map(to_python).collect());
    }
    let game = game.cast::<PyGame>().map_err(|_| {
        pyo3::exceptions::PyTypeError::new_err("game: a metagame.Game or a registry game string")
    })?;
    let tree = Arc::clone(&game.get().tree);
    let policies: Vec<TabularPolicy> =
        policies.iter().map(|p| as_policy(&tree, p)).collect::<PyResult<_>>()?;
    let sampled = match evaluator {
        "exact" => false,
        "cpu" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "evaluator `{other}` does not run in a Ray task on a game tree (exact, cpu do)"
            )));
        }
    };
    let totals = interruptible(py, move || {
        let refs: Vec<&TabularPolicy> = policies.iter().collect();
        if sampled {
            SampledEvaluator::new().evaluate_flat_from(
                &tree,
                &FlatTree::new(&tree),
                &refs,
                &matchups,
                first,
                episodes,
                seed,
            )
        } else {
            ExactEvaluator.evaluate_tables(&tree, &refs, &matchups, episodes, seed)
        }
    })?
    .map_err(value_error)?;
    Ok(totals.into_iter().map(to_python).collect())
}

/// An evaluator that hands each call's matchups to a Python callable
/// `evaluate(policies, matchups, episodes, seed) -> [totals]`, under the name of the
/// evaluator it stands for: the policies as `[infosets × actions]` arrays on a tree, as
/// `(kind, bytes)` policy files on a game played on its states.
pub struct PythonEvaluator {
    pub callable: Py<PyAny>,
    pub name: &'static str,
}

impl PythonEvaluator {
    /// The policies as Python hands them to the tasks.
    fn policies<'py>(
        &self,
        py: Python<'py>,
        arena: metagame::games::Arena<'_>,
        policies: &[&dyn metagame::games::Policy],
        matchups: &[Matchup],
    ) -> metagame::games::Result<Vec<Bound<'py, PyAny>>> {
        let Some(tree) = arena.game_tree() else {
            // On the states: each policy as its file (the workers read it back by kind).
            return policies
                .iter()
                .map(|p| {
                    let file = p.to_file()?.ok_or_else(|| {
                        metagame::games::Error::Unsupported(format!(
                            "distributed evaluation: a policy of kind `{}` cannot travel to a Ray task",
                            p.kind()
                        ))
                    })?;
                    Ok((file.kind, PyBytes::new(py, &file.bytes))
                        .into_pyobject(py)
                        .map_err(|e| metagame::games::Error::Unsupported(e.to_string()))?
                        .into_any())
                })
                .collect();
        };
        // The workers rebuild the tree and play tables: policies that are not tables are
        // tabulated here.
        let tables = metagame::games::tables(tree, policies)?;
        let tables: Vec<&TabularPolicy> = tables.iter().map(|t| t.as_ref()).collect();
        metagame::games::check_matchups(tree, &tables, matchups)?;
        let shape = (tree.num_infosets(), tree.num_actions());
        Ok(tables
            .iter()
            .map(|p| {
                // INVARIANT: checked above, every policy has the tree's shape.
                ndarray::Array2::from_shape_vec(shape, p.as_slice().to_vec())
                    .expect("a policy of the tree")
                    .into_pyarray(py)
                    .into_any()
            })
            .collect())
    }
}

impl MatchEvaluator for PythonEvaluator {
    fn name(&self) -> &'static str {
        self.name
    }

    fn evaluate(
        &self,
        arena: metagame::games::Arena<'_>,
        policies: &[&dyn metagame::games::Policy],
        matchups: &[Matchup],
        episodes: u64,
        seed: u64,
    ) -> metagame::games::Result<Vec<MatchTotals>> {
        let failed = |e: String| metagame::games::Error::Unsupported(format!("distributed evaluation: {e}"));
        Python::attach(|py| {
            let arrays = self.policies(py, arena, policies, matchups)?;
            let seats: Vec<Vec<usize>> = matchups.iter().map(|m| m.seats.clone()).collect();
            let answer = self
                .callable
                .call1(py, (arrays, seats, episodes, seed))
                .map_err(|e| failed(e.to_string()))?;
            let totals: Vec<Totals> =
                answer.extract(py).map_err(|e| failed(format!("not a list of totals: {e}")))?;
            if totals.len() != matchups.len() {
                return Err(failed(format!("{} totals for {} matchups", totals.len(), matchups.len())));
            }
            Ok(totals.into_iter().map(from_python).collect())
        })
    }
}

/// Run one league agent's training of a round (``job``: a ``TrainingJobData`` as JSON) and
/// give its two trained learners, saved, as JSON. The work of one Ray task of a
/// distributed league round.
#[pyfunction]
fn train_league_job(py: Python<'_>, game: &PyGame, job: String) -> PyResult<String> {
    let tree = Arc::clone(&game.tree);
    let data: TrainingJobData = serde_json::from_str(&job)
        .map_err(|e| PyValueError::new_err(format!("a league training job: {e}")))?;
    interruptible(py, move || {
        // A league that scores wins trains on the game's win/loss copy.
        let tree = data.outcome.match_tree(&tree);
        let job = TrainingJob::restore(&tree, data)?;
        let [a, b] = job.run(&tree)?;
        // INVARIANT: saved learners are plain numbers.
        Ok::<_, metagame::populations::Error>(
            serde_json::to_string(&[a.save(), b.save()]).expect("learners serialise"),
        )
    })?
    .map_err(value_error)
}

/// A league trainer that hands each round's jobs (as JSON) to a Python callable
/// `train(jobs) -> [trained learners as JSON]` (which spreads them over Ray tasks).
pub struct PythonTrainer {
    pub callable: Py<PyAny>,
}

impl LeagueTrainer for PythonTrainer {
    fn train(
        &self,
        tree: &GameTree,
        jobs: Vec<TrainingJob>,
    ) -> metagame::populations::Result<Vec<SeatLearners>> {
        let failed =
            |e: String| metagame::populations::Error::Config(format!("distributed league training: {e}"));
        let texts: Vec<String> = jobs
            .iter()
            // INVARIANT: saved learners and policies are plain numbers.
            .map(|j| serde_json::to_string(&j.save()).expect("a job serialises"))
            .collect();
        let answers: Vec<String> = Python::attach(|py| {
            let answer = self.callable.call1(py, (texts,)).map_err(|e| failed(e.to_string()))?;
            answer.extract(py).map_err(|e| failed(format!("not a list of JSON strings: {e}")))
        })?;
        if answers.len() != jobs.len() {
            return Err(failed(format!("{} answers for {} jobs", answers.len(), jobs.len())));
        }
        answers
            .iter()
            .map(|text| {
                let saved: [SavedLearner; 2] =
                    serde_json::from_str(text).map_err(|e| failed(e.to_string()))?;
                restore_pair(tree, &saved)
            })
            .collect()
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(train_league_job, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate_matchups, m)?)?;
    Ok(())
}
