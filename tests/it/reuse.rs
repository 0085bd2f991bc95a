//! `import`, `template` and `use`: instances in the JSON, and every check
//! across files, with diagnostics in the right file.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use crate::support::{temp_dir, Test};
use planc::diagnostic::Code;
use planc::modules::{ImportError, Loader};

/// Files served from memory.
struct Files(HashMap<PathBuf, String>);

impl Loader for Files {
    fn load(&self, path: &Path) -> Result<String, ImportError> {
        self.0.get(path).cloned().ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, "not in memory").into()
        })
    }
}

fn compile(root: &str, files: &[(&str, &str)]) -> planc::Compilation {
    let loader = Files(
        files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect(),
    );
    let text = loader.0[Path::new(root)].clone();
    planc::compile_with(root, &text, &Default::default(), &loader)
}

/// `(code, file name of the primary label, line)` of each diagnostic.
fn located(c: &planc::Compilation) -> Vec<(String, String, usize)> {
    c.diagnostics
        .iter()
        .map(|d| {
            let label = d.primary().expect("labelled");
            let file = c.sources.get(label.file);
            let line = file.text[..label.span.start()].matches('\n').count() + 1;
            (d.code.as_str().to_owned(), file.name.clone(), line)
        })
        .collect()
}

#[test]
fn instances_become_prefixed_tasks_and_steps() {
    let output = Test::new(["build", "examples/feature_release.plan"]).expect_code(0);
    let doc: serde_json::Value = serde_json::from_str(&output.stdout).expect("JSON");
    let keys: Vec<&str> = doc["tasks"]
        .as_array()
        .expect("tasks")
        .iter()
        .map(|t| t["key"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        keys,
        [
            "branch",
            "search.open_pr",
            "search.approve",
            "search.merge",
            "export.open_pr",
            "export.approve",
            "export.merge",
            "tag"
        ]
    );
    let steps: Vec<&str> = doc["steps"]
        .as_array()
        .expect("steps")
        .iter()
        .map(|s| s["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(steps, ["search.review", "export.review"]);
    // `use … { after branch }` and `after search, export`.
    assert_eq!(doc["tasks"][1]["dependencies"], serde_json::json!([1]));
    assert_eq!(doc["tasks"][7]["dependencies"], serde_json::json!([4, 7]));
    // Arguments: a plan parameter flows into the template; a default applies.
    assert_eq!(
        doc["tasks"][2]["name"],
        "Get 2 approvals for search filters for 3.1.0"
    );
    assert_eq!(doc["tasks"][5]["name"], "Get 1 approvals for CSV export");
    // Roles of the library are in the document.
    let roles: Vec<&str> = doc["roles"]
        .as_array()
        .expect("roles")
        .iter()
        .map(|r| r["id"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        roles,
        ["release_manager", "author", "reviewer", "researcher"]
    );
}

#[test]
fn mistakes_inside_a_template_are_reported_once_in_its_file() {
    let lib = "role writer\ntemplate t(name: string, n: int) {\n    task a \"A {name} {nme}\" { assignee writr }\n    task b \"B\" { after a, c }\n}\n";
    let plan = "import \"lib/x.plan\"\nplan p {\n    goal \"g\"\n    use t(name = \"x\", n = \"three\") as one\n    use t(name = \"y\", n = 2) as two { after one.b }\n    task z \"Z\" { after one, two.a }\n}\n";
    let c = compile("p.plan", &[("p.plan", plan), ("lib/x.plan", lib)]);
    assert_eq!(
        located(&c),
        [
            ("planc::param_type".to_owned(), "p.plan".to_owned(), 4),
            (
                "planc::unknown_param".to_owned(),
                "lib/x.plan".to_owned(),
                3
            ),
            ("planc::unknown_role".to_owned(), "lib/x.plan".to_owned(), 3),
            ("planc::unknown_ref".to_owned(), "lib/x.plan".to_owned(), 4),
        ]
    );
    // The type error labels the argument and, in the library, the declared type.
    let param_type = &c.diagnostics[0];
    let files: Vec<&str> = param_type
        .labels
        .iter()
        .map(|l| c.sources.get(l.file).name.as_str())
        .collect();
    assert_eq!(files, ["p.plan", "lib/x.plan"]);
}

#[test]
fn import_cycles_and_missing_files_are_diagnostics() {
    let a = "import \"b.plan\"\nplan a { goal \"g\" task t \"T\" }\n";
    let b = "import \"a.plan\"\nrole r\n";
    let c = compile("a.plan", &[("a.plan", a), ("b.plan", b)]);
    let messages: Vec<&str> = c.diagnostics.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(messages, ["import cycle: a.plan → b.plan → a.plan"]);
    assert_eq!(
        located(&c)[0],
        ("planc::import".to_owned(), "b.plan".to_owned(), 1)
    );

    let c = compile(
        "a.plan",
        &[(
            "a.plan",
            "plan a { goal \"g\" task t \"T\" }\nimport \"none.plan\"\n",
        )],
    );
    let codes: Vec<Code> = c.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, [Code::Import, Code::Import], "{:#?}", c.diagnostics);
    assert_eq!(
        c.diagnostics[0].message,
        "imports go at the top of the file"
    );
}

#[test]
fn templates_are_hygienic() {
    // A template cannot name the plan's tasks, and the plan names instance
    // tasks only through their prefix.
    let plan = "template t() { task a \"A\" { after setup } }\nplan p {\n    goal \"g\"\n    task setup \"S\"\n    use t() as one\n    task z \"Z\" { after a }\n}\n";
    let c = compile("p.plan", &[("p.plan", plan)]);
    let messages: Vec<String> = c.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        messages,
        ["no task or step named `setup`", "no task or step named `a`"]
    );
    assert_eq!(c.diagnostics[1].labels[0].message, "unknown task or step");
}

#[test]
fn a_library_is_checked_on_its_own() {
    let output = Test::new(["check", "examples/lib/engineering.plan"]).expect_code(0);
    assert_eq!(output.stdout, "examples/lib/engineering.plan: ok\n");
    let output = Test::new(["build", "examples/lib/engineering.plan"]).expect_code(1);
    assert!(
        output.stderr.contains("planc::no_plan"),
        "{}",
        output.stderr
    );

    // An unused template's mistakes are still found, and its unused parameters.
    let lib = "template t(topic: string, extra: int = 1) {\n    task a \"About {topic}\" { after b }\n}\n";
    let c = compile("lib.plan", &[("lib.plan", lib)]);
    let messages: Vec<String> = c.diagnostics.iter().map(|d| d.message.clone()).collect();
    assert_eq!(
        messages,
        [
            "parameter `extra` of template `t` is never used",
            "no task or step named `b`"
        ]
    );
}

#[test]
fn imports_resolve_relative_to_the_importing_file() {
    let dir = temp_dir("reuse");
    std::fs::create_dir_all(dir.path().join("plans/lib")).expect("mkdir");
    std::fs::write(
        dir.path().join("plans/lib/roles.plan"),
        "role writer \"Writes\"\n",
    )
    .expect("write");
    std::fs::write(
        dir.path().join("plans/p.plan"),
        "import \"lib/roles.plan\"\nplan p { goal \"g\" task a \"A\" { assignee writer } }\n",
    )
    .expect("write");
    let output = Test::new(["check", "plans/p.plan"])
        .current_dir(dir.path())
        .expect_code(0);
    assert_eq!(output.stdout, "plans/p.plan: ok, 1 task\n");
}
