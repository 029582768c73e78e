"""AsyncSessiondClient (asyncio, grpc.aio): every RPC, paging, errors and the resumable watch, against a live server."""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, List

import grpc
import grpc.aio
from google.protobuf import timestamp_pb2
from support import AsyncCounter, async_client, need_server, workspace

from sessiond import (
    AsyncSessiondClient,
    SessiondError,
    SortOrder,
    View,
    assistant_message,
    new_entry_id,
    text_of,
    tool_call,
    tool_result,
    user_message,
)
from sessiond.v1 import entry_pb2, session_service_pb2, store_service_pb2


def setUpModule() -> None:
    need_server()


class AsyncTestCase(unittest.IsolatedAsyncioTestCase):
    async def asyncSetUp(self) -> None:
        self.counter = AsyncCounter()
        self.c = async_client(interceptors=[self.counter])
        self.ws = workspace()

    async def asyncTearDown(self) -> None:
        await self.c.close()


class AsyncStoreServiceTest(AsyncTestCase):
    async def test_create_get_list_search_delete(self) -> None:
        created = await self.c.store.create_session(
            workspace=self.ws, title="aio", metadata={"team": "a", "n": 2}, tags={"k": "v"}
        )
        self.assertTrue(created.created)
        s = created.session
        self.assertRegex(s.id, r"^\d{8}-\d{6}-[0-9a-f]{8}$")  # chosen by the client
        self.assertEqual((s.workspace, s.title), (self.ws, "aio"))
        self.assertEqual(dict(s.metadata), {"team": "a", "n": 2})
        got = (await self.c.store.get_session(workspace=self.ws, session=s.id[-8:])).session
        self.assertEqual(got.id, s.id)

        other = (await self.c.store.create_session(workspace=self.ws, session_id="aio-other")).session
        oldest = SortOrder.Value("SORT_ORDER_OLDEST_FIRST")
        page1 = await self.c.store.list_sessions(workspace=self.ws, page_size=1, order=oldest)
        self.assertEqual([m.id for m in page1.sessions], [s.id])
        page2 = await self.c.store.list_sessions(
            workspace=self.ws, page_size=1, page_token=page1.next_page_token, order=oldest
        )
        self.assertEqual([m.id for m in page2.sessions], [other.id])

        await self.c.session.append(
            workspace=self.ws, session=s.id, entries=[user_message("a rare aubergine")]
        )
        hits = await self.c.store.search_entries(workspace=self.ws, query="aubergine")
        self.assertEqual([h.session_id for h in hits.hits], [s.id])

        deleted = await self.c.store.delete_session(workspace=self.ws, session=s.id)
        self.assertEqual(list(deleted.deleted_session_ids), [s.id])
        left = (await self.c.store.list_sessions(workspace=self.ws)).sessions
        self.assertEqual([m.id for m in left], ["aio-other"])

    async def test_ids_are_chosen_before_send_into_the_request(self) -> None:
        req = store_service_pb2.CreateSessionRequest(workspace=self.ws, title="once")
        first = await self.c.store.create_session(req)
        self.assertEqual(req.session_id, first.session.id)  # filled in, in place
        again = await self.c.store.create_session(req)  # the caller's own retry
        self.assertFalse(again.created)
        sid = first.session.id
        append = session_service_pb2.AppendRequest(
            workspace=self.ws, session=sid, entries=[user_message("q"), user_message("q2")]
        )
        r = await self.c.session.append(append)
        self.assertEqual([e.id for e in r.entries], [e.id for e in append.entries])
        self.assertRegex(append.entries[0].id, r"^[0-9a-f]{16}$")
        again_r = await self.c.session.append(append)
        self.assertTrue(again_r.deduplicated)
        self.assertEqual(again_r.head_seq, 3)

    async def test_fork_and_import(self) -> None:
        sid = (await self.c.store.create_session(workspace=self.ws, title="src")).session.id
        await self.c.session.append(
            workspace=self.ws,
            session=sid,
            entries=[user_message("q1", id="u1"), assistant_message("a1", id="a1")],
        )
        req = store_service_pb2.ForkSessionRequest(workspace=self.ws, session=sid, entry="u1")
        fork = (await self.c.store.fork_session(req)).session
        self.assertEqual(fork.id, req.session_id)
        state = (await self.c.session.get_state(workspace=self.ws, session=fork.id)).state
        self.assertEqual(text_of(state), "q1")
        log = list((await self.c.session.get_entries(workspace=self.ws, session=sid)).entries)
        imp = store_service_pb2.ImportSessionRequest(workspace=self.ws, session_id="aio-copy", entries=log)
        self.assertTrue((await self.c.store.import_session(imp)).created)
        self.assertFalse((await self.c.store.import_session(imp)).created)

    async def test_watch_sessions_stream(self) -> None:
        events: List[store_service_pb2.WatchSessionsResponse] = []
        deleted = asyncio.Event()

        async def watch() -> None:
            async with self.c.store.watch_sessions(workspace=self.ws) as stream:
                started.set()
                async for ev in stream:
                    events.append(ev)
                    if ev.type == store_service_pb2.SESSION_EVENT_TYPE_DELETED:
                        deleted.set()
                        return

        started = asyncio.Event()
        task = asyncio.ensure_future(watch())
        await started.wait()
        await asyncio.sleep(0.3)  # let the stream open before the first event
        sid = (await self.c.store.create_session(workspace=self.ws)).session.id
        # A change is described by reading the session; one deleted before the feed read it
        # is dropped (store/watch/watch-sessions.ts), so delete once the creation is seen.
        created = store_service_pb2.SESSION_EVENT_TYPE_CREATED
        for _ in range(750):
            if any(e.session_id == sid and e.type == created for e in events):
                break
            await asyncio.sleep(0.02)
        await self.c.store.delete_session(workspace=self.ws, session=sid)
        await asyncio.wait_for(deleted.wait(), 15)
        await asyncio.wait_for(task, 5)
        kinds = [store_service_pb2.SessionEventType.Name(e.type) for e in events if e.session_id == sid]
        self.assertEqual(kinds[0], "SESSION_EVENT_TYPE_CREATED")
        self.assertEqual(kinds[-1], "SESSION_EVENT_TYPE_DELETED")


class AsyncSessionServiceTest(AsyncTestCase):
    async def asyncSetUp(self) -> None:
        await super().asyncSetUp()
        self.sid = (await self.c.store.create_session(workspace=self.ws, title="t")).session.id

    async def append(self, *entries: entry_pb2.Entry) -> session_service_pb2.AppendResponse:
        return await self.c.session.append(workspace=self.ws, session=self.sid, entries=list(entries))

    async def test_tool_turn_state_entries_tree(self) -> None:
        call = tool_call("calc", {"expr": "37*19"}, id="call-1")
        r = await self.append(
            user_message("37*19=?"),
            assistant_message(tool_calls=[call]),
            tool_result("call-1", "703", tool_name="calc"),
        )
        self.assertEqual(r.head_seq, 4)
        ids = [e.id for e in r.entries]
        state = (
            await self.c.session.get_state(
                workspace=self.ws, session=self.sid, view=View.Value("VIEW_HISTORY")
            )
        ).state
        self.assertEqual([m.entry_id for m in state.messages], ids)
        self.assertEqual(text_of(state, sep=" | "), "37*19=? | 703")
        got = await self.c.session.get_entries(workspace=self.ws, session=self.sid, after_seq=1, limit=2)
        self.assertEqual([e.seq for e in got.entries], [2, 3])
        tree = await self.c.session.get_tree(workspace=self.ws, session=self.sid)
        self.assertEqual(len(tree.nodes), 4)

    async def test_get_usage_sums_the_tree_and_its_subagents(self) -> None:
        usage = entry_pb2.Usage(input_tokens=10, output_tokens=2, reasoning_tokens=1)
        await self.append(user_message("q", id="u1"), assistant_message("a", usage=usage, model="m", id="a1"))
        sub = (
            await self.c.store.create_session(workspace=self.ws, parent_session_id=self.sid, agent_type="x")
        ).session.id
        await self.c.session.append(
            workspace=self.ws, session=sub, entries=[assistant_message("b", usage=usage, model="m")]
        )
        u = await self.c.session.get_usage(workspace=self.ws, session=self.sid)
        self.assertEqual((u.tree.input_tokens, u.tree.reasoning_tokens), (10, 1))
        self.assertEqual([(s.session_id, s.agent_type) for s in u.subagents], [(sub, "x")])
        self.assertEqual((u.total.messages, u.total.input_tokens, u.total.unpriced_messages), (2, 20, 2))
        alone = await self.c.session.get_usage(workspace=self.ws, session=self.sid, skip_subagents=True)
        self.assertEqual((list(alone.subagents), alone.total.input_tokens), ([], 10))

    async def test_usage_report_sums_the_workspace(self) -> None:
        usage = entry_pb2.Usage(input_tokens=10, output_tokens=2)
        reply = assistant_message("a", usage=usage, model="m", id="a1")
        reply.timestamp.FromSeconds(1778061600)  # 2026-05-06T10:00:00Z
        await self.append(user_message("q", id="u1"), reply)
        r = await self.c.store.usage_report(
            workspace=self.ws,
            start=timestamp_pb2.Timestamp(seconds=1778061600 - 86400),
            end=timestamp_pb2.Timestamp(seconds=1778061600 + 86400),
        )
        self.assertEqual((r.total.messages, r.total.input_tokens, r.sessions), (1, 10, 1))
        self.assertEqual([row.bucket_start.seconds for row in r.rows], [1778061600 - 86400])

    async def test_share_read_list_revoke(self) -> None:
        await self.append(user_message("q", id="u1"), assistant_message("a", id="a1"))
        share = (await self.c.store.share_session(workspace=self.ws, session=self.sid)).share
        snap = await self.c.store.read_share(token=share.token, page_size=1)
        self.assertEqual((len(snap.entries), snap.share.entry_id), (1, "a1"))
        self.assertNotEqual(snap.next_page_token, "")
        rest = await self.c.store.read_share(token=share.token, page_token=snap.next_page_token)
        self.assertEqual([e.id for e in rest.entries], ["u1", "a1"])
        listed = (await self.c.store.list_shares(workspace=self.ws)).shares
        self.assertIn(share.token[:12], [s.token for s in listed])
        revoked = await self.c.store.revoke_share(workspace=self.ws, token=share.token)
        self.assertTrue(revoked.share.revoked)
        with self.assertRaises(SessiondError):
            await self.c.store.read_share(token=share.token)

    async def test_rewind_and_reset_choose_their_leaf_ids(self) -> None:
        await self.append(user_message("q", id="u1"), assistant_message("a", id="a1"))
        rw_req = session_service_pb2.RewindRequest(workspace=self.ws, session=self.sid, target="u1")
        rw = await self.c.session.rewind(rw_req)
        self.assertEqual(rw.leaf_id, "u1")
        self.assertEqual(rw.leaf_entry_id, rw_req.entry_id)
        self.assertRegex(rw_req.entry_id, r"^[0-9a-f]{16}$")
        rs = await self.c.session.reset(workspace=self.ws, session=self.sid)
        self.assertRegex(rs.leaf_entry_id, r"^[0-9a-f]{16}$")
        state = (await self.c.session.get_state(workspace=self.ws, session=self.sid)).state
        self.assertEqual(list(state.messages), [])

    async def test_read_state_and_read_tree_merge_every_page(self) -> None:
        r = await self.append(*[user_message(f"m{i}") for i in range(5)])
        ids = [e.id for e in r.entries]
        req = session_service_pb2.GetStateRequest(workspace=self.ws, session=self.sid, page_size=2)
        first = await self.c.session.get_state(req)
        self.assertEqual(len(first.state.messages), 2)  # the server pages
        self.assertNotEqual(first.next_page_token, "")
        whole = await self.c.read_state(req)
        self.assertEqual([m.entry_id for m in whole.state.messages], ids)
        self.assertEqual(whole.next_page_token, "")
        self.assertEqual(req.page_token, "")  # the caller's request is left as it was
        tree = await self.c.read_tree(workspace=self.ws, session=self.sid, page_size=2)
        self.assertEqual([n.id for n in tree.nodes][1:], ids)
        self.assertEqual(tree.next_page_token, "")

    async def test_raw_watch_entries_stream(self) -> None:
        await self.append(user_message("one"), user_message("two"))
        seqs: List[int] = []
        async with self.c.session.watch_entries(workspace=self.ws, session=self.sid, after_seq=1) as stream:
            async for ev in stream:
                if ev.WhichOneof("event") == "entry":
                    seqs.append(ev.entry.seq)
                    if ev.entry.seq == 3:
                        break
        self.assertEqual(seqs, [2, 3])

    async def test_resumable_watch_from_after_seq_then_live(self) -> None:
        await self.append(user_message("one"), user_message("two"))
        seen: List[int] = []
        async with self.c.watch_entries(self.sid, after_seq=2, workspace=self.ws) as w:
            async for ev in w:
                if ev.WhichOneof("event") != "entry":
                    continue
                seen.append(ev.entry.seq)
                if ev.entry.seq == 3:
                    await self.append(user_message("live"))
                if ev.entry.seq == 4:
                    break
        self.assertEqual(seen, [3, 4])
        self.assertEqual(w.last_seq, 4)
        self.assertEqual(w.reconnects, 0)

    async def test_watch_closed_from_another_task_ends_quietly(self) -> None:
        w = self.c.watch_entries(self.sid, workspace=self.ws)

        async def run() -> List[int]:
            return [ev.entry.seq async for ev in w if ev.WhichOneof("event") == "entry"]

        task = asyncio.ensure_future(run())
        await asyncio.sleep(0.5)
        w.close()
        self.assertEqual(await asyncio.wait_for(task, 5), [1])
        self.assertEqual(w.reconnects, 0)

    async def test_watch_ends_quietly_when_the_client_closes(self) -> None:
        c = async_client()
        w = c.watch_entries(self.sid, workspace=self.ws)
        self.assertEqual((await w.__anext__()).entry.seq, 1)
        await c.close()
        self.assertEqual([ev async for ev in w if ev.WhichOneof("event") == "entry"], [])

    async def test_watch_ends_with_not_found_when_the_session_is_deleted(self) -> None:
        w = self.c.watch_entries(self.sid, workspace=self.ws)
        self.assertEqual((await w.__anext__()).entry.seq, 1)
        await self.c.store.delete_session(workspace=self.ws, session=self.sid)
        with self.assertRaises(SessiondError) as cm:
            async for _ in w:
                pass
        self.assertEqual(cm.exception.code_name, "NOT_FOUND")
        self.assertIn(self.sid, cm.exception.message)

    async def test_a_cancelled_task_stays_cancelled(self) -> None:
        """Cancelling the task that iterates a watch is the caller's: CancelledError, not an end."""
        w = self.c.watch_entries(self.sid, workspace=self.ws)

        async def run() -> None:
            async for _ in w:
                pass

        task = asyncio.ensure_future(run())
        await asyncio.sleep(0.3)
        task.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await task
        w.close()


class AsyncErrorsTest(AsyncTestCase):
    async def test_not_found_names_the_id_and_is_not_retried(self) -> None:
        ghost = f"ghost-{new_entry_id()}"
        with self.assertRaises(SessiondError) as cm:
            await self.c.session.get_state(workspace=self.ws, session=ghost)
        self.assertEqual(cm.exception.code, grpc.StatusCode.NOT_FOUND)
        self.assertIn(ghost, cm.exception.message)
        with self.assertRaises(SessiondError) as cm:
            await self.c.store.delete_session(workspace=self.ws, session=ghost)
        self.assertEqual(cm.exception.code_name, "NOT_FOUND")
        self.assertEqual(self.counter.calls, ["GetState", "DeleteSession"])

    async def test_cas_conflict_is_aborted_and_never_retried(self) -> None:
        sid = (await self.c.store.create_session(workspace=self.ws)).session.id
        await self.c.session.append(workspace=self.ws, session=sid, entries=[user_message("a", id="a")])
        before = len(self.counter.calls)
        with self.assertRaises(SessiondError) as cm:
            await self.c.session.append(
                workspace=self.ws, session=sid, entries=[user_message("b")], expected_seq=7
            )
        self.assertEqual(cm.exception.code_name, "ABORTED")
        self.assertIn(sid, cm.exception.message)
        self.assertEqual(len(self.counter.calls) - before, 1)

    async def test_invalid_argument(self) -> None:
        sid = (await self.c.store.create_session(workspace=self.ws)).session.id
        with self.assertRaises(SessiondError) as cm:
            await self.c.session.append(
                workspace=self.ws, session=sid, entries=[user_message("x", id="bad id!")]
            )
        self.assertEqual(cm.exception.code_name, "INVALID_ARGUMENT")
        self.assertIn("bad id!", cm.exception.message)

    async def test_timeouts_and_headers_reach_the_call(self) -> None:
        """A call's ``timeout`` / ``headers``, else the client's ``timeout``; streams get no deadline."""
        seen: List[Any] = []

        # grpc.aio files an interceptor under one kind only: one object per kind.
        class Unary(grpc.aio.UnaryUnaryClientInterceptor):
            async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
                seen.append((details.timeout, dict(details.metadata or ())))
                return await continuation(details, request)

        class Streams(grpc.aio.UnaryStreamClientInterceptor):
            async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
                seen.append((details.timeout, dict(details.metadata or ())))
                return await continuation(details, request)

        async with async_client(interceptors=[Unary(), Streams()], timeout=7.0) as c:
            await c.store.list_sessions(workspace=self.ws)
            await c.store.list_sessions(workspace=self.ws, timeout=3.0, headers=[("x-test", "1")])
            async with c.store.watch_sessions(workspace=self.ws) as stream:
                await stream.__anext__()  # connected (or a first event)
        self.assertEqual([t for t, _ in seen], [7.0, 3.0, None])
        self.assertEqual(seen[1][1].get("x-test"), "1")

    async def test_a_call_the_closing_client_cuts_off_is_cancelled(self) -> None:
        """As with SessiondClient: CANCELLED, not the CancelledError grpc.aio raises for it."""
        c = async_client()
        await c.store.list_sessions(workspace=self.ws)  # connected
        pending = asyncio.ensure_future(c.store.list_sessions(workspace=self.ws))
        await asyncio.sleep(0)  # sent
        await c.close()
        with self.assertRaises(SessiondError) as cm:
            await pending
        self.assertEqual(cm.exception.code_name, "CANCELLED")

    async def test_a_cancelled_call_is_the_callers_cancellation(self) -> None:
        pending = asyncio.ensure_future(self.c.store.list_sessions(workspace=self.ws))
        await asyncio.sleep(0)
        pending.cancel()
        with self.assertRaises(asyncio.CancelledError):
            await pending

    async def test_the_client_is_an_async_context_manager(self) -> None:
        async with async_client() as c:
            self.assertIsInstance(c, AsyncSessiondClient)
            await c.store.list_sessions(workspace=self.ws)
        with self.assertRaises(grpc.aio.UsageError):  # "Channel is closed."
            await c.store.list_sessions(workspace=self.ws)


if __name__ == "__main__":
    unittest.main()
