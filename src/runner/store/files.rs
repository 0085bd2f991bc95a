//! Where a state's files are, and writing a new state beside the old one.
//!
//! The state is found through symlinks once per operation, so the lock, the
//! log and the temporary files sit beside the real file (and a link to it stays
//! a link). The files beside it are named after the state's **whole** file
//! name, so two state files never share them: `plan.json` → `plan.json.lock`,
//! `plan.json.events.jsonl`, temporary files `.plan.json.XXXXXX.tmp`.

use std::ffi::{OsStr, OsString};
use std::fs::{self, File, Metadata};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use tempfile::NamedTempFile;

use super::fault;

/// The suffix of the lock file's name.
pub(super) const LOCK_SUFFIX: &str = ".lock";
/// The suffix of the event log's name.
pub(super) const LOG_SUFFIX: &str = ".events.jsonl";
/// How a temporary file's name ends.
const TEMP_SUFFIX: &str = ".tmp";
/// How many random characters a temporary file's name has.
const TEMP_RANDOM: usize = 6;

/// A state file and the files beside it.
#[derive(Clone, Debug)]
pub(super) struct Files {
    /// The real state file: symlinks followed, its directory canonical.
    pub state: PathBuf,
    /// The directory of the real state file.
    pub dir: PathBuf,
    /// The real state file's name.
    pub name: OsString,
    /// The lock file.
    pub lock: PathBuf,
    /// The event log.
    pub log: PathBuf,
}

impl Files {
    /// Follows `given` through symlinks (the target need not exist yet) and
    /// names the files beside the real state.
    pub fn resolve(given: &Path) -> io::Result<Files> {
        let mut path = given.to_path_buf();
        let mut hops = 0;
        while fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
            hops += 1;
            if hops > 40 {
                return Err(io::Error::other("too many levels of symbolic links"));
            }
            let target = fs::read_link(&path)?;
            // A relative target is relative to the link's directory.
            path = match path.parent() {
                Some(dir) => dir.join(target),
                None => target,
            };
        }
        let name = path
            .file_name()
            .ok_or_else(|| io::Error::other("not a file name"))?
            .to_os_string();
        let dir = match path.parent() {
            Some(dir) if !dir.as_os_str().is_empty() => dir,
            _ => Path::new("."),
        };
        let dir = fs::canonicalize(dir)?;
        Ok(Files {
            state: dir.join(&name),
            lock: dir.join(suffixed(&name, LOCK_SUFFIX)),
            log: dir.join(suffixed(&name, LOG_SUFFIX)),
            dir,
            name,
        })
    }

    /// The event log as planc 0.1 named it: `plan.json` → `plan.events.jsonl`
    /// — unless a state `plan` is beside it, which shared that log.
    pub fn legacy_log(&self) -> Option<PathBuf> {
        let stem = self.name.to_str()?.strip_suffix(".json")?;
        if stem.is_empty() || self.dir.join(stem).exists() {
            return None;
        }
        Some(self.dir.join(format!("{stem}{LOG_SUFFIX}")))
    }

    /// Writes `bytes` to a new temporary file beside the state, with the
    /// permissions (and, where allowed, the owner) of the file it replaces,
    /// `like` (none: the default for new files),
    /// and syncs it. Dropping the file deletes it: a failed change leaves
    /// nothing behind but what a killed writer leaves, which
    /// [`Files::remove_stale_temps`] removes.
    /// `fault` names the fault-injection point of this write (see [`fault`]).
    pub fn write_temp(
        &self,
        bytes: &[u8],
        like: Option<&Metadata>,
        fault: Option<&str>,
    ) -> io::Result<NamedTempFile> {
        let mut prefix = OsString::from(".");
        prefix.push(&self.name);
        prefix.push(".");
        let mut builder = tempfile::Builder::new();
        builder
            .prefix(&prefix)
            .suffix(TEMP_SUFFIX)
            .rand_bytes(TEMP_RANDOM);
        #[cfg(unix)]
        if like.is_none() {
            // What `File::create` would give: 0666 less the umask.
            use std::os::unix::fs::PermissionsExt;
            builder.permissions(std::fs::Permissions::from_mode(0o666));
        }
        let mut file = builder.tempfile_in(&self.dir)?;
        if let Some(like) = like {
            // Best effort: only root may give a file to someone else. Before
            // the mode, which a change of owner may clear bits of.
            #[cfg(unix)]
            {
                use std::os::unix::fs::MetadataExt;
                let _ =
                    std::os::unix::fs::fchown(file.as_file(), Some(like.uid()), Some(like.gid()));
            }
            file.as_file().set_permissions(like.permissions())?;
        }
        if let Some(point) = fault.filter(|p| fault::armed(p)) {
            file.write_all(&bytes[..bytes.len() / 2])?;
            fault::point(point)?;
        }
        file.write_all(bytes)?;
        file.as_file().sync_all()?;
        Ok(file)
    }

    /// Renames `temp` over the state and syncs the directory, so the rename
    /// itself survives a power cut: the commit point of every change.
    pub fn persist(&self, temp: NamedTempFile) -> io::Result<()> {
        self.persist_as(temp, &self.state)
    }

    /// Renames `temp` over `target` (a file beside the state) and syncs the directory.
    pub fn persist_as(&self, temp: NamedTempFile, target: &Path) -> io::Result<()> {
        temp.persist(target).map_err(|e| e.error)?;
        self.sync_dir();
        Ok(())
    }

    /// Makes renames in the directory durable (not every platform can open
    /// a directory; there, the rename is as durable as the platform makes it).
    pub fn sync_dir(&self) {
        if let Ok(dir) = File::open(&self.dir) {
            let _ = dir.sync_all();
        }
    }

    /// Removes the temporary files of writers that were killed before
    /// renaming them. Only the lock holder calls this, and every live
    /// writer's temporary file exists only while it holds the lock, so each
    /// one found is stale. Best effort: a file left over is harmless.
    pub fn remove_stale_temps(&self) {
        let Ok(entries) = fs::read_dir(&self.dir) else {
            return;
        };
        for entry in entries.flatten() {
            if self.is_temp_name(&entry.file_name()) {
                let _ = fs::remove_file(entry.path());
            }
        }
    }

    /// Whether `name` is `.NAME.XXXXXX.tmp` for this state's name.
    fn is_temp_name(&self, name: &OsStr) -> bool {
        let name = name.as_encoded_bytes();
        let Some(rest) = name.strip_prefix(b".") else {
            return false;
        };
        let Some(rest) = rest.strip_prefix(self.name.as_encoded_bytes()) else {
            return false;
        };
        let Some(rest) = rest.strip_prefix(b".") else {
            return false;
        };
        let Some(random) = rest.strip_suffix(TEMP_SUFFIX.as_bytes()) else {
            return false;
        };
        random.len() == TEMP_RANDOM && random.iter().all(u8::is_ascii_alphanumeric)
    }
}

/// `name` followed by `suffix`.
pub(super) fn suffixed(name: &OsStr, suffix: &str) -> OsString {
    let mut name = name.to_os_string();
    name.push(suffix);
    name
}

/// Whether the caller may write the state file. A file without any write
/// permission counts as read-only even for root (who could write it anyway),
/// since replacing it would silently undo a `chmod a-w`.
pub(super) fn is_writable(path: &Path, metadata: &Metadata) -> bool {
    if metadata.permissions().readonly() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let Ok(path) = std::ffi::CString::new(path.as_os_str().as_bytes()) else {
            return true;
        };
        // SAFETY: `path` is a valid NUL-terminated string for the call.
        unsafe { libc::access(path.as_ptr(), libc::W_OK) == 0 }
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn files(name: &str) -> Files {
        Files {
            state: PathBuf::from("/d").join(name),
            dir: PathBuf::from("/d"),
            name: OsString::from(name),
            lock: PathBuf::new(),
            log: PathBuf::new(),
        }
    }

    #[test]
    fn temporary_names_belong_to_one_state() {
        let f = files("plan.json");
        assert!(f.is_temp_name(OsStr::new(".plan.json.a1B2c3.tmp")));
        assert!(!f.is_temp_name(OsStr::new(".plan.json.tmp")));
        assert!(!f.is_temp_name(OsStr::new(".plan.json.a1B2c.tmp")));
        assert!(!f.is_temp_name(OsStr::new(".plan.json.a1-2c3.tmp")));
        assert!(!f.is_temp_name(OsStr::new("plan.json.a1B2c3.tmp")));
        // Another state's temporary file: `plan` is a prefix of `plan.json`.
        assert!(!files("plan").is_temp_name(OsStr::new(".plan.json.a1B2c3.tmp")));
        assert!(!files("plan.json").is_temp_name(OsStr::new(".plan.json.x.a1B2c3.tmp")));
    }

    #[test]
    fn names_beside_the_state_use_its_whole_name() {
        assert_eq!(suffixed(OsStr::new("plan"), LOCK_SUFFIX), "plan.lock");
        assert_eq!(
            suffixed(OsStr::new("plan.json"), LOCK_SUFFIX),
            "plan.json.lock"
        );
        assert_eq!(
            suffixed(OsStr::new("plan.json"), LOG_SUFFIX),
            "plan.json.events.jsonl"
        );
    }
}
