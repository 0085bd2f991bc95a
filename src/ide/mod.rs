//! IDE queries over one [`Compilation`]: hover, navigation, rename,
//! completion, outline, highlighting, folding, formatting and quick fixes.
//!
//! Every query is a pure function of a compilation and a byte offset, and
//! returns plain data in byte offsets. Nothing here knows the Language Server
//! Protocol: the `planc-lsp` crate converts positions and types at its edge
//! (rust-analyzer's rule: the IDE layer does no IO and speaks no protocol).

mod completion;
mod fixes;
mod folding;
mod formatting;
mod hover;
mod lexer;
mod navigation;
mod rename;
mod symbols;
mod tokens;

pub use completion::{
    completions, completions_capped, Completion, CompletionKind, MAX_COMPLETIONS,
};
pub use fixes::{apply_fixes, quick_fixes, QuickFix};
pub use folding::{folding_ranges, Fold, FoldKind};
pub use formatting::formatting;
pub use hover::{hover, Hover};
pub use navigation::{definition, references};
pub use rename::{prepare_rename, rename, RenameError};
pub use symbols::{document_symbols, Symbol};
pub use tokens::{
    semantic_tokens, semantic_tokens_in, EncodedToken, Token, TokenKind, TokenStore, TokensDelta,
};

use crate::compile::Compilation;
use crate::ir::{self, SymbolKind};
use crate::span::{FileId, Span};
use crate::syntax::ast;

/// A span in a file: where a result points.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Location {
    pub file: FileId,
    pub span: Span,
}

/// A text replacement: `span` in `file` becomes `new_text`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub file: FileId,
    pub span: Span,
    pub new_text: String,
}

/// The syntax tree of the file being edited: the one place that knows where
/// a compilation keeps it.
fn root_syntax(compilation: &Compilation) -> &ast::File {
    compilation.syntax()
}

/// The text of the file being edited.
fn root_text(compilation: &Compilation) -> &str {
    &compilation.sources.get(compilation.file).text
}

/// Whether two kinds of names share one namespace (tasks and steps do, since
/// `after` can name either).
fn same_namespace(a: SymbolKind, b: SymbolKind) -> bool {
    let group = |k| match k {
        SymbolKind::Task | SymbolKind::Step => SymbolKind::Task,
        other => other,
    };
    group(a) == group(b)
}

/// The checked task a task definition declares, and its index in the plan.
///
/// The checker defines tasks in source order and lowers them in the same
/// order, so the k-th task definition is the k-th task of the plan.
fn task_of(compilation: &Compilation, def: usize) -> Option<(usize, &ir::Task)> {
    nth_of_kind(compilation, def, SymbolKind::Task).and_then(|k| {
        let task: &ir::Task = compilation.checked.plan.as_ref()?.tasks.get(k)?;
        (task.key() == compilation.checked.symbols.definition(def)?.name()).then_some((k, task))
    })
}

/// The checked step a step definition declares (same order argument as [`task_of`]).
fn step_of(compilation: &Compilation, def: usize) -> Option<&ir::Step> {
    nth_of_kind(compilation, def, SymbolKind::Step).and_then(|k| {
        let step = compilation.checked.plan.as_ref()?.steps.get(k)?;
        (step.id == compilation.checked.symbols.definition(def)?.name()).then_some(step)
    })
}

/// The checked role a role definition declares.
fn role_of(compilation: &Compilation, def: usize) -> Option<&ir::Role> {
    nth_of_kind(compilation, def, SymbolKind::Role).and_then(|k| {
        let role = compilation.checked.plan.as_ref()?.roles.get(k)?;
        (role.id == compilation.checked.symbols.definition(def)?.name()).then_some(role)
    })
}

/// The position of `def` among the definitions of its kind.
fn nth_of_kind(compilation: &Compilation, def: usize, kind: SymbolKind) -> Option<usize> {
    let definitions = &compilation.checked.symbols.definitions;
    if definitions.get(def)?.kind() != kind {
        return None;
    }
    Some(
        definitions
            .range(0..def)
            .filter(|d| d.kind() == kind)
            .count(),
    )
}

#[cfg(test)]
mod test_support {
    use crate::check::Options;
    use crate::compile::{compile, Compilation};

    /// Compiles `text` with the cursor marker `$0` removed; returns the offset of the marker.
    pub(crate) fn compile_at(text: &str) -> (Compilation, usize) {
        let offset = text.find("$0").expect("the text has a $0 cursor");
        let text = text.replacen("$0", "", 1);
        (compile("test.plan", &text, &Options::default()), offset)
    }

    /// Compiles `text`.
    pub(crate) fn compile_text(text: &str) -> Compilation {
        compile("test.plan", text, &Options::default())
    }

    /// The text a span covers.
    pub(crate) fn slice(compilation: &Compilation, span: crate::span::Span) -> String {
        compilation.sources.get(compilation.file).text[span.range()].to_owned()
    }

    pub(crate) const PLAN: &str = r#"plan demo {
    goal "Ship {thing}"
    param thing: string = "it"
    role dev "Writes code"
    step build "Build it" {
        task compile "Compile" { assignee dev }
        task test "Test" { after compile }
    }
    task ship "Ship" {
        after build
        assignee dev
        retry 2
    }
}
"#;
}
