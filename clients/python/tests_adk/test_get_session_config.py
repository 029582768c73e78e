"""``get_session`` with ADK's ``GetSessionConfig``: the same events as InMemorySessionService, read from the recent end only.

The same events (user and model turns, some with state deltas, so that
state entries sit between them on the path) go to both services; every
config (``num_recent_events``, ``after_timestamp``, both) must give equal
sessions. A client interceptor counts what the adapter fetched, to show
that a small ``num_recent_events`` does not read a 2,000-event session.
"""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, Callable, Dict, List, Optional

import grpc
import grpc.aio
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import InMemorySessionService
from google.adk.sessions.base_session_service import BaseSessionService, GetSessionConfig
from google.adk.sessions.session import Session
from google.genai import types

import support_adk as s
from sessiond import AsyncSessiondClient
from sessiond.adk import SessiondSessionService

T0 = 1.8e9


def setUpModule() -> None:
    s.need_server()


def event(i: int, **state: object) -> Event:
    """The i-th event of a conversation: user and model in turn, one second apart."""
    role = "user" if i % 2 == 0 else "model"
    return Event(
        id=f"ev-{i:05d}",
        invocation_id=f"inv-{i // 2}",
        author="user" if role == "user" else "calculator",
        timestamp=T0 + i,
        content=types.Content(role=role, parts=[types.Part(text=f"{role} says {i}")]),
        actions=EventActions(state_delta=dict(state)),
    )


class Fetched(grpc.aio.UnaryUnaryClientInterceptor):
    """Counts the calls of each method and the entries and messages their answers carried."""

    def __init__(self) -> None:
        self.calls: Dict[str, int] = {}
        self.entries = 0
        self.messages = 0

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], details: grpc.aio.ClientCallDetails, request: Any
    ) -> Any:
        call = await continuation(details, request)
        answer = await call
        method = details.method.decode() if isinstance(details.method, bytes) else details.method
        name = method.rsplit("/", 1)[-1]
        self.calls[name] = self.calls.get(name, 0) + 1
        if name == "GetEntries":
            self.entries += len(answer.entries)
        if name == "GetState":
            self.messages += len(answer.state.messages)
        return call

    def reset(self) -> None:
        self.calls, self.entries, self.messages = {}, 0, 0


async def fill(services: List[BaseSessionService], session_id: str, events: List[Event]) -> None:
    for service in services:
        session = await service.create_session(app_name=s.APP, user_id=s.USER, session_id=session_id)
        for e in events:
            await service.append_event(session, e.model_copy(deep=True))


async def both(
    services: List[BaseSessionService], session_id: str, config: Optional[GetSessionConfig]
) -> List[Dict[str, Any]]:
    """The session as each service returns it under ``config``, as JSON but for last_update_time."""
    out = []
    for service in services:
        got: Optional[Session] = await service.get_session(
            app_name=s.APP, user_id=s.USER, session_id=session_id, config=config
        )
        assert got is not None
        out.append(got.model_dump(mode="json", exclude={"last_update_time"}))
    return out


class ConfigEqualsInMemory(unittest.IsolatedAsyncioTestCase):
    """Twelve events, state deltas on every third, in both services."""

    async def asyncSetUp(self) -> None:
        self.client = s.client()
        self.services: List[BaseSessionService] = [
            InMemorySessionService(),
            SessiondSessionService(self.client, s.workspace()),
        ]
        self.events = [event(i, **({"step": i} if i % 3 == 0 else {})) for i in range(12)]
        await fill(self.services, "conf", self.events)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def assert_same(self, config: GetSessionConfig, expected_ids: List[str]) -> None:
        memory, sessiond = await both(self.services, "conf", config)
        self.assertEqual([e["id"] for e in memory["events"]], expected_ids, "the reference itself")
        self.assertEqual(sessiond, memory)

    async def test_num_recent_events_gives_the_last_n_events(self) -> None:
        for n in (1, 2, 5, 11, 12, 50):
            with self.subTest(num_recent_events=n):
                await self.assert_same(
                    GetSessionConfig(num_recent_events=n), [e.id for e in self.events[-n:]]
                )

    async def test_num_recent_events_zero_gives_no_events_but_the_state(self) -> None:
        await self.assert_same(GetSessionConfig(num_recent_events=0), [])

    async def test_after_timestamp_keeps_the_events_at_or_after_it(self) -> None:
        cases = {"before all": T0 - 5, "on event 4": T0 + 4, "between 6 and 7": T0 + 6.5,
                 "on the last": T0 + 11, "after all": T0 + 99}
        for name, after in cases.items():
            with self.subTest(name):
                await self.assert_same(
                    GetSessionConfig(after_timestamp=after),
                    [e.id for e in self.events if e.timestamp >= after],
                )

    async def test_both_limits_together_give_the_narrower_of_the_two(self) -> None:
        cases = [(3, T0 + 2), (8, T0 + 7), (0, T0), (20, T0 + 11.5)]
        for n, after in cases:
            with self.subTest(num_recent_events=n, after_timestamp=after):
                expected = [e.id for e in self.events[-n:] if e.timestamp >= after] if n else []
                await self.assert_same(GetSessionConfig(num_recent_events=n, after_timestamp=after), expected)


class RecentEventsOfALongSession(unittest.IsolatedAsyncioTestCase):
    """2,000 events, written once; the adapter's reads counted by a client interceptor."""

    COUNT = 2000
    ws: str
    memory: InMemorySessionService
    events: List[Event]

    @classmethod
    def setUpClass(cls) -> None:
        cls.ws = s.workspace()
        cls.memory = InMemorySessionService()
        cls.events = [event(i, **({"step": i} if i % 100 == 0 else {})) for i in range(cls.COUNT)]
        asyncio.run(cls._fill())

    @classmethod
    async def _fill(cls) -> None:
        async with s.client() as client:
            await fill([cls.memory, SessiondSessionService(client, cls.ws)], "long", cls.events)

    async def asyncSetUp(self) -> None:
        self.fetched = Fetched()
        self.client = AsyncSessiondClient(s.URL, token=s.TOKEN, timeout=20.0, interceptors=[self.fetched])
        self.sessiond = SessiondSessionService(self.client, self.ws)

    async def asyncTearDown(self) -> None:
        await self.client.close()

    async def read(self, config: Optional[GetSessionConfig]) -> List[Dict[str, Any]]:
        self.fetched.reset()
        return await both([self.memory, self.sessiond], "long", config)

    async def test_five_recent_events_read_one_small_page_not_the_session(self) -> None:
        memory, sessiond = await self.read(GetSessionConfig(num_recent_events=5))
        self.assertEqual(sessiond, memory)
        self.assertEqual(len(sessiond["events"]), 5)
        self.assertEqual(self.fetched.calls.get("GetEntries"), 1, self.fetched.calls)
        self.assertLess(self.fetched.entries + self.fetched.messages, 100)

    async def test_a_recent_after_timestamp_reads_far_less_than_the_session(self) -> None:
        memory, sessiond = await self.read(GetSessionConfig(after_timestamp=T0 + self.COUNT - 10))
        self.assertEqual(sessiond, memory)
        self.assertEqual(len(sessiond["events"]), 10)
        self.assertLess(self.fetched.entries + self.fetched.messages, self.COUNT // 3)

    async def test_without_a_config_every_event_is_read_which_the_counter_sees(self) -> None:
        memory, sessiond = await self.read(None)
        self.assertEqual(sessiond, memory)
        self.assertGreaterEqual(self.fetched.entries, self.COUNT)
