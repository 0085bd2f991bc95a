//! A tiny builder that runs the real `planc` binary, in the spirit of
//! casey/just's `Test`: every test reads like a usage example.

#![allow(dead_code)]

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The repository root: tests run there so paths print as `examples/…`.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// One run of `planc`.
pub struct Test {
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    stdin_file: Option<PathBuf>,
    dir: PathBuf,
}

/// What a run printed and how it ended.
#[derive(Debug)]
pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Test {
    /// `planc ARGS…`, run in the repository root.
    pub fn new<I, S>(args: I) -> Test
    where
        I: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        Test {
            args: args.into_iter().map(|a| a.as_ref().to_owned()).collect(),
            stdin: None,
            stdin_file: None,
            dir: root(),
        }
    }

    /// Feeds `input` on standard input.
    pub fn stdin(mut self, input: impl Into<Vec<u8>>) -> Test {
        self.stdin = Some(input.into());
        self
    }

    /// Opens `path` as standard input (`planc check - </dev/zero`).
    pub fn stdin_file(mut self, path: &Path) -> Test {
        self.stdin_file = Some(path.to_owned());
        self
    }

    /// Runs in `dir` instead of the repository root.
    pub fn current_dir(mut self, dir: &Path) -> Test {
        self.dir = dir.to_owned();
        self
    }

    /// Runs the command and returns what it printed.
    pub fn run(self) -> Output {
        let mut child = Command::new(env!("CARGO_BIN_EXE_planc"))
            .args(&self.args)
            .current_dir(&self.dir)
            .env("NO_COLOR", "1")
            .env_remove("CLICOLOR_FORCE")
            .stdin(match (&self.stdin, &self.stdin_file) {
                (Some(_), _) => Stdio::piped(),
                (None, Some(path)) => Stdio::from(std::fs::File::open(path).expect("stdin file")),
                (None, None) => Stdio::null(),
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("planc starts");
        if let Some(input) = self.stdin {
            let mut stdin = child.stdin.take().expect("stdin is piped");
            // A write error means planc stopped reading: its output says why.
            let _ = stdin.write_all(&input);
        }
        let output = child.wait_with_output().expect("planc finishes");
        Output {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        }
    }

    /// Runs and asserts the exit code.
    pub fn expect_code(self, code: i32) -> Output {
        let output = self.run();
        assert_eq!(
            output.code, code,
            "exit code\nstdout:\n{}\nstderr:\n{}",
            output.stdout, output.stderr
        );
        output
    }
}

/// The files of a directory with an extension, sorted by name.
pub fn files(dir: &str, extensions: &[&str]) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(root().join(dir))
        .expect("directory exists")
        .filter_map(|entry| {
            let path = entry.ok()?.path();
            let ext = path.extension()?.to_str()?;
            let name = path.file_name()?.to_str()?;
            extensions.contains(&ext).then(|| format!("{dir}/{name}"))
        })
        .collect();
    files.sort();
    files
}

/// A fresh temporary directory, removed when dropped.
pub struct TempDir(PathBuf);

impl TempDir {
    /// Creates a unique directory under the system temp dir.
    pub fn new(tag: &str) -> TempDir {
        let unique = format!(
            "planc-test-{tag}-{}-{}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos())
                .unwrap_or(0)
        );
        let path = std::env::temp_dir().join(unique);
        std::fs::create_dir_all(&path).expect("temp dir");
        TempDir(path)
    }

    /// The directory's path.
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
