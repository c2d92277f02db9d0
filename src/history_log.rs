//! The run's history as a log: `history.jsonl` in the run folder holds one line per committed
//! iteration, `{"checksum":"fnv1a64:…","report":{…}}`, the checksum that of the report's JSON
//! text as written. Lines are only ever appended (and fsynced), so a checkpoint costs what the
//! loop's state costs, not what the run's whole history costs.
//!
//! The checkpoint names how much of the log it covers ([`HistoryMark`]: records and bytes).
//! The log is appended before the checkpoint that covers it is written, so a run killed in
//! between leaves a log longer than its checkpoint's mark, possibly ending in a torn line;
//! resuming reads the marked part, checks every record, and cuts the rest off.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};

use metagame_populations::IterationReport;
use metagame_populations::checkpoint::checksum;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::error::{Error, Result};

/// Name of the history log in a run folder.
pub const HISTORY_FILE: &str = "history.jsonl";

/// How much of the history log a checkpoint covers: its first `records` lines, `bytes` bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HistoryMark {
    /// Number of records (iterations) covered.
    pub records: usize,
    /// Length of those records in bytes, newlines included.
    pub bytes: u64,
}

#[derive(Deserialize)]
struct Stored<'a> {
    checksum: String,
    #[serde(borrow)]
    report: &'a RawValue,
}

fn damaged(path: &Path, reason: String) -> Error {
    Error::Checkpoint { path: path.into(), reason }
}

/// The log's line for `report` (newline included).
///
/// # Errors
///
/// [`Error::Output`] when the report cannot be serialised.
pub(crate) fn record(path: &Path, report: &IterationReport) -> Result<Vec<u8>> {
    let json =
        serde_json::to_string(report).map_err(|e| Error::Output { path: path.into(), source: e.into() })?;
    let mut line = format!("{{\"checksum\":\"{}\",\"report\":", checksum(&json)).into_bytes();
    line.extend_from_slice(json.as_bytes());
    line.extend_from_slice(b"}\n");
    Ok(line)
}

/// The reports of the log at `path` that `mark` covers, each checked against its checksum.
///
/// # Errors
///
/// [`Error::Checkpoint`] when the log is missing, shorter than the mark, or a covered record
/// is torn, edited or not a report.
pub(crate) fn read(path: &Path, mark: HistoryMark) -> Result<Vec<IterationReport>> {
    let file = File::open(path).map_err(|e| {
        damaged(
            path,
            format!("cannot be read ({e}); the checkpoint needs its first {} records", mark.records),
        )
    })?;
    let len = file.metadata().map_err(|e| damaged(path, e.to_string()))?.len();
    if len < mark.bytes {
        return Err(damaged(
            path,
            format!(
                "holds {len} bytes, fewer than the {} its checkpoint covers: it was cut or replaced",
                mark.bytes
            ),
        ));
    }
    let mut lines = BufReader::new(file.take(mark.bytes));
    let mut reports = Vec::with_capacity(mark.records);
    let mut line = String::new();
    loop {
        line.clear();
        let n = lines.read_line(&mut line).map_err(|e| damaged(path, e.to_string()))?;
        if n == 0 {
            break;
        }
        let at = reports.len() + 1;
        let bad = |what: &str| damaged(path, format!("record {at} {what}"));
        let Some(text) = line.strip_suffix('\n') else { return Err(bad("is torn (no end of line)")) };
        let stored: Stored<'_> =
            serde_json::from_str(text).map_err(|e| bad(&format!("is not a record: {e}")))?;
        if stored.checksum != checksum(stored.report.get()) {
            return Err(bad("does not match its checksum: it was edited or damaged"));
        }
        let report = serde_json::from_str(stored.report.get())
            .map_err(|e| bad(&format!("is not an iteration report: {e}")))?;
        reports.push(report);
    }
    if reports.len() != mark.records {
        return Err(damaged(
            path,
            format!(
                "{} records in the {} bytes its checkpoint covers, which names {}",
                reports.len(),
                mark.bytes,
                mark.records
            ),
        ));
    }
    Ok(reports)
}

/// The log being appended to by a run.
pub(crate) struct HistoryAppender {
    path: PathBuf,
    file: File,
    mark: HistoryMark,
}

impl HistoryAppender {
    /// Open the log at `path` to append after `mark`, cutting off anything past it (records
    /// of iterations no checkpoint covers, a torn last line); a mark of zero starts it anew.
    ///
    /// # Errors
    ///
    /// [`Error::Output`] when it cannot be opened or cut.
    pub(crate) fn open(path: PathBuf, mark: HistoryMark) -> Result<Self> {
        let io = |e: std::io::Error| Error::Output { path: path.clone(), source: e.into() };
        let file = OpenOptions::new().create(true).write(true).truncate(false).open(&path).map_err(io)?;
        file.set_len(mark.bytes).map_err(io)?;
        let mut appender = Self { path, file, mark };
        appender.seek_end()?;
        Ok(appender)
    }

    fn seek_end(&mut self) -> Result<()> {
        use std::io::Seek as _;
        self.file
            .seek(std::io::SeekFrom::Start(self.mark.bytes))
            .map_err(|e| Error::Output { path: self.path.clone(), source: e.into() })?;
        Ok(())
    }

    /// Append `records` (lines made by [`record`], `count` of them) and fsync; the new mark.
    ///
    /// # Errors
    ///
    /// [`Error::Output`] when the write or the fsync fails; the log is then cut back to the
    /// old mark where it can be, so a later append does not follow half a line.
    pub(crate) fn append(&mut self, records: &[u8], count: usize) -> Result<HistoryMark> {
        let written = self.file.write_all(records).and_then(|()| self.file.sync_data());
        if let Err(e) = written {
            let _ = self.file.set_len(self.mark.bytes);
            let _ = self.seek_end();
            return Err(Error::Output { path: self.path.clone(), source: e.into() });
        }
        self.mark.records += count;
        self.mark.bytes += records.len() as u64;
        Ok(self.mark)
    }
}
