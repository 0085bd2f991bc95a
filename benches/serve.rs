//! `planc serve` under load (scripts/bench-serve runs it): 16 agents over
//! HTTP (keep-alive connections, the JSON API's operations) make state
//! changes — startNextTask then completeTask, resetPlan when a plan is done —
//! for a few seconds; then 16 readers call getPlanStatus and GET the plan.
//! Prints changes/s and reads/s with latency percentiles.
//!
//! `PLANC_BENCH_STORE=URL` benches that store (default: a fresh SQLite file);
//! `PLANC_BENCH_SERVER_COUNT=N` starts N servers on it (1; a PostgreSQL
//! store can be shared); `PLANC_BENCH_SERVERS=ADDR1,ADDR2` benches running
//! servers instead of starting any. The agents spread over the servers;
//! each plan's revision is checked against the changes acknowledged on it
//! (no update lost), and each server's stream of every plan must deliver
//! every change. `PLANC_BENCH_SECONDS` sets each phase's length (5);
//! `PLANC_BENCH_PLANS` how many plans the agents share (16) and
//! `PLANC_BENCH_TASKS` how many tasks each plan has (100);
//! `PLANC_BENCH_STEPS` in how many steps of equal size its tasks are (0:
//! none; the steps are ordered, each task of a step after the step before);
//! `PLANC_BENCH_PLANC=PATH` starts that planc instead of the one built with
//! the bench (to compare two builds).
//!
//! changes/s counts the acknowledged changes (a startNextTask that found no
//! task changes nothing and is not counted); the latencies are of every
//! call.

// Benchmarks may unwrap, print what they measure and hold long scenarios.
#![allow(
    clippy::unwrap_used,
    clippy::print_stdout,
    clippy::print_stderr,
    clippy::too_many_lines
)]

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

const AGENTS: usize = 16;

/// How many plans the agents share (`PLANC_BENCH_PLANS`, 16).
fn plan_count() -> usize {
    env_count("PLANC_BENCH_PLANS", 16)
}

/// How many tasks each plan has (`PLANC_BENCH_TASKS`, 100).
fn task_count() -> usize {
    env_count("PLANC_BENCH_TASKS", 100)
}

/// In how many steps each plan's tasks are (`PLANC_BENCH_STEPS`, 0: none).
fn step_count() -> usize {
    std::env::var("PLANC_BENCH_STEPS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

/// A plan of `tasks` independent tasks in `steps` steps of equal size (the
/// last may be shorter; none when `steps` is 0).
fn bench_plan(id: &str, tasks: usize, steps: usize) -> Value {
    let per_step = tasks.div_ceil(steps.max(1)).max(1);
    let step_of = |i: usize| (steps > 0).then(|| format!("s{}", (i - 1) / per_step));
    let list: Vec<Value> = (1..=tasks)
        .map(|i| {
            let mut task = json!({"id": i, "name": format!("task {i}"), "status": "pending", "dependencies": []});
            if let Some(step) = step_of(i) {
                task["step"] = json!(step);
            }
            task
        })
        .collect();
    let step_list: Vec<Value> = (0..steps)
        .filter(|s| s * per_step < tasks)
        .map(|s| {
            let members: Vec<usize> =
                (s * per_step + 1..=((s + 1) * per_step).min(tasks)).collect();
            json!({"id": format!("s{s}"), "name": format!("Step {s}"), "tasks": members})
        })
        .collect();
    let mut plan = json!({"planc": 1, "meta": {"id": id, "goal": "bench"}, "tasks": list});
    if steps > 0 {
        plan["steps"] = json!(step_list);
    }
    plan
}

fn env_count(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(default)
}

/// A keep-alive HTTP/1.1 connection.
struct Conn {
    addr: String,
    reader: BufReader<TcpStream>,
}

impl Conn {
    fn open(addr: &str) -> Conn {
        let stream = TcpStream::connect(addr).expect("connect");
        stream.set_nodelay(true).ok();
        Conn {
            addr: addr.to_owned(),
            reader: BufReader::new(stream),
        }
    }

    fn call(&mut self, method: &str, path: &str, body: &str) -> (u16, Value) {
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            self.addr,
            body.len()
        );
        let stream = self.reader.get_mut();
        stream.write_all(head.as_bytes()).expect("write");
        stream.write_all(body.as_bytes()).expect("write");
        let mut line = String::new();
        self.reader.read_line(&mut line).expect("status");
        let status: u16 = line
            .split_whitespace()
            .nth(1)
            .and_then(|s| s.parse().ok())
            .unwrap_or(0);
        let mut length = 0;
        loop {
            let mut line = String::new();
            self.reader.read_line(&mut line).expect("header");
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                if k.eq_ignore_ascii_case("content-length") {
                    length = v.trim().parse().unwrap_or(0);
                }
            }
        }
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body).expect("body");
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }
}

struct Server(Child, String);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start(store: &str) -> Server {
    let planc = std::env::var("PLANC_BENCH_PLANC")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_planc").to_owned());
    let mut child = Command::new(planc)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--rate-limit",
            "0",
            "--max-body",
            "1073741824",
            "--store",
            store,
        ])
        .stderr(Stdio::piped())
        .spawn()
        .expect("planc serve starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = BufReader::new(stderr).lines();
    let addr = loop {
        let line = lines.next().expect("a line").expect("text");
        if let Some(rest) = line.split("listening on http://").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .expect("an address")
                .to_owned();
        }
    };
    std::thread::spawn(move || for _ in lines {});
    Server(child, addr)
}

/// The (plan, seq) of every change (not creation) on `addr`'s stream of
/// every plan.
fn follow(addr: &str) -> Arc<Mutex<HashSet<(String, u64)>>> {
    let seen = Arc::new(Mutex::new(HashSet::new()));
    let mut stream = TcpStream::connect(addr).expect("connect");
    let head = format!("GET /api/events?after=now HTTP/1.1\r\nHost: {addr}\r\n\r\n");
    stream.write_all(head.as_bytes()).expect("write");
    let into = Arc::clone(&seen);
    std::thread::spawn(move || {
        // Chunk-size lines and keep-alives are not `data:` lines.
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let Some(data) = line.strip_prefix("data: ") else {
                continue;
            };
            let Ok(event) = serde_json::from_str::<Value>(data) else {
                continue;
            };
            // Seq 1 is a plan's creation, not a change of the bench.
            if let (Some(plan), Some(seq @ 2..)) =
                (event["plan_id"].as_str(), event["seq"].as_u64())
            {
                into.lock().expect("the set").insert((plan.to_owned(), seq));
            }
        }
    });
    seen
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

/// Runs `work` on `AGENTS` threads for `seconds`: how many calls each made
/// and their latencies.
fn phase(
    addrs: &[String],
    seconds: f64,
    work: impl Fn(&mut Conn, usize, &mut Vec<Duration>) + Send + Sync + 'static,
) -> (usize, Vec<Duration>, f64) {
    let stop = Arc::new(AtomicBool::new(false));
    let work = Arc::new(work);
    let started = Instant::now();
    let threads: Vec<_> = (0..AGENTS)
        .map(|n| {
            let (stop, work) = (Arc::clone(&stop), Arc::clone(&work));
            let addr = addrs[n % addrs.len()].clone();
            std::thread::spawn(move || {
                let mut conn = Conn::open(&addr);
                let mut latencies = Vec::new();
                while !stop.load(Ordering::Relaxed) {
                    work(&mut conn, n, &mut latencies);
                }
                latencies
            })
        })
        .collect();
    std::thread::sleep(Duration::from_secs_f64(seconds));
    stop.store(true, Ordering::Relaxed);
    let mut all: Vec<Duration> = threads
        .into_iter()
        .flat_map(|t| t.join().expect("a thread"))
        .collect();
    let elapsed = started.elapsed().as_secs_f64();
    all.sort();
    (all.len(), all, elapsed)
}

fn timed(
    conn: &mut Conn,
    latencies: &mut Vec<Duration>,
    method: &str,
    path: &str,
    body: &str,
) -> (u16, Value) {
    let t = Instant::now();
    let answer = conn.call(method, path, body);
    latencies.push(t.elapsed());
    answer
}

fn main() {
    let (plans, tasks) = (plan_count(), task_count());
    let seconds: f64 = std::env::var("PLANC_BENCH_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(5.0);
    let dir = tempfile::tempdir().expect("a temporary directory");
    let mut servers = Vec::new();
    let addrs: Vec<String> = match std::env::var("PLANC_BENCH_SERVERS") {
        Ok(list) => list.split(',').map(|s| s.trim().to_owned()).collect(),
        Err(_) => {
            let store = std::env::var("PLANC_BENCH_STORE")
                .unwrap_or_else(|_| format!("sqlite:{}", dir.path().join("bench.db").display()));
            let count: usize = std::env::var("PLANC_BENCH_SERVER_COUNT")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(1);
            println!("store: {store}");
            servers.extend((0..count.max(1)).map(|_| start(&store)));
            servers.iter().map(|server| server.1.clone()).collect()
        }
    };
    println!("servers: {}", addrs.join(", "));

    // The plans: `plans` plans of `tasks` independent tasks (in `steps` steps).
    let steps = step_count();
    println!("plans: {plans} of {tasks} tasks in {steps} steps");
    let mut conn = Conn::open(&addrs[0]);
    for p in 0..plans {
        let plan = bench_plan(&format!("bench-{p}"), tasks, steps);
        let (status, answer) = conn.call("POST", "/api/plans?force=true", &plan.to_string());
        assert_eq!(status, 201, "{answer}");
    }

    // Every server's stream of every plan, from now on.
    let streams: Vec<_> = addrs.iter().map(|addr| follow(addr)).collect();
    std::thread::sleep(Duration::from_millis(300));

    // Changes: each agent works on plan n % plans, as agent aN; each
    // acknowledged change is counted for its plan.
    let acknowledged: Arc<Vec<AtomicU64>> =
        Arc::new((0..plans).map(|_| AtomicU64::new(0)).collect());
    let counts = Arc::clone(&acknowledged);
    let (calls, latencies, elapsed) = phase(&addrs, seconds, move |conn, n, latencies| {
        let counted = &counts[n % plans];
        let plan = format!("/api/plans/bench-{}/ops", n % plans);
        let agent = format!("a{n}");
        let (status, answer) = timed(
            conn,
            latencies,
            "POST",
            &format!("{plan}/startNextTask"),
            &json!({"agent": agent}).to_string(),
        );
        assert_eq!(status, 200, "{answer}");
        match answer["data"]["task"]["id"].as_u64() {
            Some(id) => {
                counted.fetch_add(1, Ordering::Relaxed);
                let body = json!({"agent": agent, "task_id": id, "result": "ok"}).to_string();
                let (status, answer) = timed(
                    conn,
                    latencies,
                    "POST",
                    &format!("{plan}/completeTask"),
                    &body,
                );
                assert_eq!(status, 200, "{answer}");
                counted.fetch_add(1, Ordering::Relaxed);
            }
            // Only a finished plan starts over; agents sharing a plan may
            // find nothing while the others' tasks run, and the reset of
            // another agent may come first (then it is refused: the
            // others hold tasks again).
            None if answer["data"]["reason"] == "completed" => {
                let (status, answer) =
                    timed(conn, latencies, "POST", &format!("{plan}/resetPlan"), "{}");
                match status {
                    200 => {
                        counted.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => assert_eq!(answer["error"]["code"], "TASK_HELD", "{answer}"),
                }
            }
            None => {}
        }
    });
    let count: u64 = acknowledged.iter().map(|n| n.load(Ordering::Relaxed)).sum();
    println!(
        "changes: {count} acknowledged in {elapsed:.1} s = {:.0} changes/s from {AGENTS} agents over {plans} plans ({calls} calls: p50 {:.2} ms, p99 {:.2} ms)",
        count as f64 / elapsed,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );

    // No lost update: each plan's revision is 1 (its creation) plus the
    // changes acknowledged on it.
    let mut lost = 0i64;
    let mut changes = 0u64;
    for (p, counted) in acknowledged.iter().enumerate() {
        let (_, answer) = conn.call("GET", &format!("/api/plans/bench-{p}"), "");
        let revision = answer["data"]["state"]["revision"]
            .as_u64()
            .expect("a revision");
        let counted = counted.load(Ordering::Relaxed);
        changes += counted;
        lost += (1 + counted) as i64 - revision as i64;
    }
    println!("lost updates: {lost} (revisions against {changes} acknowledged changes)");
    // Every change on every server's stream.
    std::thread::sleep(Duration::from_secs(2));
    for (addr, seen) in addrs.iter().zip(&streams) {
        let seen = seen.lock().expect("the stream").len() as u64;
        println!("events seen on {addr}'s stream: {seen} of {changes}");
    }

    // Reads: getPlanStatus and the plan document, alternately.
    let (count, latencies, elapsed) = phase(&addrs, seconds, move |conn, n, latencies| {
        let plan = format!("/api/plans/bench-{}", n % plans);
        let (status, _) = timed(
            conn,
            latencies,
            "POST",
            &format!("{plan}/ops/getPlanStatus"),
            "{}",
        );
        assert_eq!(status, 200);
        let (status, _) = timed(conn, latencies, "GET", &plan, "");
        assert_eq!(status, 200);
    });
    println!(
        "reads: {count} in {elapsed:.1} s = {:.0} reads/s from {AGENTS} readers (p50 {:.2} ms, p99 {:.2} ms)",
        count as f64 / elapsed,
        percentile(&latencies, 0.5),
        percentile(&latencies, 0.99)
    );
    drop(servers);
}
