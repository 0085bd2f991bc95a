"""`planc mcp --dialect D` driven by the official Python MCP SDK: one scenario per
seed, written from the seed's own example, checking the state file after the calls.

Run by tests/it/mcp_python.rs (cargo test), which sets PLANC_BIN and the venv:
    PLANC_BIN=target/debug/planc python -m unittest tests/mcp/test_dialects.py
"""

import json
import os
import shutil
import subprocess
import tempfile
import unittest
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

PLANC = os.environ.get("PLANC_BIN", "planc")
ROOT = Path(__file__).resolve().parents[2]


def without_planc(value):
    """`value` without the `planc` objects of planc's exports."""
    if isinstance(value, dict):
        return {k: without_planc(v) for k, v in value.items() if k != "planc"}
    if isinstance(value, list):
        return [without_planc(v) for v in value]
    return value


@asynccontextmanager
async def connect_session(cwd, key, dialect):
    """`planc mcp --session KEY --dialect D`, run in `cwd`."""
    params = StdioServerParameters(command=PLANC, args=["mcp", "--session", key, "--dialect", dialect],
                                   cwd=str(cwd))
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            session.output_schemas = {t.name: t.output_schema for t in tools}
            yield session


@asynccontextmanager
async def connect(state, dialect):
    params = StdioServerParameters(command=PLANC, args=["mcp", str(state), "--dialect", dialect])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = (await session.list_tools()).tools
            session.output_schemas = {t.name: t.output_schema for t in tools}
            yield session


async def call(session, name, args=None):
    """(structured content, is_error); the content conforms to the tool's output schema
    and equals its text."""
    result = await session.call_tool(name, args or {})
    content = result.structured_content
    assert content is not None, f"{name}: no structured content"
    assert json.loads(result.content[0].text) == content, f"{name}: text and structured content differ"
    jsonschema.validate(content, session.output_schemas[name])
    return content, bool(result.is_error)


async def ok(session, name, args=None):
    content, is_error = await call(session, name, args)
    assert not is_error, f"{name}({args}): {content}"
    return content


async def refused(session, name, args=None):
    content, is_error = await call(session, name, args)
    assert is_error, f"{name}({args}) succeeded: {content}"
    return content


class Dir:
    def __init__(self, plan=None):
        self.dir = Path(tempfile.mkdtemp(prefix="planc-dialect-"))
        self.state = self.dir / "plan.json"
        if plan:
            subprocess.run([PLANC, "run", "init", str(ROOT / plan), "-o", str(self.state)], check=True,
                           stdout=subprocess.DEVNULL)

    def read(self):
        return json.loads(self.state.read_text(encoding="utf-8"))

    def cleanup(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def statuses(state):
    return {t["id"]: t["status"] for t in state["tasks"]}


class DialectTest(unittest.TestCase):
    def run_async(self, fn):
        anyio.run(fn)

    def test_tools_and_schemas_match_planc_tools(self):
        async def body():
            for dialect in ["planc", "tasks", "plan-tool", "steps", "plan-act"]:
                work = Dir("examples/jd_keyboard.plan")
                try:
                    async with connect(work.state, dialect) as session:
                        tools = (await session.list_tools()).tools
                        printed = json.loads(subprocess.run(
                            [PLANC, "tools", "--dialect", dialect, "--format", "mcp"],
                            check=True, capture_output=True, text=True).stdout)["tools"]
                        self.assertEqual([t.name for t in tools], [t["name"] for t in printed])
                        for tool, expected in zip(tools, printed):
                            jsonschema.Draft202012Validator.check_schema(tool.input_schema)
                            jsonschema.Draft202012Validator.check_schema(tool.output_schema)
                            self.assertEqual(tool.input_schema, expected["inputSchema"])
                            self.assertEqual(tool.output_schema, expected["outputSchema"])
                        # A tool of another dialect is a protocol error, not a tool result.
                        other = "get_plan_structure" if dialect != "plan-tool" else "startNextTask"
                        with self.assertRaises(MCPError) as caught:
                            await session.call_tool(other, {})
                        self.assertEqual(caught.exception.error.code, -32602)
                        self.assertIn(f"Unknown tool: {other}", caught.exception.error.message)
                finally:
                    work.cleanup()
        self.run_async(body)

    def test_tasks_seed_000_jd_flow(self):
        """The planManager's workflow example: complete #1, start #2, a popup needs a task after #2."""
        work = Dir("examples/jd_keyboard.plan")

        async def body():
            async with connect(work.state, "tasks") as session:
                task = await ok(session, "startNextTask")
                self.assertEqual(task["id"], 1)
                self.assertEqual(set(task), {"id", "name", "status", "dependencies", "reasoning", "result"})
                self.assertEqual(work.read()["state"]["current_task_id"], 1)
                done = await ok(session, "completeCurrentTask", {"result_message": "Successfully navigated to JD.com"})
                self.assertEqual(done, {"success": True, "message": "Task 1 marked as completed."})
                state = work.read()
                self.assertIsNone(state["state"]["current_task_id"])
                self.assertEqual(state["tasks"][0]["result"], "Successfully navigated to JD.com")
                task = await ok(session, "startNextTask")
                self.assertEqual((task["id"], task["status"]), (2, "in_progress"))
                await ok(session, "completeCurrentTask", {"result_message": "Typed 机械键盘"})
                added = await ok(session, "addTask", {
                    "name": "Close the new user coupon popup",
                    "dependencies": [2],
                    "reasoning": "An unexpected popup is blocking the search button.",
                    "after_task_id": 2,
                })
                self.assertTrue(added["success"])
                self.assertEqual(added["newTask"]["id"], 6)
                state = work.read()
                self.assertEqual([t["id"] for t in state["tasks"]], [1, 2, 6, 3, 4, 5])
                self.assertEqual(state["tasks"][3]["dependencies"], [6])
                task = await ok(session, "startNextTask")
                self.assertEqual(task["id"], 6)
                # modifyTask: only a task not yet started.
                updated = await ok(session, "modifyTask", {"task_id": 5, "new_name": "Add it to the cart"})
                self.assertEqual(updated["updatedTask"]["name"], "Add it to the cart")
                error = await refused(session, "modifyTask", {"task_id": 6, "new_name": "x"})
                self.assertEqual((error["success"], error["code"]), (False, "TASK_NOT_EDITABLE"))
                error = await refused(session, "modifyTask", {"task_id": 5, "name": "x"})
                self.assertEqual(error["code"], "INVALID_ARGUMENT")
                self.assertIn("unknown field `name`", error["message"])
                failed = await ok(session, "failCurrentTask", {"error_message": "No close button"})
                self.assertEqual(failed["message"], "Task 6 marked as failed.")
                self.assertEqual(statuses(work.read())[6], "failed")
                skipped = await ok(session, "skipTask", {"task_id": 6, "reason": "The popup went away"})
                self.assertEqual(skipped["message"], "Task 6 skipped.")
                for expected in (3, 4, 5):
                    self.assertEqual((await ok(session, "startNextTask"))["id"], expected)
                    await ok(session, "completeCurrentTask", {"result_message": f"done {expected}"})
                self.assertEqual(await ok(session, "startNextTask"), {"message": "All tasks are completed or blocked."})
                self.assertEqual(work.read()["state"]["status"], "completed")

        try:
            self.run_async(body)
        finally:
            work.cleanup()

    def test_tasks_seed_000_cursor_after_two_starts(self):
        """Two startNextTask calls, then completeCurrentTask and failCurrentTask: the seed's one
        cursor (the last task started) is followed, never a dead end; another agent's task is
        refused to skipTask (TASK_HELD) unless it says takeover."""
        work = Dir()
        plan = work.dir / "wide.plan"
        plan.write_text('plan wide {\n    goal "Independent"\n    task a "A"\n    task b "B"\n    task c "C"\n}\n',
                        encoding="utf-8")
        subprocess.run([PLANC, "run", "init", str(plan), "-o", str(work.state)], check=True,
                       stdout=subprocess.DEVNULL)

        async def body():
            async with connect(work.state, "tasks") as session:
                self.assertEqual((await ok(session, "startNextTask"))["id"], 1)
                self.assertEqual((await ok(session, "startNextTask"))["id"], 2)
                done = await ok(session, "completeCurrentTask", {"result_message": "B done"})
                self.assertEqual(done, {"success": True, "message": "Task 2 marked as completed."})
                failed = await ok(session, "failCurrentTask", {"error_message": "A broke"})
                self.assertEqual(failed, {"success": True, "message": "Task 1 marked as failed."})
                error = await refused(session, "completeCurrentTask", {"result_message": "x"})
                self.assertEqual(error["code"], "NO_CURRENT_TASK")
                self.assertNotIn("task_id", error["message"])
                subprocess.run([PLANC, "run", "next", str(work.state), "--agent", "bob"], check=True,
                               stdout=subprocess.DEVNULL)
                error = await refused(session, "skipTask", {"task_id": 3, "reason": "x"})
                self.assertEqual(error["code"], "TASK_HELD")
                skipped = await ok(session, "skipTask", {"task_id": 3, "reason": "x", "takeover": True})
                self.assertEqual(skipped["message"], "Task 3 skipped.")

        try:
            self.run_async(body)
        finally:
            work.cleanup()

    def test_plan_tool_seed_002_workflow(self):
        """The Plan Tool: a plan instantiated from a workflow, agents by role, plan_id checked."""
        work = Dir()
        structure = {
            "name": "Quarterly report", "description": "Collect, analyse and publish the figures",
            "workflow_template_source": "SAFE_SOP_v9.0",
            "steps": [
                {"step_id": "collect", "name": "Collect", "tasks": [
                    {"task_id": "t1", "name": "Download the reports", "assignee": "researcher"},
                    {"task_id": "t2", "name": "Extract the figures", "assignee": "analyst",
                     "description": "Revenue and profit for five years"}]},
                {"step_id": "publish", "name": "Publish", "tasks": [
                    {"task_id": "t3", "name": "Draw the charts", "assignee": "analyst"}]},
            ],
        }

        async def body():
            async with connect(work.state, "plan-tool") as session:
                self.assertEqual(await refused(session, "get_plan_status", {"plan_id": "q1"}),
                                 {"result": None, "error": {"code": "PLAN_NOT_FOUND", "message": "Plan `q1` not found"}})
                self.assertEqual(await ok(session, "create_plan_from_structure",
                                          {"plan_id": "q1", "structure_data": structure}), {"result": True})
                again = await refused(session, "create_plan_from_structure", {"plan_id": "q2", "structure_data": structure})
                self.assertEqual((again["result"], again["error"]["code"]), (False, "PLAN_EXISTS"))
                state = work.read()
                self.assertEqual(state["meta"]["id"], "q1")
                self.assertEqual([(t["key"], t["status"]) for t in state["tasks"]],
                                 [("t1", "pending"), ("t2", "pending"), ("t3", "pending")])
                ready = (await ok(session, "get_ready_tasks", {"plan_id": "q1"}))["result"]
                self.assertEqual([(t["task_id"], t["status"]) for t in ready],
                                 [("t1", "ready"), ("t2", "ready"), ("t3", "ready")])
                mine = (await ok(session, "get_tasks_for_role", {"plan_id": "q1", "role_id": "analyst"}))["result"]
                self.assertEqual([t["task_id"] for t in mine], ["t2", "t3"])
                self.assertEqual(await ok(session, "update_task_status",
                                          {"plan_id": "q1", "task_id": "t2", "status": "inprogress"}), {"result": True})
                self.assertEqual(statuses(work.read())[2], "in_progress")
                task = (await ok(session, "get_task", {"plan_id": "q1", "task_id": "t2"}))["result"]
                self.assertEqual(task["status"], "inprogress")
                # A wrong plan_id is PLAN_NOT_FOUND, never this plan's data, and changes nothing.
                wrong = await refused(session, "get_task", {"plan_id": "q2", "task_id": "t2"})
                self.assertEqual((wrong["result"], wrong["error"]["code"]), (None, "PLAN_NOT_FOUND"))
                revision = work.read()["state"]["revision"]
                wrong = await refused(session, "update_task_status",
                                      {"plan_id": "q2", "task_id": "t2", "status": "completed"})
                self.assertEqual((wrong["result"], wrong["error"]["code"]), (False, "PLAN_NOT_FOUND"))
                self.assertEqual(work.read()["state"]["revision"], revision)
                bad = await refused(session, "update_task_status",
                                    {"plan_id": "q1", "task_id": "t2", "status": "in_progress"})
                self.assertEqual(bad["error"]["code"], "INVALID_ARGUMENT")
                await ok(session, "update_task_status",
                         {"plan_id": "q1", "task_id": "t2", "status": "completed", "result_summary": "5 years extracted"})
                await ok(session, "update_task_status",
                         {"plan_id": "q1", "task_id": "t1", "status": "skipped", "result_summary": "Already downloaded"})
                await ok(session, "update_task_status",
                         {"plan_id": "q1", "task_id": "t3", "status": "error", "result_summary": "No chart tool"})
                self.assertEqual(statuses(work.read()), {1: "skipped", 2: "completed", 3: "failed"})
                self.assertEqual(await ok(session, "get_plan_status", {"plan_id": "q1"}), {"result": "error"})
                plan = (await ok(session, "get_plan_structure", {"plan_id": "q1"}))["result"]
                self.assertEqual([s["step_id"] for s in plan["steps"]], ["collect", "publish"])
                self.assertEqual(plan["steps"][0]["tasks"][1]["result_summary"], "5 years extracted")
                # The same plan `planc build --target plan-tool` writes from the state.
                built = json.loads(subprocess.run([PLANC, "build", str(work.state), "--target", "plan-tool"],
                                                  check=True, capture_output=True, text=True).stdout)
                # The export also carries `planc` objects (docs/interop.md);
                # the seed's own fields are the dialect's.
                self.assertEqual(plan, without_planc(built))
                self.assertEqual(await ok(session, "delete_plan", {"plan_id": "q1"}), {"result": True})
                self.assertFalse(work.state.exists())
                self.assertEqual((await refused(session, "get_ready_tasks", {"plan_id": "q1"}))["error"]["code"],
                                 "PLAN_NOT_FOUND")

        try:
            self.run_async(body)
        finally:
            work.cleanup()

    def test_steps_seed_003_text_protocol(self):
        """The steps system: the agent's messages drive the plan; the iteration limit pauses it; 继续 resumes."""
        work = Dir("examples/baidu_search.plan")
        state = work.read()
        state["meta"]["max_iterations"] = 3
        work.state.write_text(json.dumps(state, ensure_ascii=False), encoding="utf-8")

        async def body():
            async with connect(work.state, "steps") as session:
                first = await ok(session, "observe", {"message": "我先打开百度。"})
                self.assertEqual(first["plan"]["current_step_index"], 0)
                self.assertEqual(first["plan"]["steps"][0]["status"], "running")
                self.assertEqual(first["plan"]["iteration_count"], 1)
                done = await ok(session, "observe", {"message": "百度首页已打开 [完成]"})
                self.assertEqual(done["plan"]["steps"][0], {"id": "step_1", "description": "打开百度搜索页面",
                                                            "status": "completed", "result": "百度首页已打开",
                                                            "progress": {"current": 1, "total": 4}})
                self.assertEqual(done["plan"]["current_step_index"], 1)
                paused = await ok(session, "observe", {"message": "还在搜索"})
                self.assertEqual(paused["plan"]["status"], "paused")
                self.assertIn("1/4", paused["summary"]["text"])
                self.assertEqual(paused["summary"]["current"]["name"], "输入 AI Agent 并搜索")
                self.assertEqual(work.read()["state"]["status"], "paused")
                error = await refused(session, "observe", {"message": "hello"})
                self.assertEqual(error["error"]["code"], "PLAN_NOT_ACTIVE")
                resumed = await ok(session, "observe", {"message": "继续 搜索完成 [Done]"})
                self.assertEqual(resumed["plan"]["status"], "running")
                self.assertEqual(resumed["plan"]["steps"][1]["status"], "completed")
                plan = (await ok(session, "get_plan"))["plan"]
                self.assertEqual(plan, resumed["plan"])
                self.assertEqual(statuses(work.read()), {1: "completed", 2: "completed", 3: "in_progress", 4: "pending"})

        try:
            self.run_async(body)
        finally:
            work.cleanup()

    def test_plan_act_seed_004_baidu(self):
        """Plan-Act: the planner creates the plan, the executor runs the steps, the planner updates."""
        work = Dir()

        async def body():
            async with connect(work.state, "plan-act") as session:
                created = await ok(session, "create_plan", {
                    "title": "在百度搜索 AI Agent 并总结前三个结果",
                    "steps": [{"description": "打开百度搜索页面"}, {"description": "输入 AI Agent 并搜索"},
                              {"description": "提取前三个搜索结果"}, {"description": "总结结果内容"}],
                    "language": "zh",
                })
                event = created["events"][0]
                self.assertEqual((event["type"], event["status"]), ("plan", "created"))
                self.assertEqual(event["plan"]["language"], "zh")
                self.assertEqual([s["status"] for s in event["plan"]["steps"]], ["pending"] * 4)
                state = work.read()
                self.assertEqual([t["dependencies"] for t in state["tasks"]], [[], [1], [2], [3]])
                started = (await ok(session, "start_step"))["events"]
                self.assertEqual(started, [{"type": "step", "status": "started", "step": {
                    "description": "打开百度搜索页面", "status": "running", "result": None, "success": None,
                    "error": None, "attachments": []}}])
                completed = (await ok(session, "complete_step", {"result": "{ success: true }"}))["events"]
                self.assertEqual((completed[0]["status"], completed[0]["step"]["success"]), ("completed", True))
                updated = (await ok(session, "update_plan", {"steps": ["输入 AI Agent 并搜索", "提取前三个搜索结果", "总结结果内容"]}))["events"]
                self.assertEqual([s["status"] for s in updated[0]["plan"]["steps"]], ["completed", "pending", "pending", "pending"])
                for n in range(3):
                    await ok(session, "start_step")
                    events = (await ok(session, "complete_step", {"result": f"step {n + 2} done"}))["events"]
                self.assertEqual([(e["type"], e["status"]) for e in events], [("step", "completed"), ("plan", "completed")])
                self.assertEqual(work.read()["state"]["status"], "completed")
                done = (await ok(session, "start_step"))["events"]
                self.assertEqual((done[0]["type"], done[0]["status"]), ("plan", "completed"))
                error = await refused(session, "create_plan", {"title": "again", "steps": ["x"]})
                self.assertEqual(error["events"][0]["code"], "PLAN_EXISTS")
                error = await refused(session, "complete_step", {"result": "x", "colour": "red"})
                self.assertEqual(error["events"][0]["code"], "INVALID_ARGUMENT")
                self.assertIn("colour", error["events"][0]["error"])

        try:
            self.run_async(body)
        finally:
            work.cleanup()


    def test_steps_seed_003_session_transition_words_and_fallback(self):
        """The steps system's own design: a plan per session at .sessions/KEY/plan.json, made from the first
        round's [Step] lines (its first step already running); a transition word ("现在", "next")
        moves on after one round on a step, five quiet rounds make the fallback move on, and
        "继续" resumes a paused plan with a progress summary."""
        work = Dir()
        key = "tencent-reports"
        state = work.dir / ".sessions" / key / "plan.json"

        async def body():
            async with connect_session(work.dir, key, "steps") as session:
                # No steps declared: no plan yet (a simple task needs none).
                error = await refused(session, "observe", {"message": "你好"})
                self.assertEqual(error["error"]["code"], "PLAN_NOT_FOUND")
                self.assertFalse(state.exists())
                first = await ok(session, "observe", {
                    "goal": "下载腾讯5年财报、提取数据、制作图表",
                    "message": "我先规划一下。\n[Step] 查找腾讯近5年财报\n[Step] 下载财报 PDF\n"
                               "[Step] 提取营收和利润\n[Step] 制作图表",
                })
                plan = first["plan"]
                self.assertEqual(plan["goal"], "下载腾讯5年财报、提取数据、制作图表")
                self.assertEqual([s["status"] for s in plan["steps"]], ["running", "pending", "pending", "pending"])
                self.assertEqual((plan["current_step_index"], first["step_rounds"]), (0, 1))
                saved = json.loads(state.read_text(encoding="utf-8"))
                self.assertEqual(saved["state"]["step_rounds"], [{"task_id": 1, "rounds": 1}])

                # One round spent on step 1: "现在" moves on; the text before it is the result.
                moved = await ok(session, "observe", {"message": "找到了投资者关系页面。现在开始下载"})
                self.assertEqual(moved["completed_by"], "transition")
                self.assertEqual(moved["plan"]["steps"][0]["result"], "找到了投资者关系页面。")
                self.assertEqual((moved["plan"]["current_step_index"], moved["step_rounds"]), (1, 0))
                # On a step just started, a transition word is too early; "nowhere" holds no "now".
                early = await ok(session, "observe", {"message": "Now downloading; the 2021 link goes nowhere"})
                self.assertIsNone(early["completed_by"])
                self.assertEqual(early["step_rounds"], 1)
                # Four more rounds without a marker; the sixth message on the step moves on anyway.
                for rounds in range(2, 6):
                    quiet = await ok(session, "observe", {"message": "下载中…"})
                    self.assertEqual((quiet["completed_by"], quiet["step_rounds"]), (None, rounds))
                fallback = await ok(session, "observe", {"message": "下载中…"})
                self.assertEqual(fallback["completed_by"], "fallback")
                self.assertEqual([s["status"] for s in fallback["plan"]["steps"]],
                                 ["completed", "completed", "running", "pending"])

                # The iteration limit (here: a pause) and "继续": where the plan stands.
                subprocess.run([PLANC, "run", "pause", "--session", key], cwd=work.dir, check=True,
                               stdout=subprocess.DEVNULL)
                error = await refused(session, "observe", {"message": "提取数据"})
                self.assertEqual(error["error"]["code"], "PLAN_NOT_ACTIVE")
                resumed = await ok(session, "observe", {"message": "继续"})
                self.assertTrue(resumed["resumed"])
                self.assertIsNone(resumed["completed_by"], "继续 that resumes is no transition word")
                summary = resumed["summary"]
                self.assertEqual((summary["done"], summary["total"], summary["remaining_count"]), (2, 4, 1))
                self.assertEqual([b["name"] for b in summary["finished"]], ["查找腾讯近5年财报", "下载财报 PDF"])
                self.assertEqual(summary["current"]["name"], "提取营收和利润")
                self.assertEqual(summary["text"], "计划已恢复。进度：2/4。已完成：#1 查找腾讯近5年财报；#2 下载财报 PDF。"
                                                  "当前：#3 提取营收和利润。剩余：#4 制作图表。")
                done = await ok(session, "observe", {"message": "营收和利润已提取 [完成]"})
                self.assertEqual(done["completed_by"], "marker")
                self.assertEqual(done["plan"]["current_step_index"], 3)

        try:
            self.run_async(body)
        finally:
            work.cleanup()

    def test_plan_act_seed_004_events_and_attachments(self):
        """Plan-Act's event system: the executor's ToolEvent (browser_navigate to baidu.com,
        {success: true}), MessageEvent and ErrorEvent go to the plan's event log with the step
        they belong to; a completed step keeps its attachments; every logged event carries the
        step (task) or plan it changed."""
        work = Dir()

        async def body():
            async with connect(work.state, "plan-act") as session:
                await ok(session, "create_plan", {
                    "title": "帮我在百度搜索 AI Agent 并总结前三个结果",
                    "steps": ["打开百度搜索页面", "输入 AI Agent 并搜索", "提取前三个搜索结果", "总结结果内容"],
                    "language": "zh",
                })
                await ok(session, "start_step")
                tool = await ok(session, "log_event", {"kind": "tool", "data": {
                    "name": "browser_navigate", "args": {"url": "https://www.baidu.com"},
                    "result": {"success": True}}})
                self.assertEqual(tool["event"]["type"], "tool")
                self.assertEqual(tool["event"]["step"]["description"], "打开百度搜索页面")
                self.assertEqual(tool["event"]["step"]["status"], "running")
                completed = (await ok(session, "complete_step", {
                    "result": "百度首页已打开", "attachments": ["screenshots/baidu.png"]}))["events"]
                self.assertEqual(completed[0]["step"]["attachments"], ["screenshots/baidu.png"])
                plan = (await ok(session, "get_plan"))["plan"]
                self.assertEqual(plan["steps"][0]["attachments"], ["screenshots/baidu.png"])
                await ok(session, "log_event", {"kind": "message", "data": "已打开百度首页"})
                error = await refused(session, "log_event", {"kind": "warning", "data": "x"})
                self.assertEqual(error["events"][0]["code"], "INVALID_ARGUMENT")
                big = await refused(session, "log_event", {"kind": "error", "data": "x" * 70000})
                self.assertIn("64 KiB", big["events"][0]["error"])

            # The planc dialect: logEvent and completeTask's attachments, as an agent.
            async with connect(work.state, "planc") as session:
                started = await ok(session, "startNextTask", {"agent": "executor"})
                self.assertEqual(started["data"]["task"]["id"], 2)
                logged = await ok(session, "logEvent", {"kind": "error", "data": {"error": "验证码"},
                                                        "agent": "executor"})
                self.assertEqual(logged["data"], {"kind": "error", "task_id": 2, "message": "Logged an error for task 2"})
                done = await ok(session, "completeTask", {"result": "搜索结果页面已加载",
                                                          "attachments": ["results.html"], "agent": "executor"})
                self.assertEqual(done["data"]["task_id"], 2)

            log = work.dir / "plan.json.events.jsonl"
            events = [e for line in log.read_text(encoding="utf-8").splitlines() for e in json.loads(line)["events"]]
            by_kind = {}
            for event in events:
                by_kind.setdefault(event["kind"], []).append(event)
            self.assertEqual(by_kind["created"][0]["plan"]["title"], "帮我在百度搜索 AI Agent 并总结前三个结果")
            tool = by_kind["tool"][0]
            self.assertEqual(tool["data"]["args"], {"url": "https://www.baidu.com"})
            self.assertEqual((tool["task_id"], tool["task"]["status"]), (1, "in_progress"))
            message = by_kind["message"][0]
            self.assertEqual((message["data"], message.get("task_id")), ("已打开百度首页", None))
            self.assertEqual(message["plan"]["status"], "running")
            error = by_kind["error"][0]
            self.assertEqual((error["agent"], error["task_id"], error["data"]), ("executor", 2, {"error": "验证码"}))
            finished = by_kind["completed"]
            self.assertEqual([e["task"]["extra"]["attachments"] for e in finished],
                             [["screenshots/baidu.png"], ["results.html"]])
            self.assertEqual(work.read()["tasks"][1]["extra"], {"attachments": ["results.html"]})

        try:
            self.run_async(body)
        finally:
            work.cleanup()


if __name__ == "__main__":
    unittest.main()
