//! `planc init`: a starter project that checks clean, never overwriting.

use crate::support::{temp_dir, Test};

const FILES: [&str; 4] = [
    "main.plan",
    "planc.toml",
    ".pre-commit-config.yaml",
    ".vscode/extensions.json",
];

#[test]
fn init_scaffolds_a_project_that_checks_clean_and_never_overwrites() {
    let temp = temp_dir("init");
    let dir = temp.path().join("demo");
    let dir_text = dir.display().to_string();
    let output = Test::new(["init", &dir_text])
        .current_dir(temp.path())
        .expect_code(0);
    for file in FILES {
        assert!(dir.join(file).is_file(), "{file}");
        assert!(
            output
                .stdout
                .contains(&format!("created {}", dir.join(file).display())),
            "{}",
            output.stdout
        );
    }
    assert!(
        output.stdout.contains("planc check main.plan"),
        "{}",
        output.stdout
    );
    assert!(
        output.stdout.contains("docs/editors.md"),
        "{}",
        output.stdout
    );

    // The plan checks clean (no warning either), in the canonical layout the
    // pre-commit hook keeps, and builds.
    let check = Test::new(["check", "--deny", "warnings", "main.plan"])
        .current_dir(&dir)
        .run();
    assert_eq!(check.code, 0, "{}", check.stdout);
    assert_eq!(check.stdout, "main.plan: ok, 5 tasks\n");
    Test::new(["fmt", "--check", "main.plan"])
        .current_dir(&dir)
        .expect_code(0);
    Test::new(["build", "main.plan"])
        .current_dir(&dir)
        .expect_code(0);
    let hooks = std::fs::read_to_string(dir.join(".pre-commit-config.yaml")).unwrap();
    assert!(hooks.contains("entry: planc check\n"), "{hooks}");
    assert!(hooks.contains("entry: planc fmt\n"), "{hooks}");
    let editors = std::fs::read_to_string(dir.join(".vscode/extensions.json")).unwrap();
    let editors: serde_json::Value = serde_json::from_str(&editors).unwrap();
    assert_eq!(editors["recommendations"][0], "planc.planc");

    // A second init changes nothing and says what it would overwrite.
    std::fs::write(dir.join("main.plan"), "# mine\n").unwrap();
    let again = Test::new(["init", &dir_text]).expect_code(2);
    assert_eq!(
        again.stderr,
        format!(
            "error: not initialised: main.plan, planc.toml, .pre-commit-config.yaml, \
             .vscode/extensions.json exist already in {dir_text} (--force overwrites)\n"
        )
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("main.plan")).unwrap(),
        "# mine\n"
    );

    // --force overwrites, and says so.
    let forced = Test::new(["init", "--force", "."])
        .current_dir(&dir)
        .expect_code(0);
    assert!(
        forced.stdout.starts_with("overwrote main.plan\n"),
        "{}",
        forced.stdout
    );
    Test::new(["check", "main.plan"])
        .current_dir(&dir)
        .expect_code(0);
}

/// pre-commit runs the scaffold's hooks (the planc under test on `PATH`):
/// both pass on the starter plan. Only where the CI packaging tests' virtual
/// environment holds pre-commit already (making it is not cheap).
#[test]
fn the_scaffold_passes_its_own_pre_commit_hooks() {
    let pre_commit =
        std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ci-packaging-venv/bin/pre-commit");
    if !pre_commit.is_file() {
        eprintln!("skipped: no pre-commit in {}", pre_commit.display());
        return;
    }
    let temp = temp_dir("init-pre-commit");
    let dir = temp.path().join("demo");
    Test::new(["init", &dir.display().to_string()]).expect_code(0);
    let git = |args: &[&str]| {
        let status = std::process::Command::new("git")
            .args(args)
            .current_dir(&dir)
            .status()
            .unwrap();
        assert!(status.success(), "git {args:?}");
    };
    git(&["init", "-q", "."]);
    git(&["add", "-A"]);
    let bin = std::path::Path::new(env!("CARGO_BIN_EXE_planc"))
        .parent()
        .unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let output = std::process::Command::new(&pre_commit)
        .args(["run", "--all-files"])
        .current_dir(&dir)
        .env("PATH", path)
        .env("PRE_COMMIT_HOME", temp.path().join("cache"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}\n{output:?}");
    assert!(
        stdout.contains("planc check") && stdout.contains("Passed"),
        "{stdout}"
    );
}
