//! Reading files with bounds: what a path names is checked before it is
//! opened, and at most a limit of bytes is read. Every file planc reads goes
//! through here — the files named on the command line, standard input,
//! imports and JSON plan documents — so a device never ends a read by
//! filling memory, and opening a FIFO that nothing writes never blocks.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::mem::MaybeUninit;
use std::path::Path;
use std::sync::Arc;

pub use crate::syntax::MAX_FILE_BYTES;

/// The name standard input is shown under.
pub const STDIN_NAME: &str = "<stdin>";

/// What a path names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file.
    File,
    Directory,
    /// A FIFO or a pipe (process substitution names one as `/dev/fd/N`).
    Pipe,
    Socket,
    /// A character or block device (`/dev/zero`, a terminal, a disk).
    Device,
    /// Anything else the system has.
    Other,
}

impl FileKind {
    /// The kind of a file from its metadata.
    pub fn of(file_type: &std::fs::FileType) -> FileKind {
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if file_type.is_fifo() {
                return FileKind::Pipe;
            }
            if file_type.is_socket() {
                return FileKind::Socket;
            }
            if file_type.is_char_device() || file_type.is_block_device() {
                return FileKind::Device;
            }
        }
        if file_type.is_file() {
            FileKind::File
        } else if file_type.is_dir() {
            FileKind::Directory
        } else {
            FileKind::Other
        }
    }

    /// `a directory`, `a pipe`, …: what the file is, in a sentence.
    pub fn describe(self) -> &'static str {
        match self {
            FileKind::File => "a file",
            FileKind::Directory => "a directory",
            FileKind::Pipe => "a pipe (FIFO)",
            FileKind::Socket => "a socket",
            FileKind::Device => "a device",
            FileKind::Other => "not a regular file",
        }
    }
}

/// What may be read, and how much of it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Bounds {
    /// The most bytes read; a longer file is refused.
    pub limit: usize,
    /// Whether a pipe may be read (waiting for its writer, as `cat` does).
    pub pipes: bool,
}

impl Bounds {
    /// Regular files of at most [`MAX_FILE_BYTES`]: for imports and any file
    /// planc finds on its own.
    pub const FILES: Bounds = Bounds {
        limit: MAX_FILE_BYTES,
        pipes: false,
    };

    /// Regular files and pipes of at most [`MAX_FILE_BYTES`]: for a file the
    /// user names on the command line (`planc check <(cat plan.plan)`).
    pub const FILES_AND_PIPES: Bounds = Bounds {
        limit: MAX_FILE_BYTES,
        pipes: true,
    };

    fn admits(self, kind: FileKind) -> bool {
        kind == FileKind::File || (self.pipes && kind == FileKind::Pipe)
    }
}

/// Why a file was not read.
#[derive(Debug)]
pub enum ReadError {
    /// The system refused: no such file, no permission, …
    Io(io::Error),
    /// The path names something that is not read as a file.
    NotAFile(FileKind),
    /// The file holds more than the limit.
    TooLarge { limit: usize },
}

impl std::fmt::Display for ReadError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadError::Io(error) => write!(f, "{error}"),
            ReadError::NotAFile(kind) => write!(f, "it is {}, not a file", kind.describe()),
            ReadError::TooLarge { limit } => write!(
                f,
                "it is larger than {limit} bytes, the most planc reads from one file"
            ),
        }
    }
}

impl std::error::Error for ReadError {}

impl From<io::Error> for ReadError {
    fn from(error: io::Error) -> ReadError {
        ReadError::Io(error)
    }
}

impl From<ReadError> for io::Error {
    fn from(error: ReadError) -> io::Error {
        match error {
            ReadError::Io(error) => error,
            other => io::Error::new(io::ErrorKind::InvalidInput, other.to_string()),
        }
    }
}

/// Reads the file at `path` within `bounds`. The file's kind is looked up
/// before it is opened, and checked again on the opened file (it may have
/// been replaced in between).
pub fn read_file(path: &Path, bounds: Bounds) -> Result<Arc<[u8]>, ReadError> {
    let kind = FileKind::of(&std::fs::metadata(path)?.file_type());
    if !bounds.admits(kind) {
        return Err(ReadError::NotAFile(kind));
    }
    let file = open(path, kind)?;
    let metadata = file.metadata()?;
    let opened = FileKind::of(&metadata.file_type());
    if !bounds.admits(opened) {
        return Err(ReadError::NotAFile(opened));
    }
    // Only a regular file's metadata gives its length (a pipe's may give
    // what it holds now).
    let expected = if opened == FileKind::File {
        metadata.len()
    } else {
        0
    };
    read_open(file, expected, bounds.limit)
}

/// Reads the file at `path` within `bounds` as UTF-8 text (an error of kind
/// `InvalidData` when it is not).
pub fn read_to_string(path: &Path, bounds: Bounds) -> Result<String, ReadError> {
    let bytes = read_file(path, bounds)?;
    String::from_utf8(bytes.to_vec()).map_err(|e| {
        ReadError::Io(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("not UTF-8 (byte {})", e.utf8_error().valid_up_to()),
        ))
    })
}

/// Reads a stream (standard input) to its end, or refuses it past `limit`
/// bytes.
pub fn read_stream(reader: impl Read, limit: usize) -> Result<Vec<u8>, ReadError> {
    let mut bytes = Vec::new();
    reader.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    if bytes.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// Opens a file whose kind was just looked up.
#[cfg(unix)]
fn open(path: &Path, kind: FileKind) -> io::Result<File> {
    use std::os::unix::fs::OpenOptionsExt;
    // Anything but a pipe the caller accepted is opened without waiting: if
    // the file was replaced by a FIFO since it was looked up, opening it
    // cannot block, and the check on the opened file refuses it. (Reading a
    // regular file ignores the flag.) A pipe is opened waiting for its
    // writer, as `cat` does.
    let mut flags = libc::O_NOCTTY;
    if kind != FileKind::Pipe {
        flags |= libc::O_NONBLOCK;
    }
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(flags)
        .open(path)
}

#[cfg(not(unix))]
fn open(path: &Path, _kind: FileKind) -> io::Result<File> {
    File::open(path)
}

/// From this size on (and with two cores), a file is read in two halves at
/// once: copying it out of the page cache is most of the reading.
const PARALLEL_READ: usize = 1 << 20;

/// Reads an open file straight into the shared allocation the compiler keeps
/// it in, sized from its metadata (`expected` bytes), so a large plan is not
/// copied after reading. A file that changes size while it is read is still
/// read whole, up to `limit` bytes.
fn read_open(mut file: File, expected: u64, limit: usize) -> Result<Arc<[u8]>, ReadError> {
    let expected = match usize::try_from(expected) {
        Ok(expected) if expected <= limit => expected,
        _ => return Err(ReadError::TooLarge { limit }),
    };
    let mut uninit = Arc::<[u8]>::new_uninit_slice(expected);
    let bytes = Arc::get_mut(&mut uninit).expect("a new Arc is not shared");
    let filled = read_start(&file, bytes)?;
    // SAFETY: `read_start` initialised every byte.
    let buffer: Arc<[u8]> = unsafe { uninit.assume_init() };
    // `read_start` reads at offsets and leaves the cursor at 0. (A pipe
    // says its length is 0, and cannot seek.)
    if filled > 0 {
        file.seek(SeekFrom::Start(filled as u64))?;
    }
    // The rest, if the file grew or its metadata gives no size (a pipe, a
    // file of /proc): one byte past the limit says it is too large.
    let mut rest = Vec::new();
    (&mut file)
        .take((limit - filled) as u64 + 1)
        .read_to_end(&mut rest)?;
    if filled + rest.len() > limit {
        return Err(ReadError::TooLarge { limit });
    }
    if filled == buffer.len() && rest.is_empty() {
        return Ok(buffer);
    }
    // Shorter or longer than its metadata said: the bytes actually read.
    let mut bytes = buffer[..filled].to_vec();
    bytes.extend(rest);
    Ok(Arc::from(bytes))
}

/// Initialises `buffer` and reads the start of `file` into it (in two halves
/// at once when it is large); returns how many bytes were read, fewer than
/// the buffer holds when the file is shorter.
fn read_start(file: &File, buffer: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    let two_cores = crate::cores::two_cores();
    if cfg!(unix) && two_cores && buffer.len() >= PARALLEL_READ {
        let (first, second) = buffer.split_at_mut(buffer.len() / 2);
        let offset = first.len();
        let (first, second) = std::thread::scope(|scope| {
            let second = scope.spawn(move || read_at(file, offset, second));
            (read_at(file, 0, first), second.join())
        });
        let first = first?;
        let second = second.unwrap_or_else(|panic| std::panic::resume_unwind(panic))?;
        return Ok(if first < offset {
            first
        } else {
            offset + second
        });
    }
    read_at(file, 0, buffer)
}

/// Initialises `buffer` and reads into it what `file` holds from `offset`.
fn read_at(file: &File, offset: usize, buffer: &mut [MaybeUninit<u8>]) -> io::Result<usize> {
    buffer.fill(MaybeUninit::new(0));
    // SAFETY: every byte was just written, and `MaybeUninit<u8>` has the
    // layout of `u8`.
    let buffer = unsafe { &mut *(std::ptr::from_mut(buffer) as *mut [u8]) };
    let mut filled = 0;
    while filled < buffer.len() {
        match read_at_offset(file, &mut buffer[filled..], offset + filled) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(unix)]
fn read_at_offset(file: &File, buffer: &mut [u8], offset: usize) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buffer, offset as u64)
}

#[cfg(not(unix))]
fn read_at_offset(file: &File, buffer: &mut [u8], offset: usize) -> io::Result<usize> {
    // One thread only here (see `read_start`): the cursor is ours.
    let mut file = file;
    file.seek(SeekFrom::Start(offset as u64))?;
    file.read(buffer)
}

#[cfg(test)]
mod tests;
