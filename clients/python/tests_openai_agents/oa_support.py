"""What the OpenAI Agents adapter's tests share: the live server, the SDK's scripted model, a tool.

Environment: ``SESSIOND_URL``, the server (tests that need one are skipped
without it). The SDK is the one pinned in requirements-openai-agents.txt.
"""

from __future__ import annotations

import os
import unittest
from typing import Any, Awaitable, Callable, List, Optional, Sequence, Tuple

import grpc
import grpc.aio
from agents import Agent, RunConfig, Runner, function_tool
from agents.testing import ScriptedModel, assistant_message, function_call
from openai.types.responses import ResponseReasoningItem
from openai.types.responses.response_reasoning_item import Summary

from sessiond import AsyncSessiondClient, RetryPolicy, new_entry_id

URL = os.environ.get("SESSIOND_URL", "")
NO_TRACES = RunConfig(tracing_disabled=True)


def need_server() -> None:
    """Skips a test module without a server (call from setUpModule)."""
    if not URL:
        raise unittest.SkipTest("SESSIOND_URL is not set: no live server to test against")


def async_client(**kw: Any) -> AsyncSessiondClient:
    """A client of the server under test (make it inside the test's event loop)."""
    kw.setdefault("timeout", 20.0)
    kw.setdefault("retry", RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.05))
    return AsyncSessiondClient(URL, **kw)


def workspace() -> str:
    """A workspace of its own per test."""
    return f"oa-{new_entry_id()}"


@function_tool
def add(a: int, b: int) -> str:
    """Adds two numbers."""
    return str(a + b)


def reasoning(text: str, item_id: str) -> ResponseReasoningItem:
    return ResponseReasoningItem(
        id=item_id, type="reasoning", summary=[Summary(type="summary_text", text=text)]
    )


def script() -> List[Sequence[Any]]:
    """Model responses, in the order the runs of ``TURNS`` ask for them."""
    return [
        [function_call("add", {"a": 1, "b": 2}, call_id="call_1", item_id="fc_1")],
        [assistant_message("It is 3.", item_id="msg_1")],
        [function_call("add", '{ "a": 2, "b": 5 }', call_id="call_2")],
        [assistant_message("7.", item_id="msg_2")],
        [
            reasoning("two sums at once", "rs_1"),
            function_call("add", {"a": 10, "b": 1}, call_id="call_3"),
            function_call("add", {"a": 20, "b": 2}, call_id="call_4"),
        ],
        [assistant_message("11 and 22.", item_id="msg_3")],
        [assistant_message("Hello again.", item_id="msg_4")],
    ]


def agent(model: ScriptedModel) -> Agent[Any]:
    return Agent(name="calc", instructions="Add.", model=model, tools=[add])


async def run(model: ScriptedModel, text: str, session: Any) -> None:
    await Runner.run(agent(model), text, session=session, run_config=NO_TRACES)


class Intercept(grpc.aio.UnaryUnaryClientInterceptor):
    """Records each unary call's method and code; ``before[method]`` runs before its next call,
    ``lose[method]`` answers that many successful calls with UNAVAILABLE (a response lost
    after the server acted)."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, str]] = []
        self.before: dict[str, Callable[[], Awaitable[None]]] = {}
        self.lose: dict[str, int] = {}

    async def intercept_unary_unary(
        self, continuation: Callable[..., Awaitable[Any]], details: Any, request: Any
    ) -> Any:
        raw = details.method  # grpc.aio gives bytes
        method = (raw.decode() if isinstance(raw, bytes) else str(raw)).rsplit("/", 1)[-1]
        hook: Optional[Callable[[], Awaitable[None]]] = self.before.pop(method, None)
        if hook is not None:
            await hook()
        call = await continuation(details, request)
        try:
            await call
            code = "OK"
        except grpc.aio.AioRpcError as err:
            code = err.code().name
        self.calls.append((method, code))
        if code == "OK" and self.lose.get(method, 0) > 0:
            self.lose[method] -= 1
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(),
                details="test: the response was lost after the server acted",
            )
        return call

    def codes(self, method: str) -> List[str]:
        return [code for m, code in self.calls if m == method]
