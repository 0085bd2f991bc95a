//! Name tables: one per namespace, reporting names declared twice.

use std::hash::BuildHasher;

use hashbrown::hash_table::{Entry, HashTable};
use rustc_hash::FxBuildHasher;

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::span::Span;
use crate::syntax::ast::SmolStr;

/// Which names share a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Namespace {
    Params,
    Roles,
    Templates,
    /// Tasks, steps and template instances share one namespace, since
    /// `after` can name any of them.
    TasksAndSteps,
}

/// The names of one namespace, mapped to their definitions and to a value
/// of the caller's (what a task-or-step name stands for, say).
///
/// The hash table holds only indices into the list of entries: a tenth of
/// the memory of a map holding the names, so that a table of 100,000 tasks
/// stays in the cache while they are declared; a lookup then reads one
/// entry, which holds all there is to know of the name.
pub(super) struct Scope<V = ()> {
    namespace: Namespace,
    /// Indices into `entries`, placed by the hash of the name.
    table: HashTable<u32>,
    /// The names in declaration order (for suggestions).
    entries: Vec<ScopeEntry<V>>,
}

struct ScopeEntry<V> {
    name: SmolStr,
    def: u32,
    value: V,
}

fn hash(name: &str) -> u64 {
    FxBuildHasher.hash_one(name)
}

impl Scope {
    pub(super) fn new(namespace: Namespace) -> Scope {
        Scope::with_values(namespace)
    }

    /// Declares `name` as definition `def`; see [`declare_value`](Self::declare_value).
    pub(super) fn declare(
        &mut self,
        c: &mut Checker,
        name: &SmolStr,
        span: Span,
        def: usize,
        kind: &str,
    ) -> bool {
        self.declare_value(c, name, span, def, kind, ())
    }

    /// The definition a name stands for.
    pub(super) fn lookup(&self, name: &str) -> Option<usize> {
        self.find(name).map(|(def, ())| def)
    }
}

impl<V: Copy> Scope<V> {
    /// An empty table whose names each carry a value of the caller's.
    pub(super) fn with_values(namespace: Namespace) -> Scope<V> {
        Scope {
            namespace,
            table: HashTable::new(),
            entries: Vec::new(),
        }
    }

    /// Declares `name` (at `span` in the checker's current file) as
    /// definition `def`. A second declaration is reported; returns whether
    /// this one was taken.
    pub(super) fn declare_value(
        &mut self,
        c: &mut Checker,
        name: &SmolStr,
        span: Span,
        def: usize,
        kind: &str,
        value: V,
    ) -> bool {
        let entries = &self.entries;
        let entry = self.table.entry(
            hash(name),
            |&i| entries[i as usize].name == *name,
            |&i| hash(&entries[i as usize].name),
        );
        let first = match entry {
            Entry::Vacant(entry) => {
                entry.insert(self.entries.len() as u32);
                self.entries.push(ScopeEntry {
                    name: name.clone(),
                    def: def as u32,
                    value,
                });
                return true;
            }
            Entry::Occupied(entry) => {
                let def = self.entries[*entry.get() as usize].def as usize;
                match c.symbols.definition(def) {
                    Some(first) => first,
                    None => return true,
                }
            }
        };
        let first_kind = first.kind().as_str();
        let message = if first_kind == kind {
            format!("the {kind} `{name}` is declared twice")
        } else {
            format!("`{name}` names both a {first_kind} and a {kind}")
        };
        let help = match self.namespace {
            Namespace::TasksAndSteps => "tasks, steps and template instances share one set of names, since `after` can name any of them; rename one",
            Namespace::Roles => "rename one of the roles, or remove the second",
            Namespace::Params => "rename one of the parameters, or remove the second",
            Namespace::Templates => "rename one of the templates, or remove the second",
        };
        let diagnostic = Diagnostic::new(Code::Duplicate, message)
            .label(c.file, span, "declared again here")
            .label(first.file(), first.span(), "first declared here")
            .help(help);
        c.diagnostics.push(diagnostic);
        false
    }

    /// Makes room for `additional` more names.
    pub(super) fn reserve(&mut self, additional: usize) {
        let entries = &self.entries;
        self.table
            .reserve(additional, |&i| hash(&entries[i as usize].name));
        self.entries.reserve(additional);
    }

    /// The definition a name stands for, and its value.
    pub(super) fn find(&self, name: &str) -> Option<(usize, V)> {
        let &i = self
            .table
            .find(hash(name), |&i| self.entries[i as usize].name == name)?;
        let entry = &self.entries[i as usize];
        Some((entry.def as usize, entry.value))
    }

    /// All names, in declaration order (for suggestions).
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|e| e.name.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{Definition, SymbolKind};
    use crate::span::FileId;

    #[test]
    fn names_are_found_and_declared_once_as_the_table_grows() {
        let file = FileId::default();
        let mut c = Checker::new(file, true);
        let mut scope = Scope::new(Namespace::TasksAndSteps);
        // No room made first: the table grows many times.
        let names: Vec<SmolStr> = (0..5000).map(|i| SmolStr::from(format!("t{i}"))).collect();
        for (i, name) in names.iter().enumerate() {
            let span = Span::new(i * 4, i * 4 + 2);
            let definition = Definition::new(SymbolKind::Task, name, file, span, span);
            c.symbols.definitions.push(definition);
            assert!(scope.declare(&mut c, name, span, i, "task"));
        }
        for (i, name) in names.iter().enumerate() {
            assert_eq!(scope.lookup(name), Some(i));
        }
        assert_eq!(scope.lookup("t5000"), None);
        assert_eq!(scope.lookup(""), None);
        // A second declaration is refused and reported against the first.
        assert!(!scope.declare(
            &mut c,
            &names[4321],
            Span::new(90_000, 90_005),
            5000,
            "step"
        ));
        assert_eq!(scope.lookup("t4321"), Some(4321));
        assert_eq!(c.diagnostics.len(), 1);
        assert_eq!(
            c.diagnostics[0].message,
            "`t4321` names both a task and a step"
        );
        let spans: Vec<Span> = c.diagnostics[0].labels.iter().map(|l| l.span).collect();
        assert_eq!(
            spans,
            [Span::new(90_000, 90_005), Span::new(17_284, 17_286)]
        );
        // Suggestions see the names in declaration order.
        assert!(scope
            .names()
            .map(str::to_owned)
            .eq(names.iter().map(|n| n.to_string())));
    }
}
