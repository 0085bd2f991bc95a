use std::path::{Path, PathBuf};

use super::{read_file, read_stream, read_to_string, Bounds, FileKind, ReadError};

/// A fresh directory for one test, removed at the end.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let dir = std::env::temp_dir().join(format!("planc-read-{tag}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn small(limit: usize) -> Bounds {
    Bounds {
        limit,
        pipes: false,
    }
}

#[test]
fn a_file_is_read_whole_whatever_its_metadata_says() {
    let dir = Dir::new("whole");
    let empty = dir.0.join("empty.plan");
    std::fs::write(&empty, "").unwrap();
    assert_eq!(&*read_file(&empty, Bounds::FILES).unwrap(), b"");
    let text = "plan p {\n    goal \"é\"\n}\n".repeat(1000);
    let full = dir.0.join("full.plan");
    std::fs::write(&full, &text).unwrap();
    assert_eq!(&*read_file(&full, Bounds::FILES).unwrap(), text.as_bytes());
    assert_eq!(read_to_string(&full, Bounds::FILES).unwrap(), text);
    // Large enough to be read in two halves.
    let large = format!("#{}", text.repeat(120));
    assert!(large.len() > 2 * super::PARALLEL_READ);
    std::fs::write(&full, &large).unwrap();
    assert_eq!(&*read_file(&full, Bounds::FILES).unwrap(), large.as_bytes());
    // Files whose metadata gives no size, such as those of /proc.
    #[cfg(target_os = "linux")]
    {
        let expected = std::fs::read("/proc/self/cmdline").unwrap();
        assert!(!expected.is_empty());
        assert_eq!(std::fs::metadata("/proc/self/cmdline").unwrap().len(), 0);
        // The same process, so the same command line.
        let read = read_file(Path::new("/proc/self/cmdline"), Bounds::FILES).unwrap();
        assert_eq!(&*read, &expected[..]);
    }
    assert!(matches!(
        read_file(&dir.0.join("missing.plan"), Bounds::FILES),
        Err(ReadError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound
    ));
}

#[test]
fn a_file_over_the_limit_is_refused() {
    let dir = Dir::new("limit");
    let path = dir.0.join("big.plan");
    std::fs::write(&path, "x".repeat(100)).unwrap();
    assert_eq!(read_file(&path, small(100)).unwrap().len(), 100);
    let error = read_file(&path, small(99)).unwrap_err();
    assert!(matches!(error, ReadError::TooLarge { limit: 99 }));
    assert_eq!(
        error.to_string(),
        "it is larger than 99 bytes, the most planc reads from one file"
    );
    // A file whose metadata says nothing is stopped while it is read.
    #[cfg(target_os = "linux")]
    assert!(matches!(
        read_file(Path::new("/proc/self/cmdline"), small(2)),
        Err(ReadError::TooLarge { limit: 2 })
    ));
}

#[test]
fn a_stream_is_read_up_to_the_limit() {
    assert_eq!(read_stream(&b"abc"[..], 3).unwrap(), b"abc");
    assert!(matches!(
        read_stream(&b"abcd"[..], 3),
        Err(ReadError::TooLarge { limit: 3 })
    ));
    // An endless stream ends at the limit.
    assert!(matches!(
        read_stream(std::io::repeat(0), 1 << 20),
        Err(ReadError::TooLarge { .. })
    ));
}

#[test]
fn directories_and_devices_are_refused_before_they_are_read() {
    let dir = Dir::new("kinds");
    let error = read_file(&dir.0, Bounds::FILES_AND_PIPES).unwrap_err();
    assert!(matches!(error, ReadError::NotAFile(FileKind::Directory)));
    assert_eq!(error.to_string(), "it is a directory, not a file");
    #[cfg(unix)]
    {
        let error = read_file(Path::new("/dev/zero"), Bounds::FILES_AND_PIPES).unwrap_err();
        assert!(matches!(error, ReadError::NotAFile(FileKind::Device)));
        assert_eq!(error.to_string(), "it is a device, not a file");
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c_path = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: `c_path` is a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

#[cfg(unix)]
#[test]
fn a_pipe_is_read_whole_when_pipes_are_admitted() {
    let dir = Dir::new("pipe");
    let pipe = dir.0.join("plan.fifo");
    mkfifo(&pipe);
    let text = "plan p {\n    goal \"g\"\n    task a \"A\"\n}\n".repeat(20_000);
    let writer = {
        let (pipe, text) = (pipe.clone(), text.clone());
        std::thread::spawn(move || std::fs::write(pipe, text).unwrap())
    };
    let read = read_file(&pipe, Bounds::FILES_AND_PIPES).unwrap();
    writer.join().unwrap();
    assert_eq!(&*read, text.as_bytes());

    // Bounded like a file.
    let writer = {
        let pipe = pipe.clone();
        // The write fails when the reader stops at the limit.
        std::thread::spawn(move || {
            let _ = std::fs::write(pipe, "x".repeat(1 << 20));
        })
    };
    let error = read_file(
        &pipe,
        Bounds {
            limit: 1000,
            pipes: true,
        },
    )
    .unwrap_err();
    writer.join().unwrap();
    assert!(matches!(error, ReadError::TooLarge { limit: 1000 }));
}

#[cfg(unix)]
#[test]
fn a_pipe_is_refused_without_opening_it_when_only_files_are_read() {
    let dir = Dir::new("fifo");
    let pipe = dir.0.join("lib.plan");
    mkfifo(&pipe);
    // Nothing writes: opening it to read would wait for ever.
    let error = read_file(&pipe, Bounds::FILES).unwrap_err();
    assert!(matches!(error, ReadError::NotAFile(FileKind::Pipe)));
    assert_eq!(error.to_string(), "it is a pipe (FIFO), not a file");
}
