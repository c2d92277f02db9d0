//! `ExperimentConfig`: the TOML file that `metagame run` reads.
//!
//! A config names the game and the algorithm; the other fields are the chosen algorithm's
//! section and the run limits, and a field the algorithm does not read is an error that
//! names both:
//!
//! ```toml
//! game = "kuhn_poker"          # OpenSpiel-style game string
//! algorithm = "psro"           # one of the registered loops (`metagame --help`)
//! meta_solver = "nash"         # psro: any registered meta-solver (see `registry`)
//! evaluator = "exact"          # psro: exact | cpu | gpu (payoff entries)
//! max_iterations = 10          # every algorithm (with target_nash_conv, time_budget_seconds)
//! max_nodes = 10000000         # every algorithm: the most nodes of the game tree it builds
//! ```
//!
//! Which fields each algorithm reads is its section's business (`src/loops/`); `metagame
//! config --example ALGORITHM` prints them, annotated. Each default is written once, in the
//! type that reads the field.

use std::path::Path;

use metagame_games::{Game, GameTree};
use metagame_populations::{RunLimits, RunLimitsBuilder};
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::fields::{FieldError, group, string_field, table_of};
use crate::loops::{Algorithm, AlgorithmConfig};

/// A whole experiment: the game and the algorithm with its section. Always valid: built
/// by parsing ([`ExperimentConfig::from_toml_str`], or serde through the same checks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Table", into = "Table")]
pub struct ExperimentConfig {
    game: String,
    /// The node limit of the game tree; `None`: [`GameTree::DEFAULT_MAX_NODES`] (and the
    /// field is not written, so configs that leave it out stay as they were).
    max_nodes: Option<u64>,
    algorithm: AlgorithmConfig,
    limits: RunLimits,
}

impl ExperimentConfig {
    /// The game string.
    pub fn game(&self) -> &str {
        &self.game
    }
    /// The most nodes of the game tree a run builds (`max_nodes`, default
    /// [`GameTree::DEFAULT_MAX_NODES`], 10 million).
    pub fn max_nodes(&self) -> u64 {
        self.max_nodes.unwrap_or(GameTree::DEFAULT_MAX_NODES as u64)
    }
    /// The algorithm and its section.
    pub fn algorithm(&self) -> &AlgorithmConfig {
        &self.algorithm
    }
    /// How long the run lasts.
    pub fn limits(&self) -> &RunLimits {
        &self.limits
    }

    /// Parse and validate a config; `path` is only used in messages.
    ///
    /// # Examples
    ///
    /// ```
    /// use std::path::Path;
    /// use metagame::ExperimentConfig;
    ///
    /// let text = "game = \"leduc_poker\"\nalgorithm = \"cfr\"\nvariant = \"cfr+\"\nmax_iterations = 50\n";
    /// let config = ExperimentConfig::from_toml_str(text, Path::new("leduc_cfr.toml"))?;
    /// assert_eq!(config.limits().max_iterations(), 50);
    /// // A field the algorithm does not read is an error naming both.
    /// let bad = ExperimentConfig::from_toml_str(&format!("{text}meta_solver = \"nash\"\n"), Path::new("x.toml"));
    /// assert!(bad.unwrap_err().to_string().contains("not read by algorithm `cfr`"));
    /// # Ok::<(), metagame::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::ConfigSyntax`] for TOML that does not parse (with its line and a caret);
    /// [`Error::Config`] naming the bad field: a field the algorithm does not read (naming the
    /// algorithm), an unknown game or component name, values out of range.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Self> {
        let table: Table = toml::from_str(text).map_err(|e| syntax_error(text, path, &e))?;
        Self::from_table(table, path, None)
    }

    /// A config for a run on a game given as a tree rather than by a registry name (a game
    /// read from OpenSpiel, say): the `game` field may be left out, and where present it must
    /// be `game_name`; it is not looked up in the registry.
    ///
    /// # Errors
    ///
    /// As [`ExperimentConfig::from_toml_str`]; [`Error::Config`] when `game` names another
    /// game than `game_name`.
    pub fn from_toml_str_on(text: &str, path: &Path, game_name: &str) -> Result<Self> {
        let table: Table = toml::from_str(text).map_err(|e| syntax_error(text, path, &e))?;
        Self::from_table(table, path, Some(game_name))
    }

    /// A config from its parsed table; `on`: as [`ExperimentConfig::from_toml_str_on`] when
    /// `Some(game_name)`, as [`ExperimentConfig::from_toml_str`] when `None`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the bad field.
    pub fn from_table(table: Table, path: &Path, on: Option<&str>) -> Result<Self> {
        Self::parse_table(table, on).map_err(|FieldError(reason)| Error::Config { path: path.into(), reason })
    }

    fn parse_table(mut table: Table, on: Option<&str>) -> Result<Self, FieldError> {
        let game = match (string_field(&table, "game")?, on) {
            (None, None) => return Err(FieldError("missing field `game`".into())),
            (Some(game), Some(given)) if !names_the_game(game, given) => {
                return Err(FieldError(format!(
                    "game: the config names `{game}`, but the run is on the game `{given}`"
                )));
            }
            (Some(game), _) => game.to_string(),
            (None, Some(given)) => given.to_string(),
        };
        table.insert("game".into(), Value::String(game.clone()));
        let name = string_field(&table, "algorithm")?
            .ok_or_else(|| FieldError("missing field `algorithm`".into()))?;
        let algorithm = Algorithm::from_name(name).ok_or_else(|| {
            let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.as_str()).collect();
            FieldError(format!("algorithm: unknown algorithm `{name}`; known: {}", known.join(", ")))
        })?;
        if on.is_none() {
            metagame_games::registry::load(&game).map_err(|e| FieldError(format!("game: {e}")))?;
        }

        // The fields this algorithm reads: its section's and every run's limits.
        let mut reads: Vec<&str> = vec!["game", "algorithm", "max_nodes"];
        reads.extend(algorithm.fields());
        reads.extend(RunLimitsBuilder::FIELDS);
        for key in table.keys() {
            if reads.contains(&key.as_str()) {
                continue;
            }
            let read_by: Vec<&str> = Algorithm::ALL
                .iter()
                .filter(|a| a.fields().contains(&key.as_str()))
                .map(|a| a.as_str())
                .collect();
            return Err(FieldError(match (key.as_str(), read_by.is_empty()) {
                ("iterations", _) => "field `iterations` is now `max_iterations`".into(),
                (_, true) => format!(
                    "unknown field `{key}` (algorithm `{}` reads: {})",
                    algorithm.as_str(),
                    reads.join(", ")
                ),
                (_, false) => format!(
                    "field `{key}` is not read by algorithm `{}` (it is read by {})",
                    algorithm.as_str(),
                    read_by.join(", ")
                ),
            }));
        }

        let max_nodes = match table.get("max_nodes") {
            None => None,
            Some(Value::Integer(n)) if *n >= 1 => Some(*n as u64),
            Some(other) => {
                return Err(FieldError(format!("max_nodes: expected a positive integer, got {other}")));
            }
        };
        let limits: RunLimits = group::<RunLimitsBuilder>(&table, RunLimitsBuilder::FIELDS)?.build()?;
        let section: Table =
            table.into_iter().filter(|(k, _)| algorithm.fields().contains(&k.as_str())).collect();
        let algorithm = AlgorithmConfig::parse(algorithm, &section)?;
        Ok(ExperimentConfig { game, max_nodes, algorithm, limits })
    }

    /// Read and validate a config file.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when it cannot be read or is invalid.
    pub fn read(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Config { path: path.into(), reason: format!("cannot read: {e}") })?;
        Self::from_toml_str(&text, path)
    }

    /// The config as TOML: the fields the algorithm reads, defaults written out.
    pub fn to_toml(&self) -> String {
        // INVARIANT: plain scalars and strings always serialise.
        toml::to_string(&Table::from(self.clone())).expect("config serialises")
    }

    /// The same config with other limits.
    pub fn with_limits(mut self, limits: RunLimits) -> Self {
        self.limits = limits;
        self
    }

    /// True when `other` describes the same run up to how long it lasts (iterations,
    /// target, time budget), so a checkpoint of one can be resumed by the other.
    pub fn same_run_as(&self, other: &ExperimentConfig) -> bool {
        self.clone().with_limits(RunLimits::default()) == other.clone().with_limits(RunLimits::default())
    }
}

/// A TOML syntax error with its place: [`Error::ConfigSyntax`] when the parser gives one.
fn syntax_error(text: &str, path: &Path, e: &toml::de::Error) -> Error {
    let message = e.message().trim().replace('\n', " ");
    let Some(span) = e.span() else {
        return Error::Config { path: path.into(), reason: message };
    };
    let start = span.start.min(text.len());
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
    let line = text[..line_start].matches('\n').count() + 1;
    let column = text[line_start..start].chars().count() + 1;
    let number = line.to_string();
    let pad = " ".repeat(number.len());
    let source_line = text[line_start..line_end].trim_end_matches('\r');
    // Tabs stay tabs under the line, so the caret lands under the column.
    let indent: String =
        text[line_start..start].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    let snippet = format!("{pad} |\n{number} | {source_line}\n{pad} | {indent}^");
    Error::ConfigSyntax { path: path.into(), line, column, message, snippet }
}

impl From<ExperimentConfig> for Table {
    fn from(c: ExperimentConfig) -> Table {
        let mut t = Table::new();
        t.insert("game".into(), Value::String(c.game));
        if let Some(n) = c.max_nodes {
            t.insert("max_nodes".into(), Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)));
        }
        t.insert("algorithm".into(), Value::String(c.algorithm.algorithm().as_str().into()));
        c.algorithm.write(&mut t);
        t.extend(table_of(RunLimitsBuilder::from(c.limits)));
        t
    }
}

impl TryFrom<Table> for ExperimentConfig {
    type Error = String;
    /// A saved config (a checkpoint's, a report's) names the game its run was on, which may
    /// be no registry game (one read from OpenSpiel or PettingZoo): it is not looked up.
    fn try_from(table: Table) -> Result<Self, String> {
        let game = table.get("game").and_then(Value::as_str).map(str::to_string);
        ExperimentConfig::parse_table(table, game.as_deref()).map_err(|FieldError(reason)| reason)
    }
}

/// Whether the game string `spec` names the game called `name`: the same string, or a
/// registry game string that spells out a default (`kuhn_poker(players=2)` names
/// `kuhn_poker`), as `load_game`, the CLI and pyspiel read it.
pub(crate) fn names_the_game(spec: &str, name: &str) -> bool {
    spec == name || metagame_games::registry::load(spec).is_ok_and(|g| g.name() == name)
}
