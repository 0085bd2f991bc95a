//! Reading imports from the file system, inside a project root.
//!
//! A plan checked in CI may come from anyone: an import must not read
//! `/etc/shadow`, `/proc/self/environ` or a symbolic link to them and show
//! their text in a diagnostic. So an import stays inside the project root —
//! on its path as written, and again after symbolic links are followed —
//! names a `.plan` file, and is read within [`Bounds::FILES`] (no pipes, no
//! devices, at most `MAX_FILE_BYTES`).

use std::path::{Path, PathBuf};

use super::{normalise, ImportError, Loader};
use crate::read::{self, Bounds, STDIN_NAME};

/// Reads imports from the file system.
#[derive(Clone, Debug)]
pub struct FsLoader {
    /// Where imports must stay; `None` lets them read any file.
    root: Option<Root>,
}

/// A project root, as written and as it really is.
#[derive(Clone, Debug)]
struct Root {
    /// Absolute, `.` and `..` taken away: an import whose path leaves it is
    /// refused before the file system is asked anything.
    written: PathBuf,
    /// With symbolic links followed: where the imported file really is must
    /// be inside it.
    real: PathBuf,
}

impl FsLoader {
    /// Imports stay inside the directory `root`.
    pub fn within(root: &Path) -> FsLoader {
        let written = normalise(&std::path::absolute(root).unwrap_or_else(|_| root.to_owned()));
        // A root that does not exist holds no file: every import is refused.
        let real = std::fs::canonicalize(root).unwrap_or_else(|_| written.clone());
        FsLoader {
            root: Some(Root { written, real }),
        }
    }

    /// Imports may read any `.plan` file.
    pub fn anywhere() -> FsLoader {
        FsLoader { root: None }
    }

    /// The default for a file shown as `name`: imports stay inside its
    /// directory (for standard input, the current directory).
    pub fn for_file(name: &str) -> FsLoader {
        let directory = if name == STDIN_NAME {
            None
        } else {
            Path::new(name).parent()
        };
        match directory {
            Some(directory) if !directory.as_os_str().is_empty() => FsLoader::within(directory),
            _ => FsLoader::within(Path::new(".")),
        }
    }
}

impl Loader for FsLoader {
    fn locate(&self, path: &Path) -> Result<PathBuf, ImportError> {
        if let Some(root) = &self.root {
            let written = normalise(&std::path::absolute(path)?);
            if !written.starts_with(&root.written) {
                return Err(ImportError::OutsideRoot);
            }
        }
        let real = std::fs::canonicalize(path)?;
        if let Some(root) = &self.root {
            if !real.starts_with(&root.real) {
                return Err(ImportError::OutsideRoot);
            }
        }
        // `lib.plan` may be a link, but only to a `.plan` file.
        if real.extension().is_none_or(|e| e != "plan") {
            return Err(ImportError::NotPlan);
        }
        Ok(real)
    }

    fn load(&self, located: &Path) -> Result<String, ImportError> {
        let bytes = read::read_file(located, Bounds::FILES)?;
        // A NUL byte is no part of a plan, and says the file is binary:
        // refused rather than shown in syntax errors.
        if let Some(offset) = bytes.iter().position(|&b| b == 0) {
            return Err(ImportError::NotText { offset });
        }
        String::from_utf8(bytes.to_vec()).map_err(|e| ImportError::NotText {
            offset: e.utf8_error().valid_up_to(),
        })
    }
}
