# google-adk is an optional extra (no py.typed): typed as Any when absent or untyped.
# mypy: disable-error-code="import-untyped, import-not-found"
"""The ADK ``Session`` objects of a ``list_sessions`` page, made cheaply.

``list_sessions`` of one user's 10,000 sessions builds 10,000 ``Session``
objects without events or state. Two costs dominated it, next to the
ListSessions calls themselves (bench row a, 2026-12-07: the adapter 1.69-1.80
× the bare calls, target 1.5):

- pydantic's ``model_construct`` (~6-11 µs each): it walks the model's
  fields for defaults and sets up private attributes per call. The
  listing's sessions all have the same shape (every field given), so each
  is made as ``model_construct`` makes it, from a template made by
  ``model_construct`` itself: the instance's ``__dict__``, its fields set,
  no extra, and a copy of the private attributes' defaults (pydantic v2's
  documented instance attributes). The template is checked once against
  the model (its fields, private attributes with immutable defaults, no
  extra); if anything differs (another pydantic or ADK), every session is
  made by ``model_construct`` as before.
- Python's cyclic garbage collector: each session brings five containers
  (its dict, fields set, private dict, state and events), and the
  collections that a page of them triggers traverse the whole heap of a
  process that imported ADK (~50 ms of 10,000 sessions). A page is built
  synchronously with collection paused (and resumed after it, if it was
  on): nothing it makes is garbage.
"""

from __future__ import annotations

import gc
from typing import Any, Callable, Dict, List, Optional, Sequence

from google.adk.sessions.session import Session

from .adk_state import USER_TAG

_FIELDS = ("id", "app_name", "user_id", "state", "events", "last_update_time")
_IMMUTABLE = (type(None), bool, int, float, str, bytes, tuple, frozenset)


def _fast_maker() -> Optional[Callable[[Dict[str, Any]], Any]]:
    """Makes a Session from its six fields as ``model_construct`` would; None when not the same."""
    try:
        template = Session.model_construct(
            id="", app_name="", user_id="", state={}, events=[], last_update_time=0.0
        )
        private = template.__pydantic_private__
        fields_set = template.__pydantic_fields_set__
        if (
            tuple(Session.model_fields) != _FIELDS
            or set(template.__dict__) != set(_FIELDS)
            or fields_set != set(_FIELDS)
            or template.__pydantic_extra__ is not None
            or not isinstance(private, dict)
            or set(private) != set(getattr(Session, "__private_attributes__", {}))
            or not all(isinstance(v, _IMMUTABLE) for v in private.values())
        ):
            return None
    except Exception:  # pragma: no cover - another pydantic: fall back
        return None
    new = Session.__new__
    setattr_ = object.__setattr__

    def make(values: Dict[str, Any]) -> Any:
        s = new(Session)
        setattr_(s, "__dict__", values)
        setattr_(s, "__pydantic_fields_set__", set(fields_set))
        setattr_(s, "__pydantic_extra__", None)
        setattr_(s, "__pydantic_private__", dict(private))
        return s

    probe = make(
        {"id": "p", "app_name": "a", "user_id": "u", "state": {}, "events": [], "last_update_time": 1.5}
    )
    like = Session.model_construct(
        id="p", app_name="a", user_id="u", state={}, events=[], last_update_time=1.5
    )
    if (
        probe.model_dump() != like.model_dump()
        or probe.__pydantic_private__ != like.__pydantic_private__
        or probe.__pydantic_fields_set__ != like.__pydantic_fields_set__
    ):
        return None
    return make


_make = _fast_maker()


def sessions_of(page: Sequence[Any], app_name: str, user_id: Optional[str]) -> List[Any]:
    """The ADK sessions (no events, no state) of a ListSessions page's ``SessionMeta`` list."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        out: List[Any] = []
        make = _make
        for m in page:
            t = m.updated_at
            values = {
                "id": m.id,
                "app_name": app_name,
                "user_id": m.tags[USER_TAG] if user_id is None else user_id,
                "state": {},
                "events": [],
                "last_update_time": t.seconds + t.nanos / 1e9,
            }
            out.append(make(values) if make is not None else Session.model_construct(**values))
        return out
    finally:
        if was_on:
            gc.enable()
