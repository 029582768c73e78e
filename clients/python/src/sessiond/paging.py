"""Every page of GetState / GetTree merged into one response, as a generator without I/O.

The loop (ask for the first page, then for the next while the server
promises more, appending each page's items) is the same for the sync and
the asyncio client; only the call differs. So the loop is a generator that
yields the request to send and is sent each answer (``pages.send``), and
``read_all`` / ``aread_all`` run it with a blocking or an awaited call.

All pages describe the snapshot of the first (the page token pins it; see
the proto), so the merged response is consistent while entries are
appended. The caller's request is copied, never changed.
"""

from __future__ import annotations

from typing import Awaitable, Callable, Generator, TypeVar

import grpc

from .errors import SessiondError
from .v1 import session_service_pb2 as ss

__all__ = ["aread_all", "read_all", "state_pages", "tree_pages"]

Req = TypeVar("Req")
Resp = TypeVar("Resp")

#: Yields each request to send, is sent each response, returns the merged one.
Pages = Generator[Req, Resp, Resp]


def _stuck(method: str) -> SessiondError:
    """A page that brings nothing yet promises more would make the loop endless."""
    return SessiondError(
        grpc.StatusCode.INTERNAL,
        f"{method}: the server sent an empty page with a next page token",
    )


def state_pages(request: ss.GetStateRequest) -> Pages[ss.GetStateRequest, ss.GetStateResponse]:
    """GetState page after page: the first page's response with every later page's messages."""
    req = ss.GetStateRequest()
    req.CopyFrom(request)
    req.page_token = ""
    res = yield req
    while res.next_page_token:
        req.page_token = res.next_page_token
        page = yield req
        if not page.state.messages and page.next_page_token:
            raise _stuck("GetState")
        res.state.messages.extend(page.state.messages)
        res.next_page_token = page.next_page_token
    return res


def tree_pages(request: ss.GetTreeRequest) -> Pages[ss.GetTreeRequest, ss.GetTreeResponse]:
    """GetTree page after page: the first page's response with every later page's nodes."""
    req = ss.GetTreeRequest()
    req.CopyFrom(request)
    req.page_token = ""
    res = yield req
    while res.next_page_token:
        req.page_token = res.next_page_token
        page = yield req
        if not page.nodes and page.next_page_token:
            raise _stuck("GetTree")
        res.nodes.extend(page.nodes)
        res.next_page_token = page.next_page_token
    return res


def read_all(pages: Pages[Req, Resp], call: Callable[[Req], Resp]) -> Resp:
    """Runs ``pages`` with a blocking ``call``."""
    req = next(pages)
    while True:
        try:
            req = pages.send(call(req))
        except StopIteration as done:
            result: Resp = done.value
            return result


async def aread_all(pages: Pages[Req, Resp], call: Callable[[Req], Awaitable[Resp]]) -> Resp:
    """Runs ``pages`` with an awaited ``call``."""
    req = next(pages)
    while True:
        try:
            req = pages.send(await call(req))
        except StopIteration as done:
            result: Resp = done.value
            return result
