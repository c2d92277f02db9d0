//! What the subcommands write for the reader: lines to stdout that never panic on a closed
//! pipe ([`outln!`]), lines to stderr, JSON lines, and gaps written as people write them.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

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
        $crate::cli::output::print_line(format_args!($($arg)*))
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
