//! The layout of the bytes this process writes, so that the feed can serve its own writes
//! without reading them again.
//!
//! The registry encodes an object for storage knowing where `resourceVersion` belongs in its
//! top-level `metadata` object. The served form is the stored bytes with `"resourceVersion"`
//! spliced in there, so
//! when the feed gets the event of that very write it needs nothing else: the parse that
//! finds `metadata` in bytes of unknown origin (a third of a create's CPU beside the store's)
//! is skipped.
//!
//! A layout is only trusted for the very bytes it was taken from: the entry keeps a clone of
//! the written [`Bytes`], and the event's value must be the same allocation (same address and
//! length, which holding the clone keeps from being reused). The embedded store hands the
//! written `Bytes` back in its events; a backend that decodes its events (etcd) gives other
//! allocations, which never match, and the feed reads those as before.
//!
//! Entries go away when the feed sees an event for the key (matching or not), or when the
//! writer learns its write did not happen; the table is bounded besides, so that writes whose
//! outcome was never learned cannot make it grow.

use bytes::Bytes;
use std::collections::HashMap;
use std::sync::Mutex;

/// Where in the top-level `metadata` object of some stored bytes `resourceVersion` belongs
/// (kube-apiserver's encoders put it after `uid` for a built-in kind, sorted for a custom
/// resource: `crest_codec::json`).
pub(crate) type Layout = crest_codec::json::RvSlot;

/// Keys with a write in flight beyond which the table is cleared (its entries are only hints).
const MAX_ENTRIES: usize = 16 * 1024;

/// The layouts of this process's writes whose events the feed has not seen yet, by key.
#[derive(Default)]
pub(crate) struct OwnWrites(Mutex<HashMap<String, (Bytes, Layout)>>);

fn same(a: &Bytes, b: &[u8]) -> bool {
    a.len() == b.len() && std::ptr::eq(a.as_ptr(), b.as_ptr())
}

impl OwnWrites {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Bytes, Layout)>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// `bytes` are about to be written at `key`.
    pub(crate) fn expect(&self, key: &str, bytes: &Bytes, layout: Layout) {
        let mut m = self.map();
        if m.len() >= MAX_ENTRIES && !m.contains_key(key) {
            m.clear();
        }
        m.insert(key.to_string(), (bytes.clone(), layout));
    }

    /// The write of `bytes` at `key` did not happen (a conflict, an error).
    pub(crate) fn forget(&self, key: &str, bytes: &Bytes) {
        let mut m = self.map();
        if m.get(key).is_some_and(|(b, _)| same(b, bytes)) {
            m.remove(key);
        }
    }

    /// The feed got an event for `key` with `value`: the layout if `value` is the bytes this
    /// process wrote there. Either way the key's entry is done with.
    pub(crate) fn take(&self, key: &str, value: &[u8]) -> Option<Layout> {
        let mut m = self.map();
        if m.is_empty() {
            return None;
        }
        let (bytes, layout) = m.remove(key)?;
        same(&bytes, value).then_some(layout)
    }

    #[cfg(test)]
    fn len(&self) -> usize {
        self.map().len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const L: Layout = Layout {
        at: 13,
        comma_before: false,
        comma_after: true,
    };

    #[test]
    fn only_the_written_allocation_matches() {
        let w = OwnWrites::default();
        let bytes = Bytes::from(br#"{"metadata":{"name":"a"}}"#.to_vec());
        w.expect("/k", &bytes, L);
        // Equal content in another allocation (what an etcd watch decodes) is not trusted.
        let copy = bytes.to_vec();
        assert_eq!(w.take("/k", &copy), None);
        assert_eq!(w.len(), 0, "the key's entry is done with after its event");
        w.expect("/k", &bytes, L);
        assert_eq!(w.take("/other", &bytes), None);
        assert_eq!(w.take("/k", &bytes.clone()), Some(L));
        assert_eq!(w.take("/k", &bytes), None);
    }

    #[test]
    fn a_write_that_did_not_happen_is_forgotten() {
        let w = OwnWrites::default();
        let first = Bytes::from(b"{\"a\":1}".to_vec());
        let second = Bytes::from(b"{\"a\":2}".to_vec());
        w.expect("/k", &first, L);
        w.expect("/k", &second, L);
        // The first write's failure leaves the second's layout.
        w.forget("/k", &first);
        assert_eq!(w.len(), 1);
        w.forget("/k", &second);
        assert_eq!(w.len(), 0);
    }

    #[test]
    fn the_table_is_bounded() {
        let w = OwnWrites::default();
        let bytes = Bytes::from(b"{}".to_vec());
        for i in 0..MAX_ENTRIES + 10 {
            w.expect(&format!("/k/{i}"), &bytes, L);
        }
        assert!(w.len() <= MAX_ENTRIES);
    }
}
