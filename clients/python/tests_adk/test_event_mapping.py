"""Events are stored as typed entries where they map, and read back equal to what was appended."""

from __future__ import annotations

import json
import unittest
from typing import Any, List

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.genai import types

import support_adk as s
from sessiond.adk import SessiondSessionService
from sessiond.v1.entry_pb2 import Entry, Role


def setUpModule() -> None:
    s.need_server()


def ev(author: str, role: str, *parts: types.Part, **kw: Any) -> Event:
    return Event(id=Event.new_id(), invocation_id="inv", author=author,
                 content=types.Content(role=role, parts=list(parts)), **kw)


class EventMapping(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.client = s.client()
        self.ws = s.workspace()
        self.service = SessiondSessionService(self.client, self.ws)
        self.session = await self.service.create_session(app_name=s.APP, user_id=s.USER, session_id="m")
        call = types.FunctionCall(id="call-1", name="lookup", args={"n": 3, "x": 1.5})
        self.events = [
            ev("user", "user", types.Part(text="find 3")),
            ev("agent", "model", types.Part(text="hmm", thought=True, thought_signature=b"\x00sig"),
               types.Part(function_call=call), model_version="m-1"),
            ev("agent", "user", types.Part(function_response=types.FunctionResponse(id="call-1", name="lookup", response={"hits": 2}))),
            ev("agent", "model", types.Part(function_call=types.FunctionCall(id="p1", name="a", args={})),
               types.Part(function_call=types.FunctionCall(id="p2", name="b", args={}))),
            ev("agent", "user",
               types.Part(function_response=types.FunctionResponse(id="p1", name="a", response={"r": 1})),
               types.Part(function_response=types.FunctionResponse(id="p2", name="b", response={"r": 2}))),
            ev("agent", "model", types.Part(text="see"), types.Part(inline_data=types.Blob(mime_type="image/png", data=b"\x89PNG"))),
            Event(id=Event.new_id(), invocation_id="inv", author="agent", actions=EventActions(escalate=True)),
        ]
        for e in self.events:
            await self.service.append_event(self.session, e)
        page = await self.client.session.get_entries(workspace=self.ws, session="m")
        self.entries: List[Entry] = [e for e in page.entries if e.WhichOneof("kind") in ("message", "custom")]

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_every_kind_of_event_reads_back_equal(self) -> None:
        got = await self.service.get_session(app_name=s.APP, user_id=s.USER, session_id="m")
        assert got is not None
        self.assertEqual(got.events, self.events)

    async def test_integer_arguments_stay_integers(self) -> None:
        got = await self.service.get_session(app_name=s.APP, user_id=s.USER, session_id="m")
        assert got is not None and got.events[1].content is not None
        args = got.events[1].content.parts[1].function_call.args  # type: ignore[index, union-attr]
        self.assertEqual(json.dumps(args), '{"n": 3, "x": 1.5}')

    async def test_user_text_is_a_user_message(self) -> None:
        m = self.entries[0].message
        self.assertEqual((m.role, m.content[0].text), (Role.ROLE_USER, "find 3"))

    async def test_model_thought_and_function_call_are_thinking_and_a_tool_call(self) -> None:
        m = self.entries[1].message
        self.assertEqual(m.role, Role.ROLE_ASSISTANT)
        self.assertEqual(m.content[0].thinking.thinking, "hmm")
        self.assertEqual((m.content[1].tool_call.id, m.content[1].tool_call.name), ("call-1", "lookup"))
        self.assertEqual(m.model, "m-1")

    async def test_a_function_response_is_a_tool_message_answering_its_call(self) -> None:
        m = self.entries[2].message
        self.assertEqual((m.role, m.tool_call_id, m.tool_name), (Role.ROLE_TOOL, "call-1", "lookup"))
        self.assertEqual(json.loads(m.content[0].text), {"hits": 2})

    async def test_parallel_function_responses_and_contentless_events_are_kept_as_custom_entries(self) -> None:
        self.assertEqual(self.entries[4].custom.namespace, "adk.event")
        self.assertEqual(self.entries[6].custom.namespace, "adk.event")

    async def test_the_state_of_the_fold_shows_the_conversation_to_other_clients(self) -> None:
        state = await self.client.read_state(workspace=self.ws, session="m")
        texts = [p.text for m in state.state.messages for p in m.message.content if p.text]
        self.assertEqual(texts[:2], ["find 3", '{"hits": 2}'])
