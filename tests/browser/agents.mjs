// The load of scripts/bench-web-live (the agents of scripts/bench-serve,
// in node): AGENTS agents on keep-alive connections, each
// `startNextTask` then `completeTask` through `POST /api/plans/{id}/ops/…`,
// until the parent says "stop". Run by bench-live.mjs (child_process.fork).
//
//   node agents.mjs BASE PLAN AGENTS [RATE]
//
// RATE (calls a second, all agents together; 0 or none: as fast as they
// can) paces the calls: each waits for its slot.
// Each second it sends the parent {changes, at}; on "stop" it sends every
// call's end time and latency, and when each completeTask was acknowledged.
import http from "node:http";

const [base, plan, agentCount, rateArg] = process.argv.slice(2);
const rate = Number(rateArg || 0), started = Date.now();
let slots = 0;
async function pace() {
  if (!rate) return;
  const slot = started + (1000 * slots++) / rate, wait = slot - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
}
const target = new URL(base);
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: Number(agentCount) });
const calls = []; // [end ms, latency ms, changed]
const completed = []; // when each completeTask was acknowledged (ms)
let changes = 0, failures = 0, running = true;

function post(op, body, name) {
  const data = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = http.request({
      host: target.hostname, port: target.port, method: "POST", agent: keepAlive,
      path: `/api/plans/${plan}/ops/${op}`,
      headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(data), "X-Planc-Agent": name },
    }, (response) => {
      const chunks = [];
      response.on("data", (c) => chunks.push(c));
      response.on("end", () => {
        try { resolve(JSON.parse(Buffer.concat(chunks).toString())); } catch (e) { reject(e); }
      });
    });
    request.on("error", reject);
    request.end(data);
  });
}

async function timed(op, body, name) {
  await pace();
  const started = performance.now();
  const answer = await post(op, body, name);
  const end = Date.now();
  calls.push([end, performance.now() - started]);
  return [answer, end];
}

async function agent(name) {
  while (running) {
    try {
      const [started] = await timed("startNextTask", {}, name);
      const task = started.success && started.data && started.data.task;
      if (!task) { failures += started.success ? 0 : 1; await new Promise((r) => setTimeout(r, 5)); continue; }
      changes++;
      const [done, at] = await timed("completeTask", { agent: name, task_id: task.id }, name);
      if (!done.success) { failures++; continue; }
      changes++;
      completed.push(at);
    } catch (e) {
      failures++;
    }
  }
}

const agents = [];
for (let i = 0; i < Number(agentCount); i++) agents.push(agent("agent-" + i));
const tick = setInterval(() => process.send({ changes, at: Date.now() }), 1000);
process.on("message", async (message) => {
  if (message !== "stop") return;
  running = false;
  clearInterval(tick);
  await Promise.all(agents);
  process.send({ final: true, changes, failures, calls, completed }, () => process.exit(0));
});
