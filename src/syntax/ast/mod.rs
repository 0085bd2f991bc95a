//! The syntax tree of a `.plan` file: every node keeps its span, or
//! derives it from what it keeps (an `assignee`'s role, a task's braces).
//!
//! The tree is what the source says, in source order, before any name is
//! resolved; the formatter prints it back and the checker lowers it to IR.

use std::sync::Arc;

use crate::span::Span;

mod items;
mod keywords;
mod string;

pub use items::{Items, Iter as ItemsIter};
pub use keywords::Keywords;
pub(crate) use string::StrWriter;
pub use string::{Interp, Parts as StrParts, Str, StrPart};

pub use smol_str::SmolStr;

/// A name as written, with its span. Names are short: a [`SmolStr`] holds
/// one of up to 23 bytes without an allocation, and clones any name cheaply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ident {
    pub name: SmolStr,
    pub span: Span,
}

/// A parsed file: imports, templates and plans in source order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct File {
    pub items: Vec<TopItem>,
    /// Every comment (`# …`), in source order.
    pub comments: Vec<Span>,
    /// Every keyword, in source order (semantic highlighting).
    pub keywords: Keywords,
    /// The runs of text that did not parse (each reported as a syntax
    /// error), in source order: what the checker knows the tree may miss.
    pub unparsed: Vec<Span>,
}

/// Something that stands at the top of a file.
#[derive(Clone, Debug, PartialEq)]
pub enum TopItem {
    Import(Import),
    Template(Template),
    Plan(Plan),
    /// A role of a library file, brought into the plans that import it.
    Role(Role),
    /// A parameter of a library file, brought into the plans that import it.
    Param(Param),
}

/// `import "path.plan"`.
#[derive(Clone, Debug, PartialEq)]
pub struct Import {
    pub span: Span,
    pub path: Str,
}

/// `plan NAME { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub span: Span,
    pub name: Ident,
    pub body: Body,
    pub items: Items,
}

/// The braces of a body: where it opens, and where it closes if it does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Body {
    pub open: Span,
    /// `None` when the closing `}` is missing (a syntax error was reported).
    pub close: Option<Span>,
}

/// `template NAME(p: TYPE [= default], …) { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Template {
    pub span: Span,
    pub name: Ident,
    pub params: Vec<Param>,
    pub body: Body,
    pub items: Items,
}

/// An item of a plan (or template) body.
#[derive(Clone, Debug, PartialEq)]
pub enum PlanItem {
    Title(StrField),
    Goal(StrField),
    Language(StrField),
    MaxIterations(IntField),
    /// `transition_rounds N`: rounds on a step before a transition word advances it.
    TransitionRounds(IntField),
    /// `fallback_rounds N`: rounds on a step after which it advances anyway.
    FallbackRounds(IntField),
    /// `retry N`: the retry budget of tasks without their own.
    Retry(IntField),
    /// Boxed, as are roles and uses: an item is 56 bytes, not 152, in the
    /// list of every plan (where a plan of tasks without steps has one a
    /// task).
    Param(Box<Param>),
    Role(Box<Role>),
    /// Shared with the trees of earlier texts (see [`StepItem::Task`]).
    Step(Arc<Step>),
    Task(Arc<Task>),
    Use(Box<Use>),
}

const _: () = assert!(std::mem::size_of::<PlanItem>() == 56);

/// A keyword followed by a string: `title "…"`.
#[derive(Clone, Debug, PartialEq)]
pub struct StrField {
    pub span: Span,
    pub keyword: Span,
    pub value: Str,
}

/// A keyword followed by a whole number: `retry 2`.
#[derive(Clone, Debug, PartialEq)]
pub struct IntField {
    pub span: Span,
    pub keyword: Span,
    pub value: Int,
}

/// A whole number as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Int {
    pub span: Span,
    /// `None` when it does not fit in 64 bits (a syntax error was reported).
    pub value: Option<i64>,
}

/// `param NAME: TYPE [= DEFAULT]` (also a template parameter).
#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub span: Span,
    pub name: Ident,
    pub ty: Ident,
    pub default: Option<Literal>,
}

/// A literal value: a default or a template argument.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Str(Str),
    Int(Int),
    Float { span: Span, value: f64 },
    Bool { span: Span, value: bool },
}

impl Literal {
    /// Where the literal stands.
    pub fn span(&self) -> Span {
        match self {
            Literal::Str(s) => s.span,
            Literal::Int(i) => i.span,
            Literal::Float { span, .. } | Literal::Bool { span, .. } => *span,
        }
    }
}

/// `role NAME ["description"]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Role {
    pub span: Span,
    pub name: Ident,
    pub description: Option<Str>,
}

/// `step NAME ["title"] { … }`.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub span: Span,
    pub name: Ident,
    pub title: Option<Str>,
    pub body: Body,
    pub items: Vec<StepItem>,
}

/// An item of a step body.
#[derive(Clone, Debug, PartialEq)]
pub enum StepItem {
    /// Boxed: a step has one `after` or none, and a task item is only its
    /// `Arc`, so an item is 16 bytes, not 32, in the list of every step.
    After(Box<After>),
    Sequential(Span),
    /// Shared: the tree of a text after an edit holds the very items of
    /// the old tree that stand before the edit, not copies.
    Task(Arc<Task>),
}

/// `task NAME "title" [{ … }]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    pub span: Span,
    pub name: Ident,
    pub title: Str,
    /// A boxed slice, not a `Vec`: 8 bytes less a task, and no spare room.
    pub fields: Box<[TaskField]>,
    /// The body's braces, each one byte, by where they start, plus one:
    /// 0 for no body (and for no `}`). 8 bytes, where an `Option<Body>`
    /// takes 24; [`Task::body`] gives the body.
    braces: [u32; 2],
}

impl Task {
    pub fn new(
        span: Span,
        name: Ident,
        title: Str,
        body: Option<Body>,
        fields: Box<[TaskField]>,
    ) -> Task {
        let mut task = Task {
            span,
            name,
            title,
            fields,
            braces: [0; 2],
        };
        task.set_body(body);
        task
    }

    /// The braces of the task's body, if it has one.
    pub fn body(&self) -> Option<Body> {
        let brace = |at: u32| Span::new(at as usize - 1, at as usize);
        match self.braces {
            [0, _] => None,
            [open, close] => Some(Body {
                open: brace(open),
                close: (close != 0).then(|| brace(close)),
            }),
        }
    }

    /// Puts the braces of `body` in place of the task's.
    pub(crate) fn set_body(&mut self, body: Option<Body>) {
        // Where a brace starts, plus one (offsets are 32 bits, saturating).
        // Its end is not kept: a brace is one byte.
        let at = |brace: Span| (brace.start() as u32).saturating_add(1);
        self.braces = match body {
            None => [0, 0],
            Some(body) => [at(body.open), body.close.map_or(0, at)],
        };
    }
}

/// A field of a task body.
///
/// 32 bytes, as a task has two or so: the common fields (`after`,
/// `assignee`) are held in place, the others boxed.
#[derive(Clone, Debug, PartialEq)]
pub enum TaskField {
    After(After),
    Assignee(Assignee),
    Reasoning(Box<StrField>),
    Description(Box<StrField>),
    Retry(Box<IntField>),
    Optional(Span),
    /// `priority high|medium|low` (the level is checked, not parsed).
    Priority {
        span: Span,
        level: Box<Ident>,
    },
}

const _: () = assert!(std::mem::size_of::<TaskField>() == 32);

impl TaskField {
    /// The field's keyword, as written.
    pub fn keyword(&self) -> &'static str {
        match self {
            TaskField::After(_) => "after",
            TaskField::Assignee(_) => "assignee",
            TaskField::Reasoning(_) => "reasoning",
            TaskField::Description(_) => "description",
            TaskField::Retry(_) => "retry",
            TaskField::Optional(_) => "optional",
            TaskField::Priority { .. } => "priority",
        }
    }

    /// Where the field stands.
    pub fn span(&self) -> Span {
        match self {
            TaskField::After(a) => a.span,
            TaskField::Assignee(a) => a.span,
            TaskField::Optional(span) | TaskField::Priority { span, .. } => *span,
            TaskField::Reasoning(f) | TaskField::Description(f) => f.span,
            TaskField::Retry(f) => f.span,
        }
    }
}

/// `assignee ROLE`: the field's span and the role's name. The role ends the
/// field, so its span is the field's last bytes, as many as its name has:
/// it is not kept.
#[derive(Clone, Debug, PartialEq)]
pub struct Assignee {
    pub span: Span,
    role: SmolStr,
}

impl Assignee {
    /// The field spanning `span` that names `role` (which ends it).
    pub fn new(span: Span, role: Ident) -> Assignee {
        debug_assert_eq!(role.span.end(), span.end());
        debug_assert_eq!(role.span.len(), role.name.len());
        Assignee {
            span,
            role: role.name,
        }
    }

    /// The role's name.
    pub fn name(&self) -> &SmolStr {
        &self.role
    }

    /// The role named, with its span.
    pub fn role(&self) -> Ident {
        let end = self.span.end();
        Ident {
            name: self.role.clone(),
            span: Span::new(end.saturating_sub(self.role.len()), end),
        }
    }
}

/// `after REF, REF…`.
#[derive(Clone, Debug, PartialEq)]
pub struct After {
    pub span: Span,
    /// A boxed slice, not a `Vec`: 8 bytes less, and no spare room.
    pub refs: Box<[Ident]>,
}

/// `use TEMPLATE(arg = value, …) as PREFIX [{ after … }]`.
#[derive(Clone, Debug, PartialEq)]
pub struct Use {
    pub span: Span,
    pub template: Ident,
    pub args: Vec<UseArg>,
    pub prefix: Ident,
    pub body: Option<Body>,
    pub after: Vec<After>,
}

/// `name = value` in a `use`.
#[derive(Clone, Debug, PartialEq)]
pub struct UseArg {
    pub span: Span,
    pub name: Ident,
    pub value: Literal,
}
