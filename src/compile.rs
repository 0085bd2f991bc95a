//! One call from source text to checked plan: the entry point the CLI, the
//! language server and the MCP server share.

use crate::check::{self, Checked, Options};
use crate::diagnostic::{self, Code, Diagnostic};
use crate::document::PlanDocument;
use crate::emit;
use crate::span::{FileId, SourceMap, Span};
use crate::syntax::{self, ast};

/// Everything known about one compiled file.
#[derive(Clone, Debug)]
pub struct Compilation {
    pub sources: SourceMap,
    pub file: FileId,
    pub syntax: ast::File,
    pub checked: Checked,
    /// Syntax and check diagnostics, sorted by position.
    pub diagnostics: Vec<Diagnostic>,
}

impl Compilation {
    /// Whether any diagnostic is an error.
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }

    /// The plan document, if the file has a plan and no errors.
    pub fn document(&self) -> Option<PlanDocument> {
        if self.has_errors() {
            return None;
        }
        let plan = self.checked.plan.as_ref()?;
        let source = &self.sources.get(self.file).name;
        let source = (source != STDIN_NAME).then_some(source.as_str());
        Some(emit::document(plan, source))
    }
}

/// The name standard input is shown under.
pub const STDIN_NAME: &str = "<stdin>";

/// Parses and checks `text`, shown to the user as `name`.
pub fn compile(name: &str, text: &str, options: &Options) -> Compilation {
    let mut sources = SourceMap::new();
    let file = sources.add(name, text);
    let parsed = syntax::parse(text, file);
    let checked = check::check(&parsed.file, file, options);
    let mut diagnostics = parsed.diagnostics;
    // Syntax errors leave holes in the tree; name-resolution errors there are
    // mostly echoes of them, so only the syntax errors are shown.
    if diagnostics.is_empty() {
        diagnostics.extend(checked.diagnostics.iter().cloned());
    } else {
        diagnostics.extend(
            checked
                .diagnostics
                .iter()
                .filter(|d| {
                    !matches!(
                        d.code,
                        Code::UnknownRef | Code::Unused | Code::Empty | Code::MissingGoal
                    )
                })
                .cloned(),
        );
    }
    diagnostic::sort(&mut diagnostics);
    Compilation {
        sources,
        file,
        syntax: parsed.file,
        checked,
        diagnostics,
    }
}

/// Decodes a file's bytes as UTF-8, or says where it is not.
///
/// On failure the lossily decoded text is returned with the diagnostic, so the
/// label can show the place (offsets before the first bad byte are exact).
pub fn decode(name: &str, bytes: Vec<u8>) -> Result<String, Box<(SourceMap, Diagnostic)>> {
    match String::from_utf8(bytes) {
        Ok(text) => Ok(text),
        Err(error) => {
            let offset = error.utf8_error().valid_up_to();
            let lossy = String::from_utf8_lossy(error.as_bytes()).into_owned();
            let mut sources = SourceMap::new();
            let file = sources.add(name, lossy);
            let diagnostic = Diagnostic::new(
                Code::Syntax,
                format!("the file is not valid UTF-8 (byte {offset})"),
            )
            .label(file, Span::new(offset, offset + 1), "not UTF-8")
            .help("planc reads UTF-8 text; re-save the file as UTF-8");
            Err(Box::new((sources, diagnostic)))
        }
    }
}

/// The error for building a file that holds no `plan` (a library).
pub fn no_plan(compilation: &Compilation) -> Diagnostic {
    let name = &compilation.sources.get(compilation.file).name;
    Diagnostic::new(Code::NoPlan, format!("{name} holds no `plan` to build"))
        .label(
            compilation.file,
            Span::at(0),
            "no `plan NAME { … }` in this file",
        )
        .help("a file without a plan is a library: import it from a plan and build that")
}
