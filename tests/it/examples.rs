//! Every example builds, for every target, to exactly the pinned bytes; the
//! planc/1 output satisfies the shipped JSON Schema.

use crate::support::{self, files, Test};

/// The `--set` values an example needs to build.
fn values(path: &str) -> &'static [&'static str] {
    match path {
        "examples/research_report.plan" => &["--set", "topic=vector databases"],
        "examples/release_checklist.plan" => &["--set", "version=2.4.0", "--set", "channel=stable"],
        // Every other example builds with its defaults.
        _ => &[],
    }
}

fn build(path: &str, target: &str) -> String {
    let mut args = vec!["build", path, "--target", target];
    args.extend(values(path));
    let output = Test::new(&args).expect_code(0);
    assert_eq!(output.stderr, "", "{path}: build prints no diagnostics");
    output.stdout
}

#[test]
fn examples_check_clean() {
    for path in files("examples", &["plan"]) {
        let output = Test::new(["check", &path]).expect_code(0);
        assert!(
            output.stdout.ends_with(" tasks\n"),
            "{path}: {}",
            output.stdout
        );
        assert!(
            !output.stdout.contains("warning"),
            "{path}: {}",
            output.stdout
        );
    }
}

#[test]
fn examples_build_to_pinned_bytes_for_every_target() {
    for path in files("examples", &["plan"]) {
        for (target, _) in planc::emit::Target::ALL {
            let text = build(&path, target);
            let again = build(&path, target);
            assert_eq!(
                text, again,
                "{path} --target {target}: output is deterministic"
            );
            let name = format!("{}.{target}", path.replace('/', "__"));
            insta::assert_snapshot!(name, text);
        }
    }
}

#[test]
fn built_documents_satisfy_the_schema_and_check_clean() {
    let schema: serde_json::Value =
        serde_json::from_str(planc::document::SCHEMA).expect("schema is JSON");
    let validator = jsonschema::validator_for(&schema).expect("schema is valid");
    let dir = support::temp_dir("schema");
    for path in files("examples", &["plan"]) {
        let text = build(&path, "planc");
        let document: serde_json::Value = serde_json::from_str(&text).expect("output is JSON");
        let errors: Vec<String> = validator
            .iter_errors(&document)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{path}: {errors:#?}");

        // The built document is itself a valid plan document.
        let out = dir.path().join("plan.json");
        std::fs::write(&out, &text).expect("write");
        let checked = Test::new(["check", out.to_str().expect("utf-8 path")]).expect_code(0);
        assert!(checked.stdout.contains(": ok"), "{}", checked.stdout);
    }
}

#[test]
fn schema_command_prints_the_shipped_schema() {
    let output = Test::new(["schema"]).expect_code(0);
    assert_eq!(output.stdout, planc::document::SCHEMA);
}
