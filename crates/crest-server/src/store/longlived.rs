//! Byte buffers for objects that live as long as they are cached.
//!
//! The process allocator (jemalloc, chosen for request throughput) rounds a 2.2 KiB object up to
//! its 2.5 KiB size class, and a cache of 100,000 such objects pays that on every one (measured:
//! RSS 1.57x the stored data instead of 1.35x). Cached objects are long-lived and of every size,
//! so their bytes come from the C library's allocator, which packs them to 16 bytes instead.
//! Everything short-lived stays on the process allocator.

use bytes::Bytes;
use std::ptr::NonNull;

/// A `malloc`ed copy of some bytes, freed on drop.
struct CBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer is owned exclusively and never mutated after creation.
unsafe impl Send for CBuf {}
// SAFETY: as for Send: shared references only read the immutable bytes.
unsafe impl Sync for CBuf {}

impl AsRef<[u8]> for CBuf {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised bytes that live until drop.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for CBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by `libc::malloc` in `copy` and freed only here.
        unsafe { libc::free(self.ptr.as_ptr().cast()) }
    }
}

/// A long-lived copy of `data`.
pub(super) fn copy(data: &[u8]) -> Bytes {
    if data.is_empty() {
        return Bytes::new();
    }
    // SAFETY: a fresh allocation of `data.len()` bytes, filled before it is read.
    let ptr = unsafe { libc::malloc(data.len()) }.cast::<u8>();
    let Some(ptr) = NonNull::new(ptr) else {
        return Bytes::copy_from_slice(data);
    };
    // SAFETY: `ptr` has room for `data.len()` bytes and does not overlap `data`.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), ptr.as_ptr(), data.len()) };
    Bytes::from_owner(CBuf {
        ptr,
        len: data.len(),
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn copies_and_frees() {
        for n in [0, 1, 2300, 1 << 20] {
            let data: Vec<u8> = (0..n).map(|i| i as u8).collect();
            let b = super::copy(&data);
            assert_eq!(b.as_ref(), data.as_slice());
            let s = b.slice(n / 2..);
            drop(b);
            assert_eq!(s.as_ref(), &data[n / 2..]);
        }
    }
}
