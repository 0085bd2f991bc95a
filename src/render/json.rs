//! Diagnostics as JSON: one object per diagnostic, in an array.

use serde::Serialize;

use super::positions;
use super::source::Lines;
use crate::diagnostic::Diagnostic;
use crate::span::SourceMap;

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    code: &'static str,
    severity: &'static str,
    file: Option<&'a str>,
    line: Option<usize>,
    column: Option<usize>,
    end_line: Option<usize>,
    end_column: Option<usize>,
    span: Option<JsonSpan>,
    message: &'a str,
    help: Option<&'a str>,
    labels: Vec<JsonLabel<'a>>,
    fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonSpan {
    start: usize,
    end: usize,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    file: &'a str,
    line: usize,
    column: usize,
    span: JsonSpan,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    file: &'a str,
    span: JsonSpan,
    replacement: &'a str,
}

/// Renders diagnostics as a pretty JSON array, with a final newline. Lines
/// and columns are 1-based; columns count Unicode characters; spans are byte
/// offsets.
pub fn json(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    json_files(&[(diagnostics, sources)])
}

/// Like [`json`], for the diagnostics of several files in one array.
pub fn json_files(files: &[(&[Diagnostic], &SourceMap)]) -> String {
    // Written straight from the structs: the same text as through
    // `serde_json::Value`, without building a map per diagnostic.
    let all: Vec<JsonDiagnostic<'_>> = files
        .iter()
        .flat_map(|&(diagnostics, sources)| objects(diagnostics, sources))
        .collect();
    let mut text = serde_json::to_string_pretty(&all).expect("diagnostics serialise");
    text.push('\n');
    text
}

/// The JSON objects of diagnostics, to merge the output of several files.
pub fn json_values(diagnostics: &[Diagnostic], sources: &SourceMap) -> Vec<serde_json::Value> {
    objects(diagnostics, sources)
        .map(|d| serde_json::to_value(d).expect("diagnostics serialise"))
        .collect()
}

fn objects<'a>(
    diagnostics: &'a [Diagnostic],
    sources: &'a SourceMap,
) -> impl Iterator<Item = JsonDiagnostic<'a>> + 'a {
    let mut lines = Lines::default();
    diagnostics.iter().map(move |d| {
        let primary = d.primary().map(|l| (l, positions(sources, &mut lines, l)));
        JsonDiagnostic {
            code: d.code.as_str(),
            severity: d.severity.as_str(),
            file: primary.map(|(l, _)| sources.get(l.file).name.as_str()),
            line: primary.map(|(_, (s, _))| s.line),
            column: primary.map(|(_, (s, _))| s.column),
            end_line: primary.map(|(_, (_, e))| e.line),
            end_column: primary.map(|(_, (_, e))| e.column),
            span: primary.map(|(l, _)| JsonSpan {
                start: l.span.start(),
                end: l.span.end(),
            }),
            message: &d.message,
            help: d.help.as_deref(),
            labels: d
                .labels
                .iter()
                .map(|l| {
                    let (start, _) = positions(sources, &mut lines, l);
                    JsonLabel {
                        file: &sources.get(l.file).name,
                        line: start.line,
                        column: start.column,
                        span: JsonSpan {
                            start: l.span.start(),
                            end: l.span.end(),
                        },
                        message: &l.message,
                    }
                })
                .collect(),
            fix: d.fix.as_ref().map(|f| JsonFix {
                file: &sources.get(f.file).name,
                span: JsonSpan {
                    start: f.span.start(),
                    end: f.span.end(),
                },
                replacement: &f.replacement,
            }),
        }
    })
}
