//! Every syntax error in plain words: the mistakes people make when they
//! write a plan from `docs/language.md` alone, as `planc check` shows them.
//! No message lists whitespace, the byte-order mark or a grammar rule.

use crate::support::Test;

/// Plan bodies with one mistake each, as a person would write them.
const MISTAKES: &[(&str, &str)] = &[
    ("param without `:`", "    param n int = 3"),
    ("param without a type", "    param n: = 3"),
    ("param without `=`", "    param n: int 3"),
    (
        "string default without quotes",
        "    param n: string = hello",
    ),
    (
        "`after` without a comma",
        "    task a \"A\"\n    task b \"B\" { after a b }",
    ),
    (
        "`after` with a trailing comma",
        "    task a \"A\"\n    task b \"B\" { after a, }",
    ),
    ("task without a title", "    task a { retry 1 }"),
    ("title without quotes", "    title Buy a keyboard"),
    ("title with `=`", "    title = \"T\""),
    (
        "assignee with `:`",
        "    role r \"R\"\n    task a \"A\" { assignee: r }",
    ),
    (
        "assignee in quotes",
        "    role r \"R\"\n    task a \"A\" { assignee \"r\" }",
    ),
    (
        "priority in quotes",
        "    task a \"A\" { priority \"high\" }",
    ),
    ("retry as a word", "    task a \"A\" { retry twice }"),
    ("max_iterations as a fraction", "    max_iterations 2.5"),
    ("role without a name", "    role \"Drives the browser\""),
    ("step without braces", "    step s \"S\"\n    task a \"A\""),
    ("a keyword as a name", "    task step \"S\""),
    ("use without `as`", "    use review(change = \"x\")"),
];

/// Whole files with one mistake outside a plan's body.
const FILES: &[(&str, &str)] = &[
    ("plan without a name", "plan {\n    goal \"g\"\n}\n"),
    ("import without quotes", "import base.plan\n"),
    (
        "template parameter without a type",
        "template review(change) {\n    task a \"A\"\n}\n",
    ),
];

fn check(text: &str) -> String {
    Test::new(["check", "-"]).stdin(text).expect_code(1).stdout
}

#[test]
fn common_syntax_mistakes_are_explained_in_plain_words() {
    let mut shown = String::new();
    let files = MISTAKES
        .iter()
        .map(|(what, body)| (*what, format!("plan p {{\n    goal \"g\"\n{body}\n}}\n")))
        .chain(FILES.iter().map(|(what, text)| (*what, (*text).to_owned())));
    for (what, text) in files {
        let stderr = check(&text);
        for internal in [
            "\u{feff}",
            "`\\t`",
            "`\\n`",
            "\"\\t\"",
            "kw_",
            "BUILTIN",
            "type_name",
        ] {
            assert!(
                !stderr.contains(internal),
                "{what}: {internal:?} in\n{stderr}"
            );
        }
        shown.push_str(&format!("==== {what}\n{text}----\n{stderr}\n"));
    }
    insta::assert_snapshot!(shown);
}
