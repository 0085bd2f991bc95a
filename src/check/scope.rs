//! Name tables: one per namespace, reporting names declared twice.

use rustc_hash::FxHashMap as HashMap;

use super::Checker;
use crate::diagnostic::{Code, Diagnostic};
use crate::syntax::ast::Ident;

/// Which names share a table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Namespace {
    Params,
    Roles,
    /// Tasks and steps share one namespace, since `after` names either.
    TasksAndSteps,
}

/// The names of one namespace, mapped to their definitions.
pub(super) struct Scope {
    namespace: Namespace,
    names: HashMap<String, usize>,
    order: Vec<String>,
}

impl Scope {
    pub(super) fn new(namespace: Namespace) -> Scope {
        Scope {
            namespace,
            names: HashMap::default(),
            order: Vec::new(),
        }
    }

    /// Declares `name` as definition `def`; a second declaration is reported.
    pub(super) fn declare(&mut self, checker: &mut Checker, name: &Ident, def: usize, kind: &str) {
        if let Some(&first) = self.names.get(&name.name) {
            let first = &checker.symbols.definitions[first];
            let first_kind = first.kind.as_str();
            let message = if first_kind == kind {
                format!("the {kind} `{}` is declared twice", name.name)
            } else {
                format!("`{}` names both a {first_kind} and a {kind}", name.name)
            };
            let help = match self.namespace {
                Namespace::TasksAndSteps => "tasks and steps share one set of names, since `after` can name either; rename one",
                Namespace::Roles => "rename one of the roles, or remove the second",
                Namespace::Params => "rename one of the parameters, or remove the second",
            };
            let diagnostic = Diagnostic::new(Code::Duplicate, message)
                .label(checker.file, name.span, "declared again here")
                .label(first.file, first.span, "first declared here")
                .help(help);
            checker.diagnostics.push(diagnostic);
            return;
        }
        self.names.insert(name.name.clone(), def);
        self.order.push(name.name.clone());
    }

    /// The definition a name stands for.
    pub(super) fn lookup(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    /// All names, in declaration order (for suggestions).
    pub(super) fn names(&self) -> impl Iterator<Item = &str> {
        self.order.iter().map(String::as_str)
    }
}
