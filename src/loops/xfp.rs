//! The `xfp` loop: extensive-form fictitious play ([`Xfp`]) on the game tree.

use metagame_games::Arena;
use metagame_populations::Xfp;
use toml::Table;

use super::section::{Drive, LoopSection};
use crate::fields::FieldError;
use crate::error::Result;
use crate::components::Components;

/// The XFP section: it has no fields of its own (the run limits say how long it lasts).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct XfpSection {}

impl LoopSection for XfpSection {
    const NAME: &'static str = "xfp";
    const TITLE: &'static str = "XFP";
    const ABOUT: &'static str = "extensive-form fictitious play with exact best responses";
    const EXAMPLE: &'static str = include_str!("../../examples/config/xfp.toml");
    const FILES: &'static [&'static str] = &["config.toml", "checkpoint.json", "history.jsonl", "report.json", "exploitability.svg", "report.html"];

    fn fields() -> Vec<&'static str> {
        Vec::new()
    }

    fn parse(_table: &Table) -> Result<Self, FieldError> {
        Ok(XfpSection {})
    }

    fn write(&self, _table: &mut Table) {}

    fn run<D: Drive>(
        &self,
        arena: Arena<'_>,
        mut driver: D,
        _components: Components,
    ) -> Result<D::Output> {
        let tree = arena.need_tree(Self::NAME)?;
        let xfp = match driver.saved_state()? {
            Some((state, reports)) => Xfp::resume(tree, state, &reports)?,
            None => Xfp::new(tree)?,
        };
        driver.run(xfp)
    }
}
