//! The `league` loop: an AlphaStar league ([`League`]) of learning agents and their
//! snapshots, with its own figures (`figures.rs`).

use metagame_games::Arena;
use metagame_populations::{League, LeagueConfig, LeagueConfigBuilder, ReadPolicy, SnapshotFolder};
use toml::{Table, Value};

use crate::loops::section::{Drive, LoopSection};
use crate::fields::{FieldError, group, parse_name, table_of};
use crate::error::Result;
use crate::components::Components;
use crate::registry::EvaluatorName;

#[cfg(feature = "plots")]
mod figures;

/// The league section: the [`LeagueConfig`] fields (the `[learner]` table holds the
/// agents' learner, `kind` and its settings, `[matchmaking]` a matchmaker per role) and the evaluator of
/// the payoff table at evaluation points.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LeagueSection {
    /// The league's settings.
    pub league: LeagueConfig,
    /// The evaluator of the payoff table at evaluation points. Default `exact`.
    pub evaluator: EvaluatorName,
}

impl LoopSection for LeagueSection {
    const NAME: &'static str = "league";
    const PLAYERS: Option<usize> = Some(2);
    // Without the tree the agents are networks (the learner says so, or the league refuses).
    const NEEDS_TREE: bool = false;
    const TITLE: &'static str = "league";
    const ABOUT: &'static str =
        "an AlphaStar league: main agents, main exploiters and league exploiters with PFSP";
    const EXAMPLE: &'static str = include_str!("../../../examples/config/league.toml");
    const FILES: &'static [&'static str] = &["config.toml", "checkpoint.json", "history.jsonl", "report.json", "payoffs.bin", "lineage.dot", "exploitability.svg", "payoffs.svg", "nash_conv.svg", "elo.svg", "win_rates.svg", "report.html"];

    fn fields() -> Vec<&'static str> {
        let mut fields = LeagueConfigBuilder::FIELDS.to_vec();
        fields.push("evaluator");
        fields
    }

    fn parse(table: &Table) -> Result<Self, FieldError> {
        let evaluator: EvaluatorName = parse_name(table, "evaluator")?.unwrap_or_default();
        if !evaluator.samples() && table.contains_key("episodes_per_entry") {
            return Err(FieldError(format!(
                "field `episodes_per_entry` is not read by evaluator `{evaluator}` (only by the sampled ones: cpu, gpu, rollout)"
            )));
        }
        // The league trains every round for `episodes_per_round` from the learners it keeps:
        // these learner fields (a PSRO oracle's) mean nothing here.
        if let Some(Value::Table(learner)) = table.get("learner") {
            for field in ["episodes_per_response", "warm_start"] {
                if learner.contains_key(field) {
                    return Err(FieldError(format!(
                        "field `learner.{field}` is not read by algorithm `league` (its agents train episodes_per_round per round)"
                    )));
                }
            }
        }
        let league = group::<LeagueConfigBuilder>(table, LeagueConfigBuilder::FIELDS)?.build()?;
        Ok(LeagueSection { league, evaluator })
    }

    fn write(&self, table: &mut Table) {
        table.insert("evaluator".into(), Value::String(self.evaluator.into()));
        let mut league = table_of(LeagueConfigBuilder::from(self.league.clone()));
        // Written as read: without the fields the league refuses (episodes per entry with an
        // exact evaluator, two learner fields).
        if !self.evaluator.samples() {
            league.remove("episodes_per_entry");
        }
        if let Some(Value::Table(learner)) = league.get_mut("learner") {
            learner.remove("episodes_per_response");
            learner.remove("warm_start");
        }
        table.extend(league);
    }

    fn figure_title(&self) -> String {
        "league (main agents' average)".into()
    }

    fn run<D: Drive>(
        &self,
        arena: Arena<'_>,
        mut driver: D,
        components: Components,
    ) -> Result<D::Output> {
        let evaluator = match components.evaluator {
            Some(e) => e,
            None => self.evaluator.build()?,
        };
        let league = match driver.saved_state::<metagame_populations::LeagueState>()? {
            Some((mut state, reports)) => {
                // Snapshots that are networks, from the files the checkpoint names (their
                // hashes checked).
                for stored in state.stored_mut() {
                    let bytes = driver.member_file(stored.file())?;
                    stored.load(&bytes, |kind, bytes| {
                        crate::registry::policy_from_file(kind, bytes).map_err(|e| e.to_string())
                    })?;
                }
                // The payoff log, where the saved state names one.
                let log = match state.payoffs_logged() {
                    0 => None,
                    _ => Some(driver.member_file(League::PAYOFF_LOG_FILE)?),
                };
                League::resume_on(arena, self.league.clone(), state, &reports, log.as_deref())?
            }
            None => League::new_on(arena, self.league.clone())?,
        };
        let league = match components.trainer {
            Some(trainer) => league.with_trainer(trainer),
            None => league,
        };
        // Network snapshots are let go of once written, and read back when played.
        let read: ReadPolicy =
            |kind, bytes| crate::registry::policy_from_file(kind, bytes).map_err(|e| e.to_string());
        let league = league.with_snapshot_folder(SnapshotFolder::new(driver.run_folder(), read));
        let config = &self.league;
        driver.run_with_figures(league.with_evaluator(evaluator), |league, reports, game, dir| {
            #[cfg(feature = "plots")]
            figures::write(config, league, reports, game, dir)?;
            #[cfg(not(feature = "plots"))]
            let _ = (config, league, reports, game, dir);
            Ok(())
        })
    }
}
