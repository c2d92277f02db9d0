//! `metagame plot RUN_DIR... [--out FILE] [--x iteration|time|episodes]`: several runs on
//! one NashConv figure; runs whose configs differ only in the seed become one curve (mean
//! and a band from the smallest to the largest run).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use metagame::RunCheckpoint;
use metagame::plots::{Curve, compare_svg};
use serde_json::Value;

use super::output::{eprint_line, outln};

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
enum XAxis {
    /// Iteration number.
    Iteration,
    /// Wall time since the run started, in seconds.
    Time,
    /// Episodes played so far (sampled payoffs and learned responses).
    Episodes,
}

#[derive(clap::Args)]
pub struct Args {
    /// Run folders written by `metagame run` (each holds report.json).
    #[arg(required = true, value_name = "RUN_DIR")]
    runs: Vec<PathBuf>,
    /// The figure (SVG).
    #[arg(long, default_value = "nash_conv.svg")]
    out: PathBuf,
    /// What the x axis shows.
    #[arg(long, value_enum, default_value_t = XAxis::Iteration)]
    x: XAxis,
    /// The figure's title (default: the games plotted).
    #[arg(long)]
    title: Option<String>,
}

struct Run {
    dir: PathBuf,
    /// The config without its seed: runs with equal keys share a curve.
    key: serde_json::Map<String, Value>,
    points: Vec<(f64, f64)>,
}

/// A run folder's report: `report.json` when the run finished, else what its checkpoint
/// holds (a run still going, or one that was killed), as the same JSON shape.
fn read_report(dir: &Path) -> anyhow::Result<(PathBuf, Value)> {
    let path = dir.join("report.json");
    if path.is_file() {
        let text = std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
        let report =
            serde_json::from_str(&text).with_context(|| format!("{} is not a report", path.display()))?;
        return Ok((path, report));
    }
    let checkpoint = dir.join(metagame::CHECKPOINT_FILE);
    if !checkpoint.is_file() {
        bail!("{} has no report.json and no {} (not a run folder)", dir.display(), metagame::CHECKPOINT_FILE);
    }
    let saved = RunCheckpoint::read(dir).with_context(|| format!("reading {}", checkpoint.display()))?;
    let report = serde_json::json!({ "config": saved.config, "iterations": saved.reports });
    Ok((checkpoint, report))
}

fn read_run(dir: &Path, x: XAxis) -> anyhow::Result<Run> {
    let (path, report) = read_report(dir)?;
    let (Some(config), Some(iterations)) = (report["config"].as_object(), report["iterations"].as_array())
    else {
        bail!("{} is not a run report (no config or iterations)", path.display());
    };
    if iterations.is_empty() {
        bail!("{} has no iterations to plot", path.display());
    }
    let mut key = config.clone();
    key.remove("seed");
    // Iterations evaluated exactly; a run without any (a game whose tree was not built) is
    // drawn from its estimates, where it has them. Iterations a schedule did not evaluate
    // (CFR's `nash_conv_every`) are left out.
    let exact = iterations.iter().any(|it| it["nash_conv"].is_number());
    let field = if exact { "nash_conv" } else { "nash_conv_estimate" };
    if !exact && !iterations.iter().any(|it| it[field].is_number()) {
        bail!("{}: no iteration has a NashConv, exact or estimated", path.display());
    }
    if !exact {
        eprint_line(format_args!(
            "{}: no exact NashConv (no tree); plotting its estimates, lower bounds",
            path.display()
        ));
    }
    let mut episodes = 0.0;
    let mut points = Vec::new();
    for it in iterations {
        episodes += it["episodes"].as_f64().unwrap_or(0.0);
        let Some(nash_conv) = it[field].as_f64() else { continue };
        if !nash_conv.is_finite() || nash_conv.abs() > 1e300 {
            bail!(
                "{}: iteration {} has NashConv {nash_conv}, not a value to plot",
                path.display(),
                it["iteration"]
            );
        }
        let xv = match x {
            XAxis::Iteration => it["iteration"].as_f64().unwrap_or(points.len() as f64),
            XAxis::Time => it["elapsed_s"].as_f64().unwrap_or(0.0),
            XAxis::Episodes => episodes,
        };
        points.push((xv, nash_conv));
    }
    Ok(Run { dir: dir.to_path_buf(), key, points })
}

/// The config fields whose values tell the groups apart, as `field=value` per group.
fn labels(groups: &[Vec<Run>]) -> Vec<String> {
    let keys: Vec<&serde_json::Map<String, Value>> = groups.iter().map(|g| &g[0].key).collect();
    let mut fields: Vec<&String> = keys.iter().flat_map(|k| k.keys()).collect();
    fields.sort();
    fields.dedup();
    // A field tells groups apart when two groups that both have it give it different values
    // (a field only one algorithm reads says nothing more than `algorithm`).
    let differing: Vec<&String> = fields
        .into_iter()
        .filter(|f| {
            let values: Vec<&Value> = keys.iter().filter_map(|k| k.get(*f)).collect();
            values.iter().any(|v| *v != values[0])
        })
        .collect();
    groups
        .iter()
        .map(|g| {
            let parts: Vec<String> = differing
                .iter()
                .filter(|f| f.as_str() != "learner" && f.as_str() != "max_iterations")
                .filter_map(|f| match g[0].key.get(*f)? {
                    Value::String(s) => Some(format!("{f}={s}")),
                    v => Some(format!("{f}={v}")),
                })
                .collect();
            if parts.is_empty() {
                g[0].dir.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
            } else {
                parts.join(", ")
            }
        })
        .collect()
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let runs: Vec<Run> = args.runs.iter().map(|d| read_run(d, args.x)).collect::<anyhow::Result<_>>()?;
    if args.x == XAxis::Episodes {
        // Runs with exact payoffs and exact responses play no episodes: no x axis to draw.
        let without: Vec<String> = runs
            .iter()
            .filter(|r| r.points.last().is_none_or(|p| p.0 == 0.0))
            .map(|r| r.dir.display().to_string())
            .collect();
        if !without.is_empty() {
            bail!(
                "--x episodes: {} played no episodes (exact payoffs and responses); plot them with --x iteration or --x time",
                without.join(", ")
            );
        }
    }
    let mut groups: Vec<Vec<Run>> = Vec::new();
    for run in runs {
        match groups.iter_mut().find(|g| g[0].key == run.key) {
            Some(g) => g.push(run),
            None => groups.push(vec![run]),
        }
    }
    let labels = labels(&groups);
    let mut games: Vec<String> = groups
        .iter()
        .filter_map(|g| g[0].key.get("game").and_then(Value::as_str).map(String::from))
        .collect();
    games.dedup();
    let title = args.title.unwrap_or_else(|| format!("NashConv: {}", games.join(", ")));
    let curves: Vec<Curve> = groups
        .into_iter()
        .zip(labels)
        .map(|(g, label)| Curve { label, runs: g.into_iter().map(|r| r.points).collect() })
        .collect();
    let x_label = match args.x {
        XAxis::Iteration => "iteration",
        XAxis::Time => "wall time (s)",
        XAxis::Episodes => "episodes",
    };
    compare_svg(&curves, &title, x_label, "NashConv", &args.out)?;
    for c in &curves {
        outln!("{}: {} run(s)", c.label, c.runs.len());
    }
    outln!("wrote {}", args.out.display());
    Ok(())
}
