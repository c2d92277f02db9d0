//! Rust errors as Python exceptions: bad input is a `ValueError` whose message is the CLI's
//! one line; a failure while running (I/O, a solver giving up) is a `MetagameError`.

use std::fmt::Display;
use std::sync::{Mutex, mpsc};
use std::time::Duration;

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;

create_exception!(
    metagame,
    MetagameError,
    PyException,
    "A run or computation that failed for a reason other than its input (I/O, a backend)."
);

/// A `ValueError` with `e`'s message.
pub fn value_error(e: impl Display) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// The exception for an umbrella error: `ValueError` for bad input (configs, games,
/// policies, names, checkpoints of another run), `MetagameError` for the rest.
pub fn run_error(e: &metagame::Error) -> PyErr {
    use metagame::Error as E;
    match e {
        E::Output { .. } | E::FolderInUse { .. } => MetagameError::new_err(e.to_string()),
        _ => PyValueError::new_err(e.to_string()),
    }
}

/// Below this many tree nodes an exact computation takes well under a millisecond: it runs
/// on the calling thread (the GIL released), since a thread of its own would cost more than
/// the work and Ctrl-C has nothing to wait for.
pub const SMALL_TREE: usize = 100_000;

/// [`interruptible`] when `long`, else `job` on this thread with the GIL released.
///
/// # Errors
///
/// As [`interruptible`].
pub fn released<T: Send + 'static>(
    py: Python<'_>,
    long: bool,
    job: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    if long { interruptible(py, job) } else { Ok(py.detach(job)) }
}

/// Run `job` on a thread of its own with the GIL released, checking for Ctrl-C (and other
/// signals) every 50 ms: a signal raises its exception (`KeyboardInterrupt`) at once, and
/// the abandoned job's answer is dropped when it ends.
///
/// # Errors
///
/// The signal handler's exception; a job that panicked is a `MetagameError`.
pub fn interruptible<T: Send + 'static>(
    py: Python<'_>,
    job: impl FnOnce() -> T + Send + 'static,
) -> PyResult<T> {
    let (tx, rx) = mpsc::sync_channel(1);
    // A receiver is not `Sync`; the lock lets the GIL-free closure borrow it.
    let rx = Mutex::new(rx);
    std::thread::spawn(move || {
        let _ = tx.send(job());
    });
    loop {
        match py
            .detach(|| rx.lock().unwrap_or_else(|p| p.into_inner()).recv_timeout(Duration::from_millis(50)))
        {
            Ok(answer) => return Ok(answer),
            Err(mpsc::RecvTimeoutError::Timeout) => py.check_signals()?,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(MetagameError::new_err(
                    "the computation stopped without an answer (a bug: please report it)",
                ));
            }
        }
    }
}
