"""Beyond ADK: fork a session at an event, rewind it to an event, watch it live."""

from __future__ import annotations

import asyncio
import unittest
from typing import List

from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.session import Session
from google.genai import types

import support_adk as s
from sessiond.adk import SessiondSessionService


def setUpModule() -> None:
    s.need_server()


def said(text: str, **state: object) -> Event:
    return Event(id=Event.new_id(), invocation_id="inv", author="user",
                 content=types.Content(role="user", parts=[types.Part(text=text)]),
                 actions=EventActions(state_delta=dict(state)))


def texts(session: Session) -> List[str]:
    return [e.content.parts[0].text or "" for e in session.events if e.content and e.content.parts]


class TreeExtras(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.client = s.client()
        self.service = SessiondSessionService(self.client, s.workspace())
        self.session = await self.service.create_session(app_name=s.APP, user_id=s.USER, session_id="src")
        self.events = [said("one", step=1), said("two", step=2), said("three", step=3)]
        for e in self.events:
            await self.service.append_event(self.session, e)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def test_a_fork_at_an_event_holds_the_events_and_state_up_to_it_and_leaves_the_source(self) -> None:
        fork = await self.service.fork_session(app_name=s.APP, user_id=s.USER, session_id="src",
                                               event_id=self.events[1].id, new_session_id="fork")
        self.assertEqual((texts(fork), fork.state), (["one", "two"], {"step": 2}))
        self.assertEqual(fork.events, self.events[:2])
        source = await self.service.get_session(app_name=s.APP, user_id=s.USER, session_id="src")
        assert source is not None
        self.assertEqual(texts(source), ["one", "two", "three"])
        listed = await self.service.list_sessions(app_name=s.APP, user_id=s.USER)
        self.assertEqual(sorted(x.id for x in listed.sessions), ["fork", "src"])

    async def test_rewind_to_an_event_drops_later_events_from_the_session_and_the_next_append_branches(self) -> None:
        back = await self.service.rewind_session(app_name=s.APP, user_id=s.USER, session_id="src",
                                                 event_id=self.events[0].id)
        self.assertEqual((texts(back), back.state), (["one"], {"step": 1}))
        await self.service.append_event(back, said("two again", step=22))
        now = await self.service.get_session(app_name=s.APP, user_id=s.USER, session_id="src")
        assert now is not None
        self.assertEqual((texts(now), now.state), (["one", "two again"], {"step": 22}))

    async def test_watch_yields_the_stored_events_then_live_ones(self) -> None:
        seen: List[Event] = []

        async def watch() -> None:
            async for e in self.service.watch_events(app_name=s.APP, user_id=s.USER, session_id="src"):
                seen.append(e)
                if len(seen) == 4:
                    return

        task = asyncio.ensure_future(watch())
        await asyncio.sleep(0.3)
        live = said("four")
        await self.service.append_event(self.session, live)
        await asyncio.wait_for(task, 10)
        self.assertEqual(seen, [*self.events, live])
