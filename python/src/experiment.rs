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

use metagame::games::{AnyGame, Game, GameTree, PlayerId, Policy, SharedSeat, TabularPolicy, registry};
use metagame::populations::{
    self, Budget, IterationReport, Oracle, PolicyId, Response, ResponseRequest, TrainingStats, WeightedMember,
};
use metagame::{
    Components, ExperimentConfig, RunOptions, RunReport, run_experiment_on, run_experiment_on_rules,
    run_experiment_with,
};
use pyo3::exceptions::{PyStopIteration, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};

use crate::callable_policy::CallablePolicy;
use crate::convert::{json_to_py, toml_table};
use crate::distributed::{PythonEvaluator, PythonTrainer};
use crate::errors::{MetagameError, run_error, value_error};
use crate::game::PyGame;
use crate::native_policy::PyNativePolicy;
use crate::policy::{PyPolicy, as_policy};
use crate::vec_env::{PyVecEnv, Source, opponent};

/// What an oracle is asked: a response for ``player`` against ``opponents``.
///
/// ``opponents``: every opponent member with positive meta-probability, a list of dicts
/// ``{"player", "id", "policy", "weight"}`` (the weights of one seat sum to 1);
/// ``profile``: the opponents' mixtures aggregated into one Policy (what an exact best
/// response answers); ``seed``: the seed of any sampling, keyed by the loop; ``budget``: the
/// episodes the response may use (None: unlimited); ``warm_start``: a policy to start from,
/// or None; ``env(num_envs)``: a ``VecEnv`` against the opponents' mixture.
///
/// On a game whose tree was built (``game`` is its ``Game``) the policies are ``Policy``
/// tables and an answer is any policy form (a callable is tabulated). On a game played on
/// its states (``game`` is None: ``connect_four``, say) there is no ``profile``; a policy
/// is the Python callable it was (the user's own object, to train on from a warm start) or
/// a ``NativePolicy`` (a network member), and an answer is a callable
/// ``policy(obs, legal) -> probs`` (kept in the run folder pickled) or the path of a
/// ``.safetensors`` network (``metagame.torch.to_native`` writes one).
#[pyclass(frozen, module = "metagame", name = "ResponseRequest")]
pub struct PyResponseRequest {
    on: Source,
    #[pyo3(get)]
    player: usize,
    opponents: Vec<(usize, u32, Arc<dyn Policy>, f64)>,
    profile: Option<TabularPolicy>,
    #[pyo3(get)]
    seed: u64,
    #[pyo3(get)]
    budget: Option<u64>,
    warm_start: Option<Arc<dyn Policy>>,
}

impl Source {
    fn name(&self) -> String {
        match self {
            Source::Tree(g) => g.tree.name().to_string(),
            Source::States(g) => g.name(),
        }
    }

    fn num_players(&self) -> usize {
        match self {
            Source::Tree(g) => g.tree.num_players(),
            Source::States(g) => g.num_players(),
        }
    }

    /// A policy as Python sees it: a table of the tree, the user's own callable, or a
    /// native policy to call.
    fn to_python(&self, py: Python<'_>, player: usize, policy: &Arc<dyn Policy>) -> PyResult<Py<PyAny>> {
        if let Source::Tree(g) = self
            && let Some(table) = policy.as_tabular()
        {
            return Ok(Py::new(py, PyPolicy::of(g, table.clone()))?.into_any());
        }
        if let Some(callable) = policy.as_any().and_then(|a| a.downcast_ref::<CallablePolicy>()) {
            return Ok(callable.object().clone_ref(py));
        }
        let num_actions = match self {
            Source::Tree(g) => g.tree.num_actions(),
            Source::States(g) => g.num_distinct_actions(),
        };
        Ok(Py::new(py, PyNativePolicy { policy: Arc::clone(policy), player, num_actions })?.into_any())
    }

    /// An oracle's answer as a policy of this game; a callable one kept pickled in the run
    /// folder when `allow_pickle` (and it writes no file of its own).
    fn answer(&self, answer: &Bound<'_, PyAny>, allow_pickle: bool) -> PyResult<Arc<dyn Policy>> {
        match self {
            Source::Tree(g) => Ok(Arc::new(as_policy(&g.tree, answer)?)),
            Source::States(game) => {
                if let Ok(native) = answer.cast::<PyNativePolicy>() {
                    return Ok(Arc::clone(&native.get().policy));
                }
                if answer.cast::<PyPolicy>().is_ok() {
                    return Err(PyTypeError::new_err(format!(
                        "a table needs the game tree, and {} is played on its states: answer a callable policy(obs, legal) -> probs or a .safetensors file",
                        game.name()
                    )));
                }
                let policy = opponent(self, answer)?;
                match policy.as_any().and_then(|a| a.downcast_ref::<CallablePolicy>()) {
                    Some(callable) => Ok(Arc::new(callable.share().allowing_pickle(allow_pickle))),
                    None => Ok(policy),
                }
            }
        }
    }
}

/// A policy owned past the borrow a request gives it: a table or a callable shared, any
/// other kind copied through its file.
fn owned(policy: &dyn Policy) -> populations::Result<Arc<dyn Policy>> {
    if let Some(table) = policy.as_tabular() {
        return Ok(Arc::new(table.clone()));
    }
    if let Some(callable) = policy.as_any().and_then(|a| a.downcast_ref::<CallablePolicy>()) {
        return Ok(Arc::new(callable.share()));
    }
    let Some(file) = policy.to_file()? else {
        return Err(populations::Error::Config(format!(
            "a policy of kind `{}` cannot be handed to Python",
            policy.kind()
        )));
    };
    metagame::registry::policy_from_file(&file.kind, &file.bytes)
        .map_err(|e| populations::Error::Config(e.to_string()))
}

fn policy_array<'py>(
    py: Python<'py>,
    tree: &GameTree,
    policy: &dyn Policy,
) -> PyResult<Bound<'py, numpy::PyArray2<f64>>> {
    use numpy::IntoPyArray;
    let Some(policy) = policy.as_tabular() else {
        return Err(PyTypeError::new_err("a request whose policies are not tables cannot be pickled"));
    };
    // INVARIANT: a policy of the tree has exactly this many entries.
    Ok(ndarray::Array2::from_shape_vec((tree.num_infosets(), tree.num_actions()), policy.as_slice().to_vec())
        .expect("a policy of the tree")
        .into_pyarray(py))
}

#[pymethods]
impl PyResponseRequest {
    /// A request, as the loops make them (to test an oracle by hand, say): ``game`` a
    /// ``Game`` or a game string (played on its states), ``opponents`` a list of
    /// ``(player, id, policy, weight)`` tuples or of dicts with those keys, the policies in
    /// any form the game takes (on a string: names, files and callables).
    #[new]
    #[pyo3(signature = (game, player, opponents, profile=None, seed=0, budget=None, warm_start=None))]
    fn py_new(
        game: &Bound<'_, PyAny>,
        player: usize,
        opponents: Vec<Bound<'_, PyAny>>,
        profile: Option<&Bound<'_, PyAny>>,
        seed: u64,
        budget: Option<u64>,
        warm_start: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<Self> {
        let on = if let Ok(g) = game.cast::<PyGame>() {
            Source::Tree(g.get().handle())
        } else if let Ok(g) = game.cast::<crate::played::PyPlayedGame>() {
            Source::States(g.get().game.clone())
        } else if let Ok(s) = game.cast::<PyString>() {
            Source::States(registry::load(&s.to_string()).map_err(value_error)?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "game: a metagame.Game or a game string, not {}",
                game.get_type().name()?
            )));
        };
        if player >= on.num_players() {
            return Err(PyValueError::new_err(format!(
                "player {player} does not exist: {} has {} players",
                on.name(),
                on.num_players()
            )));
        }
        let policy = |obj: &Bound<'_, PyAny>| match &on {
            Source::Tree(g) => Ok(Arc::new(as_policy(&g.tree, obj)?) as Arc<dyn Policy>),
            Source::States(_) => opponent(&on, obj),
        };
        let members = opponents
            .iter()
            .map(|o| {
                let (seat, id, member, weight): (usize, u32, Bound<'_, PyAny>, f64) = match o.cast::<PyDict>()
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
                Ok((seat, id, policy(&member)?, weight))
            })
            .collect::<PyResult<_>>()?;
        let profile = match (&on, profile) {
            (Source::Tree(g), Some(p)) => Some(as_policy(&g.tree, p)?),
            (Source::States(g), Some(_)) => {
                return Err(PyValueError::new_err(format!(
                    "profile: a table needs the game tree, and {} is played on its states",
                    g.name()
                )));
            }
            (_, None) => None,
        };
        let warm_start = warm_start.map(policy).transpose()?;
        Ok(Self { on, player, opponents: members, profile, seed, budget, warm_start })
    }
    /// A ``VecEnv`` of ``num_envs`` lanes of this request's ``player`` against its
    /// opponents, each opponent seat drawn per episode from its mixture (the weights of
    /// ``opponents``), played on the game's tree or its states; episodes keyed by ``seed``
    /// (default: the request's). A trainer in Python learns against the meta-mixture
    /// through it.
    #[pyo3(signature = (num_envs, seed=None))]
    fn env(&self, num_envs: usize, seed: Option<u64>) -> PyResult<PyVecEnv> {
        let mut seats: Vec<SharedSeat> = Vec::new();
        for (seat, _, policy, weight) in &self.opponents {
            match seats.iter_mut().find(|(s, _)| s == seat) {
                Some((_, members)) => members.push((Arc::clone(policy), *weight)),
                None => seats.push((*seat, vec![(Arc::clone(policy), *weight)])),
            }
        }
        PyVecEnv::new(self.on.handle(), self.player, seats, num_envs, seed.unwrap_or(self.seed))
    }
    /// Pickle as the constructor's arguments (for Ray tasks): on a tree, the policies as
    /// arrays; on a registry game played on its states, its game string and the policies
    /// as themselves (callables, and native policies pickled as their files).
    fn __reduce__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        let class = py.get_type::<PyResponseRequest>().into_any();
        let (game, opponents, profile, warm): (Bound<'py, PyAny>, Vec<Bound<'py, PyAny>>, _, _) = match &self
            .on
        {
            Source::Tree(game) => {
                let tree = &game.tree;
                let opponents = self
                    .opponents
                    .iter()
                    .map(|(p, id, pol, w)| {
                        (*p, *id, policy_array(py, tree, pol.as_ref())?, *w)
                            .into_pyobject(py)
                            .map(Bound::into_any)
                    })
                    .collect::<PyResult<_>>()?;
                let warm =
                    self.warm_start.as_ref().map(|w| policy_array(py, tree, w.as_ref())).transpose()?;
                let profile = self.profile.as_ref().map(|p| policy_array(py, tree, p)).transpose()?;
                (
                    Py::new(py, game.handle())?.into_bound(py).into_any(),
                    opponents,
                    profile.map(Bound::into_any),
                    warm.map(Bound::into_any),
                )
            }
            Source::States(AnyGame::External(_)) => {
                return Err(PyTypeError::new_err(format!(
                    "a request on {}, a game played through Python, cannot be pickled",
                    self.on.name()
                )));
            }
            Source::States(game) => {
                let opponents = self
                    .opponents
                    .iter()
                    .map(|(p, id, pol, w)| {
                        (*p, *id, self.on.to_python(py, *p, pol)?, *w).into_pyobject(py).map(Bound::into_any)
                    })
                    .collect::<PyResult<_>>()?;
                let warm =
                    self.warm_start.as_ref().map(|w| self.on.to_python(py, self.player, w)).transpose()?;
                (PyString::new(py, &game.name()).into_any(), opponents, None, warm.map(|w| w.into_bound(py)))
            }
        };
        let args = (game, self.player, opponents, profile, self.seed, self.budget, warm).into_pyobject(py)?;
        PyTuple::new(py, [class, args.into_any()])
    }
    /// The game, or None for a game played on its states (its tree was not built).
    #[getter]
    fn game(&self) -> Option<PyGame> {
        match &self.on {
            Source::Tree(g) => Some(g.handle()),
            Source::States(_) => None,
        }
    }
    /// The game string.
    #[getter]
    fn game_name(&self) -> String {
        self.on.name()
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
                d.set_item("policy", self.on.to_python(py, *player, policy)?)?;
                d.set_item("weight", weight)?;
                Ok(d)
            })
            .collect()
    }
    /// The opponents' mixtures aggregated into one behaviour policy (None on a game played
    /// on its states).
    #[getter]
    fn profile(&self) -> Option<PyPolicy> {
        match (&self.on, &self.profile) {
            (Source::Tree(g), Some(p)) => Some(PyPolicy::of(g, p.clone())),
            _ => None,
        }
    }
    /// A policy to start training from, or None.
    #[getter]
    fn warm_start(&self, py: Python<'_>) -> PyResult<Option<Py<PyAny>>> {
        self.warm_start.as_ref().map(|p| self.on.to_python(py, self.player, p)).transpose()
    }
    fn __repr__(&self) -> String {
        format!(
            "ResponseRequest({:?}, player={}, {} opponent members, seed={}, budget={:?})",
            self.on.name(),
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
    /// Whether its callable answers may be kept pickled.
    allow_pickle: bool,
    on: Source,
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
        let (opponents, profile, warm_start) = match &self.on {
            Source::Tree(_) => {
                // On a tree, Python oracles see tables: members that are not are tabulated.
                let tree = request.tree(self.name)?;
                let table = |p: &dyn Policy| -> populations::Result<Arc<dyn Policy>> {
                    Ok(Arc::new(TabularPolicy::of(tree, p)?.into_owned()))
                };
                let opponents = request
                    .opponents
                    .iter()
                    .map(|m| Ok((m.player.0, m.id.0, table(m.policy)?, m.weight)))
                    .collect::<populations::Result<_>>()?;
                let warm = request.warm_start.map(table).transpose()?;
                (opponents, Some(request.profile(self.name)?.clone()), warm)
            }
            Source::States(_) => {
                let opponents = request
                    .opponents
                    .iter()
                    .map(|m| {
                        let shared = match &m.shared {
                            Some(shared) => Arc::clone(shared),
                            None => owned(m.policy)?,
                        };
                        Ok((m.player.0, m.id.0, shared, m.weight))
                    })
                    .collect::<populations::Result<_>>()?;
                (opponents, None, request.warm_start.map(owned).transpose()?)
            }
        };
        let asked = PyResponseRequest {
            on: self.on.handle(),
            player: request.player.0,
            opponents,
            profile,
            seed: request.seed,
            budget,
            warm_start,
        };
        let failed = |reason: String| populations::Error::Oracle { name: self.name.into(), reason };
        let builtin = self.name != "python";
        let (policy, episodes) = Python::attach(|py| {
            let answer = match self.object.call_method1(py, "respond", (asked,)) {
                Ok(answer) => answer,
                Err(e) => {
                    let message = e.to_string();
                    *self.raised.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    return Err(failed(format!("respond() raised {message}")));
                }
            };
            // A built-in oracle's proxy answers `(policy, episodes)`: the episodes its
            // response used belong in the report as they would locally.
            let (answer, episodes) = if builtin {
                answer.extract::<(Bound<'_, PyAny>, u64)>(py).map_err(|e| {
                    failed(format!("the proxy of a built-in oracle answered no (policy, episodes): {e}"))
                })?
            } else {
                (answer.into_bound(py), 0)
            };
            let policy = self.on.answer(&answer, self.allow_pickle).map_err(|e| {
                failed(format!(
                    "respond() returned something that is not a policy of {}: {}",
                    self.on.name(),
                    e.value(py)
                ))
            })?;
            Ok((policy, episodes))
        })?;
        let mut stats = TrainingStats::default();
        stats.seconds = started.elapsed().as_secs_f64();
        stats.episodes = episodes;
        Response::of(policy, stats)
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
    /// The game played through Python, if the run is on one: a failed call of its code is
    /// the run's error, whatever the loop made of the play it spoiled.
    played: Option<AnyGame>,
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
            Ok(Err(e)) => {
                if let Some(game) = &self.played {
                    crate::played::PyPlayedGame::check(game)?;
                }
                Err(run_error(&e))
            }
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

/// The config from a dict or TOML text, for a run on the game named `game` (a game given
/// as its tree or played through Python) or on the registry game it names.
fn read_config(config: &Bound<'_, PyAny>, source: &Path, game: Option<&str>) -> PyResult<ExperimentConfig> {
    let parsed = if let Ok(dict) = config.cast::<PyDict>() {
        let table = toml_table(dict)?;
        ExperimentConfig::from_table(table, source, game)
    } else if let Ok(text) = config.cast::<PyString>() {
        let text = text.to_str()?;
        match game {
            Some(name) => ExperimentConfig::from_toml_str_on(text, source, name),
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
    #[pyo3(signature = (config, source, out, game=None, oracle=None, resume=false, evaluator=None, trainer=None, builtin_oracle=None, allow_pickle=false))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        config: &Bound<'_, PyAny>,
        source: PathBuf,
        out: PathBuf,
        game: Option<&Bound<'_, PyAny>>,
        oracle: Option<Py<PyAny>>,
        resume: bool,
        evaluator: Option<(Py<PyAny>, String)>,
        trainer: Option<Py<PyAny>>,
        builtin_oracle: Option<Py<PyAny>>,
        allow_pickle: bool,
    ) -> PyResult<Self> {
        // A game given: a `Game` (its tree) or a `PlayedGame` (played on its states only).
        let given = match game {
            None => None,
            Some(g) => Some(if let Ok(tree) = g.cast::<PyGame>() {
                Source::Tree(tree.get().handle())
            } else if let Ok(played) = g.cast::<crate::played::PyPlayedGame>() {
                Source::States(played.get().game.clone())
            } else {
                return Err(PyTypeError::new_err(format!(
                    "game: a metagame.Game or PlayedGame, not {}",
                    g.get_type().name()?
                )));
            }),
        };
        let config = read_config(config, &source, given.as_ref().map(Source::name).as_deref())?;
        let played = match &given {
            Some(Source::States(game)) => Some(game.clone()),
            _ => None,
        };
        // A Python oracle reads tables of the tree where the tree fits (as the CLI builds
        // it); on a game too large for its tree it is asked on the states, and the run
        // loads its game as the CLI does (neural PSRO on connect four, say).
        let on = match given {
            Some(on) => Some(on),
            None if oracle.is_some() || builtin_oracle.is_some() => {
                let (name, max_nodes) = (config.game().to_string(), config.max_nodes());
                let loaded =
                    py.detach(|| metagame::LoadedGame::load(&name, max_nodes)).map_err(|e| run_error(&e))?;
                Some(match loaded.into_parts() {
                    (_, Some(tree)) => Source::Tree(PyGame::new(tree)),
                    (game, None) => Source::States(game),
                })
            }
            None => None,
        };
        let tree = match &on {
            Some(Source::Tree(g)) => Some(Arc::clone(&g.tree)),
            _ => None,
        };
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
                allow_pickle,
                // INVARIANT: the game is loaded whenever an oracle is given (above).
                on: on.as_ref().expect("the game of an oracle's run").handle(),
                raised: Arc::clone(&raised),
            };
            components = components.with_oracle(Box::new(oracle));
        } else if let Some(object) = builtin_oracle {
            // A proxy (Ray tasks) for the config's own oracle: its name and exactness.
            let built = config.algorithm().oracle().map_err(|e| run_error(&e))?;
            let Some(built) = built.filter(|o| !o.remembers_requests()) else {
                return Err(PyValueError::new_err(
                    "only a built-in oracle that keeps nothing between requests answers elsewhere (minimax-q shaped by the other seat's responses does not)",
                ));
            };
            // INVARIANT: the game is loaded whenever an oracle is given (above).
            let on = on.as_ref().expect("the game of an oracle's run");
            if built.is_exact() && matches!(on, Source::States(_)) {
                return Err(PyValueError::new_err(format!(
                    "an exact oracle needs the game tree, and {} is too large for it",
                    config.game()
                )));
            }
            let oracle = PythonOracle {
                object,
                name: built.name(),
                exact: built.is_exact(),
                allow_pickle,
                on: on.handle(),
                raised: Arc::clone(&raised),
            };
            components = components.with_oracle(Box::new(oracle));
        }
        if let Some((callable, name)) = evaluator {
            // The evaluator a Python callable stands for, under its registry name.
            let name = match name.as_str() {
                "exact" => "exact",
                "cpu" => "cpu",
                "rollout" => "rollout",
                other => {
                    return Err(PyValueError::new_err(format!(
                        "evaluator `{other}` cannot be distributed (exact, cpu, rollout can)"
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
        let played_game = played.clone();
        let thread = std::thread::spawn(move || {
            // A resumed run reads its pickled members only when it allows pickle.
            let _ = crate::callable_policy::allow_pickle_reads(allow_pickle);
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
            match (&tree, &played) {
                (Some(tree), _) => run_experiment_on(&config, tree, &options, components, &mut observer),
                (None, Some(game)) => {
                    run_experiment_on_rules(&config, game, &options, components, &mut observer)
                }
                (None, None) => run_experiment_with(&config, &options, components, &mut observer),
            }
        });
        let running = Running {
            reports: Mutex::new(reports),
            commands,
            interrupt,
            thread: Some(thread),
            raised,
            waiting: false,
            played: played_game,
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

/// ``(name, exact, copyable)`` of the oracle a config names (None for loops that ask no
/// oracle): ``copyable`` when it keeps nothing between requests, so that its responses may
/// be computed by copies of it (Ray tasks).
#[pyfunction]
#[pyo3(signature = (config, source, game=None))]
fn config_oracle(
    config: &Bound<'_, PyAny>,
    source: PathBuf,
    game: Option<&PyGame>,
) -> PyResult<Option<(String, bool, bool)>> {
    let config = read_config(config, &source, game.map(|g| g.tree.name()))?;
    let oracle = config.algorithm().oracle().map_err(|e| run_error(&e))?;
    Ok(oracle.map(|o| (o.name().to_string(), o.is_exact(), !o.remembers_requests())))
}

/// The response of the oracle a config names to ``request``, as ``(policy, episodes)``:
/// the work of one Ray task of ``metagame.distributed``, for oracles that keep nothing
/// between requests (exact best responses; ``ppo``, ``dqn`` and the unshaped tabular
/// learners, which train a fresh learner per request). On a tree the policy is a
/// ``Policy``; on a game played on its states, the response's network as a
/// ``NativePolicy``.
#[pyfunction]
fn respond_builtin(
    py: Python<'_>,
    config: &Bound<'_, PyAny>,
    request: &PyResponseRequest,
) -> PyResult<(Py<PyAny>, u64)> {
    let game = match &request.on {
        Source::Tree(g) => Some(g.tree.name().to_string()),
        Source::States(_) => None,
    };
    let config = read_config(config, Path::new("<config>"), game.as_deref())?;
    let Some(mut oracle) = config.algorithm().oracle().map_err(|e| run_error(&e))? else {
        return Err(PyValueError::new_err(format!(
            "algorithm `{}` asks no oracle",
            config.algorithm().algorithm().as_str()
        )));
    };
    if oracle.remembers_requests() {
        return Err(PyValueError::new_err(format!(
            "oracle `{}` keeps state between requests: it answers only in the run's own process",
            oracle.name()
        )));
    }
    let on = request.on.handle();
    let (player, seed, budget) = (request.player, request.seed, request.budget);
    let opponents = request.opponents.clone();
    let warm = request.warm_start.clone();
    let profile = request.profile.clone();
    let large = match &on {
        Source::Tree(g) => g.tree.num_nodes() >= crate::errors::SMALL_TREE,
        Source::States(_) => true,
    };
    let job_on = on.handle();
    let answered = crate::errors::released(py, large, move || {
        let on = job_on;
        let members = opponents
            .iter()
            .map(|(seat, id, policy, weight)| {
                WeightedMember::new(PlayerId(*seat), PolicyId(*id), policy.as_ref(), *weight)
            })
            .collect();
        let mut asked =
            ResponseRequest::in_arena(on.arena(), PlayerId(player), members, profile.as_ref(), seed);
        if let Some(n) = budget {
            asked = asked.with_budget(Budget::Episodes(n));
        }
        if let Some(w) = &warm {
            asked = asked.with_warm_start(w.as_ref());
        }
        let response = oracle.respond(&asked)?;
        let episodes = response.stats.episodes;
        let policy = response.policy.shared()?;
        Ok::<_, populations::Error>((policy, episodes))
    })?
    .map_err(|e| value_error(&e))?;
    if let Some(failure) = played_failure(&on) {
        return Err(PyValueError::new_err(failure));
    }
    let (policy, episodes) = answered;
    Ok((on.to_python(py, player, &policy)?, episodes))
}

/// The failure a game played through Python met since last asked (its results are not to
/// be used).
fn played_failure(on: &Source) -> Option<String> {
    match on {
        Source::States(AnyGame::External(game)) => game.take_failure(),
        _ => None,
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(config_oracle, m)?)?;
    m.add_function(wrap_pyfunction!(respond_builtin, m)?)?;
    m.add_class::<PyExperiment>()?;
    m.add_class::<PyResponseRequest>()?;
    Ok(())
}
