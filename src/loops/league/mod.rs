//! The `league` loop: an AlphaStar league ([`League`]) of learning agents and their
//! snapshots, with its own figures (`figures.rs`).

use metagame_games::{AnyGame, GameTree};
use metagame_populations::{League, LeagueConfig};
use toml::{Table, Value};

use crate::loops::{Drive, LoopSection};
use crate::fields::{FieldError, group, parse_name, table_of};
use crate::error::Result;
use crate::components::Components;
use crate::registry::EvaluatorName;

#[cfg(feature = "plots")]
mod figures;

/// The league section: the [`LeagueConfig`] fields (the `[learner]` table holds the
/// agents' Q-learning settings, `[matchmaking]` a matchmaker per role) and the evaluator of
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
    const TITLE: &'static str = "league";
    const ABOUT: &'static str =
        "an AlphaStar league: main agents, main exploiters and league exploiters with PFSP";
    const EXAMPLE: &'static str = include_str!("../../../examples/config/league.toml");

    fn fields() -> Vec<&'static str> {
        vec![
            "main_agents",
            "main_exploiters",
            "league_exploiters",
            "episodes_per_round",
            "snapshot_min_episodes",
            "snapshot_max_episodes",
            "snapshot_win_rate",
            "league_exploiter_reset",
            "exploiter_alpha",
            "seed",
            "eval_every",
            "episodes_per_entry",
            "learner",
            "matchmaking",
            "evaluator",
        ]
    }

    fn parse(table: &Table) -> Result<Self, FieldError> {
        let evaluator: EvaluatorName = parse_name(table, "evaluator")?.unwrap_or_default();
        let fields: Vec<&str> = Self::fields().into_iter().filter(|f| *f != "evaluator").collect();
        let league: LeagueConfig = group(table, &fields)?;
        league.validate()?;
        Ok(LeagueSection { league, evaluator })
    }

    fn write(&self, table: &mut Table) {
        table.insert("evaluator".into(), Value::String(self.evaluator.into()));
        table.extend(table_of(&self.league));
    }

    fn figure_title(&self) -> String {
        "league (main agents' average)".into()
    }

    fn run<D: Drive>(
        &self,
        _game: &AnyGame,
        tree: &GameTree,
        mut driver: D,
        components: Components,
    ) -> Result<D::Output> {
        let evaluator = match components.evaluator {
            Some(e) => e,
            None => self.evaluator.build()?,
        };
        let league = match driver.saved_state()? {
            Some((state, reports)) => League::resume(tree, self.league.clone(), state, &reports)?,
            None => League::new(tree, self.league.clone())?,
        };
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
