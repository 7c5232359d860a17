//! The authentication cache, as k8s.io/apiserver `authentication/token/cache` (kube-apiserver
//! caches successful token authentications for 10 s, failures not at all): after the first
//! request, authenticating the same token (or client certificate) is one SHA-256 of the
//! credential and one map lookup.
//!
//! Keys are SHA-256 digests — of the token and the audiences it was authenticated for
//! ([`CacheKey::token`]), or of a certificate's DER ([`CacheKey::certificate`]) — so the cache
//! never holds a credential. Expiry is a unix time in seconds passed in by the caller; the
//! size is bounded (expired entries go first, then the ones closest to expiring).

use crest_api::UserInfo;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, RwLock};

/// kube-apiserver's `TokenSuccessCacheTTL`.
pub const TOKEN_SUCCESS_TTL_SECONDS: i64 = 10;
/// The default bound on entries.
pub const DEFAULT_CAPACITY: usize = 4096;

/// A cache key: the SHA-256 of the credential.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey([u8; 32]);

impl CacheKey {
    /// The key of `token` authenticated for `audiences` (a TokenReview may ask for others than
    /// the API server's).
    pub fn token(token: &str, audiences: &[String]) -> CacheKey {
        let mut ctx = ring::digest::Context::new(&ring::digest::SHA256);
        for a in audiences {
            ctx.update(&(a.len() as u64).to_be_bytes());
            ctx.update(a.as_bytes());
        }
        ctx.update(&(audiences.len() as u64).to_be_bytes());
        ctx.update(token.as_bytes());
        CacheKey::from_digest(ctx.finish())
    }

    /// The key of a client certificate (its DER).
    pub fn certificate(der: &[u8]) -> CacheKey {
        CacheKey::from_digest(ring::digest::digest(&ring::digest::SHA256, der))
    }

    fn from_digest(d: ring::digest::Digest) -> CacheKey {
        let mut k = [0u8; 32];
        k.copy_from_slice(d.as_ref());
        CacheKey(k)
    }
}

/// The digest is already uniform: its first 8 bytes are the hash.
#[derive(Default)]
struct DigestHasher(u64);

impl Hasher for DigestHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes.iter().take(8) {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }
}

/// What a cached authentication gave: the user (with `system:authenticated`) and the
/// audiences it was valid for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Authenticated {
    /// The user, with `system:authenticated` (or the anonymous user).
    pub user: UserInfo,
    /// The audiences the credential was valid for.
    pub audiences: Vec<String>,
}

struct Entry {
    value: Arc<Authenticated>,
    expires: i64,
}

/// A bounded map from credential digests to authentications, with expiry. Shared between
/// requests (`&self` methods, an `RwLock` inside).
pub struct TokenCache {
    map: RwLock<HashMap<CacheKey, Entry, BuildHasherDefault<DigestHasher>>>,
    capacity: usize,
}

impl Default for TokenCache {
    fn default() -> Self {
        TokenCache::new(DEFAULT_CAPACITY)
    }
}

impl TokenCache {
    /// An empty cache holding at most `capacity` entries.
    pub fn new(capacity: usize) -> TokenCache {
        TokenCache {
            map: RwLock::new(HashMap::default()),
            capacity: capacity.max(1),
        }
    }

    /// The cached authentication of `key`, if it has not expired at `now` (unix seconds).
    pub fn get(&self, key: &CacheKey, now: i64) -> Option<Arc<Authenticated>> {
        let map = self.map.read().unwrap_or_else(|e| e.into_inner());
        map.get(key)
            .filter(|e| e.expires > now)
            .map(|e| e.value.clone())
    }

    /// Caches `value` for `key` until `expires` (unix seconds; e.g. now +
    /// [`TOKEN_SUCCESS_TTL_SECONDS`], or a certificate's notAfter).
    pub fn insert(
        &self,
        key: CacheKey,
        value: Authenticated,
        expires: i64,
        now: i64,
    ) -> Arc<Authenticated> {
        let value = Arc::new(value);
        let mut map = self.map.write().unwrap_or_else(|e| e.into_inner());
        if map.len() >= self.capacity && !map.contains_key(&key) {
            map.retain(|_, e| e.expires > now);
            if map.len() >= self.capacity {
                if let Some(victim) = map.iter().min_by_key(|(_, e)| e.expires).map(|(k, _)| *k) {
                    map.remove(&victim);
                }
            }
        }
        map.insert(
            key,
            Entry {
                value: value.clone(),
                expires,
            },
        );
        value
    }

    /// Drops every entry (e.g. when the token file or the signing keys change).
    pub fn clear(&self) {
        self.map.write().unwrap_or_else(|e| e.into_inner()).clear();
    }

    /// The number of entries (expired ones included until evicted).
    pub fn len(&self) -> usize {
        self.map.read().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether the cache holds no entry.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth(name: &str) -> Authenticated {
        Authenticated {
            user: UserInfo {
                name: name.into(),
                ..UserInfo::default()
            },
            audiences: vec![],
        }
    }

    #[test]
    fn hit_miss_and_expiry() {
        let c = TokenCache::new(10);
        let k = CacheKey::token("abc", &[]);
        assert!(c.get(&k, 100).is_none());
        c.insert(k, auth("alice"), 110, 100);
        assert_eq!(c.get(&k, 109).unwrap().user.name, "alice");
        assert!(c.get(&k, 110).is_none());
        // Audiences are part of the key.
        assert!(c.get(&CacheKey::token("abc", &["x".into()]), 100).is_none());
        assert_ne!(CacheKey::token("abc", &[]), CacheKey::certificate(b"abc"));
    }

    #[test]
    fn bounded() {
        let c = TokenCache::new(3);
        for i in 0..3 {
            c.insert(CacheKey::token(&i.to_string(), &[]), auth("u"), 100 + i, 0);
        }
        // Full: the entry closest to expiry goes.
        c.insert(CacheKey::token("new", &[]), auth("n"), 200, 0);
        assert_eq!(c.len(), 3);
        assert!(c.get(&CacheKey::token("0", &[]), 0).is_none());
        assert!(c.get(&CacheKey::token("new", &[]), 0).is_some());
        // Expired entries go first.
        c.insert(CacheKey::token("later", &[]), auth("l"), 300, 150);
        assert_eq!(c.len(), 2);
        c.clear();
        assert!(c.is_empty());
    }
}
