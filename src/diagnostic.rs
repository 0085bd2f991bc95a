//! Diagnostics: what planc tells a user about their file, with stable codes.

use crate::span::{FileId, Span};

/// How bad a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Warning,
    Error,
}

impl Severity {
    /// `"error"` or `"warning"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

macro_rules! codes {
    ($($variant:ident => $name:literal, $severity:ident, $summary:literal;)*) => {
        /// A stable diagnostic code. Each has a section in `docs/diagnostics.md`.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Code { $($variant,)* }

        impl Code {
            /// Every code, in documentation order.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The code as users see it, e.g. `planc::cycle`.
            pub fn as_str(self) -> &'static str {
                match self { $(Code::$variant => concat!("planc::", $name),)* }
            }

            /// The severity diagnostics with this code have.
            pub fn severity(self) -> Severity {
                match self { $(Code::$variant => Severity::$severity,)* }
            }

            /// One line saying what the code is about.
            pub fn summary(self) -> &'static str {
                match self { $(Code::$variant => $summary,)* }
            }
        }
    };
}

codes! {
    Syntax => "syntax", Error, "the text does not follow the grammar";
    Duplicate => "duplicate", Error, "a name is declared twice";
    DuplicateField => "duplicate_field", Error, "a field is given twice";
    UnknownRef => "unknown_ref", Error, "`after` names no task or step";
    UnknownRole => "unknown_role", Error, "`assignee` names no declared role";
    UnknownParam => "unknown_param", Error, "a `{param}` or `--set` names no parameter";
    MissingParam => "missing_param", Error, "a parameter without default was not given";
    ParamType => "param_type", Error, "a value does not have its parameter's type";
    InvalidValue => "invalid_value", Error, "a number or setting is out of range";
    SelfDependency => "self_dependency", Error, "a task comes after itself";
    Cycle => "cycle", Error, "tasks wait for each other in a circle";
    MissingGoal => "missing_goal", Error, "a plan has no `goal`";
    NoPlan => "no_plan", Error, "a file to build holds no `plan` block";
    MultiplePlans => "multiple_plans", Error, "a file holds more than one `plan` block";
    Import => "import", Error, "an imported file cannot be read or imports itself";
    UnknownTemplate => "unknown_template", Error, "`use` names no template";
    TemplateArg => "template_arg", Error, "a template argument is unknown, missing or given twice";
    TemplateCycle => "template_cycle", Error, "a template uses itself";
    InvalidDocument => "invalid_document", Error, "a JSON plan document lacks a field or has one of the wrong type";
    InvalidStatus => "invalid_status", Error, "a JSON plan document has an unknown status";
    Limit => "limit", Error, "an input exceeds one of planc's limits";
    Read => "read", Error, "a file named on the command line cannot be read";
    RedundantDependency => "redundant_dependency", Warning, "a dependency is already implied by another";
    UnknownField => "unknown_field", Warning, "a JSON plan document has a field planc does not know (kept in `extra`)";
    Unused => "unused", Warning, "a role or parameter is never used";
    Empty => "empty", Warning, "a plan or step has no tasks";
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A labelled span: where a diagnostic points and what it says there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub file: FileId,
    pub span: Span,
    pub message: String,
}

/// A machine-applicable edit that fixes a diagnostic ("did you mean").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub file: FileId,
    pub span: Span,
    pub replacement: String,
}

/// One problem found in a file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: Code,
    pub severity: Severity,
    pub message: String,
    /// Where it points; the first label is the primary location.
    pub labels: Vec<Label>,
    pub help: Option<String>,
    pub fix: Option<Fix>,
}

impl Diagnostic {
    /// A diagnostic with the code's own severity and no labels yet.
    pub fn new(code: Code, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            code,
            severity: code.severity(),
            message: message.into(),
            labels: Vec::new(),
            help: None,
            fix: None,
        }
    }

    /// Adds a label.
    pub fn label(mut self, file: FileId, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label {
            file,
            span,
            message: message.into(),
        });
        self
    }

    /// Sets the help text.
    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    /// Sets the help text if there is one.
    pub fn maybe_help(mut self, help: Option<String>) -> Diagnostic {
        if help.is_some() {
            self.help = help;
        }
        self
    }

    /// Sets a machine-applicable fix.
    pub fn fix(mut self, file: FileId, span: Span, replacement: impl Into<String>) -> Diagnostic {
        self.fix = Some(Fix {
            file,
            span,
            replacement: replacement.into(),
        });
        self
    }

    /// The primary location, if the diagnostic has one.
    pub fn primary(&self) -> Option<&Label> {
        self.labels.first()
    }

    /// Whether its text quotes `name` (as `` `name` ``, the way messages
    /// name things): in the message, a label, the help or the fix.
    pub(crate) fn quotes(&self, name: &str) -> bool {
        let quoted = format!("`{name}`");
        self.message.contains(&quoted)
            || self.labels.iter().any(|l| l.message.contains(&quoted))
            || self.help.as_ref().is_some_and(|h| h.contains(&quoted))
            || self.fix.as_ref().is_some_and(|f| f.replacement == name)
    }

    /// Whether this is an error (not a warning).
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// The diagnostic with its labels and fix in `file` moved by `map` (to
    /// the text after an edit); `None` if one cannot be.
    pub(crate) fn moved(
        &self,
        file: FileId,
        map: &impl Fn(Span) -> Option<Span>,
    ) -> Option<Diagnostic> {
        let mut d = self.clone();
        for label in d.labels.iter_mut().filter(|l| l.file == file) {
            label.span = map(label.span)?;
        }
        if let Some(fix) = d.fix.as_mut().filter(|f| f.file == file) {
            fix.span = map(fix.span)?;
        }
        Some(d)
    }
}

/// Sorts diagnostics by file and position, so output is stable and readable.
pub fn sort(diagnostics: &mut [Diagnostic]) {
    diagnostics.sort_by_key(|d| {
        d.primary()
            .map(|l| (l.file, l.span.start(), l.span.end()))
            .unwrap_or_default()
    });
}

/// The most diagnostics of one code a check reports (syntax errors have
/// their own bound per file, `syntax::MAX_SYNTAX_ERRORS`); the rest are
/// counted in one `planc::limit` note per code. Past a hundred they say
/// nothing new, and keeping them all would make output and memory grow with
/// the number of mistakes (128,000 cycles printed 64 MiB).
pub const MAX_PER_CODE: usize = 100;

/// The note that counts `hidden` diagnostics of `code` left out after the
/// first [`MAX_PER_CODE`], pointing at the first of them (`next`); it has
/// the code's severity, so hidden warnings do not make a check fail.
pub fn more_of(code: Code, hidden: usize, next: Option<(FileId, Span)>) -> Diagnostic {
    let (noun, verb) = if hidden == 1 {
        ("diagnostic", "is")
    } else {
        ("diagnostics", "are")
    };
    let mut note = Diagnostic::new(
        Code::Limit,
        format!(
            "{hidden} more `{code}` {noun} {verb} not shown; planc reports at most {MAX_PER_CODE} of each code"
        ),
    )
    .help(format!("fix the `{code}` diagnostics above and check again"));
    note.severity = code.severity();
    if let Some((file, span)) = next {
        note = note.label(file, Span::at(span.start()), "the next one is here");
    }
    note
}

/// Keeps the first [`MAX_PER_CODE`] diagnostics of each code (in the order
/// given) and adds a [`more_of`] note for each code that had more. Syntax
/// errors and limits are kept: they are bounded where they are made.
pub fn cap_per_code(diagnostics: &mut Vec<Diagnostic>) {
    // Per code: how many, and where the first one left out points.
    type Seen = (usize, Option<(FileId, Span)>);
    let mut seen: std::collections::HashMap<Code, Seen> = std::collections::HashMap::new();
    diagnostics.retain(|d| {
        if matches!(d.code, Code::Syntax | Code::Limit) {
            return true;
        }
        let (count, next) = seen.entry(d.code).or_insert((0, None));
        *count += 1;
        if *count == MAX_PER_CODE + 1 {
            *next = d.primary().map(|l| (l.file, l.span));
        }
        *count <= MAX_PER_CODE
    });
    let mut capped: Vec<(Code, Seen)> = seen
        .into_iter()
        .filter(|(_, (count, _))| *count > MAX_PER_CODE)
        .collect();
    capped.sort_by_key(|&(code, _)| code);
    for (code, (count, next)) in capped {
        diagnostics.push(more_of(code, count - MAX_PER_CODE, next));
    }
}
