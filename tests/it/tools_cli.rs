//! `planc tools`: the runner's tools as MCP, OpenAI and Anthropic definitions.

use crate::support::Test;
use serde_json::Value;

const NAMES: [&str; 21] = [
    "getCurrentTask",
    "startNextTask",
    "startTask",
    "completeTask",
    "failTask",
    "skipTask",
    "addTask",
    "updateTask",
    "removeTask",
    "getTaskById",
    "getTaskList",
    "getExecutableTaskList",
    "getPlanStatus",
    "pausePlan",
    "resumePlan",
    "resetPlan",
    "replan",
    "retryTask",
    "heartbeat",
    "logEvent",
    "observe",
];

fn tools(format: &str) -> Value {
    let run = Test::temp().planc(&["tools", "--format", format]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

fn check_schema(name: &str, schema: &Value) {
    assert_eq!(schema["type"], "object", "{name}");
    assert!(schema["properties"].is_object(), "{name}");
    assert!(
        !schema.to_string().contains("$ref"),
        "{name}: schemas are inlined"
    );
    jsonschema::meta::validate(schema).unwrap_or_else(|e| panic!("{name}: not a JSON Schema: {e}"));
}

#[test]
fn openai_function_tools() {
    let tools = tools("openai");
    let tools = tools.as_array().unwrap();
    let names: Vec<&str> = tools
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, NAMES);
    for tool in tools {
        assert_eq!(tool["type"], "function");
        assert_eq!(tool["function"]["strict"], true);
        check_schema(
            tool["function"]["name"].as_str().unwrap(),
            &tool["function"]["parameters"],
        );
    }
    // The text an LLM reads: a change in wording is a reviewed diff.
    insta::assert_snapshot!("tools_openai", serde_json::to_string_pretty(tools).unwrap());
}

/// OpenAI's schemas are these made strict (tests/it/tools_strict.rs).
#[test]
fn anthropic_and_mcp_tools_carry_the_same_schemas() {
    let openai = tools("openai");
    let anthropic = tools("anthropic");
    let mcp = tools("mcp");
    for (i, name) in NAMES.iter().enumerate() {
        assert_eq!(openai[i]["function"]["name"], *name);
        let schema = &mcp["tools"][i]["inputSchema"];
        assert_eq!(anthropic[i]["name"], *name);
        assert_eq!(&anthropic[i]["input_schema"], schema);
        assert_eq!(mcp["tools"][i]["name"], *name);
        check_schema(name, schema);
    }
    assert_eq!(mcp["tools"][12]["annotations"]["readOnlyHint"], true);
    assert_eq!(mcp["tools"][15]["annotations"]["destructiveHint"], true);
}

#[test]
fn schemas_accept_seed_arguments() {
    let mcp = tools("mcp");
    let schema = |name: &str| {
        let i = NAMES.iter().position(|n| *n == name).unwrap();
        jsonschema::validator_for(&mcp["tools"][i]["inputSchema"]).unwrap()
    };
    let add = schema("addTask");
    assert!(add.is_valid(&serde_json::json!({"name": "Close the popup", "dependencies": [2], "reasoning": "r", "after_task_id": 2})));
    assert!(
        !add.is_valid(&serde_json::json!({"dependencies": [2]})),
        "name is required"
    );
    let fail = schema("failTask");
    assert!(fail.is_valid(
        &serde_json::json!({"task_id": "open", "error_message": "x", "should_retry": false})
    ));
    assert!(!fail.is_valid(&serde_json::json!({"should_retry": "no"})));
}

#[test]
fn unknown_format_is_a_usage_error() {
    assert_eq!(Test::temp().planc(&["tools", "--format", "xml"]).code, 2);
    assert_eq!(Test::temp().planc(&["tools", "--dialect", "xml"]).code, 2);
}

/// Each seed dialect's tools, by name, in the seed's order.
const DIALECTS: [(&str, &[&str]); 5] = [
    ("planc", &NAMES),
    (
        "tasks",
        &[
            "startNextTask",
            "completeCurrentTask",
            "addTask",
            "modifyTask",
            "skipTask",
            "failCurrentTask",
        ],
    ),
    (
        "plan-tool",
        &[
            "create_plan_from_structure",
            "get_task",
            "update_task_status",
            "get_ready_tasks",
            "get_tasks_for_role",
            "get_plan_status",
            "get_plan_structure",
            "delete_plan",
        ],
    ),
    ("steps", &["observe", "get_plan"]),
    (
        "plan-act",
        &[
            "create_plan",
            "update_plan",
            "get_plan",
            "start_step",
            "complete_step",
            "fail_step",
            "log_event",
        ],
    ),
];

fn dialect_tools(dialect: &str, format: &str) -> Value {
    let run = Test::temp().planc(&["tools", "--dialect", dialect, "--format", format]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    run.json()
}

#[test]
fn every_dialect_serves_its_seeds_tools() {
    for (dialect, names) in DIALECTS {
        let mcp = dialect_tools(dialect, "mcp");
        let tools = mcp["tools"].as_array().unwrap();
        let got: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
        assert_eq!(got, names, "{dialect}");
        for tool in tools {
            let name = format!("{dialect} {}", tool["name"]);
            check_schema(&name, &tool["inputSchema"]);
            check_schema(&name, &tool["outputSchema"]);
            assert_eq!(
                tool["inputSchema"]["additionalProperties"], false,
                "{name}: unknown arguments are refused"
            );
            assert!(tool["description"].as_str().unwrap().len() > 30, "{name}");
        }
        // The OpenAI (strict) and Anthropic shapes carry the same input schemas.
        let openai = dialect_tools(dialect, "openai");
        let anthropic = dialect_tools(dialect, "anthropic");
        for (i, tool) in tools.iter().enumerate() {
            let input = tool["inputSchema"].as_object().unwrap();
            let strict = Value::Object(planc::mcp::export::strict_schema(input));
            assert_eq!(openai[i]["function"]["name"], tool["name"]);
            assert_eq!(openai[i]["function"]["parameters"], strict);
            assert_eq!(anthropic[i]["input_schema"], tool["inputSchema"]);
        }
        // The exact definitions a model reads: a change is a reviewed diff.
        insta::assert_snapshot!(
            format!("tools_dialect_{dialect}"),
            serde_json::to_string_pretty(&mcp).unwrap()
        );
    }
}

#[test]
fn the_default_dialect_is_planc() {
    assert_eq!(tools("mcp"), dialect_tools("planc", "mcp"));
}
