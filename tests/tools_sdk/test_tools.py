"""`planc tools` checked with the OpenAI and Anthropic Python SDKs' own types.

Each definition must be an instance of the SDK's parameter type (a TypedDict,
validated by pydantic as the SDKs do, and with no key the type lacks); the
OpenAI schemas must be what the OpenAI SDK's own strict converter makes of them
(it changes nothing) and pass its check for strict tools. PLANC_BIN names the
planc binary.
"""

import copy
import json
import os
import subprocess
import unittest
from typing import Optional, Union

import pydantic
from anthropic.types import ToolParam
from openai import pydantic_function_tool
from openai.lib._parsing._completions import validate_input_tools
from openai.lib._pydantic import _ensure_strict_json_schema
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition

NAME = r"^[a-zA-Z0-9_-]{1,64}$"


def tools(format, dialect="planc"):
    run = subprocess.run(
        [os.environ["PLANC_BIN"], "tools", "--format", format, "--dialect", dialect],
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(run.stdout)


def conform(typed_dict, value):
    """Raises unless `value` is a `typed_dict` with no other keys."""
    pydantic.TypeAdapter(typed_dict).validate_python(value)
    known = typed_dict.__required_keys__ | typed_dict.__optional_keys__
    extra = set(value) - known
    if extra:
        raise AssertionError(f"{typed_dict.__name__} has no key {sorted(extra)}")


def sdk_strict(schema):
    """What the OpenAI SDK's strict converter makes of `schema`."""
    copied = copy.deepcopy(schema)
    return _ensure_strict_json_schema(copied, path=(), root=copied)


class OpenAiChatCompletions(unittest.TestCase):
    def test_each_tool_is_a_strict_function_tool(self):
        definitions = tools("openai")
        self.assertEqual(len(definitions), 21)
        for tool in definitions:
            with self.subTest(tool["function"]["name"]):
                conform(ChatCompletionFunctionToolParam, tool)
                conform(FunctionDefinition, tool["function"])
                self.assertRegex(tool["function"]["name"], NAME)
                self.assertIs(tool["function"]["strict"], True)
        # The SDK's check before `chat.completions.parse` auto-parses tool calls.
        self.assertEqual(validate_input_tools(definitions), definitions)

    def test_the_sdk_strict_converter_changes_nothing(self):
        for tool in tools("openai"):
            with self.subTest(tool["function"]["name"]):
                parameters = tool["function"]["parameters"]
                self.assertEqual(sdk_strict(parameters), parameters)

    def test_the_checks_can_fail(self):
        """The MCP schemas are not strict, and the Chat shape is no Responses tool."""
        mcp = tools("mcp")["tools"]
        update = next(t for t in mcp if t["name"] == "updateTask")["inputSchema"]
        self.assertNotEqual(sdk_strict(update), update)
        chat = tools("openai")[0]
        with self.assertRaises(pydantic.ValidationError):
            conform(FunctionToolParam, chat)
        with self.assertRaises(AssertionError):
            conform(FunctionDefinition, {**chat["function"], "input_schema": {}})
        with self.assertRaises(ValueError):
            validate_input_tools([{**chat, "function": {**chat["function"], "strict": False}}])


class Unions(unittest.TestCase):
    def test_the_lease_union_is_what_the_sdk_writes_for_it(self):
        """`lease` (seconds or a duration, optional) as the SDK writes
        `Optional[Union[int, str]]`: an `anyOf` of one type each."""
        for tool in tools("openai"):
            lease = tool["function"]["parameters"]["properties"].get("lease")
            if lease is None:
                continue
            with self.subTest(tool["function"]["name"]):
                arguments = pydantic.create_model(
                    "Arguments",
                    lease=(
                        Optional[Union[int, str]],
                        pydantic.Field(None, description=lease["description"]),
                    ),
                )
                written = pydantic_function_tool(arguments)["function"]["parameters"]
                expected = written["properties"]["lease"]
                expected.pop("title")
                self.assertEqual(lease, expected)
                self.assertIn("anyOf", lease)


class Dialects(unittest.TestCase):
    def test_every_dialects_tools_are_strict_function_tools(self):
        for dialect in ["planc", "tasks", "plan-tool", "steps", "plan-act"]:
            for tool in tools("openai", dialect):
                with self.subTest(f"{dialect} {tool['function']['name']}"):
                    conform(ChatCompletionFunctionToolParam, tool)
                    parameters = tool["function"]["parameters"]
                    self.assertEqual(sdk_strict(parameters), parameters)
            for tool in tools("anthropic", dialect):
                with self.subTest(f"{dialect} {tool['name']}"):
                    conform(ToolParam, tool)


class OpenAiResponses(unittest.TestCase):
    def test_each_tool_is_a_strict_function_tool(self):
        definitions = tools("openai-responses")
        chat = tools("openai")
        self.assertEqual(len(definitions), 21)
        for tool, chat_tool in zip(definitions, chat):
            with self.subTest(tool["name"]):
                conform(FunctionToolParam, tool)
                self.assertRegex(tool["name"], NAME)
                self.assertIs(tool["strict"], True)
                self.assertEqual(tool["parameters"], chat_tool["function"]["parameters"])
                self.assertEqual(sdk_strict(tool["parameters"]), tool["parameters"])


class Anthropic(unittest.TestCase):
    def test_each_tool_is_a_tool_param(self):
        definitions = tools("anthropic")
        mcp = tools("mcp")["tools"]
        self.assertEqual(len(definitions), 21)
        for tool, mcp_tool in zip(definitions, mcp):
            with self.subTest(tool["name"]):
                conform(ToolParam, tool)
                self.assertRegex(tool["name"], NAME)
                self.assertEqual(tool["input_schema"]["type"], "object")
                self.assertEqual(tool["input_schema"], mcp_tool["inputSchema"])


if __name__ == "__main__":
    unittest.main()
