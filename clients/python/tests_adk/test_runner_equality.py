"""ADK's real Runner over SessiondSessionService, across an agent restart, equals InMemorySessionService.

The same scripted run (a thought, a function call, its response writing
session, ``user:``, ``app:`` and ``temp:`` state, a text answer, then a
second turn) goes through both services with ADK's ids and clock made
deterministic. The second turn over sessiond runs in a new process, which
knows the session only from the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import unittest
from typing import Any, Dict, List, Optional

from google.adk.sessions import InMemorySessionService
from google.adk.sessions.session import Session

import support_adk as s
from sessiond.adk import SessiondSessionService

HERE = os.path.dirname(os.path.abspath(__file__))
TURN_1, TURN_2 = "What is 6*7?", "And 42*2?"
START_1, START_2 = 1000, 2000
SESSION = "equality-1"
INITIAL_STATE = {"units": "none", "app:owner": "ops", "temp:draft": "x"}


def setUpModule() -> None:
    s.need_server()


def comparable(session: Session) -> Dict[str, Any]:
    """The session as JSON, but for last_update_time (the server's clock for sessiond, the event's for memory)."""
    return session.model_dump(mode="json", exclude={"last_update_time"})


async def second_turn_in_new_process(ws: str) -> List[Any]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        os.path.join(HERE, "turn_process.py"),
        ws,
        SESSION,
        str(START_2),
        TURN_2,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=HERE,
    )
    out, err = await proc.communicate()
    if proc.returncode != 0:
        raise AssertionError(f"turn process failed ({proc.returncode}):\n{err.decode()}")
    requests: List[Any] = json.loads(out.decode().strip().splitlines()[-1])
    return requests


class RunnerEquality(unittest.TestCase):
    """The two runs happen once (setUpClass); each test compares one aspect of their results."""

    memory_session: Optional[Session]
    sessiond_session: Optional[Session]
    memory_turn_2_requests: List[Any]
    sessiond_turn_2_requests: List[Any]
    memory_user_state: Dict[str, Any]
    sessiond_user_state: Dict[str, Any]

    @classmethod
    def setUpClass(cls) -> None:
        asyncio.run(cls._run_both())

    @classmethod
    async def _run_both(cls) -> None:
        # The in-memory reference run: both turns in this process.
        s.deterministic(START_1)
        memory = InMemorySessionService()
        model = s.ScriptedLlm()
        model.requests = []
        r = s.runner(memory, model)
        await memory.create_session(
            app_name=s.APP, user_id=s.USER, session_id=SESSION, state=INITIAL_STATE
        )
        await s.turn(r, SESSION, TURN_1)
        s.deterministic(START_2)
        model.requests.clear()
        await s.turn(r, SESSION, TURN_2)
        cls.memory_turn_2_requests = model.requests
        cls.memory_session = await memory.get_session(app_name=s.APP, user_id=s.USER, session_id=SESSION)
        cls.memory_user_state = await memory.get_user_state(app_name=s.APP, user_id=s.USER)

        # The sessiond run: turn 1 here, turn 2 in a new process, read back by a new client.
        ws = s.workspace()
        s.deterministic(START_1)
        async with s.client() as c:
            service = SessiondSessionService(c, ws)
            await service.create_session(
                app_name=s.APP, user_id=s.USER, session_id=SESSION, state=INITIAL_STATE
            )
            await s.turn(s.runner(service), SESSION, TURN_1)
        cls.sessiond_turn_2_requests = await second_turn_in_new_process(ws)
        async with s.client() as c:
            service = SessiondSessionService(c, ws)
            cls.sessiond_session = await service.get_session(app_name=s.APP, user_id=s.USER, session_id=SESSION)
            cls.sessiond_user_state = await service.get_user_state(app_name=s.APP, user_id=s.USER)

    def test_the_session_after_a_restart_equals_the_in_memory_one_event_for_event(self) -> None:
        assert self.memory_session is not None and self.sessiond_session is not None
        self.assertEqual(len(self.sessiond_session.events), 8)
        self.assertEqual(self.sessiond_session.events, self.memory_session.events)
        self.assertEqual(comparable(self.sessiond_session), comparable(self.memory_session))

    def test_state_after_a_restart_equals_the_in_memory_state_in_every_scope(self) -> None:
        assert self.memory_session is not None and self.sessiond_session is not None
        self.assertEqual(
            self.sessiond_session.state,
            {
                "units": "none",
                "last_product": 84,
                "answer": "The product is 84.",
                "app:owner": "ops",
                "app:calls": 2,
                "user:products": [42, 84],
            },
        )
        self.assertEqual(self.sessiond_session.state, self.memory_session.state)

    def test_the_model_is_sent_the_same_history_after_the_restart(self) -> None:
        self.assertEqual(len(self.sessiond_turn_2_requests), 2)
        self.assertEqual(self.sessiond_turn_2_requests, self.memory_turn_2_requests)

    def test_user_state_is_readable_without_a_session(self) -> None:
        self.assertEqual(self.sessiond_user_state, {"products": [42, 84]})
        self.assertEqual(self.sessiond_user_state, self.memory_user_state)
