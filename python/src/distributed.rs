//! What `metagame.distributed` needs from the native side: payoff entries evaluated for a
//! slice of an iteration's matchups (a Ray task's work), keyed as in the whole call so that
//! the parts equal the whole bit for bit, and an evaluator that hands an iteration's
//! matchups to Python (which spreads them over Ray tasks).

use std::sync::Arc;

use metagame::games::{
    ExactEvaluator, GameTree, MatchEvaluator, MatchTotals, Matchup, SampledEvaluator, TabularPolicy,
    flat::FlatTree,
};
use metagame::learners::SavedLearner;
use metagame::populations::{LeagueTrainer, SeatLearners, TrainingJob, TrainingJobData, restore_pair};
use numpy::{IntoPyArray, PyArray2};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

use crate::errors::{interruptible, value_error};
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
/// matchups ``first, first + 1, ...`` of an iteration, with the evaluator ``evaluator``
/// (``"exact"`` or ``"cpu"``): each a tuple ``(sums, sums_of_squares, episodes, exact)``.
/// The work of one Ray task of ``metagame.distributed``.
#[pyfunction]
#[pyo3(signature = (game, policies, matchups, first, episodes, seed, evaluator))]
#[allow(clippy::too_many_arguments)]
fn evaluate_matchups(
    py: Python<'_>,
    game: &PyGame,
    policies: Vec<Bound<'_, PyAny>>,
    matchups: Vec<Vec<usize>>,
    first: u64,
    episodes: u64,
    seed: u64,
    evaluator: &str,
) -> PyResult<Vec<Totals>> {
    let tree = Arc::clone(&game.tree);
    let policies: Vec<TabularPolicy> =
        policies.iter().map(|p| as_policy(&tree, p)).collect::<PyResult<_>>()?;
    let matchups: Vec<Matchup> = matchups.into_iter().map(|seats| Matchup { seats }).collect();
    let sampled = match evaluator {
        "exact" => false,
        "cpu" => true,
        other => {
            return Err(PyValueError::new_err(format!(
                "evaluator `{other}` does not run in a Ray task (exact, cpu do)"
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
/// `evaluate(policies, matchups, episodes, seed) -> [totals]` (the policies as
/// `[infosets × actions]` arrays), under the name of the evaluator it stands for.
pub struct PythonEvaluator {
    pub callable: Py<PyAny>,
    pub name: &'static str,
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
        // The workers rebuild the tree and play tables: policies that are not tables are
        // tabulated here.
        let tree = arena.need_tree("distributed evaluation")?;
        let tables = metagame::games::tables(tree, policies)?;
        let policies: Vec<&TabularPolicy> = tables.iter().map(|t| t.as_ref()).collect();
        let policies = policies.as_slice();
        metagame::games::check_matchups(tree, policies, matchups)?;
        let failed = |e: String| metagame::games::Error::Unsupported(format!("distributed evaluation: {e}"));
        Python::attach(|py| {
            let shape = (tree.num_infosets(), tree.num_actions());
            let arrays: Vec<Bound<'_, PyArray2<f64>>> = policies
                .iter()
                .map(|p| {
                    // INVARIANT: checked above, every policy has the tree's shape.
                    ndarray::Array2::from_shape_vec(shape, p.as_slice().to_vec())
                        .expect("a policy of the tree")
                        .into_pyarray(py)
                })
                .collect();
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
