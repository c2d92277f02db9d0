//! The `cfr` loop: the CFR family ([`Cfr`]: vanilla CFR, CFR+, linear CFR, DCFR) on the game
//! tree.

use metagame_games::Arena;
use metagame_populations::loops::cfr::{Cfr, CfrConfig, CfrConfigBuilder};
use toml::Table;

use super::section::{Drive, LoopSection};
use crate::fields::{FieldError, group, table_of};
use crate::error::Result;
use crate::components::Components;

/// The CFR section: the [`CfrConfig`] fields (`variant`, `alternating`, DCFR's `alpha`,
/// `beta`, `gamma`, `nash_conv_every` and `walk`).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct CfrSection {
    /// The loop's settings.
    pub cfr: CfrConfig,
}

impl LoopSection for CfrSection {
    const NAME: &'static str = "cfr";
    const TITLE: &'static str = "CFR";
    const ABOUT: &'static str = "counterfactual regret minimisation: CFR, CFR+, linear CFR or DCFR";
    const EXAMPLE: &'static str = include_str!("../../examples/config/cfr.toml");
    const FILES: &'static [&'static str] = &["config.toml", "checkpoint.json", "history.jsonl", "report.json", "exploitability.svg", "report.html"];

    fn fields() -> Vec<&'static str> {
        CfrConfigBuilder::FIELDS.to_vec()
    }

    fn parse(table: &Table) -> Result<Self, FieldError> {
        let cfr = group::<CfrConfigBuilder>(table, CfrConfigBuilder::FIELDS)?.build()?;
        Ok(CfrSection { cfr })
    }

    fn write(&self, table: &mut Table) {
        table.extend(table_of(CfrConfigBuilder::from(self.cfr.clone())));
    }

    fn figure_title(&self) -> String {
        format!("{} (average policy)", self.cfr.variant().as_str().to_uppercase())
    }

    fn run<D: Drive>(
        &self,
        arena: Arena<'_>,
        mut driver: D,
        _components: Components,
    ) -> Result<D::Output> {
        let tree = arena.need_tree(Self::NAME)?;
        let cfr = match driver.saved_state()? {
            Some((state, reports)) => Cfr::resume(tree, self.cfr.clone(), state, &reports)?,
            None => Cfr::new(tree, self.cfr.clone())?,
        };
        driver.run(cfr)
    }
}
