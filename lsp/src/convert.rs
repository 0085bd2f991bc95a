//! Conversions between the library's byte offsets and plain data, and the
//! protocol's UTF-16 positions and types.

use planc::diagnostic::{self, Severity};
use planc::ide::{self, CompletionKind, FoldKind, TokenKind};
use planc::ir::SymbolKind;
use planc::line_index::{LineCol, LineIndex};
use planc::span::{FileId, Span};
use tower_lsp_server::ls_types as lsp;

use crate::analysis::Analysis;

/// The byte offset of a protocol position (clamped to the text).
pub fn offset(lines: &LineIndex, text: &str, position: lsp::Position) -> usize {
    lines.offset_utf16(
        text,
        LineCol {
            line: position.line as usize,
            col: position.character as usize,
        },
    )
}

/// The protocol position of a byte offset.
pub fn position(lines: &LineIndex, text: &str, offset: usize) -> lsp::Position {
    let lc = lines.line_col_utf16(text, offset);
    lsp::Position::new(lc.line as u32, lc.col as u32)
}

/// The protocol range of a span in the analysed document.
pub fn range(analysis: &Analysis, span: Span) -> lsp::Range {
    let text = analysis.text();
    lsp::Range::new(
        position(&analysis.lines, text, span.start()),
        position(&analysis.lines, text, span.end()),
    )
}

/// The protocol range of a span in any file of the compilation.
pub fn range_in(analysis: &Analysis, file: FileId, span: Span) -> lsp::Range {
    let text = &analysis.compilation.sources.get(file).text;
    let lines = analysis.lines_of(file);
    lsp::Range::new(
        position(lines, text, span.start()),
        position(lines, text, span.end()),
    )
}

/// The byte span of a protocol range.
pub fn span(analysis: &Analysis, range: lsp::Range) -> Span {
    let text = analysis.text();
    let start = offset(&analysis.lines, text, range.start);
    let end = offset(&analysis.lines, text, range.end).max(start);
    Span::new(start, end)
}

/// The byte offset of a position in the analysed document.
pub fn offset_in(analysis: &Analysis, position: lsp::Position) -> usize {
    offset(&analysis.lines, analysis.text(), position)
}

/// A location of the compilation, if it is in a file the client can open.
pub fn location(analysis: &Analysis, location: ide::Location) -> Option<lsp::Location> {
    Some(lsp::Location::new(
        analysis.uri_of(location.file)?,
        range_in(analysis, location.file, location.span),
    ))
}

/// A planc diagnostic as the protocol shows it.
pub fn diagnostic(analysis: &Analysis, d: &diagnostic::Diagnostic) -> lsp::Diagnostic {
    let root = analysis.compilation.file;
    let primary = d.primary().filter(|l| l.file == root);
    let mut message = d.message.clone();
    // A problem inside an imported file is shown at the first `import`, and
    // says where it is.
    let elsewhere = d.primary().filter(|l| l.file != root);
    if let Some(label) = elsewhere {
        let source = analysis.compilation.sources.get(label.file);
        let line = analysis.lines_of(label.file).line(label.span.start()) + 1;
        message = format!("{}:{line}: {message}", source.name);
    }
    let import_span = analysis.first_import;
    if let Some(label) = primary.filter(|l| !l.message.is_empty()) {
        message.push_str(&format!("\n{}", label.message));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .labels
        .iter()
        .skip(if elsewhere.is_some() { 0 } else { 1 })
        .filter_map(|label| {
            Some(lsp::DiagnosticRelatedInformation {
                location: lsp::Location::new(
                    analysis.uri_of(label.file)?,
                    range_in(analysis, label.file, label.span),
                ),
                message: label.message.clone(),
            })
        })
        .collect();
    let tags = (d.code == diagnostic::Code::Unused).then(|| vec![lsp::DiagnosticTag::UNNECESSARY]);
    lsp::Diagnostic {
        range: match (primary, elsewhere.and(import_span)) {
            (Some(l), _) => range(analysis, l.span),
            (None, Some(import)) => range(analysis, import),
            (None, None) => lsp::Range::default(),
        },
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
        }),
        code: Some(lsp::NumberOrString::String(d.code.as_str().to_owned())),
        code_description: None,
        source: Some("planc".to_owned()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags,
        data: None,
    }
}

/// The diagnostics of the analysed document.
pub fn diagnostics(analysis: &Analysis) -> Vec<lsp::Diagnostic> {
    analysis
        .compilation
        .diagnostics
        .iter()
        .map(|d| diagnostic(analysis, d))
        .collect()
}

/// A completion item.
pub fn completion(analysis: &Analysis, c: ide::Completion) -> lsp::CompletionItem {
    lsp::CompletionItem {
        kind: Some(match c.kind {
            CompletionKind::Keyword => lsp::CompletionItemKind::KEYWORD,
            CompletionKind::Type => lsp::CompletionItemKind::TYPE_PARAMETER,
            CompletionKind::Task => lsp::CompletionItemKind::FUNCTION,
            CompletionKind::Step => lsp::CompletionItemKind::STRUCT,
            CompletionKind::Role => lsp::CompletionItemKind::CLASS,
            CompletionKind::Param => lsp::CompletionItemKind::VARIABLE,
        }),
        detail: c.detail,
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit::new(
            range(analysis, c.replace),
            c.label.clone(),
        ))),
        label: c.label,
        ..Default::default()
    }
}

/// The outline kind of a symbol.
fn symbol_kind(kind: SymbolKind) -> lsp::SymbolKind {
    match kind {
        SymbolKind::Plan => lsp::SymbolKind::MODULE,
        SymbolKind::Template => lsp::SymbolKind::INTERFACE,
        SymbolKind::Step => lsp::SymbolKind::NAMESPACE,
        SymbolKind::Task => lsp::SymbolKind::FUNCTION,
        SymbolKind::Role => lsp::SymbolKind::CLASS,
        SymbolKind::Param => lsp::SymbolKind::VARIABLE,
        SymbolKind::Instance => lsp::SymbolKind::OBJECT,
    }
}

/// An outline entry and its children.
#[allow(deprecated)] // `deprecated` is a required field of the type
pub fn document_symbol(analysis: &Analysis, s: ide::Symbol) -> lsp::DocumentSymbol {
    lsp::DocumentSymbol {
        name: s.name,
        detail: s.detail,
        kind: symbol_kind(s.kind),
        tags: None,
        deprecated: None,
        range: range(analysis, s.span),
        selection_range: range(analysis, s.selection),
        children: (!s.children.is_empty()).then(|| {
            s.children
                .into_iter()
                .map(|c| document_symbol(analysis, c))
                .collect()
        }),
    }
}

/// The token types the server uses, in legend order.
pub const TOKEN_TYPES: &[lsp::SemanticTokenType] = &[
    lsp::SemanticTokenType::KEYWORD,
    lsp::SemanticTokenType::COMMENT,
    lsp::SemanticTokenType::STRING,
    lsp::SemanticTokenType::NUMBER,
    lsp::SemanticTokenType::TYPE,
    lsp::SemanticTokenType::NAMESPACE,
    lsp::SemanticTokenType::MACRO,
    lsp::SemanticTokenType::PARAMETER,
    lsp::SemanticTokenType::CLASS,
    lsp::SemanticTokenType::STRUCT,
    lsp::SemanticTokenType::FUNCTION,
];

/// The token modifiers the server uses, in legend order.
pub const TOKEN_MODIFIERS: &[lsp::SemanticTokenModifier] =
    &[lsp::SemanticTokenModifier::DECLARATION];

/// The legend's number of a token's type.
pub fn token_type(kind: TokenKind) -> u32 {
    match kind {
        TokenKind::Keyword | TokenKind::Bool => 0,
        TokenKind::Comment => 1,
        TokenKind::String => 2,
        TokenKind::Number => 3,
        TokenKind::Type => 4,
        TokenKind::Plan => 5,
        TokenKind::Template => 6,
        TokenKind::Param => 7,
        TokenKind::Role => 8,
        TokenKind::Step => 9,
        TokenKind::Task => 10,
    }
}

/// A folding range, or `None` if it fits on one line.
pub fn folding_range(analysis: &Analysis, fold: ide::Fold) -> Option<lsp::FoldingRange> {
    let start_line = analysis.lines.line(fold.start) as u32;
    let end_line = analysis.lines.line(fold.end) as u32;
    (start_line < end_line).then_some(lsp::FoldingRange {
        start_line,
        start_character: None,
        end_line,
        end_character: None,
        kind: match fold.kind {
            FoldKind::Comment => Some(lsp::FoldingRangeKind::Comment),
            FoldKind::Region => None,
        },
        collapsed_text: None,
    })
}

/// Edits grouped into a workspace edit (all in files the client can open).
pub fn workspace_edit(analysis: &Analysis, edits: &[ide::Edit]) -> lsp::WorkspaceEdit {
    let mut changes: std::collections::HashMap<lsp::Uri, Vec<lsp::TextEdit>> =
        std::collections::HashMap::new();
    for edit in edits {
        if let Some(uri) = analysis.uri_of(edit.file) {
            changes.entry(uri).or_default().push(lsp::TextEdit::new(
                range_in(analysis, edit.file, edit.span),
                edit.new_text.clone(),
            ));
        }
    }
    lsp::WorkspaceEdit {
        changes: Some(changes),
        ..Default::default()
    }
}
