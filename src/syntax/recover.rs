//! Explains a run of tokens the grammar could not place, in plain words.
//!
//! The tolerant grammar marks such runs as `*_bad`. To say what is wrong, the
//! run is parsed again with the rule its first keyword starts (so the same
//! grammar decides), and the failure is described in terms a user knows:
//! "expected a role name after `assignee`", not pest's rule names.

use pest::error::{Error, ErrorVariant, InputLocation};
use pest::Parser as _;

use super::expected::{is_layout, rule_name, token_name};
use super::grammar::{PlanParser, Rule};
use super::hints;
use super::keywords::{self, is_keyword, Context};
use crate::diagnostic::{Code, Diagnostic};
use crate::span::{FileId, Span};
use crate::suggest;

/// A word as quoted in a message: long words are cut.
fn quote(word: &str) -> String {
    suggest::shorten(word, 40)
}

fn word_at(text: &str, offset: usize) -> &str {
    let rest = &text[offset..];
    let end = rest
        .char_indices()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(rest.len(), |(i, _)| i);
    &rest[..end]
}

/// Describes the token at `offset` ("`}`", "the keyword `task`", "the end of the file").
fn found(text: &str, offset: usize) -> String {
    if offset >= text.len() {
        return "the end of the file".to_owned();
    }
    let word = hints::word_or_number(text, offset);
    if !word.is_empty() {
        return if is_keyword(word) {
            format!("the keyword `{word}`")
        } else {
            format!("`{}`", quote(word))
        };
    }
    let c = text[offset..].chars().next().unwrap_or(' ');
    match c {
        '"' => "a string".to_owned(),
        '\n' | '\r' => "the end of the line".to_owned(),
        c => format!("`{c}`"),
    }
}

/// The span of the token at `offset`, for labels.
fn token_span(text: &str, offset: usize) -> Span {
    if offset >= text.len() {
        return Span::at(text.len());
    }
    let word = word_at(text, offset);
    let len = if word.is_empty() {
        text[offset..].chars().next().map_or(0, char::len_utf8)
    } else {
        word.len()
    };
    Span::new(offset, offset + len)
}

/// The last token before `offset`, skipping whitespace and comments.
fn previous_token(text: &str, offset: usize) -> &str {
    let layout = |c: char| c.is_whitespace() || c == '\u{feff}';
    let before = text[..offset].trim_end_matches(layout);
    // Comments end at a newline; a `#` on the last line may be one.
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = &before[line_start..];
    let line = match line.find('#') {
        Some(hash) if !line[..hash].contains('"') => line[..hash].trim_end_matches(layout),
        _ => line,
    };
    let before = if line.is_empty() {
        before[..line_start].trim_end_matches(layout)
    } else {
        &before[..line_start + line.len()]
    };
    let start = before
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    if start < before.len() {
        &before[start..]
    } else {
        let last = before.chars().last().map_or(0, char::len_utf8);
        &before[before.len() - last..]
    }
}

fn expected_name(prev: &str) -> &'static str {
    match prev {
        "task" => "a task name",
        "step" => "a step name",
        "role" | "assignee" => "a role name",
        "priority" => "`critical`, `high`, `medium` or `low`",
        "param" => "a parameter name",
        "plan" => "a plan name",
        "template" => "a template name",
        "as" => "a prefix name",
        "after" | "," => "a task or step name",
        _ => "a name",
    }
}

fn describe_rule(rule: Rule, prev: &str) -> Option<&'static str> {
    Some(match rule {
        Rule::ident => expected_name(prev),
        Rule::path => {
            if prev == "use" {
                "a template name"
            } else {
                "a task or step name"
            }
        }
        Rule::string => "a string in quotes",
        Rule::int => "a whole number",
        Rule::float | Rule::bool => "a value",
        Rule::type_name => "a type (`string`, `int`, `float` or `bool`)",
        Rule::lbrace => "`{`",
        Rule::plan_end | Rule::step_end | Rule::task_end => "`}`",
        Rule::template_param | Rule::use_arg => "an argument",
        Rule::kw_as => "`as`",
        _ => return None,
    })
}

fn in_string(rules: &[Rule]) -> bool {
    rules.iter().any(|r| {
        matches!(
            r,
            Rule::text | Rule::triple_text | Rule::escape | Rule::interp | Rule::lit_open
        )
    })
}

/// pest's error detail (the literal tokens it tried) is one switch for the
/// whole process, and it costs time, so it is on only while an explaining
/// parse runs. Explaining parses may run on several threads at once (the
/// language server compiles documents in parallel; tests run in parallel):
/// the switch stays on while any of them runs, or one thread would turn it
/// off under another and the same text would be explained two ways.
struct ErrorDetail;

static EXPLAINING: std::sync::Mutex<usize> = std::sync::Mutex::new(0);

impl ErrorDetail {
    fn on() -> ErrorDetail {
        let mut count = EXPLAINING.lock().unwrap_or_else(|e| e.into_inner());
        *count += 1;
        pest::set_error_detail(true);
        ErrorDetail
    }
}

impl Drop for ErrorDetail {
    fn drop(&mut self) {
        let mut count = EXPLAINING.lock().unwrap_or_else(|e| e.into_inner());
        *count -= 1;
        if *count == 0 {
            pest::set_error_detail(false);
        }
    }
}

/// The diagnostic for one run of bad tokens.
pub(crate) fn explain(text: &str, file: FileId, run: Span, context: Context) -> Diagnostic {
    let word = word_at(text, run.start());
    if !word.is_empty() {
        if let Some((keyword, rule)) = keywords::get(word).and_then(|k| Some((k, k.rule?))) {
            if !context.keywords().contains(&word) {
                return Diagnostic::new(
                    Code::Syntax,
                    format!("`{word}` cannot stand {}", context.place()),
                )
                .label(file, token_span(text, run.start()), "not allowed here")
                .help(format!("`{word}` belongs {}", keywords::home(keyword)));
            }
            let result = {
                let _detail = ErrorDetail::on();
                PlanParser::parse(rule, &text[run.start()..])
            };
            if let Err(error) = result {
                return explain_failure(text, file, run.start(), &error, rule);
            }
        } else if word != "as" {
            return unknown_word(text, file, run, word, context);
        }
    }
    unexpected(text, file, run, context)
}

fn unknown_word(text: &str, file: FileId, run: Span, word: &str, context: Context) -> Diagnostic {
    let span = token_span(text, run.start());
    let allowed = context.keywords();
    let list = allowed
        .iter()
        .map(|k| format!("`{k}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut diagnostic = Diagnostic::new(
        Code::Syntax,
        format!(
            "unknown {} `{}` {}",
            context.what(),
            quote(word),
            context.place()
        ),
    );
    match suggest::closest(word, allowed.iter().copied()) {
        Some(best) => {
            diagnostic = diagnostic
                .label(file, span, format!("did you mean `{best}`?"))
                .help(format!("{} may hold {list}", context.name()))
                .fix(file, span, best);
        }
        None => {
            let line_start = text[..run.start()].rfind('\n').map_or(0, |i| i + 1);
            let help = hints::stray_value(word, &text[line_start..run.start()])
                .unwrap_or_else(|| format!("{} may hold {list}", context.name()));
            diagnostic = diagnostic
                .label(file, span, "not understood here")
                .help(help);
        }
    }
    diagnostic
}

fn unexpected(text: &str, file: FileId, run: Span, context: Context) -> Diagnostic {
    let span = token_span(text, run.start());
    let what = found(text, run.start());
    let help = match &text[run.start()..].chars().next() {
        Some('"') => {
            "a string follows a keyword, as in `title \"…\"` or `task name \"…\"`".to_owned()
        }
        Some('}') => "this `}` closes nothing; remove it".to_owned(),
        Some(',') => {
            "a list reads `after a, b`: a comma must be followed by another name".to_owned()
        }
        Some('=') => {
            let after = text[run.start() + 1..].trim_start_matches([' ', '\t']);
            hints::bare_value(word_at(after, 0))
        }
        _ => format!(
            "{} may hold {}",
            context.name(),
            context
                .keywords()
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    Diagnostic::new(
        Code::Syntax,
        format!("unexpected {what} {}", context.place()),
    )
    .label(file, span, "not expected here")
    .help(help)
}

/// Describes why a strict parse of `rule` starting at `base` failed.
fn explain_failure(
    text: &str,
    file: FileId,
    base: usize,
    error: &Error<Rule>,
    rule: Rule,
) -> Diagnostic {
    let offset = base
        + match error.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((p, _)) => p,
        };
    let positives: Vec<Rule> = match &error.variant {
        ErrorVariant::ParsingError { positives, .. } => positives.clone(),
        ErrorVariant::CustomError { .. } => Vec::new(),
    };
    if in_string(&positives) {
        return string_error(text, file, offset);
    }
    let prev = previous_token(text, offset);
    let tokens: Vec<String> = error
        .parse_attempts()
        .map(|attempts| {
            attempts
                .expected_tokens()
                .iter()
                .map(ToString::to_string)
                .collect()
        })
        .unwrap_or_default();
    let span = token_span(text, offset);
    let only_layout = positives.iter().all(|&r| is_layout(r));
    if only_layout && tokens.iter().any(|t| t == ":") && !is_keyword(prev) {
        let template = rule == Rule::template;
        let (message, label, help) = hints::missing_colon(prev, template, &found(text, offset));
        return Diagnostic::new(Code::Syntax, message)
            .label(file, span, label)
            .help(help);
    }
    let mut expected: Vec<String> = positives
        .iter()
        .filter(|&&r| !is_layout(r))
        .map(|&r| {
            describe_rule(r, prev)
                .unwrap_or_else(|| rule_name(r))
                .to_owned()
        })
        .collect();
    if expected.is_empty() {
        expected.extend(tokens.iter().filter_map(|t| token_name(t)));
    }
    let mut seen = std::collections::HashSet::new();
    expected.retain(|e| seen.insert(e.clone()));
    let expected = join_or(&expected);
    let expected = if expected.is_empty() {
        "something else".to_owned()
    } else {
        expected
    };
    let found_text = found(text, offset);
    let after = hints::after_what(prev);
    let diagnostic = Diagnostic::new(
        Code::Syntax,
        format!("expected {expected} after {after}, found {found_text}"),
    )
    .label(file, span, format!("expected {expected}"));
    let word = word_at(text, offset.min(text.len()));
    let before = text[..offset.min(text.len())].trim_end();
    let line = &before[before.rfind('\n').map_or(0, |i| i + 1)..];
    if is_keyword(word) && expected.contains("name") {
        diagnostic.help(format!(
            "`{word}` is a keyword and cannot be used as a name; pick another name"
        ))
    } else if let Some(help) = hints::help(&expected, prev, hints::token_at(text, offset), line) {
        diagnostic.help(help)
    } else {
        diagnostic
    }
}

fn join_or(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// A mistake inside a string literal.
fn string_error(text: &str, file: FileId, offset: usize) -> Diagnostic {
    let at = text[offset.min(text.len())..].chars().next();
    let line_start = text[..offset.min(text.len())]
        .rfind('\n')
        .map_or(0, |i| i + 1);
    match at {
        None | Some('\n') | Some('\r') => {
            let opened = text[line_start..offset].find('"').map(|i| line_start + i);
            let triple = opened.is_some_and(|o| text[o..].starts_with("\"\"\""));
            let mut diagnostic = if at.is_none() && triple {
                Diagnostic::new(Code::Syntax, "this `\"\"\"` string is never closed")
                    .help("close it with `\"\"\"`")
            } else {
                Diagnostic::new(Code::Syntax, "this string is not closed on its line")
                    .help("close it with `\"`; for text on several lines use `\"\"\"…\"\"\"`")
            };
            if let Some(opened) = opened {
                diagnostic =
                    diagnostic.label(file, Span::new(opened, opened + 1), "string starts here");
            }
            diagnostic.label(file, Span::at(offset), "expected `\"` before here")
        }
        Some('\\') => {
            let escape: String = text[offset..].chars().take(2).collect();
            Diagnostic::new(Code::Syntax, format!("unknown escape `{escape}`"))
                .label(
                    file,
                    Span::new(offset, offset + escape.len()),
                    "unknown escape",
                )
                .help("the escapes are \\\" \\\\ \\n \\t \\r \\0 \\{ \\} and \\u{…}")
        }
        Some('}') => Diagnostic::new(Code::Syntax, "a lone `}` in a string")
            .label(file, Span::new(offset, offset + 1), "lone `}`")
            .help("write `}}` for a literal brace"),
        _ => {
            let open = text[line_start..offset]
                .rfind('{')
                .map_or(offset, |i| line_start + i);
            Diagnostic::new(Code::Syntax, "`{` in a string starts a parameter, but this one is not a parameter name in braces")
                .label(file, Span::new(open, open + 1), "not `{name}`")
                .help("write `{name}` to insert a parameter, or `{{` for a literal brace")
        }
    }
}

/// A pest error from the whole-file parse (which the grammar makes unreachable).
/// `base`: where the text pest read starts in the file.
pub(crate) fn from_pest_error(error: &Error<Rule>, file: FileId, base: usize) -> Diagnostic {
    let offset = base
        + match error.location {
            InputLocation::Pos(p) => p,
            InputLocation::Span((p, _)) => p,
        };
    Diagnostic::new(Code::Syntax, "the file could not be parsed").label(
        file,
        Span::at(offset),
        "here",
    )
}
