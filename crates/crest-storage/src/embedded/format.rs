//! The on-disk records of the embedded store (see the module comment of `embedded`).

use crate::api::{Event, EventType, KeyValue, Result, Revision, StorageError};
use bytes::Bytes;
use redb::{ReadableTable, TableDefinition};

pub(super) const KV: TableDefinition<&str, &[u8]> = TableDefinition::new("kv");
pub(super) const LOG: TableDefinition<i64, &[u8]> = TableDefinition::new("log");
pub(super) const META: TableDefinition<&str, i64> = TableDefinition::new("meta");

pub(super) fn internal<E: std::fmt::Display>(e: E) -> StorageError {
    StorageError::Internal(e.to_string())
}

pub(super) fn corrupt(what: &str) -> StorageError {
    StorageError::Internal(format!("corrupt {what}"))
}

/// Where a key's value of one revision lives: the `kv` record, and the `prev` part of log entries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Index {
    pub create_revision: Revision,
    pub mod_revision: Revision,
    pub version: i64,
}

impl Index {
    pub fn of(kv: &KeyValue) -> Self {
        Index {
            create_revision: kv.create_revision,
            mod_revision: kv.mod_revision,
            version: kv.version,
        }
    }

    pub fn encode(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.create_revision.to_le_bytes());
        out.extend_from_slice(&self.mod_revision.to_le_bytes());
        out.extend_from_slice(&self.version.to_le_bytes());
    }

    pub fn decode(b: &[u8]) -> Result<Self> {
        Ok(Index {
            create_revision: i64_at(b, 0)?,
            mod_revision: i64_at(b, 8)?,
            version: i64_at(b, 16)?,
        })
    }

    pub fn with_value(&self, key: &str, value: Bytes) -> KeyValue {
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

/// One log entry, borrowed from the table. Layout: type (1 byte: 0 put, 1 delete), key length
/// (u32 LE), key, create_rev, version, prev index (mod_rev 0 = none), value (the rest).
pub(super) struct Entry<'a> {
    pub delete: bool,
    pub key: &'a str,
    pub create_revision: Revision,
    pub version: i64,
    pub prev: Option<Index>,
    pub value: &'a [u8],
}

const NO_PREV: Index = Index {
    create_revision: 0,
    mod_revision: 0,
    version: 0,
};

pub(super) fn encode_entry(
    delete: bool,
    key: &str,
    create_revision: Revision,
    version: i64,
    prev: Option<&Index>,
    value: &[u8],
) -> Vec<u8> {
    let mut b = Vec::with_capacity(45 + key.len() + value.len());
    b.push(u8::from(delete));
    b.extend_from_slice(&(key.len() as u32).to_le_bytes());
    b.extend_from_slice(key.as_bytes());
    b.extend_from_slice(&create_revision.to_le_bytes());
    b.extend_from_slice(&version.to_le_bytes());
    prev.unwrap_or(&NO_PREV).encode(&mut b);
    b.extend_from_slice(value);
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
    Ok(Entry {
        delete: t == 1,
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

/// The value of an entry, as stored.
pub(super) fn entry_value(e: &Entry<'_>) -> Result<Bytes> {
    Ok(Bytes::copy_from_slice(e.value))
}

/// The value `key` got at revision `rev` (the log entry that `kv` or a `prev` points to).
pub(super) fn value_at(
    log: &impl ReadableTable<i64, &'static [u8]>,
    rev: Revision,
) -> Result<Bytes> {
    let g = log
        .get(rev)
        .map_err(internal)?
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
