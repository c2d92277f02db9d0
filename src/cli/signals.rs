//! Ctrl-C and termination signals for `metagame run` and `metagame respond`: the first
//! SIGINT or SIGTERM sets a flag that a run checks after each committed step and, inside a
//! step, between its batches (the step in progress is abandoned; the run then writes its
//! report, figures and page for what it committed, and exits 130 or 143) and
//! `respond` before each of its learner's batches (it then scores and writes the response
//! learned so far, and exits the same way); a second one ends the process at once with the
//! same code.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// The installed handlers' flags.
pub struct Signals {
    /// Set by either signal: the run stops at the next batch, keeping its committed steps.
    stop: Arc<AtomicBool>,
    /// Set by SIGTERM: the exit code is 143 rather than 130.
    terminated: Arc<AtomicBool>,
}

impl Signals {
    /// Install the handlers (on Unix; elsewhere the flag is never set).
    ///
    /// # Errors
    ///
    /// A handler the system refuses.
    pub fn install() -> anyhow::Result<Self> {
        let signals =
            Signals { stop: Arc::new(AtomicBool::new(false)), terminated: Arc::new(AtomicBool::new(false)) };
        #[cfg(unix)]
        {
            use signal_hook::consts::{SIGINT, SIGTERM};
            use signal_hook::flag;
            for (signal, code) in [(SIGINT, 130), (SIGTERM, 143)] {
                // The exit first: it is armed once the first signal has set the flag.
                flag::register_conditional_shutdown(signal, code, signals.stop.clone())?;
                flag::register(signal, signals.stop.clone())?;
            }
            flag::register(SIGTERM, signals.terminated.clone())?;
        }
        Ok(signals)
    }

    /// The flag the run stops on.
    pub fn flag(&self) -> Arc<AtomicBool> {
        self.stop.clone()
    }

    /// The exit code of an interrupted run: 143 after SIGTERM, 130 after SIGINT (128 + the
    /// signal's number, as shells report it).
    pub fn exit_code(&self) -> i32 {
        if self.terminated.load(Ordering::SeqCst) { 143 } else { 130 }
    }
}
