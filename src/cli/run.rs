//! `metagame run CONFIG.toml [--out DIR] [--overwrite] [--json]`, `metagame run --resume DIR
//! [CONFIG.toml]`.
//!
//! Progress: a bar with an ETA on a terminal, a line every 5 s or 10% of the iterations on
//! stderr otherwise, one JSON object per iteration and a final summary object with `--json`.
//! A closed stdout does not stop the run: it finishes and writes its folder.

use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use metagame::populations::{IterationReport, StopReason};
use metagame::{ExperimentConfig, RunOptions, run_experiment};
use serde_json::json;

use super::output::{eprint_line, gap, outln, print_json};
use super::signals::Signals;

/// The config file a run folder holds.
const CONFIG_FILE: &str = "config.toml";
/// The lock file a run holds in its folder (`metagame::driver`'s).
const LOCK_FILE: &str = ".metagame.lock";

#[derive(clap::Args)]
pub struct Args {
    /// The experiment config (TOML), e.g. examples/kuhn_psro.toml. With `--resume DIR` it
    /// may be left out (DIR's config.toml is used); given, it must describe the same run (it
    /// may change max_iterations, target_nash_conv and time_budget_seconds).
    #[arg(required_unless_present = "resume")]
    config: Option<PathBuf>,
    /// The run folder (default: runs/<config name>). It must be new or empty unless
    /// `--overwrite` is given.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Replace the run in the output folder (its config, checkpoint, report and figures).
    #[arg(long, conflicts_with = "resume")]
    overwrite: bool,
    /// Print one JSON object per iteration and a final summary object instead of progress.
    #[arg(long)]
    json: bool,
    /// Continue the run in DIR from its checkpoint (DIR is also the output folder).
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    resume: Option<PathBuf>,
    /// Stop right after the checkpoint of iteration N, as if killed (for testing resumption).
    #[arg(long, hide = true, value_name = "N")]
    stop_after: Option<usize>,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let config_path = match (&args.config, &args.resume) {
        (Some(path), _) => path.clone(),
        (None, Some(dir)) => dir.join(CONFIG_FILE),
        // INVARIANT: clap requires CONFIG unless --resume is given.
        (None, None) => unreachable!("clap requires CONFIG or --resume"),
    };
    let config = ExperimentConfig::read(&config_path)?;
    let out_dir = match (&args.resume, &args.out) {
        (Some(dir), _) | (None, Some(dir)) => dir.clone(),
        (None, None) => {
            let stem =
                config_path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or("run".into());
            PathBuf::from("runs").join(stem)
        }
    };
    if args.resume.is_none() {
        check_out_dir(&out_dir, args.overwrite)?;
    }
    let signals = Signals::install()?;
    let options = RunOptions::new(out_dir.clone())
        .resume(args.resume.is_some())
        // `--json` lines are a log: each one only once its iteration is in the checkpoint.
        .durable(args.json)
        .interrupt(signals.flag())
        .stop_after(args.stop_after);

    let mut progress = Progress::new(&config, args.json);
    let mut observer = |r: &IterationReport| {
        progress.report(r);
        ControlFlow::Continue(())
    };
    let report = run_experiment(&config, &options, &mut observer)
        .with_context(|| format!("running {}", config_path.display()));
    progress.finish();
    let Some(report) = report? else {
        // Stopped after a checkpoint on request: behave like a killed process.
        std::process::exit(130);
    };
    let last = report.iterations.last();
    let iterations = last.map_or(0, |r| r.iteration);
    let nash_conv = last.and_then(|r| r.nash_conv);
    // The last one evaluated, where the loop evaluates on a schedule and the run stopped
    // between two (interrupted).
    let known = report.iterations.iter().rev().find_map(|r| nash_conv_text(r).map(|x| (r.iteration, x)));
    if args.json {
        print_json(&json!({
            "summary": true,
            "stop_reason": report.stop_reason,
            "run_dir": out_dir,
            "iterations": iterations,
            "nash_conv": nash_conv,
            "nash_conv_estimate": last.and_then(|r| r.nash_conv_estimate),
            "nash_conv_estimate_stderr": last.and_then(|r| r.nash_conv_estimate_stderr),
            "elapsed_s": last.map_or(0.0, |r| r.elapsed_s),
        }));
    } else if last.is_none() {
        // Stopped before its first report (a time budget that cut PSRO's initial entry).
        outln!(
            "{} {}: no iteration committed ({}); results in {}",
            config.game(),
            config.algorithm().algorithm().title(),
            stop_reason_name(report.stop_reason),
            out_dir.display()
        );
    } else {
        outln!(
            "{} {} after {iterations} iterations: NashConv {} ({}); results in {}",
            config.game(),
            config.algorithm().algorithm().title(),
            latest_nash_conv_text(iterations, known),
            stop_reason_name(report.stop_reason),
            out_dir.display()
        );
    }
    if report.stop_reason == StopReason::Interrupted {
        eprint_line(format_args!(
            "interrupted after iteration {iterations}: its report, figures and report.html are in {}; continue with: metagame run --resume {}",
            out_dir.display(),
            out_dir.display()
        ));
        std::process::exit(signals.exit_code());
    }
    Ok(())
}

/// A fresh run goes into a new or empty folder; a folder holding a run is replaced only with
/// `--overwrite`; other non-empty folders are refused. A folder holding only what a run killed
/// before writing its config leaves (its lock file, temporary files) counts as empty: the
/// driver takes the lock over and removes them.
fn check_out_dir(dir: &Path, overwrite: bool) -> anyhow::Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        // Missing (the driver makes it), or not a folder (the driver says so).
        return Ok(());
    };
    let left_by_a_killed_run = |name: &str| {
        name.starts_with(LOCK_FILE)
            || name.rsplit_once(".tmp-").is_some_and(|(stem, pid)| {
                stem.starts_with('.') && !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())
            })
    };
    let mut entries =
        entries.filter_map(Result::ok).filter(|e| !left_by_a_killed_run(&e.file_name().to_string_lossy()));
    if entries.next().is_none() {
        return Ok(());
    }
    let d = dir.display();
    if !dir.join(CONFIG_FILE).is_file() {
        bail!(
            "{d} is not empty and holds no run (no {CONFIG_FILE}); choose a new or empty folder with --out"
        );
    }
    if !overwrite {
        bail!("{d} already holds a run; add --overwrite to replace it, or continue it with --resume {d}");
    }
    Ok(())
}

/// Why a run stopped, in words.
fn stop_reason_name(reason: StopReason) -> String {
    match reason {
        StopReason::MaxIterations => "max iterations".into(),
        StopReason::TargetReached => "target NashConv".into(),
        StopReason::TimeBudget => "time budget".into(),
        StopReason::Converged => "converged".into(),
        StopReason::Observer => "stopped".into(),
        StopReason::Interrupted => "interrupted".into(),
        StopReason::Running => "still running".into(),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| v.as_str().map(|s| s.replace('_', " ")))
            .unwrap_or_else(|| format!("{other:?}")),
    }
}

/// `m:ss`, or `h:mm:ss` from an hour.
fn clock(seconds: f64) -> String {
    let s = seconds.max(0.0).round() as u64;
    match s / 3600 {
        0 => format!("{}:{:02}", s / 60, s % 60),
        h => format!("{h}:{:02}:{:02}", s / 60 % 60, s % 60),
    }
}

/// How a run shows its progress.
enum Shown {
    /// One JSON object per iteration on stdout.
    Json,
    /// A bar on the terminal (stderr).
    Bar(ProgressBar),
    /// A line on stderr every [`Progress::LINE_EVERY`] or 10% of the iterations.
    Lines { last_line: Option<Instant>, next_mark: usize },
}

/// The progress of a run as its iterations come in, with an estimate of the time left.
struct Progress {
    shown: Shown,
    max_iterations: usize,
    time_budget: Option<f64>,
    started: Instant,
    /// The first iteration this process reported (after a resume, the one after the
    /// checkpoint's).
    first: Option<usize>,
    /// The last NashConv reported and its iteration (loops such as CFR evaluate it on a
    /// schedule, not after every iteration).
    known: Option<(usize, String)>,
}

impl Progress {
    const LINE_EVERY: Duration = Duration::from_secs(5);

    fn new(config: &ExperimentConfig, json: bool) -> Self {
        let max_iterations = config.limits().max_iterations();
        let shown = if json {
            Shown::Json
        } else if std::io::stderr().is_terminal() {
            let bar = ProgressBar::new(max_iterations as u64);
            // 41 columns before the message at most; `wide_msg` takes what is left of the
            // terminal's width and is cut there, so the line never wraps.
            bar.set_style(
                ProgressStyle::with_template("{elapsed_precise} [{bar:20}] {pos}/{len} {wide_msg}")
                    // INVARIANT: the template is a literal that parses.
                    .expect("valid template")
                    .progress_chars("=> "),
            );
            bar.enable_steady_tick(Duration::from_millis(200));
            Shown::Bar(bar)
        } else {
            Shown::Lines { last_line: None, next_mark: 0 }
        };
        Progress {
            shown,
            max_iterations,
            time_budget: config.limits().time_budget_seconds(),
            started: Instant::now(),
            first: None,
            known: None,
        }
    }

    /// Seconds left, from this process's pace: at most the remaining iterations at the mean
    /// time per iteration so far, and at most what is left of the time budget.
    fn eta(&self, r: &IterationReport) -> Option<f64> {
        let first = self.first?;
        let done = r.iteration + 1 - first;
        let per_iteration = self.started.elapsed().as_secs_f64() / done as f64;
        let mut eta = per_iteration * self.max_iterations.saturating_sub(r.iteration) as f64;
        if let Some(budget) = self.time_budget {
            eta = eta.min((budget - r.elapsed_s).max(0.0));
        }
        Some(eta)
    }

    fn report(&mut self, r: &IterationReport) {
        self.first.get_or_insert(r.iteration);
        if let Some(x) = nash_conv_text(r) {
            self.known = Some((r.iteration, x));
        }
        let known = latest_nash_conv_text(r.iteration, self.known.clone());
        let eta = self.eta(r).map_or("?".into(), clock);
        let population = r.population_sizes.iter().map(usize::to_string).collect::<Vec<_>>().join(",");
        match &mut self.shown {
            Shown::Json => {
                // The report's core and, for loops with a meta-game, its meta-game part; the
                // phase times stay in report.json.
                let mut line = serde_json::to_value(r).unwrap_or_default();
                if let Some(fields) = line.as_object_mut() {
                    fields.remove("times");
                }
                print_json(&line);
            }
            Shown::Bar(bar) => {
                bar.set_position(r.iteration as u64);
                bar.set_message(format!("ETA {eta}  NashConv {known}  pop {population}"));
            }
            Shown::Lines { last_line, next_mark } => {
                let due =
                    last_line.is_none_or(|t| t.elapsed() >= Self::LINE_EVERY) || r.iteration >= *next_mark;
                if due {
                    eprint_line(format_args!(
                        "iteration {}/{}  NashConv {known}  pop {population}  elapsed {}  ETA {eta}",
                        r.iteration,
                        self.max_iterations,
                        clock(r.elapsed_s),
                    ));
                    *last_line = Some(Instant::now());
                    // The next tenth of the run from here.
                    let step = self.max_iterations.div_ceil(10).max(1);
                    *next_mark = (r.iteration / step + 1) * step;
                }
            }
        }
    }

    fn finish(&self) {
        if let Shown::Bar(bar) = &self.shown {
            bar.finish_and_clear();
        }
    }
}

/// NashConv at iteration `iteration` from the last one `known`: its value, with its
/// iteration when it is an earlier one's (`1.2e-5 at iteration 9456`), or `-` where none was
/// (the game's tree was not built).
fn latest_nash_conv_text(iteration: usize, known: Option<(usize, String)>) -> String {
    match known {
        Some((k, x)) if k == iteration => x,
        Some((k, x)) => format!("{x} at iteration {k}"),
        None => "-".into(),
    }
}

/// A report's NashConv: the exact value, else the estimate by trained best responses
/// (`≥ 0.83 ± 0.02 (estimated)`: a lower bound up to its error), else none.
fn nash_conv_text(r: &IterationReport) -> Option<String> {
    match (r.nash_conv, r.nash_conv_estimate) {
        (Some(x), _) => Some(gap(x)),
        (None, Some(x)) => Some(format!(
            "≥ {} ± {} (estimated)",
            gap(x),
            gap(r.nash_conv_estimate_stderr.unwrap_or(f64::NAN))
        )),
        (None, None) => None,
    }
}
