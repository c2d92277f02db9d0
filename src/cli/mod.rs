//! Subcommands of the `metagame` binary, one file each; what they share is in `output.rs`
//! (what they write) and `args.rs` (the node limit and the policies they take).

use clap::{Parser, Subcommand};

mod args;
mod bench;
mod config_example;
mod exploitability;
mod game_info;
mod games;
mod matches;
mod output;
mod plot;
mod respond;
mod run;
mod signals;
mod solve;

pub use output::eprint_line;

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
