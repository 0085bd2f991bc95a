//! The dialects' tables against the runner and the seed renderings.

use serde_json::json;

use crate::document::{PlanDocument, TaskStatus};
use crate::emit::{render, Target};
use crate::runner::{result_schema, ErrorCode, Op, Store};

use super::Dialect;

fn jd_plan() -> PlanDocument {
    let text = include_str!("../../../examples/jd_keyboard.plan");
    crate::compile("jd_keyboard.plan", text, &Default::default())
        .document()
        .expect("the example compiles")
}

#[test]
fn a_plan_act_step_is_the_step_build_writes() {
    let mut doc = jd_plan();
    let statuses = [
        TaskStatus::Completed,
        TaskStatus::Skipped,
        TaskStatus::Failed,
        TaskStatus::InProgress,
        TaskStatus::Pending,
    ];
    for (task, status) in doc.tasks.iter_mut().zip(statuses) {
        task.status = status;
        task.result = Some(format!("{status:?}"));
    }
    let built: serde_json::Value =
        serde_json::from_str(&render(&doc, Target::PlanAct)).expect("JSON");
    // The JD plan is a chain, so its linear order is its document order.
    for (i, task) in doc.tasks.iter().enumerate() {
        let step = serde_json::to_value(super::plan_act::step(task)).expect("JSON");
        // The export also carries a `planc` object (docs/interop.md): the
        // seed's own fields are what the dialect writes.
        let mut seed = built["steps"][i].clone();
        seed.as_object_mut().expect("a step").remove("planc");
        assert_eq!(step, seed, "{:?}", task.status);
    }
}

#[test]
fn every_dialect_refuses_tools_it_does_not_have() {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let store = Store::new(dir.path().join("state.json"));
    store.create(jd_plan(), false).expect("a state");
    for (name, dialect) in Dialect::ALL {
        let tools = dialect.tools();
        let mut names: Vec<&str> = tools.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), tools.len(), "{name}: a tool name twice");
        assert!(dialect.call(&store, "noSuchTool", json!({})).is_none());
        assert_eq!(Dialect::from_name(name), Some(dialect));
        assert_eq!(dialect.name(), name);
    }
    assert_eq!(store.load().expect("the state").state.revision, 1);
}

#[test]
fn unknown_arguments_are_refused_by_name() {
    let error = Op::from_call("completeTask", json!({"result_mesage": "typo"})).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument);
    assert_eq!(error.details, json!({"field": "result_mesage"}));
    let error = Op::from_call(
        "updateTask",
        json!({"task_id": 1, "updates": {"nmae": "x"}}),
    )
    .unwrap_err();
    assert_eq!(error.details, json!({"field": "nmae"}));
    // The operation's tag is not an argument.
    assert!(Op::from_call("getPlanStatus", json!({})).is_ok());
}

#[test]
fn every_planc_tool_declares_its_result_type() {
    for name in Op::NAMES.iter().chain(&["observe"]) {
        assert!(result_schema(name).is_some(), "{name}");
    }
    for tool in Dialect::Planc.tools() {
        let data = &tool.output_schema["properties"]["data"];
        assert!(
            data.get("properties").is_some() || data.get("anyOf").is_some(),
            "{}: {data}",
            tool.name
        );
    }
}

#[test]
fn output_schemas_are_strict_and_hold_for_real_results() {
    // A task in a result always has its status and retry: the schema says so.
    let started = &Dialect::Planc
        .tools()
        .into_iter()
        .find(|t| t.name == "getTaskById")
        .expect("getTaskById")
        .output_schema;
    let task = &started["properties"]["data"]["properties"]["task"];
    let required = task["required"].as_array().expect("required fields");
    for field in ["id", "name", "status", "dependencies", "retry"] {
        assert!(required.contains(&json!(field)), "{field}: {task}");
    }

    // Every tool of every dialect, called on a fresh plan: its answer fits
    // the schema it publishes.
    for (name, dialect) in Dialect::ALL {
        for tool in dialect.tools() {
            let dir = tempfile::tempdir().expect("a temporary directory");
            let store = Store::new(dir.path().join("state.json"));
            store.create(jd_plan(), false).expect("a state");
            let schema = serde_json::Value::Object(tool.output_schema.clone());
            let validator = jsonschema::validator_for(&schema).expect("a valid schema");
            for arguments in [json!({}), json!({"task_id": 1})] {
                let Some(outcome) = dialect.call(&store, tool.name, arguments) else {
                    continue;
                };
                // The seeds' dialects answer a refusal in their own error
                // shape, outside the result's schema; planc's envelope holds both.
                if outcome.is_error && dialect != Dialect::Planc {
                    continue;
                }
                let errors: Vec<String> = validator
                    .iter_errors(&outcome.content)
                    .map(|e| format!("{} at {}", e, e.instance_path))
                    .collect();
                assert!(errors.is_empty(), "{name} {}: {errors:#?}", tool.name);
            }
        }
    }
}
