//! Targeted help for the syntax mistakes people make most, found by writing
//! plans from `docs/language.md` alone: a `param` without `:`, a field with
//! `=` or `:` before its value, text without quotes, a name in quotes, a
//! fraction where a whole number goes, a `use` without `as`.

use super::keywords::is_keyword;

/// The first word at `offset` (letters, digits, `_`), or a number with its
/// fraction (`2.5`, `-1`).
pub(super) fn word_or_number(text: &str, offset: usize) -> &str {
    let rest = &text[offset.min(text.len())..];
    let number = rest.starts_with(|c: char| c.is_ascii_digit() || c == '-');
    let end = rest
        .char_indices()
        .find(|&(i, c)| {
            let number_char = c.is_ascii_digit() || c == '.' || (c == '-' && i == 0);
            !(if number {
                number_char
            } else {
                c.is_alphanumeric() || c == '_'
            })
        })
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

/// What stands before the failure, as a person names it.
pub(super) fn after_what(prev: &str) -> String {
    match prev {
        "\"" => "the string".to_owned(),
        ")" => "`)`".to_owned(),
        _ => format!("`{prev}`"),
    }
}

/// The message and label when the grammar wanted a `:` (a parameter's type).
/// `template`: whether the parameter is a template's.
/// `found`: how the text at the failure is described.
pub(super) fn missing_colon(name: &str, template: bool, found: &str) -> (String, String, String) {
    let example = if template {
        format!("`template NAME({name}: string)`")
    } else {
        format!("`param {name}: int = 3`")
    };
    (
        format!("expected `:` and a type after the parameter's name `{name}`, found {found}"),
        "expected a type annotation `: TYPE`".to_owned(),
        format!(
            "write the type after a `:`, as in {example}; the types are `string`, `int`, `float` and `bool`"
        ),
    )
}

/// The text at `offset` up to the next space: what a person sees as the
/// token there (`base.plan`, `"r"`).
pub(super) fn token_at(text: &str, offset: usize) -> &str {
    let rest = &text[offset.min(text.len())..];
    let end = rest
        .find(|c: char| c.is_whitespace() || c == '}' || c == '{')
        .map_or(rest.len(), |i| if i == 0 { 1 } else { i });
    rest.get(..end).unwrap_or(rest)
}

/// Help for "expected `expected` after `prev`", where the text at the failure
/// is `token` (see [`token_at`]), if a common mistake explains it. `line` is
/// the line `prev` stands on.
pub(super) fn help(expected: &str, prev: &str, token: &str, line: &str) -> Option<String> {
    let first = line.split_whitespace().next().unwrap_or("");
    let field = is_keyword(prev);
    let found = if token.starts_with(['=', ':']) {
        &token[..1]
    } else {
        token
    };
    if (found == "=" || found == ":") && field {
        let value = if expected.contains("string") {
            "\"…\""
        } else if expected.contains("name") {
            "NAME"
        } else {
            "…"
        };
        return Some(format!(
            "no `{found}` after a keyword: write `{prev} {value}`"
        ));
    }
    if expected.contains("string in quotes") {
        return Some(if found == "{" && first == "task" {
            format!("a task has a title in quotes after its name, as in `task {prev} \"What to do\" {{ … }}`")
        } else if prev == "import" {
            format!("the path is a string in quotes: `import \"{found}\"`")
        } else {
            format!("text is written in double quotes, as in `{prev} \"…\"`")
        });
    }
    if found.starts_with('"') {
        let inner = found.trim_matches('"');
        let name = if inner.is_empty() || inner.contains(' ') {
            "name"
        } else {
            inner
        };
        return match prev {
            "role" | "task" | "step" => Some(format!(
                "a {prev} has a name before its text, as in `{prev} {} \"…\"`",
                if prev == "role" { "browser" } else { "search" }
            )),
            "assignee" | "priority" | "after" | "as" | "plan" | "template" => Some(format!(
                "a name is written without quotes, as in `{prev} {name}`"
            )),
            _ => None,
        };
    }
    if expected.contains("whole number") && field {
        return Some(format!(
            "`{prev}` takes a whole number, as in `{prev} 3`, not `{found}`"
        ));
    }
    if expected == "`as`" {
        return Some(
            "a `use` ends with `as PREFIX`, which names its tasks: `use review(change = \"…\") as r`"
                .to_owned(),
        );
    }
    if expected == "`{`" && matches!(first, "step" | "template") {
        return Some(format!(
            "a {first}'s body stands in braces: `{first} NAME \"…\" {{ … }}`"
        ));
    }
    if expected.contains("plan name") {
        return Some("a plan has a name: `plan my_plan { … }`".to_owned());
    }
    None
}

/// Help for a run that starts with a value where an item goes, as in
/// `param n: int 3` (the `=` forgotten), or with a name after a list, as in
/// `after a b` (the comma forgotten). `line`: the line up to the run.
pub(super) fn stray_value(word: &str, line: &str) -> Option<String> {
    let starts_value = word.starts_with(|c: char| c.is_ascii_digit() || c == '-')
        || word == "true"
        || word == "false";
    let trimmed = line.trim_start();
    if let Some(names) = after_list(line) {
        return Some(format!(
            "names after `after` are separated by commas: `after {names}, {word}`"
        ));
    }
    if starts_value && trimmed.starts_with("param ") {
        let declared = unmarked(trimmed.trim_end());
        return Some(format!(
            "a parameter's default follows `=`: `{declared} = {word}`"
        ));
    }
    None
}

/// `text` as quoted in a hint: a byte order mark is layout to the grammar
/// but not to `trim`, and no message shows an invisible character, so
/// where one stands the words are joined by single spaces.
fn unmarked(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains('\u{feff}') {
        return text.into();
    }
    let words = text.split(|c: char| c.is_whitespace() || c == '\u{feff}');
    words
        .filter(|word| !word.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .into()
}

/// The names of the `after` list that `line` ends with (`after a, b` on
/// its own line or in a one-line body, `task t "T" { after a`), when what
/// follows the keyword is a list of names: after anything else (`after role
/// task`, layout such as a byte order mark) the hint would quote a list that
/// is not one.
fn after_list(line: &str) -> Option<&str> {
    let (at, _) = line.match_indices("after ").last()?;
    let before = line[..at].chars().next_back();
    if before.is_some_and(|c| !matches!(c, ' ' | '\t' | '{')) {
        return None;
    }
    let names = line[at + "after ".len()..].trim_end_matches(' ');
    names
        .split(',')
        .all(|name| is_path(name.trim_matches(' ')))
        .then_some(names)
}

/// Whether `text` reads as the grammar's `path`: names joined by `.`,
/// none of them a keyword.
fn is_path(text: &str) -> bool {
    text.split('.').all(|name| {
        let mut chars = name.chars();
        chars.next().is_some_and(super::fast::ident_start)
            && chars.all(super::fast::ident_char)
            && !super::keywords::is_keyword(name)
    })
}

/// Help for `=` followed by `word`, as in `param n: string = hello`.
pub(super) fn bare_value(word: &str) -> String {
    if word.is_empty() || word.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
        "`=` gives a value, as in `param retries: int = 3`; the value is missing".to_owned()
    } else {
        format!(
            "`=` gives a value: a string in quotes (`= \"{word}\"`), a number, `true` or `false`"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::stray_value;

    #[test]
    fn a_forgotten_comma_is_named_in_an_after_list_of_names_only() {
        let comma = |names: &str, word: &str| {
            format!("names after `after` are separated by commas: `after {names}, {word}`")
        };
        assert_eq!(stray_value("b", "    after a "), Some(comma("a", "b")));
        assert_eq!(
            stray_value("c", "    task b \"B\" { after a, x.y "),
            Some(comma("a, x.y", "c"))
        );
        // Not a list of names: a keyword, the byte order mark, a string.
        assert_eq!(stray_value("int", "after \u{feff} role task "), None);
        assert_eq!(stray_value("c", "    after role "), None);
        assert_eq!(
            stray_value("c", "    task b \"wait after x\" { retry 1 "),
            None
        );
        assert_eq!(stray_value("c", "    task wait_after "), None);
    }

    /// The `=` forgotten after a parameter: the line quoted as written, but
    /// never with a byte order mark in it (found by
    /// `no_syntax_message_leaks_pest_internals`).
    #[test]
    fn a_forgotten_equals_sign_quotes_the_line_without_invisible_characters() {
        let help = |declared: &str| format!("a parameter's default follows `=`: `{declared}`");
        assert_eq!(
            stray_value("3", "param n: int "),
            Some(help("param n: int = 3"))
        );
        assert_eq!(
            stray_value("true", "param role role \u{feff} "),
            Some(help("param role role = true"))
        );
        assert_eq!(
            stray_value("3", "param n:\u{feff}int\u{feff} "),
            Some(help("param n: int = 3"))
        );
    }
}
