//! `ExperimentConfig`: the TOML file that `metagame run` reads.
//!
//! ```toml
//! game = "kuhn_poker"          # OpenSpiel-style game string
//! algorithm = "psro"           # psro | xfp | double-oracle
//! meta_solver = "nash"         # psro: uniform | nash | prd | rm | alpha-rank | cce
//! evaluator = "exact"          # exact | cpu | gpu  (payoff entries)
//! iterations = 10
//! ```

use std::path::Path;

use metagame_populations::PsroConfig;
use metagame_populations::meta::META_SOLVERS;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Which training loop to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Algorithm {
    /// Policy-Space Response Oracles.
    Psro,
    /// Extensive-form fictitious play on the game tree.
    Xfp,
    /// Double Oracle on the game's normal form (matrix games, or small trees via their pure
    /// strategies).
    DoubleOracle,
}

/// How payoff entries are estimated.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum EvaluatorName {
    /// Exact expected returns by walking the tree.
    #[default]
    Exact,
    /// Sampled episodes on the CPU (rayon).
    Cpu,
    /// Sampled episodes on a CUDA GPU (feature `cuda`).
    Gpu,
}

/// Which oracle answers the meta-mixture.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum OracleName {
    /// Exact best response on the game tree, ties to the lowest action (OpenSpiel's rule).
    #[default]
    ExactBr,
    /// Exact best response, ties and unreached information sets decided against opponents
    /// who tremble with probability `tremble`.
    ExactBrTrembling,
}

fn default_meta_solver() -> String {
    "nash".into()
}
fn default_iterations() -> usize {
    20
}
fn default_episodes() -> u64 {
    1000
}
fn default_tolerance() -> f64 {
    1e-12
}
fn default_convergence_tolerance() -> f64 {
    1e-12
}
fn default_warm_start() -> bool {
    true
}
fn default_tremble() -> f64 {
    1e-2
}

/// A whole experiment: game, algorithm, components by name, and their settings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentConfig {
    /// OpenSpiel-style game string.
    pub game: String,
    /// The training loop.
    pub algorithm: Algorithm,
    /// PSRO's meta-solver (uniform, nash, prd, rm, alpha-rank, cce). Default "nash".
    #[serde(default = "default_meta_solver")]
    pub meta_solver: String,
    /// The oracle (exact-br, exact-br-trembling). Default exact-br.
    #[serde(default)]
    pub oracle: OracleName,
    /// exact-br-trembling: the opponents' tremble probability, in (0, 1). Default 1e-2.
    #[serde(default = "default_tremble")]
    pub tremble: f64,
    /// The payoff evaluator. Default exact.
    #[serde(default)]
    pub evaluator: EvaluatorName,
    /// Iterations after the initial population. Default 20.
    #[serde(default = "default_iterations")]
    pub iterations: usize,
    /// Episodes per payoff entry for sampled evaluators (≥ 1). Default 1000.
    #[serde(default = "default_episodes")]
    pub episodes_per_entry: u64,
    /// Seed of all sampling. Default 0.
    #[serde(default)]
    pub seed: u64,
    /// PSRO-rN. Default false.
    #[serde(default)]
    pub rectified: bool,
    /// One shared population (symmetric games). Default false.
    #[serde(default)]
    pub symmetric: bool,
    /// Stop once NashConv ≤ this. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target_nash_conv: Option<f64>,
    /// Stop after this many seconds. Default none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_budget_seconds: Option<f64>,
    /// Double Oracle: add a best response only if it gains more than this. Default 1e-12.
    #[serde(default = "default_tolerance")]
    pub tolerance: f64,
    /// PSRO: stop as converged once NashConv ≤ this × the game's payoff scale (0: never).
    /// Default 1e-12.
    #[serde(default = "default_convergence_tolerance")]
    pub convergence_tolerance: f64,
    /// PSRO: start each meta-solve from the previous meta-mixture (iterative meta-solvers);
    /// false starts from scratch as OpenSpiel does. Default true.
    #[serde(default = "default_warm_start")]
    pub warm_start: bool,
}

impl ExperimentConfig {
    /// Parse and validate a config; `path` is only used in messages.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] naming the bad field: TOML syntax, unknown fields, an unknown game
    /// or meta-solver, values out of range.
    pub fn from_toml_str(text: &str, path: &Path) -> Result<Self> {
        let bad = |reason: String| Error::Config { path: path.into(), reason };
        let config: ExperimentConfig =
            toml::from_str(text).map_err(|e| bad(e.to_string().trim().replace('\n', " ")))?;
        metagame_games::registry::load(&config.game).map_err(|e| bad(format!("game: {e}")))?;
        if config.algorithm == Algorithm::Psro && !META_SOLVERS.contains(&config.meta_solver.as_str()) {
            return Err(bad(format!(
                "meta_solver: unknown meta-solver `{}`; known: {}",
                config.meta_solver,
                META_SOLVERS.join(", ")
            )));
        }
        if !(config.tremble > 0.0 && config.tremble < 1.0) {
            return Err(bad(format!("tremble must be in (0, 1), got {}", config.tremble)));
        }
        if !(config.tolerance.is_finite() && config.tolerance >= 0.0) {
            return Err(bad(format!("tolerance must be ≥ 0, got {}", config.tolerance)));
        }
        if config.algorithm != Algorithm::Psro && (config.rectified || config.symmetric) {
            return Err(bad("rectified and symmetric apply to algorithm = \"psro\" only".into()));
        }
        config.psro_config().map_err(|e| bad(e.to_string()))?;
        Ok(config)
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

    /// The config as TOML.
    pub fn to_toml(&self) -> String {
        // INVARIANT: plain scalars and strings always serialise.
        toml::to_string(self).expect("config serialises")
    }

    /// The PSRO settings of this config.
    ///
    /// # Errors
    ///
    /// Out-of-range values, naming the field.
    pub fn psro_config(&self) -> Result<PsroConfig, metagame_populations::Error> {
        let mut b = PsroConfig::builder()
            .max_iterations(self.iterations)
            .episodes_per_entry(self.episodes_per_entry)
            .seed(self.seed)
            .rectified(self.rectified)
            .symmetric(self.symmetric)
            .convergence_tolerance(self.convergence_tolerance)
            .warm_start(self.warm_start);
        if let Some(t) = self.target_nash_conv {
            b = b.target_nash_conv(t);
        }
        if let Some(t) = self.time_budget_seconds {
            b = b.time_budget_seconds(t);
        }
        b.build()
    }

    /// True when `other` describes the same run up to how long it lasts (iterations,
    /// target, time budget), so a checkpoint of one can be resumed by the other.
    pub fn same_run_as(&self, other: &ExperimentConfig) -> bool {
        let strip = |c: &ExperimentConfig| ExperimentConfig {
            iterations: 0,
            target_nash_conv: None,
            time_budget_seconds: None,
            ..c.clone()
        };
        strip(self) == strip(other)
    }
}
