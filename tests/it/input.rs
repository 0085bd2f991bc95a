//! Reading files safely: bounded reads of the files named on the command
//! line and of standard input, imports that stay inside the project, and
//! output that goes on when one of several files cannot be read.

use std::path::Path;

use crate::support::{self, temp_dir, Test};

fn write(dir: &Path, name: &str, text: &[u8]) {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, text).expect("write");
}

// --- Bounded reads --------------------------------------------------------

#[cfg(unix)]
#[test]
fn a_device_named_on_the_command_line_is_refused_without_reading_it() {
    let output = Test::new(["check", "/dev/zero"]).expect_code(2);
    insta::assert_snapshot!(output.stderr, @"error[planc::read]: cannot read /dev/zero: it is a device, not a file");
    assert_eq!(output.stdout, "");
}

#[test]
fn a_directory_named_on_the_command_line_is_refused() {
    let output = Test::new(["build", "examples"]).expect_code(2);
    insta::assert_snapshot!(output.stderr, @"error[planc::read]: cannot read examples: it is a directory, not a file");
}

#[cfg(unix)]
#[test]
fn endless_standard_input_stops_at_the_size_limit() {
    let output = Test::new(["check", "-"])
        .stdin_file(Path::new("/dev/zero"))
        .expect_code(2);
    insta::assert_snapshot!(output.stderr, @"error[planc::read]: cannot read standard input: it is larger than 67108864 bytes, the most planc reads from one file");
}

#[test]
fn a_file_over_the_size_limit_is_refused_before_it_is_read() {
    let dir = temp_dir("large");
    let path = dir.path().join("large.plan");
    let file = std::fs::File::create(&path).expect("create");
    // Sparse: 64 MiB and one byte, without writing them.
    file.set_len((64 << 20) + 1).expect("set_len");
    let output = Test::new(["check", "large.plan"])
        .current_dir(dir.path())
        .expect_code(2);
    insta::assert_snapshot!(output.stderr, @"error[planc::read]: cannot read large.plan: it is larger than 67108864 bytes, the most planc reads from one file");
}

/// Runs `test` while a second thread offers `text` to whoever opens the FIFO
/// at `fifo` to read it; says whether someone did. (A reader opening a FIFO
/// waits for a writer; the offer is made without waiting, so the test never
/// hangs, whichever way planc goes.)
#[cfg(unix)]
fn run_offering(test: Test, fifo: &Path, text: &'static str) -> (support::Output, bool) {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    let done = Arc::new(AtomicBool::new(false));
    let offer = {
        let (done, fifo) = (Arc::clone(&done), fifo.to_owned());
        std::thread::spawn(move || {
            while !done.load(Ordering::SeqCst) {
                let opened = std::fs::OpenOptions::new()
                    .write(true)
                    .custom_flags(libc::O_NONBLOCK)
                    .open(&fifo);
                if let Ok(mut writer) = opened {
                    // A reader is there: it reads the text, then the end.
                    writer
                        .write_all(text.as_bytes())
                        .expect("write to the FIFO");
                    return true;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            false
        })
    };
    let output = test.run();
    done.store(true, Ordering::SeqCst);
    (output, offer.join().expect("the offering thread"))
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let c_path = std::ffi::CString::new(path.to_str().expect("UTF-8 path")).expect("C string");
    // SAFETY: `c_path` is a valid C string.
    assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
}

#[cfg(unix)]
#[test]
fn a_fifo_named_on_the_command_line_is_read() {
    let dir = temp_dir("fifo-arg");
    mkfifo(&dir.path().join("plan.plan"));
    let test = Test::new(["check", "plan.plan"]).current_dir(dir.path());
    let (output, read) = run_offering(
        test,
        &dir.path().join("plan.plan"),
        "plan p {\n    goal \"g\"\n    task a \"A\"\n}\n",
    );
    assert!(read, "planc opened the FIFO");
    assert_eq!(output.code, 0, "{}", output.stdout);
    assert_eq!(output.stdout, "plan.plan: ok, 1 task\n");
}

#[cfg(unix)]
#[test]
fn process_substitution_is_read() {
    let has_bash = std::process::Command::new("bash")
        .args(["-c", "true"])
        .status()
        .is_ok_and(|s| s.success());
    if !has_bash {
        return;
    }
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(r#""$PLANC" check <(cat examples/jd_keyboard.plan)"#)
        .env("PLANC", env!("CARGO_BIN_EXE_planc"))
        .current_dir(support::root())
        .output()
        .expect("bash runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{stdout}");
    assert!(stdout.ends_with(": ok, 5 tasks\n"), "{stdout}");
}

#[cfg(unix)]
#[test]
fn an_imported_fifo_is_refused_without_waiting_for_a_writer() {
    let dir = temp_dir("fifo-import");
    mkfifo(&dir.path().join("lib.plan"));
    write(
        dir.path(),
        "p.plan",
        b"import \"lib.plan\"\nplan p { goal \"g\" task a \"A\" }\n",
    );
    let test = Test::new(["check", "p.plan"]).current_dir(dir.path());
    let (output, read) = run_offering(test, &dir.path().join("lib.plan"), "role from_fifo\n");
    assert!(!read, "planc opened the FIFO:\n{}", output.stdout);
    assert_eq!(output.code, 1);
    insta::assert_snapshot!(output.stdout, @r#"
    planc::import

      × cannot import `lib.plan`: it is a pipe (FIFO), not a file
       ╭─[p.plan:1:8]
     1 │ import "lib.plan"
       ·        ─────┬────
       ·             ╰── imported here
     2 │ plan p { goal "g" task a "A" }
       ╰────
      help: an import names a `.plan` file

    p.plan: 1 error, 1 task
    "#);
}

#[cfg(unix)]
#[test]
fn an_imported_device_is_refused() {
    let dir = temp_dir("device-import");
    write(
        dir.path(),
        "p.plan",
        b"import \"/dev/zero\"\nimport \"zero.plan\"\nplan p { goal \"g\" task a \"A\" }\n",
    );
    std::os::unix::fs::symlink("/dev/zero", dir.path().join("zero.plan")).expect("symlink");
    // Outside the project; and, when that is allowed, not a .plan file.
    let output = Test::new(["check", "p.plan"])
        .current_dir(dir.path())
        .expect_code(1);
    insta::assert_snapshot!(messages(&output.stdout), @r"
    × cannot import `/dev/zero`: only `.plan` files can be imported
    × cannot import `zero.plan`: it is outside the project root
    ");
    let output = Test::new(["check", "--allow-outside-root", "p.plan"])
        .current_dir(dir.path())
        .expect_code(1);
    insta::assert_snapshot!(messages(&output.stdout), @r"
    × cannot import `/dev/zero`: only `.plan` files can be imported
    × cannot import `zero.plan`: only `.plan` files can be imported
    ");
}

/// The message lines of human diagnostics.
fn messages(stderr: &str) -> String {
    let lines: Vec<&str> = stderr
        .lines()
        .map(str::trim_start)
        .filter(|l| l.starts_with('×'))
        .collect();
    lines.join("\n")
}

// --- Where imports resolve ----------------------------------------------

/// `top/lib.plan` declares `outer`; `top/a/b/lib.plan`, the wrong file,
/// declares `inner`; `top/a/b/p.plan` imports `../../lib.plan`.
fn nested_project() -> tempfile::TempDir {
    let dir = temp_dir("nested");
    write(dir.path(), "lib.plan", b"role outer \"Outer\"\n");
    write(dir.path(), "a/b/lib.plan", b"role inner \"Inner\"\n");
    write(
        dir.path(),
        "a/b/p.plan",
        b"import \"../../lib.plan\"\nplan p { goal \"g\" task t \"T\" { assignee outer } }\n",
    );
    dir
}

#[test]
fn parent_directories_in_an_import_are_relative_to_the_importing_file() {
    let dir = nested_project();
    let b = dir.path().join("a/b");
    // Run from the file's directory, from the top, and with the top as root.
    let output = Test::new(["check", "--allow-outside-root", "p.plan"])
        .current_dir(&b)
        .expect_code(0);
    assert_eq!(output.stdout, "p.plan: ok, 1 task\n");
    let output = Test::new(["check", "--root", ".", "a/b/p.plan"])
        .current_dir(dir.path())
        .expect_code(0);
    assert_eq!(output.stdout, "a/b/p.plan: ok, 1 task\n");
    let output = Test::new(["build", "--root", "../..", "p.plan"])
        .current_dir(&b)
        .expect_code(0);
    assert!(output.stdout.contains("\"outer\""), "{}", output.stdout);
}

#[test]
fn an_import_may_not_leave_the_directory_of_the_file_by_default() {
    let dir = nested_project();
    let output = Test::new(["check", "a/b/p.plan"])
        .current_dir(dir.path())
        .expect_code(1);
    insta::assert_snapshot!(output.stdout, @r#"
    planc::import

      × cannot import `../../lib.plan`: it is outside the project root
       ╭─[a/b/p.plan:1:8]
     1 │ import "../../lib.plan"
       ·        ────────┬───────
       ·                ╰── outside the project root
     2 │ plan p { goal "g" task t "T" { assignee outer } }
       ╰────
      help: imports stay inside the project root: the directory of the file named on the command line,
            or the one given with `--root DIR`; `--allow-outside-root` lifts the rule

    planc::unknown_role

      × no role named `outer`
       ╭─[a/b/p.plan:2:41]
     1 │ import "../../lib.plan"
     2 │ plan p { goal "g" task t "T" { assignee outer } }
       ·                                         ──┬──
       ·                                           ╰── unknown role
       ╰────
      help: declare it in the plan: `role outer "what this role does"`

    a/b/p.plan: 2 errors, 1 task
    "#);
    // A root that does not hold the import refuses it too.
    Test::new(["check", "--root", "a", "a/b/p.plan"])
        .current_dir(dir.path())
        .expect_code(1);
    // `run init` and `graph` take the same flags.
    Test::new(["graph", "--root", ".", "a/b/p.plan"])
        .current_dir(dir.path())
        .expect_code(0);
    Test::new([
        "run",
        "init",
        "--root",
        ".",
        "a/b/p.plan",
        "-o",
        "state.json",
    ])
    .current_dir(dir.path())
    .expect_code(0);
}

#[test]
fn a_root_that_is_not_a_directory_is_a_usage_error() {
    let output = Test::new(["check", "--root", "nope", "examples/jd_keyboard.plan"]).expect_code(2);
    assert!(
        output
            .stderr
            .contains("invalid value 'nope' for '--root <DIR>': not a directory"),
        "{}",
        output.stderr
    );
}

// --- Escapes ---------------------------------------------------------------

/// `project/p.plan` tries every way out to `outside/secret.plan`, whose text
/// is a secret.
fn escaping_project() -> tempfile::TempDir {
    let dir = temp_dir("escape");
    write(dir.path(), "outside/secret.plan", b"TOKEN=hunter2\n");
    write(dir.path(), "project/.env", b"TOKEN=hunter2\n");
    write(
        dir.path(),
        "project/binary.plan",
        b"role a\n\0TOKEN=hunter2\n",
    );
    let absolute = dir.path().join("outside/secret.plan");
    let plan = format!(
        "import \"../outside/secret.plan\"\nimport \"{}\"\nimport \"link.plan\"\nimport \"linked/secret.plan\"\nimport \".env\"\nimport \"binary.plan\"\nplan p {{ goal \"g\" task t \"T\" }}\n",
        absolute.display()
    );
    write(dir.path(), "project/p.plan", plan.as_bytes());
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(&absolute, dir.path().join("project/link.plan"))
            .expect("symlink");
        std::os::unix::fs::symlink(
            dir.path().join("outside"),
            dir.path().join("project/linked"),
        )
        .expect("symlink");
    }
    dir
}

#[test]
fn imports_cannot_read_outside_the_project_nor_show_what_they_refuse() {
    let dir = escaping_project();
    let project = dir.path().join("project");
    for format in ["human", "json", "github"] {
        let output = Test::new(["check", "--format", format, "p.plan"])
            .current_dir(&project)
            .expect_code(1);
        let all = format!("{}{}", output.stdout, output.stderr);
        assert!(!all.contains("hunter2"), "{format}:\n{all}");
    }
    let output = Test::new(["check", "--format", "json", "p.plan"])
        .current_dir(&project)
        .expect_code(1);
    let items: serde_json::Value = serde_json::from_str(&output.stdout).expect("JSON");
    let messages: Vec<String> = items
        .as_array()
        .expect("array")
        .iter()
        .map(|d| {
            let message = d["message"].as_str().expect("message");
            // The absolute import names the temporary directory.
            message.replace(dir.path().to_str().expect("UTF-8"), "TMP")
        })
        .collect();
    #[cfg(unix)]
    insta::assert_snapshot!(messages.join("\n"), @r"
    cannot import `../outside/secret.plan`: it is outside the project root
    cannot import `TMP/outside/secret.plan`: it is outside the project root
    cannot import `link.plan`: it is outside the project root
    cannot import `linked/secret.plan`: it is outside the project root
    cannot import `.env`: only `.plan` files can be imported
    cannot import `binary.plan`: it is not a text file (byte 7)
    ");
}

#[test]
fn the_root_can_be_widened_but_files_must_still_be_plan_text() {
    let dir = escaping_project();
    let project = dir.path().join("project");
    // With the parent as the root, the secret file is read: it is a `.plan`
    // file the user let in, and its syntax errors show it.
    let output = Test::new(["check", "--root", "..", "p.plan"])
        .current_dir(&project)
        .expect_code(1);
    assert!(output.stdout.contains("secret.plan"), "{}", output.stdout);
    // Still, never a file that is not a `.plan` file, nor a binary one.
    assert!(
        output
            .stdout
            .contains("cannot import `.env`: only `.plan` files can be imported"),
        "{}",
        output.stdout
    );
    assert!(
        output
            .stdout
            .contains("cannot import `binary.plan`: it is not a text file (byte 7)"),
        "{}",
        output.stdout
    );
}

// --- Several files, some unreadable -------------------------------------

#[test]
fn one_unreadable_file_does_not_hide_the_others() {
    let output = Test::new([
        "check",
        "examples/errors/cycle.plan",
        "examples/nope.plan",
        "examples/jd_keyboard.plan",
    ])
    .expect_code(2);
    // The report on standard output, why a file was not read on standard error.
    assert_eq!(
        output.stderr,
        "error[planc::read]: cannot read examples/nope.plan: No such file or directory (os error 2)\n"
    );
    let summary: Vec<&str> = output
        .stdout
        .lines()
        .filter(|l| l.starts_with("examples/") || l.starts_with("error"))
        .collect();
    insta::assert_snapshot!(summary.join("\n"), @r"
    examples/errors/cycle.plan: 1 error, 3 tasks
    examples/jd_keyboard.plan: ok, 5 tasks
    ");
}

#[test]
fn json_output_is_an_array_with_an_entry_for_an_unreadable_file() {
    let output = Test::new([
        "check",
        "--format",
        "json",
        "examples/errors/cycle.plan",
        "examples/nope.plan",
    ])
    .expect_code(2);
    assert_eq!(
        output.stderr,
        "error[planc::read]: cannot read examples/nope.plan: No such file or directory (os error 2)\n"
    );
    let items: serde_json::Value = serde_json::from_str(&output.stdout).expect("a JSON array");
    let items = items.as_array().expect("array");
    let codes: Vec<(&str, &str)> = items
        .iter()
        .map(|d| {
            (
                d["code"].as_str().expect("code"),
                d["file"].as_str().expect("file"),
            )
        })
        .collect();
    assert_eq!(
        codes,
        [
            ("planc::cycle", "examples/errors/cycle.plan"),
            ("planc::read", "examples/nope.plan")
        ]
    );

    // Only unreadable files: still an array.
    let output = Test::new(["check", "--format", "json", "examples/nope.plan"]).expect_code(2);
    let items: serde_json::Value = serde_json::from_str(&output.stdout).expect("a JSON array");
    assert_eq!(items.as_array().map(Vec::len), Some(1));
}

#[test]
fn github_annotations_name_an_unreadable_file() {
    let output = Test::new([
        "check",
        "--format",
        "github",
        "examples/nope.plan",
        "examples/jd_keyboard.plan",
    ])
    .expect_code(2);
    insta::assert_snapshot!(output.stdout, @"::error file=examples/nope.plan,line=1,col=1,endLine=1,endColumn=1,title=planc%3A%3Aread::cannot read examples/nope.plan: No such file or directory (os error 2)%0Anot read%0Ahelp: planc reads regular files, pipes and standard input, of at most 64 MiB");
}

#[test]
fn fmt_goes_on_after_a_file_it_cannot_read() {
    let dir = temp_dir("fmt-several");
    write(dir.path(), "a.plan", b"plan a {goal \"g\" task t \"T\"}\n");
    write(dir.path(), "b.plan", b"plan b {goal \"g\" task t \"T\"}\n");
    let output = Test::new(["fmt", "--check", "a.plan", "missing.plan", "b.plan"])
        .current_dir(dir.path())
        .expect_code(2);
    assert!(output.stdout.contains("--- a.plan"), "{}", output.stdout);
    assert!(output.stdout.contains("--- b.plan"), "{}", output.stdout);
    assert!(
        output
            .stderr
            .contains("error[planc::read]: cannot read missing.plan"),
        "{}",
        output.stderr
    );
    // Formatting in place formats the files it can read.
    Test::new(["fmt", "a.plan", "missing.plan", "b.plan"])
        .current_dir(dir.path())
        .expect_code(2);
    Test::new(["fmt", "--check", "a.plan", "b.plan"])
        .current_dir(dir.path())
        .expect_code(0);
}
