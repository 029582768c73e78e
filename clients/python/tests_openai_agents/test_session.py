"""SessiondSession's rules against a live server: pop_item rewinds, clear_session resets,
outputs without their call, concurrent writers, a lost race re-planned, a retried Append."""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, Dict, List

from oa_support import Intercept, async_client, need_server, workspace

from sessiond import View
from sessiond.openai_agents import SessiondSession


def setUpModule() -> None:
    need_server()


def user(text: str) -> Dict[str, Any]:
    return {"role": "user", "content": text}


class SessionRulesTest(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.ws = workspace()
        self.client = async_client()
        self.addAsyncCleanup(self.client.close)

    def session(self, session_id: str = "", client: Any = None) -> SessiondSession:
        return SessiondSession(session_id or None, client=client or self.client, workspace=self.ws)

    async def tree(self, sid: str) -> List[Any]:
        return list((await self.client.read_tree(workspace=self.ws, session=sid)).nodes)

    async def test_pop_item_rewinds_and_the_popped_item_stays_in_the_tree_off_the_path(self) -> None:
        s = self.session()
        await s.add_items([user("one"), user("two")])
        self.assertEqual(await s.pop_item(), user("two"))
        self.assertEqual(await s.get_items(), [user("one")])
        nodes = [n for n in await self.tree(s.session_id) if n.preview in ("one", "two")]
        self.assertEqual([(n.preview, n.on_current_path) for n in nodes], [("one", True), ("two", False)])

    async def test_clear_session_resets_to_the_root_and_keeps_the_history(self) -> None:
        s = self.session()
        await s.add_items([user("kept in history")])
        await s.clear_session()
        self.assertEqual(await s.get_items(), [])
        self.assertIsNone(await s.pop_item())
        state = await self.client.read_state(workspace=self.ws, session=s.session_id, view=View.VIEW_HISTORY)
        self.assertEqual(len(state.state.messages), 0)
        self.assertTrue(any(n.preview == "kept in history" for n in await self.tree(s.session_id)))

    async def test_erase_session_leaves_none_of_the_old_items_readable(self) -> None:
        s = self.session()
        await s.add_items([user("my zebrafish secret"), user("more")])
        await s.erase_session()
        self.assertEqual(await s.get_items(), [])
        self.assertEqual([n.preview for n in await self.tree(s.session_id) if "zebrafish" in n.preview], [])
        state = await self.client.read_state(workspace=self.ws, session=s.session_id, view=View.VIEW_HISTORY)
        self.assertEqual(len(state.state.messages), 0)
        hits = await self.client.store.search_entries(workspace=self.ws, query="zebrafish")
        self.assertEqual(list(hits.hits), [])

    async def test_an_erased_session_keeps_its_id_title_and_tags_and_takes_new_items(self) -> None:
        s = SessiondSession(client=self.client, workspace=self.ws, title="t", tags={"user": "ana"})
        await s.add_items([user("before")])
        await s.erase_session()
        meta = (await self.client.store.get_session(workspace=self.ws, session=s.session_id)).session
        self.assertEqual((meta.id, meta.title, dict(meta.tags)), (s.session_id, "t", {"user": "ana"}))
        await s.add_items([user("after")])
        self.assertEqual(await s.get_items(), [user("after")])

    async def test_a_second_reader_of_an_erased_session_sees_it_empty(self) -> None:
        s = self.session()
        await s.add_items([user("one"), user("two"), user("three")])
        other = self.session(s.session_id)
        self.assertEqual(len(await other.get_items()), 3)
        await s.erase_session()
        self.assertEqual(await other.get_items(), [])

    async def test_get_items_with_a_limit_returns_the_newest(self) -> None:
        s = self.session()
        await s.add_items([user("a"), user("b"), user("c")])
        self.assertEqual(await s.get_items(2), [user("b"), user("c")])
        self.assertEqual(await s.get_items(0), [])

    async def test_an_output_whose_call_was_popped_is_kept_whole_and_reads_back(self) -> None:
        s = self.session()
        call = {"type": "function_call", "call_id": "c1", "name": "add", "arguments": "{}"}
        await s.add_items([user("q"), call])
        await s.pop_item()
        orphan = {"type": "function_call_output", "call_id": "c1", "output": "3"}
        await s.add_items([orphan, user("next")])
        self.assertEqual(await s.get_items(), [user("q"), orphan, user("next")])

    async def test_two_writers_adding_to_one_session_at_once_lose_none_of_each_others_items(self) -> None:
        clients = [async_client(), async_client()]
        for c in clients:
            self.addAsyncCleanup(c.close)
        sid = self.session().session_id

        async def writer(who: str, s: SessiondSession) -> None:
            for i in range(10):
                await s.add_items([user(f"{who}{i}"), user(f"{who}{i + 100}")])

        await asyncio.gather(*(writer(w, self.session(sid, c)) for w, c in zip("ab", clients)))
        texts = [i["content"] for i in await self.session(sid).get_items()]
        self.assertEqual(len(texts), 40)
        for who in "ab":
            mine = [t for t in texts if t.startswith(who)]
            self.assertEqual(mine, [f"{who}{n}" for i in range(10) for n in (i, i + 100)])

    async def test_a_write_planned_before_another_writers_is_refused_replanned_and_kept(self) -> None:
        b = self.session()
        await b.add_items([user("first")])
        spy = Intercept()
        spy.before["Append"] = lambda: b.add_items([user("b cut in")])
        client = async_client(interceptors=[spy])
        self.addAsyncCleanup(client.close)
        a = self.session(b.session_id, client)
        await a.add_items([user("a")])
        self.assertEqual(spy.codes("Append"), ["ABORTED", "OK"])
        self.assertEqual([i["content"] for i in await a.get_items()], ["first", "b cut in", "a"])

    async def test_an_append_whose_response_was_lost_is_retried_and_written_once(self) -> None:
        spy = Intercept()
        spy.lose["Append"] = 1
        client = async_client(interceptors=[spy])
        self.addAsyncCleanup(client.close)
        s = self.session(client=client)
        await s.add_items([user("once"), user("twice?")])
        self.assertEqual(spy.codes("Append"), ["OK", "OK"])
        self.assertEqual(await s.get_items(), [user("once"), user("twice?")])
        page = await self.client.session.get_entries(workspace=self.ws, session=s.session_id)
        self.assertEqual(len(page.entries), 3)  # the SessionInfo and two items

    async def test_a_session_id_resumes_the_same_session_from_a_new_client(self) -> None:
        s = self.session()
        await s.add_items([user("remember me")])
        other = async_client()
        self.addAsyncCleanup(other.close)
        self.assertEqual(await self.session(s.session_id, other).get_items(), [user("remember me")])


if __name__ == "__main__":
    unittest.main()
