//! `planc tools --format openai|openai-responses`: strict-mode schemas, checked
//! against OpenAI's strict rules here (tests/it/tools_sdk.rs checks them with the
//! SDKs' own types), and the calls a strict-mode model makes — every field
//! sent, `null` for those it leaves out — accepted by the runner.

use crate::support::mcp::McpClient;
use crate::support::{repo, Test};
use planc::runner::Op;
use serde_json::{json, Map, Value};

fn tools(format: &str) -> Value {
    let run = Test::temp().planc(&["tools", "--format", format]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

/// `(name, parameters)` of every tool in `planc tools --format openai`.
fn strict_tools() -> Vec<(String, Value)> {
    dialect_strict_tools("planc")
}

/// `(name, parameters)` of every tool in `planc tools --format openai --dialect D`.
fn dialect_strict_tools(dialect: &str) -> Vec<(String, Value)> {
    let run = Test::temp().planc(&["tools", "--format", "openai", "--dialect", dialect]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let tools = run.json();
    tools
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            assert_eq!(t["function"]["strict"], true, "{t}");
            (
                t["function"]["name"].as_str().unwrap().to_owned(),
                t["function"]["parameters"].clone(),
            )
        })
        .collect()
}

/// The keywords OpenAI's strict mode takes that planc's schemas use.
const STRICT_KEYWORDS: [&str; 9] = [
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

const TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// Asserts OpenAI's strict rules on one schema node and everything under it;
/// returns how many properties it declares. `depth` counts nested objects.
fn assert_strict(path: &str, node: &Value, depth: usize) -> usize {
    let node = node
        .as_object()
        .unwrap_or_else(|| panic!("{path}: a schema is an object"));
    for key in node.keys() {
        assert!(
            STRICT_KEYWORDS.contains(&key.as_str()),
            "{path}: `{key}` is not in the strict subset"
        );
    }
    let types: Vec<&str> = match node.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().map(|t| t.as_str().unwrap()).collect(),
        Some(other) => panic!("{path}: type {other}"),
        None => {
            assert!(
                node.contains_key("anyOf")
                    || node.contains_key("enum")
                    || node.contains_key("const"),
                "{path}: a schema without a type is a union or an enum"
            );
            vec![]
        }
    };
    for t in &types {
        assert!(TYPES.contains(t), "{path}: type {t}");
    }
    if types.len() > 1 {
        assert!(
            !types.contains(&"object") && !types.contains(&"array"),
            "{path}: a nullable object or array is an anyOf, not a type list"
        );
        assert!(
            types.iter().filter(|t| **t != "null").count() == 1,
            "{path}: a union of types is an anyOf of one type each (as the OpenAI SDK writes it), not a type list"
        );
    }
    let mut count = 0;
    if types.contains(&"object") {
        assert!(depth < 5, "{path}: objects nest at most 5 deep");
        assert_eq!(
            node.get("additionalProperties"),
            Some(&json!(false)),
            "{path}: every object is closed"
        );
        let properties = node["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("{path}: an object lists its properties"));
        let required: Vec<&str> = node["required"]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: an object has `required`"))
            .iter()
            .map(|r| r.as_str().unwrap())
            .collect();
        let names: Vec<&str> = properties.keys().map(String::as_str).collect();
        assert_eq!(
            required, names,
            "{path}: every property is required, in order"
        );
        for (name, schema) in properties {
            count += 1 + assert_strict(&format!("{path}.{name}"), schema, depth + 1);
        }
    } else {
        assert!(
            !node.contains_key("properties") && !node.contains_key("additionalProperties"),
            "{path}: object keywords on a non-object"
        );
    }
    if types.contains(&"array") {
        count += assert_strict(&format!("{path}[]"), &node["items"], depth);
    }
    if let Some(branches) = node.get("anyOf") {
        let branches = branches.as_array().unwrap();
        assert!(
            branches.len() >= 2,
            "{path}: a union has two branches or more"
        );
        for (i, branch) in branches.iter().enumerate() {
            assert!(branch.get("anyOf").is_none(), "{path}: unions are flat");
            count += assert_strict(&format!("{path}|{i}"), branch, depth);
        }
    }
    count
}

#[test]
fn every_schema_follows_the_strict_rules() {
    let mut total = 0;
    for (name, schema) in strict_tools() {
        assert_eq!(schema["type"], "object", "{name}: the root is an object");
        assert!(
            schema.get("anyOf").is_none(),
            "{name}: the root is no union"
        );
        total += assert_strict(&name, &schema, 0);
        jsonschema::meta::validate(&schema)
            .unwrap_or_else(|e| panic!("{name}: not a JSON Schema: {e}"));
    }
    assert!(total <= 5000, "OpenAI takes at most 5000 properties in all");
}

#[test]
fn every_dialects_schemas_follow_the_strict_rules() {
    for (dialect, _) in planc::mcp::Dialect::ALL {
        for (name, schema) in dialect_strict_tools(dialect) {
            let name = format!("{dialect} {name}");
            assert_eq!(schema["type"], "object", "{name}: the root is an object");
            assert_strict(&name, &schema, 0);
            jsonschema::meta::validate(&schema)
                .unwrap_or_else(|e| panic!("{name}: not a JSON Schema: {e}"));
        }
    }
}

#[test]
fn responses_tools_carry_the_chat_tools_schemas() {
    let chat = tools("openai");
    let responses = tools("openai-responses");
    let responses = responses.as_array().unwrap();
    assert_eq!(responses.len(), 21);
    for (chat, tool) in chat.as_array().unwrap().iter().zip(responses) {
        assert_eq!(
            tool,
            &json!({
                "type": "function",
                "name": chat["function"]["name"],
                "description": chat["function"]["description"],
                "parameters": chat["function"]["parameters"],
                "strict": true,
            })
        );
    }
}

#[test]
fn strict_schemas_are_the_mcp_schemas_made_strict() {
    let mcp = tools("mcp");
    for (i, (name, schema)) in strict_tools().into_iter().enumerate() {
        let input = mcp["tools"][i]["inputSchema"].as_object().unwrap();
        assert_eq!(mcp["tools"][i]["name"], name.as_str());
        assert_eq!(
            Value::Object(planc::mcp::export::strict_schema(input)),
            schema,
            "{name}"
        );
        // Every property of the MCP schema is there, and an optional one may be null.
        let required = input.get("required").cloned().unwrap_or(json!([]));
        for property in input["properties"].as_object().unwrap().keys() {
            let strict = &schema["properties"][property];
            assert!(strict.is_object(), "{name}.{property} is kept");
            let optional = !required.as_array().unwrap().contains(&json!(property));
            let validator = jsonschema::validator_for(strict).unwrap();
            assert_eq!(
                validator.is_valid(&Value::Null),
                optional,
                "{name}.{property}: null is accepted exactly when the field is optional"
            );
        }
    }
}

/// A value for `schema` as a strict-mode model sends it: `null` for every
/// nullable field at `null_depth` levels down or deeper, a value elsewhere;
/// an array holds one item of each branch of its item union.
fn call_value(schema: &Value, null_depth: usize) -> Value {
    let accepts_null = jsonschema::validator_for(schema)
        .unwrap()
        .is_valid(&Value::Null);
    if accepts_null && null_depth == 0 {
        return Value::Null;
    }
    let next = null_depth.saturating_sub(1);
    if let Some(first) = schema
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.iter().find(|v| !v.is_null()))
    {
        return first.clone();
    }
    if let Some(branches) = schema.get("anyOf").and_then(Value::as_array) {
        let branch = branches
            .iter()
            .find(|b| b["type"] != "null")
            .expect("a non-null branch");
        return call_value(branch, null_depth);
    }
    let types: Vec<&str> = match &schema["type"] {
        Value::String(t) => vec![t.as_str()],
        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
        _ => vec![],
    };
    match types.iter().find(|t| **t != "null").copied() {
        Some("object") => {
            let fields: Map<String, Value> = schema["properties"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, field)| (name.clone(), call_value(field, next)))
                .collect();
            Value::Object(fields)
        }
        Some("array") => {
            let items = &schema["items"];
            match items.get("anyOf").and_then(Value::as_array) {
                Some(branches) => branches.iter().map(|b| call_value(b, next)).collect(),
                None => json!([call_value(items, next)]),
            }
        }
        Some("integer") | Some("number") => json!(1),
        Some("boolean") => json!(false),
        Some("string") => json!("open"),
        other => panic!("no value for {other:?} in {schema}"),
    }
}

#[test]
fn strict_calls_with_nulls_are_valid_calls() {
    let mcp = tools("mcp");
    for (i, (name, schema)) in strict_tools().into_iter().enumerate() {
        let strict = jsonschema::validator_for(&schema).unwrap();
        let loose = jsonschema::validator_for(&mcp["tools"][i]["inputSchema"]).unwrap();
        for null_depth in 0..4 {
            let arguments = call_value(&schema, null_depth);
            assert!(strict.is_valid(&arguments), "{name}: {arguments}");
            assert!(
                loose.is_valid(&arguments),
                "{name}: the MCP schema takes the strict call {arguments}"
            );
            if Op::NAMES.contains(&name.as_str()) {
                // `agent` and `lease` are the caller's: the server takes them off first.
                let mut operation = arguments.clone();
                if let Some(map) = operation.as_object_mut() {
                    planc::runner::Caller::take_from(map)
                        .unwrap_or_else(|e| panic!("{name}: bad caller in {arguments}: {e:?}"));
                }
                Op::from_call(&name, operation).unwrap_or_else(|e| {
                    panic!("{name}: the runner refuses the strict call {arguments}: {e:?}")
                });
            } else {
                // A tool beside the operations (`observe`): the server takes the call.
                let t = Test::temp();
                t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
                let store = planc::runner::Store::new(t.dir().join("s.json"));
                let outcome = planc::mcp::Dialect::Planc
                    .call(&store, &name, arguments.clone())
                    .unwrap_or_else(|| panic!("{name}: no such tool"));
                assert!(
                    !outcome.is_error,
                    "{name}: the server refuses the strict call {arguments}: {}",
                    outcome.content
                );
            }
        }
    }
}

/// The status of each task of state `s.json`, by key.
fn statuses(t: &Test) -> Vec<(String, String)> {
    t.state("s.json")["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|task| {
            (
                task["key"].as_str().unwrap_or("").to_owned(),
                task["status"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

#[test]
fn the_mcp_server_takes_strict_calls_with_explicit_nulls() {
    let t = Test::temp();
    t.ok(&["init", &repo("examples/jd_keyboard.plan"), "-o", "s.json"]);
    let mut client = McpClient::connect(t.dir(), &["s.json"]);

    let data = client.data("startNextTask", json!({"assignee": null}));
    assert_eq!(data["task"]["key"], "open");
    client.data(
        "completeTask",
        json!({"task_id": null, "result": "Opened jd.com"}),
    );
    let data = client.data(
        "addTask",
        json!({"name": "Close the popup", "dependencies": null, "reasoning": null,
               "after_task_id": "open", "assignee": null, "description": null}),
    );
    let popup = data["new_task"]["id"].clone();
    assert_eq!(data["new_task"]["dependencies"], json!([1]));
    // `updates` given, the direct fields null; then the other way round.
    client.data(
        "updateTask",
        json!({"task_id": popup, "updates": {"name": "Close the coupon popup", "dependencies": null,
               "reasoning": null, "assignee": null, "description": null},
               "name": null, "dependencies": null, "reasoning": null, "assignee": null, "description": null}),
    );
    let data = client.data(
        "updateTask",
        json!({"task_id": popup, "updates": null, "name": null, "dependencies": null,
               "reasoning": "A coupon popup covers the page", "assignee": null, "description": null}),
    );
    let task = &data["updated_task"];
    assert_eq!(task["name"], "Close the coupon popup");
    assert_eq!(task["reasoning"], "A coupon popup covers the page");
    assert_eq!(
        task["dependencies"],
        json!([1]),
        "null dependencies change nothing"
    );
    let data = client.data("getTaskList", json!({"status": null, "assignee": null}));
    assert_eq!(data["tasks"].as_array().unwrap().len(), 6);

    // replan with every optional field of a step null, and a retry.
    client.data(
        "replan",
        json!({"steps": [
            {"name": "Search again", "key": "again", "dependencies": null, "reasoning": null,
             "description": null, "assignee": null, "optional": null, "retry": 1},
            "Add the keyboard to the cart",
        ]}),
    );
    let data = client.data("startNextTask", json!({"assignee": null}));
    assert_eq!(data["task"]["key"], "again");
    // should_retry: null is the default, true: the task goes back to pending.
    let data = client.data(
        "failTask",
        json!({"task_id": null, "error_message": "timed out", "should_retry": null}),
    );
    assert_eq!(data["will_retry"], true, "{data}");
    assert_eq!(
        statuses(&t),
        [("open", "completed"), ("again", "pending"), ("", "pending"),]
            .map(|(k, s)| (k.to_owned(), s.to_owned()))
    );

    assert!(client.close().success());
}
