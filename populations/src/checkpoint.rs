//! Checkpoints written atomically: a temporary file in the same folder, fsync, rename. A
//! reader sees the old checkpoint or the new one, never half of one.
//!
//! A checkpoint carries a checksum of its payload (64-bit FNV-1a of the payload's JSON text,
//! as written), so an edit by hand or a damaged file is refused on load rather than trusted.
//! What the payload means is checked by the loop that resumes from it (`Psro::resume` and the
//! others refuse mixtures that are not distributions, payoffs out of the game's range, reports
//! that disagree with the state).

use std::fs::{self, File};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// Format version written into every checkpoint; readers refuse other versions. Version 2
/// (issue 10): configs as per-algorithm sections, loop states without the algorithm tag.
/// Version 3 (issue 14): a checksum of the payload; populations without duplicate members.
pub const CHECKPOINT_VERSION: u32 = 3;

/// Largest checkpoint [`load`] reads: 4 GiB.
pub const MAX_CHECKPOINT_BYTES: u64 = 1 << 32;

/// The checksum's algorithm, as the file names it.
const CHECKSUM_ALGORITHM: &str = "fnv1a64";

/// 64-bit FNV-1a of `bytes`.
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

/// The checksum of a payload's JSON text, as stored: `fnv1a64:<16 hex digits>`.
pub fn checksum(payload_json: &str) -> String {
    format!("{CHECKSUM_ALGORITHM}:{:016x}", fnv1a64(payload_json.as_bytes()))
}

/// The envelope as read: every field optional, so that what is missing can be named.
#[derive(serde::Deserialize)]
struct Stored<'a> {
    format: Option<String>,
    version: Option<u64>,
    checksum: Option<String>,
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

/// The name of the temporary file [`write_atomic`] writes for `path` in process `pid`:
/// `.<name>.tmp-<pid>` in the same folder.
pub fn temporary_path(path: &Path, pid: u32) -> PathBuf {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    dir.join(format!(".{name}.tmp-{pid}"))
}

/// The process id of a temporary file named as [`temporary_path`] names them, if `name` is
/// one.
pub fn temporary_file_pid(name: &str) -> Option<u32> {
    let (stem, pid) = name.strip_prefix('.')?.rsplit_once(".tmp-")?;
    if stem.is_empty() || pid.is_empty() || !pid.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    pid.parse().ok()
}

/// Write `bytes` to `path` atomically (temporary file, fsync, rename, fsync of the folder).
/// The temporary file ([`temporary_path`]) is removed when any step fails.
///
/// # Errors
///
/// [`Error::Io`] naming the file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let io = |source| Error::Io { path: path.into(), source };
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let tmp = temporary_path(path, std::process::id());
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

/// The bytes of a checkpoint of `payload`: the envelope (format, version, checksum) with the
/// payload's JSON.
///
/// # Errors
///
/// [`Error::CheckpointJson`] when the payload cannot be serialised.
pub fn to_bytes<T: Serialize>(path: &Path, payload: &T) -> Result<Vec<u8>> {
    let json = serde_json::to_string(payload)
        .map_err(|source| Error::CheckpointJson { path: path.into(), source })?;
    let head = format!(
        "{{\"format\":\"metagame-checkpoint\",\"version\":{CHECKPOINT_VERSION},\"checksum\":\"{}\",\"payload\":",
        checksum(&json)
    );
    let mut bytes = Vec::with_capacity(head.len() + json.len() + 2);
    bytes.extend_from_slice(head.as_bytes());
    bytes.extend_from_slice(json.as_bytes());
    bytes.extend_from_slice(b"}\n");
    Ok(bytes)
}

/// Save a versioned checkpoint of `payload` as JSON with its checksum, atomically.
///
/// # Errors
///
/// [`Error::Io`] naming the file; [`Error::CheckpointJson`] when the payload cannot be
/// serialised.
pub fn save<T: Serialize>(path: &Path, payload: &T) -> Result<()> {
    write_atomic(path, &to_bytes(path, payload)?)
}

/// Load a checkpoint written by [`save`], checking its format, version and checksum.
///
/// # Errors
///
/// [`Error::Io`] when it cannot be read; [`Error::CheckpointJson`] when it is not JSON or
/// its payload does not fit `T`; [`Error::Checkpoint`] when it is not a checkpoint, is of
/// another version, is larger than [`MAX_CHECKPOINT_BYTES`] or not a file, or its payload
/// does not match its checksum (edited or damaged).
pub fn load<T: DeserializeOwned>(path: &Path) -> Result<T> {
    let bad = |reason: String| Error::Checkpoint { path: path.into(), reason };
    let io = |source| Error::Io { path: path.into(), source };
    let file = File::open(path).map_err(io)?;
    let meta = file.metadata().map_err(io)?;
    if !meta.is_file() {
        return Err(bad("not a file".into()));
    }
    if meta.len() > MAX_CHECKPOINT_BYTES {
        return Err(bad(format!(
            "{} bytes, more than a checkpoint may hold ({MAX_CHECKPOINT_BYTES})",
            meta.len()
        )));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(MAX_CHECKPOINT_BYTES + 1).read_to_end(&mut bytes).map_err(io)?;
    from_slice(path, &bytes)
}

/// Parse a checkpoint's bytes as [`load`] does after reading them, checking its format,
/// version and checksum; `path` only names the checkpoint in errors. Reads no file.
///
/// # Errors
///
/// [`Error::CheckpointJson`] when it is not JSON or its payload does not fit `T`;
/// [`Error::Checkpoint`] when it is not a checkpoint, is of another version or its payload
/// does not match its checksum.
pub fn from_slice<T: DeserializeOwned>(path: &Path, bytes: &[u8]) -> Result<T> {
    let bad = |reason: String| Error::Checkpoint { path: path.into(), reason };
    let stored: Stored<'_> = serde_json::from_slice(bytes)
        .map_err(|source| Error::CheckpointJson { path: path.into(), source })?;
    if stored.format.as_deref() != Some("metagame-checkpoint") {
        return Err(bad("not a metagame checkpoint".into()));
    }
    if stored.version != Some(u64::from(CHECKPOINT_VERSION)) {
        let version = stored.version.map_or("no version".into(), |v| format!("version {v}"));
        return Err(bad(format!("{version}, this build reads version {CHECKPOINT_VERSION}")));
    }
    let payload = stored.payload.ok_or_else(|| bad("no payload".into()))?;
    let stated = stored.checksum.ok_or_else(|| bad("no checksum".into()))?;
    let computed = checksum(payload.get());
    if stated != computed {
        return Err(bad(format!(
            "its content does not match its checksum ({stated} stated, {computed} computed): it was edited or damaged"
        )));
    }
    serde_json::from_str(payload.get()).map_err(|source| Error::CheckpointJson { path: path.into(), source })
}

/// Tolerance of the semantic checks on a saved state: a mixture's sum, a payoff's distance
/// outside the game's range and a recomputed NashConv, relative to the game's payoff scale.
pub(crate) const STATE_TOLERANCE: f64 = 1e-9;

fn state_err(reason: String) -> Error {
    Error::SavedState(reason)
}

/// Check that `mixture` (what = "player 0's meta-strategy") is a distribution over `len`
/// strategies: finite, non-negative, summing to 1 within [`STATE_TOLERANCE`].
pub(crate) fn check_distribution(what: &str, mixture: &[f64], len: usize) -> Result<()> {
    if mixture.len() != len {
        return Err(state_err(format!("{what} has {} entries for {len} strategies", mixture.len())));
    }
    if let Some(x) = mixture.iter().find(|x| !(x.is_finite() && **x >= -STATE_TOLERANCE)) {
        return Err(state_err(format!("{what} holds {x}, not a probability")));
    }
    let sum: f64 = mixture.iter().sum();
    if (sum - 1.0).abs() > STATE_TOLERANCE {
        return Err(state_err(format!("{what} sums to {sum}, not 1")));
    }
    Ok(())
}

/// Check a saved list of reports: iterations `first..=last` in order, finite non-negative
/// NashConv and elapsed times that never decrease.
pub(crate) fn check_reports(reports: &[crate::IterationReport], first: usize, last: usize) -> Result<()> {
    let expected = (last + 1).saturating_sub(first);
    if reports.len() != expected {
        return Err(state_err(format!(
            "{} reports for iterations {first} to {last} ({expected} expected)",
            reports.len()
        )));
    }
    let mut elapsed = 0.0;
    for (k, r) in reports.iter().enumerate() {
        let at = first + k;
        if r.iteration != at {
            return Err(state_err(format!("report {k} is of iteration {}, not {at}", r.iteration)));
        }
        if let Some(nash_conv) = r.nash_conv
            && !(nash_conv.is_finite() && nash_conv >= -STATE_TOLERANCE)
        {
            return Err(state_err(format!("the report of iteration {at} has NashConv {nash_conv}")));
        }
        if !(r.elapsed_s.is_finite() && r.elapsed_s >= elapsed) {
            return Err(state_err(format!("the report of iteration {at} has elapsed time {}", r.elapsed_s)));
        }
        elapsed = r.elapsed_s;
    }
    Ok(())
}

/// Check that a report's `stated` NashConv (of iteration `iteration`) is the one `computed`
/// from the saved state, within [`STATE_TOLERANCE`] × `scale`.
pub(crate) fn check_nash_conv(
    iteration: usize,
    stated: Option<f64>,
    computed: f64,
    scale: f64,
) -> Result<()> {
    let Some(stated) = stated else {
        return Err(state_err(format!(
            "the report of iteration {iteration} has no NashConv, the saved state has {computed}"
        )));
    };
    if (stated - computed).abs() > STATE_TOLERANCE * scale.max(1.0) {
        return Err(state_err(format!(
            "the report of iteration {iteration} says NashConv {stated}, the saved state has {computed}"
        )));
    }
    Ok(())
}

/// Check a scheduled loop's last report (`stated`, of iteration `iteration`) against the
/// NashConv of `average`, every player playing it, recomputed from `tree`, within
/// [`STATE_TOLERANCE`] × the tree's largest |utility|. A report off the evaluation schedule
/// (`None`) has nothing to recompute against.
pub(crate) fn check_scheduled_nash_conv(
    tree: &metagame_games::GameTree,
    iteration: usize,
    stated: Option<f64>,
    average: &metagame_games::TabularPolicy,
) -> Result<()> {
    if stated.is_none() {
        return Ok(());
    }
    let computed = metagame_games::nash_conv_report(tree, &vec![average; tree.num_players()])?.nash_conv;
    let (lo, hi) = tree.utility_bounds();
    check_nash_conv(iteration, stated, computed, lo.abs().max(hi.abs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_its_reference_values() {
        // The FNV reference test vectors (http://www.isthe.com/chongo/src/fnv/test_fnv.c).
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn temporary_names_round_trip() {
        let tmp = temporary_path(Path::new("run/checkpoint.json"), 4242);
        assert_eq!(tmp, Path::new("run/.checkpoint.json.tmp-4242"));
        assert_eq!(temporary_file_pid(".checkpoint.json.tmp-4242"), Some(4242));
        for name in ["checkpoint.json", ".tmp-12", ".a.tmp-", ".a.tmp-1x", "a.tmp-12"] {
            assert_eq!(temporary_file_pid(name), None, "{name}");
        }
    }

    #[test]
    fn an_edited_payload_is_refused_and_an_intact_one_loads() {
        let dir = std::env::temp_dir().join(format!("metagame-checkpoint-unit-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("c.json");
        save(&path, &vec![1.0, 2.5]).unwrap();
        assert_eq!(load::<Vec<f64>>(&path).unwrap(), vec![1.0, 2.5]);
        let text = fs::read_to_string(&path).unwrap().replace("2.5", "2.6");
        fs::write(&path, text).unwrap();
        let err = load::<Vec<f64>>(&path).unwrap_err().to_string();
        assert!(err.contains("does not match its checksum"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }
}
