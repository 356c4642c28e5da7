from __future__ import annotations

import asyncio

import pytest

from whileai.errors import ArgumentError
from whileai.simulation._agents import InvalidReply, normalize_reply, resolve_agent

MSGS = [{"role": "user", "content": "hi"}]
TOOLS = [{"type": "function", "function": {"name": "t", "parameters": {"type": "object", "properties": {}}}}]


def test_plain_string_and_openai_message():
    assert normalize_reply("hello", 0) == ({"role": "assistant", "content": "hello"}, {})
    msg, book = normalize_reply({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "get", "arguments": '{"b": 1, "a": 2}'}}]}, 0)
    assert msg["tool_calls"] == [{"id": "c1", "type": "function", "function": {"name": "get", "arguments": '{"a":2,"b":1}'}}]
    assert book == {}


def test_short_tool_call_shape_dict_arguments_and_missing_ids():
    msg, _ = normalize_reply({"content": "", "tool_calls": [{"name": "get", "arguments": {"z": [1], "a": "x"}},
                                                             {"name": "put", "args": ""}]}, 3)
    calls = msg["tool_calls"]
    assert [c["id"] for c in calls] == ["call_3_0", "call_3_1"]
    assert calls[0]["function"]["arguments"] == '{"a":"x","z":[1]}'
    assert calls[1]["function"]["arguments"] == "{}"
    # arguments that are not JSON are kept verbatim, for the world to refuse
    msg, _ = normalize_reply({"content": None, "tool_calls": [{"name": "get", "arguments": "{oops"}]}, 0)
    assert msg["tool_calls"][0]["function"]["arguments"] == "{oops"


def test_bookkeeping_keys_come_off_the_message():
    msg, book = normalize_reply({"role": "assistant", "content": "x", "seeded": ["filler"], "finish_reason": "length",
                                 "usage": {"prompt_tokens": 3}, "reasoning_content": "hmm"}, 0)
    assert msg == {"role": "assistant", "content": "x", "reasoning_content": "hmm"}
    assert book == {"seeded": ["filler"], "finish_reason": "length", "usage": {"prompt_tokens": 3}}


def test_chat_completion_response_and_model_dump_objects():
    msg, book = normalize_reply({"choices": [{"message": {"role": "assistant", "content": "yo"}, "finish_reason": "stop"}],
                                 "usage": {"completion_tokens": 2}}, 0)
    assert msg["content"] == "yo" and book["finish_reason"] == "stop" and book["usage"] == {"completion_tokens": 2}

    class Pydanticish:
        def model_dump(self, exclude_none=False):
            return {"role": "assistant", "content": "from sdk"}

    assert normalize_reply(Pydanticish(), 0)[0]["content"] == "from sdk"


@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (None, "NoneType"),
        (42, "int"),
        ({"text": "hi"}, "keys \\['text'\\]"),
        ({"role": "user", "content": "hi"}, "role 'user'"),
        ({"content": 5}, "content of type int"),
        ({"content": None, "tool_calls": "get"}, "tool_calls of type str"),
        ({"content": None, "tool_calls": [{"arguments": {}}]}, "no function name"),
        ({"choices": []}, "no choices"),
    ],
)
def test_garbage_replies_are_invalid(reply, match):
    with pytest.raises(InvalidReply, match=match):
        normalize_reply(reply, 0)


def test_resolve_callables_by_arity_and_kind():
    assert resolve_agent(lambda messages, tools: "x").call(MSGS, TOOLS) == "x"
    assert resolve_agent(lambda messages: len(messages)).call(MSGS, TOOLS) == 1
    def kw(messages, *, tools):
        return len(tools)
    assert resolve_agent(kw).call(MSGS, TOOLS) == 1

    async def arun(messages, tools):
        return "async"

    call = resolve_agent(arun)
    assert call.is_async and asyncio.run(call.call(MSGS, TOOLS)) == "async"
    assert call.name == "arun"


def test_resolve_objects_with_methods():
    class Chat:
        def chat(self, messages, tools=None):
            return "chat"

    class AChat:
        async def achat(self, messages, tools=None):
            return "achat"

    class Both:
        def __call__(self, messages, tools):
            return "call"

        def respond(self, messages, tools):
            return "respond"

    assert resolve_agent(Chat()).call(MSGS, TOOLS) == "chat" and resolve_agent(Chat()).name == "Chat"
    a = resolve_agent(AChat())
    assert a.is_async and asyncio.run(a.call(MSGS, TOOLS)) == "achat"
    assert resolve_agent(Both()).call(MSGS, TOOLS) == "call"


@pytest.mark.parametrize("bad", [None, "gpt-4", 3, {"a": 1}, [1, 2], object()])
def test_not_an_agent(bad):
    with pytest.raises(ArgumentError, match="agent must be"):
        resolve_agent(bad)
