//! `metagame.VecEnv`: one seat of a game as a vectorised environment in Gymnasium's
//! `VectorEnv` form, played in Rust (`games::VecEnv`), the other seats drawn per episode from
//! a mixture of policies that answer whole batches, so that a Python trainer learns against
//! a meta-mixture at Rust speed.

use std::sync::Arc;

use metagame::games::{ActionId, AnyGame, Arena, Policy, SharedSeat, VecEnv, registry};
use numpy::{PyArray1, PyArray2};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};

use crate::callable_policy::CallablePolicy;
use crate::errors::{run_error, value_error};
use crate::game::PyGame;
use crate::native_policy::PyNativePolicy;
use crate::played::PyPlayedGame;
use crate::policy::as_policy;

/// What a game handed over from Python is played on: a game's states (a registry game, a
/// `PlayedGame`), or a tree (a `Game`'s).
pub enum Source {
    States(AnyGame),
    Tree(PyGame),
}

impl Source {
    /// What it is played on.
    pub fn arena(&self) -> Arena<'_> {
        match self {
            Source::States(game) => Arena::rules(game),
            Source::Tree(g) => Arena::tree(&g.tree),
        }
    }

    /// Another handle on the same game.
    pub fn handle(&self) -> Self {
        match self {
            Source::Tree(g) => Source::Tree(g.handle()),
            Source::States(g) => Source::States(g.clone()),
        }
    }
}

/// ``num_envs`` lanes of seat ``player`` of ``game``, the other seats played by
/// ``opponents``, one drawn per episode with ``weights`` (default: equal). ``game`` is a
/// game string (played on its states: ``"connect_four"``) or a ``Game`` (played on its tree;
/// OpenSpiel games read by ``from_pyspiel`` too). An opponent is a name such as
/// ``"uniform"``, a policy file, a callable ``policy(obs, legal) -> probs``, or on a
/// ``Game`` any policy form ``Policy`` takes. ``ResponseRequest.env`` makes one against a
/// PSRO request's opponents. Episodes are keyed by ``seed``: the same seed and actions give the same
/// episodes, whatever ``num_envs``.
///
/// Gymnasium's ``VectorEnv`` form: ``reset()`` gives ``(obs, infos)`` and ``step(actions)``
/// ``(obs, rewards, terminations, truncations, infos)``, with ``obs`` ``[num_envs × d]``
/// float32 (OpenSpiel's tensor) and ``infos["action_mask"]`` ``[num_envs × A]`` bool. A
/// lane whose episode ends starts the next one in the same step (Gymnasium's same-step
/// autoreset): its reward and termination are the ended episode's, its observation the new
/// episode's first.
#[pyclass(module = "metagame", name = "VecEnv", unsendable)]
pub struct PyVecEnv {
    source: Source,
    opponents: Vec<SharedSeat>,
    player: usize,
    num_envs: usize,
    seed: u64,
    env: VecEnv<'static>,
}

/// An opponent policy given from Python: a name or file, a callable, or on a tree a table.
pub fn opponent(source: &Source, obj: &Bound<'_, PyAny>) -> PyResult<Arc<dyn Policy>> {
    if let Ok(spec) = obj.cast::<PyString>() {
        let policy =
            metagame::registry::policy(source.arena(), &spec.to_string()).map_err(|e| run_error(&e))?;
        return Ok(Arc::from(policy));
    }
    if let Ok(native) = obj.cast::<PyNativePolicy>() {
        return Ok(Arc::clone(&native.get().policy));
    }
    if !obj.hasattr("action_probabilities")?
        && !obj.hasattr("state_lookup")?
        && let Some(callable) = CallablePolicy::of(obj)?
    {
        return Ok(Arc::new(callable));
    }
    match source {
        Source::Tree(g) => Ok(Arc::new(as_policy(&g.tree, obj)?)),
        Source::States(_) => Err(PyTypeError::new_err(format!(
            "an opponent is a policy name or file, or a callable policy(obs, legal) -> probs, not {} (tables need the game tree: pass a metagame.Game)",
            obj.get_type().name()?
        ))),
    }
}

impl PyVecEnv {
    fn observe<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyDict>)> {
        let (n, d, a) = (self.num_envs, self.env.tensor_size(), self.env.num_actions());
        let (mut obs, mut legal) = (vec![0.0f32; n * d], vec![false; n * a]);
        self.env.observe(&mut obs, &mut legal);
        let obs = ndarray::Array2::from_shape_vec((n, d), obs).map_err(value_error)?;
        let legal = ndarray::Array2::from_shape_vec((n, a), legal).map_err(value_error)?;
        let infos = PyDict::new(py);
        infos.set_item("action_mask", PyArray2::from_owned_array(py, legal))?;
        Ok((PyArray2::from_owned_array(py, obs), infos))
    }

    /// The failure of a played game's states (pyspiel raising), if any met this call.
    fn checked(&self) -> PyResult<()> {
        match &self.source {
            Source::States(game) => PyPlayedGame::check(game),
            Source::Tree(_) => Ok(()),
        }
    }

    fn build(&self, seed: u64) -> PyResult<VecEnv<'static>> {
        build(&self.source, self.player, &self.opponents, self.num_envs, seed)
    }

    /// An environment of seat `player` against `opponents` (one mixture per other seat).
    ///
    /// # Errors
    ///
    /// `ValueError` for a setup `games::VecEnv` refuses, or an opponent failing at once.
    pub fn new(
        source: Source,
        player: usize,
        opponents: Vec<SharedSeat>,
        num_envs: usize,
        seed: u64,
    ) -> PyResult<Self> {
        let env = build(&source, player, &opponents, num_envs, seed)?;
        Ok(Self { source, opponents, player, num_envs, seed, env })
    }
}

fn build(
    source: &Source,
    player: usize,
    opponents: &[SharedSeat],
    num_envs: usize,
    seed: u64,
) -> PyResult<VecEnv<'static>> {
    match source {
        Source::States(game) => VecEnv::on_states(game, player, opponents, num_envs, seed),
        Source::Tree(g) => VecEnv::on_tree(Arc::clone(&g.tree), player, opponents, num_envs, seed),
    }
    .map_err(value_error)
}

#[pymethods]
impl PyVecEnv {
    #[new]
    #[pyo3(signature = (game, num_envs, player=0, opponents=None, weights=None, seed=0))]
    fn py_new(
        game: &Bound<'_, PyAny>,
        num_envs: usize,
        player: usize,
        opponents: Option<Vec<Bound<'_, PyAny>>>,
        weights: Option<Vec<f64>>,
        seed: u64,
    ) -> PyResult<Self> {
        let source = if let Ok(g) = game.cast::<PyGame>() {
            Source::Tree(g.get().handle())
        } else if let Ok(g) = game.cast::<PyPlayedGame>() {
            Source::States(g.get().game.clone())
        } else if let Ok(s) = game.cast::<PyString>() {
            Source::States(registry::load(&s.to_string()).map_err(value_error)?)
        } else {
            return Err(PyTypeError::new_err(format!(
                "game: a game string, a metagame.Game or a metagame.PlayedGame, not {}",
                game.get_type().name()?
            )));
        };
        let members = match &opponents {
            Some(list) => list.iter().map(|o| opponent(&source, o)).collect::<PyResult<Vec<_>>>()?,
            None => vec![opponent(&source, &PyString::new(game.py(), "uniform").into_any())?],
        };
        let weights = weights.unwrap_or_else(|| vec![1.0 / members.len() as f64; members.len()]);
        if weights.len() != members.len() {
            return Err(PyValueError::new_err(format!(
                "{} weights for {} opponents",
                weights.len(),
                members.len()
            )));
        }
        let mixture: Vec<(Arc<dyn Policy>, f64)> = members.into_iter().zip(weights).collect();
        let (name, num_players) = (source.arena().name(), source.arena().num_players());
        if player >= num_players {
            return Err(PyValueError::new_err(format!(
                "player {player} does not exist: {name} has {num_players} players"
            )));
        }
        let opponents = (0..num_players).filter(|&s| s != player).map(|s| (s, mixture.clone())).collect();
        Self::new(source, player, opponents, num_envs, seed)
    }

    /// Start every lane at a new episode, numbered from 0 again (``seed`` replaces the
    /// environment's); ``(obs, infos)``.
    #[pyo3(signature = (seed=None, options=None))]
    fn reset<'py>(
        &mut self,
        py: Python<'py>,
        seed: Option<u64>,
        options: Option<Bound<'py, PyAny>>,
    ) -> PyResult<(Bound<'py, PyArray2<f32>>, Bound<'py, PyDict>)> {
        let _ = options;
        if let Some(seed) = seed {
            self.seed = seed;
        }
        self.env = self.build(self.seed)?;
        self.checked()?;
        self.observe(py)
    }

    /// Take one action per lane (ints, legal where ``infos["action_mask"]`` says);
    /// ``(obs, rewards, terminations, truncations, infos)``.
    #[allow(clippy::type_complexity)]
    fn step<'py>(
        &mut self,
        py: Python<'py>,
        actions: Vec<i64>,
    ) -> PyResult<(
        Bound<'py, PyArray2<f32>>,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyArray1<bool>>,
        Bound<'py, PyDict>,
    )> {
        let actions = actions
            .into_iter()
            .map(|a| usize::try_from(a).map(ActionId))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| PyValueError::new_err("actions are action ids, not negative numbers"))?;
        let steps = self.env.step(&actions).map_err(value_error)?;
        self.checked()?;
        let rewards: Vec<f64> = steps.iter().map(|s| s.reward).collect();
        let done: Vec<bool> = steps.iter().map(|s| s.done).collect();
        let (obs, infos) = self.observe(py)?;
        let truncated = vec![false; self.num_envs];
        Ok((
            obs,
            PyArray1::from_vec(py, rewards),
            PyArray1::from_vec(py, done),
            PyArray1::from_vec(py, truncated),
            infos,
        ))
    }

    /// Nothing to release (Gymnasium's ``close``).
    fn close(&self) {}

    /// Number of lanes.
    #[getter]
    fn num_envs(&self) -> usize {
        self.num_envs
    }
    /// The seat the learner plays.
    #[getter]
    fn player(&self) -> usize {
        self.player
    }
    /// Values in one observation (OpenSpiel's tensor, flattened).
    #[getter]
    fn observation_size(&self) -> usize {
        self.env.tensor_size()
    }
    /// Number of distinct actions (the width of an action mask).
    #[getter]
    fn num_actions(&self) -> usize {
        self.env.num_actions()
    }
    /// ``(episodes, mean return)`` of the learner over the episodes ended since the last
    /// reset.
    #[getter]
    fn finished(&self) -> (u64, f64) {
        let (n, sum) = self.env.finished();
        (n, if n == 0 { 0.0 } else { sum / n as f64 })
    }
    fn __repr__(&self) -> String {
        format!("VecEnv({:?}, player {}, {} lanes)", self.source.arena().name(), self.player, self.num_envs)
    }
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyVecEnv>()?;
    Ok(())
}
