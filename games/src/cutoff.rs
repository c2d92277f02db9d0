//! `Cutoff`: when long work in progress (a sampled evaluation, a learner's training, a
//! training loop's step) should give up: at a deadline, once a flag is set, or never.
//!
//! Work that takes a cutoff checks [`Cutoff::passed`] between its batches (a chunk of
//! evaluation blocks, a learner's batch of episodes) and, once it has passed, stops with
//! [`Error::CutOff`](crate::Error::CutOff) (or its crate's own `CutOff`) instead of an answer,
//! so the caller can discard the work; how far past the cutoff it stops is one batch.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

/// The moment work in progress should give up; the default never passes.
///
/// # Examples
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicBool, Ordering};
/// use std::time::{Duration, Instant};
/// use metagame_games::Cutoff;
///
/// assert!(!Cutoff::never().passed());
/// assert!(Cutoff::at(Instant::now()).passed());
/// assert!(!Cutoff::at(Instant::now() + Duration::from_secs(60)).passed());
/// let stop = Arc::new(AtomicBool::new(false));
/// let cutoff = Cutoff::when_set(stop.clone());
/// assert!(!cutoff.passed());
/// stop.store(true, Ordering::SeqCst);
/// assert!(cutoff.passed());
/// // Both: a deadline an hour away, or the flag, whichever comes first.
/// let flag = Arc::new(AtomicBool::new(false));
/// let either = Cutoff::at(Instant::now() + Duration::from_secs(3600)).or_when_set(flag.clone());
/// assert!(!either.passed());
/// flag.store(true, Ordering::SeqCst);
/// assert!(either.passed());
/// assert!(Cutoff::never().or_at(Instant::now()).passed());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Cutoff {
    deadline: Option<Instant>,
    flag: Option<Arc<AtomicBool>>,
}

impl Cutoff {
    /// A cutoff that never passes.
    pub fn never() -> Self {
        Self::default()
    }

    /// A cutoff at `deadline`.
    pub fn at(deadline: Instant) -> Self {
        Self { deadline: Some(deadline), flag: None }
    }

    /// A cutoff that passes once `flag` is set (by a signal handler, a UI, another thread).
    pub fn when_set(flag: Arc<AtomicBool>) -> Self {
        Self { deadline: None, flag: Some(flag) }
    }

    /// This cutoff, passing also at `deadline` (whichever comes first).
    pub fn or_at(mut self, deadline: Instant) -> Self {
        self.deadline = Some(self.deadline.map_or(deadline, |d| d.min(deadline)));
        self
    }

    /// This cutoff, passing also once `flag` is set; it replaces a flag set before.
    pub fn or_when_set(mut self, flag: Arc<AtomicBool>) -> Self {
        self.flag = Some(flag);
        self
    }

    /// Whether it has passed.
    pub fn passed(&self) -> bool {
        self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.flag.as_ref().is_some_and(|f| f.load(Ordering::Relaxed))
    }
}
