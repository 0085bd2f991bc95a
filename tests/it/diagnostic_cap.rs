//! At most 100 diagnostics of one code per check: the rest are counted in
//! one `planc::limit` note, the same in every format, with the severity of
//! the code it counts (128,000 cycles used to print 64 MiB).

use std::fmt::Write;

use crate::support::{self, Test};

/// A plan of `n` two-task cycles, `a{i}` ⇄ `b{i}`.
fn cycles(n: usize) -> String {
    let mut text = String::from("plan p {\n    goal \"g\"\n");
    for i in 0..n {
        writeln!(text, "    task a{i} \"A\" {{ after b{i} }}").unwrap();
        writeln!(text, "    task b{i} \"B\" {{ after a{i} }}").unwrap();
    }
    text.push_str("}\n");
    text
}

/// `planc check --format json -` of `text`: the diagnostics' codes,
/// severities and messages, in order.
fn json(text: &str, code: i32) -> Vec<(String, String, String)> {
    let out = Test::new(["check", "--format", "json", "-"])
        .stdin(text)
        .expect_code(code);
    let value: serde_json::Value = serde_json::from_str(&out.stdout).expect("a JSON array");
    value
        .as_array()
        .expect("an array")
        .iter()
        .map(|d| {
            let field = |key: &str| d[key].as_str().unwrap_or_default().to_owned();
            (field("code"), field("severity"), field("message"))
        })
        .collect()
}

#[test]
fn cycles_past_a_hundred_are_counted_in_one_note() {
    let diagnostics = json(&cycles(130), 1);
    assert_eq!(diagnostics.len(), 101);
    assert!(diagnostics[..100]
        .iter()
        .all(|(code, ..)| code == "planc::cycle"));
    assert_eq!(
        diagnostics[100],
        (
            "planc::limit".to_owned(),
            "error".to_owned(),
            "30 more `planc::cycle` diagnostics are not shown; planc reports at most 100 of each code"
                .to_owned()
        )
    );
    // The note points at the first cycle left out.
    let out = Test::new(["check", "-"]).stdin(cycles(101)).expect_code(1);
    let note = out.stdout.rsplit("planc::limit").next().unwrap_or_default();
    insta::assert_snapshot!(note);
}

#[test]
fn the_note_is_in_every_format() {
    let text = cycles(102);
    let human = Test::new(["check", "-"])
        .stdin(text.as_str())
        .expect_code(1);
    assert_eq!(human.stdout.matches("dependency cycle:").count(), 100);
    assert_eq!(
        human
            .stdout
            .matches("2 more `planc::cycle` diagnostics are not shown")
            .count(),
        1
    );
    let github = Test::new(["check", "--format", "github", "-"])
        .stdin(text.as_str())
        .expect_code(1);
    let lines: Vec<&str> = github.stdout.lines().collect();
    assert_eq!(lines.len(), 101, "{}", github.stdout);
    assert!(
        lines[100].starts_with("::error ")
            && lines[100].contains("2 more `planc::cycle` diagnostics are not shown"),
        "{}",
        lines[100]
    );
}

#[test]
fn a_hundred_of_each_code_are_shown() {
    // 100 cycles and 100 unknown names: nothing left out, no note.
    let mut text = cycles(100);
    text.insert_str(text.len() - 2, &{
        let mut more = String::new();
        for i in 0..100 {
            writeln!(more, "    task u{i} \"U\" {{ after missing{i} }}").unwrap();
        }
        more
    });
    let diagnostics = json(&text, 1);
    assert_eq!(diagnostics.len(), 200);
    assert!(diagnostics.iter().all(|(code, ..)| code != "planc::limit"));
}

#[test]
fn hidden_warnings_are_counted_in_a_warning() {
    // 120 redundant dependencies: warnings only, so the check passes, and
    // the note counting the last 20 is a warning too.
    let mut text = String::from("plan p {\n    goal \"g\"\n    task a \"A\"\n");
    for i in 0..120 {
        writeln!(text, "    task b{i} \"B\" {{ after a }}").unwrap();
        writeln!(text, "    task c{i} \"C\" {{ after b{i}, a }}").unwrap();
    }
    text.push_str("}\n");
    let diagnostics = json(&text, 0);
    assert_eq!(diagnostics.len(), 101);
    assert_eq!(
        diagnostics[100],
        (
            "planc::limit".to_owned(),
            "warning".to_owned(),
            "20 more `planc::redundant_dependency` diagnostics are not shown; planc reports at most 100 of each code"
                .to_owned()
        )
    );
}

#[test]
fn a_json_document_is_capped_alike() {
    let mut text = String::from("{\"meta\": {\"goal\": \"g\"}, \"tasks\": [\n");
    for i in 0..150 {
        let (a, b) = (2 * i + 1, 2 * i + 2);
        let comma = if i + 1 == 150 { "" } else { "," };
        writeln!(
            text,
            "{{\"id\": {a}, \"name\": \"a\", \"status\": \"pending\", \"dependencies\": [{b}]}},\n\
             {{\"id\": {b}, \"name\": \"b\", \"status\": \"pending\", \"dependencies\": [{a}]}}{comma}"
        )
        .unwrap();
    }
    text.push_str("]}\n");
    let dir = support::temp_dir("cap-json");
    let path = dir.path().join("plan.json");
    std::fs::write(&path, text).unwrap();
    let out = Test::new(["check", "--format", "json", path.to_str().unwrap()]).expect_code(1);
    let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let codes: Vec<&str> = value
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(codes.len(), 101);
    assert_eq!(codes.iter().filter(|&&c| c == "planc::cycle").count(), 100);
    assert_eq!(
        value[100]["message"],
        "50 more `planc::cycle` diagnostics are not shown; planc reports at most 100 of each code"
    );
}

#[test]
fn imports_past_a_hundred_are_counted_too() {
    let mut text = String::new();
    for i in 0..120 {
        writeln!(text, "import \"missing{i}.plan\"").unwrap();
    }
    text.push_str("plan p {\n    goal \"g\"\n    task a \"A\"\n}\n");
    let dir = support::temp_dir("cap-imports");
    let path = dir.path().join("main.plan");
    std::fs::write(&path, text).unwrap();
    let out = Test::new(["check", "--format", "json", path.to_str().unwrap()]).expect_code(1);
    let value: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let diagnostics = value.as_array().unwrap();
    assert_eq!(diagnostics.len(), 101);
    assert_eq!(
        diagnostics[100]["message"],
        "20 more `planc::import` diagnostics are not shown; planc reports at most 100 of each code"
    );
}
