//! `metagame bench`: the grid's names, its cells' configs and its results file.
//!
//! A benchmark runs each algorithm on each game within one budget (wall time or iterations
//! per cell) through the ordinary run machinery: every cell is an [`ExperimentConfig`]
//! built here from a bench name (`cfr+`, `mccfr-outcome`, `psro-nash`, …) and run by
//! [`run_experiment`](crate::run_experiment) into its own run folder. What the cells
//! reported is kept as [`BenchFile`], the `bench.json` format (`docs/src/bench.md`), which
//! OpenSpiel's side (`benches/peers/bench.py`) writes too; [`bench_table`] is its markdown
//! table of NashConv at fixed budgets.

use std::collections::BTreeMap;
use std::path::Path;

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use crate::config::ExperimentConfig;
use crate::error::{Error, Result};
use crate::loops::Algorithm;
use crate::registry::OracleName;

/// The `format` field of every `bench.json`.
pub const BENCH_FORMAT: &str = "metagame-bench/1";

/// `max_iterations` of a cell run on a time budget: more than any budget reaches.
const UNBOUNDED_ITERATIONS: usize = 1_000_000_000;

/// How long each (algorithm, game, seed) cell runs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "value", rename_all = "lowercase")]
pub enum Budget {
    /// Wall time per cell (`time_budget_seconds`), `30s` on the command line.
    Seconds(f64),
    /// Iterations per cell (`max_iterations`), a plain number on the command line.
    Iterations(usize),
}

impl Budget {
    /// `30s` (or `1.5s`): seconds of wall time; `100`: iterations.
    ///
    /// # Errors
    ///
    /// A message for anything else, and for a budget of 0.
    pub fn parse(text: &str) -> std::result::Result<Budget, String> {
        let bad =
            || format!("budget `{text}`: expected seconds such as `30s` or an iteration count such as `100`");
        if let Some(seconds) = text.strip_suffix('s') {
            let s: f64 = seconds.trim().parse().map_err(|_| bad())?;
            if !(s.is_finite() && s > 0.0) {
                return Err(format!("budget `{text}`: the time per cell must be more than 0 seconds"));
            }
            return Ok(Budget::Seconds(s));
        }
        let n: usize = text.trim().parse().map_err(|_| bad())?;
        if n == 0 {
            return Err(format!("budget `{text}`: the iterations per cell must be at least 1"));
        }
        Ok(Budget::Iterations(n))
    }

    /// The budget as written on the command line.
    pub fn label(self) -> String {
        match self {
            Budget::Seconds(s) => format!("{s}s"),
            Budget::Iterations(n) => format!("{n} iterations"),
        }
    }

    /// The run limits of a cell, as config fields.
    fn write(self, table: &mut Table) {
        match self {
            Budget::Seconds(s) => {
                table.insert("time_budget_seconds".into(), Value::Float(s));
                table.insert("max_iterations".into(), Value::Integer(UNBOUNDED_ITERATIONS as i64));
            }
            Budget::Iterations(n) => {
                table.insert("max_iterations".into(), Value::Integer(n as i64));
            }
        }
    }

    /// The budgets the table reports NashConv at: powers of ten below the budget, then the
    /// budget itself (seconds or iterations).
    pub fn marks(self) -> Vec<f64> {
        let full = match self {
            Budget::Seconds(s) => s,
            Budget::Iterations(n) => n as f64,
        };
        let mut marks: Vec<f64> =
            (0..).map(|k| 10f64.powi(k)).take_while(|&m| m < full * (1.0 - 1e-9)).collect();
        marks.push(full);
        marks
    }
}

/// One algorithm of a benchmark by its bench name, with the config fields it sets.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchAlgorithm {
    name: String,
    algorithm: Algorithm,
    fields: Vec<(&'static str, Value)>,
    /// PSRO whose responses are learned (`psro-nash:ppo`): seeded, and on a game played on
    /// its states its NashConv is estimated.
    learned: bool,
}

/// The bench names, for messages and `--help`.
pub const BENCH_ALGORITHMS: &str = "cfr, cfr+, linear-cfr (lcfr), dcfr, pcfr+ (each with `:vectors` for the hand-vector walk: \
     cfr+:vectors), mccfr-outcome, mccfr-external, \
     psro-<meta-solver> (psro-nash, psro-uniform, psro-prd, ...), psro-<meta-solver>:<oracle> \
     (psro-nash:ppo, psro-nash:dqn, ...), xfp, fxp, league, double-oracle";

/// Every how many PSRO iterations a cell on a game without a tree estimates its NashConv by
/// trained best responses (besides iteration 0 and an iteration budget's last): an estimate
/// trains a network per seat, as dear as a few iterations.
pub const ESTIMATE_EVERY: u64 = 5;

impl BenchAlgorithm {
    /// The algorithm called `name` (see [`BENCH_ALGORITHMS`]).
    ///
    /// # Errors
    ///
    /// A message naming the unknown algorithm or meta-solver and the known names.
    pub fn parse(name: &str) -> std::result::Result<BenchAlgorithm, String> {
        let text = |s: &str| Value::String(s.into());
        if let Some(base) = name.strip_suffix(":vectors") {
            let mut parsed = Self::parse(base)?;
            if parsed.algorithm != Algorithm::Cfr {
                return Err(format!(
                    "algorithm `{name}`: `:vectors` is a walk of the CFR family (cfr, cfr+, lcfr, dcfr, pcfr+)"
                ));
            }
            parsed.name = name.into();
            parsed.fields.push(("walk", text("vectors")));
            return Ok(parsed);
        }
        let (algorithm, fields) = match name {
            "cfr" => (Algorithm::Cfr, vec![("variant", text("cfr"))]),
            "cfr+" => (Algorithm::Cfr, vec![("variant", text("cfr+"))]),
            "linear-cfr" | "lcfr" => (Algorithm::Cfr, vec![("variant", text("linear"))]),
            "dcfr" => (Algorithm::Cfr, vec![("variant", text("dcfr"))]),
            "pcfr+" => (Algorithm::Cfr, vec![("variant", text("pcfr+"))]),
            "mccfr-outcome" => (Algorithm::Mccfr, vec![("sampling", text("outcome"))]),
            "mccfr-external" => (Algorithm::Mccfr, vec![("sampling", text("external"))]),
            "xfp" => (Algorithm::Xfp, vec![]),
            "fxp" => (Algorithm::Fxp, vec![]),
            "league" => (Algorithm::League, vec![]),
            "double-oracle" => (Algorithm::DoubleOracle, vec![]),
            _ => match name.strip_prefix("psro-") {
                Some(rest) => {
                    let (solver, oracle) = match rest.split_once(':') {
                        Some((solver, oracle)) => (solver, Some(oracle)),
                        None => (rest, None),
                    };
                    crate::registry::meta_solver(solver, None)
                        .map_err(|e| format!("algorithm `{name}`: {e}"))?;
                    let mut fields = vec![("meta_solver", text(solver))];
                    let mut learned = false;
                    if let Some(oracle) = oracle {
                        let oracle: OracleName =
                            oracle.parse().map_err(|e| format!("algorithm `{name}`: {e}"))?;
                        learned = oracle.is_learned();
                        fields.push(("oracle", text(oracle.as_str())));
                    }
                    return Ok(BenchAlgorithm {
                        name: name.into(),
                        algorithm: Algorithm::Psro,
                        fields,
                        learned,
                    });
                }
                None => {
                    return Err(format!("unknown algorithm `{name}`; known: {BENCH_ALGORITHMS}"));
                }
            },
        };
        let name = if name == "lcfr" { "linear-cfr" } else { name };
        Ok(BenchAlgorithm { name: name.into(), algorithm, fields, learned: false })
    }

    /// The bench name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The loop it runs.
    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }

    /// True when its runs differ by seed (sampled traversals, sampled episodes, learned
    /// responses); the others (the CFR family, PSRO and XFP with exact components, FXP,
    /// Double Oracle) are deterministic and run once.
    pub fn seeded(&self) -> bool {
        self.learned || matches!(self.algorithm, Algorithm::Mccfr | Algorithm::League)
    }

    /// True for PSRO with learned responses, the one algorithm that runs on a game whose tree
    /// is not built.
    pub fn learned(&self) -> bool {
        self.learned
    }

    /// The config of its cell on `game` within `budget`, with `seed` for seeded algorithms and
    /// `target` as its `target_nash_conv` (the cell stops there): the fields above, the loop's
    /// defaults for the rest; `max_nodes` the most nodes of the tree it builds, where given.
    /// `on_states` says the game's tree is not built: a learned PSRO cell then fills its
    /// payoff entries by rollouts and estimates its NashConv every [`ESTIMATE_EVERY`]
    /// iterations (the other algorithms need the tree and are skipped).
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a game the registry does not know.
    pub fn config(
        &self,
        game: &str,
        budget: Budget,
        seed: u64,
        target: Option<f64>,
        max_nodes: Option<u64>,
        on_states: bool,
    ) -> Result<ExperimentConfig> {
        let mut table = Table::new();
        table.insert("game".into(), Value::String(game.into()));
        table.insert("algorithm".into(), Value::String(self.algorithm.as_str().into()));
        for (key, value) in &self.fields {
            table.insert((*key).into(), value.clone());
        }
        if self.seeded() {
            table.insert("seed".into(), Value::Integer(seed as i64));
        }
        if let Some(n) = max_nodes {
            table.insert("max_nodes".into(), Value::Integer(i64::try_from(n).unwrap_or(i64::MAX)));
        }
        if self.learned && on_states {
            table.insert("evaluator".into(), Value::String("rollout".into()));
            table.insert("approximate_every".into(), Value::Integer(ESTIMATE_EVERY as i64));
        }
        budget.write(&mut table);
        if let Some(target) = target {
            table.insert("target_nash_conv".into(), Value::Float(target));
        }
        ExperimentConfig::from_table(table, Path::new(&format!("bench {} on {game}", self.name)), None)
    }
}

/// The machine a benchmark ran on.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Machine {
    /// The CPU model (`/proc/cpuinfo`'s model name).
    pub cpu: String,
    /// Cores available to the process.
    pub cores: usize,
    /// The operating system.
    pub os: String,
    /// The 1-minute load average when the benchmark started (a shared machine inflates
    /// times), where known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub load_average: Option<f64>,
}

impl Machine {
    /// This machine.
    pub fn here() -> Machine {
        let cpu = std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|t| {
                t.lines()
                    .find(|l| l.starts_with("model name"))
                    .and_then(|l| l.split_once(':'))
                    .map(|(_, m)| m.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let load_average = std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|t| t.split_whitespace().next().and_then(|v| v.parse().ok()));
        Machine {
            cpu,
            cores: std::thread::available_parallelism().map_or(1, usize::from),
            os: std::env::consts::OS.into(),
            load_average,
        }
    }
}

/// How a cell ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CellStatus {
    /// It ran to its budget (or converged, or reached 0).
    Finished,
    /// Ctrl-C stopped it: its records are what it committed.
    Interrupted,
    /// The algorithm does not apply to the game (see the cell's note).
    Skipped,
}

/// One (algorithm, game, seed) cell of the grid.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchCell {
    /// The bench name.
    pub algorithm: String,
    /// The game string.
    pub game: String,
    /// The seed (0 for deterministic algorithms, which run once).
    pub seed: u64,
    /// False for algorithms that run once whatever `--seeds` says.
    pub seeded: bool,
    /// How it ended.
    pub status: CellStatus,
    /// Why it stopped (the run's stop reason), or why it was skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The last iteration committed.
    pub iterations: usize,
    /// Wall time of that iteration.
    pub seconds: f64,
    /// Its run folder, relative to the bench folder (none for skipped cells and peers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_dir: Option<String>,
}

/// One point of a cell's curve.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchRecord {
    /// The bench name.
    pub algorithm: String,
    /// The game string.
    pub game: String,
    /// The seed.
    pub seed: u64,
    /// The iteration (0: the initial policy).
    pub iteration: usize,
    /// Wall time since the cell's run started, when the iteration was committed.
    pub seconds: f64,
    /// NashConv of the algorithm's policy after the iteration: exact, or where `stderr` is
    /// set an estimate by trained best responses (a lower bound up to its sampling error).
    pub nash_conv: f64,
    /// The estimate's standard error; absent for an exact NashConv.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stderr: Option<f64>,
}

/// A `bench.json`: a header, the cells and their records.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchFile {
    /// [`BENCH_FORMAT`].
    pub format: String,
    /// What ran the cells: `metagame` or `OpenSpiel`.
    pub tool: String,
    /// Its version.
    pub version: String,
    /// Where.
    pub machine: Machine,
    /// The budget of each cell.
    pub budget: Budget,
    /// Seeds per seeded algorithm.
    pub seeds: usize,
    /// The target NashConv each cell stopped at, where the benchmark had one (`--target`):
    /// the table then says when each cell first reached it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<f64>,
    /// The games, in the grid's order.
    pub games: Vec<String>,
    /// The algorithms' bench names, in the grid's order.
    pub algorithms: Vec<String>,
    /// Unix time when the benchmark started.
    pub started: u64,
    /// Every cell, in the order run.
    pub cells: Vec<BenchCell>,
    /// The cells' points, in the cells' order and by iteration within each.
    pub records: Vec<BenchRecord>,
}

impl BenchFile {
    /// Read and check a `bench.json` (ours or a peer's).
    ///
    /// # Errors
    ///
    /// [`Error::Output`] naming the file: unreadable, not JSON of this format, or a record
    /// with a negative or non-finite time or NashConv.
    pub fn read(path: &Path) -> Result<BenchFile> {
        let bad = |reason: String| Error::Output { path: path.into(), source: reason.into() };
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let file: BenchFile = serde_json::from_str(&text)
            .map_err(|e| bad(format!("not a bench.json ({BENCH_FORMAT}): {e}")))?;
        if file.format != BENCH_FORMAT {
            return Err(bad(format!("format `{}`, expected `{BENCH_FORMAT}`", file.format)));
        }
        if let Some(r) = file.records.iter().find(|r| {
            !(r.seconds.is_finite() && r.seconds >= 0.0 && (r.nash_conv.is_finite() || r.nash_conv.is_nan()))
        }) {
            return Err(bad(format!(
                "record of {} on {} at iteration {}: seconds {} and NashConv {} must be finite, seconds >= 0",
                r.algorithm, r.game, r.iteration, r.seconds, r.nash_conv
            )));
        }
        Ok(file)
    }

    /// The records of `algorithm` on `game`, one list of `(iteration, seconds, nash_conv)`
    /// per seed, seeds in order.
    pub fn curves(&self, game: &str, algorithm: &str) -> Vec<Vec<(usize, f64, f64)>> {
        let mut by_seed: BTreeMap<u64, Vec<(usize, f64, f64)>> = BTreeMap::new();
        for r in self.records.iter().filter(|r| r.game == game && r.algorithm == algorithm) {
            by_seed.entry(r.seed).or_default().push((r.iteration, r.seconds, r.nash_conv));
        }
        by_seed.into_values().collect()
    }

    /// True when the NashConv of `algorithm` on `game` was estimated (the game's tree was not
    /// built), not computed.
    pub fn estimated(&self, game: &str, algorithm: &str) -> bool {
        self.records.iter().any(|r| r.game == game && r.algorithm == algorithm && r.stderr.is_some())
    }
}

/// A cell's points, thinned as they come: every iteration up to 100, then about 50 per
/// decade of iterations (and every power of ten), and always the last one, so a cell of a
/// million CFR iterations keeps a few hundred points.
#[derive(Debug, Default)]
pub struct Thinned {
    kept: Vec<BenchRecord>,
    last: Option<BenchRecord>,
}

impl Thinned {
    /// Points per decade of iterations past 100.
    const PER_DECADE: f64 = 50.0;

    /// Add the next point (iterations increasing).
    pub fn push(&mut self, record: BenchRecord) {
        let bucket = |i: usize| (((i as f64).log10() + 1e-12) * Self::PER_DECADE).floor() as i64;
        let power_of_ten = |i: usize| {
            let mut p = 1;
            while p < i {
                p *= 10;
            }
            p == i
        };
        let keep = match self.kept.last() {
            None => true,
            Some(prev) => {
                let i = record.iteration;
                i <= 100 || power_of_ten(i) || bucket(i) > bucket(prev.iteration.max(1))
            }
        };
        if keep {
            self.kept.push(record);
            self.last = None;
        } else {
            self.last = Some(record);
        }
    }

    /// The points kept, the last one included.
    pub fn finish(mut self) -> Vec<BenchRecord> {
        self.kept.extend(self.last.take());
        self.kept
    }
}

/// The value of a curve at `mark` (`x` the iteration or the time): NashConv of its last
/// point at or before `mark`, or of its last point at all when `full` (the whole budget).
fn at_mark(curve: &[(usize, f64, f64)], by_time: bool, mark: f64, full: bool) -> Option<f64> {
    if full {
        return curve.last().map(|p| p.2);
    }
    let x = |p: &(usize, f64, f64)| if by_time { p.1 } else { p.0 as f64 };
    curve.iter().take_while(|p| x(p) <= mark * (1.0 + 1e-9)).last().map(|p| p.2)
}

/// The median of some values (the mean of the middle two for an even count).
fn median(values: &mut [f64]) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// A NashConv cell of the table: the value, or the seeds' median and range.
fn summary(mut values: Vec<f64>, format: &dyn Fn(f64) -> String) -> String {
    match values.len() {
        0 => "—".into(),
        1 => format(values[0]),
        n => {
            let m = median(&mut values);
            format!("{} ({}–{}, {n} seeds)", format(m), format(values[0]), format(values[n - 1]))
        }
    }
}

/// When a curve first reached `target`: `(iteration, seconds)` of its first point at or
/// below it.
fn first_at_or_below(curve: &[(usize, f64, f64)], target: f64) -> Option<(usize, f64)> {
    curve.iter().find(|p| p.2 <= target).map(|p| (p.0, p.1))
}

/// One side's columns of a table row: iterations done, with a target the seconds and
/// iterations to reach it (`—` where a curve did not), then NashConv at each mark.
fn columns(
    file: &BenchFile,
    game: &str,
    algorithm: &str,
    marks: &[f64],
    by_time: bool,
    target: Option<f64>,
) -> Vec<String> {
    let curves = file.curves(game, algorithm);
    let estimated = file.estimated(game, algorithm);
    let number = |v: f64| format!("{v:.0}");
    let mut out =
        vec![summary(curves.iter().filter_map(|c| c.last().map(|p| p.0 as f64)).collect(), &number)];
    if target.is_some() && estimated {
        // A lower bound at or below the target says nothing of the NashConv itself.
        out.push("— (estimated)".into());
    } else if let Some(target) = target {
        let reached: Vec<(usize, f64)> = curves.iter().filter_map(|c| first_at_or_below(c, target)).collect();
        let seconds = |v: f64| format!("{v:.3}");
        let mut cell = summary(reached.iter().map(|r| r.1).collect(), &seconds);
        if !reached.is_empty() {
            let iterations = summary(reached.iter().map(|r| r.0 as f64).collect(), &number);
            cell = format!("{cell} s ({iterations} it.)");
        }
        if reached.len() < curves.len() {
            cell = format!("{cell}; {} of {} seeds did not", curves.len() - reached.len(), curves.len());
        }
        out.push(cell);
    }
    for (k, &mark) in marks.iter().enumerate() {
        let full = k + 1 == marks.len();
        let values = curves.iter().filter_map(|c| at_mark(c, by_time, mark, full)).collect();
        let value = |v: f64| if estimated { format!("≥ {}", nash_conv_text(v)) } else { nash_conv_text(v) };
        out.push(summary(values, &value));
    }
    out
}

/// NashConv in a table: 4 significant digits.
fn nash_conv_text(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if v.abs() < 1e-3 || v.abs() >= 1e4 {
        format!("{v:.3e}")
    } else {
        format!("{:.*}", (3 - v.abs().log10().floor() as i32).max(0) as usize, v)
    }
}

/// The markdown table of a benchmark: one row per game and algorithm, the iterations each
/// cell did and NashConv at each of the budget's [marks](Budget::marks) (the seeds' median
/// and range where there are several); with `peer`, its columns beside ours for the same
/// names (and rows for its algorithms ours lacks); then the skipped cells, one line each.
pub fn bench_table(ours: &BenchFile, peer: Option<&BenchFile>) -> String {
    let marks = ours.budget.marks();
    let by_time = matches!(ours.budget, Budget::Seconds(_));
    let mark_label = |m: f64| if by_time { format!("{m} s") } else { format!("{m} it.") };
    let target = ours.target;
    let target_label = |t: f64| format!("time to NashConv ≤ {t:e}");
    let mut header = vec!["game".to_string(), "algorithm".into(), "iterations".into()];
    header.extend(target.map(target_label));
    header.extend(marks.iter().map(|&m| format!("NashConv at {}", mark_label(m))));
    if let Some(p) = peer {
        let tool = &p.tool;
        header.push(format!("{tool} iterations"));
        header.extend(target.map(|t| format!("{tool} {}", target_label(t))));
        header.extend(marks.iter().map(|&m| format!("{tool} at {}", mark_label(m))));
    }
    let mut text = format!(
        "NashConv at fixed budgets ({} per cell; {} on {}, {} cores{})\n\n",
        ours.budget.label(),
        ours.tool,
        ours.machine.cpu,
        ours.machine.cores,
        ours.machine.load_average.map_or(String::new(), |l| format!(", load average {l} at the start")),
    );
    text.push_str(&format!("| {} |\n", header.join(" | ")));
    text.push_str(&format!("|{}\n", " --- |".repeat(header.len())));
    let mut games = ours.games.clone();
    let mut algorithms = ours.algorithms.clone();
    if let Some(p) = peer {
        games.extend(p.games.iter().filter(|g| !ours.games.contains(g)).cloned());
        algorithms.extend(p.algorithms.iter().filter(|a| !ours.algorithms.contains(a)).cloned());
    }
    let has = |f: &BenchFile, g: &str, a: &str| f.records.iter().any(|r| r.game == g && r.algorithm == a);
    let mut any_estimated = false;
    for game in &games {
        for algorithm in &algorithms {
            let peer_has = peer.is_some_and(|p| has(p, game, algorithm));
            if !has(ours, game, algorithm) && !peer_has {
                continue;
            }
            any_estimated |=
                ours.estimated(game, algorithm) || peer.is_some_and(|p| p.estimated(game, algorithm));
            let mut row = vec![game.clone(), algorithm.clone()];
            row.extend(columns(ours, game, algorithm, &marks, by_time, target));
            if let Some(p) = peer {
                row.extend(columns(p, game, algorithm, &marks, by_time, target));
            }
            text.push_str(&format!("| {} |\n", row.join(" | ")));
        }
    }
    if any_estimated {
        text.push_str(
            "\n≥: the game's tree is not built, so NashConv is estimated by best responses trained \
             against the policy (a lower bound, up to its sampling error; the standard errors are in \
             bench.json)\n",
        );
    }
    for file in std::iter::once(ours).chain(peer) {
        for c in file.cells.iter().filter(|c| c.status == CellStatus::Skipped) {
            let note = c.note.as_deref().unwrap_or("does not apply");
            text.push_str(&format!("\n{} skipped {} on {}: {note}\n", file.tool, c.algorithm, c.game));
        }
        for c in file.cells.iter().filter(|c| c.status == CellStatus::Interrupted) {
            text.push_str(&format!(
                "\n{} {} on {} seed {} was interrupted after iteration {} ({:.1} s)\n",
                file.tool, c.algorithm, c.game, c.seed, c.iterations, c.seconds
            ));
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::{BenchAlgorithm, BenchRecord, Budget, Thinned, nash_conv_text};

    #[test]
    fn budgets_read_seconds_and_iterations_and_refuse_zero() {
        assert_eq!(Budget::parse("30s"), Ok(Budget::Seconds(30.0)));
        assert_eq!(Budget::parse("100"), Ok(Budget::Iterations(100)));
        for bad in ["0", "0s", "-1s", "x", "s", "1.5", "nans", "infs"] {
            assert!(Budget::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(Budget::Seconds(30.0).marks(), vec![1.0, 10.0, 30.0]);
        assert_eq!(Budget::Iterations(100).marks(), vec![1.0, 10.0, 100.0]);
        assert_eq!(Budget::Iterations(1).marks(), vec![1.0]);
    }

    #[test]
    fn names_map_to_loops_and_unknown_ones_are_refused() {
        for name in ["cfr", "cfr+", "lcfr", "dcfr", "mccfr-outcome", "psro-prd", "xfp", "league"] {
            assert!(BenchAlgorithm::parse(name).is_ok(), "{name}");
        }
        assert_eq!(BenchAlgorithm::parse("lcfr").unwrap().name(), "linear-cfr");
        assert!(BenchAlgorithm::parse("psro-bogus").unwrap_err().contains("meta-solver"));
        assert!(BenchAlgorithm::parse("cfr++").unwrap_err().contains("unknown algorithm"));
        let vectors = BenchAlgorithm::parse("pcfr+:vectors").unwrap();
        assert_eq!(vectors.name(), "pcfr+:vectors");
        assert_eq!(
            vectors.fields,
            vec![
                ("variant", toml::Value::String("pcfr+".into())),
                ("walk", toml::Value::String("vectors".into()))
            ]
        );
        assert!(BenchAlgorithm::parse("xfp:vectors").unwrap_err().contains("CFR family"));
    }

    #[test]
    fn thinning_keeps_the_start_powers_of_ten_and_the_end() {
        let mut t = Thinned::default();
        let point = |i: usize| BenchRecord {
            algorithm: "cfr".into(),
            game: "kuhn_poker".into(),
            seed: 0,
            iteration: i,
            seconds: i as f64,
            nash_conv: 1.0,
            stderr: None,
        };
        for i in 0..=123_457 {
            t.push(point(i));
        }
        let kept: Vec<usize> = t.finish().iter().map(|r| r.iteration).collect();
        assert!(kept.len() < 101 + 4 * 50 + 2, "{}", kept.len());
        assert!((0..=100).all(|i| kept.contains(&i)));
        assert!([1_000, 10_000, 100_000, 123_457].iter().all(|i| kept.contains(i)));
        assert!(kept.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn table_numbers_keep_four_digits() {
        assert_eq!(nash_conv_text(0.0635912), "0.06359");
        assert_eq!(nash_conv_text(1.22088), "1.221");
        assert_eq!(nash_conv_text(5.14303e-4), "5.143e-4");
    }
}
