//! The command line as a user meets it: exit codes, `--set`, formats, stdin.

use crate::support::{self, temp_dir, Test};

#[test]
fn missing_file_is_a_usage_error() {
    let output = Test::new(["check", "examples/nope.plan"]).expect_code(2);
    assert!(
        output
            .stderr
            .starts_with("error[planc::read]: cannot read examples/nope.plan:"),
        "{}",
        output.stderr
    );
}

#[test]
fn unknown_flag_and_target_are_usage_errors() {
    Test::new(["check", "--frobnicate", "examples/jd_keyboard.plan"]).expect_code(2);
    let output =
        Test::new(["build", "examples/jd_keyboard.plan", "--target", "yaml"]).expect_code(2);
    assert!(
        output.stderr.contains(
            "invalid value 'yaml' for '--target <TARGET>'\n  [possible values: planc, tasks, plan-tool, steps, plan-act, taskmaster, openmanus, codex]"
        ),
        "{}",
        output.stderr
    );
    let output = Test::new(["build", "examples/jd_keyboard.plan", "--set", "oops"]).expect_code(2);
    assert!(
        output.stderr.contains("expected NAME=VALUE, found `oops`"),
        "{}",
        output.stderr
    );
}

#[test]
fn set_overrides_defaults_and_is_type_checked() {
    let output = Test::new([
        "build",
        "examples/jd_keyboard.plan",
        "--set",
        "max_price=300",
        "--set",
        "keyword=键盘",
    ])
    .expect_code(0);
    let document: serde_json::Value = serde_json::from_str(&output.stdout).expect("JSON");
    assert_eq!(document["meta"]["params"]["max_price"], 300);
    assert_eq!(
        document["tasks"][3]["name"],
        "Filter results by price (under 300)"
    );
    assert_eq!(document["tasks"][1]["name"], "Input '键盘' into search bar");

    let output = Test::new([
        "build",
        "examples/jd_keyboard.plan",
        "--set",
        "max_price=cheap",
    ])
    .expect_code(1);
    insta::assert_snapshot!("set_wrong_type", output.stderr);
    let output = Test::new([
        "build",
        "examples/jd_keyboard.plan",
        "--set",
        "max_prise=300",
    ])
    .expect_code(1);
    insta::assert_snapshot!("set_unknown_param", output.stderr);
    assert!(output.stdout.is_empty());
}

#[test]
fn check_accepts_several_files_and_reports_each() {
    let output = Test::new([
        "check",
        "examples/jd_keyboard.plan",
        "examples/errors/cycle.plan",
    ])
    .expect_code(1);
    assert!(
        output
            .stdout
            .contains("examples/jd_keyboard.plan: ok, 5 tasks\n"),
        "{}",
        output.stdout
    );
    assert!(
        output
            .stdout
            .contains("examples/errors/cycle.plan: 1 error, 3 tasks\n"),
        "{}",
        output.stdout
    );
}

#[test]
fn json_format_merges_files_into_one_array() {
    let output = Test::new([
        "check",
        "--format",
        "json",
        "examples/errors/cycle.plan",
        "examples/errors/unused.plan",
    ])
    .expect_code(1);
    let items: Vec<serde_json::Value> =
        serde_json::from_str(&output.stdout).expect("one JSON array");
    let codes: Vec<&str> = items
        .iter()
        .map(|d| d["code"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(codes, ["planc::cycle", "planc::unused", "planc::unused"]);
    assert_eq!(items[0]["file"], "examples/errors/cycle.plan");
    assert_eq!(items[0]["line"], 4);
    assert_eq!(items[0]["column"], 34);
    assert_eq!(output.stderr, "");
}

#[test]
fn github_format_prints_workflow_annotations() {
    let output = Test::new([
        "check",
        "--format",
        "github",
        "examples/errors/unknown_ref.plan",
        "examples/errors/unused.plan",
    ])
    .expect_code(1);
    insta::assert_snapshot!("github_annotations", output.stdout);
}

#[test]
fn deny_warnings_fails_on_warnings() {
    Test::new(["check", "examples/errors/unused.plan"]).expect_code(0);
    Test::new(["check", "--deny", "warnings", "examples/errors/unused.plan"]).expect_code(1);
    Test::new(["build", "--deny", "warnings", "examples/errors/unused.plan"]).expect_code(1);
}

#[test]
fn stdin_is_read_with_a_dash() {
    let plan = "plan p { goal \"Say hi\" task hi \"Say hi\" }";
    let output = Test::new(["build", "-"]).stdin(plan).expect_code(0);
    let document: serde_json::Value = serde_json::from_str(&output.stdout).expect("JSON");
    assert_eq!(document["meta"]["source"], serde_json::Value::Null);
    assert_eq!(document["tasks"][0]["key"], "hi");

    let output = Test::new(["check", "-"])
        .stdin("plan p { task a \"A\" }")
        .expect_code(1);
    assert!(output.stdout.contains("<stdin>:1:6"), "{}", output.stdout);

    // JSON on standard input is recognised as a plan document.
    let output = Test::new(["check", "-"])
        .stdin("{\"overallGoal\": \"g\", \"tasks\": []}")
        .expect_code(0);
    assert_eq!(output.stdout, "<stdin>: ok, 0 tasks\n");
}

#[test]
fn output_file_is_written_with_o() {
    let dir = temp_dir("cli-o");
    let out = dir.path().join("jd.json");
    let out = out.to_str().expect("utf-8 path");
    let output = Test::new(["build", "examples/jd_keyboard.plan", "-o", out]).expect_code(0);
    assert_eq!(output.stdout, "");
    let written = std::fs::read_to_string(out).expect("written");
    let printed = Test::new(["build", "examples/jd_keyboard.plan"])
        .expect_code(0)
        .stdout;
    assert_eq!(written, printed);
}

#[test]
fn json_documents_convert_to_seed_targets() {
    let output = Test::new(["build", "examples/errors/invalid_status.json"]).expect_code(1);
    assert!(
        output.stderr.contains("planc::invalid_status"),
        "{}",
        output.stderr
    );
    let seed000 = "{\"overallGoal\": \"Buy\", \"currentTaskID\": null, \"tasks\": [\
        {\"id\": 1, \"name\": \"Open\", \"status\": \"completed\", \"dependencies\": [], \"reasoning\": \"r\", \"result\": \"ok\"},\
        {\"id\": 2, \"name\": \"Buy\", \"status\": \"pending\", \"dependencies\": [1], \"reasoning\": null, \"result\": null}]}";
    let output = Test::new(["build", "-", "--target", "plan-act"])
        .stdin(seed000)
        .expect_code(0);
    insta::assert_snapshot!("seed000_to_plan_act", output.stdout);
}

#[test]
fn version_and_help_exit_zero() {
    let output = Test::new(["--version"]).expect_code(0);
    assert!(output.stdout.starts_with("planc "));
    let output = Test::new(["--help"]).expect_code(0);
    assert!(output.stdout.contains("check"));
}

/// The reader of standard output is gone before planc starts (the pipe's
/// read end is closed first), so its first write fails: planc ends as other
/// command-line tools do, killed by SIGPIPE, saying nothing (no panic, no
/// "Broken pipe" error).
#[cfg(unix)]
#[test]
fn a_closed_pipe_ends_quietly() {
    use std::os::unix::process::ExitStatusExt;
    use std::process::Stdio;
    let (reader, writer) = std::io::pipe().expect("a pipe");
    drop(reader);
    let output = support::planc()
        .args(["build", "examples/research_report.plan", "--set", "topic=x"])
        .current_dir(support::root())
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .expect("planc runs");
    assert_eq!(
        output.status.signal(),
        Some(libc::SIGPIPE),
        "{:?}",
        output.status
    );
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
}
