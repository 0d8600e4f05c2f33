//! Reading a tier's settings file as an attacker may have laid it out: a regular file only
//! (never a FIFO that would hang the hook, a device, a directory), at most [`MAX_SETTINGS`]
//! bytes, and — for a workspace's own files — never through a symlink; plus the [`Stamp`] that
//! tells a cache the file changed.

use std::io::Read as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::Path;

/// The largest settings file read (a permissions list is a few kilobytes).
pub const MAX_SETTINGS: u64 = 256 * 1024;

/// How old a file's last change must be before its stamp alone says it is unchanged.
const RACY_SECS: i64 = 2;

/// Whether the file's last path component may be a symlink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// The user's own file: dotfile managers link it; the target must still be a regular file.
    Follow,
    /// A workspace's file: a cloned repository may link it anywhere (`/dev/zero`, a FIFO,
    /// another user's file), so a symlink is refused.
    Refuse,
}

/// Why a settings file cannot be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{0}: a symlink, refused (a workspace's settings file must be a regular file)")]
    Symlink(String),
    #[error("{0}: not a regular file, refused")]
    NotRegular(String),
    #[error("{0}: larger than {MAX_SETTINGS} bytes, refused")]
    TooLarge(String),
    #[error("{0}: not UTF-8")]
    NotText(String),
    #[error("{0}: has other hard links, refused (a workspace's settings file is its own file)")]
    HardLinked(String),
    #[error("{0}: its directory is a symlink, refused")]
    LinkedDirectory(String),
}

/// What a file looked like when read: device, inode, size, modification and change times.
/// Editors that replace a file change the inode; an append changes size and times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    len: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl Stamp {
    /// The stamp of `path` itself (a symlink's own, not its target's, when `links` refuses
    /// them); `None` when nothing is there.
    pub fn of(path: &Path, links: Links) -> Option<Stamp> {
        let meta = match links {
            Links::Follow => std::fs::metadata(path),
            Links::Refuse => std::fs::symlink_metadata(path),
        };
        meta.ok().map(|m| Stamp::from_meta(&m))
    }

    /// Whether the file changed so recently that another write in the same clock tick could
    /// leave every field as it is (same size, in place): such a stamp proves nothing, and a
    /// cache must read the file again ("racily clean", as git's index calls it).
    pub fn is_recent(&self, now: std::time::SystemTime) -> bool {
        let now = now.duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs());
        let now = i64::try_from(now).unwrap_or(i64::MAX);
        now.saturating_sub(self.mtime.0.max(self.ctime.0)) < RACY_SECS
    }

    fn from_meta(m: &std::fs::Metadata) -> Stamp {
        Stamp {
            dev: m.dev(),
            ino: m.ino(),
            len: m.len(),
            mtime: (m.mtime(), m.mtime_nsec()),
            ctime: (m.ctime(), m.ctime_nsec()),
        }
    }
}

/// The text of `path`; `Ok(None)` when there is no file there.
pub fn read(path: &Path, links: Links) -> Result<Option<String>, ReadError> {
    let name = || path.display().to_string();
    // A workspace's `.portcullis` linked elsewhere would read another directory's files.
    let parent = path.parent().filter(|_| links == Links::Refuse);
    if parent.is_some_and(is_symlink) {
        return Err(ReadError::LinkedDirectory(name()));
    }
    match std::fs::symlink_metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(ReadError::Io { path: name(), source }),
        Ok(m) if m.file_type().is_symlink() && links == Links::Refuse => {
            return Err(ReadError::Symlink(name()))
        }
        Ok(_) => {}
    }
    // The look above and the open below are two moments: the open itself refuses a symlink
    // and does not wait on a FIFO swapped in between, and the open file is checked again.
    let mut file = match open(path, links) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(_) if links == Links::Refuse && is_symlink(path) => return Err(ReadError::Symlink(name())),
        Err(source) => return Err(ReadError::Io { path: name(), source }),
    };
    let meta = file.metadata().map_err(|source| ReadError::Io { path: name(), source })?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular(name()));
    }
    if meta.len() > MAX_SETTINGS {
        return Err(ReadError::TooLarge(name()));
    }
    // A hard link makes any file of the user's (a credentials file the policy keeps from the
    // agent) read here, and its text could come back in a parse error: a workspace's settings
    // file has no other name.
    if links == Links::Refuse && meta.nlink() != 1 {
        return Err(ReadError::HardLinked(name()));
    }
    let mut bytes = Vec::new();
    (&mut file)
        .take(MAX_SETTINGS + 1)
        .read_to_end(&mut bytes)
        .map_err(|source| ReadError::Io { path: name(), source })?;
    if bytes.len() as u64 > MAX_SETTINGS {
        return Err(ReadError::TooLarge(name()));
    }
    String::from_utf8(bytes).map(Some).map_err(|_| ReadError::NotText(name()))
}

fn is_symlink(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

#[cfg(target_os = "linux")]
fn open(path: &Path, links: Links) -> std::io::Result<std::fs::File> {
    use rustix::fs::OFlags;
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut flags = OFlags::NONBLOCK;
    if links == Links::Refuse {
        flags |= OFlags::NOFOLLOW;
    }
    // `custom_flags` takes the C int; the bits are the kernel's own.
    #[allow(clippy::cast_possible_wrap)]
    let bits = flags.bits() as i32;
    std::fs::OpenOptions::new().read(true).custom_flags(bits).open(path)
}

/// Elsewhere the open follows links and may wait on a FIFO swapped in after the look above.
#[cfg(not(target_os = "linux"))]
fn open(path: &Path, _links: Links) -> std::io::Result<std::fs::File> {
    std::fs::File::open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_bounded_regular_file_is_read_and_a_workspace_file_never_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::write(d.join("ok.yaml"), "permissions: {}\n").unwrap();
        std::fs::write(d.join("huge.yaml"), vec![b'#'; MAX_SETTINGS as usize + 1]).unwrap();
        std::fs::write(d.join("bin.yaml"), [0xff, 0xfe]).unwrap();
        std::os::unix::fs::symlink(d.join("ok.yaml"), d.join("link.yaml")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("zero.yaml")).unwrap();
        std::fs::create_dir(d.join("dir.yaml")).unwrap();
        std::fs::write(d.join("secret"), "aws_secret_access_key: x\n").unwrap();
        std::fs::hard_link(d.join("secret"), d.join("hard.yaml")).unwrap();
        std::os::unix::fs::symlink(d, d.join("linked")).unwrap();
        let fifo = std::process::Command::new("mkfifo").arg(d.join("fifo.yaml")).status().unwrap();
        assert!(fifo.success());

        let ok = |name: &str, links| read(&d.join(name), links).map_err(|e| e.to_string());
        assert_eq!(ok("ok.yaml", Links::Refuse).unwrap().as_deref(), Some("permissions: {}\n"));
        assert_eq!(ok("absent.yaml", Links::Refuse).unwrap(), None);
        assert_eq!(ok("link.yaml", Links::Follow).unwrap().as_deref(), Some("permissions: {}\n"));
        // (file, links, what the refusal says)
        let refused = [
            ("link.yaml", Links::Refuse, "symlink"),
            ("zero.yaml", Links::Refuse, "symlink"),
            ("zero.yaml", Links::Follow, "not a regular file"),
            ("fifo.yaml", Links::Refuse, "not a regular file"),
            ("fifo.yaml", Links::Follow, "not a regular file"),
            ("dir.yaml", Links::Follow, "not a regular file"),
            ("huge.yaml", Links::Follow, "larger than"),
            ("bin.yaml", Links::Follow, "not UTF-8"),
            ("hard.yaml", Links::Refuse, "hard links"),
            ("linked/ok.yaml", Links::Refuse, "directory is a symlink"),
        ];
        for (name, links, says) in refused {
            let err = ok(name, links).expect_err(name);
            assert!(err.contains(says), "{name} {links:?}: {err}");
        }
    }

    #[test]
    fn a_stamp_changes_when_the_file_is_replaced_or_grows() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("s.yaml");
        assert_eq!(Stamp::of(&f, Links::Refuse), None);
        std::fs::write(&f, "a").unwrap();
        let first = Stamp::of(&f, Links::Refuse).unwrap();
        assert_eq!(Stamp::of(&f, Links::Refuse), Some(first));
        std::fs::write(f.with_extension("new"), "b").unwrap();
        std::fs::rename(f.with_extension("new"), &f).unwrap();
        let replaced = Stamp::of(&f, Links::Refuse).unwrap();
        assert_ne!(first, replaced, "same size, new inode");
        std::fs::write(&f, "bc").unwrap();
        assert_ne!(Stamp::of(&f, Links::Refuse), Some(replaced));
        let now = std::time::SystemTime::now();
        assert!(replaced.is_recent(now), "just written: racily clean");
        assert!(!replaced.is_recent(now + std::time::Duration::from_secs(3)));
    }
}
