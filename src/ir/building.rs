//! [`Symbols`](super::Symbols) as a check makes them: plain lists, put in
//! shared chunks once the check is done ([`SymbolsBuilder::finish`]), so
//! that a whole check pushes into a `Vec` (a [`Shifted`] list's push checks
//! that its last chunk is not shared, each time).

use super::{Definition, Reference, Shifted, Symbols};

/// Every declaration and resolved reference a check has found so far.
#[derive(Clone, Debug, Default)]
pub struct SymbolsBuilder {
    pub definitions: Vec<Definition>,
    pub references: Vec<Reference>,
}

impl SymbolsBuilder {
    /// The definition at `index`.
    pub fn definition(&self, index: usize) -> Option<Definition> {
        self.definitions.get(index).cloned()
    }

    /// The symbols, in shared chunks.
    pub fn finish(self) -> Symbols {
        Symbols {
            definitions: Shifted::from(self.definitions),
            references: Shifted::from(self.references),
        }
    }
}
