"""The Python conformance runner: conformance/vectors/*.json through SessiondClient or AsyncSessiondClient.

    python clients/python/tests/conformance_runner.py sync|async

implements the runner contract of conformance/README.md: settings from the
environment (SESSIOND_ADDR, CONFORMANCE_VECTORS, CONFORMANCE_WORKSPACE,
CONFORMANCE_OUT, SESSIOND_RESTART_DIR), every vector in name order, each
stopped at its first failing step, the results JSON written whatever
happened, exit 0 only when every vector passed.

Every step goes through the client layer, not the bare stubs, because
that layer is what the vectors test: ids filled in before send (a
``repeat`` sends the SAME request object again, so the ids the client
wrote into it the first time make the server de-duplicate it), the retry
of UNAVAILABLE (calls right after a server restart), the resumable watch
and ``read_state``'s paging.

The vector logic (placeholders, parsing, matching, states, the restart
handshake) is written once; a ``Driver`` makes the calls: ``SyncDriver``
with blocking calls and a thread per watch, ``AsyncDriver`` with an event
loop on a thread of its own, where the AsyncSessiondClient lives and its
watches run as tasks while this thread waits (for a restart, say).
"""

from __future__ import annotations

import asyncio
import base64
import json
import os
import queue
import re
import sys
import threading
import time
import traceback
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from pathlib import Path
from typing import Any, Awaitable, Callable, Dict, List, Optional, Tuple, TypeVar, Union

from google.protobuf import json_format
from google.protobuf.message import Message

from sessiond import AsyncEntryWatch, AsyncSessiondClient, EntryWatch, SessiondClient, SessiondError
from sessiond.v1 import entry_pb2, session_service_pb2, store_service_pb2

T = TypeVar("T")

#: How long a watchNext waits for its entries, and a restart for its ".done".
WATCH_WAIT = 30.0
RESTART_WAIT = 60.0
#: Deadline of each unary call (an attempt; the client's retry may make more).
CALL_TIMEOUT = 30.0

STEP_KINDS = ("call", "readState", "readAll", "watch", "watchNext", "watchClose", "restartServer")
STEP_FIELDS: Dict[str, Tuple[str, ...]] = {
    "call": ("request", "expect", "expectError", "expectMessageContains", "save", "state", "repeat"),
    "readState": ("request", "expect", "state", "save"),
    "readAll": ("request", "expectIds"),
    "watch": ("request",),
    "watchNext": ("expectIds",),
    "watchClose": (),
    "restartServer": (),
}


class StepFailed(Exception):
    """A step did not do what its vector says; the message goes into the results."""


def _snake(name: str) -> str:
    return re.sub(r"(?<!^)([A-Z])", r"_\1", name).lower()


#: "Service.Method" of every unary RPC: (request class, snake_case name of the client method, service).
RPCS: Dict[str, Tuple[type, str, str]] = {}
for _module, _service, _attr in (
    (store_service_pb2, "StoreService", "store"),
    (session_service_pb2, "SessionService", "session"),
):
    for _m in _module.DESCRIPTOR.services_by_name[_service].methods:
        if not _m.server_streaming and not _m.client_streaming:
            RPCS[f"{_service}.{_m.name}"] = (getattr(_module, _m.input_type.name), _snake(_m.name), _attr)


# --- the two drivers --------------------------------------------------------


class EntryQueue:
    """Entries a watch delivered, heartbeats left out, handed to watchNext (thread-safe).

    A watch that ends with an error puts the error; one that ends otherwise
    puts None.
    """

    def __init__(self) -> None:
        self.q: "queue.Queue[Union[entry_pb2.Entry, BaseException, None]]" = queue.Queue()

    def take(self, n: int, timeout: float) -> List[entry_pb2.Entry]:
        """The next ``n`` entries, or fewer when ``timeout`` passes or the watch ends first."""
        got: List[entry_pb2.Entry] = []
        deadline = time.monotonic() + timeout
        while len(got) < n:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                item = self.q.get(timeout=left)
            except queue.Empty:
                break
            if item is None:
                raise StepFailed(f"the watch ended after {[e.id for e in got]}")
            if isinstance(item, BaseException):
                raise StepFailed(f"the watch failed after {[e.id for e in got]}: {item}")
            got.append(item)
        return got


class SyncDriver:
    """``SessiondClient``: blocking calls; each watch iterated on a thread of its own."""

    name = "python-sync"

    def __init__(self, addr: str) -> None:
        self.client = SessiondClient(addr, timeout=CALL_TIMEOUT)
        self._watches: Dict[int, Tuple[EntryWatch, threading.Thread]] = {}

    def call(self, rpc: str, req: Message) -> Message:
        _, method, service = RPCS[rpc]
        result: Message = getattr(getattr(self.client, service), method)(req)
        return result

    def read_state(self, req: session_service_pb2.GetStateRequest) -> session_service_pb2.GetStateResponse:
        return self.client.read_state(req)

    def watch(self, req: session_service_pb2.WatchEntriesRequest) -> Tuple[int, EntryQueue]:
        w = self.client.watch_entries(req.session, after_seq=req.after_seq, workspace=req.workspace)
        entries = EntryQueue()

        def collect() -> None:
            try:
                for ev in w:
                    if ev.WhichOneof("event") == "entry":
                        entries.q.put(ev.entry)
                entries.q.put(None)
            except BaseException as e:  # noqa: BLE001 - handed to watchNext
                entries.q.put(e)

        t = threading.Thread(target=collect, daemon=True)
        t.start()
        self._watches[id(w)] = (w, t)
        return id(w), entries

    def close_watch(self, handle: int) -> None:
        w, t = self._watches.pop(handle)
        w.close()
        t.join(10)
        if t.is_alive():
            raise StepFailed("the watch did not end within 10 s of close()")

    def close(self) -> None:
        for handle in list(self._watches):
            self.close_watch(handle)
        self.client.close()


class AsyncDriver:
    """``AsyncSessiondClient`` on an event loop of its own thread; each watch a task on it.

    This thread submits each call to the loop and waits for it; the loop
    runs on meanwhile, so the watches go on receiving (and resuming) while
    the runner waits for a restart.
    """

    name = "python-async"

    def __init__(self, addr: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

        async def make() -> AsyncSessiondClient:
            # grpc.aio: the channel belongs to the loop it is made in.
            return AsyncSessiondClient(addr, timeout=CALL_TIMEOUT)

        self.client = self._run(make())
        self._watches: Dict[int, Tuple[AsyncEntryWatch, "Future[None]"]] = {}

    def _run(self, coro: Awaitable[T]) -> T:
        async def wrap() -> T:
            return await coro

        return asyncio.run_coroutine_threadsafe(wrap(), self.loop).result()

    def call(self, rpc: str, req: Message) -> Message:
        _, method, service = RPCS[rpc]
        fn: Callable[[Message], Awaitable[Message]] = getattr(getattr(self.client, service), method)
        return self._run(fn(req))

    def read_state(self, req: session_service_pb2.GetStateRequest) -> session_service_pb2.GetStateResponse:
        return self._run(self.client.read_state(req))

    def watch(self, req: session_service_pb2.WatchEntriesRequest) -> Tuple[int, EntryQueue]:
        entries = EntryQueue()

        async def open_watch() -> AsyncEntryWatch:
            return self.client.watch_entries(req.session, after_seq=req.after_seq, workspace=req.workspace)

        w = self._run(open_watch())

        async def collect() -> None:
            try:
                async for ev in w:
                    if ev.WhichOneof("event") == "entry":
                        entries.q.put(ev.entry)
                entries.q.put(None)
            except BaseException as e:  # noqa: BLE001 - handed to watchNext
                entries.q.put(e)

        task = asyncio.run_coroutine_threadsafe(collect(), self.loop)
        self._watches[id(w)] = (w, task)
        return id(w), entries

    def close_watch(self, handle: int) -> None:
        w, task = self._watches.pop(handle)
        self.loop.call_soon_threadsafe(w.close)
        try:
            task.result(10)
        except FutureTimeout:
            raise StepFailed("the watch did not end within 10 s of close()") from None

    def close(self) -> None:
        for handle in list(self._watches):
            self.close_watch(handle)
        self._run(self.client.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)


Driver = Union[SyncDriver, AsyncDriver]


# --- vectors ----------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\$\{([^}]+)\}")


def substitute(value: Any, env: Dict[str, Any]) -> Any:
    """``${name}`` in every string of ``value``: a whole-string placeholder by the value itself, else by its text."""
    if isinstance(value, str):
        whole = _PLACEHOLDER.fullmatch(value)
        if whole:
            return _lookup(whole.group(1), env)
        return _PLACEHOLDER.sub(lambda m: _text(_lookup(m.group(1), env)), value)
    if isinstance(value, list):
        return [substitute(v, env) for v in value]
    if isinstance(value, dict):
        return {substitute(k, env): substitute(v, env) for k, v in value.items()}
    return value


def _lookup(name: str, env: Dict[str, Any]) -> Any:
    if name not in env:
        raise StepFailed(f"unknown placeholder ${{{name}}} (saved so far: {sorted(env)})")
    return env[name]


def _text(v: Any) -> str:
    return v if isinstance(v, str) else json.dumps(v)


def parse(cls: type, obj: Any, what: str) -> Message:
    """Canonical proto3 JSON into a message, strictly: an unknown field or enum name is an error."""
    try:
        msg: Message = json_format.Parse(json.dumps(obj), cls())
    except json_format.ParseError as e:
        raise StepFailed(f"{what}: not a valid {cls.__name__}: {e}") from None
    return msg


def as_json(msg: Message) -> Any:
    """The response as canonical proto JSON: lowerCamelCase, enums by name, defaults left out."""
    return json_format.MessageToDict(msg)


def _is_default(v: Any) -> bool:
    return v is False or v == "" or v == "0" or v == [] or v == {} or (
        isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0
    )


def match(expected: Any, actual: Any, path: str = "") -> Optional[str]:
    """Why ``actual`` does not match ``expected`` (conformance/README.md, Matching), or None.

    ``actual`` is ``_ABSENT`` for a key the printer left out: it matches an
    expected default value, and an expected object whose keys all do.
    """
    where = path or "the response"
    if isinstance(expected, dict):
        if actual is _ABSENT:
            actual = {}
        if not isinstance(actual, dict):
            return f"at {where}: expected an object, got {json.dumps(actual)}"
        for k, v in expected.items():
            why = match(v, actual.get(k, _ABSENT), f"{path}.{k}" if path else k)
            if why:
                return why
        return None
    if actual is _ABSENT:
        return None if _is_default(expected) else f"at {where}: expected {json.dumps(expected)}, absent"
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return f"at {where}: expected an array, got {json.dumps(actual)}"
        if len(actual) != len(expected):
            return f"at {where}: expected {len(expected)} elements, got {len(actual)}: {json.dumps(actual)}"
        for i, (e, a) in enumerate(zip(expected, actual)):
            why = match(e, a, f"{path}.{i}")
            if why:
                return why
        return None
    same_kind = isinstance(expected, bool) == isinstance(actual, bool)
    if not same_kind or expected != actual:
        return f"at {where}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
    return None


class _Absent:
    def __repr__(self) -> str:
        return "absent"


_ABSENT: Any = _Absent()


def dig(obj: Any, path: str) -> Any:
    """The value at a dotted path of proto JSON (``entries.0.id``)."""
    cur = obj
    for part in path.split("."):
        if isinstance(cur, list) and part.isdigit() and int(part) < len(cur):
            cur = cur[int(part)]
        elif isinstance(cur, dict) and part in cur:
            cur = cur[part]
        else:
            raise StepFailed(f"save: nothing at {path!r} in {json.dumps(obj)[:300]}")
    return cur


class Runner:
    """Runs vectors through a driver; collects the results and the recorded states."""

    def __init__(self, driver: Driver, workspace: str, restart_dir: Optional[str]) -> None:
        self.driver = driver
        self.workspace = workspace
        self.restart_dir = restart_dir
        self.restarts = 0
        self.states: Dict[str, str] = {}

    def run_vector(self, path: Path) -> Dict[str, Any]:
        name = path.stem
        steps: List[Any] = []
        result: Dict[str, Any] = {"name": name, "steps": 0, "passed": False}
        watches: Dict[str, Tuple[int, EntryQueue]] = {}
        n = 0
        try:
            vector = json.loads(path.read_text())
            name = str(vector.get("name", name))
            steps = list(vector["steps"])
            result.update(name=name, steps=len(steps))
            env: Dict[str, Any] = {"ws": self.workspace}
            for n, step in enumerate(steps, 1):
                self.step(name, step, env, watches)
            result["passed"] = True
        except Exception as e:  # noqa: BLE001 - every failure is the vector's result
            if n:
                result["failedStep"] = n
            result["error"] = _describe(e)
        finally:
            for handle, _ in watches.values():
                try:
                    self.driver.close_watch(handle)
                except Exception:  # noqa: BLE001 - the vector's outcome is already set
                    pass
        return result

    def step(self, vector: str, raw: Dict[str, Any], env: Dict[str, Any], watches: Dict[str, Tuple[int, EntryQueue]]) -> None:
        kinds = [k for k in STEP_KINDS if k in raw]
        if len(kinds) != 1:
            raise StepFailed(f"a step names exactly one kind of {STEP_KINDS}, this one {kinds}")
        kind = kinds[0]
        unknown = set(raw) - {kind, *STEP_FIELDS[kind]}
        if unknown:
            raise StepFailed(f"unknown fields of a {kind} step: {sorted(unknown)}")
        step = substitute(raw, env)

        if kind == "call":
            self.call(vector, step, env)
        elif kind == "readState":
            req = parse(session_service_pb2.GetStateRequest, step.get("request", {}), "request")
            assert isinstance(req, session_service_pb2.GetStateRequest)
            self.check_response(vector, step, env, self.driver.read_state(req))
        elif kind == "readAll":
            ids = self.read_all(step["readAll"], step.get("request", {}))
            if ids != step["expectIds"]:
                raise StepFailed(f"read ids {ids}, expected {step['expectIds']}")
        elif kind == "watch":
            if step["watch"] in watches:
                raise StepFailed(f"watch {step['watch']!r} is open already")
            req = parse(session_service_pb2.WatchEntriesRequest, step.get("request", {}), "request")
            assert isinstance(req, session_service_pb2.WatchEntriesRequest)
            watches[step["watch"]] = self.driver.watch(req)
        elif kind == "watchNext":
            _, entries = self._watch(watches, step["watchNext"])
            want = step["expectIds"]
            got = [e.id for e in entries.take(len(want), WATCH_WAIT)]
            if got != want:
                raise StepFailed(f"watch {step['watchNext']!r} delivered {got}, expected {want}")
        elif kind == "watchClose":
            handle, _ = self._watch(watches, step["watchClose"])
            del watches[step["watchClose"]]
            self.driver.close_watch(handle)
        elif kind == "restartServer":
            self.restart()

    @staticmethod
    def _watch(watches: Dict[str, Tuple[int, EntryQueue]], name: str) -> Tuple[int, EntryQueue]:
        if name not in watches:
            raise StepFailed(f"no open watch named {name!r}")
        return watches[name]

    def call(self, vector: str, step: Dict[str, Any], env: Dict[str, Any]) -> None:
        rpc = step["call"]
        if rpc not in RPCS:
            raise StepFailed(f"{rpc!r} is not a unary RPC of StoreService / SessionService")
        cls = RPCS[rpc][0]
        # ONE request object for every send: the ids the client writes into it
        # on the first send go out again with each repeat.
        req = parse(cls, step.get("request", {}), "request")
        want_error = step.get("expectError")
        response: Optional[Message] = None
        for _ in range(1 + int(step.get("repeat", 0))):
            try:
                response = self.driver.call(rpc, req)
                err: Optional[SessiondError] = None
            except SessiondError as e:
                err = e
            if want_error is None:
                if err is not None:
                    raise StepFailed(f"{rpc} failed: {err.code_name}: {err.message}")
                continue
            if err is None:
                raise StepFailed(f"expected code {want_error}, got OK")
            if err.code_name != want_error:
                raise StepFailed(f"expected code {want_error}, got {err.code_name}: {err.message}")
            contains = step.get("expectMessageContains")
            if contains is not None and contains not in err.message:
                raise StepFailed(f"the {err.code_name} message {err.message!r} does not contain {contains!r}")
        if want_error is None:
            assert response is not None
            self.check_response(vector, step, env, response)

    def check_response(self, vector: str, step: Dict[str, Any], env: Dict[str, Any], response: Message) -> None:
        printed = as_json(response)
        if "expect" in step:
            why = match(step["expect"], printed)
            if why:
                raise StepFailed(f"expect: {why}")
        for var, path in step.get("save", {}).items():
            env[var] = dig(printed, path)
        if "state" in step:
            if not response.DESCRIPTOR.fields_by_name.get("state"):
                raise StepFailed(f"state: a {response.DESCRIPTOR.name} has no state field")
            state: Message = getattr(response, "state")
            blob = state.SerializeToString(deterministic=True)
            self.states[f"{vector}/{step['state']}"] = base64.b64encode(blob).decode()

    def read_all(self, rpc: str, request: Any) -> List[str]:
        """Pages to the end through the client's calls; the ids of everything read."""
        ids: List[str] = []
        if rpc == "SessionService.GetEntries":
            req = parse(session_service_pb2.GetEntriesRequest, request, "request")
            assert isinstance(req, session_service_pb2.GetEntriesRequest)
            for _ in range(100_000):
                page = self.driver.call(rpc, req)
                assert isinstance(page, session_service_pb2.GetEntriesResponse)
                if not page.entries:
                    return ids
                ids.extend(e.id for e in page.entries)
                req.after_seq = page.entries[-1].seq
                if req.after_seq >= page.head_seq:
                    return ids
        elif rpc == "StoreService.ListSessions":
            lreq = parse(store_service_pb2.ListSessionsRequest, request, "request")
            assert isinstance(lreq, store_service_pb2.ListSessionsRequest)
            for _ in range(100_000):
                lpage = self.driver.call(rpc, lreq)
                assert isinstance(lpage, store_service_pb2.ListSessionsResponse)
                ids.extend(s.id for s in lpage.sessions)
                if not lpage.next_page_token:
                    return ids
                lreq.page_token = lpage.next_page_token
        else:
            raise StepFailed(f"readAll of {rpc!r}: only SessionService.GetEntries and StoreService.ListSessions")
        raise StepFailed(f"readAll of {rpc}: no end after 100000 pages")

    def restart(self) -> None:
        """The handshake of conformance/README.md, Restarts: restart-<n>.request, then wait for restart-<n>.done."""
        if not self.restart_dir:
            raise StepFailed("no restart handshake (SESSIOND_RESTART_DIR is not set)")
        self.restarts += 1
        base = Path(self.restart_dir)
        (base / f"restart-{self.restarts}.request").write_bytes(b"")
        done = base / f"restart-{self.restarts}.done"
        deadline = time.monotonic() + RESTART_WAIT
        while not done.exists():
            if time.monotonic() > deadline:
                raise StepFailed(f"no {done.name} within {RESTART_WAIT:.0f} s")
            time.sleep(0.05)


def _describe(e: BaseException) -> str:
    if isinstance(e, StepFailed):
        return str(e)
    if isinstance(e, SessiondError):
        return f"{e.code_name}: {e.message}"
    return "".join(traceback.format_exception_only(type(e), e)).strip()


def main(argv: List[str]) -> int:
    if len(argv) != 2 or argv[1] not in ("sync", "async"):
        print("usage: conformance_runner.py sync|async", file=sys.stderr)
        return 2
    mode = argv[1]
    out = os.environ.get("CONFORMANCE_OUT", "")
    results: Dict[str, Any] = {"runner": f"python-{mode}", "vectors": [], "states": {}}
    ok = False
    try:
        addr = os.environ["SESSIOND_ADDR"]
        vectors = sorted(Path(os.environ["CONFORMANCE_VECTORS"]).glob("*.json"))
        workspace = os.environ["CONFORMANCE_WORKSPACE"]
        if not vectors:
            raise RuntimeError(f"no *.json in {os.environ['CONFORMANCE_VECTORS']}")
        driver: Driver = SyncDriver(addr) if mode == "sync" else AsyncDriver(addr)
        runner = Runner(driver, workspace, os.environ.get("SESSIOND_RESTART_DIR") or None)
        try:
            for path in vectors:
                r = runner.run_vector(path)
                results["vectors"].append(r)
                verdict = "ok" if r["passed"] else f"FAILED at step {r.get('failedStep', '-')}: {r['error']}"
                print(f"python-{mode} {r['name']}: {verdict}", flush=True)
        finally:
            results["states"] = runner.states
            driver.close()
        ok = all(r["passed"] for r in results["vectors"])
    except Exception as e:  # noqa: BLE001 - reported, and the results are still written
        print(f"python-{mode}: {_describe(e)}", file=sys.stderr)
        ok = False
    finally:
        if out:
            Path(out).write_text(json.dumps(results, indent=1) + "\n")
        else:
            print("CONFORMANCE_OUT is not set: the results go nowhere", file=sys.stderr)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
