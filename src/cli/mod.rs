//! Subcommands of the `metagame` binary, one file each.

use clap::{Parser, Subcommand};

mod exploitability;
mod game_info;
mod matches;
mod plot;
mod respond;
mod run;
mod solve;

/// Game-theoretic population training: PSRO, meta-game solvers and exact exploitability.
#[derive(Parser)]
#[command(name = "metagame", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    /// Run an experiment config (PSRO, XFP, Double Oracle) into a run folder.
    Run(run::Args),
}

/// Parse the command line and run the subcommand.
pub fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::GameInfo(args) => game_info::run(args),
        Command::Exploitability(args) => exploitability::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Matches(args) => matches::run(args),
        Command::Plot(args) => plot::run(args),
        Command::Respond(args) => respond::run(args),
        Command::Run(args) => run::run(args),
    }
}

/// Print one JSON value on one line of stdout. A closed pipe (`| head`) ends the process
/// quietly, as command-line tools do.
pub fn print_json(value: &serde_json::Value) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if writeln!(out, "{value}").and_then(|()| out.flush()).is_err() {
        std::process::exit(0);
    }
}
