//! `metagame bench --games G1,G2 --algorithms A1,A2 --budget 30s|N [--seeds K] [--out DIR]
//! [--compare PEER.json]`: each algorithm on each game within the budget, every cell an
//! ordinary run (`DIR/runs/<game>/<algorithm>/seed<k>`), then `DIR/bench.json`, one figure per
//! game (`DIR/<game>.svg`) and `DIR/bench.md`.
//!
//! Everything is checked before the first cell runs: the names, the budget, the peer file
//! and that DIR can be written. A cell whose algorithm does not apply to its game is skipped
//! with one line. Ctrl-C stops the cell in progress after its step and writes what was done
//! (exit 130). Progress: a bar over the whole grid on a terminal (stderr); one line per cell
//! on stdout.

use std::io::IsTerminal;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use anyhow::{Context, anyhow, bail};
use indicatif::{ProgressBar, ProgressStyle};
use metagame::bench::{
    BENCH_FORMAT, BenchAlgorithm, BenchCell, BenchFile, BenchRecord, Budget, CellStatus, Machine, Thinned,
    bench_table,
};
use metagame::bench_plot::{BenchLine, bench_svg};
use metagame::populations::{IterationReport, StopReason};
use metagame::{RunOptions, run_experiment};

use super::output::{gap, outln};
use super::signals::Signals;

#[derive(clap::Args)]
pub struct Args {
    /// Games, comma-separated (`metagame games` lists them), e.g. kuhn_poker,leduc_poker.
    #[arg(long, required_unless_present = "redraw", value_delimiter = ',')]
    games: Vec<String>,
    /// Algorithms, comma-separated: cfr, cfr+, linear-cfr (lcfr), dcfr, pcfr+ (each also with
    /// `:vectors`, the hand-vector walk: cfr+:vectors), mccfr-outcome, mccfr-external, psro-<meta-solver> (psro-nash, psro-uniform, psro-prd, ...),
    /// psro-<meta-solver>:<oracle> (psro-nash:ppo, psro-nash:dqn: learned responses, seeded;
    /// on a game whose tree is not built, NashConv estimated), xfp, fxp, league,
    /// double-oracle.
    #[arg(long, required_unless_present = "redraw", value_delimiter = ',')]
    algorithms: Vec<String>,
    /// Per (algorithm, game, seed) run: wall time such as `30s`, or iterations such as `100`.
    #[arg(long, required_unless_present = "redraw")]
    budget: Option<String>,
    /// Stop each cell once its NashConv is at most this (checked where the cell evaluates it:
    /// CFR on its schedule), and report the time each took to get there.
    #[arg(long, value_name = "NASHCONV")]
    target: Option<f64>,
    /// The most nodes of a game tree a cell builds (default 10 000 000). A game past it is
    /// played on its states: learned PSRO (`psro-nash:ppo`) estimates its NashConv there, and
    /// the algorithms that need the tree are skipped.
    #[arg(long, value_name = "N")]
    max_nodes: Option<u64>,
    /// Seeds 0 to K-1 of the seeded algorithms (MCCFR, the league, learned PSRO); the others
    /// run once.
    #[arg(long, default_value_t = 1)]
    seeds: u64,
    /// The bench folder (bench.json, bench.md, a figure per game, runs/).
    #[arg(long, default_value = "bench")]
    out: PathBuf,
    /// A peer's bench.json (`benches/peers/bench.py`): its lines dashed on the same figures,
    /// its columns in the table.
    #[arg(long, value_name = "PEER.json")]
    compare: Option<PathBuf>,
    /// Keep each cell's run folder (DIR/runs/…: checkpoint, history, report, figures). By
    /// default it is removed once the cell's records are in bench.json: a fast algorithm's
    /// folder grows by a report per iteration (a 30 s Kuhn CFR+ cell writes about 1 GB).
    #[arg(long, conflicts_with = "redraw")]
    keep_runs: bool,
    /// Run nothing: read DIR/bench.json and write bench.md and the figures again (with
    /// `--compare`'s peer beside it).
    #[arg(long, conflicts_with_all = ["games", "algorithms", "budget", "seeds", "target", "max_nodes"])]
    redraw: bool,
}

/// One cell of the grid to run.
struct Cell<'a> {
    algorithm: &'a BenchAlgorithm,
    game: &'a str,
    seed: u64,
}

pub fn run(args: Args) -> anyhow::Result<()> {
    let peer = match &args.compare {
        Some(path) => Some(BenchFile::read(path).with_context(|| format!("--compare {}", path.display()))?),
        None => None,
    };
    if args.redraw {
        let path = args.out.join("bench.json");
        let file = BenchFile::read(&path)?;
        write_outputs(&args.out, &file, peer.as_ref())?;
        outln!("bench.md and the figures of {} written again", path.display());
        return Ok(());
    }
    // INVARIANT: clap requires --budget without --redraw.
    let budget = Budget::parse(args.budget.as_deref().unwrap_or_default()).map_err(|e| anyhow!(e))?;
    if args.seeds == 0 {
        bail!("--seeds must be at least 1");
    }
    let algorithms = args
        .algorithms
        .iter()
        .map(|a| BenchAlgorithm::parse(a).map_err(|e| anyhow!(e)))
        .collect::<Result<Vec<_>, _>>()?;
    // Which games are played on their states (their trees too large to build): learned PSRO
    // estimates its NashConv there. Known only by trying, so only when such a cell runs.
    let mut on_states = std::collections::HashSet::new();
    for game in &args.games {
        metagame::games::registry::load(game).with_context(|| format!("game `{game}`"))?;
        if algorithms.iter().any(BenchAlgorithm::learned) {
            let limit = args.max_nodes.unwrap_or(metagame::games::GameTree::DEFAULT_MAX_NODES as u64);
            let loaded = metagame::LoadedGame::load(game, limit)?;
            if loaded.arena().game_tree().is_none() {
                on_states.insert(game.clone());
            }
        }
        // Every cell's config, so that a bad combination is refused before any work.
        for a in &algorithms {
            a.config(game, budget, 0, args.target, args.max_nodes, on_states.contains(game))?;
        }
    }
    check_writable(&args.out)?;

    let cells: Vec<Cell<'_>> = args
        .games
        .iter()
        .flat_map(|game| {
            algorithms.iter().flat_map(move |algorithm| {
                let seeds = if algorithm.seeded() { args.seeds } else { 1 };
                (0..seeds).map(move |seed| Cell { algorithm, game, seed })
            })
        })
        .collect();
    for a in algorithms.iter().filter(|a| !a.seeded() && args.seeds > 1) {
        outln!("{} is deterministic: one run per game, not {}", a.name(), args.seeds);
    }

    let signals = Signals::install()?;
    let started = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs());
    let mut file = BenchFile {
        format: BENCH_FORMAT.into(),
        tool: "metagame".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        machine: Machine::here(),
        budget,
        seeds: args.seeds as usize,
        target: args.target,
        games: args.games.clone(),
        algorithms: algorithms.iter().map(|a| a.name().to_string()).collect(),
        started,
        cells: Vec::new(),
        records: Vec::new(),
    };
    let bar = grid_bar(cells.len());
    let mut interrupted = false;
    for (k, cell) in cells.iter().enumerate() {
        let name = cell.algorithm.name();
        // A skipped algorithm is skipped on that game for every seed, said once.
        if file
            .cells
            .iter()
            .any(|c| c.status == CellStatus::Skipped && c.algorithm == name && c.game == cell.game)
        {
            continue;
        }
        let relative = format!("runs/{}/{}/seed{}", file_name(cell.game), file_name(name), cell.seed);
        let config = cell.algorithm.config(
            cell.game,
            budget,
            cell.seed,
            args.target,
            args.max_nodes,
            on_states.contains(cell.game),
        )?;
        let options = RunOptions::new(args.out.join(&relative)).interrupt(signals.flag());
        let mut thinned = Thinned::default();
        let mut last: Option<(usize, f64)> = None;
        if let Some(bar) = &bar {
            bar.set_message(format!("{} {name} seed {}", cell.game, cell.seed));
        }
        let mut observer = |r: &IterationReport| {
            // On a built tree every report has its NashConv, or (CFR) those on its evaluation
            // schedule; on a game played on its states, learned PSRO's estimates.
            let value = match (r.nash_conv, r.nash_conv_estimate) {
                (Some(nash_conv), _) => Some((nash_conv, None)),
                (None, Some(estimate)) => Some((estimate, r.nash_conv_estimate_stderr)),
                (None, None) => None,
            };
            if let Some((nash_conv, stderr)) = value {
                thinned.push(BenchRecord {
                    algorithm: name.into(),
                    game: cell.game.into(),
                    seed: cell.seed,
                    iteration: r.iteration,
                    seconds: r.elapsed_s,
                    nash_conv,
                    stderr,
                });
            }
            last = Some((r.iteration, r.elapsed_s));
            if let Some(bar) = &bar {
                let done = match budget {
                    Budget::Seconds(s) => r.elapsed_s / s,
                    Budget::Iterations(n) => r.iteration as f64 / n as f64,
                };
                bar.set_position((k as f64 * 1000.0 + done.clamp(0.0, 1.0) * 1000.0) as u64);
            }
            ControlFlow::Continue(())
        };
        let result = run_experiment(&config, &options, &mut observer);
        let records = thinned.finish();
        let (iterations, seconds) = last.unwrap_or((0, 0.0));
        let mut entry = BenchCell {
            algorithm: name.into(),
            game: cell.game.into(),
            seed: cell.seed,
            seeded: cell.algorithm.seeded(),
            status: CellStatus::Finished,
            note: None,
            iterations,
            seconds,
            run_dir: Some(relative.clone()),
        };
        match result {
            Ok(Some(report)) => {
                entry.note = serde_json::to_value(report.stop_reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string));
                if report.stop_reason == StopReason::Interrupted {
                    entry.status = CellStatus::Interrupted;
                    interrupted = true;
                }
                let nash_conv = records.last().map_or(f64::NAN, |r| r.nash_conv);
                line(
                    &bar,
                    format!(
                        "{} {name} seed {}: NashConv {} after {iterations} iterations, {seconds:.1} s{}",
                        cell.game,
                        cell.seed,
                        gap(nash_conv),
                        if interrupted { " (interrupted)" } else { "" }
                    ),
                );
            }
            // Not produced without the test hook `stop_after`.
            Ok(None) => bail!("{} {name}: the run stopped without a report", cell.game),
            Err(e) if records.is_empty() && does_not_apply(&e) => {
                let reason = crate::error_text(&anyhow::Error::new(e));
                line(&bar, format!("skipped {name} on {}: {reason}", cell.game));
                entry.status = CellStatus::Skipped;
                entry.note = Some(reason);
                entry.run_dir = None;
            }
            Err(e) => {
                return Err(anyhow::Error::new(e).context(format!("bench: {name} on {}", cell.game)));
            }
        }
        let run_dir = args.out.join(&relative);
        if !args.keep_runs && run_dir.exists() {
            std::fs::remove_dir_all(&run_dir).with_context(|| format!("removing {}", run_dir.display()))?;
            entry.run_dir = None;
            // Its parents too while empty (runs/<game>/<algorithm>, runs/<game>, runs).
            let runs = args.out.join("runs");
            for parent in run_dir.ancestors().skip(1).take_while(|p| p.starts_with(&runs)) {
                if std::fs::remove_dir(parent).is_err() {
                    break;
                }
            }
        }
        file.cells.push(entry);
        file.records.extend(records);
        // bench.json after every cell: a killed benchmark keeps what it finished.
        write_json(&args.out, &file)?;
        if interrupted {
            break;
        }
    }
    if let Some(bar) = &bar {
        bar.finish_and_clear();
    }
    write_outputs(&args.out, &file, peer.as_ref())?;
    outln!("bench results in {} (bench.json, bench.md, a figure per game)", args.out.display());
    if interrupted {
        super::output::eprint_line(format_args!(
            "interrupted: bench.json, bench.md and the figures in {} hold the cells done so far",
            args.out.display()
        ));
        std::process::exit(signals.exit_code());
    }
    Ok(())
}

/// True for a cell's error that says the algorithm does not apply to the game (a loop
/// refusing its players, a team game, a game too large for its normal form or its tree), not
/// a failure.
fn does_not_apply(e: &metagame::Error) -> bool {
    matches!(
        e,
        metagame::Error::Game(_)
            | metagame::Error::Populations(_)
            | metagame::Error::Solve(_)
            | metagame::Error::TreeTooLarge { .. }
    )
}

/// A name as a file name: letters, digits, `-`, `_`, `+` and `.` kept, the rest `_`
/// (`kuhn_poker(players=3)` → `kuhn_poker_players_3_`).
fn file_name(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() || "-_+.".contains(c) { c } else { '_' }).collect()
}

/// Create the bench folder and write and remove a file in it, before any work.
fn check_writable(dir: &Path) -> anyhow::Result<()> {
    let d = dir.display();
    std::fs::create_dir_all(dir).with_context(|| format!("--out {d} cannot be created"))?;
    let probe = dir.join(format!(".bench-probe-{}", std::process::id()));
    std::fs::write(&probe, b"").with_context(|| format!("--out {d} is not writable"))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}

/// A bar over the grid (1 000 steps a cell) on a terminal; none otherwise.
fn grid_bar(cells: usize) -> Option<ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(cells as u64 * 1000);
    bar.set_style(
        ProgressStyle::with_template("{elapsed_precise} [{bar:30}] {percent}% ETA {eta} {wide_msg}")
            // INVARIANT: the template is a literal that parses.
            .expect("valid template")
            .progress_chars("=> "),
    );
    bar.enable_steady_tick(Duration::from_millis(200));
    Some(bar)
}

/// A line on stdout, above the bar when there is one.
fn line(bar: &Option<ProgressBar>, text: String) {
    match bar {
        Some(bar) => bar.suspend(|| outln!("{text}")),
        None => outln!("{text}"),
    }
}

fn write_json(dir: &Path, file: &BenchFile) -> anyhow::Result<()> {
    let path = dir.join("bench.json");
    let text = serde_json::to_string_pretty(file).context("bench.json")?;
    metagame::populations::checkpoint::write_atomic(&path, text.as_bytes())
        .with_context(|| format!("writing {}", path.display()))
}

/// bench.json, bench.md and one figure per game.
fn write_outputs(dir: &Path, file: &BenchFile, peer: Option<&BenchFile>) -> anyhow::Result<()> {
    write_json(dir, file)?;
    let table = dir.join("bench.md");
    metagame::populations::checkpoint::write_atomic(&table, bench_table(file, peer).as_bytes())
        .with_context(|| format!("writing {}", table.display()))?;
    for game in &file.games {
        let mut lines = Vec::new();
        for (k, algorithm) in file.algorithms.iter().enumerate() {
            lines.push(bench_line(file, game, algorithm, algorithm.clone(), k, false));
        }
        if let Some(p) = peer {
            for algorithm in &p.algorithms {
                let k = file.algorithms.iter().position(|a| a == algorithm).unwrap_or_else(|| {
                    file.algorithms.len() + p.algorithms.iter().position(|a| a == algorithm).unwrap_or(0)
                });
                lines.push(bench_line(p, game, algorithm, format!("{} {algorithm}", p.tool), k, true));
            }
        }
        lines.retain(|l| !l.seeds.is_empty());
        if lines.is_empty() {
            continue;
        }
        let path = dir.join(format!("{}.svg", file_name(game)));
        let title = format!("{game}: NashConv against wall time ({} per run)", file.budget.label());
        bench_svg(&lines, &title, &path)?;
    }
    Ok(())
}

fn bench_line(
    file: &BenchFile,
    game: &str,
    algorithm: &str,
    mut label: String,
    color: usize,
    dashed: bool,
) -> BenchLine {
    if file.estimated(game, algorithm) {
        label.push_str(" (estimated, a lower bound)");
    }
    let seeds = file
        .curves(game, algorithm)
        .into_iter()
        .map(|c| c.into_iter().map(|p| (p.1, p.2)).collect())
        .collect();
    BenchLine { label, color, dashed, seeds }
}
