//! planc's Python wheel (lsp/pyproject.toml, maturin): pip installs it into a
//! fresh virtual environment, from a directory and no package index, and
//! both its executables run from there; the versions that pin it (the hook
//! package, the Action) are planc's.

use std::path::Path;
use std::process::Command;

use crate::support::wheel::pip_env;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// `version = "…"` of a TOML file's first table that has one.
fn version_in(path: &str) -> String {
    let text = std::fs::read_to_string(root().join(path)).unwrap();
    let line = text
        .lines()
        .find(|line| line.starts_with("version = \""))
        .unwrap_or_else(|| panic!("{path} has no version"));
    line.trim_start_matches("version = \"")
        .trim_end_matches('"')
        .to_owned()
}

#[test]
fn the_wheel_the_hooks_and_the_action_have_plancs_version() {
    let planc = version_in("Cargo.toml");
    assert_eq!(planc, env!("CARGO_PKG_VERSION"));
    // The wheel takes its version from the crate it is built from.
    assert_eq!(version_in("lsp/Cargo.toml"), planc, "lsp/Cargo.toml");
    assert_eq!(version_in("pyproject.toml"), planc, "pyproject.toml");
    let hooks = std::fs::read_to_string(root().join("pyproject.toml")).unwrap();
    assert!(
        hooks.contains(&format!("dependencies = [\"planc=={planc}\"]\n")),
        "the hook package pins planc {planc}:\n{hooks}"
    );
    let action = std::fs::read_to_string(root().join("action.yml")).unwrap();
    assert!(
        action.contains(&format!("        PLANC_VERSION: '{planc}'\n")),
        "action.yml installs planc {planc}"
    );
}

fn run(command: &mut Command) -> (i32, String, String) {
    let output = command.output().expect("the command runs");
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

const GOOD: &str = "plan search {\n    goal \"Search for a keyboard\"\n    task open \"Open the site\"\n    task find \"Search\" { after open }\n}\n";
const CYCLE: &str = "plan search {\n    goal \"Search for a keyboard\"\n    task open \"Open the site\" { after buy }\n    task buy \"Buy\" { after open }\n}\n";

#[test]
fn pip_installs_the_wheel_and_both_executables_run() {
    let work = tempfile::tempdir().unwrap();
    let venv = work.path().join("venv");
    let (code, _, err) = run(Command::new("python3").args(["-m", "venv"]).arg(&venv));
    assert_eq!(code, 0, "{err}");
    let bin = venv.join("bin");
    let (code, out, err) = run(Command::new(bin.join("python"))
        .args([
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "planc",
        ])
        .envs(pip_env()));
    assert_eq!(code, 0, "pip install planc:\n{out}\n{err}");
    let version = env!("CARGO_PKG_VERSION");
    assert!(
        out.contains(&format!("Successfully installed planc-{version}")),
        "{out}"
    );
    // The files the wheel put into the environment: both executables.
    let (_, shown, _) =
        run(Command::new(bin.join("python")).args(["-m", "pip", "show", "--files", "planc"]));
    assert!(shown.contains("../../../bin/planc\n"), "{shown}");
    assert!(shown.contains("../../../bin/planc-lsp\n"), "{shown}");

    let planc = bin.join("planc");
    let (code, out, _) = run(Command::new(&planc).arg("--version"));
    assert_eq!(
        (code, out.as_str()),
        (0, format!("planc {version}\n").as_str())
    );
    let (code, out, _) = run(Command::new(bin.join("planc-lsp")).arg("--version"));
    assert_eq!(
        (code, out.as_str()),
        (0, format!("planc-lsp {version}\n").as_str())
    );
    // `planc lsp` finds the server beside itself, with no PATH.
    let (code, out, err) = run(Command::new(&planc).args(["lsp", "--version"]).env_clear());
    assert_eq!(code, 0, "{err}");
    assert_eq!(out, format!("planc-lsp {version}\n"));

    // The command line with every layer: check, and the runner.
    std::fs::write(work.path().join("good.plan"), GOOD).unwrap();
    std::fs::write(work.path().join("cycle.plan"), CYCLE).unwrap();
    // check's report is its output (standard output).
    let (code, out, _) = run(Command::new(&planc)
        .args(["check", "good.plan"])
        .current_dir(work.path()));
    assert_eq!((code, out.as_str()), (0, "good.plan: ok, 2 tasks\n"));
    let (code, out, _) = run(Command::new(&planc)
        .args(["check", "--format", "json", "cycle.plan"])
        .current_dir(work.path()));
    assert_eq!(code, 1);
    assert!(out.contains("\"code\": \"planc::cycle\""), "{out}");
    let (code, out, err) = run(Command::new(&planc)
        .args(["run", "init", "good.plan", "-o", "state.json"])
        .current_dir(work.path()));
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = run(Command::new(&planc)
        .args(["run", "--json", "next", "state.json"])
        .current_dir(work.path()));
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("\"success\": true"), "{out}");
}
