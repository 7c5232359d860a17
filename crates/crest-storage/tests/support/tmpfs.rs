//! A small tmpfs to fill up, for the full-disk tests of the store alone
//! (`crest-storage/tests/disk_faults.rs`) and of the server (`crest/tests/disk_faults.rs`).
//! Mounting needs root: the tests fail, rather than skip, without it.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of `size` mounted on a fresh directory, owner-only (0700) as a data dir must be;
/// unmounted (and the directory removed) on drop.
pub(crate) struct Tmpfs {
    dir: tempfile::TempDir,
}

impl Tmpfs {
    pub(crate) fn mount(size: &str) -> Tmpfs {
        let dir = tempfile::tempdir().expect("tempdir");
        let out = Command::new("mount")
            .args([
                "-t",
                "tmpfs",
                "-o",
                &format!("size={size},mode=0700"),
                "tmpfs",
            ])
            .arg(dir.path())
            .output()
            .expect("run mount");
        assert!(
            out.status.success(),
            "this test mounts a tmpfs to fill it up and needs root for it: mount failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        Tmpfs { dir }
    }

    pub(crate) fn path(&self) -> &Path {
        self.dir.path()
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let ok = Command::new("umount")
            .arg(self.dir.path())
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            // Something still has a file open there: detach it now, it goes when that ends.
            let _ = Command::new("umount")
                .arg("-l")
                .arg(self.dir.path())
                .status();
        }
    }
}

/// Fills the filesystem of `dir` with `dir/filler` until a write fails; the filler's path.
pub(crate) fn fill(dir: &Path) -> PathBuf {
    let path = dir.join("filler");
    let mut f = std::fs::File::create(&path).expect("filler");
    let chunk = vec![0xa5u8; 16 << 10];
    for _ in 0..100_000 {
        if f.write_all(&chunk).and_then(|_| f.flush()).is_err() {
            return path;
        }
    }
    panic!("the filesystem never filled up");
}
