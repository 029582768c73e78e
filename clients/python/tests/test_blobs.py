"""Large parts as blobs, through both clients against a live server (BlobRef in the proto).

A 5 MiB image, larger than any message the server takes (4 MiB), is
uploaded by the client in chunks (PutBlob) and appended as a reference; a
200 KB text goes inline and the server makes it a blob; a thinking part of
300 KB keeps its signature in its reference. GetState, GetEntries and the
watch give all three back byte for byte. A client with ``blobs="refs"``
sees the references and reads them with ``get_blob``, in ranges too; a
reference to a blob nobody uploaded is FAILED_PRECONDITION naming it.
"""

from __future__ import annotations

import hashlib
import random
import unittest
from typing import Any, List

import grpc
from support import async_client, client, need_server, workspace

from sessiond import SessiondError, assistant_message, text_of
from sessiond.v1 import entry_pb2

MiB = 1024 * 1024
IMAGE = random.Random(1).randbytes(5 * MiB)
TEXT = "ß" * 100_000  # 200 KB of UTF-8: inline (under 256 KiB), stored as a blob by the server
THINKING = "Überlegung " * 30_000  # 360 KB: uploaded by the client
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


class SyncBlobsTest(Checks):
    def setUp(self) -> None:
        self.counter = CountGetBlob()
        self.c = client(interceptors=[self.counter])
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
        self.c = async_client()
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
