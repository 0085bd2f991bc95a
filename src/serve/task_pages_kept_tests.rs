//! The reads answered from a kept runner's view are the pass's, byte for
//! byte: random plans (declared, undeclared and no steps; holders; random
//! order of steps), random changes, every kind of query after each.

use serde_json::{json, Value};

use super::*;
use crate::document::{Meta, PlanDocument, StepDoc, TaskDoc};
use crate::runner::{Caller, Op, Runner};
use crate::serve::task_pages::summary;

/// A small deterministic generator (xorshift).
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

const STEPS: [Option<&str>; 5] = [None, Some("a"), Some("b"), Some("c"), Some("zz")];

fn plan(rng: &mut Rng) -> PlanDocument {
    let n = 1 + rng.below(30);
    let tasks = (1..=n as u32)
        .map(|id| {
            let deps = match (id > 1, rng.below(4)) {
                (true, 0) => vec![1 + rng.below(id as usize - 1) as u32],
                _ => Vec::new(),
            };
            let mut task = TaskDoc::pending(id, format!("Task {id}"), deps);
            task.step = STEPS[rng.below(STEPS.len())].map(str::to_owned);
            task.optional = rng.below(3) == 0;
            task
        })
        .collect();
    let mut doc = PlanDocument::new(Meta::new("p", "g"), tasks);
    doc.steps = ["a", "b", "c"]
        .iter()
        .filter(|_| rng.below(4) != 0)
        .map(|id| StepDoc {
            id: (*id).to_owned(),
            name: format!("Step {id}"),
            tasks: Vec::new(),
        })
        .collect();
    doc
}

fn op(rng: &mut Rng, max_id: u32) -> Op {
    let id = 1 + rng.below(max_id as usize + 2);
    let step = STEPS[rng.below(STEPS.len())];
    let op = match rng.below(12) {
        0..=2 => json!({"op": "startNextTask"}),
        3 | 4 => json!({"op": "completeTask", "task_id": id}),
        5 => json!({"op": "failTask", "task_id": id, "should_retry": rng.below(2) == 0}),
        6 => json!({"op": "skipTask", "task_id": id}),
        7 => json!({"op": "retryTask", "task_id": id}),
        8 => match rng.below(2) {
            0 => json!({"op": "addTask", "name": format!("new {step:?}")}),
            _ => json!({"op": "addTask", "name": "inserted", "after_task_id": id}),
        },
        9 => json!({"op": "updateTask", "task_id": id, "name": format!("renamed {id}")}),
        10 => match rng.below(3) {
            0 => json!({"op": "resetPlan"}),
            _ => json!({"op": "removeTask", "task_id": id}),
        },
        _ => json!({"op": "startTask", "task_id": id}),
    };
    serde_json::from_value(op).unwrap()
}

fn queries(rng: &mut Rng, max_id: u32) -> Vec<String> {
    let id = 1 + rng.below(max_id as usize + 1);
    let offset = rng.below(12);
    let limit = rng.below(6);
    let mut queries: Vec<String> = [
        "",
        "groups=true",
        "status=in_progress&limit=200",
        "status=in_progress&groups=true",
        "status=completed,skipped&groups=true",
        "status=pending,failed",
        "step=a&groups=true",
        "step=-&groups=true",
        "step=zz",
        "step=c&status=pending&groups=true",
        "holder=a1&groups=true",
        "holder=nobody",
        "held=true&groups=true",
        "held=true&status=completed",
        "held=false",
        "q=task%201&groups=true",
        "after=999",
        "status=in_progress&after=999",
        "limit=0&groups=true",
        "offset=1000&groups=true",
    ]
    .iter()
    .map(|q| (*q).to_owned())
    .collect();
    for base in [
        "",
        "status=pending&",
        "status=in_progress&",
        "step=b&",
        "held=true&",
    ] {
        queries.push(format!("{base}offset={offset}&limit={limit}&groups=true"));
        queries.push(format!("{base}after={id}&limit={limit}&groups=true"));
        queries.push(format!("{base}id={id}&groups=true"));
    }
    queries
}

/// The kept answers and the pass's, as text.
fn compare(runner: &mut Runner, queries: &[&String], at: &str) {
    let doc = runner.document().clone();
    let kept = runner.kept_plan();
    assert_eq!(
        kept_summary("p", &kept).to_string(),
        summary("p", &doc).to_string(),
        "summary {at}"
    );
    for raw in queries {
        let query = TaskQuery::parse(Some(raw)).unwrap();
        let text = |page: Result<Value, crate::runner::OpError>| match page {
            Ok(page) => page.to_string(),
            Err(error) => format!("{} {} {}", error.code, error.message, error.details),
        };
        assert_eq!(
            text(kept_page("p", &kept, &query).0),
            text(task_page("p", &doc, &query)),
            "query `{raw}` {at}"
        );
    }
}

#[test]
fn kept_reads_are_the_pass_s_answers_byte_for_byte() {
    for seed in 1..=10u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
        let Ok(mut runner) = Runner::new(plan(&mut rng)) else {
            continue;
        };
        for step in 0..25 {
            let max_id = runner
                .document()
                .tasks
                .iter()
                .map(|t| t.id)
                .max()
                .unwrap_or(1);
            let all = queries(&mut rng, max_id);
            // A few of the queries each time (a debug build's pass costs).
            let queries: Vec<&String> = (0..6).map(|_| &all[rng.below(all.len())]).collect();
            let agent = ["a0", "a1", "a2"][rng.below(3)];
            let caller = match rng.below(5) {
                0 => Caller::default(),
                _ => Caller::agent(Some(agent.to_owned())),
            };
            let _ = runner.apply_as(&op(&mut rng, max_id), &caller);
            // The store takes what a change touched after it; a read may
            // come before (what is pending is taken in too).
            if rng.below(3) != 0 {
                runner.take_touched();
            }
            compare(&mut runner, &queries, &format!("seed {seed} step {step}"));
        }
    }
}

#[test]
fn the_kept_window_of_a_large_plan_reads_only_its_tasks() {
    let tasks = (1..=2000)
        .map(|id| {
            let mut task = TaskDoc::pending(id, format!("Task {id}"), Vec::new());
            task.step = Some(format!("s{}", (id - 1) / 100));
            task
        })
        .collect();
    let mut doc = PlanDocument::new(Meta::new("p", "g"), tasks);
    doc.steps = (0..20)
        .map(|s| StepDoc {
            id: format!("s{s}"),
            name: format!("Step {s}"),
            tasks: Vec::new(),
        })
        .collect();
    let mut runner = Runner::new(doc).unwrap();
    let start: Op = serde_json::from_value(json!({"op": "startNextTask"})).unwrap();
    for _ in 0..3 {
        runner
            .apply_as(&start, &Caller::agent(Some("a1".to_owned())))
            .unwrap();
        runner.take_touched();
    }
    let kept = runner.kept_plan();
    let query = TaskQuery::parse(Some("offset=1500&limit=2&groups=true")).unwrap();
    let (page, pass) = kept_page("p", &kept, &query);
    let page = page.unwrap();
    assert!(!pass, "an unfiltered window is read from the view");
    assert_eq!(page["tasks"][0]["id"], 1501);
    assert_eq!(page["groups"][0]["matched"], 100);
    let held = TaskQuery::parse(Some("status=in_progress")).unwrap();
    let (page, pass) = kept_page("p", &kept, &held);
    assert!(!pass);
    assert_eq!(page.unwrap()["matched"], 3);
    assert_eq!(
        kept_summary("p", &kept)["holders"],
        json!([{"agent": "a1", "tasks": 3}])
    );
}
