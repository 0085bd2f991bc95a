//! The checked plan: names resolved, parameters substituted, dependencies
//! expanded to task ids. Built by [`check`](crate::check), read by
//! [`emit`](crate::emit).

use std::sync::Arc;

use crate::span::{FileId, Span};
use crate::syntax::ast::SmolStr;

mod building;
mod definition;
mod dependencies;
mod shifted;
pub use building::SymbolsBuilder;
pub use definition::Definition;
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
/// small, 48 bytes and one string: its key, title, reasoning and
/// description one after the other in one allocation exactly their size
/// (read with [`Task::key`], [`Task::name`], [`Task::reasoning`] and
/// [`Task::description`]), its step and assignee a name shared by the tasks
/// that give it ([`Name`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The key, the title, the reasoning and the description.
    text: Box<str>,
    pub step: Option<Name>,
    pub assignee: Option<Name>,
    /// Where the key, the title and the reasoning end in `text`, and which
    /// of the reasoning and the description are given ([`Ends`]).
    ends: [u32; 3],
    /// `retry N` (0 to 1000), [`NO_RETRY`] when the task does not say: two
    /// bytes, not the four of an `Option<u16>`, so that the task is 48
    /// bytes, not 56 ([`Task::retry`]).
    retry: u16,
    pub optional: bool,
    /// `priority high|medium|low`, if given.
    pub priority: Option<Priority>,
}

/// A step's or a role's name as tasks give it: one allocation shared by all
/// the tasks that give it (8 bytes a task, not a 24-byte `SmolStr` each).
pub type Name = Arc<SmolStr>;

/// [`Task::retry`] when the task does not say (the checker keeps 0 to 1000).
const NO_RETRY: u16 = u16::MAX;

/// Where a task's key, title and reasoning end in its text, and which of the
/// reasoning and the description it has.
///
/// Kept in a task's `ends` as three `u32`s when its text is under 1 GiB (the
/// two flags in the first's top bits), or else (interpolation is not
/// bounded, so there could be one) written in decimal before the text, the
/// second `u32` [`WIDE`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Ends {
    key: usize,
    name: usize,
    reasoning: usize,
    has_reasoning: bool,
    has_description: bool,
}

/// Where the flags start in `ends[0]`: the key's end below them.
const FLAGS: u32 = 30;
/// The longest text a task's `ends` say in `u32`s (1 GiB: two bits of the
/// key's end for the flags; 16 bytes under test, so that the tests reach
/// the ends written before the text).
const NARROW: usize = if cfg!(test) { 16 } else { 1 << FLAGS };
/// `ends[1]` of a task whose ends are written before its text.
const WIDE: u32 = u32::MAX;

impl Ends {
    /// The flags in two bits.
    fn given(self) -> u32 {
        u32::from(self.has_reasoning) | u32::from(self.has_description) << 1
    }

    /// The ends of `parts` (a key, a title, a reasoning and a description).
    fn of(parts: [&str; 4], has_reasoning: bool, has_description: bool) -> Ends {
        Ends {
            key: parts[0].len(),
            name: parts[0].len() + parts[1].len(),
            reasoning: parts[0].len() + parts[1].len() + parts[2].len(),
            has_reasoning,
            has_description,
        }
    }

    /// The ends written before a text past [`NARROW`].
    fn prefix(self) -> String {
        format!(
            "{},{},{},{};",
            self.key,
            self.name,
            self.reasoning,
            self.given()
        )
    }

    /// The ends written before `text` (past [`NARROW`]), and the text
    /// after them. Out of line: no real task's text is that long.
    #[cold]
    #[inline(never)]
    fn written(text: &str) -> (Ends, &str) {
        // Written by `Task::new`: four numbers, then `;`.
        let (prefix, text) = text.split_once(';').unwrap_or(("", text));
        let mut numbers = prefix.split(',').map(|n| n.parse().unwrap_or(0));
        let mut next = || numbers.next().unwrap_or(0);
        let (key, name, reasoning, given) = (next(), next(), next(), next());
        let ends = Ends {
            key,
            name,
            reasoning,
            has_reasoning: given & 1 != 0,
            has_description: given & 2 != 0,
        };
        (ends, text)
    }
}

impl Task {
    /// A task with a key, a title, a reasoning and a description (either or
    /// both of the last two absent), not optional, with no step, assignee,
    /// `retry` or priority.
    pub fn new(key: &str, name: &str, reasoning: Option<&str>, description: Option<&str>) -> Task {
        let parts = [
            key,
            name,
            reasoning.unwrap_or(""),
            description.unwrap_or(""),
        ];
        let ends = Ends::of(parts, reasoning.is_some(), description.is_some());
        let len = parts.iter().map(|part| part.len()).sum::<usize>();
        let (mut text, kept) = match len < NARROW {
            true => {
                let kept = [
                    ends.key as u32 | ends.given() << FLAGS,
                    ends.name as u32,
                    ends.reasoning as u32,
                ];
                (String::with_capacity(len), kept)
            }
            false => (ends.prefix(), [0, WIDE, 0]),
        };
        text.reserve_exact(len);
        parts.iter().for_each(|part| text.push_str(part));
        Task {
            text: text.into_boxed_str(),
            step: None,
            assignee: None,
            ends: kept,
            retry: NO_RETRY,
            optional: false,
            priority: None,
        }
    }

    /// Where its key, title and reasoning end, and its text from its key
    /// on. Inlined, so that a reader of one string computes only its ends (a
    /// rename's recheck reads every task's key).
    #[inline]
    fn ends(&self) -> (Ends, &str) {
        let [first, name, reasoning] = self.ends;
        if name == WIDE {
            return Ends::written(&self.text);
        }
        let ends = Ends {
            key: (first & ((1 << FLAGS) - 1)) as usize,
            name: name as usize,
            reasoning: reasoning as usize,
            has_reasoning: first >> FLAGS & 1 != 0,
            has_description: first >> FLAGS & 2 != 0,
        };
        (ends, &self.text)
    }

    /// Its key: the name it is declared with.
    #[inline]
    pub fn key(&self) -> &str {
        let (ends, text) = self.ends();
        &text[..ends.key]
    }

    /// Its title (`task KEY "…"`), interpolated.
    #[inline]
    pub fn name(&self) -> &str {
        let (ends, text) = self.ends();
        &text[ends.key..ends.name]
    }

    /// `reasoning "…"`, interpolated, if given.
    #[inline]
    pub fn reasoning(&self) -> Option<&str> {
        let (ends, text) = self.ends();
        ends.has_reasoning.then(|| &text[ends.name..ends.reasoning])
    }

    /// `description "…"`, interpolated, if given.
    #[inline]
    pub fn description(&self) -> Option<&str> {
        let (ends, text) = self.ends();
        ends.has_description.then(|| &text[ends.reasoning..])
    }

    /// `retry N` (0 to 1000), if the task says.
    pub fn retry(&self) -> Option<u16> {
        (self.retry != NO_RETRY).then_some(self.retry)
    }

    /// Gives it `retry N` (the checker's 0 to 1000), or none.
    pub fn set_retry(&mut self, retry: Option<u16>) {
        self.retry = retry.filter(|&n| n != NO_RETRY).unwrap_or(NO_RETRY);
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
        let new = Task::new(
            self.key(),
            &name,
            reasoning.as_deref(),
            description.as_deref(),
        );
        (self.text, self.ends) = (new.text, new.ends);
    }

    /// Gives it the key `key`, its other strings kept.
    pub fn set_key(&mut self, key: &str) {
        let new = Task::new(key, self.name(), self.reasoning(), self.description());
        (self.text, self.ends) = (new.text, new.ends);
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
            .position(|d| d.file() == file && d.span().touches(offset))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A task's strings and `retry` read back as given, its texts under and
    /// past `NARROW` (16 bytes under test, 1 GiB otherwise).
    #[test]
    fn a_task_reads_back_its_strings() {
        let some = [None, Some(""), Some("r"), Some("a longer reasoning")];
        for key in ["t", "a_rather_long_key"] {
            for name in ["", "Do it", "Do part 12345 for {team}, é 𝄞"] {
                for (reasoning, description) in some.iter().flat_map(|r| some.map(|d| (*r, d))) {
                    let mut task = Task::new(key, name, reasoning, description);
                    let read = (
                        task.key(),
                        task.name(),
                        task.reasoning(),
                        task.description(),
                    );
                    assert_eq!(read, (key, name, reasoning, description));
                    assert_eq!(task.retry(), None);
                    task.set_retry(Some(1000));
                    assert_eq!(task.retry(), Some(1000));
                    task.set_key("k");
                    task.set_texts("n".into(), description.map(str::to_owned), None);
                    let read = (
                        task.key(),
                        task.name(),
                        task.reasoning(),
                        task.description(),
                    );
                    assert_eq!(read, ("k", "n", description, None));
                    assert_eq!(task.retry(), Some(1000));
                }
            }
        }
    }
}
