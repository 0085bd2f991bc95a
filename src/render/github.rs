//! Diagnostics as GitHub Actions workflow commands (annotations on the PR).

use std::fmt::Write;

use super::positions;
use super::source::Lines;
use crate::diagnostic::{Diagnostic, Severity};
use crate::escape;
use crate::span::SourceMap;

/// Renders one `::error …::message` (or `::warning`) line per diagnostic.
///
/// The message holds what the human format shows as text: the message, the
/// labels ("did you mean …") and the help, one per line, each escaped as
/// [`escape::line`] does so only planc's own line breaks remain; then the
/// whole is escaped as GitHub's workflow commands require (`%`, `\r`, `\n`
/// in data; also `:` and `,` in properties). The `file` property is the
/// name exactly, so GitHub finds the file, unless it holds a character
/// GitHub has no escape for (see [`data`]).
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
        // What the human format shows around the snippet, one line each:
        // the message, the labels (the primary one is the annotated range,
        // the others say where they point) and the help.
        let mut message = escape::line(&d.message).into_owned();
        for (i, label) in d.labels.iter().enumerate() {
            if label.message.is_empty() {
                continue;
            }
            message.push('\n');
            if i > 0 {
                let (start, _) = positions(sources, &mut lines, label);
                let name = escape::path(&sources.get(label.file).name);
                let _ = write!(message, "{name}:{}:{}: ", start.line, start.column);
            }
            message.push_str(&escape::line(&label.message));
        }
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(&escape::line(help));
        }
        out.push_str(&format!(
            "::{command} {}::{}\n",
            properties.join(","),
            data(&message)
        ));
    }
    out
}

/// `text` as a command's data: GitHub's escapes, then the characters GitHub
/// has none for written as [`escape::line`] writes them (a file name with an
/// ESC in it would otherwise reach a terminal that shows the log).
fn data(text: &str) -> String {
    let encoded = text
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    escape::line(&encoded).into_owned()
}

fn property(text: &str) -> String {
    data(text).replace(':', "%3A").replace(',', "%2C")
}
