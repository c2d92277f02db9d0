//! The `fxp` loop: Fictitious Cross-Play ([`Fxp`]), a main policy and a counter population.

use metagame_games::{Arena, ExactEvaluator};
use metagame_solvers::nash::Nash;
use metagame_populations::{Fxp, FxpConfig, FxpConfigBuilder};
use toml::Table;

use super::section::{Drive, LoopSection};
use crate::fields::{FieldError, group, table_of};
use crate::error::Result;
use crate::components::Components;

/// The FXP section: the [`FxpConfig`] fields (`eta`, `learning_rate`, `max_steps`, `seed`).
/// Its components are exact: the `nash` meta-solver and exact payoffs (a library user can pass
/// others); its answers are exact best responses on the tree, as the authors' code computes
/// them, so it takes no oracle. It plays 2-player zero-sum games and games of two teams
/// (`team_rps`), the only loop that plays teams as teams.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FxpSection {
    /// The loop's settings.
    pub fxp: FxpConfig,
}

impl LoopSection for FxpSection {
    const NAME: &'static str = "fxp";
    const PLAYS_TEAMS: bool = true;
    const TITLE: &'static str = "FXP";
    const ABOUT: &'static str = "Fictitious Cross-Play: a main policy and a population of counters";
    const EXAMPLE: &'static str = include_str!("../../examples/config/fxp.toml");
    const FILES: &'static [&'static str] = &["config.toml", "checkpoint.json", "history.jsonl", "report.json", "meta_game.nfg", "lineage.dot", "exploitability.svg", "mixtures.svg", "payoffs.svg", "report.html"];

    fn fields() -> Vec<&'static str> {
        FxpConfigBuilder::FIELDS.to_vec()
    }

    fn parse(table: &Table) -> Result<Self, FieldError> {
        let fxp = group::<FxpConfigBuilder>(table, FxpConfigBuilder::FIELDS)?.build()?;
        Ok(FxpSection { fxp })
    }

    fn write(&self, table: &mut Table) {
        table.extend(table_of(FxpConfigBuilder::from(self.fxp.clone())));
    }

    fn run<D: Drive>(
        &self,
        arena: Arena<'_>,
        mut driver: D,
        components: Components,
    ) -> Result<D::Output> {
        let tree = arena.need_tree(Self::NAME)?;
        let meta_solver = components.meta_solver.unwrap_or_else(|| Box::new(Nash::default()));
        let evaluator = components.evaluator.unwrap_or_else(|| Box::new(ExactEvaluator));
        let fxp = match driver.saved_state()? {
            Some((state, reports)) => Fxp::resume(tree, self.fxp.clone(), meta_solver, evaluator, state, &reports)?,
            None => Fxp::new(tree, self.fxp.clone(), meta_solver, evaluator)?,
        };
        driver.run(fxp)
    }
}
