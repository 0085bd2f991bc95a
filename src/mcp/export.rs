//! Tool definitions in the shapes model APIs take: OpenAI function calling
//! (Chat Completions and Responses, both in strict mode) and Anthropic tool use.
//!
//! Everything here works on a tool as plain data — a name, a description and
//! the JSON Schema of its arguments — so it does not depend on where the tools
//! come from.
//!
//! OpenAI's strict mode (Structured Outputs) takes a subset of JSON Schema:
//! every object lists all its properties in `required` and has
//! `"additionalProperties": false`, an optional property is a required one
//! that may be `null`, and keywords such as `default`, `format` or `minimum`
//! are not part of the portable subset. [`strict_schema`] rewrites a schema
//! into that subset; the runner reads `null` as "left out", so a strict call
//! means what the same call without the null fields means.

use serde_json::{json, Map, Value};

/// One tool as plain data: what every exported shape is made from.
#[derive(Clone, Copy, Debug)]
pub struct ToolSpec<'a> {
    /// The tool's name (`startNextTask`).
    pub name: &'a str,
    /// What the tool does, for a model.
    pub description: &'a str,
    /// The JSON Schema of the arguments: an object schema without `$ref`.
    pub input_schema: &'a Map<String, Value>,
}

/// OpenAI Chat Completions: `{"type": "function", "function": {name, description, parameters, strict}}`.
pub fn openai_chat(tool: ToolSpec<'_>) -> Value {
    json!({"type": "function", "function": {
        "name": tool.name,
        "description": tool.description,
        "parameters": strict_schema(tool.input_schema),
        "strict": true,
    }})
}

/// OpenAI Responses API: `{"type": "function", name, description, parameters, strict}`.
pub fn openai_responses(tool: ToolSpec<'_>) -> Value {
    json!({
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": strict_schema(tool.input_schema),
        "strict": true,
    })
}

/// Anthropic tool use: `{name, description, input_schema}`, the schema as it is.
pub fn anthropic(tool: ToolSpec<'_>) -> Value {
    json!({"name": tool.name, "description": tool.description, "input_schema": tool.input_schema})
}

/// The keywords a strict schema keeps; anything else is dropped (a bound
/// such as `minimum` is said in the description instead).
const KEPT: [&str; 9] = [
    "type",
    "description",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "anyOf",
    "enum",
    "const",
];

/// Bounds that strict mode does not take portably, and how the description says them.
const BOUNDS: [(&str, &str); 2] = [("minimum", "at least"), ("maximum", "at most")];

/// `schema` rewritten for OpenAI's strict mode: every object closed
/// (`additionalProperties: false`) with all its properties required, each
/// property that was optional made nullable, and only the keywords in the
/// strict subset kept.
pub fn strict_schema(schema: &Map<String, Value>) -> Map<String, Value> {
    // The root is always an object, even when the arguments have no fields.
    let mut schema = schema.clone();
    schema.insert("type".to_owned(), json!("object"));
    strict_node(&schema)
}

/// One schema node in the strict subset.
fn strict_node(node: &Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    let mut bounds = Vec::new();
    for (key, value) in node {
        match key.as_str() {
            // Set by `close_object`, for every object.
            "properties" | "required" | "additionalProperties" => {}
            "items" => {
                if let Value::Object(items) = value {
                    out.insert(key.clone(), Value::Object(strict_node(items)));
                }
            }
            "anyOf" => {
                out.insert(key.clone(), Value::Array(strict_branches(value)));
            }
            _ if KEPT.contains(&key.as_str()) => {
                out.insert(key.clone(), value.clone());
            }
            _ => {
                if let Some((_, words)) = BOUNDS.iter().find(|(bound, _)| bound == key) {
                    bounds.push(format!("{words} {value}"));
                }
            }
        }
    }
    if !bounds.is_empty() {
        let said = out.get("description").and_then(Value::as_str).unwrap_or("");
        let note = format!("({})", bounds.join(", "));
        let description = match said.strip_suffix('.') {
            _ if said.is_empty() => note,
            Some(sentence) => format!("{sentence} {note}."),
            None => format!("{said} {note}"),
        };
        out.insert("description".to_owned(), Value::String(description));
    }
    let is_object =
        |t: &Value| t == "object" || t.as_array().is_some_and(|ts| ts.contains(&json!("object")));
    if node.contains_key("properties") || node.get("type").is_some_and(is_object) {
        let empty = Map::new();
        let properties = match node.get("properties") {
            Some(Value::Object(properties)) => properties,
            _ => &empty,
        };
        let required: Vec<&str> = node
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        close_object(&mut out, properties, &required);
    }
    split_type_union(split_nullable_container(out))
}

/// A `type` list of two or more types besides `null` (`["integer",
/// "string", "null"]`, as a `lease` is) as an `anyOf` of one type each: what
/// the OpenAI SDK writes for such a union (`Optional[Union[int, str]]`), the
/// description kept beside it.
fn split_type_union(mut node: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::Array(types)) = node.get("type") else {
        return node;
    };
    if types.iter().filter(|t| *t != "null").count() < 2 || node.contains_key("enum") {
        return node;
    }
    let branches: Vec<Value> = types.iter().map(|t| json!({"type": t})).collect();
    node.remove("type");
    node.insert("anyOf".to_owned(), Value::Array(branches));
    node
}

/// Makes `out` a closed object with `properties`, all required; those not in
/// `required` become nullable.
fn close_object(out: &mut Map<String, Value>, properties: &Map<String, Value>, required: &[&str]) {
    let mut strict = Map::new();
    for (name, schema) in properties {
        let schema = match schema {
            Value::Object(schema) => strict_node(schema),
            // `true` (anything) has no strict form; a string is the closest.
            _ => Map::from_iter([("type".to_owned(), json!("string"))]),
        };
        let schema = if required.contains(&name.as_str()) {
            schema
        } else {
            nullable(schema)
        };
        strict.insert(name.clone(), Value::Object(schema));
    }
    let names: Vec<Value> = strict.keys().map(|name| json!(name)).collect();
    out.insert("properties".to_owned(), Value::Object(strict));
    out.insert("required".to_owned(), Value::Array(names));
    out.insert("additionalProperties".to_owned(), json!(false));
}

/// The branches of an `anyOf`, each strict; a branch that is itself only an
/// `anyOf` (an optional union) is spliced in, so unions stay flat.
fn strict_branches(value: &Value) -> Vec<Value> {
    let mut branches = Vec::new();
    for branch in value.as_array().into_iter().flatten() {
        let Value::Object(branch) = branch else {
            continue;
        };
        let mut branch = strict_node(branch);
        let only_union = branch
            .keys()
            .all(|key| key == "anyOf" || key == "description");
        match branch.remove("anyOf") {
            Some(Value::Array(inner)) if only_union => branches.extend(inner),
            Some(inner) => {
                branch.insert("anyOf".to_owned(), inner);
                branches.push(Value::Object(branch));
            }
            None => branches.push(Value::Object(branch)),
        }
    }
    let mut unique = Vec::with_capacity(branches.len());
    for branch in branches {
        if !unique.contains(&branch) {
            unique.push(branch);
        }
    }
    unique
}

/// `type: ["object", "null"]` or `["array", "null"]` as an `anyOf` of the
/// container and `null`: strict mode closes objects by their `type`, and an
/// `anyOf` says the union the same way to every reader.
fn split_nullable_container(mut node: Map<String, Value>) -> Map<String, Value> {
    let Some(Value::Array(types)) = node.get("type") else {
        return node;
    };
    let container = types
        .iter()
        .find(|t| *t == "object" || *t == "array")
        .cloned();
    let Some(container) = container else {
        return node;
    };
    if types.len() != 2 || !types.contains(&json!("null")) {
        return node;
    }
    node.insert("type".to_owned(), container);
    let description = node.remove("description");
    let mut union = Map::new();
    if let Some(description) = description {
        union.insert("description".to_owned(), description);
    }
    union.insert(
        "anyOf".to_owned(),
        json!([Value::Object(node), {"type": "null"}]),
    );
    union
}

/// `schema` that also accepts `null`.
fn nullable(mut schema: Map<String, Value>) -> Map<String, Value> {
    if accepts_null(&schema) {
        return schema;
    }
    if let Some(Value::Array(values)) = schema.get_mut("enum") {
        values.push(Value::Null);
    }
    match schema.get_mut("type") {
        Some(Value::String(t)) if t != "object" && t != "array" => {
            let t = std::mem::take(t);
            schema.insert("type".to_owned(), json!([t, "null"]));
            return schema;
        }
        Some(Value::Array(types)) if !types.iter().any(|t| t == "object" || t == "array") => {
            types.push(json!("null"));
            return schema;
        }
        _ => {}
    }
    if let Some(Value::Array(branches)) = schema.get_mut("anyOf") {
        branches.push(json!({"type": "null"}));
        return schema;
    }
    let description = schema.remove("description");
    let mut union = Map::new();
    if let Some(description) = description {
        union.insert("description".to_owned(), description);
    }
    union.insert(
        "anyOf".to_owned(),
        json!([Value::Object(schema), {"type": "null"}]),
    );
    union
}

/// Whether `schema` already accepts `null`.
fn accepts_null(schema: &Map<String, Value>) -> bool {
    let null_type =
        |t: &Value| t == "null" || t.as_array().is_some_and(|ts| ts.contains(&json!("null")));
    schema.get("type").is_some_and(null_type)
        || schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| {
                branches
                    .iter()
                    .any(|b| b.get("type").is_some_and(null_type))
            })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strict(schema: Value) -> Value {
        Value::Object(strict_schema(schema.as_object().unwrap()))
    }

    #[test]
    fn a_union_of_types_is_an_any_of() {
        let schema = json!({
            "type": "object",
            "properties": {
                "lease": {"type": ["integer", "string", "null"], "description": "How long."},
                "hold": {"type": ["integer", "string"]},
            },
            "required": [],
        });
        assert_eq!(
            strict(schema)["properties"],
            json!({
                "lease": {"description": "How long.",
                          "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
                "hold": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
            })
        );
    }

    #[test]
    fn optional_fields_become_required_and_nullable() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "integer", "minimum": 1, "description": "The id."},
                "note": {"type": ["string", "null"], "default": null},
                "retry": {"type": "boolean", "default": true},
            },
            "required": ["id"],
        });
        assert_eq!(
            strict(schema),
            json!({
                "type": "object",
                "properties": {
                    "id": {"type": "integer", "description": "The id (at least 1)."},
                    "note": {"type": ["string", "null"]},
                    "retry": {"type": ["boolean", "null"]},
                },
                "required": ["id", "note", "retry"],
                "additionalProperties": false,
            })
        );
    }

    #[test]
    fn a_nullable_object_is_a_union_with_a_closed_object() {
        let schema = json!({
            "type": "object",
            "properties": {"updates": {
                "type": ["object", "null"],
                "description": "The fields to change.",
                "properties": {"name": {"type": ["string", "null"], "default": null}},
                "default": null,
            }},
        });
        assert_eq!(
            strict(schema)["properties"]["updates"],
            json!({
                "description": "The fields to change.",
                "anyOf": [
                    {
                        "type": "object",
                        "properties": {"name": {"type": ["string", "null"]}},
                        "required": ["name"],
                        "additionalProperties": false,
                    },
                    {"type": "null"},
                ],
            })
        );
    }

    #[test]
    fn an_optional_union_is_flat() {
        let schema = json!({
            "type": "object",
            "properties": {"task_id": {
                "description": "The task.",
                "anyOf": [
                    {"anyOf": [{"type": "integer"}, {"type": "string"}], "description": "A ref."},
                    {"type": "null"},
                ],
            }},
        });
        assert_eq!(
            strict(schema)["properties"]["task_id"],
            json!({
                "description": "The task.",
                "anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}],
            })
        );
    }

    #[test]
    fn no_arguments_is_a_closed_empty_object() {
        assert_eq!(
            strict(json!({"type": "object"})),
            json!({"type": "object", "properties": {}, "required": [], "additionalProperties": false})
        );
    }

    #[test]
    fn an_optional_union_without_null_gains_one() {
        let schema = json!({
            "type": "object",
            "properties": {"after": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
        });
        assert_eq!(
            strict(schema)["properties"]["after"],
            json!({"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]})
        );
    }
}
