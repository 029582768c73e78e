"""Two writers of one ADK session: the stale one gets StaleSessionError, never an interleaved history.

Both replicas (two services, two clients) read the session, then each
appends a turn of its own. Without expected_seq (``compare_and_swap=False``,
the negative control) the second writer's events land after the first
writer's, on a history it never read: that is the interleaving the check
prevents, and the control test shows it happening.
"""

from __future__ import annotations

import unittest
from typing import List, Tuple

from google.adk.errors import StaleSessionError
from google.adk.events.event import Event
from google.genai import types

import support_adk as s
from sessiond.adk import SessiondSessionService


def setUpModule() -> None:
    s.need_server()


def said(author: str, text: str) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        id=Event.new_id(),
        invocation_id=f"inv-{author}",
        author=author,
        content=types.Content(role=role, parts=[types.Part(text=text)]),
    )


class TwoWriters(unittest.IsolatedAsyncioTestCase):
    async def race(self, compare_and_swap: bool) -> Tuple[List[str], List[BaseException]]:
        """Writers A and B read the session, A appends two events, then B appends two; returns the stored texts and B's errors."""
        ws = s.workspace()
        async with s.client() as ca, s.client() as cb:
            a = SessiondSessionService(ca, ws, compare_and_swap=compare_and_swap)
            b = SessiondSessionService(cb, ws, compare_and_swap=compare_and_swap)
            await a.create_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            await a.append_event(
                (await a.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")) or self.fail(),
                said("user", "hello"),
            )
            copy_a = await a.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            copy_b = await b.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            assert copy_a is not None and copy_b is not None
            await a.append_event(copy_a, said("user", "A: question"))
            await a.append_event(copy_a, said("agent_a", "A: answer"))
            errors: List[BaseException] = []
            for e in (said("user", "B: question"), said("agent_b", "B: answer")):
                try:
                    await b.append_event(copy_b, e)
                except StaleSessionError as err:
                    errors.append(err)
            stored = await a.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            assert stored is not None
            texts = [p.text or "" for ev in stored.events for p in (ev.content.parts or [] if ev.content else [])]
            return texts, errors

    async def test_a_stale_writer_gets_stale_session_error_and_writes_nothing(self) -> None:
        texts, errors = await self.race(compare_and_swap=True)
        self.assertEqual(texts, ["hello", "A: question", "A: answer"])
        self.assertEqual(len(errors), 2)
        self.assertIn("Reload it with get_session", str(errors[0]))

    async def test_without_expected_seq_the_stale_writer_interleaves(self) -> None:
        """The negative control: switching the check off lets B write onto A's turn unseen."""
        texts, errors = await self.race(compare_and_swap=False)
        self.assertEqual(errors, [])
        self.assertEqual(texts, ["hello", "A: question", "A: answer", "B: question", "B: answer"])

    async def test_the_stale_writer_appends_after_reloading(self) -> None:
        ws = s.workspace()
        async with s.client() as ca, s.client() as cb:
            a, b = SessiondSessionService(ca, ws), SessiondSessionService(cb, ws)
            await a.create_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            copy_b = await b.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            copy_a = await a.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            assert copy_a is not None and copy_b is not None
            await a.append_event(copy_a, said("user", "A"))
            with self.assertRaises(StaleSessionError):
                await b.append_event(copy_b, said("user", "B"))
            fresh = await b.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            assert fresh is not None
            await b.append_event(fresh, said("user", "B"))
            final = await a.get_session(app_name=s.APP, user_id=s.USER, session_id="shared")
            assert final is not None
            self.assertEqual([e.content.parts[0].text for e in final.events if e.content and e.content.parts], ["A", "B"])
