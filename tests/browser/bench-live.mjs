// scripts/bench-web-live: the web view of a 100,000-task plan while 16
// agents change it, measured as a user sees it (a benchmark, not a test).
//
//   node bench-live.mjs PLANC CHROMIUM
//
// 1. `PLANC serve` on a fresh SQLite store (no rate limit), one plan of
//    PLANC_BENCH_TASKS (100,000) independent tasks in 100 steps.
// 2. 16 agents (agents.mjs) change it for PLANC_BENCH_BEFORE seconds (10)
//    with no browser: changes/s without the view.
// 3. Headless Chromium opens the view (`/#plan=big`): time to the first
//    rows and to the counts; then PLANC_BENCH_SECONDS (20) under the same
//    load: changes/s with the view open, how far the page's done count is
//    behind the changes acknowledged to the agents (the lag of each count
//    the page shows), frames per second and long tasks of the page's main
//    thread, its JS heap and DOM, the rows drawn, the page's requests.
// 4. The agents stop: how long until the page shows the server's counts.
//
// The page is the working copy's src/serve/page.html (served in place of
// the built-in one, so a change to it is measured without a rebuild);
// PLANC_BENCH_BUILTIN_PAGE=1 measures the one built into PLANC.
import { spawn, fork } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [planc, executablePath] = process.argv.slice(2);
const env = (name, fallback) => Number(process.env[name] || fallback);
const RATE = env("PLANC_BENCH_RATE", 0), STEPS = env("PLANC_BENCH_STEPS", 100), TASKS = env("PLANC_BENCH_TASKS", 100000), BEFORE = env("PLANC_BENCH_BEFORE", 10), SECONDS = env("PLANC_BENCH_SECONDS", 20);
const AGENTS = 16, PLAN = "big";
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const pct = (sorted, p) => (sorted.length ? sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] : NaN);
const ms = (x) => (Number.isNaN(x) ? "-" : x < 10 ? x.toFixed(1) : Math.round(x)) + " ms";

function startServer(dir) {
  const child = spawn(planc, ["serve", "--no-config", "--listen", "127.0.0.1:0", "--store", "sqlite:" + join(dir, "plans.db"),
    "--max-body", "67108864", "--rate-limit", "0"], { stdio: ["ignore", "ignore", "pipe"] });
  return new Promise((resolve, reject) => {
    let seen = "";
    child.stderr.on("data", (chunk) => {
      seen += chunk;
      const found = seen.match(/listening on (http:\/\/[0-9.:]+) /);
      if (found) resolve({ child, base: found[1] });
    });
    child.on("exit", (code) => reject(new Error(`planc serve exited (${code}): ${seen}`)));
  });
}
// CPU seconds a process has used (utime + stime of /proc/PID/stat).
function cpuSeconds(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch (e) { return NaN; }
}
// The browser's processes: those whose command line names its profile.
function browserPids(profile) {
  const pids = [];
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try { if (readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(profile)) pids.push(pid); } catch (e) { /* gone */ }
  }
  return pids;
}
// CPU seconds of the server, the agents and the browser.
function cpu(server, agents, profile) {
  return { server: cpuSeconds(server), agents: cpuSeconds(agents), browser: browserPids(profile).reduce((a, pid) => a + cpuSeconds(pid), 0) };
}
function cpuText(from, to, seconds, changes) {
  const part = (name) => Math.round((100 * (to[name] - from[name])) / seconds) + "%";
  const perChange = (1000 * (to.server - from.server)) / (changes * seconds);
  return `CPU: server ${part("server")} (${perChange.toFixed(2)} ms a change), agents ${part("agents")}, browser ${part("browser")} (of one core)`;
}
function rssMb(pid) {
  try { return Number(readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+)/)[1]) / 1024; } catch (e) { return NaN; }
}

async function api(base, method, path, body) {
  const response = await fetch(base + path, { method, headers: { "Content-Type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const json = await response.json();
  if (!json.success) throw new Error(`${method} ${path}: ${JSON.stringify(json).slice(0, 300)}`);
  return json.data;
}
const steps = (n) => (n ? n + " steps" : "no step");
function bigPlan() {
  const tasks = [], steps = [];
  const perStep = Math.max(1, Math.ceil(TASKS / Math.max(1, STEPS)));
  for (let s = 0; STEPS && s * perStep < TASKS; s++) steps.push({ id: "s" + s, name: "Step " + s, tasks: [] });
  for (let i = 1; i <= TASKS; i++) {
    const step = steps[Math.floor((i - 1) / perStep)];
    if (step) step.tasks.push(i);
    tasks.push({ id: i, name: "Task number " + i, status: "pending", dependencies: [], ...(step ? { step: step.id } : {}) });
  }
  return { planc: 1, meta: { id: PLAN, goal: "large, live" }, steps, tasks };
}

// In the page from its first script: long tasks, frames, and each count the
// page shows with when it first showed it (read once a frame, as painted).
function probe() {
  window.__bench = { longtasks: [], frames: 0, shown: [] };
  new PerformanceObserver((list) => { for (const e of list.getEntries()) window.__bench.longtasks.push([e.startTime, e.duration]); })
    .observe({ type: "longtask", buffered: true });
  let last = "";
  const frame = () => {
    window.__bench.frames++;
    const node = document.getElementById("progress");
    const text = node ? node.textContent : "";
    if (text !== last) { last = text; window.__bench.shown.push([Date.now(), text]); }
    requestAnimationFrame(frame);
  };
  requestAnimationFrame(frame);
}

function agentsStart(base) {
  const child = fork(new URL("./agents.mjs", import.meta.url).pathname, [base, PLAN, String(AGENTS), String(RATE)]);
  const ticks = [];
  const final = new Promise((resolve) => child.on("message", (m) => (m.final ? resolve(m) : ticks.push(m))));
  return { child, ticks, final };
}
// Changes/s between two times, from the agents' ticks.
function rate(ticks, from, to) {
  const inside = ticks.filter((t) => t.at >= from && t.at <= to);
  if (inside.length < 2) return NaN;
  const a = inside[0], b = inside[inside.length - 1];
  return (1000 * (b.changes - a.changes)) / (b.at - a.at);
}
function latencies(calls, from, to) {
  const inside = calls.filter(([end]) => end >= from && end <= to).map(([, l]) => l).sort((a, b) => a - b);
  return `p50 ${ms(pct(inside, 0.5))}, p99 ${ms(pct(inside, 0.99))}`;
}

async function openView(context, base, report) {
  const page = await context.newPage();
  await page.addInitScript(probe);
  if (process.env.PLANC_BENCH_BUILTIN_PAGE !== "1") {
    const html = readFileSync(new URL("../../src/serve/page.html", import.meta.url));
    await page.route((url) => url.pathname === "/", (route) => route.fulfill({ contentType: "text/html; charset=utf-8", body: html }));
  }
  const requests = new Map();
  page.on("request", (request) => {
    const path = new URL(request.url()).pathname.replace(`/api/plans/${PLAN}`, "…");
    requests.set(path, (requests.get(path) || 0) + 1);
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send("Performance.enable");
  const opened = Date.now();
  await page.goto(base + "/#plan=" + PLAN);
  await page.locator("#rows-inner .row").first().waitFor({ state: "attached", timeout: 60000 });
  report.firstRows = Date.now() - opened;
  await page.locator("#progress", { hasText: "done" }).waitFor({ state: "attached", timeout: 60000 });
  report.firstCounts = Date.now() - opened;
  return { page, cdp, requests };
}
async function metrics(cdp, page) {
  const { metrics: list } = await cdp.send("Performance.getMetrics");
  const m = Object.fromEntries(list.map((x) => [x.name, x.value]));
  const rows = await page.evaluate(() => document.querySelectorAll("#rows-inner > *").length);
  return { at: Date.now(), heap: m.JSHeapUsedSize / 1048576, nodes: m.Nodes, rows, script: m.ScriptDuration, task: m.TaskDuration };
}

// How far behind each count the page showed was: when it showed done = d
// against when the d-th completion since `base` was acknowledged.
function lagOf(shown, completed, base, from, to) {
  const lags = [];
  for (const [at, text] of shown) {
    if (at < from || at > to) continue;
    const found = text.match(/^(\d+)\//);
    if (!found) continue;
    const k = Number(found[1]) - base - 1;
    if (k >= 0 && k < completed.length) lags.push(at - completed[k]);
  }
  return lags.sort((a, b) => a - b);
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "planc-bench-web-"));
  const profile = mkdtempSync(join(tmpdir(), "planc-chromium-"));
  const { child: server, base } = await startServer(dir);
  const report = {};
  let context = null, load = null;
  try {
    report.load = loadavg()[0].toFixed(2);
    let clock = Date.now();
    await api(base, "POST", `/api/plans?id=${PLAN}`, bigPlan());
    report.created = Date.now() - clock;
    const start = await api(base, "GET", `/api/plans/${PLAN}/summary`);
    const baseDone = start.counts.completed + start.counts.skipped;

    load = agentsStart(base);
    await sleep(2000); // warm up
    const aFrom = Date.now(), aCpu = cpu(server.pid, load.child.pid, profile);
    await sleep(BEFORE * 1000);
    const aTo = Date.now(), aCpuEnd = cpu(server.pid, load.child.pid, profile);

    context = await chromium.launchPersistentContext(profile, {
      executablePath, headless: true, viewport: { width: 1280, height: 800 },
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--enable-precise-memory-info"],
    });
    const { page, cdp, requests } = await openView(context, base, report);
    const errors = [];
    page.on("pageerror", (e) => errors.push(String(e)));
    await page.locator("#conn", { hasText: "live" }).waitFor({ state: "attached", timeout: 30000 });
    await sleep(1000);
    const bFrom = Date.now(), bCpu = cpu(server.pid, load.child.pid, profile);
    const before = await page.evaluate(() => ({ frames: window.__bench.frames, at: performance.now() }));
    const requestsBefore = [...requests.values()].reduce((a, b) => a + b, 0);
    const samples = [];
    while (Date.now() - bFrom < SECONDS * 1000) {
      samples.push(await metrics(cdp, page));
      await sleep(1000);
    }
    const bTo = Date.now(), bCpuEnd = cpu(server.pid, load.child.pid, profile);
    const after = await page.evaluate(() => ({ frames: window.__bench.frames, at: performance.now() }));
    const requestsDuring = [...requests.values()].reduce((a, b) => a + b, 0) - requestsBefore;

    load.child.send("stop");
    const final = await load.final;
    const stopped = Date.now();
    const end = await api(base, "GET", `/api/plans/${PLAN}/summary`);
    const endDone = end.counts.completed + end.counts.skipped;
    await page.locator("#progress", { hasText: new RegExp(`^${endDone}/${end.counts.total} done`) }).waitFor({ state: "attached", timeout: 60000 });
    await page.locator('#counts [data-status="in_progress"]', { hasText: "in progress 0" }).waitFor({ state: "attached", timeout: 60000 });
    report.settled = Date.now() - stopped;
    const bench = await page.evaluate(() => window.__bench);
    const inB = bench.longtasks.filter(([s]) => s >= before.at && s <= after.at);
    const lags = lagOf(bench.shown, final.completed, baseDone, bFrom, bTo);
    const heaps = samples.map((s) => s.heap), rows = samples.map((s) => s.rows), nodes = samples.map((s) => s.nodes);

    console.log(`planc serve (${planc}), SQLite, one plan of ${TASKS} independent tasks in ${steps(STEPS)}, ${AGENTS} agents (startNextTask, completeTask${RATE ? `, paced to ${RATE} calls/s in all` : ""})`);
    console.log(`  load average when it started ${report.load} (the machine's other work)`);
    console.log(`  plan created in ${report.created} ms; page: ${process.env.PLANC_BENCH_BUILTIN_PAGE === "1" ? "built in" : "src/serve/page.html"}`);
    const aRate = rate(load.ticks, aFrom, aTo), bRate = rate(load.ticks, bFrom, bTo);
    console.log(`  without the view (${BEFORE} s): ${Math.round(aRate)} changes/s, ${latencies(final.calls, aFrom, aTo)}, ${cpuText(aCpu, aCpuEnd, (aTo - aFrom) / 1000, aRate)}`);
    console.log(`  view opened under load: first rows ${report.firstRows} ms, counts ${report.firstCounts} ms`);
    console.log(`  with the view (${SECONDS} s): ${Math.round(bRate)} changes/s, ${latencies(final.calls, bFrom, bTo)}, ${cpuText(bCpu, bCpuEnd, (bTo - bFrom) / 1000, bRate)}`);
    console.log(`  the page's done count behind the acknowledged completions: p50 ${ms(pct(lags, 0.5))}, p90 ${ms(pct(lags, 0.9))}, max ${ms(lags[lags.length - 1] ?? NaN)} (${lags.length} updates shown, ${(lags.length / SECONDS).toFixed(1)}/s)`);
    console.log(`  frames ${((1000 * (after.frames - before.frames)) / (after.at - before.at)).toFixed(1)}/s; long tasks ${inB.length}, ${Math.round(inB.reduce((a, [, d]) => a + d, 0))} ms in all (${((100 * inB.reduce((a, [, d]) => a + d, 0)) / (after.at - before.at)).toFixed(1)}% of the time), longest ${ms(Math.max(0, ...inB.map(([, d]) => d)))}`);
    const first = samples[0], last = samples[samples.length - 1], span = (last.at - first.at) / 1000;
    console.log(`  the page's main thread busy ${Math.round((100 * (last.task - first.task)) / span)}% of the time, running script ${Math.round((100 * (last.script - first.script)) / span)}%`);
    console.log(`  JS heap ${heaps[0].toFixed(1)} → ${heaps[heaps.length - 1].toFixed(1)} MB (max ${Math.max(...heaps).toFixed(1)}); DOM nodes ${nodes[0]} → ${nodes[nodes.length - 1]} (max ${Math.max(...nodes)}); rows drawn max ${Math.max(...rows)}`);
    console.log(`  the page's requests: ${(requestsDuring / SECONDS).toFixed(1)}/s under load; in all ${JSON.stringify(Object.fromEntries(requests))}`);
    console.log(`  agents stopped: ${final.changes} changes acknowledged, ${final.failures} failed calls; the page showed the server's counts (${endDone}/${end.counts.total}) ${report.settled} ms later`);
    console.log(`  server RSS ${Math.round(rssMb(server.pid))} MB`);
    if (errors.length) console.log(`  page errors: ${errors.join("; ")}`);
  } finally {
    if (load) load.child.kill();
    if (context) await context.close();
    server.kill("SIGTERM");
    rmSync(profile, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
  }
}
await main();
process.exit(0);
