//! The docs that describe the code are checked against it, so they stay true:
//! docs/architecture.md's module table names every module of the library (each
//! file and directory under `src/`) and nothing else, and every file it names
//! exists.

use std::collections::BTreeSet;
use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The modules `src/lib.rs` declares (`pub mod x;`, `mod x;`).
fn declared_modules() -> BTreeSet<String> {
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).expect("src/lib.rs");
    lib.lines()
        .filter_map(|line| {
            let line = line.trim();
            let rest = line
                .strip_prefix("pub mod ")
                .or_else(|| line.strip_prefix("pub(crate) mod "))
                .or_else(|| line.strip_prefix("mod "))?;
            Some(rest.strip_suffix(';')?.trim().to_owned())
        })
        .collect()
}

/// The names in the first column of the table under "## Modules of the library":
/// each row names one or more modules in backticks (`span`, `line_index`), or a
/// submodule (`syntax::ast`).
fn documented_modules() -> Vec<String> {
    let doc =
        std::fs::read_to_string(root().join("docs/architecture.md")).expect("architecture.md");
    let section = doc
        .split("## Modules of the library")
        .nth(1)
        .expect("docs/architecture.md has a section \"Modules of the library\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    let mut names = Vec::new();
    for row in section.lines().filter(|l| l.starts_with("| `")) {
        let first = row.split('|').nth(1).unwrap_or("");
        names.extend(first.split('`').skip(1).step_by(2).map(str::to_owned));
    }
    names
}

/// Whether `a::b` is a module file in `src/` (`src/a/b.rs` or `src/a/b/mod.rs`).
fn module_exists(path: &str) -> bool {
    let relative = path.replace("::", "/");
    let src = root().join("src");
    src.join(format!("{relative}.rs")).is_file() || src.join(&relative).join("mod.rs").is_file()
}

#[test]
fn the_architecture_module_table_names_every_module_of_the_library() {
    let documented = documented_modules();
    assert!(!documented.is_empty(), "the module table was not found");
    let top: BTreeSet<String> = documented
        .iter()
        .map(|name| name.split("::").next().unwrap_or(name).to_owned())
        .collect();
    let declared = declared_modules();
    let missing: Vec<_> = declared.difference(&top).collect();
    assert!(
        missing.is_empty(),
        "modules of src/lib.rs missing from docs/architecture.md's table: {missing:?}"
    );
    let unknown: Vec<_> = documented
        .iter()
        .filter(|name| !module_exists(name))
        .collect();
    assert!(
        unknown.is_empty(),
        "docs/architecture.md's table names modules that are not in src/: {unknown:?}"
    );
    let undeclared: Vec<_> = top.difference(&declared).collect();
    assert!(
        undeclared.is_empty(),
        "docs/architecture.md's table names modules src/lib.rs does not declare: {undeclared:?}"
    );
}

/// The rows of the module table: the names in the first column, and the
/// second column's text.
fn table_rows() -> Vec<(Vec<String>, String)> {
    let doc =
        std::fs::read_to_string(root().join("docs/architecture.md")).expect("architecture.md");
    let section = doc
        .split("## Modules of the library")
        .nth(1)
        .expect("docs/architecture.md has a section \"Modules of the library\"");
    let section = section.split("\n## ").next().unwrap_or(section);
    section
        .lines()
        .filter(|l| l.starts_with("| `"))
        .map(|row| {
            let mut columns = row.split('|').skip(1);
            let names = columns.next().unwrap_or("");
            let names = names.split('`').skip(1).step_by(2).map(str::to_owned);
            (names.collect(), columns.next().unwrap_or("").to_owned())
        })
        .collect()
}

#[test]
fn every_file_and_directory_under_src_is_in_the_architecture() {
    let documented: BTreeSet<String> = documented_modules().into_iter().collect();
    let doc =
        std::fs::read_to_string(root().join("docs/architecture.md")).expect("architecture.md");
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(root().join("src")).expect("src/") {
        let name = entry.expect("an entry of src/").file_name();
        let name = name.to_string_lossy();
        let module = name.strip_suffix(".rs").unwrap_or(&name);
        match module {
            // The crate roots, and the binary's own modules: "Layers, crates and faces".
            "lib" | "main" => assert!(doc.contains(&format!("`src/{name}`")), "src/{name}"),
            "cli" => assert!(doc.contains("`src/cli/`"), "src/cli/"),
            _ if !documented.contains(module) => missing.push(name.into_owned()),
            _ => {}
        }
    }
    assert!(
        missing.is_empty(),
        "under src/ but not in docs/architecture.md's module table: {missing:?}"
    );
}

#[test]
fn every_file_the_module_table_names_exists() {
    let src = root().join("src");
    let mut unknown = Vec::new();
    for (names, owns) in table_rows() {
        let module = names.first().expect("a module a row").replace("::", "/");
        for path in owns.split('`').skip(1).step_by(2) {
            if !(path.ends_with(".rs") || path.ends_with('/')) || path.contains(' ') {
                continue;
            }
            // Relative to the module's directory, to src/, or to the repository.
            let found = [
                src.join(&module).join(path),
                src.join(path),
                root().join(path),
            ]
            .iter()
            .any(|p| p.exists());
            if !found {
                unknown.push(format!("{module}: {path}"));
            }
        }
    }
    assert!(
        unknown.is_empty(),
        "docs/architecture.md's module table names files that do not exist: {unknown:?}"
    );
}

#[test]
fn every_measured_table_has_its_bench_report_markers() {
    // `scripts/bench-report --check` runs nothing: it only finds each
    // table's markers (in docs/performance.md and docs/serve.md), in order,
    // once each.
    let status = std::process::Command::new("python3")
        .arg(root().join("scripts/bench-report"))
        .arg("--check")
        .status()
        .expect("python3 runs");
    assert!(status.success(), "scripts/bench-report --check: {status}");
}
