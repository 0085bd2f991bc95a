//! Property tests of the runner: random plans and random operations.

use proptest::prelude::*;

use super::plan;
use crate::document::TaskStatus;
use crate::runner::*;

/// A random DAG: task `i` depends on some tasks before it.
pub(super) fn dag() -> impl Strategy<Value = Vec<Vec<u32>>> {
    (1usize..40).prop_flat_map(|n| {
        (0..n)
            .map(|i| proptest::collection::vec(0..(i as u32).max(1), 0..4.min(i + 1)))
            .collect::<Vec<_>>()
            .prop_map(|deps| {
                deps.into_iter()
                    .enumerate()
                    .map(|(i, d)| {
                        let mut d: Vec<u32> = d
                            .into_iter()
                            .filter(|&x| (x as usize) < i)
                            .map(|x| x + 1)
                            .collect();
                        d.sort_unstable();
                        d.dedup();
                        d
                    })
                    .collect()
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::generate::fuzz_cases(256)))]

    #[test]
    fn random_dags_run_each_task_once_after_its_dependencies(deps in dag(), parallel in 1usize..4) {
        let slices: Vec<&[u32]> = deps.iter().map(Vec::as_slice).collect();
        let mut r = Runner::new(plan(&slices)).unwrap();
        let n = deps.len();
        let mut finished = vec![false; n + 1];
        let mut started = vec![0; n + 1];
        let mut running: Vec<u32> = Vec::new();
        loop {
            while running.len() < parallel {
                let data = r.apply(&Op::StartNextTask(StartNextArgs::default())).unwrap().data.to_json();
                let Some(id) = data["task"]["id"].as_u64() else { break };
                let id = id as u32;
                started[id as usize] += 1;
                for d in &deps[id as usize - 1] {
                    prop_assert!(finished[*d as usize], "task {} started before its dependency {}", id, d);
                }
                running.push(id);
            }
            let Some(id) = running.pop() else { break };
            r.apply(&Op::CompleteTask(CompleteArgs { task_id: Some(TaskRef::Id(id)), result: None, attachments: None })).unwrap();
            finished[id as usize] = true;
        }
        prop_assert!(started[1..].iter().all(|&s| s == 1), "{:?}", started);
        prop_assert_eq!(r.document().state.status, crate::document::PlanStatus::Completed);
        prop_assert_eq!(r.document().state.revision, 2 * n as u64);
    }
}

impl Runner {
    /// The incremental indexes agree with indexes built afresh.
    pub(super) fn assert_consistent(&self) {
        let fresh = index::Index::build(&self.doc).expect("the document stays consistent");
        assert_eq!(fresh.ready, self.index.ready, "ready set");
        assert_eq!(fresh.unmet, self.index.unmet, "unmet counts");
        assert_eq!(fresh.counts, self.index.counts, "status counts");
        assert_eq!(
            fresh.failed_required, self.index.failed_required,
            "failed required"
        );
        assert_eq!(fresh.position, self.index.position, "positions");
        assert_eq!(fresh.keys, self.index.keys, "keys");
        assert_eq!(fresh.max_id, self.index.max_id, "largest id");
        assert_eq!(fresh.dependents, self.index.dependents, "dependents");
    }
}

/// One random action of the property test below.
#[derive(Clone, Debug)]
enum Action {
    StartNext,
    Complete(usize),
    Fail(usize, bool),
    Skip(usize),
    Add(Vec<usize>, Option<usize>),
    Remove(usize),
    Update(usize, Vec<usize>),
}

fn action() -> impl Strategy<Value = Action> {
    prop_oneof![
        4 => Just(Action::StartNext),
        4 => any::<usize>().prop_map(Action::Complete),
        2 => (any::<usize>(), any::<bool>()).prop_map(|(i, r)| Action::Fail(i, r)),
        1 => any::<usize>().prop_map(Action::Skip),
        1 => (proptest::collection::vec(any::<usize>(), 0..3), proptest::option::of(any::<usize>()))
            .prop_map(|(d, a)| Action::Add(d, a)),
        1 => any::<usize>().prop_map(Action::Remove),
        1 => (any::<usize>(), proptest::collection::vec(any::<usize>(), 0..3)).prop_map(|(i, d)| Action::Update(i, d)),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(crate::generate::fuzz_cases(256)))]

    /// Random plans (retries, optional tasks) under random operations, edits
    /// included: indexes stay exact, refused operations change nothing, a task
    /// only starts when its dependencies allow it, and the plan always ends
    /// completed or failed.
    #[test]
    fn random_operations_keep_the_runner_consistent(
        deps in dag(),
        flags in proptest::collection::vec((0u32..3, any::<bool>()), 40),
        actions in proptest::collection::vec(action(), 0..60),
    ) {
        let slices: Vec<&[u32]> = deps.iter().map(Vec::as_slice).collect();
        let mut doc = plan(&slices);
        for (task, (retry, optional)) in doc.tasks.iter_mut().zip(flags) {
            task.retry.max = Some(retry);
            task.optional = optional;
        }
        let mut r = Runner::new(doc).unwrap();
        let ids = |r: &Runner| r.document().tasks.iter().map(|t| t.id).collect::<Vec<u32>>();
        let in_progress = |r: &Runner| {
            r.document().tasks.iter().filter(|t| t.status == TaskStatus::InProgress).map(|t| t.id).collect::<Vec<u32>>()
        };
        let pick = |list: &[u32], i: usize| list.get(i % list.len().max(1)).copied().unwrap_or(1);
        for action in actions {
            let all = ids(&r);
            let op = match &action {
                Action::StartNext => Op::StartNextTask(StartNextArgs::default()),
                Action::Complete(i) => Op::CompleteTask(CompleteArgs { task_id: Some(TaskRef::Id(pick(&in_progress(&r), *i))), result: None, attachments: None }),
                Action::Fail(i, retry) => Op::FailTask(FailArgs { task_id: Some(TaskRef::Id(pick(&in_progress(&r), *i))), error_message: None, should_retry: *retry }),
                Action::Skip(i) => Op::SkipTask(SkipArgs { task_id: TaskRef::Id(pick(&all, *i)), reason: None }),
                Action::Add(d, after) => Op::AddTask(AddArgs {
                    name: "added".to_owned(),
                    dependencies: Some(d.iter().map(|&i| TaskRef::Id(pick(&all, i))).collect()),
                    after_task_id: after.map(|a| TaskRef::Id(pick(&all, a))),
                    ..AddArgs::default()
                }),
                Action::Remove(i) => Op::RemoveTask(TaskIdArgs { task_id: TaskRef::Id(pick(&all, *i)) }),
                Action::Update(i, d) => Op::UpdateTask(UpdateArgs {
                    task_id: TaskRef::Id(pick(&all, *i)),
                    updates: None,
                    name: None,
                    dependencies: Some(d.iter().map(|&i| TaskRef::Id(pick(&all, i))).collect()),
                    reasoning: None,
                    assignee: None,
                    description: None,
                }),
            };
            let before = r.document().clone();
            match r.apply(&op) {
                Ok(applied) => {
                    if let Some(id) = applied.data.to_json()["task"]["id"].as_u64().filter(|_| matches!(action, Action::StartNext)) {
                        let task = &before.tasks[before.tasks.iter().position(|t| t.id == id as u32).unwrap()];
                        for d in &task.dependencies {
                            let dep = before.tasks.iter().find(|t| t.id == *d).unwrap();
                            prop_assert!(index::satisfies(dep), "task {} started before {} ({:?})", id, d, dep.status);
                        }
                    }
                    prop_assert_eq!(r.document().state.revision, before.state.revision + u64::from(applied.changed()));
                }
                Err(_) => prop_assert_eq!(r.document(), &before),
            }
            r.assert_consistent();
        }
        // Drive to the end: start and complete whatever can run.
        for _ in 0..10_000 {
            let data = r.apply(&Op::StartNextTask(StartNextArgs::default())).unwrap().data.to_json();
            let next = data["task"]["id"].as_u64().map(|id| id as u32).or_else(|| in_progress(&r).first().copied());
            let Some(id) = next else { break };
            r.apply(&Op::CompleteTask(CompleteArgs { task_id: Some(TaskRef::Id(id)), result: None, attachments: None })).unwrap();
        }
        r.assert_consistent();
        let status = r.document().state.status;
        let empty = r.document().tasks.is_empty();
        prop_assert!(
            matches!(status, crate::document::PlanStatus::Completed | crate::document::PlanStatus::Failed)
                || (empty && status != crate::document::PlanStatus::Running),
            "the plan ended {:?}", status
        );
        if status == crate::document::PlanStatus::Failed {
            prop_assert!(r.index.failed_required > 0);
        }
    }
}
