"""Large content parts as blobs (``BlobRef`` in the proto), the rules without any I/O.

The server keeps a text, thinking or image part over its blob threshold
(64 KiB by default) once per workspace and answers GetState, GetEntries and
WatchEntries with a ``BlobRef`` in its place; GetBlob streams the bytes
back, PutBlob uploads them in chunks. Both clients make that invisible, as
the TypeScript client does (``src/client/blob-transport.ts``):

- resolving: every ``ContentPart.blob`` of an answer (``blob_parts``) is
  replaced by the part it stands for (``resolved_part``), from the blob's
  bytes, read whole (``BlobAssembly`` checks every chunk and the size) and
  kept in a small LRU cache (``BlobCache``) shared by the client's calls;
- uploading: text, thinking and image parts of an Append or ImportSession
  over a threshold (256 KiB by default) may be uploaded first and sent as
  references (``with_references``, a copy of the request: the caller's
  messages are never changed), but only when the request needs it: while
  such parts add up to more than half of the largest request the client
  sends (``max_request_bytes``: 4 MiB unless the channel options say
  otherwise), the largest are uploaded, one at a time, until the rest fit
  in that half; the rest go inline and the server stores them as blobs
  itself (``uploads_in``; the chunk loop's decision is
  ``next_upload_offset``). One call instead of two: a 1 MiB image appended
  inline took 8 ms p50, uploaded first 12 ms (measured for the TypeScript
  client, which has the same rule).

``SessiondClient`` (``client.py``) and ``AsyncSessiondClient``
(``async_client.py``) use these and only add the calls, blocking or awaited.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any, List, Literal, Optional, Sequence, Tuple, TypeVar, Union

import grpc

from .errors import SessiondError
from .v1 import entry_pb2, session_service_pb2, store_service_pb2
from .v1.entry_pb2 import BlobRef, ContentPart, Entry

__all__ = [
    "BLOB_MODES",
    "DEFAULT_BLOB_CACHE_BYTES",
    "DEFAULT_MAX_REQUEST_BYTES",
    "DEFAULT_UPLOAD_PARTS_OVER_BYTES",
    "TEXT_MEDIA_TYPE",
    "UPLOAD_CHUNK_BYTES",
    "UPLOAD_MOVES",
    "BlobAssembly",
    "BlobCache",
    "BlobContent",
    "BlobMode",
    "BlobSettings",
    "Upload",
    "ask_upload_held",
    "blob_content_of",
    "blob_parts",
    "blob_ref_part",
    "max_request_bytes",
    "next_upload_offset",
    "resolved_part",
    "sha256_hex",
    "uploads_in",
    "with_references",
]

#: "resolve": answers carry the parts themselves; "refs": the references, as the server sent them.
BlobMode = Literal["resolve", "refs"]
BLOB_MODES = ("resolve", "refs")

#: Parts of an Append / ImportSession over this many bytes may be uploaded first (see ``uploads_in``).
DEFAULT_UPLOAD_PARTS_OVER_BYTES = 256 * 1024
#: The largest request a client sends when its channel options set no
#: ``grpc.max_send_message_length`` (the server's default limit).
DEFAULT_MAX_REQUEST_BYTES = 4 * 1024 * 1024
#: Bytes of blobs a client keeps for the next answer that names them.
DEFAULT_BLOB_CACHE_BYTES = 64 * 1024 * 1024
#: Bytes per PutBlob call (GetBlob answers come in chunks of the same size).
UPLOAD_CHUNK_BYTES = 1024 * 1024
#: ``media_type`` of the blob of a text or thinking part.
TEXT_MEDIA_TYPE = "text/plain; charset=utf-8"

#: Messages whose content parts may be references.
Answer = Union[
    session_service_pb2.GetStateResponse,
    session_service_pb2.GetEntriesResponse,
    session_service_pb2.WatchEntriesResponse,
]
UploadRequest = TypeVar(
    "UploadRequest", session_service_pb2.AppendRequest, store_service_pb2.ImportSessionRequest
)


class BlobCache:
    """Recently read blobs, by workspace and hash, at most ``max_bytes`` in all; least recently used out first.

    Thread-safe: the sync client's watches run on threads of their own.
    A blob larger than the whole cache is not kept.
    """

    def __init__(self, max_bytes: int = DEFAULT_BLOB_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._map: "OrderedDict[str, bytes]" = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    @staticmethod
    def key(workspace: str, sha256: str) -> str:
        return f"{workspace or 'default'}/{sha256}"

    def get(self, workspace: str, sha256: str) -> Optional[bytes]:
        k = self.key(workspace, sha256)
        with self._lock:
            data = self._map.get(k)
            if data is not None:
                self._map.move_to_end(k)
            return data

    def put(self, workspace: str, sha256: str, data: bytes) -> None:
        k = self.key(workspace, sha256)
        with self._lock:
            if len(data) > self.max_bytes or k in self._map:
                return
            self._map[k] = data
            self._bytes += len(data)
            while self._bytes > self.max_bytes:
                _, old = self._map.popitem(last=False)
                self._bytes -= len(old)

    @property
    def size(self) -> int:
        """Bytes held."""
        with self._lock:
            return self._bytes

    def __len__(self) -> int:
        with self._lock:
            return len(self._map)


@dataclass(frozen=True)
class BlobSettings:
    """A client's blob options (its constructor's ``blobs``, ``upload_parts_over_bytes``, ``blob_cache_bytes``).

    ``max_request_bytes`` comes from the channel options (``max_request_bytes()``).
    """

    #: Whether answers are resolved ("resolve") or keep their references ("refs").
    mode: BlobMode = "resolve"
    #: Parts over this many bytes may be uploaded before an Append / ImportSession; 0: never.
    upload_over: int = DEFAULT_UPLOAD_PARTS_OVER_BYTES
    #: Size of the client's cache of blobs read.
    cache_bytes: int = DEFAULT_BLOB_CACHE_BYTES
    #: The largest request the client sends: parts over ``upload_over`` fill half of it at most.
    max_request_bytes: int = DEFAULT_MAX_REQUEST_BYTES

    def __post_init__(self) -> None:
        if self.mode not in BLOB_MODES:
            raise ValueError(f'blobs must be "resolve" or "refs", not {self.mode!r}')
        if self.upload_over < 0:
            raise ValueError("upload_parts_over_bytes must be 0 (never) or more")
        if self.cache_bytes < 0:
            raise ValueError("blob_cache_bytes must be 0 (no cache) or more")
        if self.max_request_bytes <= 0:
            raise ValueError("max_request_bytes must be more than 0")

    @property
    def resolve(self) -> bool:
        return self.mode == "resolve"

    @property
    def inline_budget(self) -> int:
        """Bytes of parts over ``upload_over`` that a request carries inline at most: half the largest request."""
        return self.max_request_bytes // 2


def max_request_bytes(options: Sequence[Tuple[str, Any]]) -> int:
    """The largest request a channel with these options sends: its ``grpc.max_send_message_length``.

    ``DEFAULT_MAX_REQUEST_BYTES`` (4 MiB) when the options set none, or a
    value that is not a positive size (grpc's -1: no limit). The last value
    of the key counts, as in ``channel_settings``.
    """
    found: Any = None
    for key, value in options:
        if key == "grpc.max_send_message_length":
            found = value
    if isinstance(found, int) and not isinstance(found, bool) and found > 0:
        return found
    return DEFAULT_MAX_REQUEST_BYTES


def sha256_hex(data: bytes) -> str:
    """A blob's name: the SHA-256 of its content, 64 lower-case hex digits."""
    return hashlib.sha256(data).hexdigest()


# --- resolving -------------------------------------------------------------


def blob_parts(answer: Answer) -> List[ContentPart]:
    """The content parts of an answer that are references (the objects inside it, to replace in place).

    GetState: the parts of every message of the state; GetEntries: of every
    message entry; WatchEntries: of the event's entry. Nothing else of
    these answers holds content parts.
    """
    found: List[ContentPart] = []

    def add(entry_parts: Sequence[ContentPart]) -> None:
        found.extend(p for p in entry_parts if p.WhichOneof("part") == "blob")

    if isinstance(answer, session_service_pb2.GetStateResponse):
        for m in answer.state.messages:
            add(m.message.content)
    elif isinstance(answer, session_service_pb2.GetEntriesResponse):
        for e in answer.entries:
            if e.WhichOneof("kind") == "message":
                add(e.message.content)
    elif answer.WhichOneof("event") == "entry" and answer.entry.WhichOneof("kind") == "message":
        add(answer.entry.message.content)
    return found


def resolved_part(ref: BlobRef, data: bytes) -> ContentPart:
    """The part a reference stands for, from the blob's bytes: the part that was appended, field for field.

    TEXT: a text part of the bytes as UTF-8; THINKING: a thinking part of
    them, with the reference's signature (when it has one); IMAGE: an image
    part of the bytes with ``media_type`` as its mime type. Bytes that are
    not UTF-8 for a text, or a part this client does not know, are
    ``SessiondError`` DATA_LOSS (the store never makes such a reference).
    """
    if ref.part == entry_pb2.BLOB_PART_TEXT:
        return ContentPart(text=_utf8(ref, data))
    if ref.part == entry_pb2.BLOB_PART_THINKING:
        thinking = entry_pb2.ThinkingPart(thinking=_utf8(ref, data))
        if ref.HasField("signature"):
            thinking.signature = ref.signature
        return ContentPart(thinking=thinking)
    if ref.part == entry_pb2.BLOB_PART_IMAGE:
        return ContentPart(image=entry_pb2.ImagePart(mime_type=ref.media_type, data=data))
    raise SessiondError(
        grpc.StatusCode.DATA_LOSS,
        f"blob reference {ref.sha256} names no part this client knows (part {ref.part})",
    )


def _utf8(ref: BlobRef, data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise SessiondError(
            grpc.StatusCode.DATA_LOSS, f"blob {ref.sha256}: the text is not UTF-8 ({err.reason})"
        ) from None


class BlobAssembly:
    """The bytes of one GetBlob call, put together from its chunks and checked.

    ``offset`` / ``length`` are those of the request (``length`` 0: to the
    end); ``expected_size``, when given, is the whole blob's size that a
    reference promises. Every chunk must lie inside the range asked for and
    agree on the blob's size; ``result()`` checks that the range is
    complete. A mismatch is ``SessiondError`` DATA_LOSS naming the blob.
    """

    def __init__(
        self, sha256: str, offset: int = 0, length: int = 0, expected_size: Optional[int] = None
    ) -> None:
        self.sha256 = sha256
        self.offset = offset
        self.length = length
        self.expected_size = expected_size
        self._buf: Optional[bytearray] = None
        self._size = 0
        self._got = 0

    def _fail(self, what: str) -> SessiondError:
        return SessiondError(grpc.StatusCode.DATA_LOSS, f"blob {self.sha256}: {what}")

    def add(self, chunk: store_service_pb2.GetBlobResponse) -> None:
        if self._buf is None:
            if self.expected_size is not None and chunk.size != self.expected_size:
                raise self._fail(f"the server has {chunk.size} bytes, the reference says {self.expected_size}")
            end = chunk.size if self.length == 0 else min(chunk.size, self.offset + self.length)
            self._buf = bytearray(max(0, end - self.offset))
            self._size = chunk.size
        elif chunk.size != self._size:
            raise self._fail(f"a chunk says the blob has {chunk.size} bytes, an earlier one {self._size}")
        at = chunk.offset - self.offset
        if at < 0 or at + len(chunk.data) > len(self._buf):
            raise self._fail(
                f"a chunk of {len(chunk.data)} bytes at {chunk.offset} is outside the range read"
            )
        self._buf[at : at + len(chunk.data)] = chunk.data
        self._got += len(chunk.data)

    def result(self) -> bytes:
        if self._buf is None:
            # No chunk at all: only an empty blob (or range) reads like that.
            if self.expected_size:
                raise self._fail(f"read no bytes, the reference says {self.expected_size}")
            return b""
        if self._got != len(self._buf):
            said = f" (the reference says {self.expected_size})" if self.expected_size is not None else ""
            raise self._fail(f"read {self._got} bytes of {len(self._buf)}{said}")
        return bytes(self._buf)


# --- uploading -------------------------------------------------------------


@dataclass(frozen=True)
class BlobContent:
    """What of a content part becomes a blob: its bytes, and what its reference must keep."""

    part: "entry_pb2.BlobPart.ValueType"
    data: bytes
    media_type: str
    signature: Optional[str] = None

    @property
    def sha256(self) -> str:
        return sha256_hex(self.data)


def blob_content_of(part: ContentPart, threshold_bytes: int) -> Optional[BlobContent]:
    """The big content of a part (text, thinking, image data) when it is over ``threshold_bytes``.

    None for a smaller one and for a tool call or a reference. A string of
    n code points takes at most 4n bytes of UTF-8, so the common small text
    is judged without encoding it.
    """
    kind = part.WhichOneof("part")
    if kind == "text":
        return _text_content(entry_pb2.BLOB_PART_TEXT, part.text, threshold_bytes, None)
    if kind == "thinking":
        t = part.thinking
        signature = t.signature if t.HasField("signature") else None
        return _text_content(entry_pb2.BLOB_PART_THINKING, t.thinking, threshold_bytes, signature)
    if kind == "image":
        if len(part.image.data) <= threshold_bytes:
            return None
        return BlobContent(entry_pb2.BLOB_PART_IMAGE, part.image.data, part.image.mime_type)
    return None


def _text_content(
    part: "entry_pb2.BlobPart.ValueType", text: str, threshold_bytes: int, signature: Optional[str]
) -> Optional[BlobContent]:
    if len(text) * 4 <= threshold_bytes:
        return None
    data = text.encode("utf-8")
    if len(data) <= threshold_bytes:
        return None
    return BlobContent(part, data, TEXT_MEDIA_TYPE, signature)


def blob_ref_part(content: BlobContent, sha256: Optional[str] = None) -> ContentPart:
    """A content part that references the blob of ``content`` (the server fills in the preview)."""
    ref = BlobRef(
        sha256=sha256 if sha256 is not None else content.sha256,
        size=len(content.data),
        part=content.part,
        media_type=content.media_type,
    )
    if content.signature is not None:
        ref.signature = content.signature
    return ContentPart(blob=ref)


@dataclass(frozen=True)
class Upload:
    """A part of a request to upload: where it is (entry, part) and its content, with its hash."""

    entry: int
    part: int
    content: BlobContent
    sha256: str


def uploads_in(entries: Sequence[Entry], threshold_bytes: int, inline_budget_bytes: int) -> List[Upload]:
    """The parts of ``entries`` to upload before sending them, largest first (the TS client's rule).

    The candidates are the text, thinking and image parts over
    ``threshold_bytes`` (none when it is 0). While their content (UTF-8 for
    a text or thinking, the bytes of an image) adds up to no more than
    ``inline_budget_bytes``, nothing is uploaded: the request goes as it is
    and the server stores them as blobs itself. Else the largest are taken,
    one at a time, until what is left adds up to no more than the budget;
    the rest stay inline. Only the parts taken are hashed.
    """
    if threshold_bytes <= 0:
        return []
    found: List[Tuple[int, int, BlobContent]] = []
    inline = 0
    for i, e in enumerate(entries):
        if e.WhichOneof("kind") != "message":
            continue
        for j, p in enumerate(e.message.content):
            content = blob_content_of(p, threshold_bytes)
            if content is not None:
                found.append((i, j, content))
                inline += len(content.data)
    if inline <= inline_budget_bytes:
        return []
    found.sort(key=lambda f: len(f[2].data), reverse=True)  # stable: equal sizes in request order
    taken: List[Upload] = []
    for i, j, content in found:
        if inline <= inline_budget_bytes:
            break
        taken.append(Upload(i, j, content, content.sha256))
        inline -= len(content.data)
    return taken


def with_references(request: UploadRequest, uploads: Sequence[Upload]) -> UploadRequest:
    """A copy of ``request`` with each uploaded part replaced by its reference (``request`` itself if none)."""
    if not uploads:
        return request
    copy = type(request)()
    copy.CopyFrom(request)
    for u in uploads:
        copy.entries[u.entry].message.content[u.part].CopyFrom(blob_ref_part(u.content, u.sha256))
    return copy


def next_upload_offset(
    answer: store_service_pb2.PutBlobResponse, offset: int, size: int, asked: bool = False
) -> Optional[int]:
    """Where the upload goes on after a PutBlob answer: None once stored, else the bytes the server holds.

    (Fewer than were sent: the server lost part of an unfinished upload,
    which goes on from there.) An answer that neither stores the blob nor
    takes the chunk, or claims more than ``size``, would make the loop
    endless: INTERNAL. ``asked``: the answer to an empty chunk at 0 (see
    ``ask_upload_held``), which takes nothing and may say 0.
    """
    if answer.stored:
        return None
    if (answer.received == offset and not asked) or answer.received > size:
        raise SessiondError(
            grpc.StatusCode.INTERNAL,
            f"PutBlob: the server holds {answer.received} of {size} bytes after a chunk at {offset}, "
            "and has not stored the blob",
        )
    return answer.received


#: Chunks of one upload refused because the server held more, before the refusal is the caller's.
UPLOAD_MOVES = 8


def ask_upload_held(err: SessiondError, moved: int) -> bool:
    """Whether a refused chunk is followed by asking where the upload stands (an empty chunk at offset 0).

    FAILED_PRECONDITION: the server holds more than the chunk's offset
    because another client uploads the same content (through another
    replica) meanwhile. Up to ``UPLOAD_MOVES`` times an upload.
    """
    return err.code == grpc.StatusCode.FAILED_PRECONDITION and moved < UPLOAD_MOVES
