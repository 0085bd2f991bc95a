//! README.md stays true: its first lines are the two commands a newcomer
//! needs, every `cargo install` it shows is `--locked`, and the contributors'
//! commands name tests and modules that exist. Its commands run as written
//! with every other Markdown file's (tests/it/doc_commands.rs).

use std::path::Path;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).expect("README.md")
}

/// The lines of the ```sh blocks under the heading `## NAME` (up to the next
/// `## `), without blank lines.
fn commands(readme: &str, heading: &str) -> Vec<String> {
    let start = readme
        .find(&format!("\n## {heading}\n"))
        .unwrap_or_else(|| panic!("README.md has no section {heading}"));
    let section = &readme[start + 1..];
    let section = &section[3..];
    let end = section.find("\n## ").unwrap_or(section.len());
    let mut lines = Vec::new();
    let mut in_block = false;
    for line in section[..end].lines() {
        match line.trim_end() {
            "```sh" if !in_block => in_block = true,
            "```" if in_block => in_block = false,
            line if in_block && !line.trim().is_empty() => lines.push(line.to_owned()),
            _ => {}
        }
    }
    assert!(!lines.is_empty(), "README.md: no command under {heading}");
    lines
}

#[test]
fn the_first_lines_run_an_example_and_all_the_tests() {
    let readme = readme();
    let first_block: Vec<&str> = readme
        .split("```sh\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a first sh block")
        .lines()
        .collect();
    assert_eq!(first_block.len(), 2, "{first_block:?}");
    assert!(
        first_block[0].starts_with("cargo run -- build examples/"),
        "{first_block:?}"
    );
    assert!(
        first_block[1].starts_with("bash .ci/run "),
        "{first_block:?}"
    );
    // The block comes before any section.
    assert!(readme.find("```sh").unwrap() < readme.find("\n## ").unwrap());
    // Every install, wherever the README shows one, takes the tested versions.
    for (at, _) in readme.match_indices("cargo install") {
        let line = readme[at..].lines().next().unwrap_or("");
        assert!(line.contains(" --locked "), "README.md: {line}");
    }
}

/// The contributors' commands name tests and modules that exist.
#[test]
fn the_contributing_commands_name_what_exists() {
    let readme = readme();
    let lines = commands(&readme, "Contributing");
    assert!(lines.iter().any(|l| l.starts_with("cargo test --lib ")));
    for line in &lines {
        let words: Vec<&str> = line
            .split('#')
            .next()
            .unwrap_or("")
            .split_whitespace()
            .collect();
        for (i, pair) in words.windows(2).enumerate() {
            match pair {
                ["--test", name] => {
                    let package = if words.contains(&"planc-lsp") {
                        "lsp/"
                    } else {
                        ""
                    };
                    let file = root().join(format!("{package}tests/{name}.rs"));
                    let dir = root().join(format!("{package}tests/{name}/"));
                    assert!(
                        file.is_file() || dir.join("main.rs").is_file(),
                        "README.md: {line}"
                    );
                    // `--test it MODULE::…`: a test file of that binary.
                    if let Some((module, _)) = words.get(i + 2).and_then(|w| w.split_once("::")) {
                        assert!(
                            dir.join(format!("{module}.rs")).is_file(),
                            "README.md: {line}"
                        );
                    }
                }
                ["--lib", filter] if filter.ends_with("::") => {
                    let module = filter.trim_end_matches("::").replace("::", "/");
                    let src = root().join("src");
                    assert!(
                        src.join(format!("{module}.rs")).is_file() || src.join(&module).is_dir(),
                        "README.md: {line}"
                    );
                }
                _ => {}
            }
        }
    }
}
