"""Parts of the client that need no server: ids, builders, text, backoff, addresses."""

from __future__ import annotations

import re
import unittest
from datetime import datetime, timezone

import grpc

import sessiond
from sessiond import (
    RetryPolicy,
    SessiondClient,
    SessiondError,
    assistant_message,
    new_entry_id,
    new_session_id,
    text_of,
    tool_call,
    tool_result,
    user_message,
)
from sessiond.client import _fill_ids
from sessiond.v1 import entry_pb2, session_pb2, session_service_pb2, store_service_pb2


class IdsTest(unittest.TestCase):
    def test_entry_id_is_16_lowercase_hex(self) -> None:
        ids = {new_entry_id() for _ in range(200)}
        self.assertEqual(len(ids), 200)
        for i in ids:
            self.assertRegex(i, r"^[0-9a-f]{16}$")

    def test_session_id_is_utc_time_then_8_hex(self) -> None:
        t = datetime(2026, 3, 4, 5, 6, 7, tzinfo=timezone.utc)
        self.assertRegex(new_session_id(t), r"^20260304-050607-[0-9a-f]{8}$")
        self.assertRegex(new_session_id(), r"^\d{8}-\d{6}-[0-9a-f]{8}$")

    def test_fill_ids_sets_only_what_is_missing_and_is_stable(self) -> None:
        req = session_service_pb2.AppendRequest(
            entries=[user_message("a"), user_message("b", id="mine")]
        )
        _fill_ids("Append", req)
        first = [e.id for e in req.entries]
        self.assertRegex(first[0], r"^[0-9a-f]{16}$")
        self.assertEqual(first[1], "mine")
        _fill_ids("Append", req)  # a retry sends the same ids
        self.assertEqual([e.id for e in req.entries], first)
        for method, cls in (
            ("Rewind", session_service_pb2.RewindRequest),
            ("Reset", session_service_pb2.ResetRequest),
        ):
            r = cls()
            _fill_ids(method, r)
            self.assertRegex(r.entry_id, r"^[0-9a-f]{16}$")
            kept = cls(entry_id="keep")
            _fill_ids(method, kept)
            self.assertEqual(kept.entry_id, "keep")
        for method, cls in (
            ("CreateSession", store_service_pb2.CreateSessionRequest),
            ("ForkSession", store_service_pb2.ForkSessionRequest),
        ):
            r = cls()
            _fill_ids(method, r)
            self.assertRegex(r.session_id, r"^\d{8}-\d{6}-[0-9a-f]{8}$")


class BuildersTest(unittest.TestCase):
    def test_user_message(self) -> None:
        e = user_message("hi", id="u1", parent_id="p")
        self.assertEqual(e.id, "u1")
        self.assertEqual(e.parent_id, "p")
        self.assertEqual(e.message.role, entry_pb2.ROLE_USER)
        self.assertEqual([p.text for p in e.message.content], ["hi"])
        self.assertFalse(user_message("x").HasField("parent_id"))

    def test_assistant_message_with_thinking_and_tool_calls(self) -> None:
        call = tool_call("search", {"q": "sessiond", "n": 3, "tags": ["a", None]}, id="c1")
        e = assistant_message(
            "looking", tool_calls=[call], thinking="hmm", model="m", provider="p", stop_reason="tool_use"
        )
        m = e.message
        self.assertEqual(m.role, entry_pb2.ROLE_ASSISTANT)
        self.assertEqual([p.WhichOneof("part") for p in m.content], ["thinking", "text", "tool_call"])
        tc = m.content[2].tool_call
        self.assertEqual((tc.id, tc.name), ("c1", "search"))
        args = tc.arguments.struct_value
        self.assertEqual(args["q"], "sessiond")
        self.assertEqual(args["n"], 3)
        self.assertEqual(list(args["tags"]), ["a", None])
        self.assertEqual((m.model, m.provider, m.stop_reason), ("m", "p", "tool_use"))
        self.assertEqual(
            [p.WhichOneof("part") for p in assistant_message(tool_calls=[call]).message.content],
            ["tool_call"],
        )
        self.assertRegex(tool_call("t").id, r"^call_[0-9a-f]{16}$")

    def test_tool_result(self) -> None:
        e = tool_result("c1", "42", tool_name="calc", is_error=True)
        m = e.message
        self.assertEqual(m.role, entry_pb2.ROLE_TOOL)
        self.assertEqual((m.tool_call_id, m.tool_name, m.is_error), ("c1", "calc", True))
        self.assertEqual(text_of(e), "42")

    def test_text_of(self) -> None:
        state = session_pb2.SessionState(
            messages=[
                session_pb2.StateMessage(entry_id="u", message=user_message("q").message),
                session_pb2.StateMessage(
                    entry_id="a", message=assistant_message(tool_calls=[tool_call("t")]).message
                ),
                session_pb2.StateMessage(entry_id="b", message=assistant_message("a1", thinking="x").message),
            ]
        )
        self.assertEqual(text_of(state), "q\na1")
        self.assertEqual(text_of(session_service_pb2.GetStateResponse(state=state), sep=" | "), "q | a1")
        self.assertEqual(text_of(state.messages[2]), "a1")
        self.assertEqual(text_of(entry_pb2.Entry(label=entry_pb2.Label(label="l"))), "")
        two = entry_pb2.Message(content=[entry_pb2.ContentPart(text="a"), entry_pb2.ContentPart(text="b")])
        self.assertEqual(text_of(two), "ab")


class RetryPolicyTest(unittest.TestCase):
    def test_backoff_doubles_with_jitter_up_to_the_cap(self) -> None:
        p = RetryPolicy()
        for attempt, full in ((1, 0.05), (2, 0.1), (3, 0.2), (7, 2.0), (20, 2.0)):
            for _ in range(50):
                d = p.delay(attempt)
                self.assertGreaterEqual(d, full / 2)
                self.assertLessEqual(d, full)


class ClientShapeTest(unittest.TestCase):
    def test_every_rpc_of_both_services_is_a_method(self) -> None:
        def snake(name: str) -> str:
            return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()

        with SessiondClient("127.0.0.1:1") as c:
            for service, wrapper in (
                (store_service_pb2.DESCRIPTOR.services_by_name["StoreService"], c.store),
                (session_service_pb2.DESCRIPTOR.services_by_name["SessionService"], c.session),
            ):
                for m in service.methods:
                    self.assertTrue(callable(getattr(wrapper, snake(m.name), None)), m.name)

    def test_targets(self) -> None:
        self.assertEqual(SessiondClient("http://127.0.0.1:5/").target, "127.0.0.1:5")
        self.assertEqual(SessiondClient("127.0.0.1:5").target, "127.0.0.1:5")
        with self.assertRaises(ValueError):
            SessiondClient("http://127.0.0.1:5", tls=True)

    def test_refused_connection_is_unavailable_after_the_retries(self) -> None:
        with SessiondClient("127.0.0.1:1", retry=RetryPolicy(max_attempts=3, base_delay=0.01)) as c:
            with self.assertRaises(SessiondError) as cm:
                c.store.list_sessions()
        self.assertEqual(cm.exception.code, grpc.StatusCode.UNAVAILABLE)
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")

    def test_request_or_fields_not_both(self) -> None:
        with SessiondClient("127.0.0.1:1") as c, self.assertRaises(TypeError):
            c.store.get_session(store_service_pb2.GetSessionRequest(), session="x")

    def test_exports(self) -> None:
        for name in sessiond.__all__:
            self.assertTrue(hasattr(sessiond, name), name)


if __name__ == "__main__":
    unittest.main()
