//! The keywords of the `.plan` language: one table that the syntax layer's
//! recovery, the fast reader, completion and hover read, and that the tests
//! hold to `grammar/plan.pest` and the editor packages.

use std::sync::LazyLock;

use super::grammar::Rule;

/// A kind of body: which items or fields may stand in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Context {
    Top,
    Plan,
    Template,
    Step,
    Task,
    Use,
}

impl Context {
    /// The keywords that may begin an item or field here.
    pub fn keywords(self) -> &'static [&'static str] {
        allowed_in(self)
    }

    pub(super) fn name(self) -> &'static str {
        match self {
            Context::Top => "the top of a file",
            Context::Plan => "a plan",
            Context::Template => "a template",
            Context::Step => "a step",
            Context::Task => "a task",
            Context::Use => "a `use` body",
        }
    }

    pub(super) fn place(self) -> &'static str {
        match self {
            Context::Top => "at the top of a file",
            Context::Plan => "in a plan",
            Context::Template => "in a template",
            Context::Step => "in a step",
            Context::Task => "in a task",
            Context::Use => "in a `use` body",
        }
    }

    pub(super) fn what(self) -> &'static str {
        match self {
            Context::Top => "item",
            Context::Plan | Context::Template => "item",
            Context::Step => "item",
            Context::Task | Context::Use => "field",
        }
    }
}

/// What follows a keyword.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Then {
    /// A new name (`task NAME`, `param NAME`, `as PREFIX`).
    Name,
    /// A value: a string or a number (`goal "…"`, `retry 2`).
    Value,
    /// Names of things declared elsewhere (`after a, b`, `assignee ROLE`,
    /// `use TEMPLATE(…)`, `priority high`).
    Reference,
    /// Nothing: the keyword is the whole field (`optional`, `sequential`).
    Nothing,
}

/// One keyword: the word, where it may begin an item or field, and a line
/// about it for hover and completion.
#[derive(Clone, Copy, Debug)]
pub struct Keyword {
    /// The word as written.
    pub word: &'static str,
    /// The bodies it may begin an item or field in (none: it only stands
    /// inside another item, as `as` does).
    pub places: &'static [Context],
    /// What follows it.
    pub then: Then,
    /// The grammar's token rule (`kw_task`).
    pub token: Rule,
    /// The grammar rule of the item or field it begins (`task`), if any.
    pub rule: Option<Rule>,
    /// One line about it, in Markdown.
    pub doc: &'static str,
}

use Context::{Plan, Step, Task, Template, Top, Use};

const fn kw(
    word: &'static str,
    places: &'static [Context],
    then: Then,
    token: Rule,
    rule: Option<Rule>,
    doc: &'static str,
) -> Keyword {
    Keyword {
        word,
        places,
        then,
        token,
        rule,
        doc,
    }
}

/// Every keyword. The order is the order completion and "may hold" help list
/// the keywords of a body in.
#[rustfmt::skip]
pub const KEYWORDS: &[Keyword] = &[
    // Items of a file.
    kw("plan", &[Top], Then::Name, Rule::kw_plan, Some(Rule::plan),
        "`plan NAME { … }` declares a plan: its goal, parameters, roles, steps and tasks."),
    kw("import", &[Top], Then::Value, Rule::kw_import, Some(Rule::import),
        "`import \"lib.plan\"` makes the roles, parameters and templates of another file available."),
    kw("template", &[Top], Then::Name, Rule::kw_template, Some(Rule::template),
        "`template NAME(PARAM: TYPE, …) { … }` declares reusable roles, steps and tasks for `use`."),
    // The plan's header.
    kw("title", &[Plan], Then::Value, Rule::kw_title, Some(Rule::title),
        "`title \"…\"`: the plan's title, shown to people."),
    kw("goal", &[Plan], Then::Value, Rule::kw_goal, Some(Rule::goal),
        "`goal \"…\"`: what the plan achieves; agents read it to stay on course."),
    kw("language", &[Plan], Then::Value, Rule::kw_language, Some(Rule::language),
        "`language \"en\"`: the language the plan's text is written in."),
    kw("max_iterations", &[Plan], Then::Value, Rule::kw_max_iterations, Some(Rule::max_iterations),
        "`max_iterations N`: the runner pauses the plan after N agent iterations."),
    kw("transition_rounds", &[Plan], Then::Value, Rule::kw_transition_rounds, Some(Rule::transition_rounds),
        "`transition_rounds N`: rounds an agent spends on a step before a transition word (\"next\", \"接下来\") advances it (default 1)."),
    kw("fallback_rounds", &[Plan], Then::Value, Rule::kw_fallback_rounds, Some(Rule::fallback_rounds),
        "`fallback_rounds N`: rounds on a step after which it advances without a marker (default 5)."),
    // Fields of a task.
    kw("after", &[Task, Step, Use], Then::Reference, Rule::kw_after, Some(Rule::after),
        "`after a, b`: wait for these tasks or steps to be done."),
    kw("assignee", &[Task], Then::Reference, Rule::kw_assignee, Some(Rule::assignee),
        "`assignee ROLE`: the role that does the task."),
    kw("reasoning", &[Task], Then::Value, Rule::kw_reasoning, Some(Rule::reasoning),
        "`reasoning \"…\"`: why the task exists."),
    kw("description", &[Task], Then::Value, Rule::kw_description, Some(Rule::description),
        "`description \"…\"`: longer instructions for the task."),
    kw("retry", &[Task, Plan], Then::Value, Rule::kw_retry, Some(Rule::retry),
        "`retry N`: how often a failed task is tried again (in a plan: for tasks without their own)."),
    kw("optional", &[Task], Then::Nothing, Rule::kw_optional, Some(Rule::optional),
        "`optional`: the task's failure does not fail the plan."),
    kw("priority", &[Task], Then::Reference, Rule::kw_priority, Some(Rule::priority),
        "`priority high|medium|low`: which ready task is taken first (default medium)."),
    // Declarations.
    kw("param", &[Plan, Top], Then::Name, Rule::kw_param, Some(Rule::param),
        "`param NAME: TYPE = DEFAULT`: a value given at build time (`--set NAME=VALUE`)."),
    kw("role", &[Plan, Template, Top], Then::Name, Rule::kw_role, Some(Rule::role),
        "`role NAME \"…\"`: who can be assigned tasks."),
    kw("step", &[Plan, Template], Then::Name, Rule::kw_step, Some(Rule::step),
        "`step NAME \"…\" { … }`: a named group of tasks."),
    kw("sequential", &[Step], Then::Nothing, Rule::kw_sequential, Some(Rule::sequential),
        "`sequential`: each task of the step waits for the one before it."),
    kw("task", &[Plan, Template, Step], Then::Name, Rule::kw_task, Some(Rule::task),
        "`task NAME \"…\" { … }`: one piece of work for an agent."),
    kw("use", &[Plan, Template], Then::Reference, Rule::kw_use, Some(Rule::use_),
        "`use TEMPLATE(ARG = VALUE, …) as PREFIX`: the template's tasks, named `PREFIX.task`."),
    kw("as", &[], Then::Name, Rule::kw_as, None,
        "`as PREFIX`: the name a `use` gives the template's tasks."),
];

/// The length of the longest keyword.
const LONGEST: usize = {
    let (mut i, mut longest) = (0, 0);
    while i < KEYWORDS.len() {
        if KEYWORDS[i].word.len() > longest {
            longest = KEYWORDS[i].word.len();
        }
        i += 1;
    }
    longest
};

/// The keyword spelt `word`.
pub fn get(word: &str) -> Option<&'static Keyword> {
    // Every keyword is 2 to LONGEST lowercase letters and `_`: most names are
    // told apart without comparing them to each keyword.
    if !(2..=LONGEST).contains(&word.len())
        || !word.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
    {
        return None;
    }
    KEYWORDS.iter().find(|k| k.word == word)
}

/// Whether `word` is a reserved keyword.
pub fn is_keyword(word: &str) -> bool {
    get(word).is_some()
}

/// Whether `rule` is a keyword's token rule (`kw_task`).
pub fn is_token(rule: Rule) -> bool {
    KEYWORDS.iter().any(|k| k.token == rule)
}

/// The keywords that may begin an item or field in `context`, in table order.
pub fn allowed_in(context: Context) -> &'static [&'static str] {
    static BY_CONTEXT: LazyLock<Vec<(Context, Vec<&'static str>)>> = LazyLock::new(|| {
        [Top, Plan, Template, Step, Task, Use]
            .into_iter()
            .map(|context| {
                let words = KEYWORDS
                    .iter()
                    .filter(|k| k.places.contains(&context))
                    .map(|k| k.word)
                    .collect();
                (context, words)
            })
            .collect()
    });
    BY_CONTEXT
        .iter()
        .find(|(c, _)| *c == context)
        .map_or(&[], |(_, words)| words.as_slice())
}

/// Where a keyword may stand, for "it belongs …" help: "in a task or a plan".
pub fn home(keyword: &Keyword) -> String {
    if keyword.places.is_empty() {
        return "only inside another item".to_owned();
    }
    if keyword.places == [Top] {
        return "at the top of a file".to_owned();
    }
    // Roles and parameters at the top of a file belong to a library.
    let places: Vec<&str> = keyword
        .places
        .iter()
        .map(|&place| match place {
            Top => "at the top of a library",
            Plan => "a plan",
            Template => "a template",
            Step => "a step",
            Task => "a task",
            Use => "a `use` body",
        })
        .collect();
    let mut text = String::from("in ");
    for (i, place) in places.iter().enumerate() {
        if i > 0 {
            text.push_str(if i + 1 == places.len() { " or " } else { ", " });
        }
        text.push_str(place);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_read_as_sentences() {
        let home_of = |word| home(get(word).unwrap());
        assert_eq!(home_of("plan"), "at the top of a file");
        assert_eq!(home_of("retry"), "in a task or a plan");
        assert_eq!(home_of("after"), "in a task, a step or a `use` body");
        assert_eq!(
            home_of("role"),
            "in a plan, a template or at the top of a library"
        );
        assert_eq!(home_of("as"), "only inside another item");
    }

    use std::collections::BTreeSet;

    fn table() -> BTreeSet<String> {
        KEYWORDS.iter().map(|k| k.word.to_owned()).collect()
    }

    fn read(path: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
        std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }

    /// The strings quoted in `line`.
    fn literals(line: &str) -> Vec<&str> {
        line.split('"').skip(1).step_by(2).collect()
    }

    #[test]
    fn the_grammar_has_exactly_the_keywords_of_the_table() {
        let grammar = read("grammar/plan.pest");
        // The `kw_*` token rules: `kw_task = @{ "task" ~ !ident_char }`.
        let mut tokens = BTreeSet::new();
        for line in grammar.lines().filter(|l| l.starts_with("kw_")) {
            let (name, body) = line.split_once('=').unwrap();
            let word = literals(body)[0];
            assert_eq!(name.trim(), format!("kw_{word}"), "{line}");
            tokens.insert(word.to_owned());
        }
        assert_eq!(tokens, table(), "the kw_ rules of grammar/plan.pest");

        // The `keyword` rule, grouped by first letter:
        // `( "t" ~ ("ask" | "itle") | "g" ~ "oal" … )`.
        let rule = grammar.split("\nkeyword = @{").nth(1).unwrap();
        let rule = &rule[..rule.find("\n}").unwrap()];
        let mut words = BTreeSet::new();
        for line in rule.lines() {
            if let [first, rest @ ..] = literals(line).as_slice() {
                words.extend(rest.iter().map(|r| format!("{first}{r}")));
            }
        }
        assert_eq!(words, table(), "the `keyword` rule of grammar/plan.pest");

        // Each token rule is the one the table names, and each item rule
        // begins with its keyword's token.
        for k in KEYWORDS {
            assert_eq!(format!("{:?}", k.token), format!("kw_{}", k.word));
            if let Some(rule) = k.rule {
                let name = format!("{rule:?}");
                let definition = grammar
                    .lines()
                    .find(|l| l.split_whitespace().next() == Some(name.as_str()))
                    .unwrap_or_else(|| panic!("no rule {name}"));
                let body = definition.split_once('{').unwrap().1.trim_start();
                assert!(body.starts_with(&format!("kw_{}", k.word)), "{definition}");
            }
        }
    }

    #[test]
    fn the_editor_packages_highlight_exactly_the_keywords() {
        let grammar: serde_json::Value =
            serde_json::from_str(&read("editors/vscode/syntaxes/plan.tmLanguage.json")).unwrap();
        let mut words = BTreeSet::new();
        for pattern in grammar["repository"]["keyword"]["patterns"]
            .as_array()
            .unwrap()
        {
            // `(?<![…])(plan|template|step)(?![…])`: the middle group.
            let regex = pattern["match"].as_str().unwrap();
            let group = regex.split(")(").nth(1).unwrap();
            let group = group.split(")(?!").next().unwrap();
            words.extend(group.split('|').map(str::to_owned));
        }
        assert_eq!(words, table(), "the TextMate grammar's keyword patterns");
    }

    #[test]
    fn words_are_unique_and_short() {
        for (i, k) in KEYWORDS.iter().enumerate() {
            assert!(get(k.word).is_some(), "{} is not found by get", k.word);
            assert!(
                KEYWORDS[..i].iter().all(|o| o.word != k.word),
                "{} twice",
                k.word
            );
            assert!(k.doc.starts_with(&format!("`{}", k.word)), "{}", k.doc);
        }
    }
}
