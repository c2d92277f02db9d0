//! Writes a run's checkpoints on a background thread so that fsync does not stall the
//! training loop. Each submission carries the loop's state and the iterations' records that
//! are new since the last one: the thread appends the records to the history log
//! ([`crate::history_log`]), fsyncs it, then writes the checkpoint (atomically) with the log's
//! new mark. When iterations finish faster than the disk, the records pile up in order and
//! only the newest pending state is written (older ones would be replaced anyway); after each
//! write the thread rests three times as long as the write took, so a state that grows large
//! (a league's members) is written less often rather than taking a core from the loop.

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use metagame_populations::checkpoint;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::history_log::{HistoryAppender, HistoryMark};
use crate::run_report::RunCheckpoint;

/// How long the writer rests after each write, in multiples of the write's own time.
const REST_PER_WRITE: u32 = 3;

struct Slot<S> {
    /// The newest state not yet written.
    pending: Option<RunCheckpoint<S>>,
    /// Log records not yet appended, oldest first, and how many.
    records: Vec<u8>,
    count: usize,
    /// The thread is writing what it took from the slot.
    writing: bool,
    closed: bool,
    /// Records covered by the newest checkpoint on disk.
    covered: usize,
    error: Option<Error>,
}

/// A run's background writer: its history log and its checkpoint.
pub(crate) struct CheckpointWriter<S> {
    shared: Arc<(Mutex<Slot<S>>, Condvar)>,
    handle: Option<JoinHandle<()>>,
}

fn lock<S>(m: &Mutex<Slot<S>>) -> std::sync::MutexGuard<'_, Slot<S>> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl<S: Serialize + Send + 'static> CheckpointWriter<S> {
    /// A writer of the checkpoint at `path` whose history goes to `log` (opened after its
    /// first `mark.records` records, the rest cut off); it rests between writes when `rests`
    /// (not when the loop waits for each write).
    ///
    /// # Errors
    ///
    /// The log cannot be opened.
    pub(crate) fn new(path: PathBuf, log: PathBuf, mark: HistoryMark, rests: bool) -> Result<Self> {
        let mut appender = HistoryAppender::open(log, mark)?;
        let slot = Slot {
            pending: None,
            records: Vec::new(),
            count: 0,
            writing: false,
            closed: false,
            covered: mark.records,
            error: None,
        };
        let shared = Arc::new((Mutex::new(slot), Condvar::new()));
        let worker = Arc::clone(&shared);
        let handle = std::thread::spawn(move || {
            let (m, cv) = &*worker;
            loop {
                let (cp, records, count) = {
                    let mut slot = lock(m);
                    while slot.pending.is_none() && !slot.closed {
                        slot = cv.wait(slot).unwrap_or_else(|p| p.into_inner());
                    }
                    if slot.error.is_some() {
                        return;
                    }
                    match slot.pending.take() {
                        Some(cp) => {
                            slot.writing = true;
                            let count = std::mem::take(&mut slot.count);
                            (cp, std::mem::take(&mut slot.records), count)
                        }
                        None => return,
                    }
                };
                let started = Instant::now();
                let written = appender.append(&records, count).and_then(|mark| {
                    let cp = RunCheckpoint { history: Some(mark), ..cp };
                    checkpoint::save(&path, &cp)
                        .map(|()| mark.records)
                        .map_err(|e| Error::Output { path: path.clone(), source: Box::new(e) })
                });
                let mut slot = lock(m);
                slot.writing = false;
                match written {
                    Ok(covered) => slot.covered = covered,
                    // Nothing more is written after a failure: the run stops with the last
                    // checkpoint that was.
                    Err(e) => {
                        slot.error = Some(e);
                        slot.closed = true;
                    }
                }
                cv.notify_all();
                // Rest for three times as long as the write took (unless the run is ending), so
                // that writing a large state takes at most a quarter of the run's time, never
                // a core of its own; the iterations finished meanwhile go into the next write.
                let rest =
                    if rests { started.elapsed().saturating_mul(REST_PER_WRITE) } else { Duration::ZERO };
                if !rest.is_zero() {
                    drop(cv.wait_timeout_while(slot, rest, |s| !s.closed).unwrap_or_else(|p| p.into_inner()));
                }
            }
        });
        Ok(Self { shared, handle: Some(handle) })
    }

    /// Queue a checkpoint of `cp`'s state (replacing one not yet written) after the log
    /// `records` (`count` of them, made by [`crate::history_log::record`]).
    ///
    /// # Errors
    ///
    /// An earlier write failed.
    pub(crate) fn submit(&self, cp: RunCheckpoint<S>, records: &[u8], count: usize) -> Result<()> {
        let (m, cv) = &*self.shared;
        let mut slot = lock(m);
        if let Some(e) = slot.error.take() {
            return Err(e);
        }
        slot.pending = Some(cp);
        slot.records.extend_from_slice(records);
        slot.count += count;
        cv.notify_all();
        Ok(())
    }

    /// Wait until every queued checkpoint is on disk.
    ///
    /// # Errors
    ///
    /// A write failed.
    pub(crate) fn wait_written(&self) -> Result<()> {
        let (m, cv) = &*self.shared;
        let mut slot = lock(m);
        while (slot.pending.is_some() || slot.writing) && slot.error.is_none() {
            slot = cv.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
        slot.error.take().map_or(Ok(()), Err)
    }
}

impl<S> CheckpointWriter<S> {
    /// How many of the run's records the newest checkpoint on disk covers: iterations
    /// `0..covered()` are committed (what a resume continues from).
    pub(crate) fn covered(&self) -> usize {
        lock(&self.shared.0).covered
    }

    /// Write whatever is pending and stop the thread.
    ///
    /// # Errors
    ///
    /// A write failed.
    pub(crate) fn finish(mut self) -> Result<()> {
        self.close()
    }

    fn close(&mut self) -> Result<()> {
        {
            let (m, cv) = &*self.shared;
            lock(m).closed = true;
            cv.notify_all();
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        lock(&self.shared.0).error.take().map_or(Ok(()), Err)
    }
}

impl<S> Drop for CheckpointWriter<S> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
