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
    let deepest = deepest_brace(text)?;
    Some(
        Diagnostic::new(
            Code::Limit,
            format!("braces nest deeper than {MAX_NESTING} levels"),
        )
        .label(file, Span::new(deepest, deepest + 1), "too deep here")
        .help("a plan nests at most plan { step { task { } } }; close the braces you opened"),
    )
}

/// The offset of the first `{` that opens a level deeper than the limit,
/// outside strings and comments.
fn deepest_brace(text: &str) -> Option<usize> {
    let mut depth = 0usize;
    for (offset, opens) in braces(text) {
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
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            match bytes[i] {
                b'{' | b'}' => {
                    i += 1;
                    return Some((i - 1, bytes[i - 1] == b'{'));
                }
                b'#' => {
                    i = memchr::memchr2(b'\n', b'\r', &bytes[i..]).map_or(bytes.len(), |k| i + k);
                }
                b'"' if bytes[i..].starts_with(b"\"\"\"") => {
                    i += 3;
                    loop {
                        let Some(k) = memchr::memchr2(b'"', b'\\', &bytes[i.min(bytes.len())..])
                        else {
                            i = bytes.len();
                            break;
                        };
                        i += k;
                        if bytes[i] == b'\\' {
                            i += 2;
                        } else if bytes[i..].starts_with(b"\"\"\"") {
                            i += 3;
                            break;
                        } else {
                            i += 1;
                        }
                    }
                }
                b'"' => {
                    i += 1;
                    loop {
                        let rest = &bytes[i.min(bytes.len())..];
                        let Some(k) = memchr::memchr3(b'"', b'\n', b'\\', rest) else {
                            i = bytes.len();
                            break;
                        };
                        i += k;
                        if bytes[i] == b'\\' {
                            i += 2;
                        } else {
                            i += 1;
                            break;
                        }
                    }
                }
                _ => {
                    i += 1;
                    while i < bytes.len() && !SPECIAL[bytes[i] as usize] {
                        i += 1;
                    }
                }
            }
        }
        None
    })
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4000))]
        #[test]
        fn braces_are_found_as_byte_by_byte(text in "[{}\"#\\\\\n\ra ]{0,40}") {
            let fast: Vec<_> = super::braces(&text).collect();
            prop_assert_eq!(fast, braces_one_by_one(&text));
        }
    }
}
