"""A small agent loop that drives a plan through `planc mcp`.

It connects to the MCP server the way an LLM framework does: it lists the tools
(and converts them to OpenAI function-calling tools, as a framework would hand
them to its model), puts the server's `plan_context` prompt into the system
prompt, then lets the model pick tool calls until the model says it is done.

The model here is scripted (no network): it plays seed 000's JD scenario,
including the coupon popup that makes it insert a task with addTask. To use a
real model, implement `Model.respond` with your LLM client; nothing else changes.

    planc run init examples/jd_keyboard.plan -o jd.json
    python examples/agents/plan_agent.py --state jd.json --scripted
"""

import argparse
import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


class Model:
    """What the loop needs from a model: the next tool call, or a final answer."""

    def respond(self, messages, tools):
        """Returns {"tool": name, "arguments": {...}} or {"final": text}."""
        raise NotImplementedError


class ScriptedModel(Model):
    """Plays seed 000: works task by task; after typing the query a popup appears."""

    def __init__(self):
        self.popup_after = None

    def perform(self, task):
        """Pretends to do a task in a browser; returns the result text."""
        if "search bar" in task["name"]:
            self.popup_after = task["id"]
            return "Typed the query; a 'new user coupon' popup now covers the search button"
        return f"Done: {task['name']}"

    def respond(self, messages, tools):
        last = messages[-1]
        if last["role"] != "tool":
            return {"tool": "startNextTask", "arguments": {}}
        envelope = json.loads(last["content"])
        if not envelope["success"]:
            return {"final": f"stopped: {envelope['error']['code']}: {envelope['error']['message']}"}
        data = envelope["data"]
        if last["name"] in ("startNextTask", "startTask"):
            task = data["task"]
            if task is None:
                return {"final": f"plan {data['reason']}: {data['message']}"}
            return {"tool": "completeTask", "arguments": {"task_id": task["id"], "result": self.perform(task)}}
        if last["name"] == "completeTask" and self.popup_after is not None:
            after, self.popup_after = self.popup_after, None
            return {
                "tool": "addTask",
                "arguments": {
                    "name": "Close the new user coupon popup",
                    "dependencies": [after],
                    "reasoning": "An unexpected popup is blocking the search button.",
                    "after_task_id": after,
                },
            }
        return {"tool": "startNextTask", "arguments": {}}


def openai_tools(mcp_tools):
    """MCP tool definitions as OpenAI function-calling tools."""
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.input_schema}}
        for t in mcp_tools
    ]


async def run(planc, state, model, max_steps):
    params = StdioServerParameters(command=planc, args=["mcp", state])
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = openai_tools((await session.list_tools()).tools)
            context = (await session.get_prompt("plan_context")).messages[0].content.text
            messages = [
                {"role": "system", "content": "You drive a task plan with tools.\n\n" + context},
                {"role": "user", "content": "Carry out the plan."},
            ]
            for _ in range(max_steps):
                action = model.respond(messages, tools)
                if "final" in action:
                    print(action["final"])
                    return 0
                result = await session.call_tool(action["tool"], action["arguments"])
                content = result.content[0].text
                print(f"{action['tool']}({json.dumps(action['arguments'], ensure_ascii=False)}) -> "
                      f"{'error' if result.is_error else 'ok'}")
                messages.append({"role": "assistant", "tool_call": action})
                messages.append({"role": "tool", "name": action["tool"], "content": content})
            print(f"gave up after {max_steps} steps")
            return 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--planc", default="planc", help="the planc binary")
    parser.add_argument("--state", required=True, help="the state file (planc run init … -o STATE)")
    parser.add_argument("--scripted", action="store_true", help="use the scripted model (no LLM, no network)")
    parser.add_argument("--max-steps", type=int, default=100)
    args = parser.parse_args()
    if not args.scripted:
        parser.error("only --scripted is built in; plug your LLM into Model.respond")
    sys.exit(anyio.run(run, args.planc, args.state, ScriptedModel(), args.max_steps))


if __name__ == "__main__":
    main()
