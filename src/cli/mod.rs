//! Subcommands of the `metagame` binary, one file each.

use clap::{Parser, Subcommand};

mod exploitability;
mod game_info;
mod matches;
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
}

/// Parse the command line and run the subcommand.
pub fn run() -> anyhow::Result<()> {
    let cli = Cli::parse();
    match cli.command {
        Command::GameInfo(args) => game_info::run(args),
        Command::Exploitability(args) => exploitability::run(args),
        Command::Solve(args) => solve::run(args),
        Command::Matches(args) => matches::run(args),
    }
}

/// Print one JSON value on one line of stdout.
pub fn print_json(value: &serde_json::Value) {
    println!("{value}");
}
