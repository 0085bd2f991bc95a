//! Rename a task, step, role or parameter everywhere it is named.

use pest::Parser as _;

use super::{same_namespace, Edit, Location};
use crate::compile::Compilation;
use crate::syntax::grammar::{PlanParser, Rule};

/// Why a rename was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RenameError {
    /// The cursor is not on a name that can be renamed.
    NoSymbol,
    /// The new name is not an identifier.
    NotIdentifier(String),
    /// The new name is a keyword.
    Keyword(String),
    /// The new name is already declared in the same namespace.
    Clash {
        name: String,
        kind: &'static str,
        existing: Location,
    },
}

impl std::fmt::Display for RenameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RenameError::NoSymbol => {
                f.write_str("there is no task, step, role or parameter name here to rename")
            }
            RenameError::NotIdentifier(name) => write!(
                f,
                "`{name}` is not a name: a name starts with a letter or `_` and goes on with letters, digits or `_`"
            ),
            RenameError::Keyword(name) => {
                write!(f, "`{name}` is a keyword and cannot be used as a name")
            }
            RenameError::Clash { name, kind, .. } => {
                write!(f, "a {kind} named `{name}` already exists")
            }
        }
    }
}

impl std::error::Error for RenameError {}

/// The span of the renamable name at `offset`, and the name.
pub fn prepare_rename(compilation: &Compilation, offset: usize) -> Option<(Location, String)> {
    let symbols = &compilation.checked.symbols;
    let def = symbols.at(compilation.file, offset)?;
    let definition = symbols.definition(def)?;
    let name = definition.name();
    let span = symbols
        .definitions
        .iter()
        .filter(|d| d.file() == compilation.file)
        .map(|d| d.span())
        .chain(
            symbols
                .references
                .iter()
                .filter(|r| r.file == compilation.file)
                .map(|r| r.span),
        )
        .find(|span| span.touches(offset))?;
    Some((
        Location {
            file: compilation.file,
            span,
        },
        name.to_string(),
    ))
}

/// The edits that rename the name at `offset` to `new_name`: its declaration
/// and every reference.
pub fn rename(
    compilation: &Compilation,
    offset: usize,
    new_name: &str,
) -> Result<Vec<Edit>, RenameError> {
    let symbols = &compilation.checked.symbols;
    let def = symbols
        .at(compilation.file, offset)
        .ok_or(RenameError::NoSymbol)?;
    let definition = &symbols.definition(def).ok_or(RenameError::NoSymbol)?;
    if is_whole(Rule::keyword, new_name) {
        return Err(RenameError::Keyword(new_name.to_owned()));
    }
    if !is_whole(Rule::ident, new_name) {
        return Err(RenameError::NotIdentifier(new_name.to_owned()));
    }
    if new_name != definition.name() {
        let clash = symbols.definitions.iter().find(|other| {
            other.name() == new_name && same_namespace(other.kind(), definition.kind())
        });
        if let Some(other) = clash {
            return Err(RenameError::Clash {
                name: new_name.to_owned(),
                kind: other.kind().as_str(),
                existing: Location {
                    file: other.file(),
                    span: other.span(),
                },
            });
        }
    }
    let mut edits: Vec<Edit> = std::iter::once((definition.file(), definition.span()))
        .chain(symbols.references_to(def).map(|r| (r.file, r.span)))
        .map(|(file, span)| Edit {
            file,
            span,
            new_text: new_name.to_owned(),
        })
        .collect();
    edits.sort_by_key(|e| (e.file, e.span));
    edits.dedup();
    Ok(edits)
}

/// Whether the grammar's `rule` matches all of `text`.
fn is_whole(rule: Rule, text: &str) -> bool {
    match PlanParser::parse(rule, text) {
        Ok(mut pairs) => pairs
            .next()
            .is_some_and(|pair| pair.as_span().end() == text.len()),
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::{compile_at, slice, PLAN};

    #[test]
    fn renames_the_declaration_and_every_reference() {
        let (c, offset) = compile_at(&PLAN.replace("task compile", "task comp$0ile"));
        let edits = rename(&c, offset, "编译").expect("renames");
        assert_eq!(edits.len(), 2);
        assert!(edits
            .iter()
            .all(|e| slice(&c, e.span) == "compile" && e.new_text == "编译"));
    }

    #[test]
    fn renames_a_parameter_inside_strings() {
        let (c, offset) = compile_at(&PLAN.replace("{thing}", "{th$0ing}"));
        let edits = rename(&c, offset, "what").expect("renames");
        assert_eq!(edits.len(), 2);
    }

    #[test]
    fn refuses_clashes_keywords_and_non_names() {
        let (c, offset) = compile_at(&PLAN.replace("task compile", "task $0compile"));
        let clash = rename(&c, offset, "build").unwrap_err();
        assert_eq!(clash.to_string(), "a step named `build` already exists");
        assert_eq!(
            rename(&c, offset, "after").unwrap_err(),
            RenameError::Keyword("after".into())
        );
        assert_eq!(
            rename(&c, offset, "two words").unwrap_err(),
            RenameError::NotIdentifier("two words".into())
        );
        assert_eq!(
            rename(&c, offset, "").unwrap_err(),
            RenameError::NotIdentifier(String::new())
        );
        // A role may share a task's name: different namespaces.
        assert!(rename(&c, offset, "dev").is_ok());
    }

    #[test]
    fn prepare_gives_the_name_under_the_cursor() {
        let (c, offset) = compile_at(&PLAN.replace("assignee dev\n", "assignee d$0ev\n"));
        let (location, name) = prepare_rename(&c, offset).expect("a name");
        assert_eq!(name, "dev");
        assert_eq!(slice(&c, location.span), "dev");
        let (c, offset) = compile_at(&PLAN.replace("goal", "go$0al"));
        assert_eq!(prepare_rename(&c, offset), None);
    }
}
