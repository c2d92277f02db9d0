//! The `metagame` command-line tool: game facts, exact exploitability, meta-game solvers,
//! batched matches and training runs. Errors print one line on stderr and exit with code 2
//! (a TOML syntax error names the file, line and column, and quotes the line).

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
/// A TOML syntax error is folded into one line too: its place and message, then the
/// offending line of the file quoted (its caret snippet is for the library's users).
fn error_text(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for cause in e.chain() {
        let said = match cause.downcast_ref::<metagame::Error>() {
            Some(metagame::Error::ConfigSyntax { path, line, column, message, snippet }) => {
                // The snippet's second line is `N | <the line of the file>`.
                let quoted =
                    snippet.lines().nth(1).and_then(|l| l.split_once(" | ")).map_or("", |(_, l)| l.trim());
                format!("{}:{line}:{column}: {message} (line {line}: `{quoted}`)", path.display())
            }
            _ => cause
                .to_string()
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join(" "),
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
