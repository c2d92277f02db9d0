//! The `mccfr` loop: Monte Carlo CFR ([`Mccfr`]: outcome or external sampling) on the game
//! tree.

use metagame_games::Arena;
use metagame_populations::loops::mccfr::{Mccfr, MccfrConfig, MccfrConfigBuilder};
use toml::Table;

use super::section::{Drive, LoopSection};
use crate::components::Components;
use crate::error::Result;
use crate::fields::{FieldError, group, table_of};

/// The MCCFR section: the [`MccfrConfig`] fields (`sampling`, outcome sampling's `epsilon`,
/// external sampling's `average`, `traversals_per_iteration`, `seed`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct MccfrSection {
    /// The loop's settings.
    pub mccfr: MccfrConfig,
}

impl LoopSection for MccfrSection {
    const NAME: &'static str = "mccfr";
    const TITLE: &'static str = "MCCFR";
    const ABOUT: &'static str = "Monte Carlo CFR: outcome sampling or external sampling";
    const EXAMPLE: &'static str = include_str!("../../examples/config/mccfr.toml");
    const FILES: &'static [&'static str] =
        &["config.toml", "checkpoint.json", "history.jsonl", "report.json", "exploitability.svg", "report.html"];

    fn fields() -> Vec<&'static str> {
        MccfrConfigBuilder::FIELDS.to_vec()
    }

    fn parse(table: &Table) -> Result<Self, FieldError> {
        let mccfr = group::<MccfrConfigBuilder>(table, MccfrConfigBuilder::FIELDS)?.build()?;
        Ok(MccfrSection { mccfr })
    }

    fn write(&self, table: &mut Table) {
        table.extend(table_of(MccfrConfigBuilder::from(self.mccfr.clone())));
    }

    fn figure_title(&self) -> String {
        format!("MCCFR ({} sampling, average policy)", self.mccfr.sampling().as_str())
    }

    fn run<D: Drive>(
        &self,
        arena: Arena<'_>,
        mut driver: D,
        _components: Components,
    ) -> Result<D::Output> {
        let tree = arena.need_tree(Self::NAME)?;
        let mccfr = match driver.saved_state()? {
            Some((state, reports)) => Mccfr::resume(tree, self.mccfr.clone(), state, &reports)?,
            None => Mccfr::new(tree, self.mccfr.clone())?,
        };
        driver.run(mccfr)
    }
}
