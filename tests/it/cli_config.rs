//! `planc.toml`: found upward, flags win, paths relative to the file, errors
//! with the file, line and column, and `--no-config`.

use crate::support::Test;

/// A project whose planc.toml denies warnings, with a plan that has one (an
/// unused role), run from a directory below it. `.git` bounds the search.
fn project(config: &str) -> Test {
    let test = Test::temp();
    std::fs::create_dir_all(test.path(".git")).unwrap();
    std::fs::create_dir_all(test.path("plans/deep")).unwrap();
    std::fs::write(test.path("planc.toml"), config).unwrap();
    std::fs::write(
        test.path("plans/deep/w.plan"),
        "plan w {\n    goal \"g\"\n    role idle\n    task a \"A\"\n}\n",
    )
    .unwrap();
    test
}

fn check_in_deep(test: &Test, extra: &[&str]) -> crate::support::Output {
    let mut args = vec!["check", "w.plan"];
    args.extend_from_slice(extra);
    Test::new(args).current_dir(&test.path("plans/deep")).run()
}

#[test]
fn found_upward_and_the_flag_wins() {
    let test = project("deny = [\"warnings\"]\n");
    let denied = check_in_deep(&test, &[]);
    assert_eq!(denied.code, 1, "{}", denied.stdout);
    assert!(
        denied.stdout.contains("w.plan: 1 error, 1 task"),
        "{}",
        denied.stdout
    );
    // --no-config and PLANC_NO_CONFIG=1 ignore the file.
    let ignored = check_in_deep(&test, &["--no-config"]);
    assert_eq!(ignored.code, 0, "{}", ignored.stdout);
    assert!(
        ignored.stdout.contains("w.plan: 1 warning, 1 task"),
        "{}",
        ignored.stdout
    );
    let output = Test::new(["tools", "--format", "mcp"])
        .current_dir(&test.path("plans/deep"))
        .run();
    assert_eq!(output.code, 0, "{}", output.stderr);
}

#[test]
fn a_flag_on_the_command_line_wins_over_the_file() {
    let test = project("dialect = \"tasks\"\n");
    let deep = test.path("plans/deep");
    let from_file = Test::new(["tools"])
        .current_dir(&deep)
        .expect_code(0)
        .json();
    // The tasks dialect (seed 000's six tools) is what the file asks for.
    assert_eq!(
        from_file["tools"].as_array().unwrap().len(),
        6,
        "{from_file}"
    );
    let from_flag = Test::new(["tools", "--dialect", "planc"])
        .current_dir(&deep)
        .expect_code(0)
        .json();
    assert_eq!(from_flag["tools"][0]["name"], "getCurrentTask");
    let ignored = Test::new(["--no-config", "tools"])
        .current_dir(&deep)
        .expect_code(0)
        .json();
    assert_eq!(ignored, from_flag);
}

#[test]
fn paths_are_relative_to_the_file() {
    // `root = "plans"`: an import reaching above plans/ is refused, though
    // the plan's own directory would allow it without the file; and the
    // store `dir:states` is the project's states/, not one under plans/deep.
    let test = project("root = \"plans/deep\"\nstore = \"dir:states\"\nagent = \"alice\"\n");
    std::fs::create_dir_all(test.path("states")).unwrap();
    std::fs::write(test.path("plans/lib.plan"), "role shared\n").unwrap();
    std::fs::write(
        test.path("plans/deep/uses.plan"),
        "import \"../lib.plan\"\nplan u {\n    goal \"g\"\n    task a \"A\" { assignee shared }\n}\n",
    )
    .unwrap();
    let deep = test.path("plans/deep");
    let outside = Test::new(["check", "uses.plan"]).current_dir(&deep).run();
    assert_eq!(outside.code, 1, "{}", outside.stdout);
    assert!(
        outside.stdout.contains("planc::import"),
        "{}",
        outside.stdout
    );
    let root_flag = Test::new(["check", "uses.plan", "--root", ".."])
        .current_dir(&deep)
        .run();
    assert_eq!(root_flag.code, 0, "{}", root_flag.stderr);

    let init = Test::new(["run", "init", "w.plan", "--plan-id", "p1"])
        .current_dir(&deep)
        .run();
    assert_eq!(init.code, 0, "{}", init.stderr);
    assert!(test.path("states/p1.json").is_file());
    let next = Test::new(["run", "next", "--plan-id", "p1", "--json"])
        .current_dir(&deep)
        .expect_code(0)
        .json();
    assert_eq!(next["data"]["task"]["holder"]["agent"], "alice", "{next}");
}

#[test]
fn unknown_keys_and_wrong_types_name_the_file_line_and_column() {
    let test = project("# settings\nstor = \"dir:x\"\n");
    let output = check_in_deep(&test, &[]);
    assert_eq!(output.code, 2);
    let file = test.path("planc.toml");
    assert_eq!(
        output.stderr,
        format!(
            "error: {}:2:1: unknown key `stor`, expected one of `root`, `store`, `agent`, `deny`, `dialect`\n  \
             (planc.toml's keys: docs/cli.md; --no-config or PLANC_NO_CONFIG=1 ignores the file)\n",
            file.display()
        )
    );
    std::fs::write(&file, "root = 3\n").unwrap();
    let output = check_in_deep(&test, &[]);
    assert!(
        output.stderr.starts_with(&format!(
            "error: {}:1:8: invalid type: integer `3`, expected a string",
            file.display()
        )),
        "{}",
        output.stderr
    );
    std::fs::write(&file, "deny = [\"everything\"]\n").unwrap();
    let output = check_in_deep(&test, &[]);
    assert!(
        output.stderr.starts_with(&format!(
            "error: {}:1:9: `everything` is not a value of `deny`; the values are warnings",
            file.display()
        )),
        "{}",
        output.stderr
    );
    // A command that reads no setting is not stopped by a broken file.
    Test::new(["fmt", "w.plan"])
        .current_dir(&test.path("plans/deep"))
        .expect_code(0);
    let ignored = crate::support::planc()
        .args(["check", "w.plan"])
        .current_dir(test.path("plans/deep"))
        .env("PLANC_NO_CONFIG", "1")
        .output()
        .unwrap();
    assert_eq!(ignored.status.code(), Some(0), "{ignored:?}");
}

#[test]
fn mcp_takes_the_store_when_no_plan_is_named() {
    let test = project("store = \"dir:states\"\n");
    std::fs::create_dir_all(test.path("states")).unwrap();
    let deep = test.path("plans/deep");
    // With the file, `planc mcp` serves the store (and ends with its input);
    // without it, it needs a state file.
    let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;
    let served = Test::new(["mcp"])
        .current_dir(&deep)
        .stdin(format!("{initialize}\n"))
        .expect_code(0);
    assert!(
        served.stdout.contains(r#""serverInfo":{"name":"planc""#),
        "{}",
        served.stdout
    );
    let without = Test::new(["mcp", "--no-config"])
        .current_dir(&deep)
        .stdin("")
        .expect_code(2);
    assert_eq!(
        without.stderr,
        "error: give the state file (STATE) or --session KEY\n"
    );
}
