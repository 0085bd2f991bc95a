//! Writing one tag into an existing task-master `tasks.json`: the file's
//! other tags, and the members of the tag's `metadata` planc does not write,
//! stay as they were (docs/interop.md).

use serde_json::{Map, Value};

use crate::document::json_text;

/// Why an existing file cannot take a tag.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NotTaskMaster(pub String);

impl std::fmt::Display for NotTaskMaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// `existing` (the text of a task-master `tasks.json`, tagged or untagged)
/// with the tag `tag` of `rendered` (what `--target taskmaster` wrote)
/// put in: in the place of a tag of that name, else after the file's tags.
///
/// The tag's `metadata` keeps the members planc does not write (a `created`
/// time, task-master's own additions). An untagged file is task-master's
/// older shape: its tasks become the tag `master`, as task-master itself
/// migrates it. An empty (or all-whitespace) file is a new one.
pub fn write_tag(existing: &str, rendered: &str, tag: &str) -> Result<String, NotTaskMaster> {
    let mut written: Map<String, Value> = serde_json::from_str(rendered)
        .map_err(|e| NotTaskMaster(format!("planc's own export is not JSON: {e}")))?;
    let Some(mut body) = written.remove(tag) else {
        return Err(NotTaskMaster(format!("planc's export has no tag `{tag}`")));
    };
    if existing.trim().is_empty() {
        return Ok(json_text(&Map::from_iter([(tag.to_owned(), body)])));
    }
    let mut file = match serde_json::from_str::<Value>(existing) {
        Ok(Value::Object(file)) => file,
        Ok(_) => return Err(not_tasks("it is not a JSON object")),
        Err(e) => return Err(not_tasks(&format!("it is not JSON ({e})"))),
    };
    if untagged(&file) {
        // The older shape: its tasks are the tag `master`.
        file = Map::from_iter([("master".to_owned(), Value::Object(file))]);
    }
    if let Some((name, _)) = file
        .iter()
        .find(|(_, v)| !v.as_object().is_some_and(|t| t.contains_key("tasks")))
    {
        return Err(not_tasks(&format!(
            "its member `{name}` is not a tag (an object with `tasks`)"
        )));
    }
    if let Some(Value::Object(old)) = file.get(tag).and_then(|t| t.get("metadata")) {
        if let Some(Value::Object(new)) = body.get_mut("metadata") {
            let mut metadata = old.clone();
            metadata.extend(std::mem::take(new));
            *new = metadata;
        }
    }
    match file.get_mut(tag) {
        Some(place) => *place = body,
        None => {
            file.insert(tag.to_owned(), body);
        }
    }
    Ok(json_text(&file))
}

/// Whether `file` is task-master's untagged `{"tasks": […]}`: tasks with a
/// `title` and no `name` (a planc or seed document names its tasks).
fn untagged(file: &Map<String, Value>) -> bool {
    let Some(Value::Array(tasks)) = file.get("tasks") else {
        return false;
    };
    !file.contains_key("format")
        && tasks
            .iter()
            .all(|t| t.get("title").is_some() && t.get("name").is_none())
}

fn not_tasks(why: &str) -> NotTaskMaster {
    NotTaskMaster(format!(
        "it is not a task-master tasks.json: {why}; planc adds a tag only to one (remove the file, or write elsewhere)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const RENDERED: &str =
        r#"{"feature-y": {"tasks": [], "metadata": {"description": "new"}, "planc": {}}}"#;

    #[test]
    fn other_tags_and_metadata_members_stay() {
        let existing = r#"{"master": {"tasks": [{"id": 1}], "metadata": {"created": "c"}},
            "feature-y": {"tasks": [{"id": 9}], "metadata": {"created": "then", "description": "old"}},
            "feature-x": {"tasks": [], "metadata": {}}}"#;
        let text = write_tag(existing, RENDERED, "feature-y").unwrap();
        let file: Value = serde_json::from_str(&text).unwrap();
        let tags: Vec<&String> = file.as_object().unwrap().keys().collect();
        assert_eq!(tags, ["master", "feature-y", "feature-x"]);
        assert_eq!(file["master"]["tasks"][0]["id"], 1);
        assert_eq!(
            file["feature-y"]["metadata"],
            serde_json::json!({"created": "then", "description": "new"})
        );
        assert_eq!(file["feature-y"]["tasks"], serde_json::json!([]));
    }

    #[test]
    fn an_untagged_file_becomes_master() {
        let text = write_tag(
            r#"{"tasks": [{"id": 1, "title": "t"}]}"#,
            RENDERED,
            "feature-y",
        )
        .unwrap();
        let file: Value = serde_json::from_str(&text).unwrap();
        let tags: Vec<&String> = file.as_object().unwrap().keys().collect();
        assert_eq!(tags, ["master", "feature-y"]);
    }

    #[test]
    fn another_document_is_refused() {
        let refused = write_tag(r#"{"format": "planc/1"}"#, RENDERED, "feature-y").unwrap_err();
        assert_eq!(
            refused.0,
            "it is not a task-master tasks.json: its member `format` is not a tag (an object with `tasks`); planc adds a tag only to one (remove the file, or write elsewhere)"
        );
        assert!(write_tag("[", RENDERED, "feature-y").is_err());
        let seed = r#"{"overallGoal": "g", "tasks": [{"id": 1, "name": "n"}]}"#;
        assert!(write_tag(seed, RENDERED, "feature-y").is_err());
    }
}
