//! `planc run status` and `planc run list` as a table: the bar, the counts,
//! the columns; colours only when asked for or on a terminal; escaped text.
//! And, on the same state, runner errors as the command line spells them.

use std::process::Stdio;

use crate::support::{self, Test};

/// A state of jd_keyboard.plan: task 1 completed, task 2 held by alice,
/// and a task whose name holds terminal controls.
fn state() -> Test {
    let t = Test::temp();
    let plan = support::repo("examples/jd_keyboard.plan");
    t.expect(&["run", "init", &plan, "-o", "s.json"], 0);
    t.expect(&["run", "next", "s.json"], 0);
    t.expect(&["run", "complete", "s.json", "--result", "ok"], 0);
    t.expect(&["run", "next", "s.json", "--agent", "alice"], 0);
    t.expect(
        &[
            "run",
            "add",
            "s.json",
            "--name",
            "evil\u{1b}[31mred",
            "--after",
            "5",
        ],
        0,
    );
    t
}

/// `planc ARGS` in `t`'s directory with `env` set (and NO_COLOR unset).
fn planc_with(t: &Test, args: &[&str], env: &[(&str, &str)]) -> String {
    let mut command = support::planc();
    command
        .args(args)
        .current_dir(t.dir())
        .env_remove("NO_COLOR")
        .env_remove("COLUMNS")
        .stdin(Stdio::null());
    for (name, value) in env {
        command.env(name, value);
    }
    let output = command.output().unwrap();
    assert_eq!(output.status.code(), Some(0), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

const TABLE: &str = "\
ID  STATUS       NAME                                     HOLDER  AFTER  RETRIES
1   completed    Navigate to jd.com homepage              -       -      -
2   in_progress  Input '机械键盘' into search bar         alice   1      -
3   pending      Click the search button                  -       2      -
4   pending      Filter results by price (under 500)      -       3      0/2
5   pending      Add the first item to the shopping cart  -       4      -
6   pending      evil\\u{1b}[31mred                        -       5      -
";

#[test]
fn status_is_a_bar_the_counts_and_a_table_when_piped() {
    let t = state();
    let status = planc_with(&t, &["run", "status", "s.json"], &[]);
    assert_eq!(
        status,
        format!(
            "running █████░░░░░░░░░░░░░░░░░░░░░░░░░ 1/6 done (16%)\n\
             1 completed · 1 in progress · 4 pending · 0 failed · 0 skipped · 0 executable · 4 blocked\n\
             {TABLE}current task: #2\n"
        )
    );
    // NO_COLOR and --color never change nothing when piped; the list is the table.
    let no_color = planc_with(&t, &["run", "status", "s.json"], &[("NO_COLOR", "1")]);
    assert_eq!(no_color, status);
    let list = planc_with(&t, &["run", "list", "s.json", "--color", "never"], &[]);
    assert_eq!(list, TABLE);
    // --json is the envelope, as before.
    let json = planc_with(
        &t,
        &["run", "--json", "list", "s.json", "--color", "always"],
        &[],
    );
    assert!(
        json.starts_with("{\n  \"success\": true,\n  \"data\": {\n    \"tasks\""),
        "{json}"
    );
}

#[test]
fn color_always_paints_the_statuses() {
    let t = state();
    let list = planc_with(
        &t,
        &["run", "list", "s.json", "--color", "always"],
        &[("NO_COLOR", "1")],
    );
    let lines: Vec<&str> = list.lines().collect();
    assert_eq!(
        lines[0],
        "\u{1b}[1mID\u{1b}[0m  \u{1b}[1mSTATUS\u{1b}[0m       \u{1b}[1mNAME\u{1b}[0m                                     \u{1b}[1mHOLDER\u{1b}[0m  \u{1b}[1mAFTER\u{1b}[0m  \u{1b}[1mRETRIES\u{1b}[0m"
    );
    assert_eq!(
        lines[1],
        "1   \u{1b}[32mcompleted\u{1b}[0m    Navigate to jd.com homepage              -       -      -"
    );
    assert_eq!(
        lines[2],
        "2   \u{1b}[34min_progress\u{1b}[0m  Input '机械键盘' into search bar         alice   1      -"
    );
    // The name's own escape sequence is shown escaped, never sent.
    assert!(lines[6].contains("evil\\u{1b}[31mred"), "{}", lines[6]);
}

#[test]
fn a_narrow_terminal_cuts_names_with_an_ellipsis() {
    let t = state();
    let list = planc_with(&t, &["run", "list", "s.json"], &[("COLUMNS", "50")]);
    assert_eq!(
        list,
        "\
ID  STATUS       NAME          HOLDER  AFTER  RETRIES
1   completed    Navigate to…  -       -      -
2   in_progress  Input '机械…  alice   1      -
3   pending      Click the s…  -       2      -
4   pending      Filter resu…  -       3      0/2
5   pending      Add the fir…  -       4      -
6   pending      evil\\u{1b}[…  -       5      -
"
    );
}

#[test]
fn runner_errors_name_the_commands() {
    let t = state();
    let complete = t.expect(&["run", "complete", "s.json"], 1);
    assert_eq!(
        complete.stderr,
        "error[NO_CURRENT_TASK]: No task ID given and there is no current task; start one with `planc run next`\n"
    );
    let update = t.expect(&["run", "update", "s.json", "3"], 1);
    assert_eq!(
        update.stderr,
        "error[INVALID_ARGUMENT]: nothing to update: give --name, --deps, --reasoning, --assignee or --description\n"
    );
    let big = format!("{{\"x\": \"{}\"}}", "a".repeat(70_000));
    let log = t.expect(
        &["run", "log", "s.json", "--kind", "tool", "--data", &big],
        1,
    );
    assert_eq!(
        log.stderr,
        "error[INVALID_ARGUMENT]: --data is 70008 bytes as JSON; a logged event carries at most 65536 (64 KiB)\n"
    );
}
