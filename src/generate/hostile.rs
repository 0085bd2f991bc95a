//! Hostile input: the shapes that have made planc hang, grow without bound,
//! read what it should not, or print raw terminal controls; each at any size
//! (from a seed and a byte count), plus random mixes of them.
//!
//! Deterministic like the rest of [`crate::generate`]: the same arguments
//! give the same text. `tests/hostile/main.rs` runs every shape through the
//! library and the `planc` binary; `scripts/fuzz-nightly` runs it at
//! nightly size. The shapes that need the file system (imports leaving the
//! project, `/dev/zero`, FIFOs) are built from [`imports`] by the suite.

use std::fmt::Write;

use super::xorshift;

/// The kinds of hostile input, one `#[test]` each in `tests/hostile/main.rs`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    /// Text whose checking once took more than linear time.
    Time,
    /// Text whose checking once took memory out of proportion to its size.
    Memory,
    /// Terminal controls in names, titles, results and source text.
    Terminal,
}

/// Terminal controls that must never reach human output raw: colour and
/// screen escapes, a window-title change ended by BEL, BEL alone, a carriage
/// return that overwrites the line, backspace, DEL, the one-byte C1 CSI, and
/// bidirectional overrides and isolates that reorder what is shown.
pub const CONTROLS: &[&str] = &[
    "\u{1b}[31m",
    "\u{1b}[2J\u{1b}[H",
    "\u{1b}]0;owned\u{7}",
    "\u{7}",
    "\r",
    "\u{8}\u{8}",
    "\u{7f}",
    "\u{9b}31m",
    "\u{202e}",
    "\u{202d}",
    "\u{2066}",
    "\u{2067}",
    "\u{2069}",
    "\u{202c}",
];

/// The start of a forged line: text that puts it after a newline in a name
/// or result tries to print a line of its own.
pub const FORGED_LINE: &str = "FORGED-LINE";

/// Whether `c` is a terminal control [`CONTROLS`] is made of (or one of its
/// kind: any C0 control but tab and newline, DEL, C1, a bidi override or
/// isolate).
pub fn is_terminal_control(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// A generator of numbers below a bound (as [`xorshift`]) from any seed,
/// small seeds included: the seed is spread over the bits first.
pub fn numbers(seed: u64) -> impl FnMut(usize) -> usize {
    let mut next = xorshift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    for _ in 0..4 {
        next(2);
    }
    next
}

/// One hostile text of `class`, about `size` bytes (at least a few hundred),
/// drawn from `seed`, with the name of its shape.
pub fn case(class: Class, seed: u64, size: usize) -> (&'static str, String) {
    let mut next = numbers(seed);
    match class {
        Class::Time => match next(3) {
            0 => (
                "unclosed string of `{`",
                unterminated_braces(size, next(2) == 0),
            ),
            1 => ("two-task cycles", two_task_cycles(size / 40)),
            _ => (
                "unclosed `{` mixed",
                mix(&unterminated_braces(size / 2, true), seed, size / 2, false),
            ),
        },
        Class::Memory => match next(3) {
            0 => (
                "template bomb",
                template_bomb(2 + next(15), 2 + next(7), size),
            ),
            1 => ("bare words", bare_words(size)),
            _ => (
                "template bomb mixed",
                mix(&template_bomb(15, 4, 0), seed, size, false),
            ),
        },
        Class::Terminal => match next(3) {
            0 => ("plan with controls", controlled_plan(seed, size)),
            1 => (
                "plan with controls mixed",
                mix(&controlled_plan(seed, size / 2), seed, size / 2, true),
            ),
            _ => ("source with controls", controlled_source(seed, size)),
        },
    }
}

/// A plan whose last task's title is never closed and holds up to `size`
/// bytes of `{` (an interpolation opened over and over), with `words` a
/// name inside some of them; the file ends there.
pub fn unterminated_braces(size: usize, words: bool) -> String {
    let mut out = String::with_capacity(size + 64);
    out.push_str("plan p {\n    goal \"g\"\n    task a \"");
    while out.len() < size {
        out.push('{');
        if words && out.len().is_multiple_of(7) {
            out.push_str("x ");
        }
    }
    out.push('\n');
    out
}

/// A plan of `pairs` two-task cycles (`aN` after `bN`, `bN` after `aN`).
pub fn two_task_cycles(pairs: usize) -> String {
    let mut out = String::with_capacity(pairs * 48 + 32);
    out.push_str("plan p {\n    goal \"g\"\n");
    for i in 0..pairs.max(1) {
        let _ = writeln!(out, "    task a{i} \"A\" {{ after b{i} }}");
        let _ = writeln!(out, "    task b{i} \"B\" {{ after a{i} }}");
    }
    out.push_str("}\n");
    out
}

/// A plan whose `tasks` tasks make one dependency cycle (`t0` after `t1`
/// after … after `t0`): a walk of the graph as deep as the cycle is long
/// once overflowed the stack at about 22,000 tasks.
pub fn long_cycle(tasks: usize) -> String {
    let tasks = tasks.max(2);
    let mut out = String::with_capacity(tasks * 40 + 32);
    out.push_str("plan p {\n    goal \"g\"\n");
    for i in 0..tasks {
        let _ = writeln!(out, "    task t{i} \"x\" {{ after t{} }}", (i + 1) % tasks);
    }
    out.push_str("}\n");
    out
}

/// `levels` templates, each `use`-ing the one below `fanout` times, and a
/// plan using the top one: `fanout ^ levels` tasks from a few hundred
/// bytes. Padded with comments to `size` bytes.
pub fn template_bomb(levels: usize, fanout: usize, size: usize) -> String {
    let mut out =
        String::from("template t0() {\n    task a \"A\"\n    task b \"B\" { after a }\n}\n");
    for level in 1..levels.max(1) {
        let _ = writeln!(out, "template t{level}() {{");
        for k in 0..fanout {
            let _ = writeln!(out, "    use t{}() as u{k}", level - 1);
        }
        out.push_str("}\n");
    }
    let _ = writeln!(
        out,
        "plan p {{\n    goal \"g\"\n    use t{}() as top\n}}",
        levels.max(1) - 1
    );
    while out.len() < size {
        out.push_str("# padding padding padding padding padding padding\n");
    }
    out
}

/// A plan of `size` bytes whose densest part for the grammar comes after a
/// mistake: tasks, each followed by comment lines (`dense_comments`) or
/// each naming the first task a hundred times (`after a,a,…`), with a task
/// that does not parse `mistake_from_end` bytes before the end (or at the
/// top, if the file is smaller). Memory per byte is highest where the
/// grammar reads (pest's token queue) and the checker resolves references.
pub fn dense_after_mistake(size: usize, mistake_from_end: usize, dense_comments: bool) -> String {
    let mut out = String::with_capacity(size + 256);
    out.push_str("plan p {\n    goal \"g\"\n    task a \"A\"\n");
    let mistake_at = size.saturating_sub(mistake_from_end);
    let mut mistake = false;
    let mut i = 0usize;
    while out.len() < size {
        if !mistake && out.len() >= mistake_at {
            out.push_str("    task = \"not a name\"\n");
            mistake = true;
        }
        let _ = write!(out, "    task t{i} \"T\"");
        i += 1;
        if dense_comments {
            out.push('\n');
            for _ in 0..64 {
                out.push_str("#\n");
            }
        } else {
            out.push_str(" { after a");
            for _ in 0..100 {
                out.push_str(",a");
            }
            out.push_str(" }\n");
        }
    }
    out.push_str("}\n");
    out
}

/// A plan holding `size` bytes of bare words where items belong.
pub fn bare_words(size: usize) -> String {
    let mut out = String::with_capacity(size + 64);
    out.push_str("plan p {\n    goal \"g\"\n");
    let mut i = 0usize;
    while out.len() < size {
        let _ = write!(out, "w{} ", i % 1000);
        i += 1;
        if i.is_multiple_of(16) {
            out.push('\n');
        }
    }
    out.push_str("\n}\n");
    out
}

/// The text `what` with terminal controls (and a forged line) inserted,
/// chosen by `next`. For a single-line field: the newline is one of them.
fn controlled(what: &str, next: &mut impl FnMut(usize) -> usize, newline: bool) -> String {
    let mut out = String::from(what);
    for _ in 0..1 + next(3) {
        out.push_str(CONTROLS[next(CONTROLS.len())]);
        out.push_str(what);
    }
    if newline {
        let _ = write!(out, "\n{FORGED_LINE} ok");
    }
    out
}

/// The string literal for `text` in a `.plan` file: quotes, backslashes,
/// braces, newlines and carriage returns escaped; other controls kept raw
/// (as a hostile file would have them) or, without `raw`, escaped as
/// `\u{…}` (so they reach the plan's strings either way).
fn literal(text: &str, raw: bool) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' | '\\' | '{' | '}' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if !raw && is_terminal_control(c) => {
                let _ = write!(out, "\\u{{{:x}}}", c as u32);
            }
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A valid plan of about `size` bytes whose titles, goal, reasonings and
/// descriptions carry terminal controls and forged lines, raw or escaped.
pub fn controlled_plan(seed: u64, size: usize) -> String {
    let mut next = numbers(seed);
    let mut field = |what: &str| {
        let text = controlled(what, &mut next, true);
        let raw = next(2) == 0;
        literal(&text, raw)
    };
    let mut out = String::with_capacity(size + 256);
    let _ = writeln!(
        out,
        "plan p {{\n    title {}\n    goal {}\n    role r {}",
        field("Title"),
        field("Goal"),
        field("Role")
    );
    let mut i = 0;
    while out.len() < size || i < 2 {
        let _ = write!(out, "    task t{i} {} {{", field("Task"));
        if i > 0 {
            let _ = write!(out, " after t{}", i - 1);
        }
        let _ = writeln!(
            out,
            " assignee r reasoning {} description {} }}",
            field("Why"),
            field("How")
        );
        i += 1;
    }
    out.push_str("}\n");
    out
}

/// Source text with terminal controls where the checker quotes it back:
/// in names, comments, unknown items and unclosed strings (controls and
/// carriage returns raw, in every position a diagnostic may show).
pub fn controlled_source(seed: u64, size: usize) -> String {
    let mut next = numbers(seed);
    let mut out = String::with_capacity(size + 256);
    out.push_str("plan p {\n    goal \"g\"\n");
    let mut i = 0;
    while out.len() < size || i < 4 {
        let control = CONTROLS[next(CONTROLS.len())];
        let _ = match next(5) {
            0 => writeln!(out, "    task t{i}{control} \"T\""),
            1 => writeln!(
                out,
                "    # {control} comment {i}\n    task t{i} \"T\" {{ after nope{i} }}"
            ),
            2 => writeln!(out, "    {control}item{i} {control}"),
            3 => writeln!(out, "    task t{i} \"unclosed {control}\n"),
            _ => writeln!(out, "    task t{i} \"T\" {{ after {control}u{i} }}"),
        };
        i += 1;
    }
    out.push_str("}\n");
    out
}

/// A JSON plan document (`planc/1`) of `tasks` tasks whose names, results,
/// errors, reasonings and assignees carry terminal controls and forged
/// lines, with some tasks already finished so every field is shown.
pub fn controlled_document(seed: u64, tasks: usize) -> String {
    let mut next = numbers(seed);
    let source = crate::generate::plan_source(tasks.max(2), false);
    let compiled = crate::compile("gen.plan", &source, &Default::default());
    let Some(document) = compiled.document() else {
        return String::from("[]");
    };
    let mut value: serde_json::Value =
        serde_json::from_str(&document.to_json()).unwrap_or_default();
    for key in ["name", "goal", "title"] {
        if let Some(v) = value.get_mut(key) {
            *v = controlled(key, &mut next, true).into();
        }
    }
    if let Some(list) = value.get_mut("tasks").and_then(|t| t.as_array_mut()) {
        for (i, task) in list.iter_mut().enumerate() {
            let Some(task) = task.as_object_mut() else {
                continue;
            };
            for key in ["name", "reasoning"] {
                task.insert(key.into(), controlled(key, &mut next, true).into());
            }
            // Finished tasks, so results and errors are shown too (the
            // first few in order, so the state stays consistent).
            if i == 0 {
                task.insert("status".into(), "completed".into());
                task.insert(
                    "result".into(),
                    controlled("result", &mut next, true).into(),
                );
            }
        }
    }
    value.to_string()
}

/// A plan file importing each of `paths` (as written), then a small plan.
pub fn imports(paths: &[&str]) -> String {
    let mut out = String::new();
    for path in paths {
        let _ = writeln!(out, "import {}", literal(path, false));
    }
    out.push_str("plan p {\n    goal \"g\"\n    task a \"A\"\n}\n");
    out
}

/// `text` with random edits drawn from `seed` until it grows by about
/// `extra` bytes: pieces of the other hostile shapes inserted, ranges
/// doubled, braces and quotes dropped in, and with `controls` terminal
/// controls (left out for the other classes, so a failure names its class).
pub fn mix(text: &str, seed: u64, extra: usize, controls: bool) -> String {
    let mut next = numbers(seed ^ 0x5DEE_CE66);
    let mut out = text.to_owned();
    let target = text.len() + extra.max(64);
    let mut rounds = 0;
    while out.len() < target && rounds < 10_000 {
        rounds += 1;
        let mut at = next(out.len() + 1);
        while !out.is_char_boundary(at) {
            at -= 1;
        }
        let piece = match next(6) {
            0 => "{".repeat(1 + next(512)),
            1 if controls => CONTROLS[next(CONTROLS.len())].to_owned(),
            1 => "}".to_owned(),
            2 => two_task_cycles(1 + next(32)),
            3 => "use t3() as m ".repeat(1 + next(8)),
            4 => "\"".to_owned(),
            _ => {
                // Double a range of the text so far.
                let mut end = (at + 1 + next(256)).min(out.len());
                while !out.is_char_boundary(end) {
                    end -= 1;
                }
                out[at..end].to_owned()
            }
        };
        out.insert_str(at, &piece);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_class_reaches_its_size_and_is_deterministic() {
        for class in [Class::Time, Class::Memory, Class::Terminal] {
            for seed in 1..20 {
                let (_, text) = case(class, seed, 4096);
                assert!(text.len() >= 2048, "{class:?} {seed}: {} bytes", text.len());
                assert_eq!(text, case(class, seed, 4096).1);
            }
        }
    }

    #[test]
    fn shapes_are_what_they_say() {
        let cycles = two_task_cycles(3);
        let compiled = crate::compile("c.plan", &cycles, &Default::default());
        let cycle_count = compiled
            .diagnostics
            .iter()
            .filter(|d| d.code == crate::diagnostic::Code::Cycle)
            .count();
        assert_eq!(cycle_count, 3, "{:?}", compiled.diagnostics);

        let plan = controlled_plan(7, 4096);
        let compiled = crate::compile("t.plan", &plan, &Default::default());
        assert!(!compiled.has_errors(), "{:?}", compiled.diagnostics);
        assert!(plan.chars().any(is_terminal_control));

        let document = controlled_document(7, 10);
        let value: serde_json::Value = serde_json::from_str(&document).expect("JSON");
        assert!(value["tasks"][0]["result"]
            .as_str()
            .is_some_and(|r| r.contains(FORGED_LINE)));
    }
}
