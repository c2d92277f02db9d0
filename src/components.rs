//! [`Components`]: a run's components given as values instead of by name.

use metagame_games::{MatchEvaluator, NormalFormGame};
use metagame_populations::{LeagueTrainer, Oracle};
use metagame_solvers::MetaSolver;

/// Components to use instead of the ones the config names (e.g. your own oracle or
/// evaluator); `None` takes the config's. Loops that do not use a component ignore it.
#[derive(Default)]
#[non_exhaustive]
pub struct Components {
    /// The meta-solver (PSRO; FXP, default `nash`).
    pub meta_solver: Option<Box<dyn MetaSolver>>,
    /// The oracle (PSRO; FXP, default exact best responses).
    pub oracle: Option<Box<dyn Oracle>>,
    /// The payoff evaluator (PSRO; FXP, default exact).
    pub evaluator: Option<Box<dyn MatchEvaluator>>,
    /// What trains the league's agents each round (the league; default this machine's
    /// threads).
    pub trainer: Option<Box<dyn LeagueTrainer>>,
    /// The game as the payoff table Double Oracle solves (default: a registry matrix game's
    /// own table, with its title and strategy names, which
    /// [`run_experiment_with`](crate::run_experiment_with) fills in; otherwise the normal
    /// form of the tree).
    pub normal_form: Option<NormalFormGame>,
}

impl Components {
    /// The same components with `evaluator`.
    pub fn with_evaluator(mut self, evaluator: Box<dyn MatchEvaluator>) -> Self {
        self.evaluator = Some(evaluator);
        self
    }
    /// The same components with `oracle`.
    pub fn with_oracle(mut self, oracle: Box<dyn Oracle>) -> Self {
        self.oracle = Some(oracle);
        self
    }
    /// The same components with `trainer`.
    pub fn with_trainer(mut self, trainer: Box<dyn LeagueTrainer>) -> Self {
        self.trainer = Some(trainer);
        self
    }
    /// The same components with `normal_form`.
    pub fn with_normal_form(mut self, normal_form: NormalFormGame) -> Self {
        self.normal_form = Some(normal_form);
        self
    }
    /// The same components with `meta_solver`.
    pub fn with_meta_solver(mut self, meta_solver: Box<dyn MetaSolver>) -> Self {
        self.meta_solver = Some(meta_solver);
        self
    }
}
