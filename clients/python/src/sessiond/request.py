"""A request message from what a client method was given: the message itself, or its fields."""

from __future__ import annotations

from typing import Any, Callable, Dict, Mapping, Optional, TypeVar

from google.protobuf.message import Message

from .messages import json_struct

__all__ = ["build_request"]

Req = TypeVar("Req", bound=Message)


def build_request(cls: Callable[..., Req], request: Optional[Req], fields: Mapping[str, Any]) -> Req:
    """The request: the one given (the same object: ids are filled into it), or one built from keyword fields.

    A ``dict`` for a ``google.protobuf.Struct`` field (``metadata``) is
    converted, which the generated constructors refuse to do. Both at once
    is an error: which would win is not obvious.
    """
    if request is not None:
        if fields:
            raise TypeError("pass either a request message or keyword fields, not both")
        return request
    desc = getattr(cls, "DESCRIPTOR")
    conv: Dict[str, Any] = {}
    for name, value in fields.items():
        f = desc.fields_by_name.get(name)
        if (
            f is not None
            and f.message_type is not None
            and f.message_type.full_name == "google.protobuf.Struct"
            and isinstance(value, Mapping)
        ):
            value = json_struct(value)
        conv[name] = value
    return cls(**conv)
