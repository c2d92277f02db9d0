//! Checkpoints written atomically: a temporary file in the same folder, fsync, rename. A
//! reader sees the old checkpoint or the new one, never half of one.

use std::fs::{self, File};
use std::io::Write;
use std::path::Path;

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};

/// Format version written into every checkpoint; readers refuse other versions. Version 2
/// (issue 10): configs as per-algorithm sections, loop states without the algorithm tag.
pub const CHECKPOINT_VERSION: u32 = 2;

#[derive(Serialize, serde::Deserialize)]
struct Envelope<T> {
    format: String,
    version: u32,
    payload: T,
}

/// Write `bytes` to `path` atomically (temporary file, fsync, rename, fsync of the folder).
///
/// # Errors
///
/// [`Error::Io`] naming the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io { path: path.into(), source };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| {
        let mut f = File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        fs::rename(&tmp, path)?;
        // Make the rename durable; not every platform can open a folder, so ignore that.
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result.map_err(io)
}

/// Save a versioned checkpoint of `payload` as JSON, atomically.
///
/// # Errors
///
/// [`Error::Io`] naming the file.
pub fn save<T: Serialize>(path: &Path, payload: &T) -> Result<()> {
    let envelope = Envelope { format: "metagame-checkpoint".into(), version: CHECKPOINT_VERSION, payload };
    let bytes = serde_json::to_vec(&envelope)
        .map_err(|source| Error::CheckpointJson { path: path.into(), source })?;
    write_atomic(path, &bytes)
}

/// Load a checkpoint written by [`save`].
///
/// # Errors
///
/// [`Error::Io`] when it cannot be read; [`Error::CheckpointJson`] when it is corrupt;
/// [`Error::Checkpoint`] when it is not a checkpoint, or of another version.
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let bytes = fs::read(path).map_err(|source| Error::Io { path: path.into(), source })?;
    let bad = |reason: String| Error::Checkpoint { path: path.into(), reason };
    let value: serde_json::Value = serde_json::from_slice(&bytes)
        .map_err(|source| Error::CheckpointJson { path: path.into(), source })?;
    if value.get("format").and_then(|f| f.as_str()) != Some("metagame-checkpoint") {
        return Err(bad("not a metagame checkpoint".into()));
    }
    let version = value.get("version").and_then(|v| v.as_u64());
    if version != Some(u64::from(CHECKPOINT_VERSION)) {
        return Err(bad(format!("version {version:?}, this build reads version {CHECKPOINT_VERSION}")));
    }
    let envelope: Envelope<T> = serde_json::from_value(value)
        .map_err(|source| Error::CheckpointJson { path: path.into(), source })?;
    Ok(envelope.payload)
}
