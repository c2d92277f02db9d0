//! `MemberPolicy`: a population member's policy of any kind — a table kept inline, or any
//! other policy (a network) kept in the run folder as a file named by its content hash.

use std::sync::{Arc, OnceLock};

use metagame_games::{Policy, PolicyFile, TabularPolicy};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};

use crate::error::{Error, Result};

/// A member's policy.
///
/// In a checkpoint a table is written inline (as before policies of other kinds existed) and
/// any other policy as `{kind, file, sha256}`: the file (`members/<sha256>.<extension>`,
/// relative to the run folder) holds the policy's [`PolicyFile`] bytes, written once by the
/// run's driver ([`MemberPolicy::pending_file`]). A policy read back from a checkpoint is not
/// loaded until [`StoredPolicy::load`] is given its file's bytes, which must hash to the name.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MemberPolicy {
    /// A table, shared: a loop's state is copied for every checkpoint, and a PSRO population
    /// of hundreds of tables must not be copied with it.
    Table(SharedTable),
    /// Any other policy, kept as a file.
    Stored(StoredPolicy),
}

/// A policy that is not a table, with where its file lives and its content hash.
#[derive(Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StoredPolicy {
    /// The kind that reads the file back ([`Policy::kind`]).
    kind: String,
    /// `members/<sha256>.<extension>`, relative to the run folder.
    file: String,
    /// SHA-256 of the file's bytes, lowercase hex.
    sha256: String,
    /// The policy, once made or loaded.
    #[serde(skip)]
    policy: Option<Arc<dyn Policy>>,
    /// The bytes, until the run's driver has written them.
    #[serde(skip)]
    bytes: Option<Arc<Vec<u8>>>,
}

impl PartialEq for StoredPolicy {
    /// The same content (kind and hash).
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.sha256 == other.sha256
    }
}

impl std::fmt::Debug for StoredPolicy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoredPolicy")
            .field("kind", &self.kind)
            .field("file", &self.file)
            .field("loaded", &self.policy.is_some())
            .finish()
    }
}

/// The folder of a run folder that holds its members' files.
pub const MEMBERS_FOLDER: &str = "members";

impl MemberPolicy {
    /// A member from any policy: a table (by [`Policy::as_tabular`]) kept as one, anything
    /// else written to its [`PolicyFile`] and hashed.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] for a policy that cannot be written to a file (a run folder could
    /// not keep it); the policy's own serialisation errors.
    pub fn new(policy: Arc<dyn Policy>) -> Result<Self> {
        if let Some(table) = policy.as_tabular() {
            return Ok(MemberPolicy::Table(SharedTable::new(table.clone())));
        }
        let Some(PolicyFile { kind, extension, bytes }) = policy.to_file()? else {
            return Err(Error::Config(format!(
                "a policy of kind `{}` cannot be written to a run folder, so it cannot be a member",
                policy.kind()
            )));
        };
        let sha256 = hex(&Sha256::digest(&bytes));
        Ok(MemberPolicy::Stored(StoredPolicy {
            kind,
            file: format!("{MEMBERS_FOLDER}/{sha256}.{extension}"),
            sha256,
            policy: Some(policy),
            bytes: Some(Arc::new(bytes)),
        }))
    }

    /// The policy, to play.
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] for a stored policy read from a checkpoint and not loaded yet.
    pub fn policy(&self) -> Result<&dyn Policy> {
        match self {
            MemberPolicy::Table(t) => Ok(t.table()),
            MemberPolicy::Stored(s) => s.policy.as_deref().ok_or_else(|| s.not_loaded()),
        }
    }

    /// The policy with shared ownership, to keep past a borrow (a Python trainer's
    /// environment plays it).
    ///
    /// # Errors
    ///
    /// As [`MemberPolicy::policy`].
    pub fn shared(&self) -> Result<Arc<dyn Policy>> {
        match self {
            MemberPolicy::Table(t) => Ok(Arc::clone(&t.table) as Arc<dyn Policy>),
            MemberPolicy::Stored(s) => s.shared(),
        }
    }

    /// The table, for a member that is one.
    pub fn as_table(&self) -> Option<&TabularPolicy> {
        match self {
            MemberPolicy::Table(t) => Some(t.table()),
            MemberPolicy::Stored(_) => None,
        }
    }

    /// The stored policy, for a member that is not a table.
    pub fn as_stored(&self) -> Option<&StoredPolicy> {
        match self {
            MemberPolicy::Table(_) => None,
            MemberPolicy::Stored(s) => Some(s),
        }
    }

    /// The stored policy, to load it.
    pub fn as_stored_mut(&mut self) -> Option<&mut StoredPolicy> {
        match self {
            MemberPolicy::Table(_) => None,
            MemberPolicy::Stored(s) => Some(s),
        }
    }

    /// The file to write and its bytes, for a stored policy whose file the run's driver has
    /// not written yet ([`StoredPolicy::written`] marks it written).
    pub fn pending_file(&self) -> Option<(&str, &[u8])> {
        let s = self.as_stored()?;
        s.bytes.as_ref().map(|b| (s.file.as_str(), b.as_slice()))
    }
}

impl From<TabularPolicy> for MemberPolicy {
    fn from(table: TabularPolicy) -> Self {
        MemberPolicy::Table(SharedTable::new(table))
    }
}

/// A member's table with its JSON, made the first time a checkpoint writes it: a member
/// never changes, and every checkpoint of a PSRO run writes every member's table again
/// (hundreds of them; formatting their numbers was most of each write). Only JSON of at most
/// [`KEPT_JSON_BYTES`] is kept: a large table's (tic-tac-toe's, 2.65 million numbers)
/// would cost more memory than the table itself, and is formatted at each write instead.
#[derive(Clone, Debug)]
pub struct SharedTable {
    table: Arc<TabularPolicy>,
    json: Arc<OnceLock<Box<RawValue>>>,
}

/// The largest table JSON a [`SharedTable`] keeps (Leduc's is about 60 KB).
pub const KEPT_JSON_BYTES: usize = 1 << 20;

impl SharedTable {
    fn new(table: TabularPolicy) -> Self {
        Self { table: Arc::new(table), json: Arc::default() }
    }

    /// The table.
    pub fn table(&self) -> &TabularPolicy {
        &self.table
    }
}

impl PartialEq for SharedTable {
    /// The same rows.
    fn eq(&self, other: &Self) -> bool {
        self.table == other.table
    }
}

impl Serialize for SharedTable {
    /// As the table (the JSON written once, then copied).
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> std::result::Result<S::Ok, S::Error> {
        if let Some(json) = self.json.get() {
            return json.serialize(serializer);
        }
        let json = serde_json::value::to_raw_value(&*self.table).map_err(serde::ser::Error::custom)?;
        if json.get().len() > KEPT_JSON_BYTES {
            return json.serialize(serializer);
        }
        self.json.get_or_init(|| json).serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SharedTable {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        TabularPolicy::deserialize(deserializer).map(Self::new)
    }
}

impl StoredPolicy {
    /// The kind that reads the file back.
    pub fn kind(&self) -> &str {
        &self.kind
    }
    /// The file, relative to the run folder.
    pub fn file(&self) -> &str {
        &self.file
    }
    /// SHA-256 of the file's bytes, lowercase hex.
    pub fn sha256(&self) -> &str {
        &self.sha256
    }
    /// True once the policy is at hand (made, or loaded from its file).
    pub fn is_loaded(&self) -> bool {
        self.policy.is_some()
    }

    /// Load the policy from its file's `bytes`, `read` turning them into a policy of this
    /// kind.
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] when the bytes do not hash to the name the checkpoint gave them
    /// (the file was altered or replaced) or `read` fails.
    pub fn load(
        &mut self,
        bytes: &[u8],
        read: impl FnOnce(&str, &[u8]) -> std::result::Result<Arc<dyn Policy>, String>,
    ) -> Result<()> {
        let sha256 = hex(&Sha256::digest(bytes));
        if sha256 != self.sha256 {
            return Err(Error::SavedState(format!(
                "{} does not hold the member the checkpoint names (its SHA-256 is {sha256})",
                self.file
            )));
        }
        let policy = read(&self.kind, bytes).map_err(|e| Error::SavedState(format!("{}: {e}", self.file)))?;
        self.policy = Some(policy);
        Ok(())
    }

    /// Mark the file written: the bytes are dropped.
    pub fn written(&mut self) {
        self.bytes = None;
    }

    /// True while its bytes wait to be written ([`StoredPolicy::written`]).
    pub fn has_pending_bytes(&self) -> bool {
        self.bytes.is_some()
    }

    /// Let go of the policy (its file is written): [`StoredPolicy::load`] brings it back.
    pub fn unload(&mut self) {
        self.policy = None;
    }

    /// The policy with shared ownership.
    ///
    /// # Errors
    ///
    /// [`Error::SavedState`] when it is not loaded.
    pub fn shared(&self) -> Result<Arc<dyn Policy>> {
        self.policy.clone().ok_or_else(|| self.not_loaded())
    }

    fn not_loaded(&self) -> Error {
        Error::SavedState(format!("the member policy {} was not loaded from the run folder", self.file))
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::with_capacity(2 * bytes.len()), |mut s, b| {
        let _ = write!(s, "{b:02x}");
        s
    })
}

#[cfg(test)]
mod tests {
    use metagame_games::{Decisions, GameTree, registry};
    use ndarray::ArrayViewMut2;

    use super::*;

    /// A table member is written as the table, the first time and every time after (from
    /// its kept JSON), and reads back equal; its copies share that JSON.
    #[test]
    fn a_table_member_is_written_as_its_table() {
        let tree = GameTree::build(&registry::load("leduc_poker").unwrap()).unwrap();
        let table = TabularPolicy::first_action(&tree);
        let member = MemberPolicy::from(table.clone());
        let want = serde_json::to_string(&table).unwrap();
        assert_eq!(serde_json::to_string(&member).unwrap(), want);
        let copy = member.clone();
        assert_eq!(serde_json::to_string(&copy).unwrap(), want);
        let MemberPolicy::Table(shared) = &copy else { panic!("a table") };
        assert!(shared.json.get().is_some(), "the copy shares the kept JSON");
        let back: MemberPolicy = serde_json::from_str(&want).unwrap();
        assert_eq!(back, member);
        assert_eq!(back.as_table(), Some(&table));
    }

    /// A table whose JSON is larger than the table is not kept, and is written the same.
    #[test]
    fn a_large_tables_json_is_not_kept() {
        let tree = GameTree::build(&registry::load("liars_dice").unwrap()).unwrap();
        let table = TabularPolicy::uniform(&tree);
        let want = serde_json::to_string(&table).unwrap();
        assert!(want.len() > KEPT_JSON_BYTES, "{} bytes", want.len());
        let member = MemberPolicy::from(table);
        for _ in 0..2 {
            assert_eq!(serde_json::to_string(&member).unwrap(), want);
        }
        let MemberPolicy::Table(shared) = &member else { panic!("a table") };
        assert!(shared.json.get().is_none(), "no JSON kept");
    }

    /// A policy that writes itself as one byte.
    struct Byte(u8);
    impl Policy for Byte {
        fn probabilities(
            &self,
            d: &Decisions<'_>,
            out: ArrayViewMut2<'_, f32>,
        ) -> metagame_games::Result<()> {
            metagame_games::Uniform.probabilities(d, out)
        }
        fn kind(&self) -> &str {
            "byte"
        }
        fn to_file(&self) -> metagame_games::Result<Option<PolicyFile>> {
            Ok(Some(PolicyFile { kind: "byte".into(), extension: "bin".into(), bytes: vec![self.0] }))
        }
    }

    #[test]
    fn tables_stay_inline_and_others_are_named_by_their_hash() {
        let tree = GameTree::build(&registry::load("kuhn_poker").unwrap()).unwrap();
        let table = MemberPolicy::new(Arc::new(TabularPolicy::uniform(&tree))).unwrap();
        assert_eq!(table.as_table(), Some(&TabularPolicy::uniform(&tree)));
        assert_eq!(
            serde_json::to_value(&table).unwrap(),
            serde_json::to_value(TabularPolicy::uniform(&tree)).unwrap()
        );
        let byte = MemberPolicy::new(Arc::new(Byte(7))).unwrap();
        let stored = byte.as_stored().unwrap();
        // SHA-256 of the single byte 0x07.
        assert_eq!(stored.sha256(), "ca358758f6d27e6cf45272937977a748fd88391db679ceda7dc7bf1f005ee879");
        assert_eq!(stored.file(), format!("members/{}.bin", stored.sha256()));
        assert_eq!(byte.pending_file().unwrap().1, &[7]);

        // Through a checkpoint: not loaded until its bytes are given, and only its own.
        let text = serde_json::to_string(&byte).unwrap();
        let mut back: MemberPolicy = serde_json::from_str(&text).unwrap();
        assert_eq!(back, byte);
        assert!(back.policy().is_err() && back.pending_file().is_none());
        let read =
            |_: &str, b: &[u8]| -> std::result::Result<Arc<dyn Policy>, String> { Ok(Arc::new(Byte(b[0]))) };
        let stored = back.as_stored_mut().unwrap();
        assert!(stored.load(&[8], read).unwrap_err().to_string().contains("does not hold the member"));
        stored.load(&[7], read).unwrap();
        assert_eq!(back.policy().unwrap().kind(), "byte");
        let table_back: MemberPolicy = serde_json::from_str(&serde_json::to_string(&table).unwrap()).unwrap();
        assert_eq!(table_back, table);
        // A policy that cannot be written to a file cannot be a member.
        struct Unwritable;
        impl Policy for Unwritable {
            fn probabilities(
                &self,
                d: &Decisions<'_>,
                out: ArrayViewMut2<'_, f32>,
            ) -> metagame_games::Result<()> {
                metagame_games::Uniform.probabilities(d, out)
            }
            fn kind(&self) -> &str {
                "unwritable"
            }
        }
        let err = MemberPolicy::new(Arc::new(Unwritable)).unwrap_err().to_string();
        assert!(err.contains("`unwritable` cannot be written to a run folder"), "{err}");
    }
}
