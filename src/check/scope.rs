//! Name tables: one per namespace, reporting names declared twice.

use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap;

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

/// The names of one namespace, mapped to their definitions.
pub(super) struct Scope {
    namespace: Namespace,
    names: FxHashMap<SmolStr, usize>,
    /// The names in declaration order, for suggestions.
    order: Vec<SmolStr>,
}

impl Scope {
    pub(super) fn new(namespace: Namespace) -> Scope {
        Scope {
            namespace,
            names: FxHashMap::default(),
            order: Vec::new(),
        }
    }

    /// Declares `name` (at `span` in the checker's current file) as
    /// definition `def`. A second declaration is reported; returns whether
    /// this one was taken.
    pub(super) fn declare(
        &mut self,
        c: &mut Checker,
        name: &SmolStr,
        span: Span,
        def: usize,
        kind: &str,
    ) -> bool {
        let first = match self.names.entry(name.clone()) {
            Entry::Vacant(entry) => {
                entry.insert(def);
                self.order.push(name.clone());
                return true;
            }
            Entry::Occupied(entry) => &c.symbols.definitions[*entry.get()],
        };
        let first_kind = first.kind.as_str();
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
            .label(first.file, first.span, "first declared here")
            .help(help);
        c.diagnostics.push(diagnostic);
        false
    }

    /// Makes room for `additional` more names.
    pub(super) fn reserve(&mut self, additional: usize) {
        self.names.reserve(additional);
        self.order.reserve(additional);
    }

    /// The definition a name stands for.
    pub(super) fn lookup(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    /// All names, in declaration order (for suggestions).
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(SmolStr::as_str)
    }
}
