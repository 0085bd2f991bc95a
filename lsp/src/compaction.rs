//! Compiling an idle document whole again, so that its analysis lies in
//! pages of its own.
//!
//! A keystroke's compile copies the chunks the edit touches and shares the
//! rest with the analysis before it, which is then dropped: over edits the
//! analysis's blocks end up spread over pages among the holes its
//! predecessors left, and pages that were freed and taken again hold
//! leftovers beyond what their blocks use. At 100,000 tasks the server held
//! 9–14 MiB more after 1,000 edits than after the open while the analysis
//! itself was no larger (docs/performance.md, "The server's memory over
//! edits: the analysis compiled whole again when idle").
//!
//! So once a document has been idle for [`IDLE`] after at least [`EDITS`]
//! changes since its last whole compile, it is compiled whole again on a
//! thread of its own (at the lowest priority), every allocation meanwhile
//! in a mimalloc heap of its own (`memory::apart`), which takes fresh pages
//! rather than those with holes the old analysis's blocks sit among; the new analysis
//! replaces the old one only if the document did not change meanwhile (a
//! keystroke during the compile wins: the compile's result is dropped).
//! The old one is dropped there and every thread that held its blocks
//! gives its pages back. A whole compile is what the incremental ones are
//! tested against (the differential tests), so the answers do not change.

use std::sync::Arc;
use std::time::Duration;

use tower_lsp_server::ls_types::Uri;

use crate::analysis::Analysis;

/// How long a document stays unchanged before it is compiled whole again:
/// longer than the collections' wait (`memory::QUIET`), so that a pause
/// in typing gives memory back at once and only a longer one costs a
/// whole compile (half a second of a core at 100,000 tasks).
pub const IDLE: Duration = Duration::from_millis(1000);

/// How many changes since the last whole compile make one worth it.
pub const EDITS: u64 = 100;

/// A whole compile of a document's current text, to replace `from`.
pub struct Compaction {
    pub uri: Uri,
    /// Which opening of the document (see `documents::Job::opening`).
    pub opening: u64,
    /// The revision of the text, which `from` is an analysis of.
    pub revision: u64,
    /// The analysis the whole compile replaces.
    pub from: Arc<Analysis>,
}

impl Compaction {
    /// Compiles the text whole. Carries over what was made of the same
    /// text for requests (its semantic tokens), which does not depend on
    /// how it was compiled.
    pub fn run(&self) -> Analysis {
        let from = &self.from;
        let analysis = Analysis::new(
            self.uri.clone(),
            self.revision,
            Arc::clone(&from.compilation.sources.get(from.compilation.file).text),
            Arc::clone(&from.lines),
            None,
            None,
        );
        if let Some(tokens) = from.tokens.get() {
            let _ = analysis.tokens.set(Arc::clone(tokens));
        } else {
            let base = crate::token_base::lock(&from.token_base).clone();
            *crate::token_base::lock(&analysis.token_base) = base;
        }
        analysis
    }
}

/// Whether `whole`, the whole compile of `from`'s text, answers as `from`
/// does: the same files with the same texts, and the same diagnostics. A
/// whole compile reads the imports again, and an imported file changed on
/// disk since would change answers whose diagnostics nobody publishes:
/// then the whole compile is dropped, the latest analysis kept.
pub fn same_answers(from: &Analysis, whole: &Analysis) -> bool {
    let texts = |analysis: &Analysis| {
        let sources = &analysis.compilation.sources;
        sources
            .iter()
            .map(|(_, file)| (file.name.clone(), Arc::clone(&file.text)))
            .collect::<Vec<_>>()
    };
    from.compilation.diagnostics == whole.compilation.diagnostics && texts(from) == texts(whole)
}

/// Lowers the calling thread's scheduling priority (nice 19: on Linux a
/// thread's own), so that a keystroke's compile running beside a whole one
/// gets the cores first.
pub fn behind_keystrokes() {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::{c_int, c_uint};
        extern "C" {
            fn setpriority(which: c_int, who: c_uint, priority: c_int) -> c_int;
            fn gettid() -> c_int;
        }
        const PRIO_PROCESS: c_int = 0;
        // SAFETY: both take and return plain integers; `setpriority` with
        // a thread's id changes that thread's priority alone.
        unsafe { setpriority(PRIO_PROCESS, gettid() as c_uint, 19) };
    }
}
