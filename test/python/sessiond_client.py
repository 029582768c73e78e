#!/usr/bin/env python3
"""A Python client of sessiond with plain grpcio: no gRPC codegen plugin needed.

It exercises every RPC of StoreService and SessionService against a running
server, checks the answers, and prints one JSON summary line at the end. It is
the interop test of test/integration/python.test.ts, and a worked example for
people who want to call sessiond from Python.

Setup (Debian 12; the packages are built for /usr/bin/python3):

    apt-get install -y --no-install-recommends python3-grpcio python3-protobuf protobuf-compiler

Generate the message classes. Debian's protoc does not ship the
google/protobuf/*.proto includes (they are in libprotobuf-dev), so either let
buf (an npm dev dependency, offline, well-known types built in) describe the
protos and give protoc that descriptor set:

    mkdir -p /tmp/sessiond-py
    npx buf build --as-file-descriptor-set -o /tmp/sessiond-py/sessiond.binpb
    protoc --descriptor_set_in=/tmp/sessiond-py/sessiond.binpb --python_out=/tmp/sessiond-py \\
      sessiond/v1/entry.proto sessiond/v1/session.proto \\
      sessiond/v1/store_service.proto sessiond/v1/session_service.proto

or, with libprotobuf-dev installed:

    protoc -I proto -I /usr/include --python_out=/tmp/sessiond-py proto/sessiond/v1/*.proto

Then run it against a server (e.g. `sessiond serve --listen 127.0.0.1:50051`):

    /usr/bin/python3 test/python/sessiond_client.py 127.0.0.1:50051 /tmp/sessiond-py [--token T]

Exit status 0 and a last line like {"ok": true, ...} mean every check passed.
"""

import argparse
import hashlib
import json
import re
import sys
import time
import uuid

# How long any single call may take, seconds.
TIMEOUT = 10.0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target", help="server address, host:port (e.g. 127.0.0.1:50051)")
    p.add_argument("gen_dir", help="directory holding the generated sessiond/v1/*_pb2.py")
    p.add_argument("--token", help="bearer token, when the server requires one")
    p.add_argument("--workspace", help="workspace to use (default: a fresh random one)")
    return p.parse_args()


args = parse_args()
sys.path.insert(0, args.gen_dir)

import grpc  # noqa: E402
from google.protobuf import __version__ as protobuf_version  # noqa: E402
from google.protobuf import struct_pb2, timestamp_pb2  # noqa: E402
from sessiond.v1 import entry_pb2 as E  # noqa: E402
from sessiond.v1 import session_pb2 as S  # noqa: E402
from sessiond.v1 import session_service_pb2 as sess  # noqa: E402
from sessiond.v1 import store_service_pb2 as store  # noqa: E402


class GenericStub:
    """One callable per method of a service, built from the generated descriptor.

    grpcio's channel.unary_unary / unary_stream only need the method path and
    the (de)serializers, which the *_pb2 message classes provide.
    """

    def __init__(self, channel, module, service_name, metadata, called):
        service = module.DESCRIPTOR.services_by_name[service_name]
        for method in service.methods:
            request = getattr(module, method.input_type.name)
            response = getattr(module, method.output_type.name)
            # The two Watch* methods and GetBlob are server-streaming; the rest are unary.
            streaming = method.name.startswith("Watch") or method.name == "GetBlob"
            factory = channel.unary_stream if streaming else channel.unary_unary
            call = factory(
                f"/{service.full_name}/{method.name}",
                request_serializer=request.SerializeToString,
                response_deserializer=response.FromString,
            )
            setattr(self, method.name, self._wrap(call, f"{service_name}/{method.name}", metadata, called))

    @staticmethod
    def _wrap(call, name, metadata, called):
        def invoke(request, timeout=TIMEOUT):
            called.add(name)
            return call(request, timeout=timeout, metadata=metadata)

        return invoke


def text(role, value, entry_id):
    """An Entry holding a one-part text message."""
    return E.Entry(id=entry_id, message=E.Message(role=role, content=[E.ContentPart(text=value)]))


def next_entry(stream):
    """The next Entry of a WatchEntries stream, skipping heartbeats."""
    for event in stream:
        if event.WhichOneof("event") == "entry":
            return event.entry
    raise AssertionError("WatchEntries ended early")


def main():
    metadata = [("authorization", f"Bearer {args.token}")] if args.token else []
    called = set()
    channel = grpc.insecure_channel(args.target)
    grpc.channel_ready_future(channel).result(timeout=TIMEOUT)
    st = GenericStub(channel, store, "StoreService", metadata, called)
    ss = GenericStub(channel, sess, "SessionService", metadata, called)
    ws = args.workspace or f"py-{uuid.uuid4().hex[:12]}"

    # --- WatchSessions: from now on; the first message is a heartbeat with a cursor.
    session_events = st.WatchSessions(store.WatchSessionsRequest(workspace=ws))
    first = next(session_events)
    assert first.type == store.SESSION_EVENT_TYPE_UNSPECIFIED and first.cursor, first

    # --- CreateSession: a generated, time-sortable id; metadata is a Struct.
    meta = struct_pb2.Struct()
    meta.update({"lang": "python", "grpcio": grpc.__version__})
    created = st.CreateSession(store.CreateSessionRequest(workspace=ws, title="python interop", metadata=meta))
    s = created.session
    assert created.created, created
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{8}", s.id), s.id
    assert s.workspace == ws and s.title == "python interop" and s.head_seq == 1, s
    assert s.health == S.HEALTH_OK and s.metadata["lang"] == "python", s
    root_id = s.leaf_id

    # The watch sees the creation.
    for event in session_events:
        if event.type == store.SESSION_EVENT_TYPE_CREATED and event.session_id == s.id:
            assert event.session.title == "python interop", event
            break
    session_events.cancel()

    # --- WatchEntries: start before appending, so the stream replays and then goes live.
    watch = ss.WatchEntries(sess.WatchEntriesRequest(workspace=ws, session=s.id, after_seq=0))
    replayed = next_entry(watch)
    assert replayed.seq == 1 and replayed.WhichOneof("kind") == "session_info", replayed

    # --- Append: client-chosen ids make a retry idempotent.
    args_value = struct_pb2.Value()
    args_value.struct_value.update({"path": "README.md"})
    assistant = E.Entry(
        id="a1",
        message=E.Message(
            role=E.ROLE_ASSISTANT,
            content=[
                E.ContentPart(text="Let me read it."),
                E.ContentPart(tool_call=E.ToolCall(id="call-1", name="read_file", arguments=args_value)),
            ],
            model="some-model",
            provider="some-provider",
            usage=E.Usage(input_tokens=12, output_tokens=7),
            stop_reason="tool_use",
        ),
    )
    tool = E.Entry(
        id="t1",
        message=E.Message(
            role=E.ROLE_TOOL,
            content=[E.ContentPart(text="# sessiond")],
            tool_call_id="call-1",
            tool_name="read_file",
        ),
    )
    batch = [
        E.Entry(id="m1", model_change=E.ModelChange(model="some-model", provider="some-provider")),
        text(E.ROLE_USER, "What is in the README?", "u1"),
        assistant,
        tool,
        E.Entry(id="l1", label=E.Label(label="checkpoint")),
        text(E.ROLE_ASSISTANT, "It is about sessiond.", "a2"),
    ]
    appended = ss.Append(sess.AppendRequest(workspace=ws, session=s.id, entries=batch, expected_seq=1))
    assert [e.seq for e in appended.entries] == [2, 3, 4, 5, 6, 7], appended
    assert appended.entries[0].parent_id == root_id, appended
    assert appended.leaf_id == "a2" and appended.head_seq == 7 and not appended.deduplicated, appended
    retry = ss.Append(sess.AppendRequest(workspace=ws, session=s.id, entries=batch))
    assert retry.deduplicated and retry.head_seq == 7, retry

    # The watcher replays the batch, then sees one live entry.
    seen = [next_entry(watch).id for _ in batch]
    assert seen == [e.id for e in batch], seen
    ss.Append(sess.AppendRequest(workspace=ws, session=s.id, entries=[text(E.ROLE_USER, "Thanks!", "u2")]))
    live = next_entry(watch)
    assert live.id == "u2" and live.seq == 8 and live.parent_id == "a2", live
    watch.cancel()

    # --- GetSession: by full id and by a unique prefix.
    got = st.GetSession(store.GetSessionRequest(workspace=ws, session=s.id)).session
    assert got.head_seq == 8 and got.leaf_id == "u2" and got.message_count == 5, got
    by_prefix = st.GetSession(store.GetSessionRequest(workspace=ws, session=s.id[:-2])).session
    assert by_prefix.id == s.id, by_prefix

    # --- GetEntries: pages of the raw log.
    page1 = ss.GetEntries(sess.GetEntriesRequest(workspace=ws, session=s.id, after_seq=0, limit=3))
    page2 = ss.GetEntries(sess.GetEntriesRequest(workspace=ws, session=s.id, after_seq=3))
    assert [e.seq for e in page1.entries] == [1, 2, 3] and page1.head_seq == 8, page1
    assert [e.seq for e in page2.entries] == [4, 5, 6, 7, 8], page2
    assert page2.entries[0].message.content[1].tool_call.arguments.struct_value["path"] == "README.md"

    # --- GetState: the fold (CONTEXT view by default).
    state = ss.GetState(sess.GetStateRequest(workspace=ws, session=s.id)).state
    assert [m.entry_id for m in state.messages] == ["u1", "a1", "t1", "a2", "u2"], state
    assert state.model == "some-model" and state.label == "checkpoint", state
    assert state.title == "python interop" and state.leaf_id == "u2" and state.head_seq == 8, state
    # Time travel: the fold at an earlier entry.
    earlier = ss.GetState(sess.GetStateRequest(workspace=ws, session=s.id, at_entry_id="a1", view=S.VIEW_HISTORY))
    assert [m.entry_id for m in earlier.state.messages] == ["u1", "a1"], earlier
    assert earlier.state.current_leaf_id == "u2", earlier

    # --- Rewind to a label, then the next entry grows a new branch.
    rewound = ss.Rewind(sess.RewindRequest(workspace=ws, session=s.id, target="checkpoint"))
    assert rewound.leaf_id == "l1" and rewound.head_seq == 9 and rewound.leaf_entry_id, rewound
    branch = ss.Append(sess.AppendRequest(workspace=ws, session=s.id, entries=[text(E.ROLE_USER, "Other idea", "u3")]))
    assert branch.entries[0].parent_id == "l1" and branch.head_seq == 10, branch

    # --- GetTree: every entry, with the current path marked.
    tree = ss.GetTree(sess.GetTreeRequest(workspace=ws, session=s.id))
    assert [n.seq for n in tree.nodes] == list(range(1, 11)) and tree.leaf_id == "u3", tree
    on_path = {n.id for n in tree.nodes if n.on_current_path}
    assert {"u1", "l1", "u3"} <= on_path and not on_path & {"a2", "u2"}, on_path
    kinds = {n.id: n.kind for n in tree.nodes}
    assert kinds["l1"] == S.ENTRY_KIND_LABEL and kinds["a1"] == S.ENTRY_KIND_MESSAGE, kinds

    # --- Reset: the leaf goes back to the root; history is kept.
    reset = ss.Reset(sess.ResetRequest(workspace=ws, session=s.id))
    assert reset.leaf_id == root_id and reset.head_seq == 11, reset
    empty = ss.GetState(sess.GetStateRequest(workspace=ws, session=s.id)).state
    assert len(empty.messages) == 0 and empty.leaf_id == root_id, empty

    # --- ForkSession at an entry: a new session with the path's entries.
    fork = st.ForkSession(store.ForkSessionRequest(workspace=ws, session=s.id, entry="t1", title="fork")).session
    assert fork.id != s.id and fork.forked_from.session_id == s.id and fork.forked_from.entry_id == "t1", fork
    fork_state = ss.GetState(sess.GetStateRequest(workspace=ws, session=fork.id)).state
    assert [m.entry_id for m in fork_state.messages] == ["u1", "a1", "t1"], fork_state

    # --- ListSessions: both sessions, one per page.
    listed, token = [], ""
    for _ in range(10):
        page = st.ListSessions(
            store.ListSessionsRequest(
                workspace=ws, page_size=1, page_token=token, order=store.SORT_ORDER_OLDEST_FIRST
            )
        )
        listed += [m.id for m in page.sessions]
        token = page.next_page_token
        if not token:
            break
    assert sorted(listed) == sorted([s.id, fork.id]) and len(listed) == 2, listed

    # --- ListSessions with a filter and order by update time: the fork's title only.
    filtered = st.ListSessions(
        store.ListSessionsRequest(
            workspace=ws,
            filter=store.SessionFilter(title_contains=fork.title.upper()),
            sort_by=store.SORT_BY_UPDATED,
        )
    )
    assert [m.id for m in filtered.sessions] == [fork.id], filtered

    # --- ListWorkspaces: this run's workspace among them, with its two sessions.
    counts, token = {}, ""
    for _ in range(1000):
        page = st.ListWorkspaces(store.ListWorkspacesRequest(page_size=100, page_token=token))
        counts.update({w.name: w.session_count for w in page.workspaces})
        token = page.next_page_token
        if not token:
            break
    assert counts.get(ws) == 2, counts.get(ws)

    # --- SearchEntries: the word of one message, case-insensitive, with a snippet.
    found = st.SearchEntries(store.SearchEntriesRequest(workspace=ws, query="ZZZ-NO-SUCH-WORD"))
    assert len(found.hits) == 0 and not found.next_page_token, found
    word = "readme"  # u1 is "What is in the README?", copied into the fork
    found = st.SearchEntries(store.SearchEntriesRequest(workspace=ws, query=word.upper()))
    hits = [(h.session_id, h.entry_id) for h in found.hits]
    assert (s.id, "u1") in hits and (fork.id, "u1") in hits, found
    assert all(word.lower() in h.snippet.lower() for h in found.hits), found

    # --- PutBlob in two chunks, an Append naming the blob, GetBlob reading it back.
    payload = ("a large tool output " * 6000).encode()  # 120 KB
    digest = hashlib.sha256(payload).hexdigest()
    half = len(payload) // 2
    put = st.PutBlob(store.PutBlobRequest(workspace=ws, sha256=digest, size=len(payload), offset=0, data=payload[:half]))
    assert put.received == half and not put.stored, put
    put = st.PutBlob(store.PutBlobRequest(workspace=ws, sha256=digest, size=len(payload), offset=half, data=payload[half:]))
    assert put.received == len(payload) and put.stored, put
    holder = st.CreateSession(store.CreateSessionRequest(workspace=ws, title="blob holder")).session
    ref = E.BlobRef(sha256=digest, size=len(payload), part=E.BLOB_PART_TEXT)
    ss.Append(sess.AppendRequest(workspace=ws, session=holder.id, entries=[
        E.Entry(id="big", message=E.Message(role=E.ROLE_USER, content=[E.ContentPart(blob=ref)]))
    ]))
    stored = list(ss.GetEntries(sess.GetEntriesRequest(workspace=ws, session=holder.id)).entries)[-1]
    stored_ref = stored.message.content[0].blob
    assert stored_ref.sha256 == digest and stored_ref.preview == payload.decode()[:200], stored_ref
    got = b"".join(c.data for c in st.GetBlob(store.GetBlobRequest(workspace=ws, sha256=digest)))
    assert got == payload, len(got)
    st.DeleteSession(store.DeleteSessionRequest(workspace=ws, session=holder.id))

    # --- ImportSession: the fork's log under another id, exactly; again: unchanged.
    log = list(ss.GetEntries(sess.GetEntriesRequest(workspace=ws, session=fork.id)).entries)
    req = store.ImportSessionRequest(workspace=ws, session_id=fork.id + "-copy", entries=log)
    imported = st.ImportSession(req)
    assert imported.created and imported.session.id == fork.id + "-copy", imported
    copy = list(ss.GetEntries(sess.GetEntriesRequest(workspace=ws, session=fork.id + "-copy")).entries)
    assert [(e.id, e.seq, e.timestamp) for e in copy] == [(e.id, e.seq, e.timestamp) for e in log], copy
    assert not st.ImportSession(req).created
    st.DeleteSession(store.DeleteSessionRequest(workspace=ws, session=fork.id + "-copy"))

    # --- RedactEntries: the fork's first message keeps its place, loses its text.
    redacted = ss.RedactEntries(
        sess.RedactEntriesRequest(workspace=ws, session=fork.id, entry_ids=["u1"], why="interop", by="py")
    )
    marker = redacted.entries[0].withheld
    assert redacted.entries[0].id == "u1" and marker.reason == E.WITHHELD_REASON_REDACTED, redacted
    assert marker.by == "py" and marker.why == "interop", marker
    after = ss.GetState(sess.GetStateRequest(workspace=ws, session=fork.id)).state
    assert [m.entry_id for m in after.messages] == ["u1", "a1", "t1"], after
    assert after.messages[0].message.content[0].text == "[redacted]", after.messages[0]

    # --- EraseSessions: the fork's content is gone for good, its tree kept (every engine).
    erase_req = store.EraseSessionsRequest(workspace=ws, session_ids=[fork.id], by="py", why="interop")
    erased = st.EraseSessions(erase_req)
    assert list(erased.session_ids) == [fork.id], erased
    gone = list(ss.GetEntries(sess.GetEntriesRequest(workspace=ws, session=fork.id)).entries)
    assert [e.id for e in gone][1:] == ["m1", "u1", "a1", "t1"], [e.id for e in gone]
    a1 = next(e for e in gone if e.id == "a1")
    assert a1.withheld.reason == E.WITHHELD_REASON_ERASED, a1
    # Only the tool calls' ids and names are kept (their pairing with results), no text, no arguments.
    assert [(p.WhichOneof("part"), p.tool_call.HasField("arguments")) for p in a1.message.content] == [
        ("tool_call", False)
    ], a1

    # --- GetUsage: the whole tree counts a1's tokens; no price for its model, so it is unpriced.
    usage = ss.GetUsage(sess.GetUsageRequest(workspace=ws, session=s.id))
    assert usage.session_id == s.id and usage.tree.messages == 1, usage
    assert (usage.tree.input_tokens, usage.tree.output_tokens) == (12, 7), usage.tree
    assert usage.tree.unpriced_messages == 1 and len(usage.tree.cost) == 0, usage.tree
    assert usage.branches[0].current and usage.total.input_tokens == 12, usage

    # --- UsageReport: the workspace's day around now, by model; a1's usage (12 in, 7 out) is in it.
    now_s = int(time.time())
    usage_req = store.UsageReportRequest(
        workspace=ws,
        start=timestamp_pb2.Timestamp(seconds=now_s - 86400),
        end=timestamp_pb2.Timestamp(seconds=now_s + 86400),
        bucket=store.USAGE_BUCKET_DAY,
        by_model=True,
    )
    usage = st.UsageReport(usage_req)
    models = {row.model for row in usage.rows}
    assert "some-model" in models and usage.sessions >= 1, usage
    assert usage.total.input_tokens >= 12 and usage.total.input_tokens % 12 == 0, usage.total
    assert usage.total.output_tokens == usage.total.input_tokens // 12 * 7, usage.total
    assert usage.total.unpriced_messages == usage.total.messages, usage.total
    try:
        st.UsageReport(store.UsageReportRequest(workspace=ws, start=usage_req.end, end=usage_req.start))
        raise AssertionError("UsageReport with end before start succeeded")
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT and "end" in err.details(), err.details()

    # --- Share links: a link to the path up to a1, read by its token alone, listed by its id
    # (the token's first 12 characters), revoked: then NOT_FOUND.
    share_req = store.ShareSessionRequest(workspace=ws, session=s.id, entry_id="a1", by="py", omit_thinking=True)
    shared = st.ShareSession(share_req).share
    assert len(shared.token) == 43 and shared.path == "/share/" + shared.token, shared
    assert shared.entry_id == "a1" and shared.omit_thinking and not shared.revoked, shared
    snap = st.ReadShare(store.ReadShareRequest(token=shared.token))
    assert [e.id for e in snap.entries][-1] == "a1" and snap.entries[0].HasField("session_info"), snap
    assert snap.share.token == "" and snap.share.session_id == s.id and not snap.next_page_token, snap
    listed = st.ListShares(store.ListSharesRequest(workspace=ws, session=s.id)).shares
    assert [x.token for x in listed] == [shared.token[:12]] and not listed[0].revoked, listed
    revoked = st.RevokeShare(store.RevokeShareRequest(workspace=ws, token=shared.token)).share
    assert revoked.revoked and revoked.token == shared.token[:12], revoked
    try:
        st.ReadShare(store.ReadShareRequest(token=shared.token))
        raise AssertionError("ReadShare of a revoked share succeeded")
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.NOT_FOUND and s.id not in err.details(), err

    # --- DeleteSession, then the session is NOT_FOUND.
    deleted = st.DeleteSession(store.DeleteSessionRequest(workspace=ws, session=fork.id))
    assert list(deleted.deleted_session_ids) == [fork.id], deleted
    try:
        st.GetSession(store.GetSessionRequest(workspace=ws, session=fork.id))
        raise AssertionError("GetSession of a deleted session succeeded")
    except grpc.RpcError as err:
        assert err.code() == grpc.StatusCode.NOT_FOUND, err
        not_found = err.code().name
        assert fork.id in err.details() and "Traceback" not in err.details(), err.details()

    st.DeleteSession(store.DeleteSessionRequest(workspace=ws, session=s.id))
    channel.close()

    expected = {f"StoreService/{m.name}" for m in store.DESCRIPTOR.services_by_name["StoreService"].methods}
    expected |= {f"SessionService/{m.name}" for m in sess.DESCRIPTOR.services_by_name["SessionService"].methods}
    assert called == expected, sorted(expected - called)
    summary = {
        "ok": True,
        "rpcs": sorted(called),
        "workspace": ws,
        "entries": int(reset.head_seq),
        "not_found": not_found,
        "grpcio": grpc.__version__,
        "protobuf": protobuf_version,
        "python": sys.version.split()[0],
    }
    print(json.dumps(summary))


if __name__ == "__main__":
    main()
