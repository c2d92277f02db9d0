//! The `psro` loop: Policy-Space Response Oracles ([`Psro`]) with its components by name.

use metagame_games::Arena;
use metagame_populations::{Oracle, Psro, PsroConfig, PsroConfigBuilder};
use toml::{Table, Value};

use super::section::{Drive, LoopSection};
use crate::fields::{FieldError, group, parse_name, table_of};
use crate::error::Result;
use crate::components::Components;
use crate::registry::{EvaluatorName, LearnerSettings, MetaSolverName, OracleName};

/// The PSRO section: its components by name and its settings.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PsroSection {
    /// The meta-solver. Default `nash`.
    pub meta_solver: MetaSolverName,
    /// The oracle. Default `exact-br`.
    pub oracle: OracleName,
    /// `exact-br-trembling`: the opponents' tremble probability, in (0, 1). Default 1e-2.
    pub tremble: Option<f64>,
    /// The learned oracles' settings (the `[learner]` table; its defaults when absent);
    /// `None` for the exact oracles.
    pub learner: Option<LearnerSettings>,
    /// The payoff evaluator. Default `exact`.
    pub evaluator: EvaluatorName,
    /// The loop's settings.
    pub psro: PsroConfig,
}

impl PsroSection {
    /// Default tremble probability of `exact-br-trembling`.
    pub const DEFAULT_TREMBLE: f64 = 1e-2;

    /// The oracle the section names, with its settings.
    ///
    /// # Errors
    ///
    /// As [`OracleName::build`].
    pub fn build_oracle(&self) -> Result<Box<dyn Oracle>> {
        self.oracle.build(self.tremble.unwrap_or_default(), self.learner.as_ref())
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct TrembleField {
    tremble: Option<f64>,
}

impl LoopSection for PsroSection {
    const NAME: &'static str = "psro";
    const USES_ORACLE: bool = true;
    const NEEDS_TREE: bool = false;
    const TITLE: &'static str = "PSRO";
    const ABOUT: &'static str = "Policy-Space Response Oracles with any meta-solver, oracle and evaluator";
    const EXAMPLE: &'static str = include_str!("../../examples/config/psro.toml");
    const FILES: &'static [&'static str] = &["config.toml", "checkpoint.json", "history.jsonl", "report.json", "meta_game.nfg", "lineage.dot", "exploitability.svg", "mixtures.svg", "payoffs.svg", "report.html"];

    fn fields() -> Vec<&'static str> {
        let mut fields = vec!["meta_solver", "oracle", "tremble", "learner", "evaluator"];
        fields.extend(PsroConfigBuilder::FIELDS);
        fields
    }

    fn parse(table: &Table) -> Result<Self, FieldError> {
        let meta_solver = parse_name(table, "meta_solver")?.unwrap_or_default();
        let oracle: OracleName = parse_name(table, "oracle")?.unwrap_or_default();
        let evaluator: EvaluatorName = parse_name(table, "evaluator")?.unwrap_or_default();
        let tremble: Option<f64> = group::<TrembleField>(table, &["tremble"])?.tremble;
        let tremble = match (oracle.reads_tremble(), tremble) {
            (false, Some(_)) => {
                return Err(FieldError(format!(
                    "field `tremble` is not read by oracle `{oracle}` (only by `exact-br-trembling`)"
                )));
            }
            (false, None) => None,
            (true, t) => {
                let t = t.unwrap_or(Self::DEFAULT_TREMBLE);
                if !(t > 0.0 && t < 1.0) {
                    return Err(FieldError(format!("tremble must be in (0, 1), got {t}")));
                }
                Some(t)
            }
        };
        let learner = match (oracle.is_learned(), table.get("learner")) {
            (false, None) => None,
            (true, None) => LearnerSettings::defaults(oracle),
            (_, Some(Value::Table(t))) => Some(LearnerSettings::from_table(oracle, t).map_err(FieldError)?),
            (_, Some(other)) => {
                return Err(FieldError(format!("learner: expected a table, got {}", other.type_str())));
            }
        };
        for field in ["episodes_per_entry", "entry_stderr_target", "max_episodes_per_entry"] {
            if !evaluator.samples() && table.contains_key(field) {
                return Err(FieldError(format!(
                    "field `{field}` is not read by evaluator `{evaluator}` (only by the sampled ones: cpu, gpu, rollout)"
                )));
            }
        }
        let psro = group::<PsroConfigBuilder>(table, PsroConfigBuilder::FIELDS)?.build()?;
        Ok(PsroSection { meta_solver, oracle, tremble, learner, evaluator, psro })
    }

    fn write(&self, t: &mut Table) {
        t.insert("meta_solver".into(), Value::String(self.meta_solver.into()));
        t.insert("oracle".into(), Value::String(self.oracle.into()));
        if let Some(tremble) = self.tremble {
            t.insert("tremble".into(), Value::Float(tremble));
        }
        t.insert("evaluator".into(), Value::String(self.evaluator.into()));
        if let Some(learner) = &self.learner {
            t.insert("learner".into(), Value::Table(learner.to_table()));
        }
        let mut psro = PsroConfigBuilder::from(self.psro.clone());
        if !self.evaluator.samples() {
            psro.episodes_per_entry = None;
            psro.entry_stderr_target = None;
            psro.max_episodes_per_entry = None;
        }
        t.extend(table_of(psro));
    }

    fn figure_title(&self) -> String {
        format!("PSRO ({}, {})", self.meta_solver, self.oracle)
    }

    fn oracle(&self) -> Result<Option<Box<dyn Oracle>>> {
        self.build_oracle().map(Some)
    }

    fn run<D: Drive>(
        &self,
        arena: Arena<'_>,
        mut driver: D,
        components: Components,
    ) -> Result<D::Output> {
        let meta_solver = components.meta_solver.unwrap_or_else(|| self.meta_solver.build());
        let oracle = match components.oracle {
            Some(o) => o,
            None => self.build_oracle()?,
        };
        let evaluator = match components.evaluator {
            Some(e) => e,
            None => self.evaluator.build()?,
        };
        let psro = match driver.saved_state::<metagame_populations::PsroState>()? {
            Some((mut state, reports)) => {
                // Members that are not tables, from the files the checkpoint names (their
                // hashes checked).
                for stored in state.population.stored_mut() {
                    let bytes = driver.member_file(stored.file())?;
                    stored.load(&bytes, |kind, bytes| {
                        crate::registry::policy_from_file(kind, bytes).map_err(|e| e.to_string())
                    })?;
                }
                Psro::resume(arena, self.psro.clone(), meta_solver, oracle, evaluator, state, &reports)?
            }
            None => {
                let cutoff = driver.start_cutoff();
                match Psro::new_until(arena, self.psro.clone(), meta_solver, oracle, evaluator, cutoff) {
                    Err(metagame_populations::Error::CutOff) => return driver.cut_before_start(),
                    built => built?,
                }
            }
        };
        driver.run(psro)
    }
}
