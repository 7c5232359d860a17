//! The on-disk records of the embedded store (see the module comment of `embedded`).

use crate::api::{Event, EventType, KeyValue, Result, Revision, StorageError};
use bytes::Bytes;
use redb::{ReadableTable, TableDefinition};
use std::sync::atomic::{AtomicU8, Ordering};

pub(super) const KV: TableDefinition<&str, &[u8]> = TableDefinition::new("kv");
pub(super) const LOG: TableDefinition<i64, &[u8]> = TableDefinition::new("log");
pub(super) const META: TableDefinition<&str, i64> = TableDefinition::new("meta");

pub(super) fn internal<E: std::fmt::Display>(e: E) -> StorageError {
    StorageError::Internal(e.to_string())
}

/// A redb error as a storage error: I/O failures of the store's file (and what redb reports after
/// one) are [`StorageError::Io`], naming the cause, so that the writer recovers from them; a
/// database closed under a reader (being reopened) is `Unavailable`; the rest is unexpected.
pub(super) fn db_err(e: impl Into<redb::Error>) -> StorageError {
    match e.into() {
        redb::Error::Io(e) => StorageError::Io(e.to_string()),
        redb::Error::Backend(e) => StorageError::Io(e.to_string()),
        redb::Error::PreviousIo => {
            StorageError::Io("an earlier I/O error of the store's file".into())
        }
        redb::Error::DatabaseClosed => {
            StorageError::Unavailable("the store is being reopened".into())
        }
        other => StorageError::Internal(other.to_string()),
    }
}

pub(super) fn corrupt(what: &str) -> StorageError {
    StorageError::Internal(format!("corrupt {what}"))
}

/// Where a key's value of one revision lives: the `kv` record, and the `prev` part of log entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Index {
    pub(super) create_revision: Revision,
    pub(super) mod_revision: Revision,
    pub(super) version: i64,
}

impl Index {
    pub(super) fn of(kv: &KeyValue) -> Self {
        Index {
            create_revision: kv.create_revision,
            mod_revision: kv.mod_revision,
            version: kv.version,
        }
    }

    pub(super) fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.create_revision.to_le_bytes());
        out.extend_from_slice(&self.mod_revision.to_le_bytes());
        out.extend_from_slice(&self.version.to_le_bytes());
    }

    pub(super) fn decode(b: &[u8]) -> Result<Self> {
        Ok(Index {
            create_revision: i64_at(b, 0)?,
            mod_revision: i64_at(b, 8)?,
            version: i64_at(b, 16)?,
        })
    }

    pub(super) fn with_value(&self, key: &str, value: Bytes) -> KeyValue {
        KeyValue {
            key: key.to_string(),
            value,
            create_revision: self.create_revision,
            mod_revision: self.mod_revision,
            version: self.version,
        }
    }
}

fn i64_at(b: &[u8], at: usize) -> Result<i64> {
    b.get(at..at + 8)
        .and_then(|s| s.try_into().ok())
        .map(i64::from_le_bytes)
        .ok_or_else(|| corrupt("record"))
}

/// One log entry, borrowed from the table. Layout: flags (1 byte: bit 0 delete, bit 1 the value
/// is compressed), key length (u32 LE), key, create_rev, version, prev index (mod_rev 0 = none),
/// value (the rest; when compressed: its length as u32 LE, then the LZ4 block). Format 2 wrote
/// the same layout without compression, so its entries read unchanged.
pub(super) struct Entry<'a> {
    pub(super) delete: bool,
    pub(super) compressed: bool,
    pub(super) key: &'a str,
    pub(super) create_revision: Revision,
    pub(super) version: i64,
    pub(super) prev: Option<Index>,
    pub(super) value: &'a [u8],
}

const NO_PREV: Index = Index {
    create_revision: 0,
    mod_revision: 0,
    version: 0,
};

const DELETE: u8 = 1;
const COMPRESSED: u8 = 2;

/// Values shorter than this are stored as they are.
const COMPRESS_FROM: usize = 128;

/// A value as the log stores it: LZ4-compressed when that saves at least an eighth (objects are
/// JSON, which mostly does), else as it is. Done by the writing task, off the writer thread.
pub(super) struct StoredValue {
    compressed: bool,
    bytes: Vec<u8>,
}

/// Which values are worth an LZ4 attempt. Most resources' objects are JSON that compresses by
/// half, but some do not compress (a large random or already-compressed field: a certificate,
/// a base64 blob), and an attempt on those costs as much CPU as the rest of the store's write.
/// So the outcome is kept per resource (the key up to its fourth `/`: `/registry/GROUP/PLURAL/`,
/// hashed into a few slots): after [`GIVE_UP_AFTER`] values in a row that did not compress, only
/// every [`PROBE_EVERY`]th is tried, and one that compresses makes every value tried again.
/// Only what the log stores changes (compressed or not), never a value read back.
pub(super) struct Compression {
    slots: [CompressionSlot; SLOTS],
}

impl Default for Compression {
    fn default() -> Self {
        Compression {
            slots: std::array::from_fn(|_| CompressionSlot::default()),
        }
    }
}

#[derive(Default)]
struct CompressionSlot {
    /// Values in a row that did not compress (saturating).
    misses: AtomicU8,
    /// Values skipped since the last attempt.
    skipped: AtomicU8,
}

const SLOTS: usize = 64;
const GIVE_UP_AFTER: u8 = 4;
const PROBE_EVERY: u8 = 16;

impl Compression {
    fn slot(&self, key: &str) -> &CompressionSlot {
        let end = key
            .match_indices('/')
            .nth(3)
            .map_or(key.len(), |(i, _)| i + 1);
        // FNV-1a: a fixed, cheap hash (a few bytes, once per write).
        let h = key.as_bytes()[..end]
            .iter()
            .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| {
                (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
            });
        &self.slots[(h % SLOTS as u64) as usize]
    }

    /// The stored form of `value`, written at `key`.
    pub(super) fn store(&self, key: &str, value: &[u8]) -> StoredValue {
        if value.len() < COMPRESS_FROM {
            return StoredValue::plain(value);
        }
        let slot = self.slot(key);
        if slot.misses.load(Ordering::Relaxed) >= GIVE_UP_AFTER {
            let skipped = slot.skipped.fetch_add(1, Ordering::Relaxed);
            if skipped.wrapping_add(1) % PROBE_EVERY != 0 {
                return StoredValue::plain(value);
            }
        }
        let stored = StoredValue::new(value);
        if stored.compressed {
            slot.misses.store(0, Ordering::Relaxed);
        } else {
            let m = slot.misses.load(Ordering::Relaxed);
            slot.misses.store(m.saturating_add(1), Ordering::Relaxed);
        }
        stored
    }
}

impl StoredValue {
    fn plain(value: &[u8]) -> Self {
        StoredValue {
            compressed: false,
            bytes: value.to_vec(),
        }
    }

    pub(super) fn new(value: &[u8]) -> Self {
        if value.len() >= COMPRESS_FROM && value.len() <= u32::MAX as usize {
            let mut bytes =
                Vec::with_capacity(4 + lz4_flex::block::get_maximum_output_size(value.len()));
            bytes.extend_from_slice(&(value.len() as u32).to_le_bytes());
            bytes.resize(bytes.capacity(), 0);
            if let Ok(n) = lz4_flex::block::compress_into(value, &mut bytes[4..]) {
                if 4 + n <= value.len() - value.len() / 8 {
                    bytes.truncate(4 + n);
                    return StoredValue {
                        compressed: true,
                        bytes,
                    };
                }
            }
        }
        StoredValue::plain(value)
    }

    pub(super) fn empty() -> Self {
        StoredValue {
            compressed: false,
            bytes: vec![],
        }
    }
}

pub(super) fn encode_entry(
    delete: bool,
    key: &str,
    create_revision: Revision,
    version: i64,
    prev: Option<&Index>,
    value: &StoredValue,
) -> Vec<u8> {
    let mut b = Vec::with_capacity(45 + key.len() + value.bytes.len());
    let mut flags = 0;
    if delete {
        flags |= DELETE;
    }
    if value.compressed {
        flags |= COMPRESSED;
    }
    b.push(flags);
    b.extend_from_slice(&(key.len() as u32).to_le_bytes());
    b.extend_from_slice(key.as_bytes());
    b.extend_from_slice(&create_revision.to_le_bytes());
    b.extend_from_slice(&version.to_le_bytes());
    prev.unwrap_or(&NO_PREV).encode(&mut b);
    b.extend_from_slice(&value.bytes);
    b
}

pub(super) fn decode_entry(b: &[u8]) -> Result<Entry<'_>> {
    let bad = || corrupt("log entry");
    let t = *b.first().ok_or_else(bad)?;
    let klen = u32::from_le_bytes(
        b.get(1..5)
            .and_then(|s| s.try_into().ok())
            .ok_or_else(bad)?,
    ) as usize;
    let key = std::str::from_utf8(b.get(5..5 + klen).ok_or_else(bad)?).map_err(|_| bad())?;
    let at = 5 + klen;
    let prev = Index::decode(b.get(at + 16..at + 40).ok_or_else(bad)?)?;
    if t & !(DELETE | COMPRESSED) != 0 {
        return Err(bad());
    }
    Ok(Entry {
        delete: t & DELETE != 0,
        compressed: t & COMPRESSED != 0,
        key,
        create_revision: i64_at(b, at)?,
        version: i64_at(b, at + 8)?,
        prev: (prev.mod_revision != 0).then_some(prev),
        value: b.get(at + 40..).ok_or_else(bad)?,
    })
}

/// The key of the log entry `b` without decoding the rest.
pub(super) fn entry_key(b: &[u8]) -> Result<&str> {
    decode_entry(b).map(|e| e.key)
}

/// The value of an entry, decompressed.
pub(super) fn entry_value(e: &Entry<'_>) -> Result<Bytes> {
    if !e.compressed {
        return Ok(Bytes::copy_from_slice(e.value));
    }
    let len = e
        .value
        .get(..4)
        .and_then(|s| s.try_into().ok())
        .map(u32::from_le_bytes)
        .ok_or_else(|| corrupt("compressed value"))? as usize;
    let mut out = vec![0; len];
    match lz4_flex::block::decompress_into(&e.value[4..], &mut out) {
        Ok(n) if n == len => Ok(Bytes::from(out)),
        _ => Err(corrupt("compressed value")),
    }
}

/// The value `key` got at revision `rev` (the log entry that `kv` or a `prev` points to).
pub(super) fn value_at(
    log: &impl ReadableTable<i64, &'static [u8]>,
    rev: Revision,
) -> Result<Bytes> {
    let g = log
        .get(rev)
        .map_err(db_err)?
        .ok_or_else(|| corrupt("store: a live revision is missing from the log"))?;
    entry_value(&decode_entry(g.value())?)
}

/// The event of the log entry at `rev`, with the previous value read from the log.
pub(super) fn event_at(
    log: &impl ReadableTable<i64, &'static [u8]>,
    rev: Revision,
    b: &[u8],
) -> Result<Event> {
    let e = decode_entry(b)?;
    let prev_kv = match e.prev {
        Some(p) => Some(p.with_value(e.key, value_at(log, p.mod_revision)?)),
        None => None,
    };
    Ok(Event {
        event_type: if e.delete {
            EventType::Delete
        } else {
            EventType::Put
        },
        kv: KeyValue {
            key: e.key.to_string(),
            value: entry_value(&e)?,
            create_revision: e.create_revision,
            mod_revision: rev,
            version: e.version,
        },
        prev_kv,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// JSON that LZ4 halves, and bytes it cannot shorten (a xorshift stream of letters).
    fn compressible() -> Vec<u8> {
        br#"{"spec":{"a":"xxxxxxxx","b":"xxxxxxxx"}}"#.repeat(20)
    }

    fn incompressible(seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..2048)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                b'a' + (x % 26) as u8
            })
            .collect()
    }

    #[test]
    fn a_resource_whose_values_do_not_compress_is_probed_only_now_and_then() {
        let c = Compression::default();
        let key = "/registry/stable.example.com/crontabs/ns/a";
        let tried = |i: u64| {
            let v = incompressible(i);
            let before = c.slot(key).misses.load(Ordering::Relaxed);
            let stored = c.store(key, &v);
            assert!(!stored.compressed);
            assert_eq!(stored.bytes, v, "stored as it is");
            c.slot(key).misses.load(Ordering::Relaxed) != before || before == u8::MAX
        };
        let attempts = (0..200).filter(|&i| tried(i)).count();
        // GIVE_UP_AFTER attempts, then one in PROBE_EVERY.
        let expected = usize::from(GIVE_UP_AFTER) + (200 - usize::from(GIVE_UP_AFTER)) / 16;
        assert!(
            attempts.abs_diff(expected) <= 1,
            "{attempts} attempts, expected about {expected}"
        );
        // Another resource is not affected (unless it shares the slot).
        let other = "/registry/apps/deployments/ns/a";
        if !std::ptr::eq(c.slot(other), c.slot(key)) {
            assert!(c.store(other, &compressible()).compressed);
        }
        // Once a probe compresses, every value of the resource is tried again.
        let mut compressed = 0;
        for _ in 0..64 {
            if c.store(key, &compressible()).compressed {
                compressed += 1;
            }
        }
        assert!(compressed >= 64 - 16, "{compressed} of 64 compressed");
        assert_eq!(c.slot(key).misses.load(Ordering::Relaxed), 0);
    }

    #[test]
    fn the_slot_is_the_resource() {
        let c = Compression::default();
        assert!(std::ptr::eq(
            c.slot("/registry/g/p/ns/a"),
            c.slot("/registry/g/p/other/b")
        ));
        // Short keys (no fourth slash) are their own resource.
        let _ = c.slot("/registry");
        let _ = c.slot("");
    }
}
