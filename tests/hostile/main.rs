//! Hostile input through the library and the `planc` binary: one `#[test]`
//! per class (superlinear time, memory, unbounded reads, files outside the
//! project, terminal controls, outputs, concurrent writers), so a failure
//! names its class; and a baseline, the examples through the same checks,
//! which must pass.
//!
//! Every case runs in a child process under a time budget (a hang guard,
//! counted in the child's processor time, with a wall-clock limit for a
//! child that blocks: the child is killed at either) and an address-space cap (64 times the
//! input plus 256 MiB); the library's cases run this test binary again
//! (`library_case_entry`). Each run must end by itself with code 0, 1 or 2,
//! never panic, print a JSON array for `--format json`, print no raw
//! terminal control and no forged line in human output, and never show the
//! secret planted outside the project.
//!
//! Random cases per class: `PLANC_FUZZ_CASES / 64` (4 by default), from
//! the seed `PLANC_HOSTILE_SEED` (1 by default) on; the fixed large shapes
//! run once. `scripts/fuzz-nightly` runs it at nightly
//! size.

// Tests may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

mod library;
mod run;
#[path = "../support/mod.rs"]
mod support;

use std::path::Path;

use planc::generate::hostile::{self, Class, CONTROLS, FORGED_LINE};
use run::{check, library, planc, Child, Stdin, Stdout, DECOY, SECRET};
use support::temp_dir;

/// Random cases per class.
fn cases() -> u64 {
    u64::from(planc::generate::fuzz_cases(256) / 64).max(1)
}

/// The seeds of the random cases: `cases()` of them from
/// `PLANC_HOSTILE_SEED` (1 unless given; `scripts/fuzz-nightly` gives the
/// date, so each night runs new cases). A failure names its seed.
fn seeds() -> std::ops::RangeInclusive<u64> {
    let first = std::env::var("PLANC_HOSTILE_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(1u64);
    first..=first.saturating_add(cases() - 1)
}

/// Whether this is a nightly-size run (`PLANC_FUZZ_CASES` of 10,000 or
/// more): the fixed large shapes then run at the sizes that found the
/// defects (128,000 cycles, 50 MB); otherwise at an eighth or a
/// twenty-fifth of them, which is still superlinear territory.
fn nightly() -> bool {
    planc::generate::fuzz_cases(256) >= 10_000
}

/// A size from 2 KiB to 256 KiB, spread evenly over the powers of two.
fn size(seed: u64) -> usize {
    let mut next = hostile::numbers(seed);
    let shift = 11 + next(7);
    (1 << shift) + next(1 << shift)
}

/// The failures of one class; the class stops after [`Failures::LIMIT`]
/// of them (each may have waited a whole budget).
struct Failures {
    class: &'static str,
    runs: usize,
    found: Vec<String>,
    /// The file of the case being run, copied out when it fails.
    case: Option<std::path::PathBuf>,
}

impl Failures {
    const LIMIT: usize = 12;

    fn new(class: &'static str) -> Failures {
        Failures {
            class,
            runs: 0,
            found: Vec::new(),
            case: None,
        }
    }

    fn full(&self) -> bool {
        self.found.len() >= Self::LIMIT
    }

    /// Runs `child` for the case `label` unless the class has failed
    /// enough; whether it passed.
    fn run(&mut self, label: &str, child: Child<'_>) -> bool {
        self.output(label, child).is_some()
    }

    /// Like [`Failures::run`], returning what the child printed.
    fn output(&mut self, label: &str, child: Child<'_>) -> Option<String> {
        if self.full() {
            return None;
        }
        self.runs += 1;
        match check(child) {
            Ok(output) => Some(output),
            Err(error) => {
                let kept = self.keep().unwrap_or_default();
                self.found.push(format!("{label}: {error}{kept}"));
                None
            }
        }
    }

    /// Copies the failing case's file where it outlives the test, once.
    fn keep(&mut self) -> Option<String> {
        let case = self.case.take()?;
        let dir = std::env::temp_dir().join("planc-hostile-failures");
        std::fs::create_dir_all(&dir).ok()?;
        let extension = case.extension()?.to_str()?;
        let name = format!(
            "{}-{}-{}.{extension}",
            self.class,
            std::process::id(),
            self.found.len()
        );
        std::fs::copy(&case, dir.join(&name)).ok()?;
        Some(format!(" [case kept as {}]", dir.join(name).display()))
    }

    fn finish(self) {
        eprintln!(
            "hostile {}: {} child runs, {} failures",
            self.class,
            self.runs,
            self.found.len()
        );
        assert!(
            self.found.is_empty(),
            "class {}: {} failing runs{}:\n{}",
            self.class,
            self.found.len(),
            if self.full() { " (stopped there)" } else { "" },
            self.found.join("\n")
        );
    }
}

fn cli<'a>(dir: &Path, args: &[&str], bytes: usize, stdout: Stdout, codes: &'a [i32]) -> Child<'a> {
    Child {
        command: planc(dir, args),
        stdin: Stdin::Null,
        bytes,
        stdout,
        codes,
    }
}

fn lib<'a>(dir: &Path, spec: &str, bytes: usize) -> Child<'a> {
    Child {
        command: library(dir, spec),
        stdin: Stdin::Null,
        bytes,
        stdout: Stdout::Human,
        codes: &[0],
    }
}

/// A `.plan` text through the library and `planc check` (human, JSON,
/// standard input); with `every`, also `build`, `graph` and `fmt --check`.
fn plan_case(failures: &mut Failures, dir: &Path, label: &str, text: &str, every: bool) {
    let path = dir.join("case.plan");
    std::fs::write(&path, text).expect("write the case");
    failures.case = Some(path.clone());
    let bytes = text.len();
    // The library and `planc check` always; after a failure of either the
    // class goes on to its next case.
    let library = failures.run(label, lib(dir, "plan:case.plan", bytes));
    let check = failures.run(
        &format!("{label}: check"),
        cli(dir, &["check", "case.plan"], bytes, Stdout::Human, &[]),
    );
    if !(library && check) {
        return;
    }
    failures.run(
        &format!("{label}: check --format json"),
        cli(
            dir,
            &["check", "--format", "json", "case.plan"],
            bytes,
            Stdout::JsonArray,
            &[],
        ),
    );
    if every {
        let mut stdin = cli(dir, &["check", "-"], bytes, Stdout::Human, &[]);
        stdin.stdin = Stdin::File(&path);
        failures.run(&format!("{label}: check -"), stdin);
        failures.run(
            &format!("{label}: build"),
            cli(dir, &["build", "case.plan"], bytes, Stdout::Json, &[]),
        );
        failures.run(
            &format!("{label}: graph"),
            cli(dir, &["graph", "case.plan"], bytes, Stdout::Data, &[]),
        );
        failures.run(
            &format!("{label}: fmt --check"),
            cli(
                dir,
                &["fmt", "--check", "case.plan"],
                bytes,
                Stdout::Data,
                &[],
            ),
        );
    }
}

/// Random cases of `class`, each a fresh text from its seed.
fn random_cases(failures: &mut Failures, dir: &Path, class: Class) {
    for seed in seeds() {
        let size = size(seed);
        let (shape, text) = hostile::case(class, seed, size);
        plan_case(
            failures,
            dir,
            &format!("{class:?} seed {seed}: {shape}, {} bytes", text.len()),
            &text,
            true,
        );
    }
}

/// The entry point of a library case: this binary, run again by
/// [`run::library`] with the case in its environment. Run as an ordinary
/// test (no case given) it has nothing to do.
#[test]
fn library_case_entry() {
    if let Ok(spec) = std::env::var(run::LIBRARY_CASE) {
        library::exercise(&spec);
    }
}

/// The control: every example, and a run of each, passes every check of
/// the suite (the budget, the memory cap, the JSON, the human output), so
/// a class that fails fails on its hostile input, not on the harness.
#[test]
fn baseline_examples_pass_every_check() {
    let dir = temp_dir("hostile-baseline");
    let dir = dir.path();
    std::fs::create_dir(dir.join("lib")).expect("lib");
    for file in support::files("examples/lib", &["plan"]) {
        let name = Path::new(&file).file_name().expect("a file name");
        std::fs::copy(support::root().join(&file), dir.join("lib").join(name)).expect("copy");
    }
    let mut failures = Failures::new("baseline");
    for file in support::files("examples", &["plan"]) {
        let text = std::fs::read_to_string(support::root().join(&file)).expect("example");
        plan_case(&mut failures, dir, &file, &text, true);
        // Examples with a required parameter are not run.
        let _ = std::fs::remove_file(dir.join("s.json"));
        let init = cli(
            dir,
            &["run", "init", "case.plan", "-o", "s.json", "--force"],
            text.len(),
            Stdout::Human,
            &[0, 1],
        );
        if failures.run(&format!("{file}: run init"), init) && dir.join("s.json").exists() {
            let label = format!("{file}: run");
            run_commands(
                &mut failures,
                dir,
                &label,
                text.len(),
                "done, see the notes",
                "1",
                "2",
            );
            failures.run(
                &format!("{file}: library state"),
                lib(dir, "state:s.json", text.len()),
            );
        }
    }
    // A plan document, as `build` writes it, through the library and
    // `check`.
    let plan = "plan p { goal \"g\" task a \"A\" task b \"B\" { after a } }\n";
    std::fs::write(dir.join("case.plan"), plan).expect("write");
    let built = cli(
        dir,
        &["build", "case.plan", "-o", "case.json"],
        0,
        Stdout::Human,
        &[0],
    );
    if failures.run("build case.json", built) {
        failures.run("library: case.json", lib(dir, "json:case.json", 0));
        failures.run(
            "check case.json",
            cli(dir, &["check", "case.json"], 0, Stdout::Human, &[0]),
        );
    }
    failures.finish();
}

#[test]
fn time_unterminated_braces_and_many_cycles() {
    let dir = temp_dir("hostile-time");
    let mut failures = Failures::new("time");
    random_cases(&mut failures, dir.path(), Class::Time);
    for (label, text) in [
        (
            "an unclosed string of 64 KiB of `{`".to_owned(),
            hostile::unterminated_braces(64 << 10, false),
        ),
        {
            let pairs = if nightly() { 128_000 } else { 16_000 };
            (
                format!("{pairs} two-task cycles"),
                hostile::two_task_cycles(pairs),
            )
        },
    ] {
        plan_case(&mut failures, dir.path(), &label, &text, false);
    }
    failures.finish();
}

#[test]
fn memory_template_bombs_and_bare_words() {
    let dir = temp_dir("hostile-memory");
    let mut failures = Failures::new("memory");
    random_cases(&mut failures, dir.path(), Class::Memory);
    for (label, text) in [
        (
            "15 levels of templates using the one below 4 times".to_owned(),
            hostile::template_bomb(15, 4, 0),
        ),
        (
            "16 levels of templates using the one below twice".to_owned(),
            hostile::template_bomb(16, 2, 0),
        ),
        {
            let bytes = if nightly() { 50_000_000 } else { 2_000_000 };
            (
                format!("{bytes} bytes of bare words"),
                hostile::bare_words(bytes),
            )
        },
    ]
    .into_iter()
    .chain(dense_after_mistakes())
    {
        plan_case(&mut failures, dir.path(), &label, &text, false);
    }
    failures.finish();
}

/// The shapes that cost the most memory per byte (comment lines and
/// repeated references, read by the grammar after a mistake), with the
/// mistake at the top and, at nightly size (20 MB), also as far from the
/// end as planc explains (`MAX_EXPLAINED_BYTES`); 64 KiB otherwise (a
/// debug build checks a million references slowly).
fn dense_after_mistakes() -> Vec<(String, String)> {
    let (bytes, positions): (usize, &[&str]) = if nightly() {
        (20_000_000, &["at the top", "explained"])
    } else {
        (64 << 10, &["at the top"])
    };
    let explained = planc::syntax::MAX_EXPLAINED_BYTES - 4096;
    let mut shapes = Vec::new();
    for (what, comments) in [("comment lines", true), ("`after a,a,…`", false)] {
        for &at in positions {
            let from_end = if at == "explained" { explained } else { bytes };
            shapes.push((
                format!("{bytes} bytes of {what}, a mistake {at}"),
                hostile::dense_after_mistake(bytes, from_end, comments),
            ));
        }
    }
    shapes
}

/// A task's id in a JSON plan document.
fn task_id(document: &serde_json::Value, index: usize) -> String {
    match &document["tasks"][index]["id"] {
        serde_json::Value::Number(n) => n.to_string(),
        serde_json::Value::String(s) => s.clone(),
        _ => "1".to_owned(),
    }
}

/// A text with terminal controls and a forged line, for a command's argument.
fn controlled_arg(seed: u64) -> String {
    let mut next = hostile::numbers(seed);
    let mut out = String::from("value");
    for _ in 0..3 {
        out.push_str(CONTROLS[next(CONTROLS.len())]);
    }
    out.push_str(&format!("\n{FORGED_LINE} ok"));
    out
}

/// A state made from a document full of controls, driven and shown by
/// every `planc run` command that prints names, results or logs.
fn state_case(failures: &mut Failures, dir: &Path, seed: u64) {
    let text = hostile::controlled_document(seed, 4 + seed as usize % 40);
    let bytes = text.len();
    std::fs::write(dir.join("doc.json"), &text).expect("write the document");
    failures.case = Some(dir.join("doc.json"));
    let document: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let _ = std::fs::remove_file(dir.join("s.json"));
    let label = format!("state seed {seed}");
    failures.run(&label, lib(dir, "json:doc.json", bytes));
    failures.run(
        &format!("{label}: check doc.json"),
        cli(dir, &["check", "doc.json"], bytes, Stdout::Human, &[]),
    );
    failures.run(
        &format!("{label}: run init"),
        cli(
            dir,
            &["run", "init", "doc.json", "-o", "s.json", "--force"],
            bytes,
            Stdout::Human,
            &[0],
        ),
    );
    let first = task_id(&document, 0);
    let second = task_id(&document, 1);
    let arg = controlled_arg(seed);
    run_commands(failures, dir, &label, bytes, &arg, &first, &second);
    failures.run(
        &format!("{label}: library state"),
        lib(dir, "state:s.json", bytes),
    );
}

/// Every `planc run` command that prints names, results or logs, on
/// `s.json` in `dir`, human and `--json`, with `arg` as the result, error
/// and new task's texts; stops at the first failure.
fn run_commands(
    failures: &mut Failures,
    dir: &Path,
    label: &str,
    bytes: usize,
    arg: &str,
    first: &str,
    second: &str,
) {
    let commands: Vec<Vec<&str>> = vec![
        vec!["list", "s.json"],
        vec!["list", "s.json", "--status", "completed"],
        vec!["show", "s.json", &first],
        vec!["show", "s.json", &second],
        vec!["status", "s.json"],
        vec!["ready", "s.json"],
        vec!["prompt", "s.json"],
        vec!["next", "s.json"],
        vec!["show", "s.json"],
        vec!["complete", "s.json", "--result", arg],
        vec!["next", "s.json"],
        vec!["fail", "s.json", "--error", arg, "--no-retry"],
        vec![
            "add",
            "s.json",
            "--name",
            arg,
            "--reasoning",
            arg,
            "--description",
            arg,
        ],
        vec!["list", "s.json"],
        vec!["prompt", "s.json"],
        vec!["watch", "s.json", "--no-follow"],
    ];
    for command in &commands {
        for json in [false, true] {
            let mut args = vec!["run"];
            if json {
                args.push("--json");
            }
            args.extend(command.iter().copied());
            let stdout = match (json, command[0]) {
                (false, _) => Stdout::Human,
                (true, "watch") => Stdout::JsonLines,
                (true, _) => Stdout::Json,
            };
            let passed = failures.run(
                &format!("{label}: planc {}", args.join(" ").escape_debug()),
                cli(dir, &args, bytes, stdout, &[]),
            );
            if !passed {
                return;
            }
        }
    }
}

#[test]
fn terminal_controls_never_reach_human_output() {
    let dir = temp_dir("hostile-terminal");
    let mut failures = Failures::new("terminal");
    random_cases(&mut failures, dir.path(), Class::Terminal);
    for seed in seeds() {
        state_case(&mut failures, dir.path(), seed);
        // A plan whose strings carry controls, run.
        let size = size(seed);
        let text = hostile::controlled_plan(seed, size);
        let dir = dir.path();
        std::fs::write(dir.join("case.plan"), &text).expect("write the case");
        failures.case = Some(dir.join("case.plan"));
        let label = format!("plan with controls seed {seed}, run");
        let init = cli(
            dir,
            &["run", "init", "case.plan", "-o", "s.json", "--force"],
            text.len(),
            Stdout::Human,
            &[0],
        );
        if failures.run(&label, init) {
            let arg = controlled_arg(seed);
            run_commands(&mut failures, dir, &label, text.len(), &arg, "1", "2");
        }
    }
    failures.finish();
}

/// Makes a FIFO at `path`.
fn fifo(path: &Path) {
    let name = std::ffi::CString::new(path.to_str().expect("utf-8 path")).expect("no NUL");
    // SAFETY: `name` is a valid C string for the call's duration.
    let made = unsafe { libc::mkfifo(name.as_ptr(), 0o644) };
    assert_eq!(made, 0, "mkfifo {}", path.display());
}

#[test]
fn reads_unbounded_files_are_refused() {
    let dir = temp_dir("hostile-reads");
    let dir = dir.path();
    let mut failures = Failures::new("reads");
    fifo(&dir.join("pipe.plan"));
    let cases = [
        ("zero.plan", hostile::imports(&["/dev/zero"])),
        ("urandom.plan", hostile::imports(&["/dev/urandom"])),
        ("fifo.plan", hostile::imports(&["pipe.plan"])),
    ];
    for (name, text) in &cases {
        std::fs::write(dir.join(name), text).expect("write");
        failures.run(
            &format!("library: {name}"),
            lib(dir, &format!("plan:{name}"), 0),
        );
        for args in [
            vec!["check", name],
            vec!["build", name],
            vec!["graph", name],
            vec!["run", "init", name, "-o", "s.json", "--force"],
        ] {
            failures.run(
                &format!("planc {}", args.join(" ")),
                cli(dir, &args, 0, Stdout::Data, &[1, 2]),
            );
        }
        failures.run(
            &format!("planc check --format json {name}"),
            cli(
                dir,
                &["check", "--format", "json", name],
                0,
                Stdout::JsonArray,
                &[1, 2],
            ),
        );
    }
    for args in [
        vec!["check", "/dev/zero"],
        vec!["build", "/dev/zero"],
        vec!["fmt", "--check", "/dev/zero"],
        vec!["run", "list", "/dev/zero"],
        vec!["run", "init", "/dev/zero", "-o", "s.json", "--force"],
    ] {
        failures.run(
            &format!("planc {}", args.join(" ")),
            cli(dir, &args, 0, Stdout::Data, &[1, 2]),
        );
    }
    failures.run("library: state /dev/zero", lib(dir, "state:/dev/zero", 0));
    let zero = Path::new("/dev/zero");
    for args in [vec!["check", "-"], vec!["build", "-"], vec!["fmt", "-"]] {
        let mut child = cli(dir, &args, 0, Stdout::Data, &[1, 2]);
        child.stdin = Stdin::File(zero);
        failures.run(&format!("planc {} </dev/zero", args.join(" ")), child);
    }
    failures.finish();
}

/// The paths an import may try to leave the project by, from a project two
/// levels below `outer` (which holds `secret.plan` and `lib.plan`); links
/// inside the project point out of it.
fn escapes(outer: &Path, project: &Path) -> Vec<String> {
    std::os::unix::fs::symlink(outer.join("secret.plan"), project.join("link.plan"))
        .expect("symlink");
    std::os::unix::fs::symlink(outer, project.join("up")).expect("symlink");
    vec![
        "../../lib.plan".to_owned(),
        "../../secret.plan".to_owned(),
        "sub/../../../lib.plan".to_owned(),
        outer.join("secret.plan").display().to_string(),
        "/etc/passwd".to_owned(),
        "/proc/self/environ".to_owned(),
        "link.plan".to_owned(),
        "up/secret.plan".to_owned(),
    ]
}

#[test]
fn escape_imports_never_leave_the_project() {
    let root = temp_dir("hostile-escape");
    let outer = root.path().join("outer");
    let project = outer.join("work").join("project");
    std::fs::create_dir_all(project.join("sub")).expect("project");
    let paths = escapes(&outer, &project);
    let mut failures = Failures::new("escape");
    // The secret as a library that would import cleanly (its text reaches
    // the built plan if the import is let through), and as text that is
    // no plan (quoted by a syntax error if it is read).
    let library = format!(
        "role {0} \"{SECRET}\"\ntemplate leak() {{ task leaked \"{SECRET}\" {{ assignee {0} }} }}\n",
        "secret_role"
    );
    let not_plan = format!("{SECRET} {SECRET}\n{SECRET}\n");
    // Decoys in the project named like the files outside it: a path
    // whose `..` are dropped instead of refused reads them.
    for name in ["lib.plan", "secret.plan", "sub/lib.plan"] {
        std::fs::write(project.join(name), format!("{DECOY}\n")).expect("decoy");
    }
    let mut next = hostile::numbers(*seeds().start());
    for (round, secret) in [library, not_plan].iter().enumerate() {
        std::fs::write(outer.join("secret.plan"), secret).expect("write");
        std::fs::write(outer.join("lib.plan"), secret).expect("write");
        // Each path alone, then random groups of them.
        let mut groups: Vec<Vec<&str>> = paths.iter().map(|p| vec![p.as_str()]).collect();
        for _ in 0..cases() {
            let group = (0..1 + next(3))
                .map(|_| paths[next(paths.len())].as_str())
                .collect();
            groups.push(group);
        }
        for group in groups {
            let mut text = hostile::imports(&group);
            text = text.replace(
                "task a \"A\"",
                "task a \"A\"\n    use leak() as l { after a }",
            );
            let label = format!("round {round}: import {group:?}");
            std::fs::write(project.join("imports.plan"), &text).expect("write");
            failures.case = Some(project.join("imports.plan"));
            // The first failing run stands for the case.
            if !failures.run(&label, lib(&project, "plan:imports.plan", 0)) {
                continue;
            }
            for (args, stdout) in [
                (vec!["check", "imports.plan"], Stdout::Data),
                (vec!["build", "imports.plan"], Stdout::Data),
                (vec!["graph", "imports.plan"], Stdout::Data),
                (
                    vec!["check", "--format", "json", "imports.plan"],
                    Stdout::JsonArray,
                ),
            ] {
                let child = cli(&project, &args, 0, stdout, &[1]);
                if !failures.run(&format!("{label}: planc {}", args.join(" ")), child) {
                    break;
                }
            }
        }
    }
    failures.finish();
}

#[test]
fn outputs_one_unreadable_file_does_not_stop_the_others() {
    let dir = temp_dir("hostile-outputs");
    let dir = dir.path();
    let mut failures = Failures::new("outputs");
    std::fs::write(
        dir.join("good.plan"),
        "plan g { goal \"g\" task a \"A\" }\n",
    )
    .expect("write");
    std::fs::write(dir.join("bad.plan"), "plan b { goal \"g\" task a \"A }\n").expect("write");
    std::fs::create_dir(dir.join("dir.plan")).expect("dir");
    std::os::unix::fs::symlink(dir.join("gone.plan"), dir.join("dangling.plan")).expect("link");
    let mut unreadable = vec!["missing.plan", "dir.plan", "dangling.plan", "/dev/zero"];
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        std::fs::write(dir.join("locked.plan"), "plan l { goal \"g\" }\n").expect("write");
        let locked = dir.join("locked.plan");
        let mut permissions = std::fs::metadata(&locked).expect("meta").permissions();
        std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o000);
        std::fs::set_permissions(&locked, permissions).expect("chmod");
        unreadable.push("locked.plan");
    }
    for bad_file in unreadable {
        for format in ["human", "json", "github"] {
            let args = [
                "check",
                "--format",
                format,
                "good.plan",
                bad_file,
                "bad.plan",
            ];
            let label = format!("planc {}", args.join(" "));
            let stdout = if format == "json" {
                Stdout::JsonArray
            } else {
                Stdout::Human
            };
            // The run goes on past the unreadable file: bad.plan, after
            // it, is reported.
            let output = failures.output(&label, cli(dir, &args, 0, stdout, &[1, 2]));
            if output.is_some_and(|output| !output.contains("bad.plan")) {
                failures.found.push(format!(
                    "{label}: stopped at {bad_file}: bad.plan, after it, is not reported"
                ));
            }
        }
        let args = ["check", "--format", "json", bad_file];
        failures.run(
            &format!("planc {}", args.join(" ")),
            cli(dir, &args, 0, Stdout::JsonArray, &[1, 2]),
        );
        let args = ["fmt", "--check", "good.plan", bad_file, "bad.plan"];
        failures.run(
            &format!("planc {}", args.join(" ")),
            cli(dir, &args, 0, Stdout::Data, &[1, 2]),
        );
    }
    failures.finish();
}

#[test]
fn state_concurrent_writers_keep_state_and_log_whole() {
    let dir = temp_dir("hostile-concurrent");
    let dir = dir.path();
    let tasks = 24;
    let mut text = String::from("plan c {\n    goal \"g\"\n");
    for i in 0..tasks {
        text.push_str(&format!("    task t{i} \"T{i}\"\n"));
    }
    text.push_str("}\n");
    std::fs::write(dir.join("c.plan"), text).expect("write");
    support::Test::new(["run", "init", "c.plan", "-o", "s.json"])
        .current_dir(dir)
        .expect_code(0);
    // Four writers each start and complete tasks until none is left.
    let writers: Vec<_> = (0..4)
        .map(|_| {
            let dir = dir.to_owned();
            std::thread::spawn(move || {
                let mut completed = 0;
                for _ in 0..tasks {
                    let next = support::Test::new(["run", "--json", "next", "s.json"])
                        .current_dir(&dir)
                        .run();
                    let Ok(value) = serde_json::from_str::<serde_json::Value>(&next.stdout) else {
                        return Err(format!("next printed no JSON: {next:?}"));
                    };
                    let Some(id) = value["data"]["task"]["id"].as_u64() else {
                        break;
                    };
                    let id = id.to_string();
                    let done = support::Test::new(["run", "--json", "complete", "s.json", &id])
                        .current_dir(&dir)
                        .run();
                    if done.code != 0 {
                        return Err(format!("complete {id}: {done:?}"));
                    }
                    completed += 1;
                }
                Ok(completed)
            })
        })
        .collect();
    let mut completed = 0;
    for writer in writers {
        completed += writer.join().expect("writer").expect("writer's runs");
    }
    assert_eq!(completed, tasks, "every task completed exactly once");
    let status = support::Test::new(["run", "--json", "status", "s.json"])
        .current_dir(dir)
        .expect_code(0);
    let status: serde_json::Value = serde_json::from_str(&status.stdout).expect("JSON");
    assert_eq!(status["data"]["completed_tasks"], tasks, "{status}");
    // The log has every change once, in order: revisions 1, 2, 3… up to
    // the state's, and one completion per task.
    let log = support::Test::new(["run", "--json", "watch", "s.json", "--no-follow"])
        .current_dir(dir)
        .expect_code(0);
    let records: Vec<serde_json::Value> = log
        .stdout
        .lines()
        .map(|line| serde_json::from_str(line).expect("a log line is JSON"))
        .collect();
    let revisions: Vec<u64> = records
        .iter()
        .filter_map(|r| r["revision"].as_u64())
        .collect();
    let expected: Vec<u64> = (1..=revisions.len() as u64).collect();
    assert_eq!(revisions, expected, "log revisions");
    assert_eq!(
        status["data"]["revision"].as_u64(),
        revisions.last().copied()
    );
    let completions = records.iter().filter(|r| r["op"] == "completeTask").count();
    assert_eq!(completions, tasks, "log:\n{}", log.stdout);
}
