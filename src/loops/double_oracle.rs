//! The `double-oracle` loop: Double Oracle ([`DoubleOracle`]) on the game's normal form
//! (matrix games, or small trees through their pure strategies).

use metagame_games::{Arena, NormalFormGame};
use metagame_populations::{DoubleOracle, DoubleOracleConfig, DoubleOracleConfigBuilder};
use toml::Table;

use super::section::{Drive, LoopSection};
use crate::fields::{FieldError, group, table_of};
use crate::error::Result;
use crate::components::Components;

/// The Double Oracle section.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DoubleOracleSection {
    /// The loop's settings.
    pub double_oracle: DoubleOracleConfig,
}

impl LoopSection for DoubleOracleSection {
    const NAME: &'static str = "double-oracle";
    const PLAYERS: Option<usize> = Some(2);
    const TITLE: &'static str = "Double Oracle";
    const ABOUT: &'static str = "Double Oracle on the normal form (2-player zero-sum)";
    const EXAMPLE: &'static str = include_str!("../../examples/config/double-oracle.toml");
    const FILES: &'static [&'static str] = &["config.toml", "checkpoint.json", "history.jsonl", "report.json", "meta_game.nfg", "exploitability.svg", "mixtures.svg", "payoffs.svg", "report.html"];

    fn fields() -> Vec<&'static str> {
        DoubleOracleConfigBuilder::FIELDS.to_vec()
    }

    fn parse(table: &Table) -> Result<Self, FieldError> {
        let double_oracle =
            group::<DoubleOracleConfigBuilder>(table, DoubleOracleConfigBuilder::FIELDS)?.build()?;
        Ok(DoubleOracleSection { double_oracle })
    }

    fn write(&self, table: &mut Table) {
        table.extend(table_of(DoubleOracleConfigBuilder::from(self.double_oracle.clone())));
    }

    fn run<D: Drive>(
        &self,
        arena: Arena<'_>,
        mut driver: D,
        components: Components,
    ) -> Result<D::Output> {
        let tree = arena.need_tree(Self::NAME)?;
        let normal_form = match components.normal_form {
            Some(game) => game,
            None => NormalFormGame::from_tree(tree)?,
        };
        let run = match driver.saved_state()? {
            Some((state, reports)) => DoubleOracle::resume(normal_form, self.double_oracle.clone(), state, &reports)?,
            None => DoubleOracle::new(normal_form, [0, 0], self.double_oracle.clone())?,
        };
        driver.run(run)
    }
}
