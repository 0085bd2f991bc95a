"""Seed 002's Plan Tool over stdio holding many plans (`planc mcp --dialect plan-tool
--store URL`, or a directory), and seed 004's planner updating its plan with its own JSON,
driven by the official Python MCP SDK as those seeds' agents call planc.

Run by tests/it/mcp_python.rs (cargo test), which sets PLANC_BIN and the venv:
    PLANC_BIN=target/debug/planc python -m unittest tests/mcp/test_plan_stores.py
"""

import json
import os
import sqlite3
import subprocess
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


@asynccontextmanager
async def connect(*args):
    params = StdioServerParameters(command=PLANC, args=["mcp", *args])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            session.output_schemas = {t.name: t.output_schema for t in tools}
            yield session


async def call(session, name, args=None):
    """(structured content, is_error), checked against the tool's output schema."""
    result = await session.call_tool(name, args or {})
    content = result.structured_content
    assert content is not None, f"{name}: no structured content"
    assert json.loads(result.content[0].text) == content
    jsonschema.validate(content, session.output_schemas[name])
    return content, bool(result.is_error)


def structure(name, *tasks):
    return {"name": name, "steps": [{"step_id": "s1", "name": "Work", "tasks": [
        {"task_id": task, "name": f"Do {task}", "assignee": "dev"} for task in tasks]}]}


class PlanToolStoreTest(unittest.TestCase):
    def run_async(self, fn):
        anyio.run(fn)

    def many_plans(self, *args):
        """Seed 002's store is a dictionary of plans: create, use, delete and list them."""

        async def body():
            async with connect(*args, "--dialect", "plan-tool") as session:
                data, is_error = await call(session, "create_plan_from_structure",
                                            {"plan_id": "alpha", "structure_data": structure("Alpha", "T1", "T2")})
                self.assertEqual((data, is_error), ({"result": True}, False))
                data, is_error = await call(session, "create_plan_from_structure",
                                            {"plan_id": "beta", "structure_data": structure("Beta", "T1", "T2", "T3")})
                self.assertEqual((data, is_error), ({"result": True}, False))
                # The same id again: refused, naming it.
                data, is_error = await call(session, "create_plan_from_structure",
                                            {"plan_id": "beta", "structure_data": structure("Beta", "T1")})
                self.assertTrue(is_error)
                self.assertEqual(data, {"result": False, "error": {
                    "code": "PLAN_EXISTS",
                    "message": "Plan `beta` exists already; delete it with delete_plan to create it again"}})
                # Each plan its own: a change to beta leaves alpha as it was.
                for status in ["inprogress", "completed"]:
                    data, _ = await call(session, "update_task_status",
                                         {"plan_id": "beta", "task_id": "T3", "status": status,
                                          "result_summary": "done" if status == "completed" else None})
                    self.assertEqual(data, {"result": True})
                data, _ = await call(session, "get_task", {"plan_id": "beta", "task_id": "T3"})
                self.assertEqual((data["result"]["status"], data["result"]["result_summary"]), ("completed", "done"))
                data, _ = await call(session, "get_task", {"plan_id": "alpha", "task_id": "T1"})
                self.assertEqual(data["result"]["status"], "ready")
                # Errors name tasks by the seed's ids, statuses in the seed's words.
                data, is_error = await call(session, "update_task_status",
                                            {"plan_id": "beta", "task_id": "T3", "status": "inprogress"})
                self.assertTrue(is_error)
                self.assertEqual(data["error"], {"code": "INVALID_STATUS",
                                                 "message": "Task `T3` is completed, so it cannot be started"})
                data, is_error = await call(session, "update_task_status",
                                            {"plan_id": "beta", "task_id": "T3", "status": "error"})
                self.assertTrue(is_error)
                self.assertEqual(data["error"]["code"], "INVALID_STATUS")
                self.assertIn("`T3`", data["error"]["message"])
                self.assertNotIn("3 ", data["error"]["message"].replace("`T3`", ""))
                # The plans are listed (resources), and deleted one at a time.
                uris = sorted(str(r.uri) for r in (await session.list_resources()).resources)
                self.assertEqual(uris, ["planc://plans/alpha", "planc://plans/beta"])
                data, _ = await call(session, "delete_plan", {"plan_id": "alpha"})
                self.assertEqual(data, {"result": True})
                data, is_error = await call(session, "get_plan_status", {"plan_id": "alpha"})
                self.assertEqual((data["result"], data["error"]["code"]), (None, "PLAN_NOT_FOUND"))
                data, _ = await call(session, "get_plan_status", {"plan_id": "beta"})
                self.assertEqual(data, {"result": "running"})
                uris = [str(r.uri) for r in (await session.list_resources()).resources]
                self.assertEqual(uris, ["planc://plans/beta"])
            # A new connection sees the store as it was left.
            async with connect(*args, "--dialect", "plan-tool") as session:
                data, _ = await call(session, "get_plan_structure", {"plan_id": "beta"})
                self.assertEqual([t["status"] for t in data["result"]["steps"][0]["tasks"]],
                                 ["ready", "ready", "completed"])
        self.run_async(body)

    def test_a_directory_holds_many_plans(self):
        with tempfile.TemporaryDirectory() as tmp:
            self.many_plans(tmp)
            self.assertEqual(sorted(p.name for p in Path(tmp).glob("*.json")), ["beta.json"])

    def test_a_sqlite_store_holds_many_plans(self):
        with tempfile.TemporaryDirectory() as tmp:
            db = Path(tmp) / "plans.db"
            self.many_plans("--store", f"sqlite:{db}")
            ids = [row[0] for row in sqlite3.connect(db).execute("SELECT plan_id FROM plans")]
            self.assertEqual(ids, ["beta"])

    def test_a_compiled_plan_that_declares_its_order_has_it_enforced_in_the_seeds_ids(self):
        async def body():
            with tempfile.TemporaryDirectory() as tmp:
                init = subprocess.run([PLANC, "run", "init", str(ROOT / "examples" / "jd_keyboard.plan"),
                                       "-o", str(Path(tmp) / "jd_keyboard.json"), "--set", "site=jd.com"],
                                      capture_output=True, text=True)
                self.assertEqual(init.returncode, 0, init.stderr)
                async with connect(tmp, "--dialect", "plan-tool") as session:
                    data, is_error = await call(session, "update_task_status",
                                                {"plan_id": "jd_keyboard", "task_id": "search", "status": "inprogress"})
                    self.assertTrue(is_error)
                    self.assertEqual(data["error"], {
                        "code": "DEPENDENCIES_NOT_MET",
                        "message": "Task `search` cannot start: it waits for task(s) `type_query`"})
                    data, is_error = await call(session, "update_task_status",
                                                {"plan_id": "jd_keyboard", "task_id": "open", "status": "inprogress"})
                    self.assertEqual(data, {"result": True})
        self.run_async(body)

    def test_a_state_file_holds_one_plan_and_says_where_to_hold_many(self):
        async def body():
            with tempfile.TemporaryDirectory() as tmp:
                state = str(Path(tmp) / "plan.json")
                async with connect(state, "--dialect", "plan-tool") as session:
                    data, _ = await call(session, "create_plan_from_structure",
                                         {"plan_id": "alpha", "structure_data": structure("Alpha", "T1")})
                    self.assertEqual(data, {"result": True})
                    data, is_error = await call(session, "create_plan_from_structure",
                                                {"plan_id": "beta", "structure_data": structure("Beta", "T1")})
                    self.assertTrue(is_error)
                    self.assertEqual(data["error"]["code"], "PLAN_EXISTS")
                    self.assertIn("--store URL", data["error"]["message"])
                    self.assertNotIn("holds one plan)", data["error"]["message"])
        self.run_async(body)


class PlanActUpdateTest(unittest.TestCase):
    def run_async(self, fn):
        anyio.run(fn)

    def test_update_plan_takes_the_planners_json_and_a_failed_plan_stays_failed(self):
        async def body():
            with tempfile.TemporaryDirectory() as tmp:
                state = Path(tmp) / "plan.json"
                async with connect(str(state), "--dialect", "plan-act") as session:
                    data, is_error = await call(session, "create_plan", {
                        "title": "Search Baidu", "language": "en",
                        "steps": [{"description": "Open Baidu", "status": "pending"},
                                  {"description": "Search AI Agent", "status": "pending"}]})
                    self.assertFalse(is_error, data)
                    await call(session, "start_step")
                    await call(session, "complete_step", {"result": "opened"})
                    # The planner's own output: the whole plan, done steps included.
                    planner = {
                        "title": "Search Baidu",
                        "steps": [
                            {"description": "Open Baidu", "status": "completed", "result": "opened",
                             "success": True, "error": None, "attachments": []},
                            {"description": "Search AI Agent", "status": "pending", "result": None,
                             "success": None, "error": None, "attachments": []},
                            {"description": "Summarise the results", "status": "pending"},
                        ],
                        "language": "en",
                    }
                    data, is_error = await call(session, "update_plan", planner)
                    self.assertFalse(is_error, data)
                    steps = data["events"][0]["plan"]["steps"]
                    self.assertEqual([(s["description"], s["status"]) for s in steps], [
                        ("Open Baidu", "completed"), ("Search AI Agent", "pending"),
                        ("Summarise the results", "pending")])
                    self.assertEqual(steps[0]["result"], "opened")
                    await call(session, "start_step")
                    data, _ = await call(session, "fail_step", {"error": "captcha"})
                    self.assertEqual([(e["type"], e["status"]) for e in data["events"]],
                                     [("step", "failed"), ("plan", "failed")])
                    before = json.loads(state.read_text())
                    # A failed plan ends there (seed 004): the planner does not revive it.
                    data, is_error = await call(session, "update_plan", {
                        "title": "Search Baidu", "language": "en",
                        "steps": [{"description": "Try another search engine", "status": "pending"}]})
                    self.assertTrue(is_error)
                    self.assertEqual(data["events"][0]["type"], "error")
                    self.assertEqual(data["events"][0]["code"], "PLAN_NOT_ACTIVE")
                    self.assertIn("create_plan", data["events"][0]["error"])
                    after = json.loads(state.read_text())
                    self.assertEqual(after, before)
                    self.assertEqual(after["state"]["status"], "failed")
                    data, _ = await call(session, "get_plan")
                    self.assertEqual(len(data["plan"]["steps"]), 3)
        self.run_async(body)


if __name__ == "__main__":
    unittest.main()
