//! The open documents and their analyses: every piece of file handling the
//! server does lives here, so imports across files can be added in one place.

use std::collections::HashMap;
use std::sync::Arc;

use planc::check::Options;
use planc::line_index::LineIndex;
use planc::span::FileId;
use planc::Compilation;
use tower_lsp::lsp_types::{TextDocumentContentChangeEvent, Url};

use crate::convert;

/// One compiled state of a document: what every request reads.
pub struct Analysis {
    pub uri: Url,
    pub version: i32,
    pub compilation: Compilation,
    pub lines: LineIndex,
}

impl Analysis {
    /// Compiles `text`, the contents of the document at `uri`.
    pub fn new(uri: Url, version: i32, text: &str) -> Analysis {
        // The file's path, so that imports resolve relative to it.
        let name = uri
            .to_file_path()
            .map(|path| path.display().to_string())
            .unwrap_or_else(|()| uri.to_string());
        let compilation = planc::compile(&name, text, &Options::default());
        Analysis {
            lines: LineIndex::new(text),
            uri,
            version,
            compilation,
        }
    }

    /// The text of the document.
    pub fn text(&self) -> &str {
        &self.compilation.sources.get(self.compilation.file).text
    }

    /// The document a file of the compilation is shown as: the document
    /// itself, or an imported file by its path.
    pub fn uri_of(&self, file: FileId) -> Option<Url> {
        if file == self.compilation.file {
            return Some(self.uri.clone());
        }
        let name = &self.compilation.sources.get(file).name;
        let path = std::path::Path::new(name);
        path.is_absolute()
            .then(|| Url::from_file_path(path).ok())
            .flatten()
    }

    /// The line index of a file of the compilation (the document's is kept;
    /// an imported file's is made when asked).
    pub fn lines_of(&self, file: FileId) -> std::borrow::Cow<'_, LineIndex> {
        if file == self.compilation.file {
            std::borrow::Cow::Borrowed(&self.lines)
        } else {
            std::borrow::Cow::Owned(LineIndex::new(&self.compilation.sources.get(file).text))
        }
    }
}

/// An open document: its text and, unless a change came since, its analysis.
struct Document {
    text: String,
    version: i32,
    /// `None` while changes are not analysed yet: typing faster than a large
    /// file compiles analyses only the latest text.
    analysis: Option<Arc<Analysis>>,
}

/// Every open document.
#[derive(Default)]
pub struct Documents {
    open: HashMap<Url, Document>,
}

impl Documents {
    /// Opens (or reopens) a document and analyses it.
    pub fn open(&mut self, uri: Url, version: i32, text: String) -> Arc<Analysis> {
        let analysis = Arc::new(Analysis::new(uri.clone(), version, &text));
        self.open.insert(
            uri,
            Document {
                text,
                version,
                analysis: Some(analysis.clone()),
            },
        );
        analysis
    }

    /// Applies a client's changes in order; the analysis is made when next
    /// asked for. `false` when the document is not open.
    pub fn change(
        &mut self,
        uri: &Url,
        version: i32,
        changes: Vec<TextDocumentContentChangeEvent>,
    ) -> bool {
        let Some(document) = self.open.get_mut(uri) else {
            return false;
        };
        let mut known = document.analysis.take().map(|a| a.lines.clone());
        for change in changes {
            match change.range {
                Some(range) => {
                    // Each change's positions refer to the text after the
                    // previous one.
                    let lines = known
                        .take()
                        .unwrap_or_else(|| LineIndex::new(&document.text));
                    let start = convert::offset(&lines, &document.text, range.start);
                    let end = convert::offset(&lines, &document.text, range.end).max(start);
                    document.text.replace_range(start..end, &change.text);
                }
                None => {
                    known = None;
                    document.text = change.text;
                }
            }
        }
        document.version = version;
        true
    }

    /// The version of an open document's text.
    pub fn version(&self, uri: &Url) -> Option<i32> {
        self.open.get(uri).map(|d| d.version)
    }

    /// Forgets a closed document.
    pub fn close(&mut self, uri: &Url) {
        self.open.remove(uri);
    }

    /// The analysis of an open document's latest text, made now if a change
    /// came since the last one.
    pub fn get(&mut self, uri: &Url) -> Option<Arc<Analysis>> {
        let document = self.open.get_mut(uri)?;
        let analysis = document.analysis.get_or_insert_with(|| {
            Arc::new(Analysis::new(uri.clone(), document.version, &document.text))
        });
        Some(analysis.clone())
    }
}
