//! `ExperimentConfig`: the TOML file that `metagame run` reads.
//!
//! A config names the game and the algorithm; the other fields are the chosen algorithm's
//! section, and a field the algorithm does not read is an error that names both:
//!
//! ```toml
//! game = "kuhn_poker"          # OpenSpiel-style game string
//! algorithm = "psro"           # psro | xfp | double-oracle
//! meta_solver = "nash"         # psro: any registered meta-solver (see `registry`)
//! evaluator = "exact"          # psro: exact | cpu | gpu (payoff entries)
//! max_iterations = 10          # every algorithm (with target_nash_conv, time_budget_seconds)
//! ```
//!
//! | algorithm | fields besides `game` and `algorithm` |
//! |---|---|
//! | `psro` | `meta_solver`, `oracle`, `tremble` (oracle `exact-br-trembling`), `[learner]` (the learned oracles, see [`LearnerSettings`]), `evaluator`, `episodes_per_entry` (sampled evaluators), [`PsroConfig`]'s fields, [`RunLimits`]'s |
//! | `xfp` | [`RunLimits`]'s |
//! | `double-oracle` | `tolerance` ([`DoubleOracleConfig`]), [`RunLimits`]'s |
//! | `league` | [`LeagueConfig`]'s fields and its `[learner]` table, [`RunLimits`]'s |
//! | `fxp` | `eta`, `seed` ([`FxpConfig`]), [`RunLimits`]'s |
//!
//! Each default is written once, in the type that reads the field.

use std::path::Path;

use metagame_populations::{
    DoubleOracleConfig, DoubleOracleConfigBuilder, FxpConfig, FxpConfigBuilder, LeagueConfig, PsroConfig,
    PsroConfigBuilder, RunLimits, RunLimitsBuilder,
};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use crate::error::{Error, Result};
use crate::registry::{EvaluatorName, LearnerSettings, MetaSolverName, OracleName};

/// Which training loop to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Algorithm {
    /// Policy-Space Response Oracles.
    Psro,
    /// Extensive-form fictitious play on the game tree.
    Xfp,
    /// Double Oracle on the game's normal form (matrix games, or small trees via their pure
    /// strategies).
    DoubleOracle,
    /// An AlphaStar league of learning agents ([`LeagueConfig`]).
    League,
    /// Fictitious Cross-Play: a main policy and a counter population ([`FxpConfig`]).
    Fxp,
}

impl Algorithm {
    const ALL: &[Algorithm] =
        &[Algorithm::Psro, Algorithm::Xfp, Algorithm::DoubleOracle, Algorithm::League, Algorithm::Fxp];

    /// The name configs use.
    pub fn as_str(self) -> &'static str {
        match self {
            Algorithm::Psro => "psro",
            Algorithm::Xfp => "xfp",
            Algorithm::DoubleOracle => "double-oracle",
            Algorithm::League => "league",
            Algorithm::Fxp => "fxp",
        }
    }
}

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
    /// How long the run lasts.
    pub limits: RunLimits,
}

impl PsroSection {
    /// Default tremble probability of `exact-br-trembling`.
    pub const DEFAULT_TREMBLE: f64 = 1e-2;
    const FIELDS: &[&str] = &["meta_solver", "oracle", "tremble", "learner", "evaluator"];

    /// The oracle the section names, with its settings.
    ///
    /// # Errors
    ///
    /// As [`OracleName::build`].
    pub fn build_oracle(&self) -> Result<Box<dyn metagame_populations::Oracle>> {
        self.oracle.build(self.tremble.unwrap_or_default(), self.learner.as_ref())
    }
}

/// The XFP section.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct XfpSection {
    /// How long the run lasts.
    pub limits: RunLimits,
}

/// The Double Oracle section.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct DoubleOracleSection {
    /// The loop's settings.
    pub double_oracle: DoubleOracleConfig,
    /// How long the run lasts.
    pub limits: RunLimits,
}

/// The league section: the [`LeagueConfig`] fields (the `[learner]` table holds the
/// agents' Q-learning settings).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct LeagueSection {
    /// The league's settings.
    pub league: LeagueConfig,
    /// The evaluator of the payoff table at evaluation points. Default `exact`.
    pub evaluator: EvaluatorName,
    /// How long the run lasts (one iteration is one round).
    pub limits: RunLimits,
}

impl LeagueSection {
    const FIELDS: &[&str] = &[
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
    ];
}

/// The FXP section: the [`FxpConfig`] fields (`eta`, `seed`). Its components are exact: the
/// `nash` meta-solver, exact best responses, exact payoffs (a library user can pass others).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct FxpSection {
    /// The loop's settings.
    pub fxp: FxpConfig,
    /// How long the run lasts.
    pub limits: RunLimits,
}

/// The chosen algorithm with its section.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum AlgorithmConfig {
    /// `algorithm = "psro"`.
    Psro(PsroSection),
    /// `algorithm = "xfp"`.
    Xfp(XfpSection),
    /// `algorithm = "double-oracle"`.
    DoubleOracle(DoubleOracleSection),
    /// `algorithm = "league"`.
    League(LeagueSection),
    /// `algorithm = "fxp"`.
    Fxp(FxpSection),
}

impl AlgorithmConfig {
    /// Which algorithm.
    pub fn algorithm(&self) -> Algorithm {
        match self {
            AlgorithmConfig::Psro(_) => Algorithm::Psro,
            AlgorithmConfig::Xfp(_) => Algorithm::Xfp,
            AlgorithmConfig::DoubleOracle(_) => Algorithm::DoubleOracle,
            AlgorithmConfig::League(_) => Algorithm::League,
            AlgorithmConfig::Fxp(_) => Algorithm::Fxp,
        }
    }
    /// How long the run lasts.
    pub fn limits(&self) -> &RunLimits {
        match self {
            AlgorithmConfig::Psro(s) => &s.limits,
            AlgorithmConfig::Xfp(s) => &s.limits,
            AlgorithmConfig::DoubleOracle(s) => &s.limits,
            AlgorithmConfig::League(s) => &s.limits,
            AlgorithmConfig::Fxp(s) => &s.limits,
        }
    }
    fn limits_mut(&mut self) -> &mut RunLimits {
        match self {
            AlgorithmConfig::Psro(s) => &mut s.limits,
            AlgorithmConfig::Xfp(s) => &mut s.limits,
            AlgorithmConfig::DoubleOracle(s) => &mut s.limits,
            AlgorithmConfig::League(s) => &mut s.limits,
            AlgorithmConfig::Fxp(s) => &mut s.limits,
        }
    }
}

/// A whole experiment: the game and the algorithm with its section. Always valid: built
/// by parsing ([`ExperimentConfig::from_toml_str`], or serde through the same checks).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "Table", into = "Table")]
pub struct ExperimentConfig {
    game: String,
    algorithm: AlgorithmConfig,
}

/// A config field problem, before the file name is attached.
struct FieldError(String);

impl From<Error> for FieldError {
    fn from(e: Error) -> Self {
        FieldError(e.to_string())
    }
}

impl From<metagame_populations::Error> for FieldError {
    fn from(e: metagame_populations::Error) -> Self {
        // The populations crate says "invalid config: …"; the file name says that here.
        FieldError(e.to_string().trim_start_matches("invalid config: ").to_string())
    }
}

/// The fields of `table` named in `fields`, deserialised as `T` (a `*Builder` with every
/// field optional).
fn group<T: DeserializeOwned>(table: &Table, fields: &[&str]) -> Result<T, FieldError> {
    let sub: Table = table
        .iter()
        .filter(|(k, _)| fields.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    Value::Table(sub)
        .try_into()
        .map_err(|e: toml::de::Error| FieldError(e.message().trim().replace('\n', " ")))
}

fn string_field<'a>(table: &'a Table, field: &str) -> Result<Option<&'a str>, FieldError> {
    match table.get(field) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(other) => Err(FieldError(format!("{field}: expected a string, got {}", other.type_str()))),
    }
}

fn parse_name<T: std::str::FromStr<Err = Error>>(
    table: &Table,
    field: &str,
) -> Result<Option<T>, FieldError> {
    string_field(table, field)?
        .map(|s| s.parse().map_err(|e: Error| FieldError(format!("{field}: {e}"))))
        .transpose()
}

impl ExperimentConfig {
    /// The game string.
    pub fn game(&self) -> &str {
        &self.game
    }
    /// The algorithm and its section.
    pub fn algorithm(&self) -> &AlgorithmConfig {
        &self.algorithm
    }
    /// How long the run lasts.
    pub fn limits(&self) -> &RunLimits {
        self.algorithm.limits()
    }

    /// Parse and validate a config; `path` is only used in messages.
    ///
    /// # Errors
    ///
    /// [`Error::ConfigSyntax`] for TOML that does not parse (with its line and a caret);
    /// [`Error::Config`] naming the bad field: a field the algorithm does not read (naming the
    /// algorithm), an unknown game or component name, values out of range.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::Config { path: path.into(), reason };
        let table: Table = toml::from_str(text).map_err(|e| syntax_error(text, path, &e))?;
        Self::from_table(table).map_err(|FieldError(reason)| bad(reason))
    }

    fn from_table(table: Table) -> Result<Self, FieldError> {
        let game = string_field(&table, "game")?
            .ok_or_else(|| FieldError("missing field `game`".into()))?
            .to_string();
        let name = string_field(&table, "algorithm")?
            .ok_or_else(|| FieldError("missing field `algorithm`".into()))?;
        let algorithm = Algorithm::ALL.iter().copied().find(|a| a.as_str() == name).ok_or_else(|| {
            let known: Vec<&str> = Algorithm::ALL.iter().map(|a| a.as_str()).collect();
            FieldError(format!("algorithm: unknown algorithm `{name}`; known: {}", known.join(", ")))
        })?;
        metagame_games::registry::load(&game).map_err(|e| FieldError(format!("game: {e}")))?;

        // Which fields this algorithm reads.
        let mut reads: Vec<&str> = vec!["game", "algorithm"];
        match algorithm {
            Algorithm::Psro => {
                reads.extend(PsroSection::FIELDS);
                reads.extend(PsroConfigBuilder::FIELDS);
            }
            Algorithm::Xfp => {}
            Algorithm::DoubleOracle => reads.extend(DoubleOracleConfigBuilder::FIELDS),
            Algorithm::League => {
                reads.extend(LeagueSection::FIELDS);
                reads.push("evaluator");
            }
            Algorithm::Fxp => reads.extend(FxpConfigBuilder::FIELDS),
        }
        reads.extend(RunLimitsBuilder::FIELDS);
        for key in table.keys() {
            if reads.contains(&key.as_str()) {
                continue;
            }
            let read_by: Vec<&str> = Algorithm::ALL
                .iter()
                .filter(|a| match a {
                    Algorithm::Psro => {
                        PsroSection::FIELDS.contains(&key.as_str())
                            || PsroConfigBuilder::FIELDS.contains(&key.as_str())
                    }
                    Algorithm::Xfp => false,
                    Algorithm::DoubleOracle => DoubleOracleConfigBuilder::FIELDS.contains(&key.as_str()),
                    Algorithm::League => LeagueSection::FIELDS.contains(&key.as_str()) || key == "evaluator",
                    Algorithm::Fxp => FxpConfigBuilder::FIELDS.contains(&key.as_str()),
                })
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

        let limits: RunLimits = group::<RunLimitsBuilder>(&table, RunLimitsBuilder::FIELDS)?.build()?;
        let algorithm = match algorithm {
            Algorithm::Psro => {
                let meta_solver = parse_name(&table, "meta_solver")?.unwrap_or_default();
                let oracle: OracleName = parse_name(&table, "oracle")?.unwrap_or_default();
                let evaluator: EvaluatorName = parse_name(&table, "evaluator")?.unwrap_or_default();
                let tremble: Option<f64> = group::<TrembleField>(&table, &["tremble"])?.tremble;
                let tremble = match (oracle.reads_tremble(), tremble) {
                    (false, Some(_)) => {
                        return Err(FieldError(format!(
                            "field `tremble` is not read by oracle `{oracle}` (only by `exact-br-trembling`)"
                        )));
                    }
                    (false, None) => None,
                    (true, t) => {
                        let t = t.unwrap_or(PsroSection::DEFAULT_TREMBLE);
                        if !(t > 0.0 && t < 1.0) {
                            return Err(FieldError(format!("tremble must be in (0, 1), got {t}")));
                        }
                        Some(t)
                    }
                };
                let learner = match (oracle.is_learned(), table.get("learner")) {
                    (false, None) => None,
                    (true, None) => LearnerSettings::defaults(oracle),
                    (_, Some(Value::Table(t))) => {
                        Some(LearnerSettings::from_table(oracle, t).map_err(FieldError)?)
                    }
                    (_, Some(other)) => {
                        return Err(FieldError(format!(
                            "learner: expected a table, got {}",
                            other.type_str()
                        )));
                    }
                };
                if !evaluator.samples() && table.contains_key("episodes_per_entry") {
                    return Err(FieldError(format!(
                        "field `episodes_per_entry` is not read by evaluator `{evaluator}` (only by the sampled ones: cpu, gpu)"
                    )));
                }
                let psro = group::<PsroConfigBuilder>(&table, PsroConfigBuilder::FIELDS)?.build()?;
                AlgorithmConfig::Psro(PsroSection {
                    meta_solver,
                    oracle,
                    tremble,
                    learner,
                    evaluator,
                    psro,
                    limits,
                })
            }
            Algorithm::Xfp => AlgorithmConfig::Xfp(XfpSection { limits }),
            Algorithm::DoubleOracle => {
                let double_oracle =
                    group::<DoubleOracleConfigBuilder>(&table, DoubleOracleConfigBuilder::FIELDS)?.build()?;
                AlgorithmConfig::DoubleOracle(DoubleOracleSection { double_oracle, limits })
            }
            Algorithm::League => {
                let evaluator: EvaluatorName = parse_name(&table, "evaluator")?.unwrap_or_default();
                let league: LeagueConfig = group(&table, LeagueSection::FIELDS)?;
                league.validate()?;
                AlgorithmConfig::League(LeagueSection { league, evaluator, limits })
            }
            Algorithm::Fxp => {
                let fxp = group::<FxpConfigBuilder>(&table, FxpConfigBuilder::FIELDS)?.build()?;
                AlgorithmConfig::Fxp(FxpSection { fxp, limits })
            }
        };
        Ok(ExperimentConfig { game, algorithm })
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
        *self.algorithm.limits_mut() = limits;
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

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TrembleField {
    tremble: Option<f64>,
}

fn table_of<T: Serialize>(value: T) -> Table {
    // INVARIANT: the builders are structs of optional scalars.
    Table::try_from(value).expect("settings serialise to a table")
}

impl From<ExperimentConfig> for Table {
    fn from(c: ExperimentConfig) -> Table {
        let mut t = Table::new();
        t.insert("game".into(), Value::String(c.game));
        t.insert("algorithm".into(), Value::String(c.algorithm.algorithm().as_str().into()));
        let limits = match c.algorithm {
            AlgorithmConfig::Psro(s) => {
                t.insert("meta_solver".into(), Value::String(s.meta_solver.into()));
                t.insert("oracle".into(), Value::String(s.oracle.into()));
                if let Some(tremble) = s.tremble {
                    t.insert("tremble".into(), Value::Float(tremble));
                }
                t.insert("evaluator".into(), Value::String(s.evaluator.into()));
                if let Some(learner) = &s.learner {
                    t.insert("learner".into(), Value::Table(learner.to_table()));
                }
                let mut psro = PsroConfigBuilder::from(s.psro);
                if !s.evaluator.samples() {
                    psro.episodes_per_entry = None;
                }
                t.extend(table_of(psro));
                s.limits
            }
            AlgorithmConfig::Xfp(s) => s.limits,
            AlgorithmConfig::DoubleOracle(s) => {
                t.extend(table_of(DoubleOracleConfigBuilder::from(s.double_oracle)));
                s.limits
            }
            AlgorithmConfig::League(s) => {
                t.insert("evaluator".into(), Value::String(s.evaluator.into()));
                t.extend(table_of(s.league));
                s.limits
            }
            AlgorithmConfig::Fxp(s) => {
                t.extend(table_of(FxpConfigBuilder::from(s.fxp)));
                s.limits
            }
        };
        t.extend(table_of(RunLimitsBuilder::from(limits)));
        t
    }
}

impl TryFrom<Table> for ExperimentConfig {
    type Error = String;
    fn try_from(table: Table) -> Result<Self, String> {
        ExperimentConfig::from_table(table).map_err(|FieldError(reason)| reason)
    }
}
