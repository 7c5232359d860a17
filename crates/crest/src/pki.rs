//! The files of the pki dir (`--pki-dir`, default DATA_DIR/pki): created on first use, owner-only,
//! and safe to share between replicas that start at the same moment. Also the owner-only
//! directories the data dir and the pki dir are.

use std::path::Path;

/// Creates `dir` (and its missing parents) owner-only (0700), as etcd does its data dir: it holds
/// every object, Secrets included, or the admin's credentials. One that already exists and that
/// others may enter or read is narrowed to 0700, with a log line.
pub(crate) fn private_dir(dir: &Path, what: &str) -> Result<(), String> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(dir)
        .map_err(|e| format!("cannot create the {what} {}: {e}", dir.display()))?;
    narrow(dir, 0o700, what)
}

/// Narrows the permissions of `path` to `mode` when it allows more, with a log line.
fn narrow(path: &Path, mode: u32, what: &str) -> Result<(), String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let was = std::fs::metadata(path)
            .map_err(|e| format!("cannot read {}: {e}", path.display()))?
            .permissions()
            .mode()
            & 0o777;
        if was & !mode != 0 {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode))
                .map_err(|e| format!("cannot narrow the permissions of {}: {e}", path.display()))?;
            tracing::warn!(
                path = %path.display(),
                was = format!("{was:04o}"),
                now = format!("{mode:04o}"),
                "the {what} was open to others; narrowed its permissions"
            );
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode, what);
    Ok(())
}

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

/// [`read_or_create`] for a file others may read (`mode`, e.g. 0o644 for a certificate). An
/// existing file that allows more than `mode` (an older Crest's, or one copied in) is narrowed.
pub(crate) fn read_or_create_mode(
    path: &Path,
    mode: u32,
    create: impl FnOnce() -> Result<Vec<u8>, String>,
) -> Result<String, String> {
    match std::fs::read_to_string(path) {
        Ok(text) if !text.trim().is_empty() => {
            narrow(path, mode, "file")?;
            return Ok(text);
        }
        Ok(_) => {
            // An empty file (an older Crest interrupted mid-write): replaced below.
            let _ = std::fs::remove_file(path);
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    }
    let bytes = create()?;
    if let Some(dir) = path.parent() {
        private_dir(dir, "pki dir")?;
    }
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let tmp = path.with_extension(format!("tmp.{}.{n}", std::process::id()));
    // A leftover of a crashed process that had this pid (create_new below keeps a file someone
    // else made, with their permissions, from being used).
    let _ = std::fs::remove_file(&tmp);
    // A file that could not be written whole (a full disk) does not stay behind.
    if let Err(e) = write_new(&tmp, &bytes, mode) {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot create {}: {e}", path.display()));
    }
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
pub(crate) fn write_new(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write_new_file(path, bytes, mode)?.sync_all()
}

/// Writes a new file with `mode`, not synced: for what every start writes again (the
/// kubeconfig), which a power loss may take but the next start puts back.
pub(crate) fn write_new_unsynced(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<()> {
    write_new_file(path, bytes, mode).map(drop)
}

fn write_new_file(path: &Path, bytes: &[u8], mode: u32) -> std::io::Result<std::fs::File> {
    use std::io::Write;
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    Ok(file)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn wider_files_and_dirs_are_narrowed() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        let set = |p: &Path, m: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).unwrap()
        };
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a").join("pki");
        private_dir(&dir, "pki dir").unwrap();
        assert_eq!(mode(&dir), 0o700);
        set(&dir, 0o755);
        private_dir(&dir, "pki dir").unwrap();
        assert_eq!(mode(&dir), 0o700);
        let key = dir.join("key");
        std::fs::write(&key, "secret").unwrap();
        set(&key, 0o644);
        assert_eq!(
            read_or_create(&key, || Ok(b"new".to_vec())).unwrap(),
            "secret"
        );
        assert_eq!(mode(&key), 0o600);
        // A certificate may stay readable, but not writable by others.
        let cert = dir.join("cert");
        std::fs::write(&cert, "cert").unwrap();
        set(&cert, 0o666);
        read_or_create_mode(&cert, 0o644, || Ok(b"new".to_vec())).unwrap();
        assert_eq!(mode(&cert), 0o644);
    }

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
