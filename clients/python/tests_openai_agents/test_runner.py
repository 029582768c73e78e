"""SessiondSession under the SDK's real Runner with its ScriptedModel, against the SDK's SQLiteSession.

The same script runs on both: two turns with tool calls and a pop_item in
one process (first_process.py), then, in a new process (this one), a turn
with reasoning and two parallel calls, a clear_session, a pop_item on the
empty session and a last turn. The model is sent the same inputs, call
after call; pop_item returns the same items; the sessions end equal, item
for item; and the items are typed entries every client reads.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import unittest
from typing import Any, Dict, List

from agents import SQLiteSession
from agents.testing import ScriptedModel
from oa_support import URL, async_client, need_server, run, script, workspace

from sessiond import View, new_session_id
from sessiond.openai_agents import SessiondSession

HERE = os.path.dirname(os.path.abspath(__file__))


def setUpModule() -> None:
    need_server()


async def second_half(session: Any, first: Dict[str, Any]) -> Dict[str, Any]:
    model = ScriptedModel(script()[4:])
    await run(model, "Now 10+1 and 20+2.", session)
    await session.clear_session()
    popped = first["popped"] + [await session.pop_item()]
    await run(model, "Hello?", session)
    inputs = first["inputs"] + [call.input for call in model.calls]
    return {"inputs": inputs, "popped": popped, "items": await session.get_items()}


class RunnerAgainstSQLiteSessionTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.ws = workspace()
        self.client = async_client()
        self.addAsyncCleanup(self.client.close)

    async def test_the_model_sees_what_it_sees_with_sqlite_session_across_a_process_restart(
        self,
    ) -> None:
        sid = new_session_id()
        with tempfile.TemporaryDirectory() as tmp:
            sqlite_file = os.path.join(tmp, "sessions.db")
            out = os.path.join(tmp, "first.json")
            child = await asyncio.to_thread(
                subprocess.run,
                [sys.executable, os.path.join(HERE, "first_process.py"), URL, self.ws, sid, sqlite_file, out],
                cwd=HERE,
                capture_output=True,
                text=True,
                timeout=120,
            )
            self.assertEqual(child.returncode, 0, child.stderr)
            with open(out, encoding="utf-8") as f:
                first = json.load(f)
            ours = await second_half(
                SessiondSession(sid, client=self.client, workspace=self.ws), first["sessiond"]
            )
            theirs = await second_half(SQLiteSession(sid, sqlite_file), first["sqlite"])
        self.assertEqual(len(theirs["inputs"]), 7)
        self.assertEqual(ours["inputs"], theirs["inputs"])
        self.assertEqual(ours["popped"], theirs["popped"])
        self.assertEqual(ours["items"], theirs["items"])
        # Equal as JSON too: value types (ints stay ints) and nothing extra.
        self.assertEqual(json.dumps(ours, sort_keys=True), json.dumps(theirs, sort_keys=True))
        self.assertEqual(theirs["popped"][0]["content"][0]["text"], "7.")
        self.assertIsNone(theirs["popped"][1])

    async def test_a_run_with_tool_calls_is_typed_entries_with_the_items_equal_to_sqlite_session(
        self,
    ) -> None:
        session = SessiondSession(client=self.client, workspace=self.ws, title="calc")
        reference = SQLiteSession("reference")
        for s in (session, reference):
            model = ScriptedModel(script()[4:6])
            await run(model, "Now 10+1 and 20+2.", s)
        items: List[Any] = await session.get_items()
        self.assertEqual(items, await reference.get_items())
        state = await self.client.read_state(
            workspace=self.ws, session=session.session_id, view=View.VIEW_HISTORY
        )
        messages = [m.message for m in state.state.messages]
        self.assertEqual([m.role for m in messages], [1, 2, 2, 2, 3, 3, 2])
        self.assertEqual(messages[1].content[0].thinking.thinking, "two sums at once")
        call = messages[2].content[0].tool_call
        self.assertEqual((call.id, call.name), ("call_3", "add"))
        self.assertEqual(call.arguments.struct_value.fields["a"].number_value, 10)
        self.assertEqual((messages[4].tool_call_id, messages[4].content[0].text), ("call_3", "11"))
        self.assertEqual(messages[6].content[0].text, "11 and 22.")


if __name__ == "__main__":
    unittest.main()
