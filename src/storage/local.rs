//! Objects on this machine's disk (`file://DIR`): object_store's `LocalFileSystem`,
//! plus the one thing it cannot do, take in a file that is already on that disk by a
//! hard link instead of a copy.
//!
//! An edit's outputs are written in the data dir's scratch space, which is usually on
//! the same disk as the files, so storing one writes nothing again: no second inode,
//! no bytes read back and written out. `extract-frames` stores a file per frame, and
//! on ext4 a new inode is the dearest part of a small file (storing 125 frames:
//! 18–35 ms → 13–17 ms). The object and the scratch file share the bytes until the scratch
//! space is removed; nothing writes to an output once it is made, and removing
//! either name leaves the other whole.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use object_store::local::LocalFileSystem;
use object_store::path::Path as ObjectPath;

use crate::storage::error::StorageError;

/// The object store for local files under `root`, which is created if missing.
pub fn local(root: &Path) -> Result<Arc<LocalFileSystem>, StorageError> {
    std::fs::create_dir_all(root)?;
    let store = LocalFileSystem::new_with_prefix(root)?
        // Deleting an edit's outputs should not leave its empty directories behind.
        .with_automatic_cleanup(true);
    Ok(Arc::new(store))
}

/// The directory a `file://DIR` storage URL names.
pub(super) fn root_of(url: &str) -> Option<&Path> {
    url.strip_prefix("file://").map(Path::new)
}

/// Puts the file at `path` under `location` by linking it in; `Ok(false)` when it is on
/// another disk than the store, and has to be copied.
pub(super) async fn link_in(
    store: &LocalFileSystem,
    location: &ObjectPath,
    path: &Path,
) -> Result<bool, StorageError> {
    let to = store.path_to_filesystem(location)?;
    let from = path.to_owned();
    let linked = tokio::task::spawn_blocking(move || link_into_place(&from, &to))
        .await
        .map_err(std::io::Error::other)?;
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.raw_os_error() == Some(libc::EXDEV) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Links `from` in at `to`, replacing what is there at once: the link is made under a
/// staging name (`<to>#<n>`, which the store's listings skip, as its own uploads'),
/// then renamed into place, so a reader sees the old object or the new, never none.
fn link_into_place(from: &Path, to: &Path) -> std::io::Result<()> {
    let staged = |n: u32| {
        let mut name = to.as_os_str().to_owned();
        name.push(format!("#{n}"));
        PathBuf::from(name)
    };
    let (mut n, mut made_dirs) = (0, 0);
    loop {
        let staging = staged(n);
        match std::fs::hard_link(from, &staging) {
            Ok(()) => {
                return std::fs::rename(&staging, to).inspect_err(|_| {
                    let _ = std::fs::remove_file(&staging);
                })
            }
            // Another put of the same key at the same moment: take the next name.
            Err(e) if e.kind() == ErrorKind::AlreadyExists => n += 1,
            // The object's directory is made on its first file (and made again should
            // a delete's clean-up of empty directories take it at that moment).
            Err(e) if e.kind() == ErrorKind::NotFound && from.exists() && made_dirs < 3 => {
                let parent = to.parent().ok_or(e)?;
                std::fs::create_dir_all(parent)?;
                made_dirs += 1;
            }
            Err(e) => return Err(e),
        }
    }
}

/// Bytes free for unprivileged users on the file system holding `path`; `None` when
/// it cannot be read (a path that does not exist).
// The statvfs fields are u64 here and narrower on other platforms.
#[allow(clippy::useless_conversion)]
pub fn free_disk_bytes(path: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c_path = std::ffi::CString::new(path.as_os_str().as_bytes()).ok()?;
    let mut stat: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: a valid NUL-terminated path and a statvfs struct to fill.
    if unsafe { libc::statvfs(c_path.as_ptr(), &mut stat) } != 0 {
        return None;
    }
    Some(u64::from(stat.f_bavail).saturating_mul(u64::from(stat.f_frsize)))
}
