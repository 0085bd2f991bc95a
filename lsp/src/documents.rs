//! The open documents and their analyses: every piece of file handling the
//! server does lives here, so imports across files can be added in one place.
//!
//! A document's text changes at once, in the order the client's changes
//! arrive; compiling it is slow for a large file, so it happens elsewhere
//! (see `server.rs`) and the latest finished analysis is published through a
//! [`watch`] channel. Nothing here compiles while holding the lock.

use std::collections::HashMap;
use std::sync::Arc;

use planc::line_index::LineIndex;
use tokio::sync::watch;
use tower_lsp_server::ls_types::{self as lsp, TextDocumentContentChangeEvent, Uri};

pub use crate::analysis::Analysis;
use crate::changed::Changed;
use crate::compaction::{self, Compaction};
use crate::convert;

/// A compile to run: the text of one version of an open document.
pub struct Job {
    pub uri: Uri,
    /// Which opening of the document this text belongs to (a document closed
    /// and opened again starts its versions anew).
    pub opening: u64,
    pub version: i32,
    /// Counts the texts of this opening, one more at each change: the
    /// client's versions label the diagnostics, but a client may repeat them,
    /// so whether a text is the newest is decided by this count.
    pub revision: u64,
    pub text: Arc<str>,
    pub lines: Arc<LineIndex>,
    /// The latest analysis of an earlier text, compiled from.
    pub previous: Option<Arc<Analysis>>,
    /// Where the text changed since the text of the revision given (the
    /// last compile's), if the changes said: used when `previous` is of
    /// that revision.
    pub edit: Option<(u64, planc::syntax::Edit)>,
}

impl Job {
    /// Compiles the text, and converts its diagnostics for publishing.
    pub fn run(self) -> (Arc<Analysis>, Vec<lsp::Diagnostic>) {
        let analysis = Analysis::new(
            self.uri,
            self.revision,
            self.text,
            self.lines,
            self.previous.as_deref(),
            self.edit,
        );
        let diagnostics = convert::diagnostics(&analysis);
        (Arc::new(analysis), diagnostics)
    }
}

/// What follows a finished compile.
pub enum Next {
    /// The compiled text is the document's current text: publish its
    /// diagnostics.
    Publish,
    /// The text changed meanwhile: compile the newest text instead (the
    /// versions in between are never compiled).
    Compile(Job),
    /// Nothing: the document was closed (or opened anew), or the compile of
    /// its current text failed.
    Stop,
}

/// What the compiles of a document have given so far.
#[derive(Default)]
pub struct Analyses {
    /// The latest analysis, which may be of an older text than the current.
    pub latest: Option<Arc<Analysis>>,
    /// The revision of the text the latest compile ended for, whether it
    /// gave an analysis or failed (so that nobody waits for a failed one).
    pub settled: Option<u64>,
}

/// An open document: its current text, and its latest finished analysis,
/// which may be of an older version while a compile runs.
struct Document {
    opening: u64,
    /// Shared with the compiles: a change makes a new text (copied once,
    /// with the change, from the text before it: [`spliced`]), and a
    /// compile takes the text without copying it. The server holds no
    /// other copy of it: the analysis's text is the same allocation.
    text: Arc<str>,
    lines: Arc<LineIndex>,
    version: i32,
    revision: u64,
    analyses: watch::Sender<Analyses>,
    /// Whether a compile of this document is running; at most one is, and
    /// the changes that arrive meanwhile wait for it to end.
    compiling: bool,
    /// The revision of the text the last compile was given, and where the
    /// text changed since.
    since_job: (u64, Changed),
    /// The revision of the text last compiled whole (the open's, or an
    /// idle document's: `compaction`).
    whole: u64,
    /// Whether a whole compile of the idle document is running.
    compacting: bool,
}

impl Document {
    fn job(&mut self, uri: &Uri) -> Job {
        self.compiling = true;
        let (from, changed) =
            std::mem::replace(&mut self.since_job, (self.revision, Changed::Nothing));
        Job {
            edit: match changed {
                Changed::Inside(edit) => Some((from, edit)),
                Changed::Nothing | Changed::Unknown => None,
            },
            uri: uri.clone(),
            opening: self.opening,
            version: self.version,
            revision: self.revision,
            text: Arc::clone(&self.text),
            lines: Arc::clone(&self.lines),
            previous: self.analyses.borrow().latest.clone(),
        }
    }
}

/// Every open document.
#[derive(Default)]
pub struct Documents {
    open: HashMap<Uri, Document>,
    openings: u64,
}

impl Documents {
    /// Opens (or reopens) a document; returns its first compile.
    pub fn open(&mut self, uri: Uri, version: i32, text: String) -> Job {
        self.openings += 1;
        let mut document = Document {
            opening: self.openings,
            lines: Arc::new(LineIndex::new(&text)),
            text: Arc::from(text),
            version,
            revision: 0,
            analyses: watch::Sender::new(Analyses::default()),
            compiling: false,
            since_job: (0, Changed::Nothing),
            whole: 0,
            compacting: false,
        };
        let job = document.job(&uri);
        self.open.insert(uri, document);
        job
    }

    /// Applies a client's changes in order. Returns the compile to start,
    /// unless the document is not open or a compile of it is already running
    /// (that one compiles the newest text when it ends).
    pub fn change(
        &mut self,
        uri: &Uri,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> Option<Job> {
        let document = self.open.get_mut(uri)?;
        let mut lines = None;
        for change in changes {
            // Each change's positions refer to the text after the previous
            // one, and so to its line index, which each change updates
            // rather than indexing the whole text again.
            let index = lines.as_ref().unwrap_or(&*document.lines);
            let text = &document.text;
            let (text, index, edit) = match change.range {
                Some(range) => {
                    let start = convert::offset(index, text, range.start);
                    let end = convert::offset(index, text, range.end).max(start);
                    let text = spliced(text, start..end, &change.text);
                    let new_end = start + change.text.len();
                    let index = index.edited(&text, start, end, new_end);
                    let edit = planc::syntax::Edit {
                        start,
                        old_end: end,
                        new_end,
                    };
                    (text, index, Some(edit))
                }
                None => {
                    let index = LineIndex::new(&change.text);
                    (Arc::from(change.text), index, None)
                }
            };
            document.since_job.1 = document.since_job.1.then(edit);
            document.text = text;
            lines = Some(index);
        }
        if let Some(lines) = lines {
            document.lines = Arc::new(lines);
        }
        document.version = version;
        document.revision += 1;
        (!document.compiling).then(|| document.job(uri))
    }

    /// Forgets a closed document.
    pub fn close(&mut self, uri: &Uri) {
        self.open.remove(uri);
    }

    /// Records a finished compile of `revision` (no analysis if it failed)
    /// and says what to do next. An analysis of an older text is still kept
    /// as the latest finished one, but its diagnostics are not published.
    /// Also returns the analysis the new one replaces, for the caller to
    /// drop after publishing (dropping a large tree takes a while).
    pub fn finished(
        &mut self,
        job: (&Uri, u64),
        revision: u64,
        analysis: Option<Arc<Analysis>>,
    ) -> (Next, Option<Arc<Analysis>>) {
        let (uri, opening) = job;
        let Some(document) = self.open.get_mut(uri).filter(|d| d.opening == opening) else {
            return (Next::Stop, analysis);
        };
        let compiled = analysis.is_some();
        let mut replaced = None;
        document.analyses.send_modify(|analyses| {
            if analysis.is_some() {
                replaced = std::mem::replace(&mut analyses.latest, analysis);
            }
            analyses.settled = Some(revision);
        });
        let next = if revision != document.revision {
            Next::Compile(document.job(uri))
        } else {
            document.compiling = false;
            if compiled {
                Next::Publish
            } else {
                Next::Stop
            }
        };
        (next, replaced)
    }

    /// The whole compile of a document whose text is still that of
    /// `revision`, if it is worth one: no compile of it running, its latest
    /// analysis of that text, and at least `compaction::EDITS` changes since
    /// its last whole compile. Until [`Documents::compacted`], no other.
    pub fn compaction(&mut self, uri: &Uri, revision: u64) -> Option<Compaction> {
        let document = self.open.get_mut(uri)?;
        let from = document.analyses.borrow().latest.clone()?;
        let worth = document.revision == revision
            && from.revision == revision
            && !document.compiling
            && !document.compacting
            && revision.saturating_sub(document.whole) >= crate::compaction::EDITS;
        if !worth {
            return None;
        }
        document.compacting = true;
        Some(Compaction {
            uri: uri.clone(),
            opening: document.opening,
            revision,
            from,
        })
    }

    /// Records the end of a whole compile: its analysis (none if it failed)
    /// replaces the latest if that is still the one it was compiled for
    /// (the document did not change meanwhile). Returns the analysis to
    /// drop: the one replaced, or else the whole compile's.
    pub fn compacted(
        &mut self,
        compaction: &Compaction,
        analysis: Option<Arc<Analysis>>,
    ) -> Option<Arc<Analysis>> {
        let Some(document) = self
            .open
            .get_mut(&compaction.uri)
            .filter(|d| d.opening == compaction.opening)
        else {
            return analysis;
        };
        document.compacting = false;
        let analysis = analysis?;
        let current = document
            .analyses
            .borrow()
            .latest
            .as_ref()
            .is_some_and(|latest| Arc::ptr_eq(latest, &compaction.from));
        if !current
            || document.revision != compaction.revision
            || !compaction::same_answers(&compaction.from, &analysis)
        {
            return Some(analysis);
        }
        document.whole = compaction.revision;
        let mut replaced = None;
        document.analyses.send_modify(|analyses| {
            replaced = analyses.latest.replace(analysis);
        });
        replaced
    }

    /// A way to wait for the analyses of an open document, and the revision
    /// of its current text.
    pub fn watch(&self, uri: &Uri) -> Option<(watch::Receiver<Analyses>, u64)> {
        let document = self.open.get(uri)?;
        Some((document.analyses.subscribe(), document.revision))
    }
}

/// `text` with the bytes `replaced` (on character boundaries) replaced by
/// `inserted`, in a new shared text: copied once, straight into the shared
/// allocation (`Arc::from` a `String` would copy the whole text a second
/// time).
fn spliced(text: &str, replaced: std::ops::Range<usize>, inserted: &str) -> Arc<str> {
    let (before, after) = (&text[..replaced.start], &text[replaced.end..]);
    let len = before.len() + inserted.len() + after.len();
    let mut bytes = Arc::<[u8]>::new_uninit_slice(len);
    let Some(room) = Arc::get_mut(&mut bytes) else {
        // Not reached: the allocation was just made. Copy twice instead.
        return Arc::from(format!("{before}{inserted}{after}"));
    };
    let mut at = 0;
    for piece in [before, inserted, after] {
        let piece = piece.as_bytes();
        for (to, &from) in room[at..at + piece.len()].iter_mut().zip(piece) {
            to.write(from);
        }
        at += piece.len();
    }
    // SAFETY: every byte of the `len` bytes was written just above.
    let bytes = unsafe { bytes.assume_init() };
    // SAFETY: the bytes are pieces of two `str`s cut on character
    // boundaries, so UTF-8; `str` has the layout of `[u8]` (as in
    // `planc::compile::decode_shared`).
    unsafe { Arc::from_raw(Arc::into_raw(bytes) as *const str) }
}
