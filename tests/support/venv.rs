//! Python virtual environments for the tests that drive planc with a
//! project's own Python package (the SDKs, pre-commit).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// Runs `command`; its output when it fails.
fn run(command: &mut Command) -> Result<(), String> {
    let output = command
        .output()
        .map_err(|e| format!("cannot run {command:?}: {e}"))?;
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{command:?} failed ({}):\n{}\n{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// The directory of a virtual environment `target/tmp/NAME` with the
/// packages of `requirements` (a path in the repository): made on first use
/// (`python3 -m venv`, `pip install -r`) and reused while the requirements
/// file is unchanged. Panics, saying why, when it cannot be made.
pub fn venv(name: &str, requirements: &str) -> PathBuf {
    // Tests of one binary run in parallel; one of them makes the environment.
    static MAKING: Mutex<()> = Mutex::new(());
    let _guard = MAKING.lock().unwrap_or_else(|e| e.into_inner());
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let requirements = Path::new(env!("CARGO_MANIFEST_DIR")).join(requirements);
    let make = || -> Result<(), String> {
        let wanted = std::fs::read_to_string(&requirements)
            .map_err(|e| format!("{}: {e}", requirements.display()))?;
        let stamp = venv.join("planc-requirements.txt");
        if venv.join("bin/python").exists()
            && std::fs::read_to_string(&stamp).ok().as_deref() == Some(wanted.as_str())
        {
            return Ok(());
        }
        run(Command::new("python3")
            .args(["-m", "venv", "--clear"])
            .arg(&venv))?;
        run(Command::new(venv.join("bin/python"))
            .args([
                "-m",
                "pip",
                "install",
                "--quiet",
                "--disable-pip-version-check",
                "-r",
            ])
            .arg(&requirements))?;
        std::fs::write(&stamp, wanted).map_err(|e| e.to_string())
    };
    make().unwrap_or_else(|e| panic!("cannot make the Python environment {name}: {e}"));
    venv
}

/// Runs Python's `unittest` on `files` (paths in the repository) with
/// `python` and the variables `env`, from the repository's root; fails,
/// showing unittest's report and `context()`, unless every test passed and
/// exactly `count` ran. Gives the report (unittest writes it on standard
/// error).
pub fn unittest(
    python: &Path,
    files: &[&str],
    env: &[(&str, &str)],
    count: usize,
    context: impl Fn() -> String,
) -> String {
    let output = Command::new(python)
        .args(["-m", "unittest", "-v"])
        .args(files)
        .envs(env.iter().copied())
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("python runs");
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "the Python tests {files:?} failed:\n{}\n{stderr}{}",
        String::from_utf8_lossy(&output.stdout),
        context()
    );
    assert!(stderr.contains(&format!("Ran {count} tests")), "{stderr}");
    stderr
}
