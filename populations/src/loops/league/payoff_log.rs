//! The league's payoff table among its snapshots, kept as a binary log appended as the
//! table grows (`payoffs.bin` in the run folder), not inside every checkpoint.
//!
//! A snapshot's entries never change once evaluated, so each pair of snapshots is written
//! once, when its entries are first filled: a run of 3 000 rounds writes each of its
//! million pairs once instead of copying the whole table into each round's checkpoint. The
//! entries of learning agents change at every evaluation point and stay in the checkpoint
//! (a few rows). The checkpoint counts the records it covers; a resumed run reads that
//! many, and bytes past them (written by a run killed before its checkpoint) are dropped.
//!
//! The format: the 8 bytes `MGPAYOFF`, a format version (`u32`, little-endian), then
//! 24-byte records, little-endian: the two members' ids (`u32`, `u32`), member `a`'s mean
//! payoff against `b` (`f64`), and `b`'s against `a` (`f64`), both seats averaged.

use std::collections::HashMap;

use super::member_payoffs::MemberPayoffs;
use crate::error::{Error, Result};

/// The file's name in the run folder.
pub const PAYOFF_LOG_FILE: &str = "payoffs.bin";

const MAGIC: &[u8; 8] = b"MGPAYOFF";
const VERSION: u32 = 1;
const HEADER: usize = MAGIC.len() + 4;
const RECORD: usize = 24;

/// One pair's entries: `a`'s payoff against `b` and `b`'s against `a`, by member id.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PayoffRecord {
    /// The first member's id.
    pub a: usize,
    /// The second member's id.
    pub b: usize,
    /// `a`'s mean payoff against `b`.
    pub a_vs_b: f64,
    /// `b`'s mean payoff against `a`.
    pub b_vs_a: f64,
}

/// The log's bytes as the run folder holds them.
#[derive(Clone, Debug)]
pub(super) struct PayoffLog {
    bytes: Vec<u8>,
}

impl Default for PayoffLog {
    fn default() -> Self {
        let mut bytes = Vec::with_capacity(HEADER);
        bytes.extend_from_slice(MAGIC);
        bytes.extend_from_slice(&VERSION.to_le_bytes());
        Self { bytes }
    }
}

impl PayoffLog {
    /// The bytes, header included.
    pub(super) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Records in the log.
    pub(super) fn len(&self) -> u64 {
        ((self.bytes.len() - HEADER) / RECORD) as u64
    }

    /// Append one record.
    pub(super) fn push(&mut self, r: PayoffRecord) -> Result<()> {
        let id = |x: usize| {
            u32::try_from(x)
                .map_err(|_| Error::Config(format!("member id {x} is past what the payoff log holds")))
        };
        let (a, b) = (id(r.a)?, id(r.b)?);
        self.bytes.extend_from_slice(&a.to_le_bytes());
        self.bytes.extend_from_slice(&b.to_le_bytes());
        self.bytes.extend_from_slice(&r.a_vs_b.to_le_bytes());
        self.bytes.extend_from_slice(&r.b_vs_a.to_le_bytes());
        Ok(())
    }

    /// Drop the records past the first `records` (a failed round's).
    pub(super) fn truncate(&mut self, records: u64) {
        self.bytes.truncate(HEADER + records as usize * RECORD);
    }

    /// The log of the first `records` records of a file's bytes (a longer file was written
    /// past its last checkpoint by a run that was killed).
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] for bytes that are not a payoff log or hold fewer records.
    pub(super) fn read(bytes: &[u8], records: u64) -> Result<Self> {
        let bad = |why: String| Error::SavedState(format!("{PAYOFF_LOG_FILE}: {why}"));
        if bytes.len() < HEADER || &bytes[..MAGIC.len()] != MAGIC {
            return Err(bad("not a league payoff log".into()));
        }
        let version = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]);
        if version != VERSION {
            return Err(bad(format!("format version {version}, this build reads {VERSION}")));
        }
        let need = usize::try_from(records)
            .ok()
            .and_then(|r| r.checked_mul(RECORD))
            .and_then(|r| r.checked_add(HEADER))
            .ok_or_else(|| bad(format!("{records} records cannot be held")))?;
        if bytes.len() < need {
            return Err(bad(format!(
                "{} records, fewer than the {records} the checkpoint names",
                (bytes.len() - HEADER) / RECORD
            )));
        }
        Ok(Self { bytes: bytes[..need].to_vec() })
    }

    /// Every record, in the order written.
    pub(super) fn records(&self) -> impl Iterator<Item = PayoffRecord> + '_ {
        self.bytes[HEADER..].chunks_exact(RECORD).map(|r| {
            let u = |i: usize| u32::from_le_bytes([r[i], r[i + 1], r[i + 2], r[i + 3]]) as usize;
            let f = |i: usize| {
                let mut b = [0u8; 8];
                b.copy_from_slice(&r[i..i + 8]);
                f64::from_le_bytes(b)
            };
            PayoffRecord { a: u(0), b: u(4), a_vs_b: f(8), b_vs_a: f(16) }
        })
    }

    /// The table among members with these ids (in this order) that the records give;
    /// records of members no longer there (evicted) are skipped.
    pub(super) fn table(&self, ids: &[usize]) -> MemberPayoffs {
        let position: HashMap<usize, usize> = ids.iter().enumerate().map(|(i, &id)| (id, i)).collect();
        let mut table = MemberPayoffs::default().resized(ids.len());
        for r in self.records() {
            if let (Some(&i), Some(&j)) = (position.get(&r.a), position.get(&r.b)) {
                table.set_pair(i, j, Some(r.a_vs_b), Some(r.b_vs_a));
            }
        }
        table
    }
}

/// Every record of a `payoffs.bin` file's bytes (all of them, whatever a checkpoint
/// covers): how a reader outside a run gets the league's table.
///
/// # Errors
///
/// [`Error::SavedState`] for bytes that are not a payoff log.
pub fn read_payoff_log(bytes: &[u8]) -> Result<Vec<PayoffRecord>> {
    let records = bytes.len().saturating_sub(HEADER) / RECORD;
    Ok(PayoffLog::read(bytes, records as u64)?.records().collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_come_back_and_a_longer_file_is_cut_to_the_checkpoint() {
        let mut log = PayoffLog::default();
        for k in 0..5 {
            log.push(PayoffRecord { a: k, b: k + 10, a_vs_b: k as f64 / 3.0, b_vs_a: -(k as f64) / 3.0 })
                .unwrap();
        }
        assert_eq!(log.len(), 5);
        let back = PayoffLog::read(log.bytes(), 3).unwrap();
        assert_eq!(back.len(), 3);
        assert_eq!(
            back.records().nth(2),
            Some(PayoffRecord { a: 2, b: 12, a_vs_b: 2.0 / 3.0, b_vs_a: -2.0 / 3.0 })
        );
        assert_eq!(read_payoff_log(log.bytes()).unwrap().len(), 5);
        let table = log.table(&[11, 1, 3]);
        assert_eq!(table.get(1, 0), Some(1.0 / 3.0));
        assert_eq!(table.get(0, 1), Some(-1.0 / 3.0));
        assert_eq!(table.row(2), vec![None, None, None]);
        log.truncate(1);
        assert_eq!(log.len(), 1);
    }

    #[test]
    fn bytes_that_are_not_a_log_or_too_short_are_one_error() {
        let e = PayoffLog::read(b"not a log at all", 0).unwrap_err().to_string();
        assert!(e.contains("payoffs.bin: not a league payoff log"), "{e}");
        let e = PayoffLog::read(PayoffLog::default().bytes(), 2).unwrap_err().to_string();
        assert!(e.contains("0 records, fewer than the 2 the checkpoint names"), "{e}");
        let mut other = PayoffLog::default().bytes().to_vec();
        other[8] = 9;
        let e = PayoffLog::read(&other, 0).unwrap_err().to_string();
        assert!(e.contains("format version 9"), "{e}");
    }
}
