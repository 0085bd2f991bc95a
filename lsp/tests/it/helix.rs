//! The Helix configuration in `editors/helix/languages.toml` parses and
//! starts `planc lsp` for `.plan` files and JSON plan documents.

use toml::Value;

#[test]
fn helix_languages_toml_declares_plan_and_its_server() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../editors/helix/languages.toml"
    );
    let text = std::fs::read_to_string(path).expect("editors/helix/languages.toml exists");
    let config: Value = toml::from_str(&text).expect("valid TOML");
    let language = &config["language"][0];
    assert_eq!(language["name"].as_str(), Some("plan"));
    assert_eq!(language["scope"].as_str(), Some("source.plan"));
    assert_eq!(language["file-types"], Value::Array(vec!["plan".into()]));
    assert_eq!(language["comment-token"].as_str(), Some("#"));
    assert_eq!(
        language["language-servers"],
        Value::Array(vec!["planc".into()])
    );
    let json = &config["language"][1];
    assert_eq!(json["name"].as_str(), Some("plan-json"));
    assert_eq!(json["grammar"].as_str(), Some("json"));
    let globs: Vec<&str> = json["file-types"]
        .as_array()
        .expect("file types")
        .iter()
        .filter_map(|t| t["glob"].as_str())
        .collect();
    assert_eq!(globs, ["*.plan.json", ".taskmaster/tasks/tasks.json"]);
    assert_eq!(json["language-servers"], Value::Array(vec!["planc".into()]));
    let server = &config["language-server"]["planc"];
    assert_eq!(server["command"].as_str(), Some("planc"));
    assert_eq!(server["args"], Value::Array(vec!["lsp".into()]));
}
