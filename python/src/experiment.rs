//! The training loops from Python: `Experiment` steps a run one iteration at a time on a
//! thread of its own, with the CLI's run folder, checkpoints and resume; a Python object
//! with `respond(request)` is an oracle.
//!
//! The run thread hands each iteration's report to Python and waits for the next `__next__`
//! before it starts the next iteration, so the loop runs only as fast as Python consumes it,
//! and Python code (the oracle) runs only while the main thread waits with the GIL released.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use metagame::games::{GameTree, PlayerId, SharedSeat, TabularPolicy};
use metagame::populations::{
    self, Budget, IterationReport, Oracle, PolicyId, Response, ResponseRequest, TrainingStats, WeightedMember,
};
use metagame::{Components, ExperimentConfig, RunOptions, RunReport, run_experiment_on, run_experiment_with};
use pyo3::exceptions::{PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::convert::{json_to_py, toml_table};
use crate::distributed::{PythonEvaluator, PythonTrainer};
use crate::errors::{MetagameError, run_error, value_error};
use crate::game::PyGame;
use crate::policy::{PyPolicy, as_policy};
use crate::vec_env::{PyVecEnv, Source};

/// What an oracle is asked: a response for ``player`` against ``opponents``.
///
/// ``opponents``: every opponent member with positive meta-probability, a list of dicts
/// ``{"player", "id", "policy", "weight"}`` (the weights of one seat sum to 1);
/// ``profile``: the opponents' mixtures aggregated into one Policy (what an exact best
/// response answers); ``seed``: the seed of any sampling, keyed by the loop; ``budget``: the
/// episodes the response may use (None: unlimited); ``warm_start``: a Policy to start from,
/// or None.
#[pyclass(frozen, module = "metagame", name = "ResponseRequest")]
pub struct PyResponseRequest {
    handle: PyGame,
    #[pyo3(get)]
    player: usize,
    opponents: Vec<(usize, u32, TabularPolicy, f64)>,
    profile: TabularPolicy,
    #[pyo3(get)]
    seed: u64,
    #[pyo3(get)]
    budget: Option<u64>,
    warm_start: Option<TabularPolicy>,
}

fn policy_array<'py>(
    py: Python<'py>,
    tree: &GameTree,
    policy: &TabularPolicy,
) -> Bound<'py, numpy::PyArray2<f64>> {
    use numpy::IntoPyArray;
    // INVARIANT: a policy of the tree has exactly this many entries.
    ndarray::Array2::from_shape_vec((tree.num_infosets(), tree.num_actions()), policy.as_slice().to_vec())
        .expect("a policy of the tree")
        .into_pyarray(py)
}

#[pymethods]
impl PyResponseRequest {
    /// A request, as the loops make them (to test an oracle by hand, say): ``opponents`` a
    /// list of ``(player, id, policy, weight)`` tuples or of dicts with those keys, the
    /// policies in any policy form.
    #[new]
    #[pyo3(signature = (game, player, opponents, profile, seed=0, budget=None, warm_start=None))]
    fn py_new(
        game: &PyGame,
        player: usize,
        opponents: Vec<Bound<'_, PyAny>>,
        profile: &Bound<'_, PyAny>,
        seed: u64,
        budget: Option<u64>,
        warm_start: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let tree = &game.tree;
        if player >= tree.num_players() {
            return Err(PyValueError::new_err(format!(
                "player {player} does not exist: {} has {} players",
                tree.name(),
                tree.num_players()
            )));
        }
        let members = opponents
            .iter()
            .map(|o| {
                let (seat, id, policy, weight): (usize, u32, Bound<'_, PyAny>, f64) = match o.cast::<PyDict>()
                {
                    Ok(d) => {
                        let get = |k: &str| {
                            d.get_item(k)?
                                .ok_or_else(|| PyValueError::new_err(format!("opponent: missing `{k}`")))
                        };
                        (
                            get("player")?.extract()?,
                            get("id")?.extract()?,
                            get("policy")?,
                            get("weight")?.extract()?,
                        )
                    }
                    Err(_) => o.extract()?,
                };
                Ok((seat, id, as_policy(tree, &policy)?, weight))
            })
            .collect::<PyResult<_>>()?;
        Ok(Self {
            handle: game.handle(),
            player,
            opponents: members,
            profile: as_policy(tree, profile)?,
            seed,
            budget,
            warm_start: warm_start.map(|w| as_policy(tree, w)).transpose()?,
        })
    }
    /// A ``VecEnv`` of ``num_envs`` lanes of this request's ``player`` against its
    /// opponents, each opponent seat drawn per episode from its mixture (the weights of
    /// ``opponents``), played on the game's tree; episodes keyed by ``seed`` (default: the
    /// request's). A trainer in Python learns against the meta-mixture through it.
    #[pyo3(signature = (num_envs, seed=None))]
    fn env(&self, num_envs: usize, seed: Option<u64>) -> PyResult<PyVecEnv> {
        let mut seats: Vec<SharedSeat> = Vec::new();
        for (seat, _, policy, weight) in &self.opponents {
            let member: Arc<dyn metagame::games::Policy> = Arc::new(policy.clone());
            match seats.iter_mut().find(|(s, _)| s == seat) {
                Some((_, members)) => members.push((member, *weight)),
                None => seats.push((*seat, vec![(member, *weight)])),
            }
        }
        let source = Source::Tree(Arc::clone(&self.handle.tree));
        PyVecEnv::new(source, self.player, seats, num_envs, seed.unwrap_or(self.seed))
    }
    /// Pickle as the constructor's arguments (for Ray tasks).
    #[allow(clippy::type_complexity)]
    fn __reduce__<'py>(
        &self,
        py: Python<'py>,
    ) -> PyResult<(
        Bound<'py, PyAny>,
        (
            PyGame,
            usize,
            Vec<(usize, u32, Bound<'py, numpy::PyArray2<f64>>, f64)>,
            Bound<'py, numpy::PyArray2<f64>>,
            u64,
            Option<u64>,
            Option<Bound<'py, numpy::PyArray2<f64>>>,
        ),
    )> {
        let class = py.get_type::<PyResponseRequest>().into_any();
        let opponents = self
            .opponents
            .iter()
            .map(|(p, id, pol, w)| (*p, *id, policy_array(py, &self.handle.tree, pol), *w))
            .collect();
        let warm = self.warm_start.as_ref().map(|w| policy_array(py, &self.handle.tree, w));
        Ok((
            class,
            (
                self.game(),
                self.player,
                opponents,
                policy_array(py, &self.handle.tree, &self.profile),
                self.seed,
                self.budget,
                warm,
            ),
        ))
    }
    /// The game.
    #[getter]
    fn game(&self) -> PyGame {
        self.handle.handle()
    }
    /// The opponents' members with their weights.
    #[getter]
    fn opponents<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        self.opponents
            .iter()
            .map(|(player, id, policy, weight)| {
                let d = PyDict::new(py);
                d.set_item("player", player)?;
                d.set_item("id", id)?;
                d.set_item("policy", PyPolicy::of(&self.handle, policy.clone()))?;
                d.set_item("weight", weight)?;
                Ok(d)
            })
            .collect()
    }
    /// The opponents' mixtures aggregated into one behaviour policy.
    #[getter]
    fn profile(&self) -> PyPolicy {
        PyPolicy::of(&self.handle, self.profile.clone())
    }
    /// A policy to start training from, or None.
    #[getter]
    fn warm_start(&self) -> Option<PyPolicy> {
        self.warm_start.as_ref().map(|p| PyPolicy::of(&self.handle, p.clone()))
    }
    fn __repr__(&self) -> String {
        format!(
            "ResponseRequest(player={}, {} opponent members, seed={}, budget={:?})",
            self.player,
            self.opponents.len(),
            self.seed,
            self.budget
        )
    }
}

/// A Python object with a `respond(request)` method, as an oracle. An exception it raises
/// is kept to be raised again by the run.
struct PythonOracle {
    object: Py<PyAny>,
    /// "python", or the name of the built-in oracle the object answers for (a Ray proxy).
    name: &'static str,
    /// True when the object answers for an exact built-in oracle.
    exact: bool,
    game: PyGame,
    raised: Arc<Mutex<Option<PyErr>>>,
}

impl Oracle for PythonOracle {
    fn name(&self) -> &'static str {
        self.name
    }

    fn is_exact(&self) -> bool {
        self.exact
    }

    fn respond(&mut self, request: &ResponseRequest<'_>) -> populations::Result<Response> {
        let started = Instant::now();
        let budget = match request.budget {
            Budget::Episodes(n) => Some(n),
            _ => None,
        };
        // Python oracles see tables of the game's tree: members that are not tables are
        // tabulated over it.
        let tree = request.tree(self.name)?;
        let table = |p: &dyn metagame::games::Policy| -> populations::Result<TabularPolicy> {
            Ok(TabularPolicy::of(tree, p)?.into_owned())
        };
        let asked = PyResponseRequest {
            handle: self.game.handle(),
            player: request.player.0,
            opponents: request
                .opponents
                .iter()
                .map(|m| Ok((m.player.0, m.id.0, table(m.policy)?, m.weight)))
                .collect::<populations::Result<_>>()?,
            profile: request.profile(self.name)?.clone(),
            seed: request.seed,
            budget,
            warm_start: request.warm_start.map(table).transpose()?,
        };
        let failed = |reason: String| populations::Error::Oracle { name: self.name.into(), reason };
        Python::attach(|py| {
            let answer = match self.object.call_method1(py, "respond", (asked,)) {
                Ok(answer) => answer,
                Err(e) => {
                    let message = e.to_string();
                    *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    return Err(failed(format!("respond() raised {message}")));
                }
            };
            let policy = as_policy(&self.game.tree, answer.bind(py)).map_err(|e| {
                failed(format!(
                    "respond() returned something that is not a policy of {}: {}",
                    self.game.tree.name(),
                    e.value(py)
                ))
            })?;
            let mut stats = TrainingStats::default();
            stats.seconds = started.elapsed().as_secs_f64();
            Ok(Response::new(policy, stats))
        })
    }
}

enum Command {
    Continue,
    Stop,
}

/// A run in progress on its thread.
struct Running {
    /// In a lock only because a receiver is not `Sync` (it is used by one thread).
    reports: Mutex<Receiver<String>>,
    commands: SyncSender<Command>,
    interrupt: Arc<AtomicBool>,
    thread: Option<JoinHandle<metagame::Result<Option<RunReport>>>>,
    raised: Arc<Mutex<Option<PyErr>>>,
    /// The run thread waits for a command after the report it last handed over.
    waiting: bool,
}

impl Running {
    /// End the thread (after telling the run to stop) and take its result.
    fn finish(&mut self, py: Python<'_>) -> PyResult<Option<RunReport>> {
        self.tell_stop();
        let Some(thread) = self.thread.take() else { return Ok(None) };
        let result = py.detach(|| thread.join());
        if let Some(e) = self.raised.lock().unwrap_or_else(|p| p.into_inner()).take() {
            return Err(e);
        }
        match result {
            Ok(Ok(report)) => Ok(report),
            Ok(Err(e)) => Err(run_error(&e)),
            Err(_) => Err(MetagameError::new_err("the run thread panicked (a bug: please report it)")),
        }
    }
}

impl Running {
    /// Stop the run at its next report. Sent whether or not the run waits for a command now:
    /// a run in the middle of a step hands over one more report and then waits, and the
    /// stop must be there for it (the channel holds one command; the run takes each as soon
    /// as it is sent, so this never waits long). After the run ended, the send fails: fine.
    fn tell_stop(&mut self) {
        let _ = self.commands.send(Command::Stop);
        self.waiting = false;
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        // A run dropped unfinished (its Experiment garbage-collected) stops after its step
        // with its folder written, as after Ctrl-C.
        self.interrupt.store(true, Ordering::SeqCst);
        self.tell_stop();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A run of the training loop a config names, stepped one iteration at a time:
/// ``for report in Experiment(config): ...`` gives every iteration's report as a dict (the
/// CLI's ``--json`` lines), and writes the CLI's run folder (checkpoints, report.json,
/// figures, report.html). Breaking out of the loop, ``close()`` or leaving a ``with`` block
/// stops the run after the iteration in progress with its folder written; Ctrl-C does the
/// same and raises KeyboardInterrupt. ``result`` is the final report once it ends.
///
/// Use ``metagame.Experiment``, whose constructor (in Python) reads the config and checks
/// the run folder; this is the native part.
#[pyclass(module = "metagame._metagame", name = "NativeExperiment")]
pub struct PyExperiment {
    running: Option<Running>,
    result: Option<String>,
    out: PathBuf,
}

/// The config from a dict or TOML text, for a run on `tree` (a game given as its tree) or
/// on the registry game it names.
fn read_config(
    config: &Bound<'_, PyAny>,
    source: &Path,
    game: Option<&GameTree>,
) -> PyResult<ExperimentConfig> {
    let parsed = if let Ok(dict) = config.cast::<PyDict>() {
        let table = toml_table(dict)?;
        match game {
            Some(tree) => ExperimentConfig::from_table(table, source, Some(tree.name())),
            None => ExperimentConfig::from_table(table, source, None),
        }
    } else if let Ok(text) = config.cast::<PyString>() {
        let text = text.to_str()?;
        match game {
            Some(tree) => ExperimentConfig::from_toml_str_on(text, source, tree.name()),
            None => ExperimentConfig::from_toml_str(text, source),
        }
    } else {
        return Err(PyTypeError::new_err("config: a dict, TOML text or a path"));
    };
    parsed.map_err(|e| run_error(&e))
}

#[pymethods]
impl PyExperiment {
    #[new]
    #[pyo3(signature = (config, source, out, game=None, oracle=None, resume=false, evaluator=None, trainer=None, builtin_oracle=None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        config: &Bound<'_, PyAny>,
        source: PathBuf,
        out: PathBuf,
        game: Option<&PyGame>,
        oracle: Option<Py<PyAny>>,
        resume: bool,
        evaluator: Option<(Py<PyAny>, String)>,
        trainer: Option<Py<PyAny>>,
        builtin_oracle: Option<Py<PyAny>>,
    ) -> PyResult<Self> {
        let config = read_config(config, &source, game.map(|g| g.tree.as_ref()))?;
        // A Python oracle reads tables of the tree; without one (and without a game given)
        // the run loads its game as the CLI does, so games too large for a tree run on
        // their states (neural PSRO on connect four, say).
        let game = match game {
            Some(g) => Some(g.handle()),
            None if oracle.is_some() || builtin_oracle.is_some() => {
                Some(PyGame::new(crate::game::load_tree(py, config.game(), None)?))
            }
            None => None,
        };
        let tree = game.as_ref().map(|g| Arc::clone(&g.tree));
        let raised = Arc::new(Mutex::new(None));
        let mut components = Components::default();
        if let Some(object) = oracle {
            if !object.bind(py).hasattr("respond")? {
                return Err(PyTypeError::new_err("oracle: an object with a respond(request) method"));
            }
            if !config.algorithm().algorithm().uses_oracle() {
                return Err(PyValueError::new_err(format!(
                    "algorithm `{}` trains its own responses and takes no oracle",
                    config.algorithm().algorithm().as_str()
                )));
            }
            let oracle = PythonOracle {
                object,
                name: "python",
                exact: false,
                // INVARIANT: the tree is built whenever an oracle is given (above).
                game: game.as_ref().expect("the tree of an oracle's run").handle(),
                raised: Arc::clone(&raised),
            };
            components = components.with_oracle(Box::new(oracle));
        } else if let Some(object) = builtin_oracle {
            // A proxy (Ray tasks) for the config's own oracle: its name and exactness.
            let built = config.algorithm().oracle().map_err(|e| run_error(&e))?;
            let Some(built) = built.filter(|o| o.is_exact()) else {
                return Err(PyValueError::new_err(
                    "only an exact built-in oracle answers elsewhere (a learned one keeps state between requests)",
                ));
            };
            let oracle = PythonOracle {
                object,
                name: built.name(),
                exact: true,
                // INVARIANT: the tree is built whenever an oracle is given (above).
                game: game.as_ref().expect("the tree of an oracle's run").handle(),
                raised: Arc::clone(&raised),
            };
            components = components.with_oracle(Box::new(oracle));
        }
        if let Some((callable, name)) = evaluator {
            // The evaluator a Python callable stands for, under its registry name.
            let name = match name.as_str() {
                "exact" => "exact",
                "cpu" => "cpu",
                other => {
                    return Err(PyValueError::new_err(format!(
                        "evaluator `{other}` cannot be distributed (exact, cpu can)"
                    )));
                }
            };
            components = components.with_evaluator(Box::new(PythonEvaluator { callable, name }));
        }
        if let Some(callable) = trainer {
            components = components.with_trainer(Box::new(PythonTrainer { callable }));
        }
        let interrupt = Arc::new(AtomicBool::new(false));
        // A report reaches Python once its checkpoint is on disk (what a resume continues
        // from), and the run steps on only when Python asks for the next one.
        let options =
            RunOptions::new(out.clone()).resume(resume).lockstep(true).interrupt(Arc::clone(&interrupt));
        let (report_tx, reports) = mpsc::sync_channel::<String>(1);
        let (commands, command_rx) = mpsc::sync_channel::<Command>(1);
        let thread = std::thread::spawn(move || {
            let mut observer = |report: &IterationReport| {
                // INVARIANT: reports are plain numbers, strings and lists.
                let json = serde_json::to_string(report).expect("a report serialises");
                if report_tx.send(json).is_err() {
                    return ControlFlow::Break(());
                }
                match command_rx.recv() {
                    Ok(Command::Continue) => ControlFlow::Continue(()),
                    Ok(Command::Stop) | Err(_) => ControlFlow::Break(()),
                }
            };
            match &tree {
                Some(tree) => run_experiment_on(&config, tree, &options, components, &mut observer),
                None => run_experiment_with(&config, &options, components, &mut observer),
            }
        });
        let running = Running {
            reports: Mutex::new(reports),
            commands,
            interrupt,
            thread: Some(thread),
            raised,
            waiting: false,
        };
        Ok(Self { running: Some(running), result: None, out })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(&mut self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let Some(running) = self.running.as_mut() else { return Err(PyStopIteration::new_err(())) };
        if running.waiting {
            let _ = running.commands.send(Command::Continue);
            running.waiting = false;
        }
        let next = loop {
            let reports = &running.reports;
            match py.detach(|| {
                reports.lock().unwrap_or_else(|p| p.into_inner()).recv_timeout(Duration::from_millis(50))
            }) {
                Ok(json) => {
                    running.waiting = true;
                    break Ok(json);
                }
                Err(RecvTimeoutError::Timeout) => {
                    if let Err(signal) = py.check_signals() {
                        // Ctrl-C: stop after the step in progress, write the folder, re-raise.
                        running.interrupt.store(true, Ordering::SeqCst);
                        break Err(signal);
                    }
                }
                Err(RecvTimeoutError::Disconnected) => break Err(PyStopIteration::new_err(())),
            }
        };
        match next {
            Ok(json) => {
                let value: serde_json::Value =
                    serde_json::from_str(&json).map_err(|e| MetagameError::new_err(e.to_string()))?;
                json_to_py(py, &value)
            }
            Err(stop) => {
                self.finish(py)?;
                Err(stop)
            }
        }
    }

    /// Stop the run after the iteration in progress (its folder written) and return the
    /// final report; a finished run's report again.
    fn close<'py>(&mut self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        self.finish(py)?;
        self.result(py)
    }

    /// The final report (``report.json``'s content) once the run has ended, else None.
    #[getter]
    fn result<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(json) = &self.result else { return Ok(None) };
        let value: serde_json::Value =
            serde_json::from_str(json).map_err(|e| MetagameError::new_err(e.to_string()))?;
        json_to_py(py, &value).map(Some)
    }

    /// The run folder.
    #[getter]
    fn out(&self) -> PathBuf {
        self.out.clone()
    }
}

impl PyExperiment {
    fn finish(&mut self, py: Python<'_>) -> PyResult<()> {
        let Some(mut running) = self.running.take() else { return Ok(()) };
        let report = running.finish(py)?;
        if let Some(report) = report {
            // INVARIANT: a run report serialises (it was written as report.json).
            self.result = Some(serde_json::to_string(&report).expect("a run report serialises"));
        }
        Ok(())
    }
}

/// ``(name, exact)`` of the oracle a config names (None for loops that ask no oracle).
#[pyfunction]
#[pyo3(signature = (config, source, game=None))]
fn config_oracle(
    config: &Bound<'_, PyAny>,
    source: PathBuf,
    game: Option<&PyGame>,
) -> PyResult<Option<(String, bool)>> {
    let config = read_config(config, &source, game.map(|g| g.tree.as_ref()))?;
    let oracle = config.algorithm().oracle().map_err(|e| run_error(&e))?;
    Ok(oracle.map(|o| (o.name().to_string(), o.is_exact())))
}

/// The response of the oracle a config names to ``request``: the work of one Ray task of
/// ``metagame.distributed`` (exact oracles only: they keep no state between requests).
#[pyfunction]
fn respond_builtin(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    game: &PyGame,
    request: &PyResponseRequest,
) -> PyResult<PyPolicy> {
    let config = read_config(config, Path::new("<config>"), Some(&game.tree))?;
    let Some(mut oracle) = config.algorithm().oracle().map_err(|e| run_error(&e))? else {
        return Err(PyValueError::new_err(format!(
            "algorithm `{}` asks no oracle",
            config.algorithm().algorithm().as_str()
        )));
    };
    let tree = Arc::clone(&game.tree);
    let (player, seed, budget) = (request.player, request.seed, request.budget);
    let opponents = request.opponents.clone();
    let (profile, warm) = (request.profile.clone(), request.warm_start.clone());
    let answer = crate::errors::released(py, tree.num_nodes() >= crate::errors::SMALL_TREE, move || {
        let members = opponents
            .iter()
            .map(|(seat, id, policy, weight)| {
                WeightedMember::new(PlayerId(*seat), PolicyId(*id), policy, *weight)
            })
            .collect();
        let mut asked = ResponseRequest::new(&tree, PlayerId(player), members, &profile, seed);
        if let Some(n) = budget {
            asked = asked.with_budget(Budget::Episodes(n));
        }
        if let Some(w) = &warm {
            asked = asked.with_warm_start(w);
        }
        let response = oracle.respond(&asked)?;
        let policy = response.policy.policy()?;
        Ok::<_, populations::Error>(TabularPolicy::of(&tree, policy)?.into_owned())
    })?
    .map_err(|e| value_error(&e))?;
    Ok(PyPolicy::of(game, answer))
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(config_oracle, m)?)?;
    m.add_function(wrap_pyfunction!(respond_builtin, m)?)?;
    m.add_class::<PyExperiment>()?;
    m.add_class::<PyResponseRequest>()?;
    Ok(())
}
