# google-adk is an optional extra (no py.typed): typed as Any when absent or untyped.
# mypy: disable-error-code="import-untyped, import-not-found", allow-subclassing-any
"""The events of a session's current path, newest first, read only as far back as asked.

``get_session`` with ``num_recent_events`` or ``after_timestamp`` should
not read the whole session. The path root -> leaf is a subsequence of the
log in seq order (a parent always has a lower seq), so walking the log
backwards from the leaf in pages of GetEntries, keeping each entry whose id
is the parent we expect next, yields the path newest first; the walk stops
as soon as it has enough events (or one older than ``after_timestamp``).
An unbranched session with N recent events asked costs about one page.
"""

from __future__ import annotations

from typing import List, Optional

from google.adk.events.event import Event

from .adk_codec import decode_entry
from .async_client import AsyncSessiondClient
from .v1.entry_pb2 import Entry

_MIN_PAGE = 64
_MAX_PAGE = 500


async def path_events(
    client: AsyncSessiondClient,
    workspace: str,
    session: str,
    *,
    leaf_id: str,
    head_seq: int,
    num_recent: Optional[int] = None,
    after_timestamp: Optional[float] = None,
) -> List[Event]:
    """The events on the path ending at ``leaf_id`` (seq <= ``head_seq``), oldest first, filtered as ADK's config says."""
    if num_recent == 0:
        return []
    page = _MAX_PAGE if num_recent is None else min(_MAX_PAGE, max(_MIN_PAGE, 2 * num_recent + 8))
    want: Optional[str] = leaf_id
    hi = head_seq
    newest_first: List[Event] = []
    while want and hi > 0:
        lo = max(0, hi - page)
        for entry in reversed(await _range(client, workspace, session, lo, hi)):
            if entry.id != want:
                continue
            want = entry.parent_id if entry.HasField("parent_id") else None
            event = decode_entry(entry)
            if event is None:
                continue
            if after_timestamp is not None and event.timestamp < after_timestamp:
                return newest_first[::-1]
            newest_first.append(event)
            if num_recent is not None and len(newest_first) == num_recent:
                return newest_first[::-1]
        hi = lo
    return newest_first[::-1]


async def _range(
    client: AsyncSessiondClient, workspace: str, session: str, lo: int, hi: int
) -> List[Entry]:
    """Entries with lo < seq <= hi (several GetEntries when the byte budget cuts a page)."""
    out: List[Entry] = []
    after = lo
    while after < hi:
        resp = await client.session.get_entries(
            workspace=workspace, session=session, after_seq=after, limit=hi - after
        )
        if not resp.entries:
            break
        out.extend(e for e in resp.entries if e.seq <= hi)
        after = resp.entries[-1].seq
    return out
