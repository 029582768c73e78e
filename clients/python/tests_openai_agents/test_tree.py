"""What the SDK's own stores lack: fork at an item, rewind to an item, watch a session live."""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, Dict, List

from agents.testing import ScriptedModel
from oa_support import async_client, need_server, run, script, workspace

from sessiond.openai_agents import SessionEvent, SessiondSession


def setUpModule() -> None:
    need_server()


def user(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": text}


class TreeExtrasTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.ws = workspace()
        self.client = async_client()
        self.addAsyncCleanup(self.client.close)

    async def test_fork_at_an_item_holds_the_items_up_to_it_and_leaves_the_source_alone(self) -> None:
        s = SessiondSession(client=self.client, workspace=self.ws)
        await s.add_items([user("a"), user("b"), user("c")])
        fork = await s.fork(at=1, title="from b")
        self.assertNotEqual(fork.session_id, s.session_id)
        self.assertEqual(await fork.get_items(), [user("a"), user("b")])
        await fork.add_items([user("d")])
        self.assertEqual(await fork.get_items(), [user("a"), user("b"), user("d")])
        self.assertEqual(await s.get_items(), [user("a"), user("b"), user("c")])
        meta = await self.client.store.get_session(workspace=self.ws, session=fork.session_id)
        self.assertEqual(meta.session.forked_from.session_id, s.session_id)

    async def test_a_fork_of_a_runner_session_continues_under_the_runner(self) -> None:
        s = SessiondSession(client=self.client, workspace=self.ws)
        await run(ScriptedModel(script()[:2]), "What is 1+2?", s)
        fork = await s.fork()
        model = ScriptedModel(script()[6:7])
        await run(model, "Hello?", fork)
        self.assertEqual(model.calls[0].input[:-1], await s.get_items())
        self.assertEqual(len(await fork.get_items()), len(await s.get_items()) + 2)

    async def test_rewind_to_an_item_keeps_the_items_up_to_it_and_the_rest_in_the_tree(self) -> None:
        s = SessiondSession(client=self.client, workspace=self.ws)
        await s.add_items([user("a"), user("b"), user("c")])
        await s.rewind_to(0)
        self.assertEqual(await s.get_items(), [user("a")])
        await s.add_items([user("b2")])
        self.assertEqual(await s.get_items(), [user("a"), user("b2")])
        nodes = (await self.client.read_tree(workspace=self.ws, session=s.session_id)).nodes
        self.assertEqual(
            [(n.preview, n.on_current_path) for n in nodes if n.preview in ("a", "b", "c", "b2")],
            [("a", True), ("b", False), ("c", False), ("b2", True)],
        )
        with self.assertRaises(IndexError):
            await s.rewind_to(5)

    async def test_watch_yields_appended_items_and_leaf_moves_live(self) -> None:
        s = SessiondSession(client=self.client, workspace=self.ws)
        await s.add_items([user("before")])
        seen: List[SessionEvent] = []

        async def follow() -> None:
            async for event in s.watch():
                seen.append(event)
                if event.moved_to is not None:
                    return

        follower = asyncio.ensure_future(follow())
        while not seen:
            await asyncio.sleep(0.02)
        writer = SessiondSession(s.session_id, client=async_client(), workspace=self.ws)
        self.addAsyncCleanup(writer.client.close)
        await writer.add_items([user("live 1"), user("live 2")])
        await writer.pop_item()
        await asyncio.wait_for(follower, 20)
        self.assertEqual([e.items for e in seen], [[user("before")], [user("live 1")], [user("live 2")], []])
        self.assertEqual([e.seq for e in seen], [2, 3, 4, 5])
        self.assertEqual(seen[3].moved_to, seen[1].entry_id)


if __name__ == "__main__":
    unittest.main()
