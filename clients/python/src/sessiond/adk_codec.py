# google-adk is an optional extra (no py.typed): typed as Any when absent or untyped.
# mypy: disable-error-code="import-untyped, import-not-found", allow-subclassing-any
"""ADK events as sessiond entries, and back: typed where a part maps, lossless always.

An event becomes one entry. Its content maps to a typed ``Message`` when it
can, so that every language (and the viewer) reads the conversation:

- role ``user`` -> USER (text parts);
- role ``model`` -> ASSISTANT (text, thinking: ``thought`` parts, and
  function calls as tool calls; ``model_version`` / ``usage_metadata`` /
  ``finish_reason`` as model, usage, stop reason);
- a lone function response -> TOOL (``tool_call_id`` = the call's id, the
  response as JSON text).

Everything else of the event (ids, author, actions, the fields of parts the
typed form has no room for, parts that do not map) rides along in the
message's metadata under ``adk_event`` as the event's JSON (ADK's own
``model_dump_json``), where each mapped part left a ``{"$typed": true, ...}``
placeholder holding only what the typed part lacks. JSON text, not a Struct:
a Struct would turn every integer into a float. Events with no content, or
content that is not one message (several function responses of parallel
calls), are a ``Custom`` entry (namespace ``adk.event``) holding that JSON.
Reading an entry back gives an event equal to the one written.
"""

from __future__ import annotations

import json
import re
from typing import Any, Dict, List, Optional

from google.adk.events.event import Event
from google.protobuf import json_format, struct_pb2

from .ids import new_entry_id
from .messages import json_struct, json_value
from .v1.entry_pb2 import ContentPart, Custom, Entry, Message, Role, ThinkingPart, ToolCall, Usage

#: Custom namespace of events kept whole (no typed form).
EVENT_NAMESPACE = "adk.event"
#: Key of a typed message's metadata that holds the rest of its event.
ENVELOPE_KEY = "adk_event"
#: Placeholder marker of a part the typed message carries.
TYPED = "$typed"

_ENTRY_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def entry_id_of(event_id: str) -> str:
    """The entry id an event is stored under: its own id when sessiond accepts it.

    Keeping the id makes a retried append idempotent and lets fork and
    rewind name an event directly.
    """
    return event_id if _ENTRY_ID.match(event_id or "") else new_entry_id()


def encode_event(event: Event) -> Entry:
    """The entry that stores ``event`` (typed message where it maps, else Custom)."""
    doc: Dict[str, Any] = json.loads(event.model_dump_json(exclude_none=True))
    entry = Entry(id=entry_id_of(event.id))
    message = _message_of(event, doc)
    if message is None:
        entry.custom.CopyFrom(
            Custom(namespace=EVENT_NAMESPACE, data=json_struct({"event": json.dumps(doc)}))
        )
    else:
        message.metadata.CopyFrom(json_struct({ENVELOPE_KEY: json.dumps(doc)}))
        entry.message.CopyFrom(message)
    return entry


def decode_entry(entry: Entry) -> Optional[Event]:
    """The event an entry stores, or None for entries that are not events (state, leaf, ...)."""
    kind = entry.WhichOneof("kind")
    if kind == "custom" and entry.custom.namespace == EVENT_NAMESPACE:
        return Event.model_validate_json(_struct_field(entry.custom.data, "event"))
    if kind != "message" or ENVELOPE_KEY not in entry.message.metadata.fields:
        return None
    doc = json.loads(_struct_field(entry.message.metadata, ENVELOPE_KEY))
    typed = iter(entry.message.content)
    parts = []
    for spec in doc["content"]["parts"]:
        if spec.pop(TYPED, False):
            parts.append(_merge(spec, _part_doc(next(typed), entry.message)))
        else:
            parts.append(spec)
    doc["content"]["parts"] = parts
    return Event.model_validate(doc)


def _message_of(event: Event, doc: Dict[str, Any]) -> Optional[Message]:
    """The typed message for the event's content (placeholders written into ``doc``), or None."""
    content = event.content
    if content is None or not content.parts:
        return None
    responses = [p for p in content.parts if p.function_response is not None]
    if responses:
        fr = responses[0].function_response
        if len(content.parts) != 1 or fr is None or not fr.id:
            return None
        spec = doc["content"]["parts"][0]
        rest = spec["function_response"]
        body = rest.pop("response", None)
        for k in ("id", "name"):
            rest.pop(k, None)
        if not rest:
            del spec["function_response"]
        spec[TYPED] = True
        return Message(
            role=Role.ROLE_TOOL,
            tool_call_id=fr.id,
            tool_name=fr.name or "",
            content=[ContentPart(text=json.dumps(body))],
        )
    role = {"user": Role.ROLE_USER, "model": Role.ROLE_ASSISTANT}.get(content.role or "")
    if role is None:
        return None
    typed: List[ContentPart] = []
    for spec in doc["content"]["parts"]:
        part = _typed_part(spec, role)
        if part is not None:
            typed.append(part)
            spec[TYPED] = True
    if not typed:
        return None
    message = Message(role=role, content=typed)
    if role == Role.ROLE_ASSISTANT:
        _assistant_fields(event, message)
    return message


def _typed_part(spec: Dict[str, Any], role: int) -> Optional[ContentPart]:
    """Moves what a typed part carries out of ``spec`` (a part's JSON) into a ContentPart."""
    if "text" in spec and spec.get("thought") is True and role == Role.ROLE_ASSISTANT:
        thinking = ThinkingPart(thinking=spec.pop("text"))
        del spec["thought"]
        if "thought_signature" in spec:
            thinking.signature = spec.pop("thought_signature")
        return ContentPart(thinking=thinking)
    if "text" in spec and not spec.get("thought"):
        return ContentPart(text=spec.pop("text"))
    call = spec.get("function_call")
    if role == Role.ROLE_ASSISTANT and call is not None and call.get("id") and call.get("name"):
        args = call.get("args", {})
        value = json_value(args)
        tool = ToolCall(id=call.pop("id"), name=call.pop("name"), arguments=value)
        if _exact(args, value):
            call.pop("args", None)
        if not call:
            del spec["function_call"]
        return ContentPart(tool_call=tool)
    return None


def _exact(obj: Any, value: struct_pb2.Value) -> bool:
    """Whether ``obj`` survives a protobuf Value unchanged (integers do not: they come back floats)."""
    return json.dumps(obj) == json.dumps(json_format.MessageToDict(value))


def _assistant_fields(event: Event, message: Message) -> None:
    if event.model_version:
        message.model = event.model_version
    if event.finish_reason is not None:
        message.stop_reason = str(event.finish_reason.value)
    u = event.usage_metadata
    if u is not None:
        message.usage.CopyFrom(
            Usage(
                input_tokens=u.prompt_token_count or 0,
                output_tokens=u.candidates_token_count or 0,
                cache_read_tokens=u.cached_content_token_count or 0,
            )
        )


def _part_doc(part: ContentPart, message: Message) -> Dict[str, Any]:
    """The JSON fields of an ADK part that a typed content part stands for."""
    kind = part.WhichOneof("part")
    if message.role == Role.ROLE_TOOL:
        return {
            "function_response": {
                "id": message.tool_call_id,
                "name": message.tool_name,
                "response": json.loads(part.text),
            }
        }
    if kind == "text":
        return {"text": part.text}
    if kind == "thinking":
        out: Dict[str, Any] = {"text": part.thinking.thinking, "thought": True}
        if part.thinking.HasField("signature"):
            out["thought_signature"] = part.thinking.signature
        return out
    if kind == "tool_call":
        call = part.tool_call
        args = json_format.MessageToDict(call.arguments)
        return {"function_call": {"id": call.id, "name": call.name, "args": args}}
    raise ValueError(f"content part {kind!r} was not written by the ADK adapter")


def _merge(rest: Dict[str, Any], typed: Dict[str, Any]) -> Dict[str, Any]:
    """A part's JSON again: the typed fields, then what the placeholder kept (exact values win)."""
    out = dict(typed)
    for k, v in rest.items():
        if isinstance(v, dict) and isinstance(out.get(k), dict):
            out[k] = {**out[k], **v}
        else:
            out[k] = v
    return out


def _struct_field(struct: struct_pb2.Struct, key: str) -> str:
    return str(struct.fields[key].string_value)

