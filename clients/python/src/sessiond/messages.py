"""Builders for the entries an agent appends, and text out of what it reads.

The generated classes stay the truth (every builder returns an ordinary
``Entry`` / ``ToolCall``); these only spare callers the nesting
``Entry(message=Message(role=..., content=[ContentPart(text=...)]))`` and
the conversion of plain ``dict`` / ``list`` JSON into ``Struct`` / ``Value``,
which the protobuf constructors do not do by themselves.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, Optional, Union

from google.protobuf import json_format, struct_pb2

from .ids import new_entry_id
from .v1 import entry_pb2, session_pb2, session_service_pb2
from .v1.entry_pb2 import ContentPart, Entry, Message, ToolCall, Usage

__all__ = [
    "assistant_message",
    "json_struct",
    "json_value",
    "text_of",
    "tool_call",
    "tool_result",
    "user_message",
]


def json_value(obj: Any) -> struct_pb2.Value:
    """Any JSON-like Python value (dict, list, str, number, bool, None) as a ``Value``."""
    if isinstance(obj, struct_pb2.Value):
        return obj
    return json_format.ParseDict(obj, struct_pb2.Value())


def json_struct(obj: Union[Mapping[str, Any], struct_pb2.Struct]) -> struct_pb2.Struct:
    """A ``dict`` with string keys as a ``Struct`` (metadata, Custom data)."""
    if isinstance(obj, struct_pb2.Struct):
        return obj
    s = struct_pb2.Struct()
    s.update(obj)
    return s


def _entry(message: Message, id: str, parent_id: Optional[str]) -> Entry:
    e = Entry(id=id, message=message)
    if parent_id is not None:
        e.parent_id = parent_id
    return e


def user_message(text: str, *, id: str = "", parent_id: Optional[str] = None) -> Entry:
    """A USER message entry with one text part.

    ``id`` may stay empty: the client assigns one before sending. Without
    ``parent_id`` the entry hangs under the current leaf (or the previous
    entry of the same Append batch).
    """
    return _entry(
        Message(role=entry_pb2.ROLE_USER, content=[ContentPart(text=text)]), id, parent_id
    )


def tool_call(
    name: str, arguments: Any = None, *, id: Optional[str] = None
) -> ToolCall:
    """A tool call for ``assistant_message(tool_calls=...)``.

    ``arguments`` is any JSON value (usually a dict). The id defaults to a
    random one, so the answering ``tool_result`` can name it.
    """
    call = ToolCall(id=id if id is not None else f"call_{new_entry_id()}", name=name)
    call.arguments.CopyFrom(json_value({} if arguments is None else arguments))
    return call


def assistant_message(
    text: str = "",
    *,
    tool_calls: Iterable[ToolCall] = (),
    thinking: Optional[str] = None,
    model: Optional[str] = None,
    provider: Optional[str] = None,
    stop_reason: Optional[str] = None,
    usage: Optional[Usage] = None,
    id: str = "",
    parent_id: Optional[str] = None,
) -> Entry:
    """An ASSISTANT message entry: optional thinking, then the text, then tool calls.

    An empty ``text`` adds no text part (a pure tool-call turn).
    """
    parts = []
    if thinking is not None:
        parts.append(ContentPart(thinking=entry_pb2.ThinkingPart(thinking=thinking)))
    if text:
        parts.append(ContentPart(text=text))
    parts.extend(ContentPart(tool_call=c) for c in tool_calls)
    msg = Message(role=entry_pb2.ROLE_ASSISTANT, content=parts)
    if model is not None:
        msg.model = model
    if provider is not None:
        msg.provider = provider
    if stop_reason is not None:
        msg.stop_reason = stop_reason
    if usage is not None:
        msg.usage.CopyFrom(usage)
    return _entry(msg, id, parent_id)


def tool_result(
    tool_call_id: str,
    text: str,
    *,
    tool_name: Optional[str] = None,
    is_error: bool = False,
    id: str = "",
    parent_id: Optional[str] = None,
) -> Entry:
    """A TOOL message entry answering the tool call ``tool_call_id``.

    The server requires that call on the path and not answered yet.
    """
    msg = Message(
        role=entry_pb2.ROLE_TOOL,
        content=[ContentPart(text=text)],
        tool_call_id=tool_call_id,
        is_error=is_error,
    )
    if tool_name is not None:
        msg.tool_name = tool_name
    return _entry(msg, id, parent_id)


Textual = Union[
    Message,
    Entry,
    session_pb2.StateMessage,
    session_pb2.SessionState,
    session_service_pb2.GetStateResponse,
]


def text_of(x: Textual, sep: str = "\n") -> str:
    """The plain text of a message, an entry, or a whole folded state.

    For a message: its text parts joined (thinking and tool calls are not
    text). For a state (or a GetState response): the text of each message,
    in order, joined by ``sep``, skipping messages without text. Any other
    entry kind has no text ("").
    """
    if isinstance(x, session_service_pb2.GetStateResponse):
        x = x.state
    if isinstance(x, session_pb2.SessionState):
        texts = (text_of(m.message) for m in x.messages)
        return sep.join(t for t in texts if t)
    if isinstance(x, session_pb2.StateMessage):
        x = x.message
    if isinstance(x, Entry):
        if x.WhichOneof("kind") != "message":
            return ""
        x = x.message
    return "".join(p.text for p in x.content if p.WhichOneof("part") == "text")
