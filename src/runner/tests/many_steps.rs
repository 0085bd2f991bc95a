//! A reply that declares many `[Step]` lines: added in time linear in the
//! steps and the plan, and refused whole past `MAX_STEPS_PER_MESSAGE`.

use super::*;

fn actions(applied: &Applied) -> Vec<String> {
    let data = applied.data.to_json();
    serde_json::from_value(data["actions"].clone()).unwrap()
}

#[test]
fn steps_said_again_are_told_in_the_order_of_the_reply() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    let applied = observe(
        &mut r,
        "[Step] Open the page\n[Step] Task 1\n[Step] Read it\n[Step] 2. open the page.\n[Step] Sum up",
        &Caller::default(),
    )
    .unwrap();
    let names: Vec<&str> = r.document().tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["task 1", "Open the page", "Read it", "Sum up"]);
    let dependencies: Vec<&[u32]> = r
        .document()
        .tasks
        .iter()
        .map(|t| t.dependencies.as_slice())
        .collect();
    assert_eq!(dependencies, [&[][..], &[1], &[2], &[3]]);
    assert_eq!(
        actions(&applied)[..5],
        [
            "Task 2 added",
            "Step \"Task 1\" is already task 1: not added again",
            "Task 3 added",
            "Step \"2. open the page.\" is already task 2: not added again",
            "Task 4 added",
        ]
    );
}

#[test]
fn the_most_steps_a_message_may_declare_are_added_in_one_round() {
    // Each step said twice: as many lines as a message may declare.
    let lines: String = (0..MAX_STEPS_PER_MESSAGE / 2)
        .map(|i| format!("[Step] step {i}\n[Step] Step {i}.\n"))
        .collect();
    let mut r = Runner::new(plan(&[])).unwrap();
    let applied = observe(&mut r, &lines, &Caller::default()).unwrap();
    let tasks = &r.document().tasks;
    assert_eq!(tasks.len(), 5_000);
    assert_eq!(tasks[4_999].name, "step 4999");
    assert_eq!(tasks[4_999].dependencies, [4_999]);
    let actions = actions(&applied);
    assert_eq!(actions[0], "Task 1 added");
    assert_eq!(
        actions[3],
        "Step \"Step 1.\" is already task 2: not added again"
    );
    assert_eq!(
        applied
            .events
            .iter()
            .filter(|e| e.kind == EventKind::Added)
            .count(),
        5_000
    );
}

#[test]
fn a_message_of_sixteen_thousand_steps_is_refused_and_changes_nothing() {
    let lines: String = (0..16_000).map(|i| format!("[Step] step {i}\n")).collect();
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    let before = r.document().clone();
    let error = observe(&mut r, &lines, &Caller::default()).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidArgument);
    assert_eq!(
        error.message,
        "the message declares 16000 steps (`[Step]` lines); at most 10000 are read from one message: declare the plan over several messages"
    );
    assert_eq!(error.details, json!({"steps": 16_000, "max": 10_000}));
    assert_eq!(*r.document(), before);
}

#[test]
fn steps_may_be_declared_as_list_items() {
    let mut r = Runner::new(plan(&[&[]])).unwrap();
    observe(
        &mut r,
        "Plan:\n1. [Step] Open the page\n2) [Step] Read it\n- [Step] Sum up\n  * [Step] Send it\n• [Step] File it\n3.[Step] glued to its number\nsee 4. [Step] mid-line",
        &Caller::default(),
    )
    .unwrap();
    let names: Vec<&str> = r.document().tasks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "task 1",
            "Open the page",
            "Read it",
            "Sum up",
            "Send it",
            "File it"
        ]
    );
}
