//! Writes checkpoints on a background thread so that fsync does not stall the training
//! loop. Each write is still atomic; when iterations finish faster than the disk, only the
//! newest pending checkpoint is written (older ones would be replaced anyway).

use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;

use metagame_populations::checkpoint;
use serde::Serialize;

use crate::error::{Error, Result};

struct Slot<T> {
    pending: Option<T>,
    /// The thread is writing a checkpoint it took from `pending`.
    writing: bool,
    closed: bool,
    error: Option<metagame_populations::Error>,
}

/// A background checkpoint writer for one file.
pub(crate) struct CheckpointWriter<T> {
    shared: Arc<(Mutex<Slot<T>>, Condvar)>,
    handle: Option<JoinHandle<()>>,
    path: PathBuf,
}

impl<T: Serialize + Send + 'static> CheckpointWriter<T> {
    pub(crate) fn new(path: PathBuf) -> Self {
        let slot = Slot { pending: None, writing: false, closed: false, error: None };
        let shared = Arc::new((Mutex::new(slot), Condvar::new()));
        let worker = Arc::clone(&shared);
        let file = path.clone();
        let handle = std::thread::spawn(move || {
            let (lock, cv) = &*worker;
            loop {
                let next = {
                    let mut slot = lock.lock().unwrap_or_else(|p| p.into_inner());
                    while slot.pending.is_none() && !slot.closed {
                        slot = cv.wait(slot).unwrap_or_else(|p| p.into_inner());
                    }
                    match slot.pending.take() {
                        Some(cp) => {
                            slot.writing = true;
                            cp
                        }
                        None => return,
                    }
                };
                let written = checkpoint::save(&file, &next);
                let mut slot = lock.lock().unwrap_or_else(|p| p.into_inner());
                slot.writing = false;
                if let Err(e) = written {
                    slot.error = Some(e);
                }
                cv.notify_all();
            }
        });
        Self { shared, handle: Some(handle), path }
    }

    /// Queue a checkpoint (replacing one not yet written).
    ///
    /// # Errors
    ///
    /// An earlier write failed.
    pub(crate) fn submit(&self, cp: T) -> Result<()> {
        let (lock, cv) = &*self.shared;
        let mut slot = lock.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(e) = slot.error.take() {
            return Err(Error::Output { path: self.path.clone(), source: Box::new(e) });
        }
        slot.pending = Some(cp);
        cv.notify_all();
        Ok(())
    }

    /// Wait until every queued checkpoint is on disk.
    ///
    /// # Errors
    ///
    /// A write failed.
    pub(crate) fn wait_written(&self) -> Result<()> {
        let (lock, cv) = &*self.shared;
        let mut slot = lock.lock().unwrap_or_else(|p| p.into_inner());
        while (slot.pending.is_some() || slot.writing) && slot.error.is_none() {
            slot = cv.wait(slot).unwrap_or_else(|p| p.into_inner());
        }
        match slot.error.take() {
            Some(e) => Err(Error::Output { path: self.path.clone(), source: Box::new(e) }),
            None => Ok(()),
        }
    }
}

impl<T> CheckpointWriter<T> {
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
            let (lock, cv) = &*self.shared;
            lock.lock().unwrap_or_else(|p| p.into_inner()).closed = true;
            cv.notify_all();
        }
        if let Some(h) = self.handle.take() {
            let _ = h.join();
        }
        let (lock, _) = &*self.shared;
        match lock.lock().unwrap_or_else(|p| p.into_inner()).error.take() {
            Some(e) => Err(Error::Output { path: self.path.clone(), source: Box::new(e) }),
            None => Ok(()),
        }
    }
}

impl<T> Drop for CheckpointWriter<T> {
    fn drop(&mut self) {
        let _ = self.close();
    }
}
