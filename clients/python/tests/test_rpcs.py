"""Every RPC of StoreService and SessionService through SessiondClient, against a live server."""

from __future__ import annotations

import threading
import time
import unittest
from typing import Any, List

from google.protobuf import timestamp_pb2
from support import client, need_server, workspace

from sessiond import (
    SessiondError,
    SortOrder,
    View,
    assistant_message,
    text_of,
    tool_call,
    tool_result,
    user_message,
)
from sessiond.v1 import entry_pb2, session_pb2, store_service_pb2
from sessiond.v1 import session_service_pb2 as session_pb2_service


def setUpModule() -> None:
    need_server()


class StoreServiceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.ws = workspace()

    def tearDown(self) -> None:
        self.c.close()

    def test_create_get_list_delete(self) -> None:
        created = self.c.store.create_session(
            workspace=self.ws, title="py", cwd="/tmp", metadata={"team": "a", "n": 2}
        )
        self.assertTrue(created.created)
        s = created.session
        # The client chose the id (CreateSession sent it), in the server's format.
        self.assertRegex(s.id, r"^\d{8}-\d{6}-[0-9a-f]{8}$")
        self.assertEqual((s.workspace, s.title, s.cwd), (self.ws, "py", "/tmp"))
        self.assertEqual(dict(s.metadata), {"team": "a", "n": 2})
        self.assertEqual(s.entry_count, 1)

        got = self.c.store.get_session(workspace=self.ws, session=s.id[-8:]).session
        self.assertEqual(got.id, s.id)  # resolved from its short id

        other = self.c.store.create_session(workspace=self.ws, session_id="py-other").session
        sub = self.c.store.create_session(
            workspace=self.ws, session_id="py-sub", parent_session_id=s.id, agent_type="sub"
        ).session
        self.assertEqual((sub.parent_session_id, sub.agent_type, sub.spawn_depth), (s.id, "sub", 1))

        oldest = SortOrder.Value("SORT_ORDER_OLDEST_FIRST")
        page1 = self.c.store.list_sessions(workspace=self.ws, page_size=1, order=oldest)
        self.assertEqual([m.id for m in page1.sessions], [s.id])
        self.assertNotEqual(page1.next_page_token, "")
        page2 = self.c.store.list_sessions(
            workspace=self.ws, page_size=1, page_token=page1.next_page_token, order=oldest
        )
        self.assertEqual([m.id for m in page2.sessions], [other.id])  # top level only
        self.assertEqual(page2.next_page_token, "")
        subs = self.c.store.list_sessions(workspace=self.ws, parent_session_id=s.id)
        self.assertEqual([m.id for m in subs.sessions], ["py-sub"])

        deleted = self.c.store.delete_session(
            workspace=self.ws, session=s.id, include_subagents=True
        )
        self.assertEqual(sorted(deleted.deleted_session_ids), sorted([s.id, "py-sub"]))
        left = self.c.store.list_sessions(workspace=self.ws).sessions
        self.assertEqual([m.id for m in left], ["py-other"])

    def test_list_workspaces_counts_this_workspace(self) -> None:
        parent = self.c.store.create_session(workspace=self.ws).session
        self.c.store.create_session(workspace=self.ws, parent_session_id=parent.id, agent_type="sub")
        found = {}
        token = ""
        while True:
            page = self.c.store.list_workspaces(page_size=50, page_token=token)
            found.update({w.name: (w.session_count, w.subagent_session_count) for w in page.workspaces})
            token = page.next_page_token
            if not token:
                break
        self.assertEqual(found.get(self.ws), (1, 1))

    def test_create_with_the_same_id_is_idempotent(self) -> None:
        req = store_service_pb2.CreateSessionRequest(workspace=self.ws, title="once")
        first = self.c.store.create_session(req)
        self.assertEqual(req.session_id, first.session.id)  # filled in, in place
        again = self.c.store.create_session(req)
        self.assertFalse(again.created)
        self.assertEqual(again.session.id, first.session.id)
        self.assertEqual(len(self.c.store.list_sessions(workspace=self.ws).sessions), 1)

    def test_fork_session(self) -> None:
        sid = self.c.store.create_session(workspace=self.ws, title="src").session.id
        self.c.session.append(
            workspace=self.ws,
            session=sid,
            entries=[
                user_message("q1", id="u1"),
                assistant_message("a1", id="a1"),
                entry_pb2.Entry(id="l1", label=entry_pb2.Label(label="answered")),
                user_message("q2", id="u2"),
            ],
        )
        req = store_service_pb2.ForkSessionRequest(
            workspace=self.ws, session=sid, entry="answered", title="fork"
        )
        fork = self.c.store.fork_session(req).session
        self.assertEqual(fork.id, req.session_id)
        self.assertRegex(fork.id, r"^\d{8}-\d{6}-[0-9a-f]{8}$")
        self.assertEqual((fork.forked_from.session_id, fork.forked_from.entry_id), (sid, "l1"))
        self.assertEqual(fork.title, "fork")
        state = self.c.session.get_state(workspace=self.ws, session=fork.id).state
        self.assertEqual(text_of(state), "q1\na1")
        # The same request again (a retry) gives the same fork, not a second one.
        self.assertEqual(self.c.store.fork_session(req).session.id, fork.id)
        self.assertEqual(len(self.c.store.list_sessions(workspace=self.ws).sessions), 2)

    def test_import_session(self) -> None:
        sid = self.c.store.create_session(workspace=self.ws, title="src").session.id
        self.c.session.append(
            workspace=self.ws,
            session=sid,
            entries=[user_message("q1", id="u1"), assistant_message("a1", id="a1")],
        )
        log = list(self.c.session.get_entries(workspace=self.ws, session=sid).entries)
        req = store_service_pb2.ImportSessionRequest(
            workspace=self.ws, session_id="py-copy", entries=log
        )
        res = self.c.store.import_session(req)
        self.assertTrue(res.created)
        copy = list(self.c.session.get_entries(workspace=self.ws, session="py-copy").entries)
        kept = [(e.id, e.seq, e.timestamp) for e in copy]
        self.assertEqual(kept, [(e.id, e.seq, e.timestamp) for e in log])
        # The same log again is no new session; another log under the id is refused.
        self.assertFalse(self.c.store.import_session(req).created)
        with self.assertRaises(SessiondError) as err:
            self.c.store.import_session(workspace=self.ws, session_id="py-copy", entries=log[:2])
        self.assertEqual(err.exception.code_name, "ALREADY_EXISTS")

    def test_watch_sessions(self) -> None:
        events: List[store_service_pb2.WatchSessionsResponse] = []
        done = threading.Event()
        stream = self.c.store.watch_sessions(workspace=self.ws)

        def watch() -> None:
            for ev in stream:
                events.append(ev)
                if ev.type == store_service_pb2.SESSION_EVENT_TYPE_DELETED:
                    done.set()

        t = threading.Thread(target=watch, daemon=True)
        t.start()
        time.sleep(0.3)  # let the stream open before the first event
        sid = self.c.store.create_session(workspace=self.ws).session.id
        self.c.session.append(workspace=self.ws, session=sid, entries=[user_message("x")])
        # An update is described by reading the session; one deleted before the feed read
        # it is dropped (store/watch/watch-sessions.ts), so delete once the update is seen.
        updated = store_service_pb2.SESSION_EVENT_TYPE_UPDATED
        deadline = time.monotonic() + 15
        while not any(e.session_id == sid and e.type == updated for e in list(events)):
            self.assertLess(time.monotonic(), deadline, f"no UPDATED event: {events}")
            time.sleep(0.02)
        self.c.store.delete_session(workspace=self.ws, session=sid)
        self.assertTrue(done.wait(15), f"events so far: {events}")
        stream.close()
        t.join(5)
        self.assertFalse(t.is_alive(), "close() ends the iteration")
        mine = [e for e in events if e.session_id == sid]
        kinds = [store_service_pb2.SessionEventType.Name(e.type) for e in mine]
        self.assertEqual(kinds[0], "SESSION_EVENT_TYPE_CREATED")
        self.assertIn("SESSION_EVENT_TYPE_UPDATED", kinds)
        self.assertEqual(kinds[-1], "SESSION_EVENT_TYPE_DELETED")
        self.assertTrue(all(e.cursor for e in mine))


class SessionServiceTest(unittest.TestCase):
    def setUp(self) -> None:
        self.c = client()
        self.ws = workspace()
        self.sid = self.c.store.create_session(workspace=self.ws, title="t").session.id

    def tearDown(self) -> None:
        self.c.close()

    def append(self, *entries: entry_pb2.Entry, **kw: Any) -> session_pb2_service.AppendResponse:
        return self.c.session.append(workspace=self.ws, session=self.sid, entries=list(entries), **kw)

    def test_append_tool_turn_state_entries_tree(self) -> None:
        call = tool_call("calc", {"expr": "37*19"}, id="call-1")
        r = self.append(
            user_message("37*19=?"),
            assistant_message(tool_calls=[call], model="m1", provider="p1"),
            tool_result("call-1", "703", tool_name="calc"),
            assistant_message("703"),
        )
        self.assertEqual(r.head_seq, 5)
        self.assertFalse(r.deduplicated)
        ids = [e.id for e in r.entries]
        for i in ids:
            self.assertRegex(i, r"^[0-9a-f]{16}$")  # chosen by the client
        self.assertEqual([e.seq for e in r.entries], [2, 3, 4, 5])
        self.assertEqual(r.leaf_id, ids[-1])
        # Without parent ids the batch is a chain under the previous leaf.
        self.assertEqual([e.parent_id for e in r.entries[1:]], ids[:-1])

        state = self.c.session.get_state(
            workspace=self.ws, session=self.sid, view=View.Value("VIEW_HISTORY")
        ).state
        self.assertEqual([m.entry_id for m in state.messages], ids)
        self.assertEqual(text_of(state), "37*19=?\n703\n703")
        self.assertEqual(state.leaf_id, ids[-1])
        self.assertEqual(state.head_seq, 5)
        self.assertEqual(state.title, "t")
        args = state.messages[1].message.content[0].tool_call.arguments
        self.assertEqual(args.struct_value["expr"], "37*19")

        got = self.c.session.get_entries(workspace=self.ws, session=self.sid, after_seq=1, limit=2)
        self.assertEqual([e.seq for e in got.entries], [2, 3])
        self.assertEqual(got.head_seq, 5)
        self.assertEqual(got.entries[0].WhichOneof("kind"), "message")

        tree = self.c.session.get_tree(workspace=self.ws, session=self.sid)
        self.assertEqual(len(tree.nodes), 5)
        self.assertTrue(all(n.on_current_path for n in tree.nodes))
        self.assertEqual(tree.nodes[1].preview, "37*19=?")
        self.assertEqual(tree.leaf_id, ids[-1])
        paged = self.c.session.get_tree(workspace=self.ws, session=self.sid, page_size=2)
        self.assertEqual(len(paged.nodes), 2)
        self.assertNotEqual(paged.next_page_token, "")

    def test_read_state_and_read_tree_merge_every_page(self) -> None:
        r = self.append(*[user_message(f"m{i}") for i in range(5)])
        ids = [e.id for e in r.entries]
        req = session_pb2_service.GetStateRequest(workspace=self.ws, session=self.sid, page_size=2)
        first = self.c.session.get_state(req)
        # The server pages (else this test would prove nothing).
        self.assertEqual(len(first.state.messages), 2)
        self.assertNotEqual(first.next_page_token, "")
        whole = self.c.read_state(req)
        self.assertEqual([m.entry_id for m in whole.state.messages], ids)
        self.assertEqual(text_of(whole.state, sep=","), "m0,m1,m2,m3,m4")
        self.assertEqual(whole.next_page_token, "")
        self.assertEqual(req.page_token, "")  # the caller's request is left as it was
        tree = self.c.read_tree(workspace=self.ws, session=self.sid, page_size=2)
        self.assertEqual([n.id for n in tree.nodes][1:], ids)  # after the session_info root
        self.assertEqual(tree.next_page_token, "")

    def test_rewind_branch_reset_and_time_travel(self) -> None:
        self.append(
            user_message("q", id="u1"),
            assistant_message("a", id="a1"),
            entry_pb2.Entry(id="lab", label=entry_pb2.Label(label="before")),
            user_message("more", id="u2"),
        )
        rw = self.c.session.rewind(workspace=self.ws, session=self.sid, target="before")
        self.assertEqual(rw.leaf_id, "lab")
        self.assertRegex(rw.leaf_entry_id, r"^[0-9a-f]{16}$")  # the Leaf entry's id, chosen here
        self.append(user_message("other", id="u3"))
        state = self.c.session.get_state(workspace=self.ws, session=self.sid).state
        self.assertEqual(text_of(state), "q\na\nother")
        self.assertEqual(state.label, "before")
        past = self.c.session.get_state(workspace=self.ws, session=self.sid, at_entry_id="u2").state
        self.assertEqual(text_of(past), "q\na\nmore")
        self.assertEqual(past.current_leaf_id, "u3")
        tree = self.c.session.get_tree(workspace=self.ws, session=self.sid)
        on_path = {n.id for n in tree.nodes if n.on_current_path}
        self.assertIn("u3", on_path)
        self.assertNotIn("u2", on_path)

        rs = self.c.session.reset(workspace=self.ws, session=self.sid)
        root = self.c.session.get_entries(workspace=self.ws, session=self.sid, limit=1).entries[0]
        self.assertEqual(rs.leaf_id, root.id)
        self.assertEqual(list(self.c.session.get_state(workspace=self.ws, session=self.sid).state.messages), [])
        leaf = self.c.session.get_entries(workspace=self.ws, session=self.sid, after_seq=rs.head_seq - 1)
        self.assertEqual(leaf.entries[0].id, rs.leaf_entry_id)
        self.assertEqual(leaf.entries[0].leaf.leaf_id, root.id)

    def test_get_usage_sums_tokens_and_exact_caller_costs(self) -> None:
        def reply(id: str, parent: str, n: int, amount: str) -> entry_pb2.Entry:
            cost = entry_pb2.Cost(amount=amount, currency="USD")
            usage = entry_pb2.Usage(input_tokens=n, output_tokens=1, cost=cost)
            return assistant_message("ok", usage=usage, model="m", id=id, parent_id=parent)

        self.append(user_message("q", id="u1"), reply("a1", "u1", 10, "0.1"))
        self.append(reply("a2", "u1", 5, "0.2"))  # a branch beside a1
        u = self.c.session.get_usage(workspace=self.ws, session=self.sid)
        self.assertEqual((u.tree.messages, u.tree.input_tokens), (2, 15))
        self.assertEqual([(c.currency, c.amount) for c in u.tree.cost], [("USD", "0.3")])
        self.assertEqual(u.current_path.input_tokens, 5)
        self.assertEqual([(b.leaf_entry_id, b.current) for b in u.branches], [("a2", True), ("a1", False)])
        self.assertEqual(u.branches[1].fork_entry_id, "u1")

    def test_usage_report_sums_a_window_by_model(self) -> None:
        base = 1778061600  # 2026-05-06T10:00:00Z
        usage = entry_pb2.Usage(input_tokens=10, output_tokens=2, reasoning_tokens=1)

        def reply(model: str, at: int) -> entry_pb2.Entry:
            e = assistant_message("ok", usage=usage, model=model)
            e.timestamp.FromSeconds(at)
            return e

        self.append(user_message("q"), reply("m1", base + 60), reply("m2", base + 120), reply("m1", base + 3600))
        r = self.c.store.usage_report(
            workspace=self.ws,
            start=timestamp_pb2.Timestamp(seconds=base),
            end=timestamp_pb2.Timestamp(seconds=base + 3600),
            bucket=store_service_pb2.USAGE_BUCKET_HOUR,
            by_model=True,
        )
        self.assertEqual([(row.model, row.usage.input_tokens) for row in r.rows], [("m1", 10), ("m2", 10)])
        self.assertEqual([row.bucket_start.seconds for row in r.rows], [base, base])
        self.assertEqual((r.total.messages, r.total.reasoning_tokens, r.sessions), (2, 2, 1))
        self.assertEqual(r.total.unpriced_messages, 2)
        with self.assertRaises(SessiondError) as caught:
            self.c.store.usage_report(workspace=self.ws, start=timestamp_pb2.Timestamp(seconds=base))
        self.assertIn("end", str(caught.exception))

    def test_share_read_list_revoke(self) -> None:
        self.append(user_message("q", id="u1"), assistant_message("secret plan", id="a1"))
        share = self.c.store.share_session(
            workspace=self.ws, session=self.sid, entry_id="u1", by="py", omit_tool_output=True
        ).share
        self.assertEqual((len(share.token), share.path), (43, "/share/" + share.token))
        self.assertEqual((share.entry_id, share.by, share.omit_tool_output), ("u1", "py", True))
        snap = self.c.store.read_share(token=share.token)
        self.assertEqual([e.id for e in snap.entries][1:], ["u1"])
        self.assertEqual((snap.share.token, snap.share.session_id), ("", self.sid))
        listed = self.c.store.list_shares(workspace=self.ws, session=self.sid).shares
        self.assertEqual([(s.token, s.revoked) for s in listed], [(share.token[:12], False)])
        self.assertTrue(self.c.store.revoke_share(workspace=self.ws, token=share.token[:12]).share.revoked)
        with self.assertRaises(SessiondError) as caught:
            self.c.store.read_share(token=share.token)
        self.assertEqual(caught.exception.code_name, "NOT_FOUND")
        with self.assertRaises(SessiondError) as caught:
            self.c.store.share_session(workspace=self.ws, session=self.sid, entry_id="nope")
        self.assertIn('"nope"', str(caught.exception))

    def test_redact_entries_keeps_the_tree_and_shows_the_marker(self) -> None:
        self.append(user_message("key sk-live-PYMARKER", id="u1"), assistant_message("ok", id="a1"))
        res = self.c.session.redact_entries(
            workspace=self.ws, session=self.sid, entry_ids=["u1"], why="pasted a key", by="py"
        )
        self.assertEqual([e.id for e in res.entries], ["u1"])
        self.assertEqual(res.entries[0].withheld.by, "py")
        self.assertEqual(res.entries[0].withheld.reason, entry_pb2.WITHHELD_REASON_REDACTED)
        state = self.c.session.get_state(workspace=self.ws, session=self.sid).state
        self.assertEqual(text_of(state), "[redacted]\nok")
        with self.assertRaises(SessiondError) as caught:
            self.c.session.redact_entries(
                workspace=self.ws, session=self.sid, entry_ids=["nope"], why="x"
            )
        self.assertIn('"nope"', str(caught.exception))

    def test_compaction_context_vs_history(self) -> None:
        self.append(user_message("q1", id="u1"), assistant_message("a1", id="a1"))
        self.append(
            entry_pb2.Entry(
                id="c1",
                compaction=entry_pb2.Compaction(summary="they asked", replaces_entry_ids=["u1", "a1"]),
            ),
            user_message("q2", id="u2"),
        )
        ctx = self.c.session.get_state(workspace=self.ws, session=self.sid).state
        self.assertEqual(text_of(ctx), "Previous conversation summary:\nthey asked\nq2")
        self.assertEqual(ctx.view, session_pb2.VIEW_CONTEXT)
        hist = self.c.session.get_state(
            workspace=self.ws, session=self.sid, view=session_pb2.VIEW_HISTORY
        ).state
        self.assertEqual(text_of(hist), "q1\na1\nq2")

    def test_watch_entries_raw_stream(self) -> None:
        self.append(user_message("one"), user_message("two"))
        with self.c.session.watch_entries(workspace=self.ws, session=self.sid, after_seq=1) as stream:
            seqs = []
            for ev in stream:
                if ev.WhichOneof("event") == "entry":
                    seqs.append(ev.entry.seq)
                    if ev.entry.seq == 3:
                        break
        self.assertEqual(seqs, [2, 3])

    def test_resumable_watch_from_after_seq_then_live(self) -> None:
        self.append(user_message("one"), user_message("two"))
        seen: List[int] = []
        with self.c.watch_entries(self.sid, after_seq=2, workspace=self.ws) as w:
            for ev in w:
                if ev.WhichOneof("event") != "entry":
                    continue
                seen.append(ev.entry.seq)
                if ev.entry.seq == 3:
                    self.append(user_message("live"))
                if ev.entry.seq == 4:
                    break
        self.assertEqual(seen, [3, 4])
        self.assertEqual(w.last_seq, 4)
        self.assertEqual(w.reconnects, 0)

    def test_watch_closed_from_another_thread_ends_quietly(self) -> None:
        w = self.c.watch_entries(self.sid, workspace=self.ws)
        out: List[object] = []

        def run() -> None:
            try:
                out.extend(ev.entry.seq for ev in w if ev.WhichOneof("event") == "entry")
                out.append("end")
            except BaseException as e:  # noqa: BLE001 - reported below
                out.append(e)

        t = threading.Thread(target=run, daemon=True)
        t.start()
        time.sleep(0.5)
        w.close()
        t.join(5)
        self.assertFalse(t.is_alive())
        self.assertEqual(out, [1, "end"])
        self.assertEqual(w.reconnects, 0)

    def test_watch_ends_with_not_found_when_the_session_is_deleted(self) -> None:
        w = self.c.watch_entries(self.sid, workspace=self.ws)
        self.assertEqual(next(w).entry.seq, 1)
        self.c.store.delete_session(workspace=self.ws, session=self.sid)
        with self.assertRaises(SessiondError) as cm:
            for _ in w:
                pass
        self.assertEqual(cm.exception.code_name, "NOT_FOUND")
        self.assertIn(self.sid, cm.exception.message)


if __name__ == "__main__":
    unittest.main()
