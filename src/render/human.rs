//! Human-readable diagnostics through miette: graphical, with or without colour.

use std::fmt;

use miette::{GraphicalReportHandler, GraphicalTheme, LabeledSpan, SourceCode};

use super::positions;
use super::source::{IndexedSource, Lines};
use crate::diagnostic::{Diagnostic, Severity};
use crate::escape;
use crate::span::{FileId, SourceMap};

/// The width miette wraps text at.
const WIDTH: usize = 100;

/// Lines longer than this are not shown as source snippets (a 10 MB line
/// would drown the terminal); the location is given in words instead.
const MAX_SNIPPET_LINE: usize = 400;

/// Renders diagnostics for a terminal (`color`) or for a pipe or log (plain).
pub fn human(diagnostics: &[Diagnostic], sources: &SourceMap, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(WIDTH)
        .with_links(false);
    // Word wrapping is most of miette's work for a short report, and leaves
    // text that fits on its line as it is: such reports skip it.
    let unwrapped = handler.clone().with_wrap_lines(false);
    let mut out = String::new();
    let mut lines = Lines::default();
    for diagnostic in diagnostics {
        let report = Report::new(diagnostic, sources, &mut lines);
        let handler = if !color && report.fits_unwrapped() {
            &unwrapped
        } else {
            &handler
        };
        if handler.render_report(&mut out, &report).is_err() {
            out.push_str(&format!("{}: {}\n", diagnostic.code, diagnostic.message));
        }
        out.push('\n');
    }
    out
}

/// One diagnostic (or the part of it in one file) as miette sees it.
struct Report {
    code: String,
    severity: Severity,
    message: String,
    help: Option<String>,
    source: Option<IndexedSource>,
    labels: Vec<LabeledSpan>,
    related: Vec<Report>,
}

impl Report {
    fn new(diagnostic: &Diagnostic, sources: &SourceMap, lines: &mut Lines) -> Report {
        // Messages, labels and help quote names and strings from the file:
        // each is shown on one line, escaped (see `crate::escape`).
        let mut message = escape::line(&diagnostic.message).into_owned();
        let mut files: Vec<FileId> = Vec::new();
        for label in &diagnostic.labels {
            if !files.contains(&label.file) {
                files.push(label.file);
            }
        }
        let parts: Vec<_> = files
            .iter()
            .map(|&file| Report::part(diagnostic, sources, lines, file))
            .collect();
        let mut parts = parts.into_iter();
        let mut report = Report {
            code: diagnostic.code.to_string(),
            severity: diagnostic.severity,
            message: String::new(),
            help: diagnostic
                .help
                .as_deref()
                .map(|help| escape::line(help).into_owned()),
            source: None,
            labels: Vec::new(),
            related: Vec::new(),
        };
        if let Some((source, too_long, labels)) = parts.next() {
            if too_long {
                let (start, _) = positions(sources, lines, &diagnostic.labels[0]);
                message = format!(
                    "{message}\n  at {}:{}:{}",
                    source.name, start.line, start.column
                );
            } else {
                report.source = Some(source);
                report.labels = labels;
            }
        }
        for (source, too_long, labels) in parts {
            if too_long {
                continue;
            }
            report.related.push(Report {
                code: String::new(),
                severity: Severity::Warning,
                message: format!("in {}", source.name),
                help: None,
                source: Some(source),
                labels,
                related: Vec::new(),
            });
        }
        report.message = message;
        report
    }

    /// The part of `diagnostic` in `file`: the file's text (or the lines
    /// shown of a large one), whether a label's line is too long to show,
    /// and the labels in it.
    fn part(
        diagnostic: &Diagnostic,
        sources: &SourceMap,
        lines: &mut Lines,
        file: FileId,
    ) -> (IndexedSource, bool, Vec<LabeledSpan>) {
        let source = sources.get(file);
        let shown = lines.shown(sources, file);
        let (text, index) = match &shown {
            Some(shown) => (shown.text.clone(), shown.lines.clone()),
            None => (source.text.clone(), lines.of(sources, file)),
        };
        let at = |offset: usize| shown.as_ref().map_or(offset, |s| s.offset(offset));
        let too_long = diagnostic
            .labels
            .iter()
            .filter(|l| l.file == file)
            .any(|l| line_len(&source.text, l.span.start()) > MAX_SNIPPET_LINE);
        let labels: Vec<LabeledSpan> = diagnostic
            .labels
            .iter()
            .enumerate()
            .filter(|(_, l)| l.file == file)
            .map(|(i, l)| {
                let label = (!l.message.is_empty()).then(|| escape::line(&l.message).into_owned());
                let start = at(l.span.start());
                let span = (start, at(l.span.end()) - start);
                if i == 0 {
                    LabeledSpan::new_primary_with_span(label, span)
                } else {
                    LabeledSpan::new_with_span(label, span)
                }
            })
            .collect();
        let source = IndexedSource {
            name: escape::path(&source.name).into_owned(),
            text,
            lines: index,
        };
        (source, too_long, labels)
    }
}

impl Report {
    /// Whether wrapping at [`WIDTH`] would leave every wrapped text of this
    /// report as it is: the message after `"  ⚠ "` and the help after
    /// `"  help: "`, each one line of printable ASCII, no space at either
    /// end, short enough to fit (miette wraps at `WIDTH - 2` columns).
    fn fits_unwrapped(&self) -> bool {
        let fits = |text: &str, indent: usize| {
            !text.is_empty()
                && text.bytes().all(|b| (b' '..=b'~').contains(&b))
                && !text.starts_with(' ')
                && !text.ends_with(' ')
                && indent + text.len() < WIDTH - 2
        };
        // Related reports are wrapped again as whole blocks: leave them to miette.
        self.related.is_empty()
            && fits(&self.message, 4)
            && self.help.as_deref().is_none_or(|help| fits(help, 8))
    }
}

fn line_len(text: &str, offset: usize) -> usize {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    end - start
}

impl fmt::Debug for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Report {}

impl miette::Diagnostic for Report {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        (!self.code.is_empty()).then(|| Box::new(&self.code) as Box<dyn fmt::Display>)
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning if self.code.is_empty() => miette::Severity::Advice,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn SourceCode> {
        self.source.as_ref().map(|s| s as &dyn SourceCode)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        if self.labels.is_empty() {
            return None;
        }
        Some(Box::new(self.labels.iter().cloned()))
    }

    fn related<'a>(&'a self) -> Option<Box<dyn Iterator<Item = &'a dyn miette::Diagnostic> + 'a>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(
            self.related.iter().map(|r| r as &dyn miette::Diagnostic),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Code;
    use crate::span::Span;

    /// The shortcut must print what wrapping prints, at every length around
    /// the width and with spaces where a line could break.
    #[test]
    fn unwrapped_reports_print_as_wrapped_ones() {
        let mut sources = SourceMap::new();
        let file = sources.add("a.plan", "plan p {\n    task a \"A\" { after b }\n}\n");
        let wrapping = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
            .with_width(WIDTH)
            .with_links(false);
        let unwrapped = wrapping.clone().with_wrap_lines(false);
        let mut shortcuts = 0;
        for len in 1..110 {
            for word in [3, 7, 40, 200] {
                let text: String = (0..len)
                    .map(|i| if i % (word + 1) == word { ' ' } else { 'x' })
                    .collect();
                for help in [None, Some(text.clone())] {
                    let diagnostic = Diagnostic::new(Code::RedundantDependency, text.clone())
                        .label(file, Span::new(33, 34), "here")
                        .maybe_help(help);
                    let mut lines = Lines::default();
                    let report = Report::new(&diagnostic, &sources, &mut lines);
                    if !report.fits_unwrapped() {
                        continue;
                    }
                    shortcuts += 1;
                    let (mut a, mut b) = (String::new(), String::new());
                    wrapping.render_report(&mut a, &report).unwrap();
                    unwrapped.render_report(&mut b, &report).unwrap();
                    assert_eq!(a, b, "message {text:?}");
                }
            }
        }
        assert!(shortcuts > 300, "{shortcuts}");
    }

    /// Text rich in control, C1 and bidi characters, among any others.
    fn hostile() -> impl proptest::strategy::Strategy<Value = String> {
        use proptest::prelude::*;
        let c = prop_oneof![
            any::<char>(),
            prop::char::range('\0', '\u{a0}'),
            prop::sample::select(vec!['\n', '\r', '\t', '\u{202e}', '\u{2067}', '\u{200f}']),
        ];
        prop::collection::vec(c, 0..60).prop_map(|cs| cs.into_iter().collect())
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(
            crate::generate::fuzz_cases(256)
        ))]

        /// Whatever the file, its name and the message hold, the rendered
        /// report holds no hidden character but its own line breaks.
        #[test]
        fn nothing_hidden_reaches_the_terminal(
            text in hostile(),
            name in hostile(),
            message in hostile(),
            at in 0usize..60,
        ) {
            let text = format!("{text}@");
            let offsets: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
            let start = offsets[at % offsets.len()];
            let end = start + text[start..].chars().next().map_or(0, char::len_utf8);
            let mut sources = SourceMap::new();
            let file = sources.add(&name, text.as_str());
            let diagnostic = Diagnostic::new(Code::Syntax, message.clone())
                .label(file, Span::new(start, end), message.clone())
                .maybe_help(Some(message));
            let out = human(&[diagnostic], &sources, false);
            let hidden = out.chars().find(|&c| crate::escape::must_escape(c) && c != '\n');
            proptest::prop_assert!(hidden.is_none(), "{:?} in\n{}", hidden, out);
        }
    }
}
