//! Go to definition and find references.

use super::Location;
use crate::compile::Compilation;

/// Where the name at `offset` is declared.
pub fn definition(compilation: &Compilation, offset: usize) -> Option<Location> {
    let symbols = &compilation.checked.symbols;
    let def = symbols.at(compilation.file, offset)?;
    let definition = symbols.definition(def)?;
    Some(Location {
        file: definition.file(),
        span: definition.span(),
    })
}

/// Every use of the name at `offset`, in source order; with
/// `include_declaration`, its declaration first.
pub fn references(
    compilation: &Compilation,
    offset: usize,
    include_declaration: bool,
) -> Vec<Location> {
    let symbols = &compilation.checked.symbols;
    let Some(def) = symbols.at(compilation.file, offset) else {
        return Vec::new();
    };
    let Some(definition) = symbols.definition(def) else {
        return Vec::new();
    };
    let declaration = include_declaration.then_some(Location {
        file: definition.file(),
        span: definition.span(),
    });
    let mut uses: Vec<Location> = symbols
        .references_to(def)
        .map(|r| Location {
            file: r.file,
            span: r.span,
        })
        .collect();
    uses.sort();
    uses.dedup();
    declaration.into_iter().chain(uses).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ide::test_support::{compile_at, slice, PLAN};

    #[test]
    fn definition_of_a_reference_is_its_declaration() {
        let text = PLAN.replace("after compile", "after com$0pile");
        let (c, offset) = compile_at(&text);
        let found = definition(&c, offset).expect("a definition");
        assert_eq!(slice(&c, found.span), "compile");
        assert!(found.span.start() < offset, "jumps back to the task");
    }

    #[test]
    fn references_list_every_use_of_a_role() {
        let text = PLAN.replace("role dev", "role d$0ev");
        let (c, offset) = compile_at(&text);
        let found = references(&c, offset, true);
        assert_eq!(found.len(), 3);
        assert!(found.iter().all(|l| slice(&c, l.span) == "dev"));
        assert_eq!(references(&c, offset, false).len(), 2);
    }

    #[test]
    fn nothing_under_the_cursor_gives_nothing() {
        let (c, offset) = compile_at(&PLAN.replace("goal", "$0goal"));
        assert_eq!(definition(&c, offset), None);
        assert!(references(&c, offset, true).is_empty());
    }
}
