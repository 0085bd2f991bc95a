//! planc's Python wheel (lsp/pyproject.toml), built with maturin for the
//! tests that install it with pip (tests/it/wheel.rs, tests/it/ci_packaging.rs),
//! and the directory pip finds it in, with no package index.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

use super::venv::venv;

/// The build backend of the hook package (pyproject.toml at the root), which
/// pip needs to install it; fetched into the wheel directory.
pub const SETUPTOOLS: &str = "setuptools==80.9.0";

/// The virtual environment with pre-commit and maturin
/// (tests/ci_packaging/requirements.txt).
pub fn ci_packaging_venv() -> PathBuf {
    venv("ci-packaging-venv", "tests/ci_packaging/requirements.txt")
}

/// The directory `target/tmp/wheels`: planc's wheel, built by
/// `maturin build --profile dev --features wheel-test` in a target directory
/// of its own (`target/tmp/wheel-target`, so that it never replaces the
/// `target/debug/planc` the tests run, nor waits for the lock `cargo test`
/// holds on `target/`), seeded with hard links to what the tests' build
/// compiled: `wheel-test` turns on the features the tests' dependencies turn
/// on, so cargo finds every crate below planc-lsp up to date and compiles
/// only planc-lsp and its `planc` (about 20 s, not minutes). Beside it the
/// setuptools wheel. Pip given `--find-links` this directory and
/// `--no-index` installs planc as it would from a package index. Panics,
/// saying why, when it cannot.
pub fn wheels() -> PathBuf {
    static BUILDING: Mutex<Option<PathBuf>> = Mutex::new(None);
    let mut built = BUILDING.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(dir) = built.as_ref() {
        return dir.clone();
    }
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let dir = tmp.join("wheels");
    let bin = ci_packaging_venv().join("bin");
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR")).join("lsp/Cargo.toml");
    let wheel_target = tmp.join("wheel-target");
    seed(&tmp.join("../debug"), &wheel_target.join("debug"));
    run(Command::new(bin.join("maturin"))
        .args(["build", "--profile", "dev", "--locked", "--quiet"])
        .args(["--features", "wheel-test", "-m"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&wheel_target)
        .arg("--out")
        .arg(&dir));
    if !has_wheel(&dir, "setuptools-") {
        run(Command::new(bin.join("python"))
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--dest"])
            .arg(&dir)
            .arg(SETUPTOOLS));
    }
    assert!(
        has_wheel(&dir, "planc-"),
        "no planc wheel in {}",
        dir.display()
    );
    *built = Some(dir.clone());
    dir
}

/// Hard links in `to` to the compiled crates, build scripts' outputs and
/// fingerprints of the tests' build in `from` (replacing older ones: a
/// crate compiled again by the tests' build is taken as they left it).
fn seed(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{}: {e}", to.display()));
    for part in ["deps", "build", ".fingerprint"] {
        if from.join(part).is_dir() {
            run(Command::new("cp")
                .args(["-R", "--link", "--force"])
                .arg(from.join(part))
                .arg(to));
        }
    }
}

fn has_wheel(dir: &Path, prefix: &str) -> bool {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .any(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            name.starts_with(prefix) && name.ends_with(".whl")
        })
}

fn run(command: &mut Command) {
    let output = command
        .output()
        .unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"));
    assert!(
        output.status.success(),
        "{command:?} failed ({}):\n{}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The variables that make pip install from [`wheels`] alone.
pub fn pip_env() -> [(&'static str, PathBuf); 2] {
    [
        ("PIP_FIND_LINKS", wheels()),
        ("PIP_NO_INDEX", PathBuf::from("1")),
    ]
}
