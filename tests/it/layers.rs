//! The layers of docs/architecture.md, held to the code: no module of the
//! library names a module of a higher layer, and the language server's
//! dependency tree holds no database, HTTP, MCP or command-line crate.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The library's top-level modules, lowest layer first; a module may name
/// its own layer and the layers below it. `generate` (tests and benchmarks
/// only) and the command line (`src/cli`, the binary) stand on top.
const LAYERS: &[&[&str]] = &[
    &["cores", "span", "line_index", "escape", "suggest"],
    &["diagnostic"],
    &["syntax", "render"],
    &["read", "ir", "fmt"],
    &["modules"],
    &["check"],
    &["document"],
    &["emit", "diagram"],
    &["compile"],
    &["ide"],
    &["runner"],
    &["mcp"],
    &["serve"],
    &["generate", "cli"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|layer| layer.contains(&module))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`src/check/graph.rs` →
/// `check`); none for `lib.rs` and `main.rs`.
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    let module = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(module, "lib" | "main")).then(|| module.to_owned())
}

/// The top-level modules a file's code names as `crate::NAME` (or
/// `planc::NAME` in the command line), leaving out comments and the unit
/// tests (a `tests.rs` file, or what follows `#[cfg(test)]`).
fn named_modules(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for line in text.lines() {
        let code = line.trim_start();
        if code.starts_with("#[cfg(test)]") {
            break;
        }
        if code.starts_with("//") {
            continue;
        }
        for prefix in ["crate::", "planc::"] {
            for (at, _) in code.match_indices(prefix) {
                let before = code[..at].chars().next_back();
                if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    continue;
                }
                let rest = &code[at + prefix.len()..];
                let name: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                names.insert(name);
            }
        }
    }
    names
}

#[test]
fn no_module_of_the_library_names_a_higher_layer() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files.sort();
    let mut unplaced = BTreeSet::new();
    let mut upward = Vec::new();
    for file in &files {
        if file.file_name().is_some_and(|n| n == "tests.rs")
            || file.components().any(|c| c.as_os_str() == "tests")
        {
            continue;
        }
        let Some(module) = module_of(&src, file) else {
            continue;
        };
        let Some(own) = layer_of(&module) else {
            unplaced.insert(module);
            continue;
        };
        let text = std::fs::read_to_string(file).unwrap();
        for name in named_modules(&text) {
            match layer_of(&name) {
                Some(layer) if layer > own => upward.push(format!(
                    "{} (layer {own}, `{module}`) names `{name}` (layer {layer})",
                    file.strip_prefix(&src).unwrap().display()
                )),
                // Not a module: a function or type of the crate's root (`crate::compile`).
                _ => {}
            }
        }
    }
    assert!(
        unplaced.is_empty(),
        "modules that LAYERS (tests/it/layers.rs) and docs/architecture.md do not place: {unplaced:?}"
    );
    assert!(
        upward.is_empty(),
        "imports that run back up a layer:\n{}",
        upward.join("\n")
    );
}

/// The crates of `cargo tree` for `package`'s normal dependencies.
fn dependency_tree(package: &str) -> BTreeSet<String> {
    dependency_tree_with(package, &[])
}

/// [`dependency_tree`] with more arguments (`--features …`).
fn dependency_tree_with(package: &str, more: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--locked",
            "--offline",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["-p", package])
        .args(more)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_owned)
        .collect()
}

#[test]
fn the_language_server_builds_on_the_compiler_core_alone() {
    let lsp = dependency_tree("planc-lsp");
    let core = dependency_tree("planc");
    for heavy in ["rusqlite", "postgres", "axum", "hyper", "rmcp", "clap"] {
        assert!(
            !lsp.contains(heavy),
            "planc-lsp depends on {heavy}: {lsp:?}"
        );
        // The same list names crates planc itself does use: the check
        // above would pass vacuously if a crate were renamed.
        assert!(core.contains(heavy), "planc no longer depends on {heavy}");
    }
    assert!(lsp.contains("planc") && lsp.contains("tower-lsp-server"));
    // The one door: the feature `wheel` (the Python wheel's `planc` binary,
    // lsp/Cargo.toml) brings the command line and every layer with it.
    let wheel = dependency_tree_with("planc-lsp", &["--features", "wheel"]);
    for heavy in ["rusqlite", "postgres", "axum", "rmcp", "clap"] {
        assert!(wheel.contains(heavy), "the wheel's planc needs {heavy}");
    }
}
