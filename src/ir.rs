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

    /// The step whose list holds the task at `index` (`tasks[index]`), if
    /// any: the task's step.
    pub fn step_of(&self, index: usize) -> Option<&Step> {
        let id = TaskId::try_from(index + 1).ok()?;
        self.steps.iter().find(|step| step.tasks.contains(&id))
    }

    /// Each task's step ([`Plan::step_of`]), by the task's index, from one
    /// pass over the steps.
    pub fn steps_of_tasks(&self) -> Vec<Option<&Step>> {
        let mut of = vec![None; self.tasks.len()];
        for step in &self.steps {
            for &id in &step.tasks {
                let slot = (id as usize).checked_sub(1).and_then(|i| of.get_mut(i));
                if let Some(slot @ None) = slot {
                    *slot = Some(step);
                }
            }
        }
        of
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
/// dependencies again around the same tasks, not a copy of each. Its step
/// is the plan's too, the one whose list holds it ([`Plan::step_of`]): a
/// step renamed changes no task. Kept small, 32 bytes and one string: its
/// key, title, reasoning, description and assignee one after the other in
/// one allocation exactly their size (read with [`Task::key`],
/// [`Task::name`], [`Task::reasoning`], [`Task::description`] and
/// [`Task::assignee`]).
#[derive(Clone, Debug, PartialEq)]
pub struct Task {
    /// The key, the title, the reasoning, the description and the assignee.
    text: Box<str>,
    /// Where the key, the title and the reasoning end in `text`, the
    /// assignee's length, and which of the reasoning and the description
    /// are given ([`Ends`]).
    ends: [u32; 3],
    /// `retry N` (0 to 1000), [`NO_RETRY`] when the task does not say: two
    /// bytes, not the four of an `Option<u16>`, so that the task is 32
    /// bytes, not 40 ([`Task::retry`]).
    retry: u16,
    pub optional: bool,
    /// `priority high|medium|low`, if given.
    pub priority: Option<Priority>,
}

/// [`Task::retry`] when the task does not say (the checker keeps 0 to 1000).
const NO_RETRY: u16 = u16::MAX;

/// Where a task's key, title and reasoning end in its text, how long its
/// assignee is (the text's last part), and which of the reasoning and the
/// description it has.
///
/// Kept in a task's `ends` as three `u32`s when its text is under 1 GiB,
/// its key under 4 MiB and its assignee under 255 bytes (the key's end, the
/// assignee's length plus one, 0 for none, and the two flags in the first),
/// or else (interpolation is not bounded, so there could be one) written in
/// decimal before the text, the second `u32` [`WIDE`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Ends {
    key: usize,
    name: usize,
    reasoning: usize,
    /// The assignee's length, if the task has one.
    assignee: Option<usize>,
    has_reasoning: bool,
    has_description: bool,
}

/// Where the flags start in `ends[0]`: the key's end and the assignee's
/// length below them.
const FLAGS: u32 = 30;
/// Where the assignee's length (plus one) starts in `ends[0]`: the key's end
/// below it.
const ASSIGNEE: u32 = 22;
/// The longest text a task's `ends` say in `u32`s (1 GiB: two bits of the
/// first for the flags; 16 bytes under test, so that the tests reach the
/// ends written before the text).
const NARROW: usize = if cfg!(test) { 16 } else { 1 << FLAGS };
/// The longest key they say (4 MiB; 4 bytes under test).
const NARROW_KEY: usize = if cfg!(test) { 4 } else { 1 << ASSIGNEE };
/// The longest assignee they say (254 bytes: its length plus one in eight
/// bits; 3 under test).
const NARROW_ASSIGNEE: usize = if cfg!(test) {
    3
} else {
    (1 << (FLAGS - ASSIGNEE)) - 2
};
/// `ends[1]` of a task whose ends are written before its text.
const WIDE: u32 = u32::MAX;

impl Ends {
    /// The flags in two bits.
    fn given(self) -> u32 {
        u32::from(self.has_reasoning) | u32::from(self.has_description) << 1
    }

    /// The assignee's length plus one, 0 for none.
    fn assignee_code(self) -> usize {
        self.assignee.map_or(0, |len| len + 1)
    }

    /// The ends of `parts` (a key, a title, a reasoning, a description and
    /// an assignee).
    fn of(parts: [&str; 5], flags: [bool; 3]) -> Ends {
        let [has_reasoning, has_description, has_assignee] = flags;
        Ends {
            key: parts[0].len(),
            name: parts[0].len() + parts[1].len(),
            reasoning: parts[0].len() + parts[1].len() + parts[2].len(),
            assignee: has_assignee.then_some(parts[4].len()),
            has_reasoning,
            has_description,
        }
    }

    /// Whether three `u32`s say them, for a text of `len` bytes.
    fn narrow(self, len: usize) -> bool {
        len < NARROW && self.key < NARROW_KEY && self.assignee.is_none_or(|a| a <= NARROW_ASSIGNEE)
    }

    /// The ends written before a text that three `u32`s cannot say.
    fn prefix(self) -> String {
        format!(
            "{},{},{},{},{};",
            self.key,
            self.name,
            self.reasoning,
            self.given(),
            self.assignee_code()
        )
    }

    /// The ends written before `text` (past [`NARROW`]), and the text
    /// after them. Out of line: no real task's text is that long.
    #[cold]
    #[inline(never)]
    fn written(text: &str) -> (Ends, &str) {
        // Written by `Task::assigned`: five numbers, then `;`.
        let (prefix, text) = text.split_once(';').unwrap_or(("", text));
        let mut numbers = prefix.split(',').map(|n| n.parse().unwrap_or(0));
        let mut next = || numbers.next().unwrap_or(0);
        let (key, name, reasoning, given, assignee) = (next(), next(), next(), next(), next());
        let ends = Ends {
            key,
            name,
            reasoning,
            assignee: assignee.checked_sub(1),
            has_reasoning: given & 1 != 0,
            has_description: given & 2 != 0,
        };
        (ends, text)
    }
}

impl Task {
    /// A task with a key, a title, a reasoning and a description (either or
    /// both of the last two absent), not optional, with no assignee, `retry`
    /// or priority.
    pub fn new(key: &str, name: &str, reasoning: Option<&str>, description: Option<&str>) -> Task {
        Task::assigned(key, name, reasoning, description, None)
    }

    /// [`Task::new`] with an assignee (a role's name), if given.
    pub fn assigned(
        key: &str,
        name: &str,
        reasoning: Option<&str>,
        description: Option<&str>,
        assignee: Option<&str>,
    ) -> Task {
        let parts = [
            key,
            name,
            reasoning.unwrap_or(""),
            description.unwrap_or(""),
            assignee.unwrap_or(""),
        ];
        let flags = [
            reasoning.is_some(),
            description.is_some(),
            assignee.is_some(),
        ];
        let ends = Ends::of(parts, flags);
        let len = parts.iter().map(|part| part.len()).sum::<usize>();
        let (mut text, kept) = match ends.narrow(len) {
            true => {
                let first = ends.key | ends.assignee_code() << ASSIGNEE;
                let kept = [
                    first as u32 | ends.given() << FLAGS,
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
            ends: kept,
            retry: NO_RETRY,
            optional: false,
            priority: None,
        }
    }

    /// Where its key, title and reasoning end and how long its assignee is,
    /// and its text from its key on. Inlined, so that a reader of one
    /// string computes only its ends (a rename's recheck reads every task's
    /// key).
    #[inline]
    fn ends(&self) -> (Ends, &str) {
        let [first, name, reasoning] = self.ends;
        if name == WIDE {
            return Ends::written(&self.text);
        }
        let assignee = (first >> ASSIGNEE & ((1 << (FLAGS - ASSIGNEE)) - 1)) as usize;
        let ends = Ends {
            key: (first & ((1 << ASSIGNEE) - 1)) as usize,
            name: name as usize,
            reasoning: reasoning as usize,
            assignee: assignee.checked_sub(1),
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
        let end = text.len() - ends.assignee.unwrap_or(0);
        ends.has_description.then(|| &text[ends.reasoning..end])
    }

    /// `assignee ROLE`: the role's name, if given.
    #[inline]
    pub fn assignee(&self) -> Option<&str> {
        let (ends, text) = self.ends();
        ends.assignee.map(|len| &text[text.len() - len..])
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
        let new = Task::assigned(
            self.key(),
            &name,
            reasoning.as_deref(),
            description.as_deref(),
            self.assignee(),
        );
        (self.text, self.ends) = (new.text, new.ends);
    }

    /// Gives it the key `key`, its other strings kept.
    pub fn set_key(&mut self, key: &str) {
        let new = Task::assigned(
            key,
            self.name(),
            self.reasoning(),
            self.description(),
            self.assignee(),
        );
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
    /// past `NARROW` (16 bytes under test, 1 GiB otherwise), its keys and
    /// assignees under and past theirs (4 and 3 bytes under test).
    #[test]
    fn a_task_reads_back_its_strings() {
        type Read<'a> = (
            &'a str,
            &'a str,
            Option<&'a str>,
            Option<&'a str>,
            Option<&'a str>,
        );
        fn read(task: &Task) -> Read<'_> {
            let texts = (
                task.key(),
                task.name(),
                task.reasoning(),
                task.description(),
            );
            (texts.0, texts.1, texts.2, texts.3, task.assignee())
        }
        let some = [None, Some(""), Some("r"), Some("a longer reasoning")];
        let assignees = [None, Some(""), Some("r"), Some("role5")];
        for (key, assignee) in ["t", "a_rather_long_key"]
            .iter()
            .flat_map(|k| assignees.map(|a| (*k, a)))
        {
            for name in ["", "Do it", "Do part 12345 for {team}, é 𝄞"] {
                for (reasoning, description) in some.iter().flat_map(|r| some.map(|d| (*r, d))) {
                    let mut task = Task::assigned(key, name, reasoning, description, assignee);
                    assert_eq!(read(&task), (key, name, reasoning, description, assignee));
                    assert_eq!(task.retry(), None);
                    task.set_retry(Some(1000));
                    assert_eq!(task.retry(), Some(1000));
                    task.set_key("k");
                    task.set_texts("n".into(), description.map(str::to_owned), None);
                    assert_eq!(read(&task), ("k", "n", description, None, assignee));
                    assert_eq!(task.retry(), Some(1000));
                }
            }
        }
        assert_eq!(std::mem::size_of::<Task>(), 32);
    }
}
