//! What a syntax error says was expected, in a person's words.
//!
//! pest reports a failure as the rules it tried (`positives`) and, with error
//! detail on, the literal tokens it tried. Neither is fit to show: rules have
//! identifiers (`kw_assignee`, `type_name`), and the tokens include the
//! whitespace and byte-order mark the grammar skips between tokens. Every rule
//! has a name here (an exhaustive match, so a rule added to the grammar does
//! not compile until it is named), layout is never named, and the tokens are
//! collapsed into words.

use super::grammar::Rule;

const TOP: &str = "a plan, template, import, role or parameter";
const PLAN_ITEM: &str = "an item of a plan";

/// How a rule is named in "expected …".
pub(crate) fn rule_name(rule: Rule) -> &'static str {
    match rule {
        Rule::EOI => "the end of the file",
        Rule::COMMENT => "a comment",
        Rule::keyword => "a keyword",
        Rule::ident | Rule::type_name => "a name",
        Rule::path => "a task or step name",
        Rule::kw_plan => "`plan`",
        Rule::kw_title => "`title`",
        Rule::kw_goal => "`goal`",
        Rule::kw_language => "`language`",
        Rule::kw_max_iterations => "`max_iterations`",
        Rule::kw_transition_rounds => "`transition_rounds`",
        Rule::kw_fallback_rounds => "`fallback_rounds`",
        Rule::kw_param => "`param`",
        Rule::kw_role => "`role`",
        Rule::kw_step => "`step`",
        Rule::kw_task => "`task`",
        Rule::kw_after => "`after`",
        Rule::kw_assignee => "`assignee`",
        Rule::kw_reasoning => "`reasoning`",
        Rule::kw_description => "`description`",
        Rule::kw_retry => "`retry`",
        Rule::kw_optional => "`optional`",
        Rule::kw_priority => "`priority`",
        Rule::kw_sequential => "`sequential`",
        Rule::kw_import => "`import`",
        Rule::kw_template => "`template`",
        Rule::kw_use => "`use`",
        Rule::kw_as => "`as`",
        Rule::int => "a whole number",
        Rule::float => "a number",
        Rule::bool => "`true` or `false`",
        Rule::string | Rule::basic_string | Rule::triple_string => "a string in quotes",
        Rule::text | Rule::triple_text => "the text of a string",
        Rule::escape => "an escape such as `\\\"`",
        Rule::lit_open => "`{{`",
        Rule::lit_close => "`}}`",
        Rule::interp => "a parameter in braces, as in `{name}`",
        Rule::lbrace | Rule::task_body | Rule::use_body => "`{`",
        Rule::plan_end
        | Rule::step_end
        | Rule::task_end
        | Rule::unclosed
        | Rule::unclosed_step
        | Rule::unclosed_task => "`}`",
        Rule::file | Rule::plan_rest | Rule::top_bad | Rule::top_item => TOP,
        Rule::plan_rest_body | Rule::plan_bad | Rule::plan_item => PLAN_ITEM,
        Rule::template_item => PLAN_ITEM,
        Rule::step_bad | Rule::step_item => "an item of a step",
        Rule::task_bad | Rule::task_field => "a field of a task",
        Rule::import => "an import, as in `import \"lib.plan\"`",
        Rule::plan => "a plan, as in `plan NAME { … }`",
        Rule::template => "a template, as in `template NAME(…) { … }`",
        Rule::template_param => "a template parameter, as in `change: string`",
        Rule::use_ => "a `use`, as in `use NAME(…) as PREFIX`",
        Rule::use_arg => "an argument, as in `change = \"…\"`",
        Rule::title => "a title, as in `title \"…\"`",
        Rule::goal => "a goal, as in `goal \"…\"`",
        Rule::language => "a language, as in `language \"en\"`",
        Rule::max_iterations => "`max_iterations` and a whole number",
        Rule::transition_rounds => "`transition_rounds` and a whole number",
        Rule::fallback_rounds => "`fallback_rounds` and a whole number",
        Rule::param => "a parameter, as in `param n: int = 3`",
        Rule::role => "a role, as in `role NAME \"…\"`",
        Rule::step => "a step, as in `step NAME \"…\" { … }`",
        Rule::task => "a task, as in `task NAME \"…\"`",
        Rule::after => "`after` and a task or step name",
        Rule::assignee => "`assignee` and a role name",
        Rule::reasoning => "`reasoning` and a string",
        Rule::description => "`description` and a string",
        Rule::retry => "`retry` and a whole number",
        Rule::optional => "`optional`",
        Rule::priority => "`priority` and a level",
        Rule::sequential => "`sequential`",
        Rule::WHITESPACE | Rule::bad_gap => "a space",
        Rule::ident_start | Rule::ident_char => "a letter",
        Rule::literal => "a value (a string in quotes, a number, `true` or `false`)",
        Rule::bad_token | Rule::bad_block | Rule::bad_string | Rule::bad_word => "a token",
    }
}

/// Rules that stand between tokens and are never what a person should write next.
pub(crate) fn is_layout(rule: Rule) -> bool {
    matches!(
        rule,
        Rule::COMMENT | Rule::EOI | Rule::WHITESPACE | Rule::bad_gap
    )
}

/// A literal token pest tried, as a person reads it; `None` for the layout
/// the grammar skips (spaces, tabs, line breaks, the byte-order mark, the `#`
/// of a comment) and for pest's own internals.
pub(crate) fn token_name(token: &str) -> Option<String> {
    match token {
        " " | "\t" | "\r" | "\n" | "\u{feff}" | "#" | "" => None,
        _ if token.contains("..") || token.contains("BUILTIN") || token.contains('_') => None,
        _ if token.chars().any(|c| c.is_control() || c.is_whitespace()) => None,
        _ if token.chars().any(|c| c.is_alphanumeric()) => Some(format!("`{token}`")),
        _ => Some(format!("`{token}`")),
    }
}

/// Whether `message` holds something only pest's internals would say: a
/// layout token or the identifier of a grammar rule (not a keyword, which
/// people write). For the tests.
#[cfg(test)]
pub(crate) fn leaks_internals(message: &str) -> bool {
    const LAYOUT: [&str; 6] = ["\u{feff}", "`\\t`", "`\\n`", "`\\r`", "` `", "BUILTIN"];
    if LAYOUT.iter().any(|l| message.contains(l)) {
        return true;
    }
    Rule::all_rules().iter().any(|rule| {
        let name = format!("{rule:?}");
        let identifier = name.contains('_')
            || name.chars().all(|c| c.is_ascii_uppercase())
            || ["ident", "lbrace", "interp"].contains(&name.as_str());
        identifier && !super::keywords::is_keyword(&name) && message.contains(&name)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_has_a_name_without_identifiers() {
        for &rule in Rule::all_rules() {
            let name = rule_name(rule);
            assert!(!name.is_empty(), "{rule:?}");
            assert!(!leaks_internals(name), "{rule:?}: {name}");
        }
    }

    #[test]
    fn layout_tokens_are_not_named() {
        for token in [" ", "\t", "\r", "\n", "\u{feff}", "#"] {
            assert_eq!(token_name(token), None, "{token:?}");
        }
        assert_eq!(token_name(":").as_deref(), Some("`:`"));
    }

    /// The pieces random files are made of: keywords, names, values and
    /// punctuation, in every order.
    const PIECES: &[&str] = &[
        "plan",
        "p",
        "{",
        "}",
        "goal",
        "\"g\"",
        "task",
        "a",
        "b",
        "\"A\"",
        "after",
        ",",
        "param",
        "n",
        ":",
        "int",
        "string",
        "=",
        "3",
        "2.5",
        "role",
        "r",
        "assignee",
        "priority",
        "high",
        "step",
        "s",
        "retry",
        "title",
        "use",
        "(",
        ")",
        "as",
        "template",
        "import",
        "\n",
        " ",
        "\t",
        "\u{feff}",
        "# c\n",
        "\"{n}\"",
        "\"x",
        "optional",
        "max_iterations",
        "-1",
        "true",
        "\"\"\"",
        "sequential",
        "description",
        "x.y",
    ];

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(400))]
        #[test]
        fn no_syntax_message_leaks_pest_internals(
            picks in proptest::collection::vec(0..PIECES.len(), 0..24)
        ) {
            let text: String = picks.iter().map(|&i| format!("{} ", PIECES[i])).collect();
            let parsed = crate::syntax::parse(&text, crate::span::FileId(0));
            for d in &parsed.diagnostics {
                let mut said = vec![d.message.as_str()];
                said.extend(d.help.as_deref());
                said.extend(d.labels.iter().map(|l| l.message.as_str()));
                for words in said {
                    proptest::prop_assert!(!leaks_internals(words), "{text:?}: {words}");
                    proptest::prop_assert!(!words.contains("something else"), "{text:?}: {words}");
                }
            }
        }
    }
}
