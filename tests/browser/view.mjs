// The web view of `planc serve` in headless Chromium: open the page, drive a
// plan through the JSON API, and see the page change (tests/it/serve_browser.rs).
//
//   node view.mjs http://127.0.0.1:PORT /usr/bin/chromium
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium } from "playwright-core";

const [base, executablePath] = process.argv.slice(2);

async function api(method, path, body, headers = {}) {
  const response = await fetch(base + path, {
    method,
    headers: { "Content-Type": "application/json", ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await response.json();
  if (!json.success) throw new Error(`${method} ${path}: ${JSON.stringify(json)}`);
  return json.data;
}

const hostile = '<img src=x onerror="window.__pwned=1">';
await api("POST", "/api/plans", {
  planc: 1,
  meta: { id: "web", goal: "Watch <b>this</b> plan" },
  tasks: [
    { id: 1, name: hostile, status: "pending", dependencies: [] },
    { id: 2, name: "Second step", status: "pending", dependencies: [1] },
  ],
});

const profile = mkdtempSync(join(tmpdir(), "planc-chromium-"));
const context = await chromium.launchPersistentContext(profile, {
  executablePath,
  headless: true,
  args: [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
  ],
});
let failed = false;
try {
  const page = context.pages()[0] || (await context.newPage());
  page.setDefaultTimeout(15000);
  const errors = [];
  page.on("pageerror", (e) => errors.push(String(e)));
  await page.goto(base + "/#plan=web");

  const status = (id) => page.locator(`[data-task-id="${id}"] .status`);
  await page.locator("#conn", { hasText: "live" }).waitFor();
  await status(1).filter({ hasText: /^pending$/ }).waitFor();
  await status(2).filter({ hasText: /^pending$/ }).waitFor();
  const name = await page.locator('[data-task-id="1"] .name').textContent();
  if (name !== "#1 " + hostile) throw new Error(`task 1 shows ${JSON.stringify(name)}`);
  const goal = await page.locator("#plan-goal").textContent();
  if (goal !== "Watch <b>this</b> plan") throw new Error(`the goal shows ${JSON.stringify(goal)}`);

  // The page follows the plan as agents change it.
  await api("POST", "/api/plans/web/ops/startNextTask", {}, { "X-Planc-Agent": "alice" });
  await status(1).filter({ hasText: /^in_progress$/ }).waitFor();
  await page.locator('[data-task-id="1"] .holder', { hasText: "held by alice" }).waitFor();
  await api("POST", "/api/plans/web/ops/completeTask", { agent: "alice", result: "<script>window.__pwned=2</script>" });
  await status(1).filter({ hasText: /^completed$/ }).waitFor();
  const result = await page.locator('[data-task-id="1"] .result').textContent();
  if (result !== "<script>window.__pwned=2</script>") throw new Error(`the result shows ${JSON.stringify(result)}`);
  await page.locator("#log", { hasText: "completed #1 by alice" }).waitFor();

  // A plan created meanwhile appears in the list.
  await api("POST", "/api/plans?id=later", { planc: 1, meta: { id: "later", goal: "g" }, tasks: [{ id: 1, name: "x", status: "pending", dependencies: [] }] });
  await page.locator('#plans a[data-plan-id="later"]').waitFor();

  // A malformed escape in the address (`%` not followed by two hex digits)
  // neither stops the page nor its following of the plan.
  await page.goto(base + "/#plan=%E0%A4%A");
  await page.locator("#conn", { hasText: "live" }).waitFor();
  await page.locator('#plans a[data-plan-id="web"]').waitFor();
  await page.evaluate(() => { location.hash = "#plan=web%"; });
  await page.evaluate(() => { location.hash = "#plan=web"; });
  await status(1).filter({ hasText: /^completed$/ }).waitFor();

  const pwned = await page.evaluate(() => window.__pwned);
  if (pwned !== undefined) throw new Error(`plan text ran as code: ${pwned}`);
  if ((await page.locator("#layers img, #layers script").count()) !== 0) throw new Error("plan text became elements");
  if (errors.length) throw new Error(`page errors: ${errors.join("; ")}`);
  console.log("ok: the page showed pending, in_progress (held by alice), completed with the result, and the new plan");
} catch (error) {
  failed = true;
  console.error(String(error && error.stack || error));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
