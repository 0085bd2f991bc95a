//! The checked plan: names resolved, parameters substituted, dependencies
//! expanded to task ids. Built by [`check`](crate::check), read by
//! [`emit`](crate::emit).

use std::sync::Arc;

use crate::span::{FileId, Span};
use crate::syntax::ast::SmolStr;

mod building;
mod dependencies;
mod shifted;
pub use building::SymbolsBuilder;
pub use dependencies::Dependencies;
pub use shifted::{ChunkRef, Keep, Shifted, Spanned, Window, CHUNK};

/// A task's id: its 1-based position in source order.
pub type TaskId = u32;

/// A checked plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub id: SmolStr,
    pub title: Option<String>,
    pub goal: String,
    pub language: Option<String>,
    pub max_iterations: Option<u64>,
    /// `transition_rounds N`: rounds on a step before a transition word advances it.
    pub transition_rounds: Option<u64>,
    /// `fallback_rounds N`: rounds on a step after which it advances anyway.
    pub fallback_rounds: Option<u64>,
    /// The plan-level `retry N`: the budget of tasks without their own.
    pub retry: Option<u32>,
    pub params: Vec<ParamValue>,
    pub roles: Vec<Role>,
    pub steps: Vec<Step>,
    /// Tasks in source order; `tasks[i]` is task `i + 1`. Each is shared: a
    /// keystroke in one task's text copies the list, not every task.
    pub tasks: Vec<Arc<Task>>,
    /// What each task waits for, by its index in `tasks`.
    pub dependencies: Dependencies,
}

impl Plan {
    /// The plan with `tasks` waiting for `dependencies` for its own (the
    /// rest cloned).
    pub fn with_tasks(&self, tasks: Vec<Arc<Task>>, dependencies: Dependencies) -> Plan {
        Plan {
            id: self.id.clone(),
            title: self.title.clone(),
            goal: self.goal.clone(),
            language: self.language.clone(),
            max_iterations: self.max_iterations,
            transition_rounds: self.transition_rounds,
            fallback_rounds: self.fallback_rounds,
            retry: self.retry,
            params: self.params.clone(),
            roles: self.roles.clone(),
            steps: self.steps.clone(),
            tasks,
            dependencies,
        }
    }
}

/// A parameter and the value it has in this build.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamValue {
    pub name: String,
    /// `None` when no value was given and there is no default (checking a template).
    pub value: Option<Value>,
}

/// A typed parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl Value {
    /// The value as it reads inside an interpolated string.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        self.write_text(&mut out);
        out
    }

    /// Appends the value as it reads inside an interpolated string (no
    /// temporary `String` per interpolation).
    pub fn write_text(&self, out: &mut String) {
        use std::fmt::Write;
        match self {
            Value::Str(s) => out.push_str(s),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => {
                let _ = write!(out, "{f}");
            }
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        }
    }
}

/// The type of a parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    String,
    Int,
    Float,
    Bool,
}

impl Type {
    /// The type's keyword.
    pub fn as_str(self) -> &'static str {
        match self {
            Type::String => "string",
            Type::Int => "int",
            Type::Float => "float",
            Type::Bool => "bool",
        }
    }

    /// The type named `name`, if it is one.
    pub fn from_name(name: &str) -> Option<Type> {
        Some(match name {
            "string" => Type::String,
            "int" => Type::Int,
            "float" => Type::Float,
            "bool" => Type::Bool,
            _ => return None,
        })
    }

    /// All types, for suggestions.
    pub const NAMES: [&'static str; 4] = ["string", "int", "float", "bool"];

    /// Reads a `--set` value as this type.
    pub fn parse(self, text: &str) -> Option<Value> {
        Some(match self {
            Type::String => Value::Str(text.to_owned()),
            Type::Int => Value::Int(text.trim().parse().ok()?),
            Type::Float => {
                let f: f64 = text.trim().parse().ok()?;
                if !f.is_finite() {
                    return None;
                }
                Value::Float(f)
            }
            Type::Bool => match text.trim() {
                "true" => Value::Bool(true),
                "false" => Value::Bool(false),
                _ => return None,
            },
        })
    }
}

/// A declared role.
#[derive(Clone, Debug, PartialEq)]
pub struct Role {
    pub id: SmolStr,
    pub description: Option<String>,
}

/// A step: a named group of tasks.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub id: SmolStr,
    pub name: String,
    pub tasks: Vec<TaskId>,
}

/// A checked task: its name and what it says. Where it stands is its place
/// in the plan (`plan.tasks[i]` is task `i + 1`) and what it waits for is
/// the plan's ([`Plan::dependencies`]): a task pasted or deleted moves every
/// later task's id and dependencies, and the plan makes its one list of
/// dependencies again around the same tasks, not a copy of each. Kept
/// small: its key, title, reasoning and description one string ([`Texts`]),
/// its step and assignee a name shared by the tasks that give it
/// ([`Name`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// Its key, title, reasoning and description: read with [`Task::key`],
    /// [`Task::name`], [`Task::reasoning`] and [`Task::description`].
    pub texts: Texts,
    pub step: Option<Name>,
    pub assignee: Option<Name>,
    pub optional: bool,
    /// `retry N` (0 to 1000); `None` when the task does not say. Two
    /// bytes, not four: with the two fields after it, in the 8 bytes left
    /// after the others (`Task` 56 bytes, not 64).
    pub retry: Option<u16>,
    /// `priority high|medium|low`, if given.
    pub priority: Option<Priority>,
}

/// A step's or a role's name as tasks give it: one allocation shared by all
/// the tasks that give it (8 bytes a task, not a 24-byte `SmolStr` each).
pub type Name = Arc<SmolStr>;

/// A task's key, title, reasoning and description, one after the other in
/// one allocation exactly their size, with where each ends (32 bytes a
/// task and one block, not a 24-byte key, a 16-byte title and its block,
/// and for a task with a reasoning or a description a block of two more).
#[derive(Clone, Debug, PartialEq)]
pub struct Texts {
    text: Box<str>,
    ends: Ends,
}

/// Where a task's key, title and reasoning end in its [`Texts`], and which
/// of the reasoning ([`REASONING`]) and the description ([`DESCRIPTION`])
/// it has.
#[derive(Clone, Debug, PartialEq)]
enum Ends {
    /// In 32 bits: every task whose texts are under 4 GiB.
    Narrow([u32; 3], u8),
    /// Past 4 GiB (interpolation is not bounded, so there could be one).
    Wide(Box<([usize; 3], u8)>),
}

/// [`Ends`]' bit for a reasoning given.
const REASONING: u8 = 1;
/// [`Ends`]' bit for a description given.
const DESCRIPTION: u8 = 2;

impl Texts {
    /// A key, a title, a reasoning and a description, either or both of
    /// the last two absent.
    pub fn new(key: &str, name: &str, reasoning: Option<&str>, description: Option<&str>) -> Texts {
        let (reasoning_text, description_text) =
            (reasoning.unwrap_or(""), description.unwrap_or(""));
        let mut text = String::with_capacity(
            key.len() + name.len() + reasoning_text.len() + description_text.len(),
        );
        let mut ends = [0; 3];
        for (end, part) in ends.iter_mut().zip([key, name, reasoning_text]) {
            text.push_str(part);
            *end = text.len();
        }
        text.push_str(description_text);
        let given = u8::from(reasoning.is_some()) * REASONING
            | u8::from(description.is_some()) * DESCRIPTION;
        let ends = match u32::try_from(text.len()) {
            Ok(_) => Ends::Narrow(ends.map(|end| end as u32), given),
            Err(_) => Ends::Wide(Box::new((ends, given))),
        };
        Texts {
            text: text.into_boxed_str(),
            ends,
        }
    }

    /// Where the key, the title and the reasoning end, and which of the
    /// reasoning and the description are given.
    fn ends(&self) -> ([usize; 3], u8) {
        match &self.ends {
            Ends::Narrow(ends, given) => (ends.map(|end| end as usize), *given),
            Ends::Wide(wide) => **wide,
        }
    }

    /// The key.
    pub fn key(&self) -> &str {
        &self.text[..self.ends().0[0]]
    }

    /// The title.
    pub fn name(&self) -> &str {
        let ([key, name, _], _) = self.ends();
        &self.text[key..name]
    }

    /// The reasoning, if any.
    pub fn reasoning(&self) -> Option<&str> {
        let ([_, name, reasoning], given) = self.ends();
        (given & REASONING != 0).then(|| &self.text[name..reasoning])
    }

    /// The description, if any.
    pub fn description(&self) -> Option<&str> {
        let ([_, _, reasoning], given) = self.ends();
        (given & DESCRIPTION != 0).then(|| &self.text[reasoning..])
    }
}

impl Task {
    /// Its key: the name it is declared with.
    pub fn key(&self) -> &str {
        self.texts.key()
    }

    /// Its title (`task KEY "…"`), interpolated.
    pub fn name(&self) -> &str {
        self.texts.name()
    }

    /// `reasoning "…"`, interpolated, if given.
    pub fn reasoning(&self) -> Option<&str> {
        self.texts.reasoning()
    }

    /// `description "…"`, interpolated, if given.
    pub fn description(&self) -> Option<&str> {
        self.texts.description()
    }

    /// Whether its strings are `name`, `reasoning` and `description`.
    pub fn says(&self, name: &str, reasoning: Option<&str>, description: Option<&str>) -> bool {
        self.name() == name && self.reasoning() == reasoning && self.description() == description
    }

    /// Gives it the strings `name`, `reasoning` and `description`.
    pub fn set_texts(
        &mut self,
        name: String,
        reasoning: Option<String>,
        description: Option<String>,
    ) {
        self.texts = Texts::new(
            self.key(),
            &name,
            reasoning.as_deref(),
            description.as_deref(),
        );
    }

    /// Gives it the key `key`, its other strings kept.
    pub fn set_key(&mut self, key: &str) {
        self.texts = Texts::new(key, self.name(), self.reasoning(), self.description());
    }
}

/// What kind of thing a symbol names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SymbolKind {
    Plan,
    Param,
    Role,
    Step,
    Task,
    Template,
    /// A template instance: `use T(…) as NAME`.
    Instance,
}

impl SymbolKind {
    /// The kind as users say it.
    pub fn as_str(self) -> &'static str {
        match self {
            SymbolKind::Plan => "plan",
            SymbolKind::Param => "parameter",
            SymbolKind::Role => "role",
            SymbolKind::Step => "step",
            SymbolKind::Task => "task",
            SymbolKind::Template => "template",
            SymbolKind::Instance => "template instance",
        }
    }
}

/// A declaration: what the language server jumps to.
#[derive(Clone, Debug, PartialEq)]
pub struct Definition {
    pub kind: SymbolKind,
    pub name: SmolStr,
    pub file: FileId,
    /// The name's span.
    pub span: Span,
    /// The whole declaration's span.
    pub full_span: Span,
}

/// A use of a declared name.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reference {
    /// Index into [`Symbols::definitions`] (32 bits: a reference is 16
    /// bytes, not 24, and a large plan has about three a task).
    pub definition: u32,
    pub file: FileId,
    pub span: Span,
}

/// Every declaration and resolved reference of a file, for the language
/// server: in chunks shared with the compilation of the text before an edit
/// ([`Shifted`]).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Symbols {
    pub definitions: Shifted<Definition>,
    pub references: Shifted<Reference>,
}

impl Symbols {
    /// The definition at `offset` in `file`, whether the offset is on the
    /// declaration or on a reference to it.
    pub fn at(&self, file: FileId, offset: usize) -> Option<usize> {
        self.definitions
            .iter()
            .position(|d| d.file == file && d.span.touches(offset))
            .or_else(|| {
                self.references
                    .iter()
                    .find(|r| r.file == file && r.span.touches(offset))
                    .map(|r| r.definition as usize)
            })
    }

    /// The definition at `index`, as it stands now (a copy).
    pub fn definition(&self, index: usize) -> Option<Definition> {
        self.definitions.get(index)
    }

    /// The references to a definition.
    pub fn references_to(&self, definition: usize) -> impl Iterator<Item = Reference> + '_ {
        self.references
            .iter()
            .filter(move |r| r.definition as usize == definition)
    }
}

/// How urgent a task is (task-master's `priority`).
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    serde::Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Priority {
    // task-master's most urgent level (its `TaskPriority` has it).
    Critical,
    High,
    Medium,
    Low,
}

impl Priority {
    /// All priorities, as spelt in JSON and in `.plan` files, most urgent first.
    pub const NAMES: [&'static str; 4] = ["critical", "high", "medium", "low"];

    /// The priority as spelt in JSON.
    pub fn as_str(self) -> &'static str {
        Self::NAMES[self as usize]
    }

    /// The priority spelt `name`.
    pub fn from_name(name: &str) -> Option<Priority> {
        Some(match name {
            "critical" => Priority::Critical,
            "high" => Priority::High,
            "medium" => Priority::Medium,
            "low" => Priority::Low,
            _ => return None,
        })
    }

    /// The order ready work is taken in: 0 first; a task without a priority is medium.
    pub fn rank(priority: Option<Priority>) -> u8 {
        priority.unwrap_or(Priority::Medium) as u8
    }
}
