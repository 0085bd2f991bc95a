//! Diagnostics as GitHub Actions workflow commands (annotations on the PR).

use super::positions;
use super::source::Lines;
use crate::diagnostic::{Diagnostic, Severity};
use crate::span::SourceMap;

/// Renders one `::error …::message` (or `::warning`) line per diagnostic.
pub fn github(diagnostics: &[Diagnostic], sources: &SourceMap) -> String {
    let mut out = String::new();
    let mut lines = Lines::default();
    for d in diagnostics {
        let command = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        let mut properties = Vec::new();
        if let Some(label) = d.primary() {
            let (start, end) = positions(sources, &mut lines, label);
            properties.push(format!("file={}", property(&sources.get(label.file).name)));
            properties.push(format!("line={}", start.line));
            properties.push(format!("col={}", start.column));
            properties.push(format!("endLine={}", end.line));
            properties.push(format!("endColumn={}", end.column));
        }
        properties.push(format!("title={}", property(d.code.as_str())));
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        out.push_str(&format!(
            "::{command} {}::{}\n",
            properties.join(","),
            data(&message)
        ));
    }
    out
}

fn data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}
