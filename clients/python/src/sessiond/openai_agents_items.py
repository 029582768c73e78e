"""How an OpenAI Agents SDK item becomes a typed sessiond entry and back.

The Python SDK's items are Responses API input items (plain JSON dicts).
Messages, function calls and their outputs, and reasoning summaries become
Message entries (USER, ASSISTANT with a tool call or thinking, TOOL), so
that GetState, the CLI and every other client read the conversation; any
other item (system messages, hosted tool calls, computer calls, ...) is a
Custom entry under ``NAMESPACE`` holding the item.

Lossless by construction, as the TypeScript adapter: an item is written as
its typed projection plus a *residual*, the top-level fields in which the
item differs from what the projection reads back as (usually its provider
``id``), kept in the message's metadata under ``NAMESPACE``. Reading applies
the residual, so items come back equal to those added, value types
included: a ``Struct`` holds every number as a double, so JSON that would
not survive that (an integral float, an int beyond 2**53, NaN) is kept as
JSON text instead.
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

from google.protobuf import json_format, struct_pb2

from .messages import json_struct, json_value
from .v1 import entry_pb2
from .v1.entry_pb2 import ContentPart, Entry, Message, ToolCall

__all__ = ["NAMESPACE", "Item", "custom_entry_of", "entry_items", "item_entry", "same_json"]

#: The Custom namespace and the metadata key of this adapter (the TypeScript
#: adapter, whose items have another shape, uses "openai-agents").
NAMESPACE = "openai-agents-python"

#: An item as the SDK gives it (``TResponseInputItem``: a JSON dict).
Item = Dict[str, Any]

_MAX_EXACT_INT = 2**53


def _struct_safe(value: Any) -> bool:
    """Whether ``value`` reads back from a Struct as itself (ints as ints, floats as floats)."""
    if value is None or isinstance(value, (bool, str)):
        return True
    if isinstance(value, int):
        return abs(value) <= _MAX_EXACT_INT
    if isinstance(value, float):
        return math.isfinite(value) and not value.is_integer()
    if isinstance(value, list):
        return all(_struct_safe(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _struct_safe(v) for k, v in value.items())
    return False


def _plain(value: Any) -> Any:
    """JSON read from a Struct, integral doubles as ints (what ``_struct_safe`` wrote as ints)."""
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def _from_struct(s: struct_pb2.Struct) -> Dict[str, Any]:
    plain: Dict[str, Any] = _plain(json_format.MessageToDict(s))
    return plain


def _from_value(v: struct_pb2.Value) -> Any:
    return _plain(json_format.MessageToDict(v))


def _carry(key: str, value: Any) -> Dict[str, Any]:
    """``{key: value}`` when a Struct keeps it exactly, else ``{key + "_json": its JSON text}``."""
    if _struct_safe(value):
        return {key: value}
    return {f"{key}_json": json.dumps(value)}


def _carried(data: Dict[str, Any], key: str) -> Any:
    if f"{key}_json" in data:
        return json.loads(data[f"{key}_json"])
    return data.get(key)


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON, types included (``1``, ``1.0`` and ``True`` differ; key order does not)."""
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def _texts(content: Any, part_type: str) -> Optional[List[str]]:
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return None
    return [
        p["text"]
        for p in content
        if isinstance(p, dict) and p.get("type") == part_type and isinstance(p.get("text"), str)
    ]


def _is_message(item: Item, role: str) -> bool:
    return item.get("type", "message") == "message" and item.get("role") == role


def _string_or_empty(value: Any) -> str:
    """A string field's value, or "" for anything else (the residual keeps the original)."""
    return value if isinstance(value, str) else ""


def _call_arguments(text: Any) -> struct_pb2.Value:
    """A call's JSON arguments as a Value; text that is no (exactly kept) JSON as a string Value."""
    if not isinstance(text, str):
        return json_value(None)
    try:
        parsed = json.loads(text)
    except ValueError:
        return json_value(text)
    return json_value(parsed if _struct_safe(parsed) else text)


def _output_text(output: Any) -> str:
    if isinstance(output, str):
        return output
    return "".join(_texts(output, "input_text") or [])


def _message_entry(
    role: "entry_pb2.Role.ValueType", parts: List[ContentPart], tool_call_id: Optional[str] = None
) -> Entry:
    message = Message(role=role, content=parts)
    if tool_call_id is not None:
        message.tool_call_id = tool_call_id
    return Entry(message=message)


def _project(item: Item) -> Entry:
    """The typed entry an item is stored as, without its residual."""
    kind = item.get("type")
    call_id = item.get("call_id")
    if kind == "function_call" and isinstance(call_id, str) and call_id:
        call = ToolCall(id=call_id, name=_string_or_empty(item.get("name")))
        call.arguments.CopyFrom(_call_arguments(item.get("arguments")))
        return _message_entry(entry_pb2.ROLE_ASSISTANT, [ContentPart(tool_call=call)])
    if kind == "function_call_output" and isinstance(call_id, str) and call_id:
        text = _output_text(item.get("output"))
        return _message_entry(
            entry_pb2.ROLE_TOOL, [ContentPart(text=text)], tool_call_id=call_id
        )
    thinking = _texts(item.get("summary"), "summary_text") if kind == "reasoning" else None
    if thinking:
        parts = [ContentPart(thinking=entry_pb2.ThinkingPart(thinking=t)) for t in thinking]
        return _message_entry(entry_pb2.ROLE_ASSISTANT, parts)
    user = _texts(item.get("content"), "input_text") if _is_message(item, "user") else None
    if user is not None:
        return _message_entry(entry_pb2.ROLE_USER, [ContentPart(text=t) for t in user])
    said = _texts(item.get("content"), "output_text") if _is_message(item, "assistant") else None
    if said is not None:
        return _message_entry(entry_pb2.ROLE_ASSISTANT, [ContentPart(text=t) for t in said])
    return custom_entry_of(item)


def custom_entry_of(item: Item) -> Entry:
    """The Custom entry that keeps an item whole: for items no message type holds."""
    data = json_struct(_carry("item", item))
    return Entry(custom=entry_pb2.Custom(namespace=NAMESPACE, data=data))


def _call_item(call: ToolCall) -> Item:
    arguments = _from_value(call.arguments) if call.HasField("arguments") else None
    return {
        "type": "function_call",
        "call_id": call.id,
        "name": call.name,
        # Keys sorted: a Struct is a map, and the order its keys come back in
        # from the server is not the order they were written in; arguments
        # written in another order are kept exactly by the residual.
        "arguments": json.dumps(
            arguments, separators=(",", ":"), ensure_ascii=False, sort_keys=True
        ),
    }


def _message_items(message: Message) -> List[Item]:
    texts = [p.text for p in message.content if p.WhichOneof("part") == "text"]
    if message.role == entry_pb2.ROLE_USER:
        content: Any = texts[0] if len(texts) == 1 else [
            {"type": "input_text", "text": t} for t in texts
        ]
        return [{"role": "user", "content": content}]
    if message.role == entry_pb2.ROLE_TOOL:
        return [
            {"type": "function_call_output", "call_id": message.tool_call_id, "output": "".join(texts)}
        ]
    if message.role != entry_pb2.ROLE_ASSISTANT:
        return []
    parts = list(message.content)
    if parts and all(p.WhichOneof("part") == "thinking" for p in parts):
        summary = [{"type": "summary_text", "text": p.thinking.thinking} for p in parts]
        return [{"type": "reasoning", "summary": summary}]
    calls = [_call_item(p.tool_call) for p in parts if p.WhichOneof("part") == "tool_call"]
    reply: Item = {
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [
            {"type": "output_text", "text": t, "annotations": [], "logprobs": []} for t in texts
        ],
    }
    return [reply, *calls] if texts or not calls else calls


def _read_back(entry: Entry) -> List[Item]:
    """The items an entry reads back as, before its residual (none for entries that are no item)."""
    kind = entry.WhichOneof("kind")
    if kind == "custom" and entry.custom.namespace == NAMESPACE:
        item = _carried(_from_struct(entry.custom.data), "item")
        return [item] if isinstance(item, dict) else []
    return _message_items(entry.message) if kind == "message" else []


def _residual(item: Item, canonical: Item) -> Optional[Dict[str, Any]]:
    """What the item has beyond its read-back: fields to set, and fields it lacks."""
    changed = {k: v for k, v in item.items() if k not in canonical or not same_json(v, canonical[k])}
    unset = [k for k in canonical if k not in item]
    if not changed and not unset:
        return None
    residual: Dict[str, Any] = {}
    if changed:
        residual.update(_carry("set", changed))
    if unset:
        residual["unset"] = unset
    return residual


def _with_residual(item: Item, residual: Optional[Dict[str, Any]]) -> Item:
    if residual is None:
        return item
    out = {**item, **(_carried(residual, "set") or {})}
    for key in residual.get("unset", []):
        out.pop(key, None)
    return out


def item_entry(item: Item) -> Entry:
    """The entry an item is stored as: typed, with its residual in the message's metadata.

    Raises ``TypeError`` for an item that is no JSON (as the SDK's SQLiteSession does).
    """
    json.dumps(item)
    entry = _project(item)
    if entry.WhichOneof("kind") != "message":
        return entry
    read = _read_back(entry)
    residual = _residual(item, read[-1] if read else {})
    if residual is not None:
        entry.message.metadata.CopyFrom(json_struct({NAMESPACE: residual}))
    return entry


def entry_items(entry: Entry) -> List[Item]:
    """The items an entry holds (one for the entries this adapter writes; more for a foreign message)."""
    items = _read_back(entry)
    residual: Optional[Dict[str, Any]] = None
    if entry.WhichOneof("kind") == "message" and NAMESPACE in entry.message.metadata.fields:
        found = _from_struct(entry.message.metadata).get(NAMESPACE)
        residual = found if isinstance(found, dict) else None
    last = len(items) - 1
    return [_with_residual(item, residual if i == last else None) for i, item in enumerate(items)]
