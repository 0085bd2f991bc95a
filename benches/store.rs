//! Plan store benchmarks: 16 concurrent agents changing one plan, each
//! starting a task and completing it over and over, through each store.
//!
//! - `sqlite_16_agents`: one SQLite file, one store handle (one server);
//! - `postgres_two_servers_16_agents`: two store handles (two servers, 8
//!   agents each) on one PostgreSQL database of a throwaway cluster (fsync
//!   on), both subscribed: every event must reach both;
//! - `postgres_16_plans`: the same, 16 agents on 16 plans (one each);
//! - `sqlite_reads_16_readers`: 16 threads loading the plan (`getPlanStatus`);
//! - `json_dir_16_agents`: the state-file baseline;
//! - `json_dir_16_agents_after_1600_changes`: the same in a directory with a
//!   history (16 other plans of 100 changes each).
//!
//! Each iteration checks that no update was lost (the final revision and
//! every task completed). The counter is state changes (or reads): divan
//! prints them per second.
//!
//! Run: `cargo bench --bench store` (figures in docs/serve.md). Without
//! PostgreSQL (`initdb`) the PostgreSQL benchmarks say so and measure nothing.

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

#[path = "../tests/store_support/mod.rs"]
mod store_support;

use std::sync::mpsc::Receiver;
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

use divan::counter::ItemsCount;
use divan::Bencher;
use planc::document::TaskStatus;
use planc::runner::{
    open_store, Caller, CompleteArgs, LogArgs, LogKind, NoArgs, Op, PlanStore, StartNextArgs,
    StoredEvent,
};
use store_support::{compile, wide_plan, Cluster};

fn main() {
    divan::main();
    // The PostgreSQL cluster, if one was started, stops here.
    if let Some(cluster) = CLUSTER.get() {
        drop(
            cluster
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
    }
}

const AGENTS: usize = 16;
/// Tasks each agent starts and completes per iteration (two changes each).
const ROUNDS: usize = 20;
const CHANGES: usize = AGENTS * ROUNDS * 2;

/// `AGENTS` agents on `stores` (agent `a` uses `stores[a % len]`), each
/// starting and completing `ROUNDS` tasks of plan `plans[a % plans.len()]`.
fn agents(stores: &[Arc<dyn PlanStore>], plans: &[String]) {
    let workers: Vec<_> = (0..AGENTS)
        .map(|a| {
            let store = Arc::clone(&stores[a % stores.len()]);
            let plan = plans[a % plans.len()].clone();
            std::thread::spawn(move || {
                let caller = Caller::agent(Some(format!("agent-{a}")));
                let next = Op::StartNextTask(StartNextArgs { assignee: None });
                let complete = Op::CompleteTask(CompleteArgs {
                    task_id: None,
                    result: Some("done".to_owned()),
                    attachments: None,
                });
                for _ in 0..ROUNDS {
                    assert!(store.apply(&plan, &next, &caller).unwrap().changed());
                    store.apply(&plan, &complete, &caller).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
}

/// Creates plans `plans` of `tasks` tasks each in `store`.
fn create(store: &dyn PlanStore, plans: &[String], tasks: usize) {
    let doc = compile(&wide_plan(tasks));
    for plan in plans {
        store.create(plan, doc.clone(), true).unwrap();
    }
}

/// No update lost: every task completed, one revision per change.
fn check(store: &dyn PlanStore, plans: &[String], changes_each: usize) {
    for plan in plans {
        let doc = store.load(plan).unwrap();
        assert_eq!(doc.state.revision as usize, 1 + changes_each, "{plan}");
        assert!(doc.tasks.iter().all(|t| t.status == TaskStatus::Completed));
        let events = store.events(plan, 0, 1_000_000).unwrap();
        assert_eq!(events.len(), 1 + changes_each, "{plan}");
    }
}

/// Waits until `rx` has brought `n` events of `plans` (and no other
/// event of them twice).
fn seen(rx: &Receiver<StoredEvent>, plans: &[String], n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut got = std::collections::HashSet::new();
    while got.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = rx
            .recv_timeout(left)
            .unwrap_or_else(|e| panic!("{} of {n} events arrived ({e})", got.len()));
        if plans.contains(&event.plan_id) && event.seq > 1 {
            assert!(
                got.insert((event.plan_id, event.seq)),
                "an event came twice"
            );
        }
    }
}

fn one_plan() -> Vec<String> {
    vec!["busy".to_owned()]
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn sqlite_16_agents(bencher: Bencher<'_, '_>) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(&format!("sqlite:{}", dir.path().join("b.db").display())).unwrap();
    let plans = one_plan();
    bencher
        .counter(ItemsCount::new(CHANGES))
        .with_inputs(|| create(&*store, &plans, AGENTS * ROUNDS))
        .bench_local_values(|()| {
            agents(std::slice::from_ref(&store), &plans);
            check(&*store, &plans, CHANGES);
        });
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn sqlite_reads_16_readers(bencher: Bencher<'_, '_>) {
    const READS: usize = 200;
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(&format!("sqlite:{}", dir.path().join("r.db").display())).unwrap();
    create(&*store, &one_plan(), 40);
    bencher
        .counter(ItemsCount::new(AGENTS * READS))
        .bench_local(|| {
            let readers: Vec<_> = (0..AGENTS)
                .map(|_| {
                    let store = Arc::clone(&store);
                    std::thread::spawn(move || {
                        for _ in 0..READS {
                            let status = Op::GetPlanStatus(NoArgs {});
                            store.apply("busy", &status, &Caller::default()).unwrap();
                        }
                    })
                })
                .collect();
            for reader in readers {
                reader.join().unwrap();
            }
        });
}

/// The cluster of the PostgreSQL benchmarks (fsync on, the default),
/// started by the first of them, stopped when they are all done.
static CLUSTER: OnceLock<Mutex<Option<Cluster>>> = OnceLock::new();

/// A new database on the benchmarks' cluster: its URL (`None` without
/// PostgreSQL).
fn database() -> Option<String> {
    let cluster = CLUSTER.get_or_init(|| Mutex::new(Cluster::start(&[])));
    let cluster = cluster.lock().unwrap_or_else(PoisonError::into_inner);
    cluster.as_ref().map(Cluster::database)
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn postgres_two_servers_16_agents(bencher: Bencher<'_, '_>) {
    let Some(url) = database() else { return };
    let servers = [open_store(&url).unwrap(), open_store(&url).unwrap()];
    let plans = one_plan();
    bencher
        .counter(ItemsCount::new(CHANGES))
        .with_inputs(|| {
            create(&*servers[0], &plans, AGENTS * ROUNDS);
            // Subscribed after the plan is made: its changes only.
            (servers[0].subscribe(), servers[1].subscribe())
        })
        .bench_local_values(|(rx1, rx2)| {
            agents(&servers, &plans);
            check(&*servers[1], &plans, CHANGES);
            seen(&rx1, &plans, CHANGES);
            seen(&rx2, &plans, CHANGES);
        });
}

#[divan::bench(sample_count = 5, sample_size = 1)]
fn postgres_16_plans(bencher: Bencher<'_, '_>) {
    let Some(url) = database() else { return };
    let servers = [open_store(&url).unwrap(), open_store(&url).unwrap()];
    let plans: Vec<String> = (0..AGENTS).map(|p| format!("plan-{p}")).collect();
    bencher
        .counter(ItemsCount::new(CHANGES))
        .with_inputs(|| create(&*servers[0], &plans, ROUNDS))
        .bench_local_values(|()| {
            agents(&servers, &plans);
            check(&*servers[1], &plans, ROUNDS * 2);
        });
}

#[divan::bench(sample_count = 3, sample_size = 1)]
fn json_dir_16_agents(bencher: Bencher<'_, '_>) {
    let dir = tempfile::tempdir().unwrap();
    let store = open_store(&format!("dir:{}", dir.path().display())).unwrap();
    json_dir_agents(bencher, store);
}

/// The same, in a directory with a history: 16 other plans of 100 changes
/// each (made through their state files, then read into the feed once).
/// A change's cost must not grow with it.
#[divan::bench(sample_count = 3, sample_size = 1)]
fn json_dir_16_agents_after_1600_changes(bencher: Bencher<'_, '_>) {
    const PLANS: usize = 16;
    const CHANGES_EACH: usize = 100;
    let dir = tempfile::tempdir().unwrap();
    let doc = compile(&wide_plan(2));
    let note = Op::LogEvent(LogArgs {
        kind: LogKind::Message,
        data: "an older change".into(),
        task_id: None,
    });
    for p in 0..PLANS {
        let state = planc::runner::Store::new(dir.path().join(format!("old-{p}.json")));
        state.create(doc.clone(), false).unwrap();
        for _ in 0..CHANGES_EACH {
            state.apply(&note).unwrap();
        }
    }
    let store = open_store(&format!("dir:{}", dir.path().display())).unwrap();
    let history = store.feed(0, usize::MAX).unwrap();
    assert_eq!(history.len(), PLANS * (1 + CHANGES_EACH));
    json_dir_agents(bencher, store);
}

/// 16 agents starting and completing 5 tasks each on one plan of `store`.
fn json_dir_agents(bencher: Bencher<'_, '_>, store: Arc<dyn PlanStore>) {
    const ROUNDS_HERE: usize = 5;
    bencher
        .counter(ItemsCount::new(AGENTS * ROUNDS_HERE * 2))
        .with_inputs(|| {
            store
                .create("busy", compile(&wide_plan(AGENTS * ROUNDS_HERE)), true)
                .unwrap();
        })
        .bench_local_values(|()| {
            let workers: Vec<_> = (0..AGENTS)
                .map(|a| {
                    let store = Arc::clone(&store);
                    std::thread::spawn(move || {
                        let caller = Caller::agent(Some(format!("agent-{a}")));
                        for _ in 0..ROUNDS_HERE {
                            let next = Op::StartNextTask(StartNextArgs { assignee: None });
                            store.apply("busy", &next, &caller).unwrap();
                            let complete = Op::CompleteTask(CompleteArgs {
                                task_id: None,
                                result: None,
                                attachments: None,
                            });
                            store.apply("busy", &complete, &caller).unwrap();
                        }
                    })
                })
                .collect();
            for worker in workers {
                worker.join().unwrap();
            }
        });
}
