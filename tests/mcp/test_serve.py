"""`planc serve`'s MCP endpoint (`/mcp`, streamable HTTP) driven by the official
Python MCP SDK's streamable HTTP client.

Run by tests/it/serve_mcp.rs, which starts `planc serve` on a fresh store and sets
PLANC_SERVE_URL (http://127.0.0.1:PORT):
    PLANC_SERVE_URL=http://127.0.0.1:7411 python -m unittest tests/mcp/test_serve.py
"""

import json
import os
import unittest
import urllib.parse
import urllib.request
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import jsonschema
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

BASE = os.environ.get("PLANC_SERVE_URL", "http://127.0.0.1:7411")
ROOT = Path(__file__).resolve().parents[2]
JD_PLAN = ROOT / "examples" / "jd_keyboard.plan"


def api(method, path, body=None):
    data = None
    if body is not None:
        data = body if isinstance(body, bytes) else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    try:
        with urllib.request.urlopen(request) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:
        return json.loads(error.read())


def plan(plan_id):
    return api("GET", f"/api/plans/{plan_id}")["data"]


@asynccontextmanager
async def connect(query="", headers=None):
    client = create_mcp_http_client(headers=headers or {})
    async with client:
        async with streamable_http_client(BASE + "/mcp" + query, http_client=client) as (read, write):
            async with ClientSession(read, write) as session:
                session.initialized = await session.initialize()
                yield session


async def call(session, name, args=None):
    result = await session.call_tool(name, args or {})
    content = result.structured_content
    assert content is not None, f"{name}: no structured content"
    assert json.loads(result.content[0].text) == content, f"{name}: text and structured content differ"
    return content, bool(result.is_error)


class ServeMcpTest(unittest.TestCase):
    """One server for the whole class; each test makes its own plans."""

    def run_async(self, fn):
        anyio.run(fn)

    def test_1_a_session_works_on_the_plan_it_names_never_the_only_one(self):
        for plan_id in list(p["plan_id"] for p in api("GET", "/api/plans")["data"]["plans"]):
            api("DELETE", "/api/plans/" + urllib.parse.quote(plan_id))
        created = api("POST", "/api/plans?id=solo", JD_PLAN.read_bytes())
        self.assertTrue(created["success"], created)

        async def body():
            async with connect(headers={"X-Planc-Agent": "alice"}) as session:
                tools = (await session.list_tools()).tools
                names = [t.name for t in tools]
                self.assertEqual(names[:3], ["getCurrentTask", "startNextTask", "startTask"])
                for tool in tools:
                    jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                    self.assertIn("plan_id", tool.input_schema["properties"], tool.name)
                # One plan in the store, but this session named none: refused, saying how.
                data, is_error = await call(session, "startNextTask")
                self.assertTrue(is_error, data)
                self.assertEqual(data["error"]["code"], "PLAN_NOT_FOUND")
                self.assertEqual(data["error"]["details"], {"field": "plan_id", "plans": ["solo"]})
                self.assertIn("name one with plan_id", data["error"]["message"])
                self.assertEqual(plan("solo")["tasks"][0]["status"], "pending")
                # The first plan it names is the session's; the agent is the header's.
                data, is_error = await call(session, "startNextTask", {"plan_id": "solo"})
                self.assertFalse(is_error, data)
                self.assertEqual(data["data"]["task"]["id"], 1)
                self.assertEqual(plan("solo")["tasks"][0]["holder"]["agent"], "alice")

                api("POST", "/api/plans?id=second", JD_PLAN.read_bytes())
                # Two plans: a call without plan_id still goes to the session's plan.
                data, is_error = await call(session, "completeTask", {"result": "opened"})
                self.assertFalse(is_error, data)
                self.assertEqual(data["data"]["task_id"], 1)
                self.assertEqual(plan("solo")["tasks"][0]["result"], "opened")
                data, is_error = await call(session, "getPlanStatus", {"plan_id": "nope"})
                self.assertTrue(is_error)
                self.assertEqual(data["error"]["code"], "PLAN_NOT_FOUND")
                # The `agent` argument wins over the session's; naming another plan
                # does not move the session.
                data, _ = await call(session, "startNextTask", {"plan_id": "second", "agent": "bob"})
                self.assertEqual(plan("second")["tasks"][0]["holder"]["agent"], "bob")
                data, is_error = await call(session, "startNextTask")
                self.assertFalse(is_error, data)
                self.assertEqual(plan("solo")["tasks"][1]["status"], "in_progress")
                self.assertEqual(plan("second")["tasks"][1]["status"], "pending")
        self.run_async(body)

    def test_2_each_session_is_an_agent(self):
        api("POST", "/api/plans?id=pair", JD_PLAN.read_bytes())

        async def body():
            async with connect() as one, connect() as two:
                a, _ = await call(one, "startTask", {"plan_id": "pair", "task_id": 1})
                self.assertEqual(a["data"]["task"]["id"], 1, a)
                doc = plan("pair")
                holder = doc["tasks"][0]["holder"]["agent"]
                self.assertRegex(holder, r"^session-[0-9a-f]{8}$")
                # The other session holds nothing: its id-less complete is refused...
                data, is_error = await call(two, "completeTask", {"plan_id": "pair", "result": "x"})
                self.assertTrue(is_error, data)
                # ...while the first completes its own task.
                data, is_error = await call(one, "completeTask", {"plan_id": "pair", "result": "mine"})
                self.assertFalse(is_error, data)
                self.assertEqual(plan("pair")["tasks"][0]["status"], "completed")
        self.run_async(body)

    def test_3_dialects_by_query_or_header(self):
        api("POST", "/api/plans?id=third", JD_PLAN.read_bytes())

        async def body():
            async with connect("?dialect=tasks") as session:
                names = [t.name for t in (await session.list_tools()).tools]
                self.assertEqual(names, ["startNextTask", "completeCurrentTask", "addTask", "modifyTask",
                                         "skipTask", "failCurrentTask"])
                data, is_error = await call(session, "startNextTask", {"plan_id": "third"})
                self.assertFalse(is_error, data)
                self.assertEqual((data["id"], data["status"]), (1, "in_progress"))
                data, _ = await call(session, "completeCurrentTask",
                                     {"plan_id": "third", "result_message": "opened"})
                self.assertEqual(data, {"success": True, "message": "Task 1 marked as completed."})
                self.assertEqual(plan("third")["tasks"][0]["result"], "opened")
            # the Plan Tool: plan_id is the dialect's own argument; a new id creates a plan.
            async with connect(headers={"X-Planc-Dialect": "plan-tool"}) as session:
                names = [t.name for t in (await session.list_tools()).tools]
                self.assertIn("create_plan_from_structure", names)
                data, is_error = await call(session, "create_plan_from_structure", {
                    "plan_id": "p002",
                    "structure_data": {"name": "Ship it", "steps": [{"step_id": "s", "name": "Build", "tasks": [
                        {"task_id": "a", "name": "Compile"}, {"task_id": "b", "name": "Test"}]}]},
                })
                self.assertFalse(is_error, data)
                self.assertEqual(data, {"result": True})
                ids = [p["plan_id"] for p in api("GET", "/api/plans")["data"]["plans"]]
                self.assertIn("p002", ids)
                data, is_error = await call(session, "get_plan_status", {"plan_id": "elsewhere"})
                self.assertTrue(is_error)
                self.assertEqual(data["error"]["code"], "PLAN_NOT_FOUND")
            # Plan-Act's planner creates a plan named after its document.
            async with connect("?dialect=plan-act") as session:
                data, is_error = await call(session, "get_plan", {"plan_id": "p002"})
                self.assertFalse(is_error, data)
        self.run_async(body)

    def test_4_unknown_dialect_is_refused(self):
        async def body():
            with self.assertRaises(Exception):
                async with connect("?dialect=klingon"):
                    pass
        self.run_async(body)

    def test_5_each_plan_is_a_resource_and_the_prompt_takes_a_plan_id(self):
        for plan_id in list(p["plan_id"] for p in api("GET", "/api/plans")["data"]["plans"]):
            api("DELETE", "/api/plans/" + urllib.parse.quote(plan_id))
        api("POST", "/api/plans?id=solo", JD_PLAN.read_bytes())

        async def body():
            async with connect(headers={"X-Planc-Agent": "ann"}) as session:
                caps = session.initialized.capabilities
                self.assertIsNotNone(caps.resources)
                self.assertIsNotNone(caps.prompts)
                resources = (await session.list_resources()).resources
                self.assertEqual([(str(r.uri), r.name, r.mime_type) for r in resources],
                                 [("planc://plans/solo", "solo", "application/json")])
                templates = (await session.list_resource_templates()).resource_templates
                self.assertEqual([(t.uri_template, t.name) for t in templates],
                                 [("planc://plans/{plan_id}", "plan")])
                # The session works on no plan yet: planc://plan and the prompt
                # without plan_id name none, even with one plan in the store.
                for attempt in [
                    lambda: session.get_prompt("plan_context"),
                    lambda: session.read_resource("planc://plan"),
                ]:
                    with self.assertRaises(Exception) as raised:
                        await attempt()
                    self.assertIn("this session works on no plan yet: name one with plan_id",
                                  str(raised.exception))
                # Naming it (a read) makes it the session's plan.
                data, is_error = await call(session, "getPlanStatus", {"plan_id": "solo"})
                self.assertFalse(is_error, data)
                for uri in ["planc://plans/solo", "planc://plan"]:
                    contents = (await session.read_resource(uri)).contents
                    self.assertEqual(len(contents), 1)
                    self.assertEqual((str(contents[0].uri), contents[0].mime_type), (uri, "application/json"))
                    self.assertEqual(json.loads(contents[0].text), plan("solo"))
                prompts = (await session.list_prompts()).prompts
                self.assertEqual([p.name for p in prompts], ["plan_context"])
                self.assertEqual([(a.name, a.required) for a in prompts[0].arguments], [("plan_id", False)])
                text = (await session.get_prompt("plan_context")).messages[0].content.text
                self.assertIn(plan("solo")["meta"]["goal"], text)

                # Two plans (one with a name to encode): each its own resource; a
                # change shows in the next read and prompt.
                api("POST", "/api/plans?id=" + urllib.parse.quote("second plan"), JD_PLAN.read_bytes())
                await call(session, "startNextTask", {"plan_id": "second plan"})
                uris = sorted(str(r.uri) for r in (await session.list_resources()).resources)
                self.assertEqual(uris, ["planc://plans/second%20plan", "planc://plans/solo"])
                contents = (await session.read_resource("planc://plans/second%20plan")).contents
                second = json.loads(contents[0].text)
                self.assertEqual(second["meta"]["id"], "second plan")
                self.assertEqual(second, plan(urllib.parse.quote("second plan")))
                self.assertEqual(second["tasks"][0]["status"], "in_progress")
                text = (await session.get_prompt("plan_context", {"plan_id": "second plan"})).messages[0].content.text
                self.assertIn(second["tasks"][0]["name"], text)
                self.assertIn("ann", text)
                solo = (await session.get_prompt("plan_context")).messages[0].content.text
                self.assertNotIn("ann", solo)
                self.assertIn(plan("solo")["meta"]["goal"], solo)
                contents = (await session.read_resource("planc://plan")).contents
                self.assertEqual(json.loads(contents[0].text), plan("solo"))

                with self.assertRaises(Exception) as raised:
                    await session.read_resource("planc://plans/nope")
                self.assertIn("no plan `nope`", str(raised.exception))
                with self.assertRaises(Exception) as raised:
                    await session.read_resource("file:///etc/passwd")
                self.assertIn("no resource file:///etc/passwd", str(raised.exception))
                with self.assertRaises(Exception) as raised:
                    await session.get_prompt("other")
                self.assertIn("no prompt `other`", str(raised.exception))
        self.run_async(body)

    def test_6_plan_act_create_plan_makes_its_own_plan_and_binds_the_session(self):
        # Another team's plan is in the store (the only one, for all this session knows).
        for plan_id in list(p["plan_id"] for p in api("GET", "/api/plans")["data"]["plans"]):
            api("DELETE", "/api/plans/" + urllib.parse.quote(plan_id))
        api("POST", "/api/plans?id=team", JD_PLAN.read_bytes())
        team = plan("team")

        def plan_ids():
            return sorted(p["plan_id"] for p in api("GET", "/api/plans")["data"]["plans"])

        async def body():
            async with connect("?dialect=plan-act") as session:
                data, is_error = await call(session, "create_plan", {
                    "title": "Search Baidu for AI Agent", "steps": ["Open Baidu", "Search AI Agent"],
                    "language": "en"})
                self.assertFalse(is_error, data)
                self.assertEqual([(e["type"], e["status"]) for e in data["events"]], [("plan", "created")])
                self.assertEqual(data["events"][0]["plan"]["title"], "Search Baidu for AI Agent")
                new = [p for p in plan_ids() if p != "team"]
                self.assertEqual(len(new), 1, plan_ids())
                self.assertRegex(new[0], r"^plan_[0-9]+$")
                data, is_error = await call(session, "start_step")
                self.assertFalse(is_error, data)
                self.assertEqual(data["events"][0]["step"]["description"], "Open Baidu")
                self.assertEqual(plan(new[0])["tasks"][0]["status"], "in_progress")
                data, is_error = await call(session, "complete_step", {"result": "opened"})
                self.assertFalse(is_error, data)
                self.assertEqual(plan(new[0])["tasks"][0]["result"], "opened")
            # Another session has no plan until its planner makes one.
            async with connect("?dialect=plan-act") as other:
                data, is_error = await call(other, "start_step")
                self.assertTrue(is_error, data)
                self.assertEqual(data["events"][0]["type"], "error")
                self.assertEqual(data["events"][0]["code"], "PLAN_NOT_FOUND")
                self.assertIn("create_plan", data["events"][0]["error"])
                data, is_error = await call(other, "create_plan", {"title": "Second", "steps": ["Only step"]})
                self.assertFalse(is_error, data)
                self.assertEqual(len(plan_ids()), 3, plan_ids())
                data, is_error = await call(other, "get_plan")
                self.assertEqual(data["plan"]["title"], "Second")
            # The team's plan was never touched.
            self.assertEqual(plan("team"), team)
            # Seed 002 on the server: a second id is a second plan; the same id
            # again is refused without "holds one plan".
            async with connect("?dialect=plan-tool") as tool:
                structure = {"name": "S", "steps": [{"step_id": "s", "name": "S", "tasks": [
                    {"task_id": "T1", "name": "One"}]}]}
                data, is_error = await call(tool, "create_plan_from_structure",
                                            {"plan_id": "p-a", "structure_data": structure})
                self.assertEqual(data, {"result": True})
                data, is_error = await call(tool, "create_plan_from_structure",
                                            {"plan_id": "p-a", "structure_data": structure})
                self.assertTrue(is_error)
                self.assertEqual(data["error"]["code"], "PLAN_EXISTS")
                self.assertEqual(data["error"]["message"],
                                 "Plan `p-a` exists already; delete it with delete_plan to create it again")
        self.run_async(body)

    def test_7_closing_a_session_is_not_a_failure(self):
        # DELETE /mcp answers 204: the SDK logs nothing when the session ends.
        async def body():
            with self.assertNoLogs("mcp.client.streamable_http", level="WARNING"):
                async with connect() as session:
                    await session.list_tools()
        self.run_async(body)


if __name__ == "__main__":
    unittest.main()
