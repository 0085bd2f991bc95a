//! Limits that keep parsing bounded in time, memory and stack.

use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};

/// The largest `.plan` file planc reads (64 MiB).
pub const MAX_FILE_BYTES: usize = 64 << 20;

/// The most text one check reads: a file and everything it imports
/// (64 MiB), so the memory bound (a multiple of the input) is a hard cap.
pub const MAX_INPUT_BYTES: usize = 64 << 20;

/// The deepest nesting of braces planc parses (and of arrays and objects in
/// a JSON plan document).
pub const MAX_NESTING: usize = 64;

/// The longest string literal planc reads (1 MiB).
pub const MAX_STRING_BYTES: usize = 1 << 20;

/// The most tasks a plan may have, template instances included.
pub const MAX_TASKS: usize = 1_000_000;

/// The tasks, steps and instances template `use`s may add in one check,
/// whatever the input: see [`expansion_limit`].
pub const MAX_EXPANSION: usize = 1_000_000;

/// What `use`s may add to any input, however small.
pub const EXPANSION_BASE: usize = 50_000;

/// How many bytes of input (the root file and its imports) allow `use`s
/// one more task, step or instance, on top of [`EXPANSION_BASE`].
pub const BYTES_PER_EXPANSION: usize = 32;

/// How many tasks, steps and instances template `use`s may add when the
/// input is `input_bytes` long: expansion multiplies (a template that uses
/// one below it five times, ten levels deep, is ten million tasks from a
/// kilobyte), so it is bounded by a share of the input and a hard cap. An
/// expanded task costs up to about 2 KiB once checked and built into every
/// target, so the base stays within the constant part of planc's memory
/// bound, and the share (64 bytes of memory per byte of input) within its
/// multiple (docs/performance.md, "Memory").
pub fn expansion_limit(input_bytes: usize) -> usize {
    (input_bytes / BYTES_PER_EXPANSION)
        .saturating_add(EXPANSION_BASE)
        .min(MAX_EXPANSION)
}

/// What the `after`s of steps and template instances may add to any
/// input, counted as task-to-task dependencies: see [`dependency_pair_limit`].
pub const DEPENDENCY_PAIRS_BASE: usize = 2_000_000;

/// How many task-to-task dependencies the `after`s of steps and template
/// instances may make in one check for `input_bytes` of input: one step
/// after another makes every task of the first wait for every task of the
/// second, and a plan document lists each of those dependencies, so two
/// steps of 10,000 tasks are 10⁸ of them. 2,000,000 plus one per byte of
/// input (each costs a few tens of bytes until the plan is written out).
pub fn dependency_pair_limit(input_bytes: usize) -> usize {
    DEPENDENCY_PAIRS_BASE.saturating_add(input_bytes)
}

/// The most text after a mistake that planc reads to explain it (4 MiB).
/// The grammar, which explains mistakes, costs up to about a hundred bytes
/// of memory per byte it reads (pest's queue of tokens); past this a
/// mistake is reported alone, as a `planc::limit` error at the item that
/// holds it, and the rest of the file is not read. Files without mistakes
/// are read by the fast reader at any size.
pub const MAX_EXPLAINED_BYTES: usize = 4 << 20;

/// The most syntax errors planc reports for one file; the rest are counted
/// in one last diagnostic. Past a hundred they are mostly echoes of the
/// first, and keeping them all would make a file of junk cost memory and
/// output in proportion to its size.
pub const MAX_SYNTAX_ERRORS: usize = 100;

/// The note that ends a file's syntax errors when there were more than
/// [`MAX_SYNTAX_ERRORS`]: `hidden` more, the first at `first`.
pub(crate) fn more_errors(hidden: usize, first: Span, file: FileId) -> Diagnostic {
    let errors = if hidden == 1 { "error" } else { "errors" };
    Diagnostic::new(
        Code::Limit,
        format!(
            "{hidden} more syntax {errors} not shown; planc reports at most {MAX_SYNTAX_ERRORS} per file"
        ),
    )
    .label(file, Span::at(first.start()), "the next one is here")
    .help("fix the errors above and check again")
}

/// A file over the size limit.
fn too_large(text: &str, file: FileId) -> Option<Diagnostic> {
    (text.len() > MAX_FILE_BYTES).then(|| {
        Diagnostic::new(
            Code::Limit,
            format!(
                "the file is {} bytes; planc reads files of at most {} bytes",
                text.len(),
                MAX_FILE_BYTES
            ),
        )
        .label(file, Span::at(0), "file starts here")
        .help("split the plan into files joined with `import`")
    })
}

/// Checks the limits before parsing; the parser recurses only on braces, so
/// bounding their depth bounds its stack.
pub(crate) fn check(text: &str, file: FileId) -> Option<Diagnostic> {
    if let Some(diagnostic) = too_large(text, file) {
        return Some(diagnostic);
    }
    too_deep(deepest_brace(braces(text))?, file)
}

/// [`check`] of a text whose only syntax errors lie in one item, at `item`,
/// which `depth` braces enclose (a body item of a plan or template: 1; a
/// task of a step: 2) — as a re-read item after an edit is: it costs the
/// item, not the file.
///
/// Why that is the whole check: outside the item the text parses without
/// a mistake, and the grammar nests no deeper than a few levels (a task's
/// body in a step in a plan), so no brace there opens a level past the
/// limit, and the braces before the item leave `depth` open. If the item's
/// own braces close what they open, and no string or comment it opens
/// runs past its end, the text after it is scanned from the state it would
/// be in anyway; so the first brace too deep, if any, is in the item. An
/// item that leaves braces open (a task's body left open in a step) leaves
/// the text after it that many levels deeper, and that text nests at most
/// [`CLEAN_NESTING`] levels past where it starts: while that stays within
/// the limit, no brace after the item is too deep either. When these do
/// not hold, the whole text is scanned.
pub(crate) fn check_item(text: &str, file: FileId, item: Span, depth: usize) -> Option<Diagnostic> {
    if let Some(diagnostic) = too_large(text, file) {
        return Some(diagnostic);
    }
    let mut scan = Braces {
        bytes: text.as_bytes(),
        at: item.start(),
        end: item.end(),
    };
    // As `deepest_brace` counts, from the levels open before the item.
    let mut level = depth;
    for (offset, opens) in &mut scan {
        if opens {
            level += 1;
            if level > MAX_NESTING {
                return too_deep(offset, file);
            }
        } else {
            level = level.saturating_sub(1);
        }
    }
    if level + CLEAN_NESTING <= MAX_NESTING && scan.at == item.end() {
        return None;
    }
    check(text, file)
}

/// How deep the braces of text without a syntax error nest, at most, from
/// wherever it starts: `plan { step { task { } } }` (a template's body
/// too; a template instance's body is one level in a plan's). Strings and
/// comments hold no braces for [`braces`].
const CLEAN_NESTING: usize = 3;

/// The error for the brace at `offset`, which opens a level past the limit.
fn too_deep(offset: usize, file: FileId) -> Option<Diagnostic> {
    Some(
        Diagnostic::new(
            Code::Limit,
            format!("braces nest deeper than {MAX_NESTING} levels"),
        )
        .label(file, Span::new(offset, offset + 1), "too deep here")
        .help("a plan nests at most plan { step { task { } } }; close the braces you opened"),
    )
}

/// The offset of the first `{` that opens a level deeper than the limit,
/// outside strings and comments.
fn deepest_brace(braces: impl Iterator<Item = (usize, bool)>) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, opens) in braces {
        if opens {
            depth += 1;
            if depth > MAX_NESTING {
                return Some(offset);
            }
        } else {
            depth = depth.saturating_sub(1);
        }
    }
    None
}

/// A table of the bytes in `bytes`, for the scanners' loops.
pub(crate) const fn byte_set(bytes: &[u8]) -> [bool; 256] {
    let mut set = [false; 256];
    let mut i = 0;
    while i < bytes.len() {
        set[bytes[i] as usize] = true;
        i += 1;
    }
    set
}

/// The bytes that may start a brace, a string or a comment.
const SPECIAL: [bool; 256] = byte_set(b"{}\"#");

/// The braces of `text` outside strings and comments, with their offsets
/// (`true` for `{`): a lexical view just precise enough to count them. It
/// runs on every keystroke that leaves a syntax error in a large file, so
/// it skips the rest of the text in runs (`memchr` inside strings and
/// comments) instead of looking at each byte in turn.
///
/// It must see a string or a comment wherever the grammar's recovery does
/// (`bad_string`, `COMMENT`): a brace it takes for text but the grammar for
/// code would escape the nesting limit. So a comment ends at `\n` or `\r`,
/// a one-line string at its line's end, a `"""` string at the end of the
/// file, and `\` skips the next byte in both kinds of string.
pub(crate) fn braces(text: &str) -> impl Iterator<Item = (usize, bool)> + '_ {
    Braces {
        bytes: text.as_bytes(),
        at: 0,
        end: text.len(),
    }
}

/// The scan of [`braces`] over `bytes[at..end]`: it starts outside strings
/// and comments at `at`, and stops at the first token that starts at or
/// after `end` (a string or comment that starts before `end` is skipped
/// whole, so `at` is then past `end`).
struct Braces<'a> {
    bytes: &'a [u8],
    at: usize,
    end: usize,
}

impl Iterator for Braces<'_> {
    type Item = (usize, bool);

    fn next(&mut self) -> Option<(usize, bool)> {
        let bytes = self.bytes;
        let i = &mut self.at;
        while *i < self.end {
            match bytes[*i] {
                b'{' | b'}' => {
                    *i += 1;
                    return Some((*i - 1, bytes[*i - 1] == b'{'));
                }
                b'#' => {
                    *i =
                        memchr::memchr2(b'\n', b'\r', &bytes[*i..]).map_or(bytes.len(), |k| *i + k);
                }
                b'"' if bytes[*i..].starts_with(b"\"\"\"") => *i = triple_string_end(bytes, *i + 3),
                b'"' => *i = string_end(bytes, *i + 1),
                _ => {
                    *i += 1;
                    while *i < self.end && !SPECIAL[bytes[*i] as usize] {
                        *i += 1;
                    }
                }
            }
        }
        None
    }
}

/// Where a `"""` string whose text starts at `i` ends (past its closing
/// quotes, or the end of the text).
fn triple_string_end(bytes: &[u8], mut i: usize) -> usize {
    loop {
        let Some(k) = memchr::memchr2(b'"', b'\\', &bytes[i.min(bytes.len())..]) else {
            return bytes.len();
        };
        i += k;
        if bytes[i] == b'\\' {
            i += 2;
        } else if bytes[i..].starts_with(b"\"\"\"") {
            return i + 3;
        } else {
            i += 1;
        }
    }
}

/// Where a one-line string whose text starts at `i` ends (past its closing
/// quote, past the newline that ends it unclosed, or the end of the text).
fn string_end(bytes: &[u8], mut i: usize) -> usize {
    loop {
        let rest = &bytes[i.min(bytes.len())..];
        let Some(k) = memchr::memchr3(b'"', b'\n', b'\\', rest) else {
            return bytes.len();
        };
        i += k;
        if bytes[i] == b'\\' {
            i += 2;
        } else {
            return i + 1;
        }
    }
}

/// Checks a JSON plan document's size and nesting before it is parsed (the
/// JSON parser recurses on nesting).
pub fn check_json(text: &str, file: FileId) -> Option<Diagnostic> {
    if let Some(diagnostic) = too_large(text, file) {
        return Some(diagnostic);
    }
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut in_string = false;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' if in_string => i += 1,
            b'"' => in_string = !in_string,
            b'[' | b'{' if !in_string => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Some(
                        Diagnostic::new(
                            Code::Limit,
                            format!("arrays and objects nest deeper than {MAX_NESTING} levels"),
                        )
                        .label(file, Span::new(i, i + 1), "too deep here")
                        .help("a plan document nests a few levels: tasks, their dependencies, `retry`"),
                    );
                }
            }
            b']' | b'}' if !in_string => depth = depth.saturating_sub(1),
            _ => {}
        }
        i += 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    /// The lexical view [`super::braces`] must give, byte by byte.
    fn braces_one_by_one(text: &str) -> Vec<(usize, bool)> {
        let bytes = text.as_bytes();
        let mut found = Vec::new();
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'#' => {
                    while i < bytes.len() && bytes[i] != b'\n' && bytes[i] != b'\r' {
                        i += 1;
                    }
                }
                b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                    i += 3;
                    while i < bytes.len() && !bytes[i..].starts_with(b"\"\"\"") {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 3;
                }
                b'"' => {
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'"' && bytes[i] != b'\n' {
                        i += if bytes[i] == b'\\' { 2 } else { 1 };
                    }
                    i += 1;
                }
                byte => {
                    if byte == b'{' || byte == b'}' {
                        found.push((i, byte == b'{'));
                    }
                    i += 1;
                }
            }
        }
        found
    }

    /// A plan with `item` as a task of a step (`true`) or as a step of the
    /// plan, the rest of it without mistakes; and the item's span.
    fn around(item: &str, in_step: bool) -> (String, crate::span::Span) {
        let (before, after) = if in_step {
            (
                "# a plan {\nplan p {\n    goal \"G {x}\"\n    step a \"A\" {\n        task t \"T\" { }\n        ",
                "\n        task u \"U\"\n    }\n    task v \"V \\\" {\" { after t }\n}\n",
            )
        } else {
            (
                "plan p {\n    task t \"T\"\n    ",
                "\n    task v \"\"\"V {\"\"\"\n}\n",
            )
        };
        let text = format!("{before}{item}{after}");
        (
            text,
            crate::span::Span::new(before.len(), before.len() + item.len()),
        )
    }

    /// Braces `n` deep, closed or not, for items past the limit.
    fn deep(n: usize, closed: bool) -> String {
        let close = if closed { "}".repeat(n) } else { String::new() };
        format!("{}{close}", "{".repeat(n))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::generate::fuzz_cases(1000)))]
        /// The check of one item gives what the check of the whole text
        /// gives, whatever the item holds: braces past the limit, closed
        /// or not, strings and comments left open.
        #[test]
        fn an_items_check_is_the_whole_check(
            junk in "[{}\"#\\\\\n a]{0,30}",
            depth in 0..80usize,
            closed: bool,
            in_step: bool,
        ) {
            let keyword = if in_step { "task n \"N\" {" } else { "step n {" };
            let item = format!("{keyword} {junk}{} }}", deep(depth, closed));
            let (text, span) = around(&item, in_step);
            let depth_before = 1 + usize::from(in_step);
            prop_assert_eq!(
                super::check_item(&text, super::FileId(0), span, depth_before),
                super::check(&text, super::FileId(0)),
                "{}", text
            );
        }
    }

    /// After an edit inside a task, a re-read item with mistakes is
    /// accepted or refused as the whole file's parse reads the text: the
    /// limit error past 64 levels, the item re-read below it.
    #[test]
    fn a_reread_item_past_the_nesting_limit_is_read_as_the_whole_file_is() {
        use crate::diagnostic::Code;
        use crate::syntax::{parse, reparse, Edit};
        let text = crate::generate::plan_source(200, false);
        let task = "task t100 \"Do part 100 for {team}\" {";
        let at = text.find(task).unwrap() + task.len();
        let old = parse(&text, super::FileId(0));
        for (n, past_limit) in [(10, false), (61, false), (62, true), (70, true)] {
            let new = format!("{}{}{}", &text[..at], deep(n, true), &text[at..]);
            let whole = parse(&new, super::FileId(0));
            let edit = Edit::between(&text, &new);
            let reread = reparse(&old.file, &old.diagnostics, &new, edit, super::FileId(0));
            let limit = whole.diagnostics.iter().any(|d| d.code == Code::Limit);
            assert_eq!(limit, past_limit, "{n} braces: {:?}", whole.diagnostics);
            match reread {
                Some(reread) => {
                    assert!(!past_limit, "{n} braces re-read past the limit");
                    assert_eq!(reread.parsed.file, whole.file);
                    assert_eq!(reread.parsed.diagnostics, whole.diagnostics);
                }
                None => assert!(past_limit, "{n} braces not re-read"),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn braces_are_found_as_byte_by_byte(text in "[{}\"#\\\\\n\ra ]{0,40}") {
            let fast: Vec<_> = super::braces(&text).collect();
            prop_assert_eq!(fast, braces_one_by_one(&text));
        }
    }
}
