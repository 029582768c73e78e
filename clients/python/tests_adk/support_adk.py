"""What the ADK adapter's tests share: the live server, a scripted model, and a scripted agent run.

Environment: ``SESSIOND_URL`` (the server; without it every test is
skipped), ``SESSIOND_TOKEN`` (its bearer token, if any).

The run is deterministic: ADK's id and clock providers are replaced by
counters (``deterministic``), so the same script under two session
services must produce equal events, ids and timestamps included.
"""

from __future__ import annotations

import itertools
import os
import re
import unittest
from typing import Any, AsyncGenerator, Dict, List, Optional

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.platform import time as platform_time
from google.adk.platform import uuid as platform_uuid
from google.adk.runners import Runner
from google.adk.sessions.base_session_service import BaseSessionService
from google.adk.tools.tool_context import ToolContext
from google.genai import types

from sessiond import AsyncSessiondClient, new_entry_id

URL = os.environ.get("SESSIOND_URL", "")
TOKEN = os.environ.get("SESSIOND_TOKEN") or None
APP = "calc-app"
USER = "ana"


def need_server() -> None:
    if not URL:
        raise unittest.SkipTest("SESSIOND_URL is not set: no live server to test against")


def client() -> AsyncSessiondClient:
    """A client to the server under test (make it inside the test's event loop)."""
    return AsyncSessiondClient(URL, token=TOKEN, timeout=20.0)


def workspace() -> str:
    """A workspace per test, so listings and app / user state see only the test's sessions."""
    return f"adk-{new_entry_id()}"


def deterministic(start: int) -> None:
    """ADK's ids become ``id-<n>`` and its clock ``1.8e9 + n / 1000``, counting from ``start``."""
    ids = itertools.count(start)
    ticks = itertools.count(start)
    platform_uuid.set_id_provider(lambda: f"id-{next(ids):06d}")
    platform_time.set_time_provider(lambda: 1.8e9 + next(ticks) / 1000)


class ScriptedLlm(BaseLlm):
    """A model that multiplies: "a*b" from the user -> a call of ``multiply``; its result -> the answer as text.

    Before each call it thinks aloud (a ``thought`` part). It answers from
    the request alone, so a run split across processes gets the same
    replies; ``requests`` keeps the contents it was sent.
    """

    model: str = "scripted-multiplier"
    requests: List[List[Dict[str, Any]]] = []

    async def generate_content_async(
        self, llm_request: LlmRequest, stream: bool = False
    ) -> AsyncGenerator[LlmResponse, None]:
        self.requests.append([c.model_dump(mode="json", exclude_none=True) for c in llm_request.contents])
        last = llm_request.contents[-1].parts or []
        response = next((p.function_response for p in last if p.function_response), None)
        if response is not None:
            result = (response.response or {})["result"]
            parts = [types.Part(text=f"The product is {result}.")]
        else:
            text = "".join(p.text or "" for p in last)
            a, b = (int(x) for x in re.findall(r"\d+", text)[:2])
            parts = [
                types.Part(text=f"I should multiply {a} by {b}.", thought=True, thought_signature=b"sig-1"),
                types.Part(function_call=types.FunctionCall(name="multiply", args={"a": a, "b": b})),
            ]
        yield LlmResponse(
            content=types.Content(role="model", parts=parts),
            usage_metadata=types.GenerateContentResponseUsageMetadata(
                prompt_token_count=10, candidates_token_count=5
            ),
        )


def multiply(a: int, b: int, tool_context: ToolContext) -> Dict[str, Any]:
    """Multiplies two integers, and writes state in every scope ADK has."""
    tool_context.state["last_product"] = a * b
    tool_context.state["user:products"] = [*tool_context.state.get("user:products", []), a * b]
    tool_context.state["app:calls"] = tool_context.state.get("app:calls", 0) + 1
    tool_context.state["temp:scratch"] = "never stored"
    return {"result": a * b}


def runner(service: BaseSessionService, model: Optional[ScriptedLlm] = None) -> Runner:
    agent = LlmAgent(
        name="calculator",
        model=model or ScriptedLlm(),
        instruction="Multiply with the tool.",
        tools=[multiply],
        output_key="answer",
    )
    return Runner(app_name=APP, agent=agent, session_service=service)


async def turn(r: Runner, session_id: str, text: str) -> List[Dict[str, Any]]:
    """One user turn through the Runner; the events it yielded, as JSON."""
    message = types.Content(role="user", parts=[types.Part(text=text)])
    out = []
    async for event in r.run_async(user_id=USER, session_id=session_id, new_message=message):
        out.append(event.model_dump(mode="json", exclude_none=True))
    return out
