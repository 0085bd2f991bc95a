//! Every plan store backend through one test body: create, list, load,
//! apply, delete, events, feed, subscribe, wrong ids, and 16 threads at once
//! losing no update.

use std::collections::BTreeMap;
use std::sync::mpsc::Receiver;
use std::sync::Arc;
use std::time::{Duration, Instant};

use planc::document::{PlanDocument, PlanStatus, TaskStatus};
use planc::runner::{
    open_store, Caller, CompleteArgs, ErrorCode, NoArgs, Op, OpResult, PlanStore, StartNextArgs,
    StoredEvent, TaskIdArgs, TaskRef,
};

use crate::store_support::{self, wide_plan, Backend};
use crate::support::{self, Test};

fn doc(tasks: usize) -> PlanDocument {
    store_support::compile(&wide_plan(tasks))
}

fn next(agent: &str) -> (Op, Caller) {
    (
        Op::StartNextTask(StartNextArgs { assignee: None }),
        Caller::agent(Some(agent.to_owned())),
    )
}

fn complete(agent: &str) -> (Op, Caller) {
    (
        Op::CompleteTask(CompleteArgs {
            task_id: None,
            result: Some(format!("done by {agent}")),
            attachments: None,
        }),
        Caller::agent(Some(agent.to_owned())),
    )
}

fn code<T: std::fmt::Debug>(result: Result<T, planc::runner::OpError>) -> ErrorCode {
    result.expect_err("an error").code
}

/// The whole feed once it has `n` events.
fn wait_for_feed(store: &dyn PlanStore, n: usize) -> Vec<StoredEvent> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let feed = store.feed(0, 100_000).unwrap();
        if feed.len() >= n || Instant::now() > deadline {
            return feed;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `n` events from a subscription.
fn receive(rx: &Receiver<StoredEvent>, n: usize) -> Vec<StoredEvent> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut got = Vec::new();
    while got.len() < n {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(event) => got.push(event),
            Err(e) => panic!("{} of {n} events arrived ({e})", got.len()),
        }
    }
    got
}

fn seqs(events: &[StoredEvent]) -> Vec<(String, u64)> {
    events.iter().map(|e| (e.plan_id.clone(), e.seq)).collect()
}

/// The one test body every backend goes through. `multi`: the store holds
/// more than one plan; `commit_ordered`: its feed is in commit order.
fn lifecycle(store: &dyn PlanStore, multi: bool, commit_ordered: bool) {
    let rx = store.subscribe();
    assert_eq!(store.list().unwrap(), Vec::new());

    let created = store.create("alpha", doc(3), false).unwrap();
    assert_eq!(created.meta.id, "alpha");
    assert_eq!(created.state.revision, 1);
    assert!(created.meta.created_at.is_some());
    assert_eq!(
        code(store.create("alpha", doc(3), false)),
        ErrorCode::PlanExists
    );
    if multi {
        store.create("beta", doc(2), false).unwrap();
    } else {
        assert_eq!(
            code(store.create("beta", doc(2), false)),
            ErrorCode::PlanExists
        );
    }

    let ids: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|p| p.plan_id)
        .collect();
    let expected: Vec<&str> = if multi {
        vec!["alpha", "beta"]
    } else {
        vec!["alpha"]
    };
    assert_eq!(ids, expected);
    let alpha = &store.list().unwrap()[0];
    assert_eq!(alpha.revision, 1);
    assert_eq!(alpha.status, PlanStatus::Idle);
    assert_eq!((alpha.counts.total, alpha.counts.pending), (3, 3));

    assert_eq!(store.load("alpha").unwrap().state.revision, 1);
    assert_eq!(code(store.load("nope")), ErrorCode::PlanNotFound);
    assert_eq!(code(store.load("../alpha")), ErrorCode::InvalidPlanId);
    assert_eq!(code(store.load("")), ErrorCode::InvalidPlanId);

    let (op, caller) = next("ann");
    let started = store.apply("alpha", &op, &caller).unwrap();
    let OpResult::Started(ref data) = started.data else {
        panic!("{:?}", started.data)
    };
    assert_eq!(data.task.as_ref().map(|t| t.id), Some(1));
    let (op, caller) = complete("ann");
    store.apply("alpha", &op, &caller).unwrap();
    let status = store
        .apply("alpha", &Op::GetPlanStatus(NoArgs {}), &Caller::default())
        .unwrap();
    assert!(!status.changed());
    let missing = Op::StartTask(TaskIdArgs {
        task_id: TaskRef::Id(99),
    });
    assert_eq!(
        code(store.apply("alpha", &missing, &Caller::default())),
        ErrorCode::TaskNotFound
    );
    assert_eq!(
        code(store.apply("nope", &op, &caller)),
        ErrorCode::PlanNotFound
    );
    assert_eq!(
        code(store.apply("a/b", &op, &caller)),
        ErrorCode::InvalidPlanId
    );

    let state = store.load("alpha").unwrap();
    assert_eq!(state.state.revision, 3);
    assert_eq!(state.tasks[0].status, TaskStatus::Completed);
    assert_eq!(state.tasks[0].result.as_deref(), Some("done by ann"));
    if multi {
        assert_eq!(store.load("beta").unwrap().state.revision, 1);
    }

    let events = store.events("alpha", 0, 100).unwrap();
    let ops: Vec<(u64, &str)> = events
        .iter()
        .map(|e| (e.seq, e.record.op.as_str()))
        .collect();
    assert_eq!(
        ops,
        [(1, "init"), (2, "startNextTask"), (3, "completeTask")]
    );
    assert!(events
        .iter()
        .all(|e| e.plan_id == "alpha" && e.seq == e.record.revision));
    assert_eq!(events[1].record.events[0].agent.as_deref(), Some("ann"));
    let later = store.events("alpha", 1, 1).unwrap();
    assert_eq!(seqs(&later), [("alpha".to_owned(), 2)]);
    assert_eq!(code(store.events("nope", 0, 10)), ErrorCode::PlanNotFound);

    let mut expected = vec![
        ("alpha".to_owned(), 1),
        ("alpha".to_owned(), 2),
        ("alpha".to_owned(), 3),
    ];
    if multi {
        expected.insert(1, ("beta".to_owned(), 1));
    }
    // PostgreSQL's feed holds an event back while an older transaction
    // (another test's, on the same cluster) still runs.
    let feed = wait_for_feed(store, expected.len());
    assert!(feed.windows(2).all(|w| w[0].position < w[1].position));
    // Every commit reached the subscriber, in commit order.
    let pushed = receive(&rx, expected.len());
    assert_eq!(seqs(&pushed), expected);
    if commit_ordered {
        assert_eq!(seqs(&feed), expected);
        assert_eq!(pushed, feed);
    } else {
        // By time (whole seconds), then plan id.
        let mut sorted = expected.clone();
        sorted.sort_by_key(|(plan, seq)| {
            (
                feed.iter()
                    .find(|e| (&e.plan_id, e.seq) == (plan, *seq))
                    .unwrap()
                    .record
                    .at
                    .clone(),
                plan.clone(),
                *seq,
            )
        });
        assert_eq!(seqs(&feed), sorted);
    }
    let rest = store.feed(feed[0].position, 2).unwrap();
    assert_eq!(seqs(&rest), seqs(&feed[1..3]));

    store.delete("alpha").unwrap();
    assert_eq!(code(store.load("alpha")), ErrorCode::PlanNotFound);
    assert_eq!(code(store.delete("alpha")), ErrorCode::PlanNotFound);
    assert_eq!(
        code(store.apply("alpha", &op, &caller)),
        ErrorCode::PlanNotFound
    );
    let left: Vec<String> = store
        .list()
        .unwrap()
        .into_iter()
        .map(|p| p.plan_id)
        .collect();
    assert_eq!(left, if multi { vec!["beta"] } else { vec![] });

    // A deleted plan can be made again; `force` starts an existing one over.
    store.create("alpha", doc(1), false).unwrap();
    let (op, caller) = next("bob");
    store.apply("alpha", &op, &caller).unwrap();
    let again = store.create("alpha", doc(2), true).unwrap();
    assert_eq!(again.state.revision, 1);
    let events = store.events("alpha", 0, 100).unwrap();
    assert_eq!(seqs(&events), [("alpha".to_owned(), 1)]);
    assert_eq!(store.load("alpha").unwrap().tasks.len(), 2);
}

/// 16 agents at once, each starting and completing tasks: no update is
/// lost, and the events are the revisions, each exactly once.
fn sixteen_agents(store: Arc<dyn PlanStore>, per_agent: usize) {
    const AGENTS: usize = 16;
    let tasks = AGENTS * per_agent;
    store.create("busy", doc(tasks), false).unwrap();
    let workers: Vec<_> = (0..AGENTS)
        .map(|a| {
            let store = Arc::clone(&store);
            std::thread::spawn(move || {
                let agent = format!("agent-{a}");
                for _ in 0..per_agent {
                    let (op, caller) = next(&agent);
                    let started = store.apply("busy", &op, &caller).unwrap();
                    assert!(started.changed(), "{agent} started nothing");
                    let (op, caller) = complete(&agent);
                    store.apply("busy", &op, &caller).unwrap();
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let state = store.load("busy").unwrap();
    let changes = 2 * tasks as u64;
    assert_eq!(state.state.revision, 1 + changes);
    assert_eq!(state.state.status, PlanStatus::Completed);
    let mut by_agent = BTreeMap::new();
    for task in &state.tasks {
        assert_eq!(task.status, TaskStatus::Completed, "task {}", task.id);
        *by_agent.entry(task.result.clone().unwrap()).or_insert(0) += 1;
    }
    assert_eq!(by_agent.len(), AGENTS);
    assert!(by_agent.values().all(|&n| n == per_agent), "{by_agent:?}");
    let events = store.events("busy", 0, 100_000).unwrap();
    let revisions: Vec<u64> = events.iter().map(|e| e.seq).collect();
    assert_eq!(revisions, (1..=1 + changes).collect::<Vec<_>>());
}

macro_rules! backend_tests {
    ($name:ident, $backend:expr, $per_agent:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn lifecycle() {
                let Some(backend) = $backend else { return };
                let store = open_store(&backend.url).unwrap();
                super::lifecycle(&*store, backend.multi, backend.commit_ordered);
            }

            #[test]
            fn sixteen_agents_lose_no_update() {
                let Some(backend) = $backend else { return };
                let store = open_store(&backend.url).unwrap();
                super::sixteen_agents(store, $per_agent);
            }
        }
    };
}

backend_tests!(json_file, Some(Backend::json_file()), 3);
backend_tests!(json_dir, Some(Backend::json_dir()), 3);
backend_tests!(sqlite, Some(Backend::sqlite()), 20);
backend_tests!(postgres, Backend::postgres(), 20);

/// Two handles on one store (two processes, two servers): every change of
/// each is committed, and each handle's subscribers see all of them, each
/// once.
fn two_handles(url: &str) {
    let one = open_store(url).unwrap();
    let two = open_store(url).unwrap();
    let (rx1, rx2) = (one.subscribe(), two.subscribe());
    one.create("shared", doc(40), false).unwrap();
    let workers: Vec<_> = [one.clone(), two.clone()]
        .into_iter()
        .enumerate()
        .flat_map(|(h, store)| {
            (0..4).map(move |w| {
                let store = Arc::clone(&store);
                std::thread::spawn(move || {
                    let agent = format!("h{h}-w{w}");
                    for _ in 0..5 {
                        let (op, caller) = next(&agent);
                        assert!(store.apply("shared", &op, &caller).unwrap().changed());
                        let (op, caller) = complete(&agent);
                        store.apply("shared", &op, &caller).unwrap();
                    }
                })
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let state = two.load("shared").unwrap();
    assert_eq!(state.state.revision, 81);
    let done = state
        .tasks
        .iter()
        .filter(|t| t.status == TaskStatus::Completed)
        .count();
    assert_eq!(done, 40);
    let all = one.events("shared", 0, 1000).unwrap();
    assert_eq!(
        all.iter().map(|e| e.seq).collect::<Vec<_>>(),
        (1..=81).collect::<Vec<_>>()
    );
    assert_eq!(receive(&rx1, 81), all);
    assert_eq!(receive(&rx2, 81), all);
    // What each handle keeps of the plan is what a new handle reads.
    let read = open_store(url).unwrap().load("shared").unwrap().to_json();
    assert_eq!(one.load("shared").unwrap().to_json(), read);
    assert_eq!(two.load("shared").unwrap().to_json(), read);
}

#[test]
fn two_sqlite_handles_share_one_file() {
    two_handles(&Backend::sqlite().url);
}

#[test]
fn two_postgres_handles_share_one_database() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    two_handles(&backend.url);
}

/// A directory store's feed resumes where a reader left off: a position
/// handed out never moves. Events of two plans are fed in commit order,
/// whatever their ids and the clock's seconds say; deleting a plan moves
/// no other event; a plan made again under an old id gets new positions.
/// (The feed was once sorted at each read by time in whole seconds, then
/// plan id: a reader resuming from the last position it saw missed
/// events, and saw others twice.)
#[test]
fn a_directory_feed_resumes_where_it_left_off() {
    let backend = Backend::json_dir();
    let store = open_store(&backend.url).unwrap();
    let owned = |pairs: &[(&str, u64)]| -> Vec<(String, u64)> {
        pairs.iter().map(|&(p, s)| (p.to_owned(), s)).collect()
    };
    store.create("zeta", doc(2), false).unwrap();
    store.create("alpha", doc(2), false).unwrap();
    let seen = store.feed(0, 100).unwrap();
    assert_eq!(seqs(&seen), owned(&[("zeta", 1), ("alpha", 1)]));
    let last = seen[1].position;

    // zeta deleted, then alpha changed: a reader resuming after `last`
    // gets alpha's change, and the events read before keep their places.
    store.delete("zeta").unwrap();
    let (op, caller) = next("ann");
    store.apply("alpha", &op, &caller).unwrap();
    let resumed = store.feed(last, 100).unwrap();
    assert_eq!(seqs(&resumed), owned(&[("alpha", 2)]));
    let all = store.feed(0, 100).unwrap();
    assert_eq!(seqs(&all), owned(&[("alpha", 1), ("alpha", 2)]));
    assert_eq!(all[0].position, seen[1].position);
    let last = all[1].position;

    // zeta made again (revision 1 again, maybe in the same second): new
    // events, after everything handed out; and so for alpha started over.
    store.create("zeta", doc(1), false).unwrap();
    store.create("alpha", doc(1), true).unwrap();
    let resumed = store.feed(last, 100).unwrap();
    assert_eq!(seqs(&resumed), owned(&[("zeta", 1), ("alpha", 1)]));
    assert!(resumed[0].position > last && resumed[0].position < resumed[1].position);
    assert_eq!(
        seqs(&store.events("alpha", 0, 100).unwrap()),
        owned(&[("alpha", 1)])
    );

    // A second handle on the directory (another server) hands out the
    // same positions.
    let other = open_store(&backend.url).unwrap();
    assert_eq!(other.feed(0, 100).unwrap(), store.feed(0, 100).unwrap());
}

/// A directory store's subscribers get the feed in its order: a change
/// through one handle sends, after the events sent before, those another
/// handle (another server on the directory) committed meanwhile, then its
/// own — each once.
#[test]
fn a_directory_handle_sends_the_feed_in_order() {
    let backend = Backend::json_dir();
    let (one, two) = (
        open_store(&backend.url).unwrap(),
        open_store(&backend.url).unwrap(),
    );
    let rx = one.subscribe();
    one.create("p", doc(2), false).unwrap();
    two.create("q", doc(2), false).unwrap();
    let (op, caller) = next("ann");
    two.apply("q", &op, &caller).unwrap();
    one.apply("p", &op, &caller).unwrap();
    let feed = one.feed(0, 100).unwrap();
    assert_eq!(
        seqs(&feed),
        [
            ("p".to_owned(), 1),
            ("q".to_owned(), 1),
            ("q".to_owned(), 2),
            ("p".to_owned(), 2)
        ]
    );
    assert_eq!(receive(&rx, 4), feed);
    assert!(rx.recv_timeout(Duration::from_millis(100)).is_err());
}

/// A state file in a directory store started over outside the store
/// (`planc run init --force STATE`, here through the library's `Store`) in
/// the same second as it was made: its new events get new positions, after
/// everything handed out. (They were told apart from the old ones by their
/// times in whole seconds only, so the new events took the old ones'
/// positions and a stream resumed after them never got them.)
#[test]
fn a_state_started_over_outside_the_store_gets_new_positions() {
    let at = |events: &[StoredEvent]| -> Vec<String> {
        events.iter().map(|e| e.record.at.clone()).collect()
    };
    for attempt in 0.. {
        let dir = tempfile::tempdir().unwrap();
        let plans = dir.path().join("plans");
        let store = open_store(&format!("dir:{}", plans.display())).unwrap();
        store.create("p", doc(2), false).unwrap();
        let (op, caller) = next("ann");
        store.apply("p", &op, &caller).unwrap();
        let seen = store.feed(0, 100).unwrap();
        let last = seen.last().unwrap().position;

        planc::runner::Store::new(plans.join("p.json"))
            .create(doc(2), true)
            .unwrap();
        store.apply("p", &op, &caller).unwrap();
        let again = store.events("p", 0, 100).unwrap();
        if at(&again) != at(&seen) {
            // A second went by: not the case this test is about.
            assert!(attempt < 20, "never within one second");
            continue;
        }
        assert_eq!(
            seqs(&again),
            [("p".to_owned(), 1), ("p".to_owned(), 2)],
            "the new events"
        );
        let resumed = store.feed(last, 100).unwrap();
        assert_eq!(resumed, again);
        assert!(resumed[0].position > last);
        // Another handle (another server) agrees.
        let other = open_store(&format!("dir:{}", plans.display())).unwrap();
        assert_eq!(other.feed(0, 100).unwrap(), resumed);
        break;
    }
}

/// A directory store in a directory this process may not write (a
/// read-only mount, another user's files) can still be read: its plans,
/// their events and the feed, with the positions a writable handle gives
/// them; a change is refused with `STATE_IO`. Twice: a directory of state
/// files no store ever read (no feed index, no lock file), and one whose
/// index misses an event made outside the store.
#[test]
fn a_read_only_directory_store_can_be_read() {
    use planc::runner::Store;
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;

    fn set_mode(dir: &Path, dir_mode: u32, file_mode: u32) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let mode = std::fs::Permissions::from_mode(file_mode);
            std::fs::set_permissions(&path, mode).unwrap();
        }
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(dir_mode)).unwrap();
    }
    /// Whether a file can be made in `dir` (root can whatever the mode).
    fn writable(dir: &Path) -> bool {
        let probe = dir.join(".probe");
        let made = std::fs::File::create(&probe).is_ok();
        let _ = std::fs::remove_file(&probe);
        made
    }
    let (op, caller) = next("ann");
    let dir = tempfile::tempdir().unwrap();
    let plans = dir.path().join("plans");
    std::fs::create_dir(&plans).unwrap();
    let url = format!("dir:{}", plans.display());
    // State files made without the store (`planc run init -o plans/ID.json`).
    for (id, tasks) in [("q", 2), ("p", 3)] {
        let state = Store::new(plans.join(format!("{id}.json")));
        state.create(doc(tasks), false).unwrap();
        state.apply_as(&op, &caller).unwrap();
    }
    set_mode(&plans, 0o555, 0o444);
    if writable(&plans) {
        set_mode(&plans, 0o755, 0o644);
        eprintln!("skipped: this process writes read-only directories (root)");
        return;
    }
    let read_only = open_store(&url).unwrap();
    let feed = read_only.feed(0, 100).unwrap();
    assert_eq!(feed.len(), 4);
    assert_eq!(read_only.events("p", 0, 100).unwrap().len(), 2);
    assert_eq!(read_only.list().unwrap().len(), 2);
    assert_eq!(read_only.feed(feed[1].position, 1).unwrap(), feed[2..3]);
    assert_eq!(code(read_only.apply("p", &op, &caller)), ErrorCode::StateIo);
    assert_eq!(
        std::fs::read_dir(&plans).unwrap().count(),
        6,
        "nothing was written"
    );
    // A writable handle hands out the same positions.
    set_mode(&plans, 0o755, 0o644);
    let writable_store = open_store(&url).unwrap();
    assert_eq!(writable_store.feed(0, 100).unwrap(), feed);

    // An event the index does not hold yet gets the next position.
    Store::new(plans.join("q.json"))
        .apply_as(&op, &caller)
        .unwrap();
    set_mode(&plans, 0o555, 0o444);
    let read_only = open_store(&url).unwrap();
    let feed = read_only.feed(0, 100).unwrap();
    assert_eq!(feed.len(), 5);
    assert_eq!(seqs(&feed[4..]), [("q".to_owned(), 3)]);
    assert_eq!(read_only.feed(feed[3].position, 10).unwrap(), feed[4..]);
    set_mode(&plans, 0o755, 0o644);
    assert_eq!(writable_store.feed(0, 100).unwrap(), feed);
}

/// A handle that keeps the plan's last state (PostgreSQL's does) reads
/// the row again whenever another handle changed it — even when the plan
/// was started over and changed back to the same revision.
#[test]
fn a_kept_state_never_hides_another_handles_change() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let (one, two) = (
        open_store(&backend.url).unwrap(),
        open_store(&backend.url).unwrap(),
    );
    one.create("p", doc(3), false).unwrap();
    let (op, caller) = next("ann");
    one.apply("p", &op, &caller).unwrap();
    // One keeps revision 2 with task 1 held by ann.
    assert_eq!(one.load("p").unwrap().state.revision, 2);

    // Two starts the plan over and makes a different revision 2.
    two.create("p", doc(3), true).unwrap();
    let (op, caller) = next("bob");
    two.apply("p", &op, &caller).unwrap();

    let seen = one.load("p").unwrap();
    assert_eq!(seen.state.revision, 2);
    assert_eq!(
        seen.tasks[0]
            .holder
            .as_ref()
            .and_then(|h| h.agent.as_deref()),
        Some("bob"),
        "{}",
        seen.to_json()
    );
    // A change through one starts from two's state.
    let (op, caller) = next("cy");
    one.apply("p", &op, &caller).unwrap();
    let seen = two.load("p").unwrap();
    assert_eq!(seen.state.revision, 3);
    let holders: Vec<_> = seen
        .tasks
        .iter()
        .map(|t| t.holder.as_ref().and_then(|h| h.agent.clone()))
        .collect();
    assert_eq!(holders, [Some("bob".into()), Some("cy".into()), None]);
}

/// A PostgreSQL handle computes a change ahead on the state it keeps of the
/// plan, and commits it only if the plan's row is still that version: when
/// another handle changed the plan since, the change is made again on the
/// row as it is — refused if it is refused there, and with that row's task.
#[test]
fn a_change_computed_on_a_kept_state_is_made_again_on_the_plans_row() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let (one, two) = (
        open_store(&backend.url).unwrap(),
        open_store(&backend.url).unwrap(),
    );
    let task = |applied: &planc::runner::Applied| applied.events[0].task_id;
    one.create("p", doc(4), false).unwrap();
    let (op, caller) = next("ann");
    assert_eq!(task(&one.apply("p", &op, &caller).unwrap()), Some(1));
    // One keeps revision 2: task 1 held by ann. Two gives task 2 to bob
    // and completes ann's task.
    let (op, caller) = next("bob");
    assert_eq!(task(&two.apply("p", &op, &caller).unwrap()), Some(2));
    let (op, caller) = complete("ann");
    assert_eq!(task(&two.apply("p", &op, &caller).unwrap()), Some(1));

    // On one's kept state ann still holds task 1; on the row she holds none.
    let (op, caller) = complete("ann");
    let refused = one.apply("p", &op, &caller).unwrap_err();
    assert_eq!(
        refused.code,
        ErrorCode::NoCurrentTask,
        "{}",
        refused.message
    );
    assert_eq!(two.load("p").unwrap().state.revision, 4);

    // One keeps revision 4 now; two gives task 3 to dan, so cy gets task 4
    // (task 3 on the kept state).
    let (op, caller) = next("dan");
    assert_eq!(task(&two.apply("p", &op, &caller).unwrap()), Some(3));
    let (op, caller) = next("cy");
    let applied = one.apply("p", &op, &caller).unwrap();
    assert_eq!(task(&applied), Some(4));

    let state = two.load("p").unwrap();
    assert_eq!(state.state.revision, 6);
    let tasks: Vec<_> = state
        .tasks
        .iter()
        .map(|t| (t.status, t.holder.as_ref().and_then(|h| h.agent.clone())))
        .collect();
    assert_eq!(
        tasks,
        [
            (TaskStatus::Completed, None),
            (TaskStatus::InProgress, Some("bob".to_owned())),
            (TaskStatus::InProgress, Some("dan".to_owned())),
            (TaskStatus::InProgress, Some("cy".to_owned())),
        ]
    );
    let events = one.events("p", 0, 10).unwrap();
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5, 6]
    );
    assert_eq!(events[5].record.events[0].task_id, Some(4));
    assert_eq!(events[5].record.events[0].agent.as_deref(), Some("cy"));
}

/// A PostgreSQL handle keeps the runner of a plan it creates (and starts
/// over), or reads it once: every change is computed ahead on it and
/// committed in one statement; a change whose plan another handle moved
/// meanwhile is computed again, under the plan's lock, on the runner
/// brought up to the rows.
#[test]
fn a_postgres_plan_is_changed_ahead_from_its_creation_on() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let (one, two) = two_postgres_stores(&backend);

    one.create("p", doc(4), false).unwrap();
    let (op, caller) = next("ann");
    assert_eq!(task(one.apply("p", &op, &caller).unwrap()), Some(1));
    assert_eq!(one.commit_counts(), counts(1, 0));
    let (op, caller) = complete("ann");
    assert_eq!(task(one.apply("p", &op, &caller).unwrap()), Some(1));
    assert_eq!(one.commit_counts(), counts(2, 0));

    // Started over, then deleted and created again: the first change of
    // each new plan is computed ahead too, on the new plan.
    one.create("p", doc(4), true).unwrap();
    let (op, caller) = next("bob");
    assert_eq!(task(one.apply("p", &op, &caller).unwrap()), Some(1));
    one.delete("p").unwrap();
    one.create("p", doc(4), false).unwrap();
    let (op, caller) = next("cy");
    assert_eq!(task(one.apply("p", &op, &caller).unwrap()), Some(1));
    assert_eq!(one.commit_counts(), counts(4, 0));

    // Two keeps nothing of the plan: it reads it, and computes ahead. Then
    // one's kept runner is behind the row: its change is made again on the
    // rows, under the plan's lock.
    let (op, caller) = next("dan");
    assert_eq!(task(two.apply("p", &op, &caller).unwrap()), Some(2));
    assert_eq!(two.commit_counts(), counts(1, 0));
    let (op, caller) = next("eve");
    assert_eq!(task(one.apply("p", &op, &caller).unwrap()), Some(3));
    assert_eq!(one.commit_counts(), counts(4, 1));

    // Two starts the plan over: its first change is computed ahead.
    two.create("p", doc(4), true).unwrap();
    let (op, caller) = next("fay");
    assert_eq!(task(two.apply("p", &op, &caller).unwrap()), Some(1));
    assert_eq!(two.commit_counts(), counts(2, 0));

    let state = one.load("p").unwrap();
    assert_eq!(state.state.revision, 2);
    let events = one.events("p", 0, 10).unwrap();
    assert_eq!(events.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2]);
    assert_eq!(events[1].record.events[0].agent.as_deref(), Some("fay"));
}

/// Two handles (two servers) on one PostgreSQL database.
fn two_postgres_stores(
    backend: &Backend,
) -> (planc::runner::PostgresStore, planc::runner::PostgresStore) {
    let open = || planc::runner::PostgresStore::open(&backend.url).unwrap();
    (open(), open())
}

/// The changes a PostgreSQL handle committed ahead and on the rows.
fn counts(ahead: u64, on_rows: u64) -> planc::runner::CommitCounts {
    planc::runner::CommitCounts { ahead, on_rows }
}

/// The task of an answer's first event.
fn task(applied: planc::runner::Applied) -> Option<u32> {
    applied.events[0].task_id
}

/// A plan whose id has quotes (spliced, escaped, into the
/// writer's first round trip): its row's version is found, so its changes
/// are written as computed ahead; when another handle moved it, the
/// writer computes the change again and its caller gets that answer.
#[test]
fn a_postgres_plan_id_with_quotes_is_changed_ahead_and_again() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let (one, two) = two_postgres_stores(&backend);
    let plan = "o'brien''); --";
    one.create(plan, doc(4), false).unwrap();
    for (agent, expected) in [("ann", 1), ("bob", 2)] {
        let (op, caller) = next(agent);
        assert_eq!(task(one.apply(plan, &op, &caller).unwrap()), Some(expected));
    }
    assert_eq!(one.commit_counts(), counts(2, 0));
    let (op, caller) = next("cy");
    assert_eq!(task(two.apply(plan, &op, &caller).unwrap()), Some(3));
    // One's runner still has task 3 ready: the writer finds the row moved
    // and computes dee's change again, on the rows.
    let (op, caller) = next("dee");
    assert_eq!(task(one.apply(plan, &op, &caller).unwrap()), Some(4));
    assert_eq!(one.commit_counts(), counts(2, 1));
    let events = two.events(plan, 0, 10).unwrap();
    assert_eq!(
        events.iter().map(|e| e.seq).collect::<Vec<_>>(),
        [1, 2, 3, 4, 5]
    );
}

/// A database made by the first schema (plans without summaries) is
/// brought up to date when opened, and keeps its plans and events.
#[test]
fn an_old_sqlite_schema_is_migrated() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("old.db");
    let mut state = doc(2);
    state.meta.id = "kept".to_owned();
    state.state.revision = 1;
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);
             INSERT INTO schema_version VALUES (1);
             CREATE TABLE plans (
                 plan_id TEXT PRIMARY KEY NOT NULL,
                 revision INTEGER NOT NULL,
                 doc TEXT NOT NULL
             );
             CREATE TABLE events (
                 position INTEGER PRIMARY KEY AUTOINCREMENT,
                 plan_id TEXT NOT NULL,
                 seq INTEGER NOT NULL,
                 record TEXT NOT NULL,
                 UNIQUE (plan_id, seq)
             );",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO plans VALUES ('kept', 1, ?1)",
            [state.to_json()],
        )
        .unwrap();
        conn.execute(
            "INSERT INTO events (plan_id, seq, record) VALUES ('kept', 1, ?1)",
            [r#"{"revision":1,"at":"2026-01-01T00:00:00Z","op":"init","plan_status":"idle","events":[{"kind":"created","message":"Plan `kept` created with 2 task(s)"}]}"#],
        )
        .unwrap();
    }
    let store = open_store(&format!("sqlite:{}", path.display())).unwrap();
    let plans = store.list().unwrap();
    assert_eq!(plans.len(), 1);
    assert_eq!(plans[0].plan_id, "kept");
    assert_eq!((plans[0].counts.total, plans[0].counts.pending), (2, 2));
    let (op, caller) = next("ann");
    store.apply("kept", &op, &caller).unwrap();
    assert_eq!(store.list().unwrap()[0].counts.in_progress, 1);
    let events = store.events("kept", 0, 10).unwrap();
    assert_eq!(
        events
            .iter()
            .map(|e| (e.seq, e.record.op.as_str()))
            .collect::<Vec<_>>(),
        [(1, "init"), (2, "startNextTask")]
    );
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: i64 = conn
        .query_row("SELECT version FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 5);
}

/// A database written by planc's schema 2 (each plan's whole document in
/// one row) is moved to a row per task when opened: the plan reads back
/// byte for byte as it was written, its events and their feed positions
/// stay, and changes go on from there.
#[test]
fn a_schema_2_sqlite_store_moves_its_tasks_to_rows() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("v2.db");
    let mut state = doc(3);
    state.meta.id = "kept".to_owned();
    state.state.revision = 2;
    state.tasks[1].status = TaskStatus::Completed;
    state.tasks[1].result = Some("done".to_owned());
    let before = state.to_json();
    let record = |seq: i64, op: &str| {
        format!(
            r#"{{"revision":{seq},"at":"2026-01-01T00:00:00Z","op":"{op}","plan_status":"running","events":[]}}"#
        )
    };
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);
             INSERT INTO schema_version VALUES (2);
             CREATE TABLE plans (
                 plan_id TEXT PRIMARY KEY NOT NULL,
                 revision INTEGER NOT NULL,
                 doc TEXT NOT NULL,
                 summary TEXT NOT NULL DEFAULT '{}'
             );
             CREATE TABLE events (
                 position INTEGER PRIMARY KEY AUTOINCREMENT,
                 plan_id TEXT NOT NULL,
                 seq INTEGER NOT NULL,
                 record TEXT NOT NULL,
                 UNIQUE (plan_id, seq)
             );
             INSERT INTO events (position, plan_id, seq, record) VALUES (40, 'gone', 1, '{}');
             DELETE FROM events;",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO plans (plan_id, revision, doc) VALUES ('kept', 2, ?1)",
            [&before],
        )
        .unwrap();
        for (seq, op) in [(1, "init"), (2, "completeTask")] {
            conn.execute(
                "INSERT INTO events (plan_id, seq, record) VALUES ('kept', ?1, ?2)",
                rusqlite::params![seq, record(seq, op)],
            )
            .unwrap();
        }
    }
    let store = open_store(&format!("sqlite:{}", path.display())).unwrap();
    assert_eq!(store.load("kept").unwrap().to_json(), before);
    let positions = |store: &dyn PlanStore| {
        store
            .feed(0, 10)
            .unwrap()
            .iter()
            .map(|e| (e.seq, e.position))
            .collect::<Vec<_>>()
    };
    assert_eq!(positions(&*store), [(1, 41), (2, 42)]);
    let (op, caller) = next("ann");
    store.apply("kept", &op, &caller).unwrap();
    assert_eq!(positions(&*store), [(1, 41), (2, 42), (3, 43)]);
    let now = store.load("kept").unwrap();
    assert_eq!(now.tasks[0].status, TaskStatus::InProgress);
    assert_eq!(now.tasks[1].result.as_deref(), Some("done"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let (version, rows): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT version FROM schema_version), (SELECT COUNT(*) FROM tasks WHERE plan_id = 'kept')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((version, rows), (5, 3));
}

/// A database written by planc's schema 3 (a plan's steps in its header,
/// written by every change) has each plan's steps moved to a row of their
/// own when opened: the plan reads back byte for byte as it was written, a
/// change of a task's status leaves the steps' row as it was, and a change
/// of the task list writes it again.
#[test]
fn a_schema_3_sqlite_store_moves_its_steps_out_of_the_header() {
    let t = tempfile::tempdir().unwrap();
    let path = t.path().join("v3.db");
    let mut state = doc(3);
    state.meta.id = "kept".to_owned();
    state.state.revision = 1;
    state.steps = serde_json::from_value(serde_json::json!([
        {"id": "s0", "name": "Step 0", "tasks": [state.tasks[0].id, state.tasks[1].id]},
        {"id": "s1", "name": "Step 1", "tasks": [state.tasks[2].id]}
    ]))
    .unwrap();
    for (task, step) in state.tasks.iter_mut().zip(["s0", "s0", "s1"]) {
        task.step = Some(step.to_owned());
    }
    let before = state.to_json();
    let header = PlanDocument {
        tasks: Vec::new(),
        ..state.clone()
    };
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);
             INSERT INTO schema_version VALUES (3);
             CREATE TABLE plans (
                 plan_id TEXT PRIMARY KEY NOT NULL,
                 revision INTEGER NOT NULL,
                 doc TEXT NOT NULL,
                 summary TEXT NOT NULL DEFAULT '{}'
             );
             CREATE TABLE events (
                 position INTEGER PRIMARY KEY AUTOINCREMENT,
                 plan_id TEXT NOT NULL,
                 seq INTEGER NOT NULL,
                 record TEXT NOT NULL,
                 UNIQUE (plan_id, seq)
             );
             CREATE TABLE tasks (
                 plan_id  TEXT NOT NULL,
                 position INTEGER NOT NULL,
                 task     TEXT NOT NULL,
                 PRIMARY KEY (plan_id, position)
             ) WITHOUT ROWID;",
        )
        .unwrap();
        conn.execute(
            "INSERT INTO plans (plan_id, revision, doc) VALUES ('kept', 1, ?1)",
            [header.to_json()],
        )
        .unwrap();
        for (i, task) in state.tasks.iter().enumerate() {
            conn.execute(
                "INSERT INTO tasks VALUES ('kept', ?1, ?2)",
                rusqlite::params![i as i64, serde_json::to_string(task).unwrap()],
            )
            .unwrap();
        }
        conn.execute(
            "INSERT INTO events (plan_id, seq, record) VALUES ('kept', 1, ?1)",
            [r#"{"revision":1,"at":"2026-01-01T00:00:00Z","op":"init","plan_status":"idle","events":[]}"#],
        )
        .unwrap();
    }
    let store = open_store(&format!("sqlite:{}", path.display())).unwrap();
    assert_eq!(store.load("kept").unwrap().to_json(), before);
    let conn = rusqlite::Connection::open(&path).unwrap();
    let rows = || -> (i64, String, String) {
        conn.query_row(
            "SELECT (SELECT version FROM schema_version), (SELECT doc FROM plans), (SELECT steps FROM plan_steps WHERE plan_id = 'kept')",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap()
    };
    let (version, header, steps) = rows();
    assert_eq!(version, 5);
    assert!(header.contains(r#""steps":[]"#), "{header}");
    let first =
        r#"[{"id":"s0","name":"Step 0","tasks":[1,2]},{"id":"s1","name":"Step 1","tasks":[3]}]"#;
    assert_eq!(steps, first);
    // A task started: the steps' row is not written.
    let (op, caller) = next("ann");
    store.apply("kept", &op, &caller).unwrap();
    conn.execute(
        "UPDATE plan_steps SET steps = ?1",
        [first.replace("Step 0", "Untouched")],
    )
    .unwrap();
    store.apply("kept", &op, &caller).unwrap();
    assert!(rows().2.contains("Untouched"));
    // A task added after task 1 joins its step: the row is written again.
    let add = Op::from_call(
        "addTask",
        serde_json::json!({"name": "added", "after_task_id": 1}),
    )
    .unwrap();
    store.apply("kept", &add, &Caller::default()).unwrap();
    let (_, _, steps) = rows();
    assert_eq!(
        steps,
        r#"[{"id":"s0","name":"Step 0","tasks":[1,4,2]},{"id":"s1","name":"Step 1","tasks":[3]}]"#
    );
    let reopened = open_store(&format!("sqlite:{}", path.display())).unwrap();
    let now = reopened.load("kept").unwrap();
    assert_eq!(now.to_json(), store.load("kept").unwrap().to_json());
    assert_eq!(now.state.revision, 4);
    assert_eq!(now.steps[0].tasks, [1, 4, 2]);
}

/// A new database gets the current schema; one made by a newer planc is
/// refused, saying so, and left as it was.
#[test]
fn a_newer_sqlite_schema_is_refused() {
    let t = tempfile::tempdir().unwrap();
    let fresh = t.path().join("fresh.db");
    open_store(&format!("sqlite:{}", fresh.display())).unwrap();
    let conn = rusqlite::Connection::open(&fresh).unwrap();
    let versions: Vec<i64> = conn
        .prepare("SELECT version FROM schema_version")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(versions, [5]);

    let newer = t.path().join("newer.db");
    let conn = rusqlite::Connection::open(&newer).unwrap();
    conn.execute_batch(
        "CREATE TABLE schema_version (version INTEGER NOT NULL);
         INSERT INTO schema_version VALUES (99);",
    )
    .unwrap();
    drop(conn);
    let error = open_store(&format!("sqlite:{}", newer.display())).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidState);
    assert_eq!(
        error.message,
        format!(
            "{} has schema version 99, made by a newer planc; this planc knows versions \
             up to 5: upgrade planc to use it",
            newer.display()
        )
    );
    assert_eq!(error.details["schema_version"], 99);
    let conn = rusqlite::Connection::open(&newer).unwrap();
    let tables: i64 = conn
        .query_row(
            "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 1);
}

/// Every `planc run` command says the same through `--store URL --plan-id
/// ID` as it does on a state file.
fn cli_matches_the_state_file(backend: Backend) {
    let t = Test::temp()
        .file(
            "jd.plan",
            &std::fs::read_to_string(support::repo("examples/jd_keyboard.plan")).unwrap(),
        )
        .file(
            "steps.json",
            r#"["Compare prices", {"name": "Pay", "key": "pay"}]"#,
        );
    let store = ["--store", backend.url.as_str(), "--plan-id", "jd_keyboard"];
    let created = t.planc(&["run", "--json", "init", "jd.plan", "-o", "s.json"]);
    let stored = t.planc(&[&["run", "--json", "init", "jd.plan"][..], &store].concat());
    assert_eq!((created.code, stored.code), (0, 0), "{}", stored.stderr);
    let (mut created, mut stored) = (created.json(), stored.json());
    assert_eq!(created["data"]["state"], "s.json");
    assert_eq!(
        stored["data"]["state"].as_str().unwrap(),
        open_store(&backend.url).unwrap().url()
    );
    created["data"]["message"] = "".into();
    stored["data"]["message"] = "".into();
    created["data"]["state"] = "".into();
    stored["data"]["state"] = "".into();
    assert_eq!(created, stored);
    let again = t.planc(&[&["run", "init", "jd.plan"][..], &store].concat());
    assert_eq!(again.code, 1);
    assert_eq!(
        again.stderr,
        "error[PLAN_EXISTS]: plan `jd_keyboard` exists already; delete it first or start it over (`planc run init --force`)\n"
    );

    // (arguments after the state file, standard input)
    let commands: &[(&[&str], &str)] = &[
        (&["next", "--json"], ""),
        (&["show"], ""),
        (&["show", "1", "--json"], ""),
        (&["complete", "--result", "Opened", "--json"], ""),
        (&["list"], ""),
        (&["list", "--status", "pending", "--json"], ""),
        (&["ready", "--json"], ""),
        (&["status"], ""),
        (&["next", "--agent", "a1", "--lease", "30s", "--json"], ""),
        (&["heartbeat", "--agent", "a1", "--json"], ""),
        (&["fail", "--agent", "a1", "--error", "boom", "--json"], ""),
        (&["start", "type_query", "--json"], ""),
        (
            &["fail", "2", "--error", "for good", "--no-retry", "--json"],
            "",
        ),
        (&["retry", "2", "--json"], ""),
        (&["skip", "2", "--reason", "not needed", "--json"], ""),
        (
            &["add", "--name", "Close the popup", "--after", "2", "--json"],
            "",
        ),
        (&["update", "6", "--name", "Close any popup", "--json"], ""),
        (&["remove", "6", "--json"], ""),
        (&["start", "99", "--json"], ""),
        (&["pause", "--json"], ""),
        (&["next", "--json"], ""),
        (&["resume", "--json"], ""),
        (&["prompt"], ""),
        (&["prompt", "--json"], ""),
        (&["observe", "--json"], "Working on it.\n"),
        (&["replan", "steps.json", "--json"], ""),
        (&["reset", "--json"], ""),
        (&["status", "--json"], ""),
        (&["watch", "--no-follow"], ""),
        (&["watch", "--no-follow", "--json"], ""),
    ];
    let same = |text: &str| without_times(text);
    let mut codes = Vec::new();
    for (args, stdin) in commands {
        let (op, rest) = args.split_first().unwrap();
        let file = t.planc_with_stdin(&[&["run", op, "s.json"][..], rest].concat(), stdin);
        let plan = t.planc_with_stdin(&[&["run", op][..], rest, &store].concat(), stdin);
        assert_eq!(
            (plan.code, same(&plan.stdout), same(&plan.stderr)),
            (file.code, same(&file.stdout), same(&file.stderr)),
            "planc run {}",
            args.join(" ")
        );
        codes.push(file.code);
    }
    // Only `start 99` (TASK_NOT_FOUND) and `next` while paused are refused.
    let refused: Vec<usize> = (0..codes.len()).filter(|&i| codes[i] != 0).collect();
    assert_eq!(refused, [18, 20], "{codes:?}");

    let bad = |args: &[&str]| {
        let run = t.planc(&[&["run"][..], args].concat());
        (run.code, run.stderr)
    };
    assert_eq!(
        bad(&[&["status", "s.json"][..], &store].concat()),
        (
            2,
            "error: unexpected argument `s.json`: with --store the state file is left out\n"
                .to_owned()
        )
    );
    assert_eq!(
        bad(&[&["start"][..], &store].concat()),
        (2, "error: give the task (its id or key)\n".to_owned())
    );
    assert_eq!(
        bad(&["status", "--store", &backend.url, "--plan-id", "other"]),
        (
            1,
            "error[PLAN_NOT_FOUND]: no plan `other` in this store\n".to_owned()
        )
    );
    assert_eq!(
        bad(&["status", "--store", &backend.url, "--plan-id", "../x"]).0,
        1
    );
    assert!(bad(&["status", "--store", &backend.url])
        .1
        .contains("--plan-id <ID>"));
    // A store waits for its own locks: a lock timeout it would not keep is
    // refused, from the command line or the environment, and nothing runs.
    let status = || {
        t.planc(&[&["run", "--json", "status"][..], &store].concat())
            .stdout
    };
    let before = status();
    let refused = (
        2,
        "error: --lock-timeout (or PLANC_LOCK_TIMEOUT) applies to state files, not to --store: \
         a store waits for its own locks\n"
            .to_owned(),
    );
    assert_eq!(
        bad(&[&["pause", "--lock-timeout", "3"][..], &store].concat()),
        refused
    );
    let from_env = support::planc()
        .args([&["run", "pause"][..], &store].concat())
        .current_dir(t.dir())
        .env("PLANC_LOCK_TIMEOUT", "3")
        .output()
        .unwrap();
    assert_eq!(
        (
            from_env.status.code(),
            String::from_utf8_lossy(&from_env.stderr).into_owned()
        ),
        (Some(refused.0), refused.1)
    );
    assert_eq!(status(), before, "the refused pauses changed nothing");
}

#[test]
fn cli_json_dir() {
    cli_matches_the_state_file(Backend::json_dir());
}

#[test]
fn cli_sqlite() {
    cli_matches_the_state_file(Backend::sqlite());
}

#[test]
fn cli_postgres() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    cli_matches_the_state_file(backend);
}

/// `text` with each RFC 3339 time (`2026-01-01T00:00:00Z`) replaced by `TIME`.
fn without_times(text: &str) -> String {
    let shape = b"dddd-dd-ddTdd:dd:ddZ";
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let is_time = bytes.len() - i >= shape.len()
            && shape.iter().zip(&bytes[i..]).all(|(s, b)| match s {
                b'd' => b.is_ascii_digit(),
                s => s == b,
            });
        if is_time {
            out.extend_from_slice(b"TIME");
            i += shape.len();
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// PostgreSQL: a database of the first schema is brought up to date, one
/// made by a newer planc is refused and left as it was.
#[test]
fn postgres_schemas_are_migrated_or_refused() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let mut state = doc(2);
    state.meta.id = "kept".to_owned();
    state.state.revision = 1;
    let mut client = ::postgres::Client::connect(&backend.url, ::postgres::NoTls).unwrap();
    client
        .batch_execute(
            "CREATE TABLE schema_version (version INTEGER NOT NULL);
             INSERT INTO schema_version VALUES (1);
             CREATE TABLE plans (
                 plan_id TEXT PRIMARY KEY,
                 revision BIGINT NOT NULL,
                 doc TEXT NOT NULL
             );
             CREATE TABLE events (
                 plan_id TEXT NOT NULL,
                 seq BIGINT NOT NULL,
                 tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
                 record TEXT NOT NULL,
                 PRIMARY KEY (plan_id, seq)
             );
             CREATE UNIQUE INDEX events_tx ON events (tx);",
        )
        .unwrap();
    client
        .execute(
            "INSERT INTO plans VALUES ('kept', 1, $1)",
            &[&state.to_json()],
        )
        .unwrap();
    let old_position: String = client
        .query_one(
            "INSERT INTO events (plan_id, seq, record) VALUES ('kept', 1, $1) RETURNING tx::text",
            &[&r#"{"revision":1,"at":"2026-01-01T00:00:00Z","op":"init","plan_status":"idle","events":[]}"#],
        )
        .unwrap()
        .get(0);
    let old_position: u64 = old_position.parse().unwrap();
    let store = open_store(&backend.url).unwrap();
    let plans = store.list().unwrap();
    assert_eq!(plans.len(), 1);
    assert_eq!(
        (plans[0].plan_id.as_str(), plans[0].counts.pending),
        ("kept", 2)
    );
    let (op, caller) = next("ann");
    store.apply("kept", &op, &caller).unwrap();
    assert_eq!(store.list().unwrap()[0].counts.in_progress, 1);
    let version: i32 = client
        .query_one("SELECT version FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 7);
    // Plan documents are compressed with lz4 (Debian's server has it).
    let compression: Option<String> = client
        .query_one(
            "SELECT attcompression::text FROM pg_attribute
             WHERE attrelid = 'plans'::regclass AND attname = 'doc'",
            &[],
        )
        .unwrap()
        .get(0);
    assert_eq!(compression.as_deref(), Some("l"));
    // An event written before keeps its position (a stream resuming from
    // it misses nothing); the new ones come after it.
    let events = store.events("kept", 0, 10).unwrap();
    assert_eq!(
        seqs(&events),
        [("kept".to_owned(), 1), ("kept".to_owned(), 2)]
    );
    assert_eq!(events[0].position, old_position);
    assert!(events[1].position > old_position);
    assert_eq!(wait_for_feed(&*store, 2), events);
    assert_eq!(
        seqs(&store.feed(old_position, 10).unwrap()),
        seqs(&events[1..])
    );

    client
        .batch_execute("UPDATE schema_version SET version = 8")
        .unwrap();
    let error = open_store(&backend.url).unwrap_err();
    assert_eq!(error.code, ErrorCode::InvalidState);
    assert_eq!(
        error.message,
        format!(
            "{} has schema version 8, made by a newer planc; this planc knows versions \
             up to 7: upgrade planc to use it",
            backend.url
        )
    );
    let version: i32 = client
        .query_one("SELECT version FROM schema_version", &[])
        .unwrap()
        .get(0);
    assert_eq!(version, 8);
}

/// Every store gives each event the task it is about, leases that ran out
/// included (they expire inside the change, before the caller's operation).
fn events_carry_their_task(url: &str) {
    let store = open_store(url).expect("open the store");
    store.create("leased", doc(2), false).expect("create");
    let (op, caller) = next("a");
    store
        .apply("leased", &op, &caller.with_lease(Some(1)))
        .expect("a starts a task for a second");
    std::thread::sleep(Duration::from_millis(2100));
    let (op, caller) = next("b");
    store
        .apply("leased", &op, &caller)
        .expect("b starts the next task");
    let events = store.events("leased", 0, 100).expect("events");
    let kinds: Vec<(&str, bool)> = events
        .iter()
        .flat_map(|e| &e.record.events)
        .filter(|e| e.task_id.is_some())
        .map(|e| (e.kind.as_str(), e.task.is_some()))
        .collect();
    assert!(
        kinds.iter().any(|(kind, _)| kind.contains("expired")),
        "no expiry among {kinds:?}"
    );
    assert!(kinds.iter().all(|&(_, task)| task), "{kinds:?}");
}

#[test]
fn sqlite_events_carry_their_task() {
    events_carry_their_task(&Backend::sqlite().url);
}

#[test]
fn postgres_events_carry_their_task() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    events_carry_their_task(&backend.url);
}

/// Waits until `ready` holds (30 s at most).
fn wait_until(what: &str, mut ready: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !ready() {
        assert!(Instant::now() < deadline, "waited 30 s for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// The transaction an event of a PostgreSQL store was committed in.
fn transaction(event: &StoredEvent) -> u64 {
    event.position / 1024
}

/// PostgreSQL commits the changes queued meanwhile together, in one
/// statement: a change the runner refuses is answered alone (it is never
/// queued), and the batch's other changes commit, each with its own event.
/// A batch that waited for a plan's lock takes the changes of that plan
/// queued meanwhile (after the one it waited with); those of other plans
/// make the next batch.
#[test]
fn postgres_batches_commit_together_and_refuse_alone() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    let store = open_store(&backend.url).unwrap();
    let rx = store.subscribe();
    store.create("a", doc(4), false).unwrap();
    store.create("b", doc(3), false).unwrap();

    // Hold plan a's lock, so that the writer's first batch (ann's change)
    // waits for it while the others queue behind.
    let mut holder = ::postgres::Client::connect(&backend.url, ::postgres::NoTls).unwrap();
    holder
        .execute("SELECT pg_advisory_lock(hashtextextended('a', 0))", &[])
        .unwrap();
    let apply = |plan: &'static str, op: Op, agent: &'static str| {
        let store = Arc::clone(&store);
        std::thread::spawn(move || store.apply(plan, &op, &Caller::agent(Some(agent.to_owned()))))
    };
    let mut waiting = |n: i64| {
        wait_until("the writers to wait for plan a's lock", || {
            let waiting: i64 = holder
                .query_one(
                    "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted
                     AND database = (SELECT oid FROM pg_database WHERE datname = current_database())",
                    &[],
                )
                .unwrap()
                .get(0);
            waiting == n
        })
    };
    let ann = apply("a", next("ann").0, "ann");
    waiting(1);
    let zed = apply("a", next("zed").0, "zed");
    wait_until("zed's change queued", || store.queued_changes() == 1);
    let missing = Op::StartTask(TaskIdArgs {
        task_id: TaskRef::Id(99),
    });
    let queued = [
        apply("a", next("bob").0, "bob"),
        apply("b", next("cy").0, "cy"),
        apply("a", missing, "dee"),
        apply("b", next("eve").0, "eve"),
    ];
    // Dee's change is refused on the kept runner: not queued.
    wait_until("four changes queued", || store.queued_changes() == 4);
    holder
        .execute("SELECT pg_advisory_unlock(hashtextextended('a', 0))", &[])
        .unwrap();

    assert!(ann.join().unwrap().unwrap().changed());
    assert!(zed.join().unwrap().unwrap().changed());
    let [bob, cy, dee, eve] = queued.map(|change| change.join().unwrap());
    assert!(bob.unwrap().changed());
    assert!(cy.unwrap().changed());
    assert_eq!(code(dee), ErrorCode::TaskNotFound);
    assert!(eve.unwrap().changed());

    let holders = |plan: &str| -> Vec<Option<String>> {
        let mut holders: Vec<_> = store
            .load(plan)
            .unwrap()
            .tasks
            .iter()
            .map(|t| t.holder.as_ref().and_then(|h| h.agent.clone()))
            .collect();
        holders.sort();
        holders
    };
    let held = |agents: &[&str]| -> Vec<Option<String>> {
        let mut held: Vec<_> = agents.iter().map(|a| Some((*a).to_owned())).collect();
        held.push(None);
        held.sort();
        held
    };
    assert_eq!(holders("a"), held(&["ann", "bob", "zed"]));
    assert_eq!(holders("b"), held(&["cy", "eve"]));
    assert_eq!(store.load("a").unwrap().state.revision, 4);
    assert_eq!(store.load("b").unwrap().state.revision, 3);

    // One event per change. Ann's batch, once it had plan a's lock, took
    // zed's and bob's changes (each computed ahead on the kept runner
    // after the one before it): one transaction. Cy's and eve's (plan b)
    // make the next.
    let a = store.events("a", 0, 10).unwrap();
    let b = store.events("b", 0, 10).unwrap();
    assert_eq!(a.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3, 4]);
    assert_eq!(b.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(a[2].record.events[0].agent.as_deref(), Some("zed"));
    let first = transaction(&a[1]);
    assert_eq!(
        [&a[1], &a[2], &a[3]].map(transaction),
        [first, first, first],
        "{a:?}"
    );
    let next = transaction(&b[1]);
    assert!(first < next, "{a:?}\n{b:?}");
    assert_eq!(transaction(&b[2]), next);
    assert!(a[1].position < a[2].position && a[2].position < a[3].position);
    assert!(b[1].position < b[2].position);

    // The feed and the subscriber have every event once, in position order.
    let feed = wait_for_feed(&*store, 7);
    assert_eq!(feed.len(), 7);
    assert!(feed.windows(2).all(|w| w[0].position < w[1].position));
    assert_eq!(receive(&rx, 7), feed);
}

/// Many threads on two handles (two servers) changing four plans at once:
/// every change lands, each plan's events are its revisions once each, and
/// both handles' subscribers get the feed, in its order.
#[test]
fn two_postgres_handles_change_many_plans_at_once() {
    let Some(backend) = Backend::postgres() else {
        return;
    };
    const PLANS: usize = 4;
    const PER_THREAD: usize = 5;
    let one = open_store(&backend.url).unwrap();
    let two = open_store(&backend.url).unwrap();
    let (rx1, rx2) = (one.subscribe(), two.subscribe());
    for p in 0..PLANS {
        one.create(&format!("p{p}"), doc(4 * PER_THREAD), false)
            .unwrap();
    }
    let workers: Vec<_> = (0..16)
        .map(|t| {
            let store = Arc::clone(if t % 2 == 0 { &one } else { &two });
            std::thread::spawn(move || {
                let plan = format!("p{}", t % PLANS);
                let agent = format!("agent-{t}");
                for _ in 0..PER_THREAD {
                    let (op, caller) = next(&agent);
                    assert!(store.apply(&plan, &op, &caller).unwrap().changed());
                    let (op, caller) = complete(&agent);
                    assert!(store.apply(&plan, &op, &caller).unwrap().changed());
                }
            })
        })
        .collect();
    for worker in workers {
        worker.join().unwrap();
    }
    let changes = 4 * PER_THREAD * 2;
    let mut total = 0;
    for p in 0..PLANS {
        let plan = format!("p{p}");
        let state = two.load(&plan).unwrap();
        assert_eq!(state.state.revision, 1 + changes as u64);
        assert_eq!(state.state.status, PlanStatus::Completed);
        let events = one.events(&plan, 0, 1000).unwrap();
        assert_eq!(
            events.iter().map(|e| e.seq).collect::<Vec<_>>(),
            (1..=1 + changes as u64).collect::<Vec<_>>()
        );
        assert!(events.windows(2).all(|w| w[0].position < w[1].position));
        total += events.len();
    }
    let feed = wait_for_feed(&*one, total);
    assert_eq!(feed.len(), total);
    assert!(feed.windows(2).all(|w| w[0].position < w[1].position));
    assert_eq!(receive(&rx1, total), feed);
    assert_eq!(receive(&rx2, total), feed);
}
