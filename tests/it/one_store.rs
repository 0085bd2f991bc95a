//! One store interface: a state file is one more backend of `PlanStore`,
//! so `planc run` says the same of a plan of `--store` as of a state file —
//! down to `observe` creating the plan a reply declares.

use crate::support::Test;

/// `observe` of a reply that declares steps creates the plan where it is
/// missing, in a store as in a state file (a store's plan was refused with
/// PLAN_NOT_FOUND when `observe` was written twice).
#[test]
fn observe_creates_the_plan_a_reply_declares_in_a_store_as_in_a_state_file() {
    let t = Test::temp();
    let reply = "[Step] Compare prices\n[Step] Pay\n";
    let store = ["--store", "sqlite:plans.db", "--plan-id", "new"];
    let file = t.planc_with_stdin(&["run", "--json", "observe", "new.json"], reply);
    let plan = t.planc_with_stdin(&[&["run", "--json", "observe"][..], &store].concat(), reply);
    assert_eq!((file.code, plan.code), (0, 0), "{}", plan.stdout);
    let same = |text: &str| {
        let mut value: serde_json::Value = serde_json::from_str(text).unwrap();
        value["data"]["events"] = serde_json::Value::Null;
        value
    };
    assert_eq!(same(&plan.stdout), same(&file.stdout));
    let status = t.ok(&[&["status"][..], &store].concat());
    assert_eq!(
        (&status["total_tasks"], &status["current_task_id"]),
        (&2.into(), &1.into())
    );
    let list = t.ok(&[&["list"][..], &store].concat());
    assert_eq!(list["tasks"][0]["name"], "Compare prices");

    // A reply that plans nothing needs no plan: none is made.
    let nothing = t.planc_with_stdin(
        &[
            "run",
            "--json",
            "observe",
            "--store",
            "sqlite:plans.db",
            "--plan-id",
            "none",
        ],
        "Thinking.\n",
    );
    assert_eq!(nothing.code, 1);
    let error = &nothing.json()["error"];
    assert_eq!(error["code"], "PLAN_NOT_FOUND");
    assert!(
        error["message"]
            .as_str()
            .unwrap()
            .starts_with("plan `none` does not exist yet;"),
        "{error}"
    );
    let missing = t.planc(&[
        "run",
        "status",
        "--store",
        "sqlite:plans.db",
        "--plan-id",
        "none",
    ]);
    assert_eq!(
        missing.stderr,
        "error[PLAN_NOT_FOUND]: no plan `none` in this store\n"
    );
}
