//! Byte-offset spans and the set of source files they point into.

use std::sync::Arc;

/// A half-open byte range `start..end` in one source file.
///
/// Offsets are kept in 32 bits, as compilers do: a span is in every node of
/// the tree, and files past 4 GiB are refused long before (`MAX_FILE_BYTES`).
/// A larger offset saturates.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    start: u32,
    end: u32,
}

/// `offset` in 32 bits, saturating.
fn narrow(offset: usize) -> u32 {
    u32::try_from(offset).unwrap_or(u32::MAX)
}

impl Span {
    /// A span from `start` to `end` (byte offsets).
    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: narrow(start),
            end: narrow(end),
        }
    }

    /// Where the span starts (a byte offset).
    pub fn start(&self) -> usize {
        self.start as usize
    }

    /// Where the span ends (a byte offset, exclusive).
    pub fn end(&self) -> usize {
        self.end as usize
    }

    /// The bytes covered, as a range to index the text with.
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start()..self.end()
    }

    /// An empty span at `offset`.
    pub fn at(offset: usize) -> Span {
        Span::new(offset, offset)
    }

    /// The number of bytes covered.
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the span covers nothing.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The span `by` bytes further on (the text before it grew by `by`).
    pub fn shifted(self, by: i64) -> Span {
        let at = |offset: u32| narrow((i64::from(offset) + by) as usize);
        Span {
            start: at(self.start),
            end: at(self.end),
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    /// Whether `offset` lies within the span (its end included, so a cursor
    /// just after a word still touches it).
    pub fn touches(&self, offset: usize) -> bool {
        self.start() <= offset && offset <= self.end()
    }
}

impl From<pest::Span<'_>> for Span {
    fn from(span: pest::Span<'_>) -> Span {
        Span::new(span.start(), span.end())
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(span: Span) -> miette::SourceSpan {
        (span.start(), span.len()).into()
    }
}

/// Identifies a file in a [`SourceMap`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// One source file: the name it is shown under and its text.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: Arc<str>,
}

/// Every file a compilation read, addressed by [`FileId`].
#[derive(Clone, Debug, Default)]
pub struct SourceMap {
    files: Vec<SourceFile>,
}

impl SourceMap {
    /// An empty map.
    pub fn new() -> SourceMap {
        SourceMap::default()
    }

    /// Adds a file and returns its id.
    pub fn add(&mut self, name: impl Into<String>, text: impl Into<Arc<str>>) -> FileId {
        let id = FileId(self.files.len() as u32);
        self.files.push(SourceFile {
            name: name.into(),
            text: text.into(),
        });
        id
    }

    /// The file with this id.
    pub fn get(&self, id: FileId) -> &SourceFile {
        &self.files[id.0 as usize]
    }

    /// Gives a file a new text (a new version of it, as an editor holds it).
    pub fn set_text(&mut self, id: FileId, text: Arc<str>) {
        self.files[id.0 as usize].text = text;
    }

    /// The id of the file shown under `name`, if it was read.
    pub fn find(&self, name: &str) -> Option<FileId> {
        self.files
            .iter()
            .position(|f| f.name == name)
            .map(|i| FileId(i as u32))
    }

    /// All files with their ids.
    pub fn iter(&self) -> impl Iterator<Item = (FileId, &SourceFile)> {
        self.files
            .iter()
            .enumerate()
            .map(|(i, f)| (FileId(i as u32), f))
    }
}
