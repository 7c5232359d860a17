//! The files of the pki dir (`--pki-dir`, default DATA_DIR/pki): created on first use, owner-only,
//! and safe to share between replicas that start at the same moment.

use std::path::Path;

/// The contents of `path`, creating it (and its directory) from `create()` when it does not
/// exist yet. Creation is
/// atomic and first-writer-wins: the new contents go to a private temporary file that is
/// hard-linked into place, which fails if another process got there first; then whatever is in
/// place is read back, so replicas sharing a pki dir all use the same CA and keys, and nobody
/// ever reads a half-written file.
pub(crate) fn read_or_create(
    path: &Path,
    create: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Result<String, String> {
    read_or_create_mode(path, 0o600, create)
}

/// [`read_or_create`] for a file others may read (`mode`, e.g. 0o644 for a certificate).
pub(crate) fn read_or_create_mode(
    path: &Path,
    mode: u32,
    create: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => return Ok(text),
        Ok(_) => {
            // An empty file (an older Crest interrupted mid-write): replaced below.
            let _ = std::fs::remove_file(path);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    let bytes = create()?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp.{}.{n}", std::process::id()));
    write_new(&tmp, &bytes, mode)?;
    let linked = std::fs::hard_link(&tmp, path);
    let _ = std::fs::remove_file(&tmp);
    match linked {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(format!("cannot create {}: {e}", path.display())),
    }
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Writes a new file with `mode`, synced.
fn write_new(path: &Path, bytes: &[u8], mode: u32) -> Result<(), String> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options
        .open(path)
        .map_err(|e| format!("cannot create {}: {e}", path.display()))?;
    file.write_all(bytes)
        .and_then(|_| file.sync_all())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_writer_wins_and_files_are_private() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("key");
        let a = read_or_create(&path, || Ok(b"first".to_vec())).unwrap();
        let b = read_or_create(&path, || Ok(b"second".to_vec())).unwrap();
        assert_eq!((a.as_str(), b.as_str()), ("first", "first"));
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        // Concurrent creators all end up with one value.
        let path = dir.path().join("raced");
        let seen: Vec<String> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..8)
                .map(|i| {
                    let path = path.clone();
                    s.spawn(move || {
                        read_or_create(&path, || Ok(format!("v{i}").into_bytes())).unwrap()
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert!(seen.iter().all(|v| v == &seen[0]), "{seen:?}");
        assert!(!dir.path().read_dir().unwrap().any(|e| e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("tmp")));
    }
}
