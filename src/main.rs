//! The `metagame` command-line tool: game facts, exact exploitability, meta-game solvers,
//! batched matches and training runs. Errors print one line on stderr and exit with code 2.

#![allow(clippy::print_stdout)]

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One line: the error and its causes, joined.
            let line = format!("{e:#}").replace('\n', " ");
            eprintln!("error: {line}");
            ExitCode::from(2)
        }
    }
}
