"""`planc mcp` driven by the official Python MCP SDK.

Run by tests/it/mcp_python.rs (cargo test), which sets PLANC_BIN and the venv:
    PLANC_BIN=target/debug/planc python -m unittest tests/mcp/test_mcp.py
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

PLANC = os.environ.get("PLANC_BIN", "planc")
ROOT = Path(__file__).resolve().parents[2]
JD_PLAN = ROOT / "examples" / "jd_keyboard.plan"

OPERATIONS = [
    "getCurrentTask", "startNextTask", "startTask", "completeTask", "failTask", "skipTask",
    "addTask", "updateTask", "removeTask", "getTaskById", "getTaskList", "getExecutableTaskList",
    "getPlanStatus", "pausePlan", "resumePlan", "resetPlan", "replan", "retryTask", "heartbeat",
    "logEvent", "observe",
]


@asynccontextmanager
async def connect(state, agent=None):
    args = ["mcp", str(state)] + (["--agent", agent] if agent else [])
    params = StdioServerParameters(command=PLANC, args=args)
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            yield session


class StateDir:
    """A temporary directory with a state made from the JD plan."""

    def __init__(self):
        self.dir = Path(tempfile.mkdtemp(prefix="planc-mcp-"))
        self.state = self.dir / "jd.json"
        subprocess.run([PLANC, "run", "init", str(JD_PLAN), "-o", str(self.state)], check=True,
                       stdout=subprocess.DEVNULL)

    def read(self):
        return json.loads(self.state.read_text(encoding="utf-8"))

    def events(self):
        log = self.dir / "jd.json.events.jsonl"
        return [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


async def call(session, name, args=None):
    """Calls a tool; returns (envelope, is_error), checking text and structured content agree."""
    result = await session.call_tool(name, args or {})
    envelope = result.structured_content
    assert envelope is not None, f"{name}: no structured content"
    assert json.loads(result.content[0].text) == envelope, f"{name}: text and structured content differ"
    return envelope, bool(result.is_error)


async def ok(session, name, args=None):
    envelope, is_error = await call(session, name, args)
    assert not is_error and envelope["success"] is True, f"{name}({args}): {envelope}"
    return envelope["data"]


async def err(session, name, args=None):
    envelope, is_error = await call(session, name, args)
    assert is_error and envelope["success"] is False, f"{name}({args}) succeeded: {envelope}"
    return envelope["error"]["code"]


def statuses(state):
    return [(t["id"], t["status"]) for t in state["tasks"]]


class McpTest(unittest.TestCase):
    def setUp(self):
        self.plan = StateDir()

    def tearDown(self):
        self.plan.cleanup()

    def run_async(self, fn):
        anyio.run(fn)

    def test_tools_are_the_operations_with_valid_schemas(self):
        async def body():
            async with connect(self.plan.state) as session:
                tools = (await session.list_tools()).tools
                self.assertEqual([t.name for t in tools], OPERATIONS)
                for tool in tools:
                    self.assertTrue(tool.description and len(tool.description) > 30, tool.name)
                    schema = tool.input_schema
                    jsonschema.Draft202012Validator.check_schema(schema)
                    self.assertEqual(schema["type"], "object", tool.name)
                    self.assertNotIn("$ref", json.dumps(schema), tool.name)
                by_name = {t.name: t.input_schema for t in tools}
                good = {
                    "completeTask": {"task_id": 1, "result": "ok"},
                    "failTask": {"error_message": "x", "should_retry": False},
                    "addTask": {"name": "x", "dependencies": [1, "open"], "after_task_id": "open"},
                    "updateTask": {"task_id": "search", "updates": {"name": "y"}},
                    "replan": {"steps": ["a", {"name": "b", "dependencies": [1]}]},
                    "getTaskList": {"status": "pending"},
                }
                for name, args in good.items():
                    jsonschema.validate(args, by_name[name])
                for name, args in {"addTask": {}, "startTask": {}, "replan": {"steps": 3}}.items():
                    with self.assertRaises(jsonschema.ValidationError, msg=name):
                        jsonschema.validate(args, by_name[name])
                # The same definitions as `planc tools --format mcp`.
                printed = json.loads(subprocess.run([PLANC, "tools", "--format", "mcp"], check=True,
                                                    capture_output=True, text=True).stdout)
                self.assertEqual([t["inputSchema"] for t in printed["tools"]], [t.input_schema for t in tools])
        self.run_async(body)

    def test_seed_000_jd_scenario(self):
        read = self.plan.read

        async def body():
            async with connect(self.plan.state) as session:
                data = await ok(session, "startNextTask")
                self.assertEqual(data["task"]["id"], 1)
                state = read()
                self.assertEqual(state["state"]["current_task_id"], 1)
                self.assertEqual(statuses(state)[0], (1, "in_progress"))

                data = await ok(session, "getCurrentTask")
                self.assertEqual(data["name"], "Navigate to jd.com homepage")

                data = await ok(session, "completeTask", {"result": "Successfully navigated to JD.com"})
                self.assertEqual(data["task_id"], 1)
                state = read()
                self.assertIsNone(state["state"]["current_task_id"])
                self.assertEqual(state["tasks"][0]["result"], "Successfully navigated to JD.com")

                data = await ok(session, "startNextTask")
                self.assertEqual(data["task"]["id"], 2)
                self.assertEqual(read()["state"]["current_task_id"], 2)
                await ok(session, "completeTask", {"task_id": 2, "result": "Typed 机械键盘"})
                self.assertEqual(statuses(read())[1], (2, "completed"))

                # A popup covers the search button: insert a task after 2.
                data = await ok(session, "addTask", {
                    "name": "Close the new user coupon popup",
                    "dependencies": [2],
                    "reasoning": "An unexpected popup is blocking the search button.",
                    "after_task_id": 2,
                })
                self.assertEqual(data["new_task"]["id"], 6)
                state = read()
                self.assertEqual([t["id"] for t in state["tasks"]], [1, 2, 6, 3, 4, 5])
                self.assertEqual(state["tasks"][2]["dependencies"], [2])
                self.assertEqual(state["tasks"][3]["dependencies"], [6])

                data = await ok(session, "startNextTask")
                self.assertEqual(data["task"]["id"], 6)
                self.assertEqual(read()["state"]["current_task_id"], 6)
                await ok(session, "completeTask", {"result": "Popup closed"})

                for expected in (3, 4, 5):
                    data = await ok(session, "startNextTask")
                    self.assertEqual(data["task"]["id"], expected)
                    self.assertEqual(read()["state"]["current_task_id"], expected)
                    await ok(session, "completeTask", {"result": f"done {expected}"})
                    self.assertEqual(dict(statuses(read()))[expected], "completed")

                data = await ok(session, "startNextTask")
                self.assertIsNone(data["task"])
                self.assertEqual(data["reason"], "completed")
                status = await ok(session, "getPlanStatus")
                self.assertEqual(status["status"], "completed")
                self.assertEqual(status["progress"], 1.0)
                self.assertEqual(status["completed_tasks"], 6)
                state = read()
                self.assertEqual(state["state"]["status"], "completed")
                # Every change is one revision and one line of the event log.
                self.assertEqual(state["state"]["revision"], 14)
                self.assertEqual(len(self.plan.events()), 14)
        self.run_async(body)

    def test_operation_errors_are_tool_errors(self):
        async def body():
            async with connect(self.plan.state) as session:
                self.assertEqual(await err(session, "getTaskById", {"task_id": 99}), "TASK_NOT_FOUND")
                self.assertEqual(await err(session, "addTask", {"name": "x", "dependencies": [42]}),
                                 "INVALID_DEPENDENCY")
                self.assertEqual(await err(session, "updateTask", {"task_id": "open", "dependencies": ["search"]}),
                                 "CIRCULAR_DEPENDENCY")
                self.assertEqual(await err(session, "completeTask", {}), "NO_CURRENT_TASK")
                self.assertEqual(await err(session, "startTask", {}), "INVALID_ARGUMENT")
                await ok(session, "startNextTask")
                self.assertEqual(await err(session, "removeTask", {"task_id": 1}), "TASK_NOT_EDITABLE")
                self.assertEqual(await err(session, "startTask", {"task_id": 1}), "INVALID_STATUS")
                await ok(session, "pausePlan")
                self.assertEqual(await err(session, "completeTask", {}), "PLAN_NOT_ACTIVE")
                await ok(session, "resumePlan")
                # The session is still fine after all those errors.
                data = await ok(session, "failTask", {"error_message": "network down", "should_retry": False})
                self.assertFalse(data["will_retry"])
                data = await ok(session, "replan", {"steps": ["Open jd.com again", "Search"]})
                self.assertEqual(data["removed_tasks"], [1, 2, 3, 4, 5])
                tasks = (await ok(session, "getTaskList"))["tasks"]
                self.assertEqual([t["name"] for t in tasks], ["Open jd.com again", "Search"])
        self.run_async(body)

    def test_resource_and_prompt(self):
        async def body():
            async with connect(self.plan.state) as session:
                resources = (await session.list_resources()).resources
                self.assertEqual([str(r.uri) for r in resources], ["planc://plan"])
                await ok(session, "startNextTask")
                contents = (await session.read_resource("planc://plan")).contents
                document = json.loads(contents[0].text)
                self.assertEqual(document["format"], "planc/1")
                self.assertEqual(document["state"]["current_task_id"], 1)
                prompts = (await session.list_prompts()).prompts
                self.assertEqual([p.name for p in prompts], ["plan_context"])
                prompt = await session.get_prompt("plan_context")
                text = prompt.messages[0].content.text
                expected = subprocess.run([PLANC, "run", "prompt", str(self.plan.state)], check=True,
                                          capture_output=True, text=True).stdout
                self.assertEqual(text, expected)
                self.assertIn("当前步骤: #1", text)
        self.run_async(body)

    def test_two_clients_at_once(self):
        per_client = 10

        async def client(tag):
            async with connect(self.plan.state) as session:
                for k in range(per_client):
                    await ok(session, "addTask", {"name": f"{tag} {k}"})
                    await ok(session, "getPlanStatus")

        async def body():
            async with anyio.create_task_group() as group:
                group.start_soon(client, "first")
                group.start_soon(client, "second")

        self.run_async(body)
        state = self.plan.read()
        names = [t["name"] for t in state["tasks"]]
        self.assertEqual(len(names), 5 + 2 * per_client)
        for tag in ("first", "second"):
            self.assertEqual([n for n in names if n.startswith(tag)], [f"{tag} {k}" for k in range(per_client)])
        self.assertEqual(len({t["id"] for t in state["tasks"]}), len(names), "no id given twice")
        self.assertEqual(state["state"]["revision"], 1 + 2 * per_client)
        self.assertEqual(len(self.plan.events()), 1 + 2 * per_client)

    def test_parallel_agents_each_complete_their_own_task(self):
        # The finding: agents sharing one state, completing without ids.
        # Two agents are named by their server (planc mcp --agent), two by the
        # `agent` argument; each must only ever finish the task it started.
        wide = self.plan.dir / "wide.plan"
        wide.write_text("plan wide {\n    goal \"Many independent tasks\"\n"
                        + "".join(f"    task t{i} \"Task {i}\"\n" for i in range(1, 17)) + "}\n",
                        encoding="utf-8")
        state = self.plan.dir / "wide.json"
        subprocess.run([PLANC, "run", "init", str(wide), "-o", str(state)], check=True,
                       stdout=subprocess.DEVNULL)
        done = {}

        async def worker(name, by_server):
            extra = {} if by_server else {"agent": name}
            async with connect(state, name if by_server else None) as session:
                mine = []
                while True:
                    started = await ok(session, "startNextTask", {**extra, "lease": "5m"})
                    if started["task"] is None:
                        break
                    self.assertEqual(started["task"]["holder"]["agent"], name)
                    current = await ok(session, "getCurrentTask", extra)
                    self.assertEqual(current["id"], started["task"]["id"])
                    await anyio.sleep(0.01)
                    completed = await ok(session, "completeTask", {**extra, "result": f"by {name}"})
                    self.assertEqual(completed["task_id"], started["task"]["id"],
                                     f"{name} completed another agent's task")
                    mine.append(completed["task_id"])
                done[name] = mine

        async def body():
            async with anyio.create_task_group() as group:
                for k in range(4):
                    group.start_soon(worker, f"agent-{k}", k % 2 == 0)

        self.run_async(body)
        final = json.loads(state.read_text(encoding="utf-8"))
        self.assertEqual(final["state"]["status"], "completed")
        self.assertEqual(sorted(i for ids in done.values() for i in ids), list(range(1, 17)))
        for name, ids in done.items():
            for i in ids:
                self.assertEqual(final["tasks"][i - 1]["result"], f"by {name}")

    def test_identities_leases_and_retries(self):
        async def body():
            async with connect(self.plan.state) as session:
                # Two tasks agents hold: a caller without an identity has none of its own.
                await ok(session, "startTask", {"task_id": "open", "agent": "alice", "lease": 60})
                await ok(session, "addTask", {"name": "Side task"})
                await ok(session, "startTask", {"task_id": 6, "agent": "bob"})
                self.assertEqual(await err(session, "completeTask", {"result": "x"}), "NO_CURRENT_TASK")
                # bob's task is bob's: alice is refused unless she takes it over.
                self.assertEqual(await err(session, "skipTask", {"task_id": 6, "agent": "alice"}), "TASK_HELD")
                self.assertEqual(await err(session, "startNextTask", {"lease": "forever"}), "INVALID_ARGUMENT")
                beat = await ok(session, "heartbeat", {"agent": "alice", "lease": "2m"})
                self.assertEqual([r["task_id"] for r in beat["renewed"]], [1])
                holder = self.plan.read()["tasks"][0]["holder"]
                self.assertEqual((holder["agent"], holder["lease_seconds"]), ("alice", 120))
                # failTask retries by default (should_retry defaults to true, budget 2).
                failed = await ok(session, "failTask", {"agent": "bob", "error_message": "flaky"})
                self.assertEqual((failed["task_id"], failed["will_retry"], failed["retry_budget"]), (6, True, 2))
                failed = await ok(session, "failTask", {"agent": "alice", "error_message": "gone",
                                                         "should_retry": False})
                self.assertEqual(failed["will_retry"], False)
                retried = await ok(session, "retryTask", {"task_id": "open"})
                self.assertEqual(retried["task"]["status"], "pending")
                self.assertEqual(await err(session, "retryTask", {"task_id": "open"}), "INVALID_STATUS")
                status = await ok(session, "getPlanStatus")
                self.assertEqual(status["blocked_tasks"], 4)

        self.run_async(body)
        kinds = [e["kind"] for r in self.plan.events() for e in r["events"]]
        self.assertIn("lease_renewed", kinds)
        self.assertIn("retried", kinds)

    def test_the_example_agent_runs_the_plan(self):
        agent = ROOT / "examples" / "agents" / "plan_agent.py"
        result = subprocess.run(
            [sys.executable, str(agent), "--planc", PLANC, "--state", str(self.plan.state),
             "--scripted"],
            capture_output=True, text=True, timeout=120,
        )
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn("plan completed", result.stdout)
        state = self.plan.read()
        self.assertEqual(state["state"]["status"], "completed")
        self.assertIn("Close the new user coupon popup", [t["name"] for t in state["tasks"]])


if __name__ == "__main__":
    unittest.main()
