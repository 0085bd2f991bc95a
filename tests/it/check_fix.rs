//! `planc check --fix` and `--diff`: the language server's quick fixes
//! applied from the command line, and `check`'s report on standard output.

use std::time::Duration;

use crate::support::Test;

/// Two typos, each with a "did you mean" fix, and one problem no fix solves.
const TWO_TYPOS: &str = "plan demo {
    role writer \"Writes\"
    task draft \"Draft\" {
        assignee writr
    }
    task review \"Review\" {
        after draf
    }
}
";

const FIXED: &str = "plan demo {
    role writer \"Writes\"
    task draft \"Draft\" {
        assignee writer
    }
    task review \"Review\" {
        after draft
    }
}
";

#[test]
fn fix_rewrites_both_typos_and_reports_what_remains() {
    let t = Test::temp().file("demo.plan", TWO_TYPOS);
    let run = t.expect(&["check", "--fix", "demo.plan"], 1);
    assert_eq!(std::fs::read_to_string(t.path("demo.plan")).unwrap(), FIXED);
    // What remains, its summary and the count, on standard output.
    assert!(
        run.stdout.contains("plan `demo` has no goal"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .ends_with("demo.plan: 1 error, 2 tasks\nFixed 2 problems (1 remaining)\n"),
        "{}",
        run.stdout
    );
    assert_eq!(run.stderr, "");
}

#[test]
fn diff_shows_the_fixes_writes_nothing_and_fails() {
    let t = Test::temp().file("demo.plan", TWO_TYPOS);
    let run = t.expect(&["check", "--diff", "demo.plan"], 1);
    assert_eq!(
        run.stdout,
        "--- demo.plan
+++ demo.plan (fixed)
@@ -2,8 +2,8 @@
     role writer \"Writes\"
     task draft \"Draft\" {
-        assignee writr
+        assignee writer
     }
     task review \"Review\" {
-        after draf
+        after draft
     }
 }
"
    );
    assert_eq!(run.stderr, "Would fix 2 problems (1 remaining)\n");
    assert_eq!(
        std::fs::read_to_string(t.path("demo.plan")).unwrap(),
        TWO_TYPOS
    );
    // Nothing was written: the same diff again; a fixed file has none (exit 0).
    let clean = t.expect(&["check", "--diff", "demo.plan"], 1);
    assert_eq!(clean.stdout, run.stdout);
    let t = Test::temp().file("fixed.plan", FIXED);
    let none = t.expect(&["check", "--diff", "fixed.plan"], 0);
    assert_eq!(
        (none.stdout.as_str(), none.stderr.as_str()),
        ("", "Would fix 0 problems (1 remaining)\n")
    );
}

#[test]
fn a_file_without_fixes_is_not_written() {
    let t = Test::temp().file("fixed.plan", FIXED);
    let path = t.path("fixed.plan");
    let before = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(Duration::from_millis(20));
    let run = t.expect(&["check", "--fix", "fixed.plan"], 1);
    assert!(
        run.stdout.ends_with("Fixed 0 problems (1 remaining)\n"),
        "{}",
        run.stdout
    );
    assert_eq!(std::fs::read_to_string(&path).unwrap(), FIXED);
    assert_eq!(
        std::fs::metadata(&path).unwrap().modified().unwrap(),
        before
    );
}

#[test]
fn standard_input_is_printed_fixed_and_the_report_goes_to_stderr() {
    let run = Test::new(["check", "--fix", "-"])
        .stdin(TWO_TYPOS)
        .expect_code(1);
    assert_eq!(run.stdout, FIXED);
    assert!(
        run.stderr
            .ends_with("<stdin>: 1 error, 2 tasks\nFixed 2 problems (1 remaining)\n"),
        "{}",
        run.stderr
    );
}

#[test]
fn imports_are_fixed_inside_the_root_only_and_json_has_no_fixes() {
    let lib = "role writer \"Writes\"\ntemplate t(x: string) {\n    task one \"One {x}\" {\n        assignee writr\n    }\n}\n";
    let main =
        "import \"../lib/roles.plan\"\nplan demo {\n    goal \"g\"\n    use t(x = \"a\") as a\n}\n";
    let t = Test::temp();
    std::fs::create_dir_all(t.path("lib")).unwrap();
    std::fs::create_dir_all(t.path("app")).unwrap();
    let t = t.file("lib/roles.plan", lib).file("app/main.plan", main);
    // Read from outside app/ with --allow-outside-root, but not changed.
    let outside = t.expect(
        &["check", "--fix", "--allow-outside-root", "app/main.plan"],
        1,
    );
    assert!(
        outside.stdout.ends_with("Fixed 0 problems (1 remaining)\n"),
        "{}",
        outside.stdout
    );
    assert_eq!(
        std::fs::read_to_string(t.path("lib/roles.plan")).unwrap(),
        lib
    );
    // Inside --root, fixed.
    let inside = t.expect(&["check", "--fix", "--root", ".", "app/main.plan"], 0);
    assert!(
        inside.stdout.ends_with("Fixed 1 problem (0 remaining)\n"),
        "{}",
        inside.stdout
    );
    assert_eq!(
        std::fs::read_to_string(t.path("lib/roles.plan")).unwrap(),
        lib.replace("writr", "writer")
    );
    let t = t.file("plan.json", "{}");
    let json = t.expect(&["check", "--fix", "plan.json"], 1);
    assert!(
        json.stderr.starts_with(
            "plan.json: no fixes for JSON plan documents (planc fixes .plan sources)\n"
        ),
        "{}",
        json.stderr
    );
}

#[test]
fn check_prints_its_report_on_standard_output() {
    let t = Test::temp().file("demo.plan", TWO_TYPOS);
    let run = t.expect(&["check", "demo.plan"], 1);
    assert_eq!(run.stderr, "");
    assert!(
        run.stdout.contains("× no role named `writr`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.ends_with("demo.plan: 3 errors, 2 tasks\n"),
        "{}",
        run.stdout
    );
}
