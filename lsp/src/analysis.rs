//! One compiled state of an open document, and what every request reads of
//! it: the compilation, the line indexes, where imports stand.

use std::sync::{Arc, Mutex, OnceLock};

use planc::check::Options;
use planc::ide::TokenStore;
use planc::line_index::LineIndex;
use planc::span::{FileId, Span};
use planc::syntax::ast::TopItem;
use planc::Compilation;
use tower_lsp_server::ls_types::Uri;

/// One compiled state of a document: what every request reads.
pub struct Analysis {
    pub uri: Uri,
    /// The server's count of the document's texts (see `documents::Job::revision`).
    pub revision: u64,
    pub compilation: Compilation,
    /// The line index of the document's text (made once per text, when the
    /// text changes, and shared with the compile).
    pub lines: Arc<LineIndex>,
    /// Where the first `import` stands: problems inside imported files are
    /// shown there (found once, not for each diagnostic).
    pub first_import: Option<Span>,
    /// The line indexes of the imported files, made when first asked for.
    imported_lines: Vec<OnceLock<LineIndex>>,
    /// Whether the document is a JSON plan document (diagnostics only: the
    /// requests answer for `.plan` files).
    pub json: bool,
    /// The file's semantic tokens, kept per tile, made when first asked
    /// for (`semanticTokens/full`, its delta, a range), then kept.
    pub(crate) tokens: OnceLock<Arc<TokenStore>>,
    /// What they are made from: an earlier analysis's, and the edit since
    /// (`token_base::base_after`); taken when they are made.
    pub(crate) token_base: Mutex<Option<crate::token_base::Base>>,
}

impl Analysis {
    /// Compiles `text`, the contents of the document at `uri` (`lines` is
    /// its line index): from the analysis of an earlier text of the same
    /// document if there is one (only what the edit touches is compiled
    /// again), else whole. A `.json` document is checked as `planc check`
    /// checks a JSON plan document. `edit` is where the text changed since
    /// the text of the revision it names (from the client's changes).
    pub fn new(
        uri: Uri,
        revision: u64,
        text: Arc<str>,
        lines: Arc<LineIndex>,
        previous: Option<&Analysis>,
        edit: Option<(u64, planc::syntax::Edit)>,
    ) -> Analysis {
        // The file's path, so that imports resolve relative to it.
        let name = file_path(&uri)
            .map(|path| path.display().to_string())
            .unwrap_or_else(|| uri.as_str().to_owned());
        let json = is_json(&name);
        // The edit the changes told, if from the previous text.
        let edit = edit.filter(|&(from, _)| previous.is_some_and(|p| p.revision == from));
        let token_base = match json {
            true => None,
            false => crate::token_base::base_after(
                previous.map(|p| crate::token_base::Earlier {
                    text: p.text(),
                    tokens: &p.tokens,
                    token_base: &p.token_base,
                }),
                &text,
                edit.map(|(_, edit)| edit),
            ),
        };
        let compilation = match previous {
            _ if json => planc::compile_json(&name, text),
            Some(previous) if !previous.json => previous
                .compilation
                .recompile_edited(text, edit.map(|(_, edit)| edit)),
            _ => planc::compile_shared(&name, text, &Options::default()),
        };
        let analysis = Analysis::of(uri, revision, compilation, lines, json);
        *analysis
            .token_base
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner()) = token_base;
        analysis
    }

    fn of(
        uri: Uri,
        revision: u64,
        compilation: Compilation,
        lines: Arc<LineIndex>,
        json: bool,
    ) -> Analysis {
        let first_import = compilation
            .syntax()
            .items
            .iter()
            .find_map(|item| match item {
                TopItem::Import(import) => Some(import.span),
                _ => None,
            });
        let files = compilation.sources.iter().count();
        Analysis {
            uri,
            revision,
            compilation,
            lines,
            first_import,
            imported_lines: (0..files).map(|_| OnceLock::new()).collect(),
            json,
            tokens: OnceLock::new(),
            token_base: Mutex::new(None),
        }
    }

    /// The text of the document.
    pub fn text(&self) -> &str {
        &self.compilation.sources.get(self.compilation.file).text
    }

    /// The document a file of the compilation is shown as: the document
    /// itself, or an imported file by its path.
    pub fn uri_of(&self, file: FileId) -> Option<Uri> {
        if file == self.compilation.file {
            return Some(self.uri.clone());
        }
        let name = &self.compilation.sources.get(file).name;
        let path = std::path::Path::new(name);
        path.is_absolute()
            .then(|| Uri::from_file_path(path))
            .flatten()
    }

    /// The line index of a file of the compilation (the document's is kept;
    /// an imported file's is made when first asked for, then kept).
    pub fn lines_of(&self, file: FileId) -> &LineIndex {
        if file == self.compilation.file {
            return &self.lines;
        }
        self.imported_lines[file.0 as usize]
            .get_or_init(|| LineIndex::new(&self.compilation.sources.get(file).text))
    }
}

/// Whether a document is a JSON plan document (`*.plan.json`, task-master's
/// `.taskmaster/tasks/tasks.json`, any `.json` an editor sends), as
/// `planc check` tells them by their extension.
fn is_json(name: &str) -> bool {
    std::path::Path::new(name)
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// The local path of a `file:` URI (other schemes, such as an editor's
/// `untitled:` buffers, have none).
fn file_path(uri: &Uri) -> Option<std::path::PathBuf> {
    if !uri.scheme().as_str().eq_ignore_ascii_case("file") {
        return None;
    }
    uri.to_file_path().map(std::borrow::Cow::into_owned)
}
