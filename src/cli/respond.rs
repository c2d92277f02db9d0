//! `metagame respond --game G --against POLICY --seat N --learner NAME --episodes N`: train
//! one learned response against fixed opponents and score it against the exact best
//! response at evenly spaced points of training.
//!
//! Ctrl-C (or SIGTERM) stops training at the learner's next batch, as `metagame run` stops
//! after its step: the response learned so far is scored, written (`--out`) and summed up,
//! and the command exits 130 (143); a second signal ends it at once.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use indicatif::{ProgressBar, ProgressStyle};
use metagame::LearnerSettings;
use metagame::OracleName;
use metagame::games::{Cutoff, GameTree, PlayerId, TabularPolicy, best_response, expected_returns};
use metagame::learners::{OpponentSampler, ValueTable};
use serde_json::json;

use super::output::outln;
use super::signals::Signals;

#[derive(clap::Args)]
pub struct Args {
    /// OpenSpiel-style game string, e.g. `leduc_poker`.
    #[arg(long)]
    game: String,
    /// The opponents' policy: `uniform`, `first-action`, `minimax`, or an OpenSpiel tabular policy
    /// JSON file (its rows for the other seats are used).
    #[arg(long, value_name = "POLICY")]
    against: String,
    /// The seat the response plays.
    #[arg(long, default_value_t = 0)]
    seat: usize,
    /// `q-learning`, `actor-critic` or `minimax-q` (default settings).
    #[arg(long)]
    learner: String,
    /// Training episodes (1 to 10^12).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=metagame::games::MAX_EPISODES))]
    episodes: u64,
    /// Seed of every random draw of training.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// minimax-q: the main agent's policy (`uniform`, `first-action`, `minimax` or a JSON file;
    /// default: the `--against` policy). Its values are the exact action values of the main
    /// policy in self-play, as a perfectly trained critic would estimate them.
    #[arg(long, value_name = "POLICY")]
    main: Option<String>,
    /// minimax-q: the shaping weight α, in [0, 1] (default 0.1).
    #[arg(long, allow_negative_numbers = true)]
    alpha: Option<f64>,
    /// How many evenly spaced points of training to score (the last is the end).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=10_000))]
    points: u64,
    /// Write the learned policy (OpenSpiel tabular JSON) here.
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Print one JSON object per point and a summary object instead of text.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    limit: super::args::TreeLimit,
}

fn read_policy(tree: &GameTree, spec: &str, what: &str) -> anyhow::Result<TabularPolicy> {
    super::args::read_table(tree, spec).with_context(|| format!("{what} {spec} (for {})", tree.name()))
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let Some(mut settings) = args.learner.parse().ok().and_then(LearnerSettings::defaults) else {
        let learners: Vec<&str> = OracleName::learned().map(OracleName::as_str).collect();
        bail!("--learner: unknown learner `{}`; learners: {}", args.learner, learners.join(", "));
    };
    // The learners with reward shaping by a main agent's values read --alpha and --main.
    let shaped = || {
        let names: Vec<&str> = OracleName::learned()
            .filter(|o| {
                LearnerSettings::defaults(*o).is_some_and(|s| s.choice().config().shaping().is_some())
            })
            .map(OracleName::as_str)
            .collect();
        names.join(", --learner ")
    };
    match (settings.shaping_mut(), args.alpha, &args.main) {
        (Some(shaping), Some(alpha), _) => shaping.alpha = alpha,
        (Some(_), None, _) => {}
        (None, Some(_), _) => bail!("--alpha is read only by --learner {}", shaped()),
        (None, None, Some(_)) => bail!("--main is read only by --learner {}", shaped()),
        _ => {}
    }
    settings.validate().map_err(|e| anyhow::anyhow!("--alpha: {e}"))?;

    // The output folder is checked before any training, so a typo costs no run.
    if let Some(path) = &args.out {
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(std::path::Path::new("."));
        if !parent.is_dir() {
            bail!("--out {}: the folder {} does not exist", path.display(), parent.display());
        }
    }
    let loaded = args.limit.load(&args.game)?;
    let tree = loaded.tree("a learned response (tabular learners)")?;
    let n = tree.num_players();
    if args.seat >= n {
        bail!("--seat {} does not exist in {} ({n} players: 0..{})", args.seat, args.game, n - 1);
    }
    let against = read_policy(tree, &args.against, "--against")?;
    let main_values = match settings.choice().config().shaping() {
        Some(shaping) => {
            let main = match &args.main {
                Some(spec) => read_policy(tree, spec, "--main")?,
                None => against.clone(),
            };
            let main_seat = shaping.main_seat.unwrap_or(1 - args.seat.min(1));
            Some(ValueTable::exact(tree, main_seat, &vec![&main; n])?)
        }
        None => None,
    };
    let mut learner = settings.learner(tree, args.seat, args.seed, main_values.as_ref())?;
    // Before anything is printed: from the first line on, Ctrl-C stops between batches.
    let signals = Signals::install()?;

    let opponents = OpponentSampler::fixed(&against);
    let profile = vec![&against; n];
    let (_, best_value) = best_response(tree, PlayerId(args.seat), &profile)?;
    let (lo, hi) = tree.utility_range(PlayerId(args.seat));
    let range = (hi - lo).max(f64::MIN_POSITIVE);

    let bar = (!args.json && std::io::stderr().is_terminal()).then(|| {
        let bar = ProgressBar::new(args.episodes);
        bar.set_style(
            ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {pos}/{len} episodes, ETA {eta}")
                // INVARIANT: the template is a literal that parses.
                .expect("valid template")
                .progress_chars("=> "),
        );
        bar.enable_steady_tick(Duration::from_millis(200));
        bar
    });
    if !args.json {
        outln!(
            "{} seat {} vs {}: {} for {} episodes (seed {}); exact best-response value {best_value:.6}",
            args.game,
            args.seat,
            args.against,
            args.learner,
            args.episodes,
            args.seed
        );
        outln!("{:>12} {:>12} {:>12} {:>10} {:>10}", "episodes", "value", "best value", "gap", "gap/range");
    }
    let stop = Cutoff::when_set(signals.flag());
    let mut interrupted = false;
    let started = Instant::now();
    let mut done = 0;
    let mut last = (0.0, 0.0);
    for k in 1..=args.points {
        let target = args.episodes * k / args.points;
        if target > done {
            match learner.train_until(tree, &opponents, target - done, &stop) {
                Ok(()) => {}
                // Stopped between batches: score what the finished batches learned.
                Err(metagame::learners::Error::CutOff) => interrupted = true,
                Err(e) => return Err(e.into()),
            }
            done = learner.stats().episodes;
        }
        let policy = learner.policy();
        let mut seats = profile.clone();
        seats[args.seat] = &policy;
        let value = expected_returns(tree, &seats)?[args.seat];
        let gap = (best_value - value).max(0.0);
        last = (value, gap);
        if let Some(bar) = &bar {
            bar.set_position(done);
        }
        if args.json {
            super::output::print_json(&json!({
                "episodes": done,
                "value": value,
                "best_response_value": best_value,
                "gap": gap,
                "gap_fraction_of_range": gap / range,
                "seconds": started.elapsed().as_secs_f64(),
            }));
        } else {
            let line = format!(
                "{done:>12} {value:>12.6} {best_value:>12.6} {gap:>10.6} {:>9.3}%",
                100.0 * gap / range
            );
            match &bar {
                Some(bar) => bar.println(line),
                None => outln!("{line}"),
            }
        }
        if interrupted {
            break;
        }
    }
    if let Some(bar) = bar {
        bar.finish_and_clear();
    }
    if let Some(path) = &args.out {
        let text = learner.policy().to_openspiel_json(tree);
        metagame::populations::checkpoint::write_atomic(path, text.as_bytes())?;
    }
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        super::output::print_json(&json!({
            "summary": true,
            "game": args.game,
            "seat": args.seat,
            "learner": args.learner,
            "episodes": done,
            "seed": args.seed,
            "value": last.0,
            "best_response_value": best_value,
            "gap": last.1,
            "gap_fraction_of_range": last.1 / range,
            "payoff_range": [lo, hi],
            "seconds": seconds,
            "out": args.out,
            "interrupted": interrupted,
        }));
    } else {
        outln!(
            "gap {:.6} ({:.3}% of the payoff range {lo}..{hi}) after {done} episodes in {seconds:.2} s{}",
            last.1,
            100.0 * last.1 / range,
            args.out.as_ref().map(|p| format!("; policy written to {}", p.display())).unwrap_or_default()
        );
    }
    if interrupted {
        super::output::eprint_line(format_args!("interrupted after {done} of {} episodes", args.episodes));
        std::process::exit(signals.exit_code());
    }
    Ok(())
}
