//! Reading input files (or standard input) for the commands.

use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use planc::check::Options;
use planc::compile::STDIN_NAME;
use planc::diagnostic::Diagnostic;
use planc::document::PlanDocument;
use planc::span::SourceMap;

/// What kind of input a file is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Plan,
    Json,
}

/// A file read into memory.
pub struct Input {
    /// The name shown to users: the path as given, or `<stdin>`.
    pub name: String,
    /// The text, shared with the compilation's source map (a large plan is
    /// held once).
    pub text: Arc<str>,
    pub kind: Kind,
}

/// Why an input could not be used.
pub enum InputError {
    /// The file could not be read: exit 2.
    Io(String),
    /// The file is not UTF-8: a diagnostic, exit 1.
    Encoding(Box<(SourceMap, Diagnostic)>),
}

/// Reads `path` (`-` for standard input).
pub fn read(path: &str) -> Result<Input, InputError> {
    let (name, bytes) = if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| InputError::Io(format!("cannot read standard input: {e}")))?;
        (STDIN_NAME.to_owned(), Arc::from(bytes))
    } else {
        let bytes =
            read_file(path).map_err(|e| InputError::Io(format!("cannot read {path}: {e}")))?;
        (path.to_owned(), bytes)
    };
    let text = planc::decode_shared(&name, bytes).map_err(InputError::Encoding)?;
    let kind = if path == "-" {
        if text.trim_start().starts_with(['{', '[']) {
            Kind::Json
        } else {
            Kind::Plan
        }
    } else if Path::new(path)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
    {
        Kind::Json
    } else {
        Kind::Plan
    };
    Ok(Input { name, text, kind })
}

/// From this size on (and with two cores), a file is read in two halves at
/// once: copying it out of the page cache is most of the reading.
const PARALLEL_READ: usize = 1 << 20;

/// Reads a file straight into the shared allocation the compiler keeps it
/// in, sized from its metadata, so a large plan is not copied after reading.
/// A file that changes size while it is read is still read whole.
fn read_file(path: &str) -> std::io::Result<Arc<[u8]>> {
    use std::io::{Seek, SeekFrom};

    let mut file = std::fs::File::open(path)?;
    let expected = file.metadata().map_or(0, |m| m.len());
    let mut buffer: Arc<[u8]> = Arc::from([]);
    let mut filled = 0;
    if let Ok(expected) = usize::try_from(expected) {
        let mut uninit = Arc::<[u8]>::new_uninit_slice(expected);
        let bytes = Arc::get_mut(&mut uninit).expect("a new Arc is not shared");
        filled = read_start(&file, bytes)?;
        // SAFETY: `read_start` initialised every byte.
        buffer = unsafe { uninit.assume_init() };
    }
    // `read_start` reads at offsets and leaves the cursor at 0. (A pipe
    // says its length is 0, and cannot seek.)
    if filled > 0 {
        file.seek(SeekFrom::Start(filled as u64))?;
    }
    let mut rest = Vec::new();
    file.read_to_end(&mut rest)?;
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
fn read_start(
    file: &std::fs::File,
    buffer: &mut [std::mem::MaybeUninit<u8>],
) -> std::io::Result<usize> {
    let two_cores = std::thread::available_parallelism().is_ok_and(|n| n.get() >= 2);
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
fn read_at(
    file: &std::fs::File,
    offset: usize,
    buffer: &mut [std::mem::MaybeUninit<u8>],
) -> std::io::Result<usize> {
    buffer.fill(std::mem::MaybeUninit::new(0));
    // SAFETY: every byte was just written, and `MaybeUninit<u8>` has the
    // layout of `u8`.
    let buffer = unsafe { &mut *(std::ptr::from_mut(buffer) as *mut [u8]) };
    let mut filled = 0;
    while filled < buffer.len() {
        match read_at_offset(file, &mut buffer[filled..], offset + filled) {
            Ok(0) => break,
            Ok(read) => filled += read,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

#[cfg(unix)]
fn read_at_offset(
    file: &std::fs::File,
    buffer: &mut [u8],
    offset: usize,
) -> std::io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(file, buffer, offset as u64)
}

#[cfg(not(unix))]
fn read_at_offset(
    file: &std::fs::File,
    buffer: &mut [u8],
    offset: usize,
) -> std::io::Result<usize> {
    use std::io::{Seek, SeekFrom};
    // One thread only here (see `read_start`): the cursor is ours.
    let mut file = file;
    file.seek(SeekFrom::Start(offset as u64))?;
    file.read(buffer)
}

/// The file name without directory or extension: a plan id of last resort.
pub fn stem(name: &str) -> String {
    Path::new(name)
        .file_stem()
        .and_then(|s| s.to_str())
        .filter(|s| !s.is_empty() && *s != STDIN_NAME)
        .unwrap_or("plan")
        .to_owned()
}

/// A plan read for use: compiled from a `.plan` source, or checked and
/// normalised from a `.json` plan document.
pub struct Loaded {
    /// The document, if the input has a plan (it may still have errors).
    pub document: Option<PlanDocument>,
    pub sources: SourceMap,
    pub diagnostics: Vec<Diagnostic>,
}

impl Loaded {
    /// The document, if there is one and no diagnostic is an error.
    pub fn clean_document(self) -> Option<PlanDocument> {
        let errors = self.diagnostics.iter().any(Diagnostic::is_error);
        self.document.filter(|_| !errors)
    }
}

/// Compiles or checks `input` into a plan document, requiring every
/// parameter to have a value. `Err` is a usage error (`--set` on JSON).
pub fn load_plan(input: &Input, params: Vec<(String, String)>) -> Result<Loaded, String> {
    match input.kind {
        Kind::Plan => {
            let options = Options {
                params,
                require_params: true,
                // Nothing here looks names up.
                skip_references: true,
                skip_plan: false,
            };
            let mut compilation =
                planc::compile_shared(&input.name, Arc::clone(&input.text), &options);
            let document = compilation.document();
            let no_plan = (compilation.checked.plan.is_none() && !compilation.has_errors())
                .then(|| planc::compile::no_plan(&compilation));
            let mut diagnostics = std::mem::take(&mut compilation.diagnostics);
            diagnostics.extend(no_plan);
            let loaded = Loaded {
                document,
                sources: std::mem::take(&mut compilation.sources),
                diagnostics,
            };
            super::discard(compilation);
            Ok(loaded)
        }
        Kind::Json => {
            if !params.is_empty() {
                return Err(
                    "--set applies to .plan sources; a JSON plan document has its values already"
                        .to_owned(),
                );
            }
            let mut sources = SourceMap::new();
            let file = sources.add(&input.name, Arc::clone(&input.text));
            let (document, diagnostics) =
                planc::document::load_json(&input.text, file, &stem(&input.name));
            Ok(Loaded {
                document,
                sources,
                diagnostics,
            })
        }
    }
}

/// Reads `path`, reporting a failure: `Err` holds the exit code (2 when the
/// file cannot be read, 1 when it is not UTF-8, with its diagnostic printed).
pub fn read_reporting(path: &str, color: super::output::Color) -> Result<Input, i32> {
    match read(path) {
        Ok(input) => Ok(input),
        Err(InputError::Io(message)) => {
            super::output::fatal(&message);
            Err(super::EXIT_USAGE)
        }
        Err(InputError::Encoding(error)) => {
            let (sources, diagnostic) = *error;
            super::output::human(&[diagnostic], &sources, color);
            Err(super::EXIT_FAILURE)
        }
    }
}

/// Reads and loads the plan at `path` ([`read_reporting`], then [`load_plan`]).
pub fn open_plan(
    path: &str,
    params: Vec<(String, String)>,
    color: super::output::Color,
) -> Result<(Input, Loaded), i32> {
    let input = read_reporting(path, color)?;
    match load_plan(&input, params) {
        Ok(loaded) => Ok((input, loaded)),
        Err(message) => {
            super::output::fatal(&message);
            Err(super::EXIT_USAGE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::read_file;

    #[test]
    fn a_file_is_read_whole_whatever_its_metadata_says() {
        let dir = std::env::temp_dir().join(format!("planc-read-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let empty = dir.join("empty.plan");
        std::fs::write(&empty, "").unwrap();
        assert_eq!(&*read_file(empty.to_str().unwrap()).unwrap(), b"");
        let text = "plan p {\n    goal \"é\"\n}\n".repeat(1000);
        let full = dir.join("full.plan");
        std::fs::write(&full, &text).unwrap();
        assert_eq!(
            &*read_file(full.to_str().unwrap()).unwrap(),
            text.as_bytes()
        );
        // Large enough to be read in two halves.
        let large = format!("#{}", text.repeat(120));
        assert!(large.len() > 2 * super::PARALLEL_READ);
        std::fs::write(&full, &large).unwrap();
        assert_eq!(
            &*read_file(full.to_str().unwrap()).unwrap(),
            large.as_bytes()
        );
        std::fs::remove_dir_all(&dir).unwrap();
        // Files whose metadata gives no size, such as those of /proc.
        #[cfg(target_os = "linux")]
        {
            let expected = std::fs::read("/proc/self/cmdline").unwrap();
            assert!(!expected.is_empty());
            assert_eq!(std::fs::metadata("/proc/self/cmdline").unwrap().len(), 0);
            // The same process, so the same command line.
            assert_eq!(&*read_file("/proc/self/cmdline").unwrap(), &expected[..]);
        }
        assert!(read_file(dir.join("missing.plan").to_str().unwrap()).is_err());
    }

    #[cfg(unix)]
    #[test]
    fn a_pipe_is_read_whole() {
        let dir = std::env::temp_dir().join(format!("planc-pipe-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let pipe = dir.join("plan.fifo");
        let path = std::ffi::CString::new(pipe.to_str().unwrap()).unwrap();
        // SAFETY: `path` is a valid C string.
        assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
        let text = "plan p {\n    goal \"g\"\n    task a \"A\"\n}\n".repeat(20_000);
        let writer = {
            let (pipe, text) = (pipe.clone(), text.clone());
            std::thread::spawn(move || std::fs::write(pipe, text).unwrap())
        };
        let read = read_file(pipe.to_str().unwrap()).unwrap();
        writer.join().unwrap();
        assert_eq!(&*read, text.as_bytes());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
