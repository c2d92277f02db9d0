//! The `metagame` command-line tool: game facts, exact exploitability, meta-game solvers,
//! batched matches and training runs. Errors print one line on stderr and exit with code 2
//! (a TOML syntax error adds the offending line and a caret under it).

#![allow(clippy::print_stdout)]

mod cli;

use std::process::ExitCode;

fn main() -> ExitCode {
    match cli::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            cli::eprint_line(format_args!("error: {}", error_text(&e)));
            ExitCode::from(2)
        }
    }
}

/// The error and its causes on one line, each said once.
///
/// The errors of this workspace say their source in their own message (`"{path}: {source}"`)
/// and also return it from `source()`, so a plain walk of the chain would repeat it ("No
/// such file or directory (os error 2): No such file or directory (os error 2)"). A cause
/// whose text already ends what has been said is skipped.
///
/// A TOML syntax error keeps its lines: the message, then the offending line of the file
/// with a caret under the column.
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let said = cause.to_string();
        let keep_lines =
            matches!(cause.downcast_ref::<metagame::Error>(), Some(metagame::Error::ConfigSyntax { .. }));
        let said = if keep_lines {
            said.trim_end().to_string()
        } else {
            said.lines().map(str::trim).filter(|l| !l.is_empty()).collect::<Vec<_>>().join(" ")
        };
        if said.is_empty() || text.ends_with(said.as_str()) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}
