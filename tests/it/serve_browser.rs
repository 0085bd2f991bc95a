//! The web view of `planc serve` in a real headless browser (Debian's
//! `chromium`, driven by the `playwright-core` npm package of
//! tests/browser/): tests/browser/view.mjs opens `/`, drives a plan through
//! the JSON API and waits for the page to show each change; plan text with
//! markup must show as text and never run. Then the filter, a task's
//! detail, a 100,000-task plan created in this server (time to the first
//! row, printed; the page reads pages, never the whole document), a burst
//! of changes while a plan is open, and
//! screenshots at 1280 and 1600 px compared with
//! tests/browser/screenshots/*.png (`PLANC_UPDATE_SCREENSHOTS=1` writes them
//! again).
//!
//! Skipped, saying so, where chromium or npm is missing — except with
//! `CI=true`, where it fails instead (.ci/run installs both).
//! `PLANC_CHROMIUM=/path` picks another Chromium.

#![cfg(unix)]

use std::path::PathBuf;
use std::process::Command;

use crate::serve_support::{repo, skip, store_url, Server};

fn chromium() -> Option<PathBuf> {
    let candidates = std::env::var_os("PLANC_CHROMIUM")
        .map(PathBuf::from)
        .into_iter()
        .chain(["/usr/bin/chromium", "/usr/bin/chromium-browser"].map(PathBuf::from));
    candidates.into_iter().find(|p| p.is_file())
}

#[test]
fn the_web_view_follows_a_plan_live_in_headless_chromium() {
    let Some(chromium) = chromium() else {
        skip("chromium (apt-get install chromium)");
        return;
    };
    let dir = repo("tests/browser");
    // `npm ci` again when a package of package.json is missing (a
    // node_modules installed before a package was added).
    let packages = ["playwright-core", "pixelmatch", "pngjs"];
    if packages
        .iter()
        .any(|package| !dir.join("node_modules").join(package).is_dir())
    {
        let installed = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status();
        if !installed.is_ok_and(|s| s.success()) {
            skip("the npm packages of tests/browser (npm ci there)");
            return;
        }
    }
    let store = tempfile::tempdir().expect("a temporary directory");
    // The 100,000-task plan is a 10 MB document.
    let server = Server::start(&[
        "--store",
        &store_url(store.path()),
        "--max-body",
        "33554432",
    ]);
    let output = Command::new("node")
        .arg("view.mjs")
        .arg(format!("http://{}", server.addr))
        .arg(&chromium)
        .current_dir(&dir)
        .output()
        .expect("node runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        output.status.success(),
        "the browser test failed:\n{stdout}\n{stderr}\nserver:\n{}",
        server.stderr.lock().unwrap()
    );
    assert!(
        stdout.starts_with("ok: history on open (started, retried with its error), then live")
            && stdout.contains("filter by text, status and holder; task 1's detail")
            && stdout.contains("the last task at the end")
            && stdout.contains("screenshots 1280 px"),
        "{stdout}"
    );
    // The benchmark figure of docs/performance.md.
    println!("{}", stdout.trim());
}
