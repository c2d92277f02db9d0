//! `SnapshotFolder`: where a league of networks keeps its frozen snapshots — files in the
//! run folder, let go of once written and read back when a match or an evaluation point
//! needs one, the most recently played held in memory and no more. A
//! league of thousands of rounds then holds a bounded number of networks, not every one it
//! ever snapped.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use metagame_games::Policy;

use super::snapshot_policy::{SeatPolicies, SnapshotPolicy};
use crate::error::{Error, Result};
use crate::member_policy::StoredPolicy;

/// Reads a policy of a kind ([`Policy::kind`]) from its file's bytes.
pub type ReadPolicy = fn(&str, &[u8]) -> std::result::Result<Arc<dyn Policy>, String>;

/// Snapshots loaded from the folder held at most (each two networks): a few times the
/// opponents a round draws, so that a round's matches rarely read a file twice.
pub const LOADED_SNAPSHOTS: usize = 64;

/// A run folder keeping a league's network snapshots, and the ones loaded from it.
pub struct SnapshotFolder {
    dir: PathBuf,
    read: ReadPolicy,
    /// Loaded snapshots by member id, with when each was last used.
    loaded: Mutex<Loaded>,
}

#[derive(Default)]
struct Loaded {
    by_id: HashMap<usize, (Arc<dyn Policy>, u64)>,
    clock: u64,
}

impl std::fmt::Debug for SnapshotFolder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotFolder").field("dir", &self.dir).finish_non_exhaustive()
    }
}

impl SnapshotFolder {
    /// The run folder `dir` (members' files under `members/`), `read` reading them back.
    pub fn new(dir: impl Into<PathBuf>, read: ReadPolicy) -> Self {
        Self { dir: dir.into(), read, loaded: Mutex::default() }
    }

    /// Let go of the snapshot's networks and bytes once its files are in the folder (the
    /// run's driver writes them before the checkpoint that names them): from then on they
    /// are read back when needed. A snapshot whose files are not all there yet is left as
    /// it is.
    pub fn release(&self, policy: &mut SnapshotPolicy) {
        let held = policy.stored().any(|s| s.is_loaded() || s.has_pending_bytes());
        if held && policy.stored().all(|s| self.dir.join(s.file()).is_file()) {
            for stored in policy.stored_mut() {
                stored.written();
                stored.unload();
            }
        }
    }

    /// Member `id`'s snapshot as it plays: loaded already, or read from its files (their
    /// hashes checked) and kept among the [`LOADED_SNAPSHOTS`] most recently used.
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] for a file that is missing, altered or does not read.
    pub fn playing(&self, id: usize, policy: &SnapshotPolicy) -> Result<Arc<dyn Policy>> {
        if policy.stored().all(StoredPolicy::is_loaded) {
            return policy.playing();
        }
        let mut loaded = self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        loaded.clock += 1;
        let now = loaded.clock;
        if let Some((p, used)) = loaded.by_id.get_mut(&id) {
            *used = now;
            return Ok(Arc::clone(p));
        }
        let SnapshotPolicy::Seats(seats) = policy else { return policy.playing() };
        let read = |i: usize| -> Result<Arc<dyn Policy>> {
            let mut stored = seats[i].as_stored().cloned().ok_or_else(|| {
                Error::SavedState(format!("member {id}'s seat {i} is neither loaded nor kept in a file"))
            })?;
            let path = self.dir.join(stored.file());
            let bytes = std::fs::read(&path)
                .map_err(|e| Error::SavedState(format!("member {id}'s network {}: {e}", path.display())))?;
            stored.load(&bytes, self.read)?;
            stored.shared()
        };
        let both: Arc<dyn Policy> = Arc::new(SeatPolicies([read(0)?, read(1)?]));
        if loaded.by_id.len() >= LOADED_SNAPSHOTS
            && let Some(oldest) = loaded.by_id.iter().min_by_key(|(_, (_, used))| *used).map(|(&k, _)| k)
        {
            loaded.by_id.remove(&oldest);
        }
        loaded.by_id.insert(id, (Arc::clone(&both), now));
        Ok(both)
    }

    /// Forget member `id`'s loaded networks (it was evicted).
    pub fn forget(&self, id: usize) {
        self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner).by_id.remove(&id);
    }

    /// How many snapshots are loaded now.
    pub fn loaded(&self) -> usize {
        self.loaded.lock().unwrap_or_else(std::sync::PoisonError::into_inner).by_id.len()
    }
}
