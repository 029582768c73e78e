"""What SessiondSession writes, planned against the session's log as the server has it."""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Set, Tuple

from .openai_agents_items import Item, custom_entry_of, entry_items, item_entry
from .openai_agents_log import SessionLog, planned
from .v1 import entry_pb2
from .v1.entry_pb2 import Entry

__all__ = ["can_answer", "items_on_path", "plan_items"]


def items_on_path(log: SessionLog) -> List[Tuple[Entry, List[Item]]]:
    """The entries on the current path that hold items, root first, with their items."""
    found = [(entry, entry_items(entry)) for entry in log.path()]
    return [(entry, items) for entry, items in found if items]


def _answers(entry: Entry) -> Optional[str]:
    m = entry.message
    if entry.WhichOneof("kind") != "message" or m.role != entry_pb2.ROLE_TOOL:
        return None
    return m.tool_call_id if m.HasField("tool_call_id") else None


def _calls(entry: Entry) -> List[str]:
    if entry.WhichOneof("kind") != "message":
        return []
    return [p.tool_call.id for p in entry.message.content if p.WhichOneof("part") == "tool_call"]


def can_answer(entries: Dict[str, Entry], parent_id: str, call_id: str) -> bool:
    """Whether a TOOL message answering ``call_id`` under ``parent_id`` would be accepted.

    The server's rule asked as a question (an unanswered call of an
    ASSISTANT message on its path, not compacted away): it refuses a whole
    batch when one output breaks it, and the SDK may keep an output whose
    call a ``pop_item`` took off the path.
    """
    compacted: Set[str] = set()
    at: Optional[str] = parent_id
    seen: Set[str] = set()
    while at and at not in seen:
        seen.add(at)
        entry = entries.get(at)
        if entry is None or _answers(entry) == call_id:
            return False
        if entry.WhichOneof("kind") == "compaction":
            compacted.update(entry.compaction.replaces_entry_ids)
        if call_id in _calls(entry):
            return entry.id not in compacted
        at = entry.parent_id if entry.HasField("parent_id") else None
    return False


def plan_items(log: SessionLog, items: Sequence[Item]) -> List[Entry]:
    """One entry per item, chained under the leaf.

    An output whose call is not on the path to answer cannot be a TOOL
    message there: it is kept whole as a Custom entry instead.
    """
    known = dict(log.entries)
    under = log.leaf_id
    batch: List[Entry] = []
    for item in items:
        entry = planned(item_entry(item), under)
        call_id = _answers(entry)
        if call_id is not None and not can_answer(known, under, call_id):
            entry = planned(custom_entry_of(item), under)
        known[entry.id] = entry
        batch.append(entry)
        under = entry.id
    return batch
