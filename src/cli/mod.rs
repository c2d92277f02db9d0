//! Subcommands of the `metagame` binary, one file each.

use std::fmt;
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Context;
use clap::{Parser, Subcommand};
use metagame::LoadedGame;
use metagame::games::{Arena, GameTree, Policy, TabularPolicy};

mod bench;
mod config_example;
mod exploitability;
mod game_info;
mod games;
mod matches;
mod plot;
mod respond;
mod run;
mod signals;
mod solve;

/// Game-theoretic population training: PSRO, meta-game solvers and exact exploitability.
#[derive(Parser)]
#[command(name = "metagame", version, after_help = algorithms_help())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Every game with its parameters and their defaults (`game = "NAME(key=value)"`).
    Games(games::Args),
    /// Size of a game's tree: histories, terminals, infosets per player, actions.
    GameInfo(game_info::Args),
    /// Exact NashConv and exploitability of a tabular policy.
    Exploitability(exploitability::Args),
    /// Solve a normal-form game (a .nfg file or a game string) with a meta-solver.
    Solve(solve::Args),
    /// Evaluate the payoff table among policies by exact or sampled matches.
    Matches(matches::Args),
    /// Several run folders on one NashConv figure (seeds of one config as mean and band).
    Plot(plot::Args),
    /// Train one learned response against fixed opponents; score it against the exact
    /// best response as training goes.
    Respond(respond::Args),
    /// Run an experiment config into a run folder (any registered algorithm: see the list
    /// below).
    Run(run::Args),
    /// Print an annotated experiment config (`--example ALGORITHM`).
    Config(config_example::Args),
    /// Run algorithms on games within a budget per run: NashConv against time and
    /// iterations in bench.json, a figure per game and a table (`--compare` adds a peer's).
    Bench(bench::Args),
}

/// The registered algorithms, one line each, for `--help`.
fn algorithms_help() -> String {
    let mut text = String::from("Algorithms (`algorithm = \"NAME\"` in a config):\n");
    for a in metagame::Algorithm::ALL {
        text.push_str(&format!("  {:<14} {}\n", a.as_str(), a.about()));
    }
    text
}

/// Parse the command line and run the subcommand.
pub fn run() -> anyhow::Result<()> {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => e.exit(), // --help and --version: clap's text on stdout
        Err(e) => {
            // A usage error: what clap says is wrong (the lines before its usage and tips),
            // then where to look, on one line.
            let text = e.render().to_string();
            let what: Vec<&str> = text
                .lines()
                .map(str::trim)
                .take_while(|l| !l.starts_with("Usage:") && !l.starts_with("For more information"))
                .filter(|l| !l.is_empty() && !l.starts_with("tip:"))
                .collect();
            let what = what.join(" ");
            let what = what.strip_prefix("error: ").unwrap_or(&what);
            eprint_line(format_args!("error: {what} (see --help)"));
            std::process::exit(2);
        }
    };
    match cli.command {
        Command::Games(args) => games::run(args),
        Command::GameInfo(args) => game_info::run(args),
        Command::Exploitability(args) => exploitability::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Matches(args) => matches::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Respond(args) => respond::run(args),
        Command::Run(args) => run::run(args),
        Command::Config(args) => config_example::run(args),
        Command::Bench(args) => bench::run(args),
    }
}

/// Set once a write to stdout failed (a closed pipe, as in `| head -1`): later output is
/// dropped and the command goes on with its work (a run finishes and writes its folder,
/// `respond --out` writes its policy).
static STDOUT_GONE: AtomicBool = AtomicBool::new(false);

/// Write `args` and a newline to stdout, unless stdout has gone away. A failed write is not
/// an error: the output is for the reader, the files are the command's result.
pub fn print_line(args: fmt::Arguments<'_>) {
    if STDOUT_GONE.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{args}").and_then(|()| out.flush()).is_err() {
        STDOUT_GONE.store(true, Ordering::Relaxed);
    }
}

/// Write `args` and a newline to stderr; a closed stderr is ignored (`2>&1 | head -1`).
pub fn eprint_line(args: fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    let _ = writeln!(err, "{args}");
}

/// `println!` that never panics: see [`print_line`].
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::cli::print_line(format_args!($($arg)*))
    };
}
pub(crate) use outln;

/// Print one JSON value on one line of stdout (see [`print_line`]).
pub fn print_json(value: &serde_json::Value) {
    print_line(format_args!("{value}"));
}

/// A NashConv (or another non-negative gap) as people write it: `0` only when it is 0,
/// `0.115`, `0.4123`; scientific notation with two digits below 1e-4 (`3.2e-9`, `6.9e-17`:
/// a value at the rounding noise of payoffs of order 1 is still printed as what it is).
/// The JSON output and report.json keep the exact value.
pub fn gap(x: f64) -> String {
    if !x.is_finite() {
        return format!("{x}");
    }
    if x == 0.0 {
        return "0".into();
    }
    if x.abs() < 1e-4 {
        return format!("{x:.1e}");
    }
    let text = format!("{x:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// The node limit of the game trees a command builds (`--max-nodes`).
#[derive(clap::Args, Clone, Copy, Debug)]
pub struct TreeLimit {
    /// The most nodes of a game tree the command builds; a game past it is played by
    /// rollouts on its states, and work that needs the tree says so. About 250 bytes a node.
    #[arg(long, value_name = "N", default_value_t = GameTree::DEFAULT_MAX_NODES as u64)]
    pub max_nodes: u64,
}

impl TreeLimit {
    /// `spec`, its tree built where it fits the limit.
    pub fn load(self, spec: &str) -> anyhow::Result<LoadedGame> {
        Ok(LoadedGame::load(spec, self.max_nodes)?)
    }
}

/// A policy of `arena`'s game, as the registry's policy kinds read it: `uniform`,
/// `first-action`, `minimax` (games of perfect information), an OpenSpiel policy JSON file.
/// A JSON file none of whose information states the game has is named as a policy of
/// another game.
pub fn read_policy(arena: Arena<'_>, spec: &str) -> anyhow::Result<Box<dyn Policy>> {
    metagame::registry::policy(arena, spec).map_err(|e| {
        let unknown = matches!(e, metagame::Error::Game(metagame::games::Error::UnknownInfoState(_)));
        let what = match arena.game_tree() {
            Some(tree) if unknown && !shares_an_infoset(tree, Path::new(spec)) => {
                format!("{spec} is not a policy of {}", tree.name())
            }
            _ => format!("reading policy {spec}"),
        };
        anyhow::Error::new(e).context(what)
    })
}

/// A policy as a table over `tree` (read as [`read_policy`], tabulated when it is not one):
/// for the commands that run the tabular algorithms.
pub fn read_table(tree: &GameTree, spec: &str) -> anyhow::Result<TabularPolicy> {
    let policy = read_policy(Arena::tree(tree), spec)?;
    TabularPolicy::tabulate(tree, policy.as_ref()).with_context(|| format!("tabulating policy {spec}"))
}

/// An evaluator's error with the policy it names given by its spec.
pub fn name_policy(e: metagame::games::Error, specs: &[String]) -> anyhow::Error {
    let name = match &e {
        metagame::games::Error::PolicyFailed { policy, .. } => specs.get(*policy).cloned(),
        _ => None,
    };
    match name {
        Some(spec) => anyhow::Error::new(e).context(format!("policy {spec}")),
        None => e.into(),
    }
}

/// True when the policy file has at least one of `tree`'s information states.
fn shares_an_infoset(tree: &GameTree, file: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(file) else { return true };
    let Ok(serde_json::Value::Object(states)) = serde_json::from_str(&text) else { return true };
    states.keys().any(|key| tree.infoset_by_key(key).is_some())
}

#[cfg(test)]
mod tests {
    #[test]
    fn gaps_read_as_plain_numbers() {
        assert_eq!(super::gap(0.0), "0");
        assert_eq!(super::gap(6.938893903907228e-17), "6.9e-17");
        assert_eq!(super::gap(5.58e-14), "5.6e-14");
        assert_eq!(super::gap(0.114828_123), "0.114828");
        assert_eq!(super::gap(0.5), "0.5");
        assert_eq!(super::gap(2.0), "2");
        assert_eq!(super::gap(120.0), "120");
        assert_eq!(super::gap(3.2e-9), "3.2e-9");
    }
}
