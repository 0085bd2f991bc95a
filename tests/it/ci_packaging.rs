//! planc in other people's CI: the pre-commit hooks (.pre-commit-hooks.yaml)
//! run by pre-commit itself, the GitHub Action (action.yml) run step by step
//! as a runner runs a composite action, and the examples in docs/ci.md.
//!
//! pre-commit comes from a virtual environment under the target directory
//! (tests/ci_packaging/requirements.txt; its PyYAML reads the YAML files).
//! Both install planc's wheel with pip, as they would from a package index:
//! the wheel built for the tests and setuptools (tests/support/wheel.rs) are
//! all pip finds (`PIP_FIND_LINKS`, `PIP_NO_INDEX`), and no Rust is on the
//! PATH.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::support::wheel::{ci_packaging_venv, pip_env};
use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn python() -> PathBuf {
    ci_packaging_venv().join("bin/python")
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

/// The PATH of this process without its Rust: no directory holding `cargo`
/// or `rustc`, with `first` in front; asserts that neither they nor `planc`
/// are found on it.
fn path_without_rust(first: &[PathBuf]) -> PathBuf {
    let system = std::env::var_os("PATH").unwrap_or_default();
    let rustless = std::env::split_paths(&system)
        .filter(|dir| !dir.join("cargo").exists() && !dir.join("rustc").exists());
    let path = std::env::join_paths(first.iter().cloned().chain(rustless)).unwrap();
    // Nor a planc: the hooks and the action run the one pip installed.
    let found = Command::new("sh")
        .args([
            "-c",
            "command -v cargo || command -v rustc || command -v planc",
        ])
        .env("PATH", &path)
        .output()
        .unwrap();
    assert!(
        !found.status.success(),
        "Rust or planc is still on the PATH: {}",
        String::from_utf8_lossy(&found.stdout)
    );
    PathBuf::from(path)
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
        assert_eq!(
            hook["language"], "python",
            "pre-commit installs planc's wheel"
        );
        assert_eq!(hook["files"], "\\.plan$");
    }
    assert_eq!(manifest[0]["entry"], "planc check --root .");
    assert_eq!(manifest[1]["entry"], "planc fmt");

    // The validator can fail: a hook in an unknown language.
    let dir = tempfile::tempdir().unwrap();
    let broken = std::fs::read_to_string(root().join(".pre-commit-hooks.yaml"))
        .unwrap()
        .replace("language: python", "language: cobol");
    write(dir.path(), &[("hooks.yaml", &broken)]);
    let run = outcome(
        Command::new(&pre_commit)
            .args(["validate-manifest", "hooks.yaml"])
            .current_dir(dir.path()),
    );
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
}

/// Runs git in `dir` as the tests' committer; asserts it succeeds, and
/// gives its standard output.
fn git(dir: &Path, args: &[&str]) -> String {
    let run = outcome(
        Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "planc test")
            .env("GIT_AUTHOR_EMAIL", "test@planc.invalid")
            .env("GIT_COMMITTER_NAME", "planc test")
            .env("GIT_COMMITTER_EMAIL", "test@planc.invalid"),
    );
    assert_eq!(run.code, 0, "git {args:?}: {}", run.stderr);
    run.stdout
}

/// A git repository at `dir` holding this repository's hooks and the package
/// they install (.pre-commit-hooks.yaml, pyproject.toml, as on disk), as a
/// project's `.pre-commit-config.yaml` names planc's repository; its commit.
fn hooks_repository(dir: &Path) -> String {
    std::fs::create_dir_all(dir).unwrap();
    for file in [".pre-commit-hooks.yaml", "pyproject.toml"] {
        std::fs::copy(root().join(file), dir.join(file)).unwrap();
    }
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "hooks"]);
    git(dir, &["rev-parse", "HEAD"]).trim().to_owned()
}

/// `pre-commit run HOOK --files FILES` in `project`.
fn run_hook(project: &Path, env: &[(&str, PathBuf)], hook: &str, files: &[&str]) -> Outcome {
    let pre_commit = python().with_file_name("pre-commit");
    let mut command = Command::new(pre_commit);
    command
        .args(["run", hook, "--files"])
        .args(files)
        .current_dir(project)
        .env("NO_COLOR", "1");
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
    let hooks = work.path().join("hooks");
    let rev = hooks_repository(&hooks);
    let config = format!(
        "repos:\n  - repo: {}\n    rev: {rev}\n    hooks:\n      - id: planc-check\n      - id: planc-fmt\n",
        hooks.display()
    );
    write(&project, &[(".pre-commit-config.yaml", &config)]);
    git(&project, &["init", "-q"]);
    git(&project, &["add", "."]);

    // pre-commit's own environment, and pip's finding the wheel; no Rust.
    let [find_links, no_index] = pip_env();
    let env = [
        (
            "PATH",
            path_without_rust(&[python().parent().unwrap().to_owned()]),
        ),
        ("PRE_COMMIT_HOME", work.path().join("cache")),
        find_links,
        no_index,
    ];

    let good = run_hook(&project, &env, "planc-check", &["plans/good.plan"]);
    assert_eq!(good.code, 0, "{}{}", good.stdout, good.stderr);
    assert!(
        good.stdout.contains("planc check") && good.stdout.contains("Passed"),
        "{}",
        good.stdout
    );

    let broken = run_hook(
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
    let messy = run_hook(
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
    let again = run_hook(&project, &env, "planc-fmt", &["plans/messy.plan"]);
    assert_eq!(again.code, 0, "{}{}", again.stdout, again.stderr);

    // pre-commit made one environment for both hooks, where pip installed
    // planc's wheel: both executables.
    let envs: Vec<PathBuf> = std::fs::read_dir(work.path().join("cache"))
        .unwrap()
        .flatten()
        .filter_map(|repo| std::fs::read_dir(repo.path()).ok())
        .flatten()
        .flatten()
        .filter(|entry| entry.file_name().to_string_lossy().starts_with("py_env-"))
        .map(|entry| entry.path().join("bin"))
        .collect();
    assert_eq!(envs.len(), 1, "one hook environment: {envs:?}");
    assert!(envs[0].join("planc").is_file() && envs[0].join("planc-lsp").is_file());
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
/// composite action's bash steps, with pip finding planc's wheel
/// (`PIP_FIND_LINKS`, `PIP_NO_INDEX`) and no Rust on the PATH; what the last
/// step run did. `runner` is the runner's directory: its first run installs
/// planc, later runs in it (the same job) skip the steps before the last,
/// whose additions to `GITHUB_PATH` they keep.
fn run_action(action: &Value, runner: &Path, workspace: &Path, with: &[(&str, &str)]) -> Outcome {
    let runner_temp = runner.join("runner-temp");
    let github_path = runner.join("github-path");
    let installed = github_path.exists();
    if !installed {
        std::fs::create_dir_all(&runner_temp).unwrap();
        std::fs::write(&github_path, "").unwrap();
    }
    // The runner's Python (python3 with venv) and its system directories.
    let system = path_without_rust(&[]);
    let inputs = inputs(action, with);
    let mut last = None;
    let steps = action["runs"]["steps"].as_array().unwrap();
    let skipped = if installed { steps.len() - 1 } else { 0 };
    for step in &steps[skipped..] {
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
        path.extend(std::env::split_paths(&system));
        let mut command = Command::new("bash");
        command
            .args(["--noprofile", "--norc", "-eo", "pipefail", "-c", script])
            .current_dir(workspace)
            .env_clear()
            .env("PATH", std::env::join_paths(path).unwrap())
            .env("HOME", runner)
            .env("RUNNER_TEMP", &runner_temp)
            .env("GITHUB_PATH", &github_path)
            .env("GITHUB_WORKSPACE", workspace)
            .env("GITHUB_ACTION_PATH", root())
            .envs(pip_env());
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
    last.expect("the action has steps")
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
    // pip installs the wheel of the action's version into a virtual
    // environment of its own, whose bin/ the next step finds on the PATH.
    assert_eq!(steps[0]["env"]["PLANC_VERSION"], env!("CARGO_PKG_VERSION"));
    assert_eq!(
        steps[0]["run"],
        "python3 -m venv \"$RUNNER_TEMP/planc\"\n\
         \"$RUNNER_TEMP/planc/bin/python\" -m pip install --quiet --disable-pip-version-check \"planc==$PLANC_VERSION\"\n\
         echo \"$RUNNER_TEMP/planc/bin\" >> \"$GITHUB_PATH\"\n"
    );
    assert_eq!(steps[1]["env"]["PLANC_FILES"], "${{ inputs.files }}");
    assert_eq!(steps[1]["env"]["PLANC_ARGS"], "${{ inputs.args }}");
    assert!(steps[1]["run"]
        .as_str()
        .unwrap()
        .ends_with("\nplanc check --format github --root . \"${args[@]}\" \"${files[@]}\"\n"));

    let workspace = tempfile::tempdir().unwrap();
    let dir = workspace.path();
    let runner = tempfile::tempdir().unwrap();
    write(
        dir,
        &[("plans/good.plan", GOOD), ("plans/deep/er/also.plan", GOOD)],
    );

    // Every .plan file, at any depth, by default.
    let clean = run_action(&action, runner.path(), dir, &[]);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    // No annotation: only the version line.
    assert_eq!(clean.stdout, "planc 0.1.0\n");
    assert_eq!(clean.stderr, "");

    // A broken plan: an annotation on its line, and the job fails.
    write(dir, &[("plans/broken.plan", CYCLE)]);
    let broken = run_action(&action, runner.path(), dir, &[]);
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
    let warned = run_action(
        &action,
        runner.path(),
        dir,
        &[("files", "plans/good.plan plans/unused.plan")],
    );
    assert_eq!(warned.code, 0, "{}{}", warned.stdout, warned.stderr);
    assert!(
        warned.stdout.contains("::warning file=plans/unused.plan,"),
        "{}",
        warned.stdout
    );
    let denied = run_action(
        &action,
        runner.path(),
        dir,
        &[("files", "plans/unused.plan"), ("args", "--deny warnings")],
    );
    assert_eq!(denied.code, 1, "{}{}", denied.stdout, denied.stderr);

    let nothing = run_action(&action, runner.path(), dir, &[("files", "nowhere/*.plan")]);
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
