//! `planc explain CODE`: a code's section of docs/diagnostics.md, as people
//! type it (with or without `planc::`), a "did you mean" for a misspelling,
//! and `--list`.

use crate::support::{self, Test};

#[test]
fn explain_prints_the_codes_section_with_or_without_the_prefix() {
    let bare = Test::new(["explain", "invalid_value"])
        .expect_code(0)
        .stdout;
    let full = Test::new(["explain", "planc::invalid_value"])
        .expect_code(0)
        .stdout;
    assert_eq!(bare, full);
    assert!(bare.starts_with("## planc::invalid_value\n"), "{bare}");
    assert!(bare.contains("`priority` is `critical`"), "{bare}");
    assert!(!bare.contains("## planc::self_dependency"), "{bare}");
    // Piped, the output is the page's text, without terminal styling.
    assert!(!bare.contains('\u{1b}'), "{bare:?}");
    let docs = std::fs::read_to_string(support::root().join("docs/diagnostics.md")).expect("docs");
    assert!(docs.contains(bare.trim_end()), "not the page's section");
    // The last section ends at the end of the page.
    let last = Test::new(["explain", "empty"]).expect_code(0).stdout;
    assert!(
        last.starts_with("## planc::empty\n") && last.ends_with("```\n"),
        "{last}"
    );
}

#[test]
fn explain_an_unknown_code_is_a_usage_error_with_did_you_mean() {
    let output = Test::new(["explain", "planc::invalid_valeu"]).expect_code(2);
    assert_eq!(
        output.stderr,
        "error: unknown diagnostic code `planc::invalid_valeu`; did you mean `planc::invalid_value`?\n\
         help: `planc explain --list` lists every code\n"
    );
    assert_eq!(output.stdout, "");
    let hostile = Test::new(["explain", "x\u{1b}[31m"]).expect_code(2);
    assert!(!hostile.stderr.contains('\u{1b}'), "{:?}", hostile.stderr);
    Test::new(["explain"]).expect_code(2);
}

#[test]
fn explain_list_names_every_code_on_one_line() {
    let list = Test::new(["explain", "--list"]).expect_code(0).stdout;
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(lines.len(), planc::diagnostic::Code::ALL.len());
    for (line, code) in lines.iter().zip(planc::diagnostic::Code::ALL) {
        assert!(line.starts_with(code.as_str()), "{line}");
        assert!(line.contains(code.summary()), "{line}");
    }
    assert!(
        list.contains(
            "\nplanc::invalid_value          error    a number or setting is out of range\n"
        ),
        "{list}"
    );
}
