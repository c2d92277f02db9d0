//! `metagame run CONFIG.toml [--out DIR] [--json] [--resume DIR]`.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use metagame::{ExperimentConfig, RunOptions, run_experiment};

#[derive(clap::Args)]
pub struct Args {
    /// The experiment config (TOML), e.g. examples/kuhn_psro.toml.
    config: PathBuf,
    /// The run folder (default: runs/<config name>).
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print one JSON object per iteration instead of a progress bar.
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
    let config = ExperimentConfig::read(&args.config)?;
    let out_dir = match (&args.resume, &args.out) {
        (Some(dir), _) | (None, Some(dir)) => dir.clone(),
        (None, None) => {
            let stem =
                args.config.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or("run".into());
            PathBuf::from("runs").join(stem)
        }
    };
    let options =
        RunOptions { out_dir: out_dir.clone(), resume: args.resume.is_some(), stop_after: args.stop_after };

    let bar = (!args.json).then(|| {
        let bar = ProgressBar::new(config.limits().max_iterations() as u64);
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] it {pos}/{len} {msg}")
                // INVARIANT: the template is a literal that parses.
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    let json_mode = args.json;
    let mut observer = |r: &metagame::populations::IterationReport| {
        if json_mode {
            // The report's core and, for loops with a meta-game, its meta-game part; the
            // phase times stay in report.json.
            let mut line = serde_json::to_value(r).unwrap_or_default();
            if let Some(fields) = line.as_object_mut() {
                fields.remove("times");
            }
            super::print_json(&line);
        } else if let Some(bar) = &bar {
            bar.set_position(r.iteration as u64);
            bar.set_message(format!("pop {:?}  NashConv {:.3e}", r.population_sizes, r.nash_conv));
        }
        ControlFlow::Continue(())
    };
    let report = run_experiment(&config, &options, &mut observer)
        .with_context(|| format!("running {}", args.config.display()))?;
    if let Some(bar) = &bar {
        bar.finish();
    }
    match report {
        None => {
            // Stopped after a checkpoint on request: behave like a killed process.
            std::process::exit(130);
        }
        Some(report) if !args.json => {
            let last = report.iterations.last();
            println!(
                "{} {} after {} iterations: NashConv {:.6e} ({:?}); results in {}",
                config.game(),
                config.algorithm().algorithm().as_str(),
                last.map_or(0, |r| r.iteration),
                last.map_or(f64::NAN, |r| r.nash_conv),
                report.stop_reason,
                out_dir.display()
            );
        }
        Some(_) => {}
    }
    Ok(())
}
