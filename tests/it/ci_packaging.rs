//! planc in other people's CI: the pre-commit hooks (.pre-commit-hooks.yaml)
//! run by pre-commit itself, the GitHub Action (action.yml) run step by step
//! as a runner runs a composite action, and the examples in docs/ci.md.
//!
//! pre-commit comes from a virtual environment under the target directory
//! (tests/ci_packaging/requirements.txt; its PyYAML reads the YAML files).
//! Installing planc is `cargo install`, a release build that takes minutes:
//! a stand-in `cargo` on the PATH checks that it is asked exactly what
//! pre-commit and action.yml ask, and installs the planc that `cargo test`
//! built. `PLANC_TEST_REAL_CARGO=1` lets pre-commit run the real
//! `cargo install` instead.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::venv::venv;
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> PathBuf {
    venv("ci-packaging-venv", "tests/ci_packaging/requirements.txt").join("bin/python")
}

/// Every document of a YAML text, as JSON (read by PyYAML's safe loader).
fn yaml(text: &str) -> Vec<Value> {
    let mut child = Command::new(python())
        .args([
            "-c",
            "import json, sys, yaml; json.dump(list(yaml.safe_load_all(sys.stdin)), sys.stdout)",
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python runs");
    std::io::Write::write_all(&mut child.stdin.take().unwrap(), text.as_bytes()).unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "not YAML:\n{text}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).unwrap()
}

fn yaml_file(path: &str) -> Value {
    let text = std::fs::read_to_string(root().join(path)).expect(path);
    yaml(&text).remove(0)
}

/// A directory holding a stand-in `cargo` (see the module comment); it logs
/// each `cargo install` to `log` as its arguments, then `path: planc` when
/// the `--path` it installs is a checkout of planc (`path: other` if not).
fn cargo_stand_in(dir: &Path, log: &Path) -> PathBuf {
    let bin = dir.join("stand-in");
    std::fs::create_dir_all(&bin).unwrap();
    let script = format!(
        r#"#!/bin/sh
set -eu
if [ "$*" = "--version" ]; then echo "cargo 1.88.0 (stand-in)"; exit 0; fi
if [ "$1" != install ]; then echo "cargo stand-in: unexpected: cargo $*" >&2; exit 1; fi
echo "$*" >> '{log}'
root=""; path=""; previous=""
for arg in "$@"; do
    if [ "$previous" = --root ]; then root="$arg"; fi
    if [ "$previous" = --path ]; then path="$arg"; fi
    previous="$arg"
done
if [ -f "$path/.pre-commit-hooks.yaml" ] && grep -q '^name = "planc"$' "$path/Cargo.toml"; then
    echo "path: planc" >> '{log}'
else
    echo "path: other" >> '{log}'
fi
mkdir -p "$root/bin"
cp '{planc}' "$root/bin/planc"
"#,
        log = log.display(),
        planc = env!("CARGO_BIN_EXE_planc"),
    );
    let cargo = bin.join("cargo");
    std::fs::write(&cargo, script).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&cargo, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    bin
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

fn outcome(command: &mut Command) -> Outcome {
    let output = command.output().expect("the command runs");
    Outcome {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

const GOOD: &str = "plan search {\n    goal \"Search for a keyboard\"\n    task open \"Open the site\"\n    task find \"Search\" { after open }\n}\n";
const CYCLE: &str = "plan search {\n    goal \"Search for a keyboard\"\n    task open \"Open the site\" { after buy }\n    task search \"Search\" { after open }\n    task buy \"Buy\" { after search }\n}\n";
const MESSY: &str =
    "plan search {\ngoal    \"Search for a keyboard\"\n  task open \"Open the site\"\n}\n";
const UNUSED: &str = "plan search {\n    goal \"Search for a keyboard\"\n    param site: string = \"jd.com\"\n    task open \"Open the site\"\n}\n";

fn write(dir: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = dir.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

#[test]
fn the_hooks_manifest_is_valid() {
    let pre_commit = python().with_file_name("pre-commit");
    let run = outcome(
        Command::new(&pre_commit)
            .args(["validate-manifest", ".pre-commit-hooks.yaml"])
            .current_dir(root()),
    );
    assert_eq!(run.code, 0, "{}{}", run.stdout, run.stderr);
    let manifest = yaml_file(".pre-commit-hooks.yaml");
    let ids: Vec<&str> = manifest
        .as_array()
        .unwrap()
        .iter()
        .map(|hook| hook["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["planc-check", "planc-fmt"]);
    for hook in manifest.as_array().unwrap() {
        assert_eq!(hook["language"], "rust", "pre-commit builds planc itself");
        assert_eq!(hook["files"], "\\.plan$");
    }
    assert_eq!(manifest[0]["entry"], "planc check --root .");
    assert_eq!(manifest[1]["entry"], "planc fmt");

    // The validator can fail: a hook in an unknown language.
    let dir = tempfile::tempdir().unwrap();
    let broken = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml"))
        .unwrap()
        .replace("language: rust", "language: cobol");
    write(dir.path(), &[("hooks.yaml", &broken)]);
    let run = outcome(
        Command::new(&pre_commit)
            .args(["validate-manifest", "hooks.yaml"])
            .current_dir(dir.path()),
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
}

/// `pre-commit try-repo` runs a hook of this repository (as it is on disk,
/// uncommitted changes included) in `project`.
fn try_hook(project: &Path, env: &[(&str, PathBuf)], hook: &str, files: &[&str]) -> Outcome {
    let pre_commit = python().with_file_name("pre-commit");
    let mut command = Command::new(pre_commit);
    command
        .arg("try-repo")
        .arg(root())
        .arg(hook)
        .arg("--files")
        .args(files)
        .current_dir(project)
        .env("NO_COLOR", "1")
        .env("GIT_AUTHOR_NAME", "planc test")
        .env("GIT_AUTHOR_EMAIL", "test@planc.invalid")
        .env("GIT_COMMITTER_NAME", "planc test")
        .env("GIT_COMMITTER_EMAIL", "test@planc.invalid");
    for (name, value) in env {
        command.env(name, value);
    }
    outcome(&mut command)
}

#[test]
fn pre_commit_runs_the_hooks_on_good_and_broken_plans() {
    let work = tempfile::tempdir().unwrap();
    let project = work.path().join("project");
    write(
        &project,
        &[
            ("plans/good.plan", GOOD),
            ("plans/broken.plan", CYCLE),
            ("plans/messy.plan", MESSY),
        ],
    );
    let git = |args: &[&str]| {
        let run = outcome(Command::new("git").args(args).current_dir(&project));
        assert_eq!(run.code, 0, "git {args:?}: {}", run.stderr);
    };
    git(&["init", "-q"]);
    git(&["add", "."]);

    let log = work.path().join("cargo.log");
    let real_cargo = std::env::var_os("PLANC_TEST_REAL_CARGO").is_some_and(|v| v == "1");
    let mut path = vec![python().parent().unwrap().to_owned()];
    if !real_cargo {
        path.insert(0, cargo_stand_in(work.path(), &log));
    }
    path.extend(std::env::split_paths(
        &std::env::var_os("PATH").unwrap_or_default(),
    ));
    let env = [
        ("PATH", PathBuf::from(std::env::join_paths(path).unwrap())),
        ("PRE_COMMIT_HOME", work.path().join("cache")),
    ];

    let good = try_hook(&project, &env, "planc-check", &["plans/good.plan"]);
    assert_eq!(good.code, 0, "{}{}", good.stdout, good.stderr);
    assert!(
        good.stdout.contains("planc check") && good.stdout.contains("Passed"),
        "{}",
        good.stdout
    );

    let broken = try_hook(
        &project,
        &env,
        "planc-check",
        &["plans/good.plan", "plans/broken.plan"],
    );
    assert_eq!(broken.code, 1, "{}{}", broken.stdout, broken.stderr);
    assert!(broken.stdout.contains("Failed"), "{}", broken.stdout);
    assert!(
        broken.stdout.contains("planc::cycle") && broken.stdout.contains("plans/broken.plan"),
        "the hook shows planc's diagnostic:\n{}",
        broken.stdout
    );
    assert!(
        broken.stdout.contains("plans/good.plan: ok"),
        "{}",
        broken.stdout
    );

    // The formatter rewrites the file, which pre-commit reports as a failure;
    // run again, it passes.
    let messy = try_hook(
        &project,
        &env,
        "planc-fmt",
        &["plans/messy.plan", "plans/good.plan"],
    );
    assert_eq!(messy.code, 1, "{}{}", messy.stdout, messy.stderr);
    assert!(
        messy.stdout.contains("files were modified by this hook"),
        "{}",
        messy.stdout
    );
    let formatted = std::fs::read_to_string(project.join("plans/messy.plan")).unwrap();
    assert_eq!(
        formatted,
        "plan search {\n    goal \"Search for a keyboard\"\n    task open \"Open the site\"\n}\n"
    );
    assert_eq!(
        std::fs::read_to_string(project.join("plans/good.plan")).unwrap(),
        GOOD
    );
    let again = try_hook(&project, &env, "planc-fmt", &["plans/messy.plan"]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);

    if !real_cargo {
        // pre-commit installed planc the way a `language: rust` hook is
        // installed: `cargo install` of this repository's root package.
        let log = std::fs::read_to_string(&log).unwrap();
        let mut lines = log.lines();
        let mut installs = 0;
        while let (Some(args), Some(path)) = (lines.next(), lines.next()) {
            installs += 1;
            let words: Vec<&str> = args.split(' ').collect();
            assert_eq!(words.len(), 6, "{args}");
            assert_eq!(
                [words[0], words[1], words[2], words[4], words[5]],
                ["install", "--bins", "--root", "--path", "."],
                "{args}"
            );
            assert_eq!(path, "path: planc", "pre-commit's checkout of planc");
        }
        assert!(installs >= 1, "{log}");
    }
}

/// What the action's inputs are when a workflow gives `with`.
fn inputs(action: &Value, with: &[(&str, &str)]) -> Vec<(String, String)> {
    action["inputs"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(name, input)| {
            let given = with.iter().find(|(n, _)| n == name).map(|(_, v)| *v);
            let value = given.or(input["default"].as_str()).unwrap_or("");
            (name.clone(), value.to_owned())
        })
        .collect()
}

/// An expression of the action's `env`, evaluated as the runner would.
fn evaluate(value: &str, inputs: &[(String, String)]) -> String {
    let expression = value
        .strip_prefix("${{")
        .and_then(|v| v.strip_suffix("}}"))
        .map(str::trim);
    match expression {
        None => {
            assert!(!value.contains("${{"), "an expression inside text: {value}");
            value.to_owned()
        }
        Some("github.action_path") => root().display().to_string(),
        Some(e) => match e.strip_prefix("inputs.") {
            Some(name) => inputs
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("no input {name}"))
                .1
                .clone(),
            None => panic!("the test does not know the expression {e}"),
        },
    }
}

/// Runs action.yml's steps in `workspace` as a GitHub runner runs a
/// composite action's bash steps; what the last step run did, and the
/// stand-in cargo's log.
fn run_action(action: &Value, workspace: &Path, with: &[(&str, &str)]) -> (Outcome, String) {
    let work = tempfile::tempdir().unwrap();
    let runner_temp = work.path().join("runner-temp");
    std::fs::create_dir_all(&runner_temp).unwrap();
    let github_path = work.path().join("github-path");
    std::fs::write(&github_path, "").unwrap();
    let log = work.path().join("cargo.log");
    let stand_in = cargo_stand_in(work.path(), &log);
    let inputs = inputs(action, with);
    let mut last = None;
    for step in action["runs"]["steps"].as_array().unwrap() {
        assert_eq!(step["shell"], "bash");
        let script = step["run"].as_str().unwrap();
        assert!(
            !script.contains("${{"),
            "inputs reach a script through env only"
        );
        // Each step sees what earlier steps added to GITHUB_PATH, first; then
        // the system's directories, and no planc of the machine's.
        let mut path: Vec<PathBuf> = std::fs::read_to_string(&github_path)
            .unwrap()
            .lines()
            .rev()
            .map(PathBuf::from)
            .collect();
        path.extend([stand_in.clone(), "/usr/bin".into(), "/bin".into()]);
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(workspace)
            .env_clear()
            .env("PATH", std::env::join_paths(path).unwrap())
            .env("HOME", work.path())
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_PATH", &github_path)
            .env("GITHUB_WORKSPACE", workspace)
            .env("GITHUB_ACTION_PATH", root());
        for (name, value) in step["env"].as_object().into_iter().flatten() {
            command.env(name, evaluate(value.as_str().unwrap(), &inputs));
        }
        let run = outcome(&mut command);
        let failed = run.code != 0;
        last = Some(run);
        if failed {
            break;
        }
    }
    let log = std::fs::read_to_string(&log).unwrap_or_default();
    let log = log.replace(&runner_temp.display().to_string(), "$RUNNER_TEMP");
    (last.expect("the action has steps"), log)
}

#[test]
fn action_yml_installs_planc_and_annotates_the_files() {
    let action = yaml_file("action.yml");
    assert_eq!(action["runs"]["using"], "composite");
    let names: BTreeSet<&str> = action["inputs"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, BTreeSet::from(["files", "args"]));
    assert_eq!(action["inputs"]["files"]["default"], "**/*.plan");
    assert_eq!(action["inputs"]["args"]["default"], "");
    let steps = action["runs"]["steps"].as_array().unwrap();
    assert_eq!(steps.len(), 2);
    assert_eq!(steps[0]["env"]["PLANC_SOURCE"], "${{ github.action_path }}");
    assert!(steps[0]["run"].as_str().unwrap().contains(
        "cargo install --locked --path \"$PLANC_SOURCE\" --root \"$RUNNER_TEMP/planc\"\n"
    ));
    assert_eq!(steps[1]["env"]["PLANC_FILES"], "${{ inputs.files }}");
    assert_eq!(steps[1]["env"]["PLANC_ARGS"], "${{ inputs.args }}");
    assert!(steps[1]["run"]
        .as_str()
        .unwrap()
        .ends_with("\nplanc check --format github --root . \"${args[@]}\" \"${files[@]}\"\n"));

    let workspace = tempfile::tempdir().unwrap();
    let dir = workspace.path();
    write(
        dir,
        &[("plans/good.plan", GOOD), ("plans/deep/er/also.plan", GOOD)],
    );

    // Every .plan file, at any depth, by default.
    let (clean, log) = run_action(&action, dir, &[]);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    assert_eq!(
        log,
        format!(
            "install --locked --path {} --root $RUNNER_TEMP/planc\npath: planc\n",
            root().display()
        )
    );
    // No annotation: only the version line.
    assert_eq!(clean.stdout, "planc 0.1.0\n");
    assert_eq!(clean.stderr, "");

    // A broken plan: an annotation on its line, and the job fails.
    write(dir, &[("plans/broken.plan", CYCLE)]);
    let (broken, _) = run_action(&action, dir, &[]);
    assert_eq!(broken.code, 1, "{}{}", broken.stdout, broken.stderr);
    assert!(
        broken.stdout.contains(
            "\n::error file=plans/broken.plan,line=4,col=34,endLine=4,endColumn=38,title=planc%3A%3Acycle::dependency cycle: "
        ),
        "{}",
        broken.stdout
    );

    // `files` picks the files; `args` passes options on.
    write(dir, &[("plans/unused.plan", UNUSED)]);
    let (warned, _) = run_action(
        &action,
        dir,
        &[("files", "plans/good.plan plans/unused.plan")],
    );
    assert_eq!(warned.code, 0, "{}{}", warned.stdout, warned.stderr);
    assert!(
        warned.stdout.contains("::warning file=plans/unused.plan,"),
        "{}",
        warned.stdout
    );
    let (denied, _) = run_action(
        &action,
        dir,
        &[("files", "plans/unused.plan"), ("args", "--deny warnings")],
    );
    assert_eq!(denied.code, 1, "{}{}", denied.stdout, denied.stderr);

    let (nothing, _) = run_action(&action, dir, &[("files", "nowhere/*.plan")]);
    assert_eq!(nothing.code, 1);
    assert_eq!(
        nothing.stdout,
        "::error title=planc::no file matches the files input\nfiles: nowhere/*.plan\n"
    );
}

/// The YAML blocks of docs/ci.md parse, and use the hooks and inputs that exist.
#[test]
fn the_ci_docs_examples_match_the_hooks_and_the_action() {
    let docs = std::fs::read_to_string(root().join("docs/ci.md")).unwrap();
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in docs.lines() {
        match (&mut current, line.trim_end()) {
            (None, "```yaml") => current = Some(String::new()),
            (Some(block), "```") => {
                blocks.push(std::mem::take(block));
                current = None;
            }
            (Some(block), line) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, _) => {}
        }
    }
    let manifest = yaml_file(".pre-commit-hooks.yaml");
    let hook_ids: BTreeSet<&str> = manifest
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["id"].as_str().unwrap())
        .collect();
    let action = yaml_file("action.yml");
    let (mut pre_commit, mut github, mut gitlab) = (0, 0, 0);
    for block in &blocks {
        let document = yaml(block).remove(0);
        if let Some(repos) = document.get("repos") {
            pre_commit += 1;
            for hook in repos[0]["hooks"].as_array().unwrap() {
                let id = hook["id"].as_str().unwrap();
                assert!(hook_ids.contains(id), "docs/ci.md: no hook {id}");
            }
        } else if let Some(jobs) = document.get("jobs") {
            for job in jobs.as_object().unwrap().values() {
                for step in job["steps"].as_array().unwrap() {
                    let uses = step["uses"].as_str().unwrap_or("");
                    if !uses.contains("/planc@") {
                        continue;
                    }
                    github += 1;
                    for name in step["with"].as_object().into_iter().flatten().map(|w| w.0) {
                        assert!(
                            action["inputs"].get(name).is_some(),
                            "docs/ci.md: the action has no input {name}"
                        );
                    }
                }
            }
        } else if block.contains("planc check") {
            gitlab += 1;
        }
    }
    assert!(
        pre_commit >= 1 && github >= 1 && gitlab >= 1,
        "docs/ci.md shows pre-commit ({pre_commit}), GitHub ({github}) and GitLab ({gitlab})"
    );
}
