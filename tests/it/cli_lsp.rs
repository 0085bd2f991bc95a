//! `planc lsp` starts the `planc-lsp` binary found next to planc, passing its
//! arguments on, and says clearly when there is none.

#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

/// A fresh directory holding a copy of the planc binary.
fn planc_alone(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("planc-cli-lsp-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    std::fs::copy(env!("CARGO_BIN_EXE_planc"), dir.join("planc")).expect("planc copies");
    dir
}

// One test, not two: a test thread copying an executable while another
// spawns one can make the exec fail with "text file busy".
#[test]
fn runs_the_server_next_to_planc_or_says_it_is_missing() {
    says_so_when_the_server_is_missing();
    runs_the_server_next_to_planc_with_its_arguments();
}

fn runs_the_server_next_to_planc_with_its_arguments() {
    let dir = planc_alone("found");
    let server = dir.join("planc-lsp");
    std::fs::write(
        &server,
        "#!/bin/sh\necho \"planc-lsp started with: $*\"\nexit 7\n",
    )
    .expect("a fake server");
    std::fs::set_permissions(&server, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let output = Command::new(dir.join("planc"))
        .args(["lsp", "--stdio"])
        .env("PATH", "")
        .output()
        .expect("planc runs");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        "planc-lsp started with: --stdio\n"
    );
    assert_eq!(output.status.code(), Some(7));
    let _ = std::fs::remove_dir_all(dir);
}

fn says_so_when_the_server_is_missing() {
    let dir = planc_alone("missing");
    let output = Command::new(dir.join("planc"))
        .arg("lsp")
        .env("PATH", "")
        .output()
        .expect("planc runs");
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&output.stderr),
        "error: cannot find the `planc-lsp` language server next to planc or on PATH; install it with `pip install planc` (both executables) or `cargo install --path lsp` from planc's sources\n"
    );
    let _ = std::fs::remove_dir_all(dir);
}
