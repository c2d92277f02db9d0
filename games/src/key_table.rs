//! Information-state strings, interned: every key in one text buffer and a hash table of
//! ids. A tree of hundreds of thousands of information states (tic-tac-toe) then holds no
//! allocation per key, and renumbering its states moves ids, not strings.

use std::fmt;
use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::FxBuildHasher;

/// Distinct strings numbered `0..len()`; a string's id changes only by
/// [`KeyTable::reorder`].
#[derive(Clone, Default)]
pub(crate) struct KeyTable {
    /// Every key once, in the order they were inserted.
    text: String,
    /// Key `i` is `text[spans[i].0..spans[i].1]`.
    spans: Vec<(usize, usize)>,
    /// Each id with its key's hash (growing the table rehashes no key).
    index: HashTable<(u64, u32)>,
}

fn hash(key: &str) -> u64 {
    FxBuildHasher.hash_one(key)
}

impl KeyTable {
    /// Number of keys.
    pub(crate) fn len(&self) -> usize {
        self.spans.len()
    }

    /// Key `id`.
    ///
    /// # Panics
    ///
    /// If `id >= len()` (a caller bug).
    pub(crate) fn key(&self, id: usize) -> &str {
        let (start, end) = self.spans[id];
        &self.text[start..end]
    }

    /// The id of `key`, if present.
    pub(crate) fn get(&self, key: &str) -> Option<usize> {
        let h = hash(key);
        self.index.find(h, |&(hk, id)| hk == h && self.key(id as usize) == key).map(|&(_, id)| id as usize)
    }

    /// The id of `key`, added as `len()` when absent; and whether it was added.
    pub(crate) fn insert(&mut self, key: &str) -> (usize, bool) {
        let h = hash(key);
        let Self { text, spans, index } = self;
        let of = |id: u32| {
            let (start, end) = spans[id as usize];
            &text[start..end]
        };
        if let Some(&(_, id)) = index.find(h, |&(hk, id)| hk == h && of(id) == key) {
            return (id as usize, false);
        }
        let id = spans.len();
        index.insert_unique(h, (h, id as u32), |&(hk, _)| hk);
        spans.push((text.len(), text.len() + key.len()));
        text.push_str(key);
        (id, true)
    }

    /// Renumber: the key with id `order[new]` gets id `new`. `order` is a permutation of
    /// `0..len()`.
    pub(crate) fn reorder(&mut self, order: &[u32]) {
        debug_assert_eq!(order.len(), self.len());
        let mut new_of = vec![0u32; order.len()];
        for (new, &old) in order.iter().enumerate() {
            new_of[old as usize] = new as u32;
        }
        self.spans = order.iter().map(|&old| self.spans[old as usize]).collect();
        for (_, id) in self.index.iter_mut() {
            *id = new_of[*id as usize];
        }
    }

    /// The keys in id order.
    pub(crate) fn iter(&self) -> impl ExactSizeIterator<Item = &str> {
        (0..self.len()).map(|id| self.key(id))
    }
}

impl fmt::Debug for KeyTable {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_numbered_found_and_reordered() {
        let mut t = KeyTable::default();
        assert_eq!(t.insert("b"), (0, true));
        assert_eq!(t.insert(""), (1, true));
        assert_eq!(t.insert("abc"), (2, true));
        assert_eq!(t.insert("b"), (0, false));
        assert_eq!(t.get("abc"), Some(2));
        assert_eq!(t.get("ab"), None);
        t.reorder(&[2, 0, 1]);
        assert_eq!(t.iter().collect::<Vec<_>>(), ["abc", "b", ""]);
        assert_eq!((t.get("abc"), t.get("b"), t.get("")), (Some(0), Some(1), Some(2)));
        assert_eq!(t.insert("b"), (1, false));
        assert_eq!(t.insert("z"), (3, true));
        assert_eq!(t.key(3), "z");
        // Many keys: the index grows and still finds each.
        for i in 0..10_000 {
            t.insert(&i.to_string());
        }
        assert!((0..10_000).all(|i| t.key(t.get(&i.to_string()).unwrap()) == i.to_string()));
        assert_eq!(t.len(), 10_004);
    }
}
