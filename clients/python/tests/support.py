"""What the tests share: the live server they run against, and a way to restart it.

Environment:
  SESSIOND_URL          the server, e.g. http://127.0.0.1:50051 (tests that need
                        one are skipped without it)
  SESSIOND_TOKEN        bearer token for it, when it requires one
  SESSIOND_CONTROL      "stdio": whoever started the tests can stop / start the
                        server (see control()); without it those tests are skipped
  SESSIOND_AUTH_URL, SESSIOND_AUTH_TOKEN   a server started with --auth-tokens
  SESSIOND_TLS_URL, SESSIOND_TLS_CA        a TLS server and the CA file that signed it
"""

from __future__ import annotations

import asyncio
import os
import sys
import threading
import unittest
from typing import TYPE_CHECKING, Any, Awaitable, Callable, List, Optional, Tuple

import grpc
import grpc.aio

from sessiond import AsyncSessiondClient, RetryPolicy, SessiondClient, new_entry_id

URL = os.environ.get("SESSIOND_URL", "")
TOKEN = os.environ.get("SESSIOND_TOKEN") or None
CONTROL = os.environ.get("SESSIOND_CONTROL", "")

#: Generous enough to ride out a server restart (a few seconds).
PATIENT = RetryPolicy(max_attempts=80, base_delay=0.05, max_delay=0.5)


def need_server() -> None:
    """Skips a test module without a server (call from setUpModule)."""
    if not URL:
        raise unittest.SkipTest("SESSIOND_URL is not set: no live server to test against")


def need_control() -> None:
    if CONTROL != "stdio":
        raise unittest.SkipTest(
            "SESSIOND_CONTROL=stdio is not set: nothing can restart the server"
        )


def client(**kw: Any) -> SessiondClient:
    kw.setdefault("token", TOKEN)
    kw.setdefault("timeout", 20.0)
    return SessiondClient(URL, **kw)


def async_client(**kw: Any) -> AsyncSessiondClient:
    """An ``AsyncSessiondClient`` to the server under test (make it inside the test's event loop)."""
    kw.setdefault("token", TOKEN)
    kw.setdefault("timeout", 20.0)
    return AsyncSessiondClient(URL, **kw)


def workspace() -> str:
    """A workspace of its own per test, so listings see only the test's sessions."""
    return f"py-{new_entry_id()}"


_control_lock = threading.Lock()


def control(command: str) -> None:
    """Asks the process that started the tests to "stop", "start", "restart" or "crash" the server.

    "crash" kills it with SIGKILL and starts it again.

    Protocol: one line ``SESSIOND-CONTROL <command>`` on stdout; the answer
    is one line on stdin, ``ok`` once done (the server listens again on the
    same address and data for start / restart), anything else is an error.
    """
    with _control_lock:
        sys.stdout.write(f"SESSIOND-CONTROL {command}\n")
        sys.stdout.flush()
        answer = sys.stdin.readline().strip()
    if answer != "ok":
        raise RuntimeError(f"control {command!r} failed: {answer!r}")


async def acontrol(command: str) -> None:
    """``control`` from a coroutine: the event loop (and the watches on it) runs meanwhile."""
    await asyncio.to_thread(control, command)


if TYPE_CHECKING:
    _Future = grpc.Future[Any]  # generic in the type stubs only
else:
    _Future = grpc.Future


class LostResponse(grpc.RpcError, grpc.Call, _Future):
    """UNAVAILABLE handed to the client AFTER the server answered: a response lost on the way back."""

    def code(self) -> grpc.StatusCode:
        return grpc.StatusCode.UNAVAILABLE

    def details(self) -> str:
        return "test: the response was lost after the server acted"

    def result(self, timeout: Optional[float] = None) -> Any:
        raise self

    def exception(self, timeout: Optional[float] = None) -> Any:
        return self

    def traceback(self, timeout: Optional[float] = None) -> Any:
        return None

    def initial_metadata(self) -> Any:
        return ()

    def trailing_metadata(self) -> Any:
        return ()

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float:
        return 0.0

    def cancel(self) -> bool:
        return False

    def cancelled(self) -> bool:
        return False

    def running(self) -> bool:
        return False

    def done(self) -> bool:
        return True

    def add_callback(self, callback: Callable[[], None]) -> bool:
        return False

    def add_done_callback(self, fn: Callable[[Any], None]) -> None:
        fn(self)


class LoseResponses(grpc.UnaryUnaryClientInterceptor):
    """Lets a call of the named methods reach the server, then loses its response.

    ``lose[method]`` responses are lost (each attempt that gets through
    consumes one); every attempt is recorded in ``attempts`` with the code
    the server answered (or "OK").
    """

    def __init__(self, **lose: int) -> None:
        self.lose = dict(lose)
        self.attempts: List[Tuple[str, str]] = []
        self._lock = threading.Lock()

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        method = details.method.rsplit("/", 1)[-1]
        outcome = continuation(details, request)
        try:
            outcome.result()
            code = "OK"
        except grpc.RpcError:
            code = outcome.code().name
        with self._lock:
            self.attempts.append((method, code))
            if code == "OK" and self.lose.get(method, 0) > 0:
                self.lose[method] -= 1
                return LostResponse()
        return outcome

    def count(self, method: str) -> int:
        with self._lock:
            return sum(1 for m, _ in self.attempts if m == method)


class Counter(grpc.UnaryUnaryClientInterceptor):
    """Counts the attempts of each method (to tell a retried call from a single one)."""

    def __init__(self) -> None:
        self.calls: List[str] = []

    def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        self.calls.append(details.method.rsplit("/", 1)[-1])
        return continuation(details, request)


class WatchCollector:
    """Iterates a watch on a thread of its own, keeping every entry it yields.

    ``entries`` holds them in arrival order; ``failure`` what ended the
    iteration other than ``close()`` of the watch; ``wait_for(pred, timeout)``
    waits until ``pred(entries)`` holds (or a failure), and says whether it does.
    """

    def __init__(self, watch: Any) -> None:
        self.entries: List[Any] = []
        self.failure: List[BaseException] = []
        self._closed = False
        self._watch = watch
        self._got = threading.Condition()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            for ev in self._watch:
                if ev.WhichOneof("event") == "entry":
                    with self._got:
                        self.entries.append(ev.entry)
                        self._got.notify_all()
        except BaseException as e:  # noqa: BLE001 - reported by the test
            if not self._closed:
                with self._got:
                    self.failure.append(e)
                    self._got.notify_all()

    def wait_for(self, pred: Callable[[List[Any]], bool], timeout: float) -> bool:
        with self._got:
            self._got.wait_for(lambda: pred(self.entries) or bool(self.failure), timeout=timeout)
            return pred(self.entries)

    def close(self, join: float = 10) -> None:
        self._closed = True
        self._watch.close()
        self.thread.join(join)


class AsyncLoseResponses(grpc.aio.UnaryUnaryClientInterceptor):
    """``LoseResponses`` for grpc.aio: the call reaches the server, then its answer is lost.

    The lost answer is an ``AioRpcError`` UNAVAILABLE raised after the
    server acted, as a connection dropped on the way back would end it.
    """

    def __init__(self, **lose: int) -> None:
        self.lose = dict(lose)
        self.attempts: List[Tuple[str, str]] = []

    async def intercept_unary_unary(
        self, continuation: Callable[..., Awaitable[Any]], details: Any, request: Any
    ) -> Any:
        method = _method_name(details.method)
        call = await continuation(details, request)
        try:
            await call
            code = "OK"
        except grpc.aio.AioRpcError as err:
            code = err.code().name
        self.attempts.append((method, code))
        if code == "OK" and self.lose.get(method, 0) > 0:
            self.lose[method] -= 1
            raise grpc.aio.AioRpcError(
                grpc.StatusCode.UNAVAILABLE,
                grpc.aio.Metadata(),
                grpc.aio.Metadata(),
                details="test: the response was lost after the server acted",
            )
        return call

    def count(self, method: str) -> int:
        return sum(1 for m, _ in self.attempts if m == method)


class AsyncCounter(grpc.aio.UnaryUnaryClientInterceptor):
    """``Counter`` for grpc.aio: the attempts of each method."""

    def __init__(self) -> None:
        self.calls: List[str] = []

    async def intercept_unary_unary(
        self, continuation: Callable[..., Awaitable[Any]], details: Any, request: Any
    ) -> Any:
        self.calls.append(_method_name(details.method))
        return await continuation(details, request)


def _method_name(method: Any) -> str:
    """The RPC's name from a call's details (grpc.aio gives bytes, the sync API str)."""
    text = method.decode() if isinstance(method, bytes) else str(method)
    return text.rsplit("/", 1)[-1]


class AsyncWatchCollector:
    """``WatchCollector`` for an ``AsyncEntryWatch``: a task of its own keeps every entry it yields."""

    def __init__(self, watch: Any) -> None:
        self.entries: List[Any] = []
        self.failure: List[BaseException] = []
        self._watch = watch
        self._got = asyncio.Condition()
        self.task = asyncio.ensure_future(self._run())

    async def _run(self) -> None:
        try:
            async for ev in self._watch:
                if ev.WhichOneof("event") == "entry":
                    async with self._got:
                        self.entries.append(ev.entry)
                        self._got.notify_all()
        except Exception as e:  # noqa: BLE001 - reported by the test
            async with self._got:
                self.failure.append(e)
                self._got.notify_all()

    async def wait_for(self, pred: Callable[[List[Any]], bool], timeout: float) -> bool:
        async with self._got:
            try:
                await asyncio.wait_for(
                    self._got.wait_for(lambda: pred(self.entries) or bool(self.failure)), timeout
                )
            except asyncio.TimeoutError:
                pass
            return pred(self.entries)

    async def close(self, join: float = 10) -> None:
        self._watch.close()
        await asyncio.wait_for(self.task, join)
