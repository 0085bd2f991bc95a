//! Shell completions, the man page, and the values of fixed-set flags in
//! `--help`.

use std::process::Command;

use crate::support::{temp_dir, Test};

/// The subcommands every page and script must name.
const SUBCOMMANDS: [&str; 14] = [
    "check",
    "build",
    "fmt",
    "graph",
    "schema",
    "run",
    "mcp",
    "tools",
    "serve",
    "lsp",
    "init",
    "completions",
    "man",
    "help",
];

/// What bash's completion function offers for the words `line` (the last one
/// being completed).
fn bash_complete(script: &std::path::Path, line: &str) -> String {
    let words: Vec<&str> = line.split(' ').collect();
    let program = format!(
        "source {script}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; \
         COMP_POINT=${{#COMP_LINE}}; _planc planc '{current}' '{previous}'; \
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        script = script.display(),
        words = words
            .iter()
            .map(|w| format!("'{w}'"))
            .collect::<Vec<_>>()
            .join(" "),
        cword = words.len() - 1,
        current = words[words.len() - 1],
        previous = words[words.len() - 2],
    );
    let output = Command::new("bash")
        .args(["--norc", "--noprofile", "-c", &program])
        .output()
        .expect("bash runs");
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout).unwrap()
}

#[test]
fn bash_completes_subcommands_and_flags() {
    let temp = temp_dir("completions");
    let output = Test::new(["completions", "bash"]).expect_code(0);
    let script = temp.path().join("planc.bash");
    std::fs::write(&script, &output.stdout).unwrap();
    let commands = bash_complete(&script, "planc ");
    for command in SUBCOMMANDS {
        assert!(
            commands.lines().any(|l| l == command),
            "{command}: {commands}"
        );
    }
    let partial = bash_complete(&script, "planc ch");
    assert_eq!(partial, "check\n");
    let flags = bash_complete(&script, "planc build --tar");
    assert_eq!(flags, "--target\n");
    let targets = bash_complete(&script, "planc build --target ");
    assert!(
        targets.contains("plan-tool\n") && targets.contains("taskmaster\n"),
        "{targets}"
    );
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let output = Test::new(["completions", shell]).expect_code(0);
        assert!(output.stdout.contains("completions"), "{shell}");
    }
    Test::new(["completions", "tcsh"]).expect_code(2);
}

#[test]
fn the_man_page_is_roff_naming_every_subcommand() {
    let page = Test::new(["man"]).expect_code(0).stdout;
    assert!(page.contains(".TH planc 1"), "{page}");
    assert!(
        page.contains(".SH NAME") && page.contains(".SH SYNOPSIS"),
        "{page}"
    );
    for command in SUBCOMMANDS {
        assert!(page.contains(&format!("planc\\-{command}(1)")), "{command}");
    }
    let temp = temp_dir("man");
    let dir = temp.path().join("man1");
    Test::new(["man", "--dir", &dir.display().to_string()]).expect_code(0);
    for name in [
        "planc.1",
        "planc-check.1",
        "planc-run.1",
        "planc-run-next.1",
        "planc-init.1",
    ] {
        assert!(dir.join(name).is_file(), "{name}");
    }
    // Rendered by man(1) when it and groff's nroff are installed: no warning
    // from groff, and the text a reader sees.
    let has_nroff = Command::new("nroff").arg("--version").output().is_ok();
    let rendered = Command::new("man")
        .args(["--warnings", "-l"])
        .arg(dir.join("planc-build.1"))
        .env("MANWIDTH", "100")
        .env("MAN_KEEP_FORMATTING", "0")
        .output();
    if let (Ok(rendered), true) = (rendered, has_nroff) {
        let text = String::from_utf8_lossy(&rendered.stdout);
        assert!(rendered.status.success(), "{rendered:?}");
        assert!(
            rendered.stderr.is_empty(),
            "{}",
            String::from_utf8_lossy(&rendered.stderr)
        );
        assert!(text.contains("planc-build"), "{text}");
        assert!(text.contains("plan-tool"), "{text}");
    }
}

#[test]
fn help_lists_the_values_of_fixed_set_flags() {
    let build = Test::new(["build", "--help"]).expect_code(0).stdout;
    for (name, _) in planc::emit::Target::ALL {
        assert!(build.contains(&format!("- {name}:")), "{name}: {build}");
    }
    assert!(
        build.contains("{plan_id, steps:[{tasks}]}: the Plan Tool (seed 002)"),
        "{build}"
    );
    let check = Test::new(["check", "--help"]).expect_code(0).stdout;
    assert!(
        check.contains("- github: GitHub Actions annotations"),
        "{check}"
    );
    let tools = Test::new(["tools", "--help"]).expect_code(0).stdout;
    assert!(
        tools.contains("- plan-act:") && tools.contains("- openai-responses:"),
        "{tools}"
    );
    let mcp = Test::new(["mcp", "--help"]).expect_code(0).stdout;
    assert!(mcp.contains("- tasks:"), "{mcp}");
    let graph = Test::new(["graph", "--help"]).expect_code(0).stdout;
    assert!(graph.contains("- dot:"), "{graph}");
}
