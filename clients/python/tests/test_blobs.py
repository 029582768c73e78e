"""Large parts as blobs, through both clients against a live server (BlobRef in the proto).

A 5 MiB image, larger than any message the server takes (4 MiB), is
uploaded by the client in chunks (PutBlob) and appended as a reference; a
200 KB text goes inline and the server makes it a blob; a thinking part of
2.4 MB, more than half of a request by itself, is uploaded by the client
too and keeps its signature in its reference. GetState, GetEntries and the
watch give all three back byte for byte. Parts over 256 KiB go up first
only while they add up to more than half of a request (2 MiB), the largest
first: a 1 MiB image goes in one Append with no PutBlob, and of images of
1.5, 1 and 0.75 MiB in one request only the first is uploaded (the calls
are recorded as sent, by an interceptor). A client with ``blobs="refs"``
sees the references and reads them with ``get_blob``, in ranges too; a
reference to a blob nobody uploaded is FAILED_PRECONDITION naming it.
"""

from __future__ import annotations

import hashlib
import random
import unittest
from typing import Any, List, Tuple

import grpc
import grpc.aio
from support import async_client, client, need_server, workspace

from sessiond import SessiondError, assistant_message, text_of
from sessiond.v1 import entry_pb2

MiB = 1024 * 1024
IMAGE = random.Random(1).randbytes(5 * MiB)
TEXT = "ß" * 100_000  # 200 KB of UTF-8: inline (under 256 KiB), stored as a blob by the server
THINKING = "Überlegung " * 200_000  # 2.4 MB: over half of a 4 MiB request by itself, uploaded by the client
SIGNATURE = "sig-0123"


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def setUpModule() -> None:
    need_server()


def image_entry(data: bytes = IMAGE) -> entry_pb2.Entry:
    return entry_pb2.Entry(
        id="img",
        message=entry_pb2.Message(
            role=entry_pb2.ROLE_USER,
            content=[
                entry_pb2.ContentPart(text="look at this"),
                entry_pb2.ContentPart(image=entry_pb2.ImagePart(mime_type="image/png", data=data)),
            ],
        ),
    )


def answer_entry() -> entry_pb2.Entry:
    e = assistant_message(TEXT, thinking=THINKING, id="a1")
    e.message.content[0].thinking.signature = SIGNATURE
    return e


def unknown_reference() -> entry_pb2.Entry:
    ref = entry_pb2.BlobRef(sha256=sha(b"never uploaded"), size=14, part=entry_pb2.BLOB_PART_TEXT)
    return entry_pb2.Entry(
        id="bad",
        message=entry_pb2.Message(role=entry_pb2.ROLE_USER, content=[entry_pb2.ContentPart(blob=ref)]),
    )


def images_in_one_request(prefix: str, *sizes: int) -> List[entry_pb2.Entry]:
    """Entries of images of these sizes (random bytes), two to an entry: one Append carries them all."""
    rng = random.Random(f"{prefix}{sizes}")
    parts = [
        entry_pb2.ContentPart(image=entry_pb2.ImagePart(mime_type="image/png", data=rng.randbytes(n)))
        for n in sizes
    ]
    return [
        entry_pb2.Entry(
            id=f"{prefix}{i}", message=entry_pb2.Message(role=entry_pb2.ROLE_USER, content=parts[i : i + 2])
        )
        for i in range(0, len(parts), 2)
    ]


def images_of(entries: Any) -> List[bytes]:
    """The images of message entries (or state messages), in order; a reference is a failure."""
    found: List[bytes] = []
    for e in entries:
        for p in e.message.content:
            assert p.WhichOneof("part") == "image", p.WhichOneof("part")
            found.append(p.image.data)
    return found


def method_name(details: Any) -> str:
    method = details.method
    return (method.decode() if isinstance(method, bytes) else str(method)).rsplit("/", 1)[-1]


class RecordUploads(grpc.UnaryUnaryClientInterceptor):
    """The PutBlob and Append calls of a client, in order, with the requests as they were sent."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        if method_name(details) in ("PutBlob", "Append"):
            self.calls.append((method_name(details), request))
        return continuation(details, request)


class AsyncRecordUploads(grpc.aio.UnaryUnaryClientInterceptor):
    """``RecordUploads`` for grpc.aio."""

    def __init__(self) -> None:
        self.calls: List[Tuple[str, Any]] = []

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        if method_name(details) in ("PutBlob", "Append"):
            self.calls.append((method_name(details), request))
        return await continuation(details, request)


class MoveUploadOn(grpc.UnaryUnaryClientInterceptor):
    """Before the client's second PutBlob, another client uploads the first 1.5 MiB of ``data`` in half-MiB chunks."""

    def __init__(self, ws: str, data: bytes) -> None:
        self.ws, self.data = ws, data
        self.puts = 0
        self.answers: List[str] = []

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        if method_name(details) != "PutBlob":
            return continuation(details, request)
        self.puts += 1
        if self.puts == 2:
            with client() as other:
                for at in (0, MiB // 2, MiB):
                    other.store.put_blob(
                        workspace=self.ws, sha256=sha(self.data), size=len(self.data), offset=at,
                        data=self.data[at : at + MiB // 2],
                    )
        call = continuation(details, request)
        code = call.code()
        self.answers.append("ok" if code == grpc.StatusCode.OK else code.name)
        return call


class CountGetBlob(grpc.UnaryStreamClientInterceptor):
    """Counts the GetBlob calls of a client (the cache should spare the second read)."""

    def __init__(self) -> None:
        self.calls = 0

    def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        if str(details.method).endswith("/GetBlob"):
            self.calls += 1
        return continuation(details, request)


class Checks(unittest.TestCase):
    """What both clients must give back, whatever the call."""

    def check_image(self, message: entry_pb2.Message) -> None:
        part = message.content[1]
        self.assertEqual(part.WhichOneof("part"), "image")
        self.assertEqual(part.image.mime_type, "image/png")
        self.assertEqual(sha(part.image.data), sha(IMAGE))
        self.assertTrue(part.image.data == IMAGE)  # (not assertEqual: a diff of 5 MiB)

    def check_answer(self, message: entry_pb2.Message) -> None:
        thinking, text = message.content
        self.assertEqual(thinking.WhichOneof("part"), "thinking")
        self.assertTrue(thinking.thinking.thinking == THINKING)
        self.assertEqual(thinking.thinking.signature, SIGNATURE)
        self.assertEqual(text.WhichOneof("part"), "text")
        self.assertTrue(text.text == TEXT)

    def check_refs(self, state_messages: Any) -> None:
        image_ref = state_messages[0].message.content[1]
        self.assertEqual(image_ref.WhichOneof("part"), "blob")
        ref = image_ref.blob
        self.assertEqual(
            (ref.sha256, ref.size, ref.part, ref.media_type),
            (sha(IMAGE), len(IMAGE), entry_pb2.BLOB_PART_IMAGE, "image/png"),
        )
        thinking_ref, text_ref = (p.blob for p in state_messages[1].message.content)
        self.assertEqual(
            (thinking_ref.sha256, thinking_ref.size, thinking_ref.part, thinking_ref.signature),
            (sha(THINKING.encode()), len(THINKING.encode()), entry_pb2.BLOB_PART_THINKING, SIGNATURE),
        )
        self.assertEqual(
            (text_ref.sha256, text_ref.size, text_ref.part, text_ref.media_type),
            (sha(TEXT.encode()), 200_000, entry_pb2.BLOB_PART_TEXT, "text/plain; charset=utf-8"),
        )
        self.assertEqual(text_ref.preview, "ß" * 200)  # the server's

    #: Images of 1 MiB, 1.5 MiB and 0.75 MiB in one request (3.25 MiB of parts over 256 KiB):
    #: the 1.5 MiB one, the largest, is uploaded; 1.75 MiB left, under 2 MiB: the others go inline.
    THREE = (MiB, 3 * MiB // 2, 3 * MiB // 4)

    def check_one_append(self, calls: List[Tuple[str, Any]], one: List[entry_pb2.Entry]) -> None:
        """A 1 MiB image (under half of 4 MiB): one Append with the image in it, no PutBlob."""
        self.assertEqual([m for m, _ in calls], ["Append"])
        self.assertTrue(images_of(calls[0][1].entries) == images_of(one))

    def check_largest_uploaded(self, calls: List[Tuple[str, Any]], ws: str, three: List[entry_pb2.Entry]) -> None:
        """The 1.5 MiB image went up in two PutBlob chunks, then one Append with it as a reference."""
        small, big, smaller = images_of(three)
        self.assertEqual([m for m, _ in calls], ["PutBlob", "PutBlob", "Append"])
        puts = [r for _, r in calls[:2]]
        self.assertEqual(
            [(p.workspace, p.sha256, p.size, p.offset, len(p.data)) for p in puts],
            [(ws, sha(big), len(big), 0, MiB), (ws, sha(big), len(big), MiB, len(big) - MiB)],
        )
        self.assertTrue(b"".join(p.data for p in puts) == big)
        sent = [p for e in calls[2][1].entries for p in e.message.content]
        self.assertEqual([p.WhichOneof("part") for p in sent], ["image", "blob", "image"])
        ref = sent[1].blob
        self.assertEqual(
            (ref.sha256, ref.size, ref.part, ref.media_type),
            (sha(big), len(big), entry_pb2.BLOB_PART_IMAGE, "image/png"),
        )
        self.assertTrue(sent[0].image.data == small and sent[2].image.data == smaller)

    def check_read_back(self, state: Any, entries: Any, refs_state: Any, appended: List[bytes]) -> None:
        """Every image byte for byte from GetState and GetEntries; the server holds each as a blob."""
        self.assertEqual([len(d) for d in images_of(state.messages)], [len(d) for d in appended])
        self.assertTrue(images_of(state.messages) == appended)
        self.assertTrue(images_of([e for e in entries if e.WhichOneof("kind") == "message"]) == appended)
        refs = [p.blob for m in refs_state.messages for p in m.message.content]
        self.assertEqual([(r.sha256, r.size) for r in refs], [(sha(d), len(d)) for d in appended])


class SyncBlobsTest(Checks):
    def setUp(self) -> None:
        self.counter = CountGetBlob()
        self.uploads = RecordUploads()
        self.c = client(interceptors=[self.counter, self.uploads])
        self.ws = workspace()
        self.sid = self.c.store.create_session(workspace=self.ws).session.id

    def tearDown(self) -> None:
        self.c.close()

    def test_a_5_mib_image_comes_back_the_same_from_state_entries_and_watch(self) -> None:
        img = image_entry()
        self.c.session.append(workspace=self.ws, session=self.sid, entries=[img])
        # The caller's entry is the one it made: the reference went in a copy.
        self.assertEqual(img.message.content[1].WhichOneof("part"), "image")
        self.c.session.append(workspace=self.ws, session=self.sid, entries=[answer_entry()])

        state = self.c.read_state(workspace=self.ws, session=self.sid).state
        self.check_image(state.messages[0].message)
        self.check_answer(state.messages[1].message)
        reads = self.counter.calls
        self.assertEqual(reads, 3)  # one GetBlob per blob
        page = self.c.session.get_state(workspace=self.ws, session=self.sid).state
        self.assertTrue(page.messages[1].message.content[1].text == TEXT)
        self.assertEqual(self.counter.calls, reads)  # from the cache

        entries = {e.id: e for e in self.c.session.get_entries(workspace=self.ws, session=self.sid).entries}
        self.check_image(entries["img"].message)
        self.check_answer(entries["a1"].message)

        seen: List[entry_pb2.Entry] = []
        with self.c.watch_entries(self.sid, workspace=self.ws) as watch:
            for ev in watch:
                if ev.WhichOneof("event") == "entry" and ev.entry.id in ("img", "a1"):
                    seen.append(ev.entry)
                    if ev.entry.id == "a1":
                        break
        self.assertEqual([e.id for e in seen], ["img", "a1"])
        self.check_image(seen[0].message)
        self.check_answer(seen[1].message)

    def test_parts_go_up_first_only_while_over_half_a_request_largest_first(self) -> None:
        one = images_in_one_request("one", MiB)
        self.c.session.append(workspace=self.ws, session=self.sid, entries=one)
        self.check_one_append(self.uploads.calls, one)
        self.uploads.calls.clear()
        three = images_in_one_request("three", *self.THREE)
        self.c.session.append(workspace=self.ws, session=self.sid, entries=three)
        self.check_largest_uploaded(self.uploads.calls, self.ws, three)
        self.assertEqual([p.WhichOneof("part") for e in three for p in e.message.content], ["image"] * 3)

        state = self.c.read_state(workspace=self.ws, session=self.sid).state
        entries = self.c.session.get_entries(workspace=self.ws, session=self.sid).entries
        with client(blobs="refs") as raw:
            refs_state = raw.session.get_state(workspace=self.ws, session=self.sid).state
        self.check_read_back(state, entries, refs_state, images_of(one) + images_of(three))

    def test_refs_keep_the_references_and_get_blob_reads_them_in_ranges(self) -> None:
        self.c.session.append(workspace=self.ws, session=self.sid, entries=[image_entry(), answer_entry()])
        with client(blobs="refs") as raw:
            state = raw.session.get_state(workspace=self.ws, session=self.sid).state
            self.check_refs(state.messages)
            self.assertTrue(raw.get_blob(sha(IMAGE), workspace=self.ws) == IMAGE)
            self.assertEqual(raw.get_blob(sha(IMAGE), self.ws, offset=1000, length=10), IMAGE[1000:1010])
            across = raw.get_blob(sha(IMAGE), self.ws, offset=MiB - 5, length=MiB + 10)
            self.assertTrue(across == IMAGE[MiB - 5 : 2 * MiB + 5])  # three chunks
            self.assertEqual(raw.get_blob(sha(IMAGE), self.ws, offset=len(IMAGE) - 3), IMAGE[-3:])
            chunks = [(c.offset, len(c.data)) for c in raw.store.get_blob(workspace=self.ws, sha256=sha(IMAGE))]
            self.assertEqual(chunks, [(i * MiB, MiB) for i in range(5)])
            self.assertEqual(raw.get_blob(sha(TEXT.encode()), self.ws).decode(), TEXT)

    def test_an_upload_another_client_moves_on_meanwhile_goes_on_from_what_the_server_holds(self) -> None:
        data = random.Random(2).randbytes(7 * MiB // 2)
        mover = MoveUploadOn(self.ws, data)
        with client(interceptors=[mover]) as c:
            self.assertEqual(c.put_blob(data, self.ws), sha(data))
        # chunk 0 taken (1 MiB held); the other client brings it to 1.5 MiB; the chunk at 1 MiB
        # refused; the empty chunk at 0 answers 1.5 MiB; 1.5-2.5 and 2.5-3.5 MiB, stored.
        self.assertEqual(mover.answers, ["ok", "FAILED_PRECONDITION", "ok", "ok", "ok"])
        with client(blobs="refs") as raw:
            self.assertTrue(raw.get_blob(sha(data), workspace=self.ws) == data)

    def test_put_blob_then_a_reference_and_an_unknown_reference_is_refused_naming_it(self) -> None:
        data = ("résumé " * 20_000).encode()
        digest = self.c.put_blob(data, self.ws)
        self.assertEqual(digest, sha(data))
        self.assertEqual(self.c.put_blob(data, self.ws), digest)  # stored once: answered at once
        ref = entry_pb2.BlobRef(sha256=digest, size=len(data), part=entry_pb2.BLOB_PART_TEXT)
        own = entry_pb2.Entry(
            id="own", message=entry_pb2.Message(role=entry_pb2.ROLE_USER, content=[entry_pb2.ContentPart(blob=ref)])
        )
        self.c.session.append(workspace=self.ws, session=self.sid, entries=[own])
        self.assertEqual(text_of(self.c.session.get_state(workspace=self.ws, session=self.sid)), data.decode())

        missing = sha(b"never uploaded")
        with self.assertRaises(SessiondError) as cm:
            self.c.session.append(workspace=self.ws, session=self.sid, entries=[unknown_reference()])
        self.assertEqual(cm.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn(missing, cm.exception.message)
        ids = [e.id for e in self.c.session.get_entries(workspace=self.ws, session=self.sid).entries]
        self.assertNotIn("bad", ids)
        with self.assertRaises(SessiondError) as cm:
            self.c.get_blob(missing, self.ws)
        self.assertEqual(cm.exception.code, grpc.StatusCode.NOT_FOUND)


class AsyncBlobsTest(unittest.IsolatedAsyncioTestCase, Checks):
    async def asyncSetUp(self) -> None:
        self.uploads = AsyncRecordUploads()
        self.c = async_client(interceptors=[self.uploads])
        self.ws = workspace()
        self.sid = (await self.c.store.create_session(workspace=self.ws)).session.id

    async def asyncTearDown(self) -> None:
        await self.c.close()

    async def test_a_5_mib_image_comes_back_the_same_from_state_entries_and_watch(self) -> None:
        img = image_entry()
        await self.c.session.append(workspace=self.ws, session=self.sid, entries=[img, answer_entry()])
        self.assertEqual(img.message.content[1].WhichOneof("part"), "image")

        state = (await self.c.read_state(workspace=self.ws, session=self.sid)).state
        self.check_image(state.messages[0].message)
        self.check_answer(state.messages[1].message)
        entries = {
            e.id: e for e in (await self.c.session.get_entries(workspace=self.ws, session=self.sid)).entries
        }
        self.check_image(entries["img"].message)
        self.check_answer(entries["a1"].message)

        seen: List[entry_pb2.Entry] = []
        async with self.c.watch_entries(self.sid, workspace=self.ws) as watch:
            async for ev in watch:
                if ev.WhichOneof("event") == "entry" and ev.entry.id in ("img", "a1"):
                    seen.append(ev.entry)
                    if ev.entry.id == "a1":
                        break
        self.assertEqual([e.id for e in seen], ["img", "a1"])
        self.check_image(seen[0].message)
        self.check_answer(seen[1].message)

    async def test_parts_go_up_first_only_while_over_half_a_request_largest_first(self) -> None:
        one = images_in_one_request("one", MiB)
        await self.c.session.append(workspace=self.ws, session=self.sid, entries=one)
        self.check_one_append(self.uploads.calls, one)
        self.uploads.calls.clear()
        three = images_in_one_request("three", *self.THREE)
        await self.c.session.append(workspace=self.ws, session=self.sid, entries=three)
        self.check_largest_uploaded(self.uploads.calls, self.ws, three)
        self.assertEqual([p.WhichOneof("part") for e in three for p in e.message.content], ["image"] * 3)

        state = (await self.c.read_state(workspace=self.ws, session=self.sid)).state
        entries = (await self.c.session.get_entries(workspace=self.ws, session=self.sid)).entries
        async with async_client(blobs="refs") as raw:
            refs_state = (await raw.session.get_state(workspace=self.ws, session=self.sid)).state
        self.check_read_back(state, entries, refs_state, images_of(one) + images_of(three))

    async def test_refs_keep_the_references_and_get_blob_reads_them_in_ranges(self) -> None:
        await self.c.session.append(workspace=self.ws, session=self.sid, entries=[image_entry(), answer_entry()])
        async with async_client(blobs="refs") as raw:
            state = (await raw.session.get_state(workspace=self.ws, session=self.sid)).state
            self.check_refs(state.messages)
            self.assertTrue(await raw.get_blob(sha(IMAGE), workspace=self.ws) == IMAGE)
            self.assertEqual(await raw.get_blob(sha(IMAGE), self.ws, offset=1000, length=10), IMAGE[1000:1010])
            across = await raw.get_blob(sha(IMAGE), self.ws, offset=MiB - 5, length=MiB + 10)
            self.assertTrue(across == IMAGE[MiB - 5 : 2 * MiB + 5])
            chunks = [(c.offset, len(c.data)) async for c in raw.store.get_blob(workspace=self.ws, sha256=sha(IMAGE))]
            self.assertEqual(chunks, [(i * MiB, MiB) for i in range(5)])

    async def test_an_unknown_reference_is_refused_naming_it(self) -> None:
        with self.assertRaises(SessiondError) as cm:
            await self.c.session.append(workspace=self.ws, session=self.sid, entries=[unknown_reference()])
        self.assertEqual(cm.exception.code, grpc.StatusCode.FAILED_PRECONDITION)
        self.assertIn(sha(b"never uploaded"), cm.exception.message)
        with self.assertRaises(SessiondError) as cm:
            await self.c.get_blob(sha(b"never uploaded"), self.ws)
        self.assertEqual(cm.exception.code, grpc.StatusCode.NOT_FOUND)
        digest = await self.c.put_blob(b"\x89PNG tiny", self.ws)
        self.assertEqual(await self.c.get_blob(digest, self.ws), b"\x89PNG tiny")


if __name__ == "__main__":
    unittest.main()
