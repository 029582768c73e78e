"""A connection that dies without closing: keepalive finds it and the watch goes on.

A proxy in front of the server freezes its open connections (no FIN, no
RST, silence both ways), as a lost host or a dropped NAT entry does. The
client's keepalive PING goes unanswered, grpc closes the connection, and
the watch resumes over a new one with no gap and no duplicate. The
negative control turns keepalive off: the same watch hears nothing more.
"""

from __future__ import annotations

import socket
import threading
import time
import unittest
from typing import Any, Callable, List, Tuple

from support import (
    TOKEN,
    URL,
    AsyncWatchCollector,
    WatchCollector,
    async_client,
    client,
    need_server,
    workspace,
)

from sessiond import AsyncSessiondClient, SessiondClient, new_entry_id, user_message

#: Short, so that a dead connection is found in about a second.
FAST_KEEPALIVE = (
    ("grpc.keepalive_time_ms", 500),
    ("grpc.keepalive_timeout_ms", 500),
)
NO_KEEPALIVE = (("grpc.keepalive_time_ms", 2**31 - 1),)


def setUpModule() -> None:
    need_server()


class FreezingProxy:
    """Forwards TCP to the server until ``freeze``; then its open connections carry nothing."""

    def __init__(self, target: Tuple[str, int]) -> None:
        self.target = target
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.lock = threading.Lock()
        self.links: List[List[object]] = []  # [client, upstream, frozen]
        self.accepted = 0
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                c, _ = self.listener.accept()
            except OSError:
                return
            up = socket.create_connection(self.target)
            link: List[object] = [c, up, False]
            with self.lock:
                self.accepted += 1
                self.links.append(link)
            threading.Thread(target=self._pipe, args=(link, c, up), daemon=True).start()
            threading.Thread(target=self._pipe, args=(link, up, c), daemon=True).start()

    def _pipe(self, link: List[object], src: socket.socket, dst: socket.socket) -> None:
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                return
            if not data:
                return
            with self.lock:
                frozen = link[2]
            if frozen:
                continue  # read and dropped: the peer sees silence, not an error
            try:
                dst.sendall(data)
            except OSError:
                return

    def freeze(self) -> None:
        with self.lock:
            for link in self.links:
                link[2] = True

    def close(self) -> None:
        self.listener.close()
        with self.lock:
            for link in self.links:
                for s in link[:2]:
                    s.close()  # type: ignore[attr-defined]


def _server_address() -> Tuple[str, int]:
    hostport = URL.split("://", 1)[-1].rstrip("/")
    host, port = hostport.rsplit(":", 1)
    return host, int(port)


class KeepaliveTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ws = workspace()
        self.direct = client()
        self.addCleanup(self.direct.close)
        self.proxy = FreezingProxy(_server_address())
        self.addCleanup(self.proxy.close)

    def _watch(self, options: Tuple[Tuple[str, int], ...]):  # type: ignore[no-untyped-def]
        sid = self.direct.store.create_session(workspace=self.ws).session.id
        # Cleartext HTTP/2 through the proxy, as to the server behind it.
        via = SessiondClient(
            f"http://127.0.0.1:{self.proxy.port}", token=TOKEN, options=options, timeout=20.0
        )
        self.addCleanup(via.close)
        reconnects: List[str] = []
        w = via.watch_entries(
            sid,
            workspace=self.ws,
            retry_delay=0.02,
            on_reconnect=lambda e, last: reconnects.append(e.code_name),
        )
        self.addCleanup(w.close)
        watch = WatchCollector(w)
        self.addCleanup(watch.close)
        seen: List[str] = []

        def wait_for(entry_id: str, timeout: float) -> bool:
            ok = watch.wait_for(lambda es: entry_id in [e.id for e in es], timeout)
            seen[:] = [e.id for e in watch.entries]
            return ok

        return sid, seen, reconnects, wait_for

    def _append(self, sid: str, text: str) -> str:
        e = user_message(text)
        e.id = new_entry_id()
        self.direct.session.append(workspace=self.ws, session=sid, entries=[e])
        return e.id

    def test_a_watch_finds_a_dead_connection_and_resumes_without_loss_or_duplicates(self) -> None:
        sid, seen, reconnects, wait_for = self._watch(FAST_KEEPALIVE)
        a = self._append(sid, "before the freeze")
        self.assertTrue(wait_for(a, 20), f"saw {seen}")
        self.proxy.freeze()
        b1 = self._append(sid, "after 1")
        b2 = self._append(sid, "after 2")
        t0 = time.monotonic()
        self.assertTrue(wait_for(b2, 20), f"saw {seen}, reconnects {reconnects}")
        elapsed = time.monotonic() - t0
        log = [e.id for e in self.direct.session.get_entries(workspace=self.ws, session=sid).entries]
        self.assertEqual(seen, log, "each entry once, in order")
        self.assertEqual(log[1:], [a, b1, b2])
        self.assertGreaterEqual(len(reconnects), 1)
        self.assertEqual(reconnects[0], "UNAVAILABLE")
        self.assertGreaterEqual(self.proxy.accepted, 2)
        self.assertLess(elapsed, 15, "found dead by the keepalive, not by anything slower")

    def test_negative_control_without_keepalive_the_watch_hears_nothing_more(self) -> None:
        sid, seen, reconnects, wait_for = self._watch(NO_KEEPALIVE)
        a = self._append(sid, "before the freeze")
        self.assertTrue(wait_for(a, 20), f"saw {seen}")
        self.proxy.freeze()
        b = self._append(sid, "after")
        # Several times what the test above needs to find the connection dead.
        self.assertFalse(wait_for(b, 5))
        self.assertEqual(reconnects, [])
        self.assertEqual(self.proxy.accepted, 1)


class AsyncKeepaliveTest(unittest.IsolatedAsyncioTestCase):
    """The same dead connection under an ``AsyncSessiondClient`` watch: grpc.aio takes the same options."""

    async def test_an_async_watch_finds_a_dead_connection_and_resumes(self) -> None:
        ws = workspace()
        proxy = FreezingProxy(_server_address())
        self.addCleanup(proxy.close)
        direct = async_client()
        self.addAsyncCleanup(direct.close)
        via = AsyncSessiondClient(
            f"http://127.0.0.1:{proxy.port}", token=TOKEN, options=FAST_KEEPALIVE, timeout=20.0
        )
        self.addAsyncCleanup(via.close)
        sid = (await direct.store.create_session(workspace=ws)).session.id
        reconnects: List[str] = []
        w = via.watch_entries(
            sid, workspace=ws, retry_delay=0.02, on_reconnect=lambda e, last: reconnects.append(e.code_name)
        )
        watch = AsyncWatchCollector(w)
        self.addAsyncCleanup(watch.close)

        async def append(text: str) -> str:
            e = user_message(text, id=new_entry_id())
            await direct.session.append(workspace=ws, session=sid, entries=[e])
            return e.id

        def has(entry_id: str) -> Callable[[List[Any]], bool]:
            return lambda es: entry_id in [e.id for e in es]

        a = await append("before the freeze")
        self.assertTrue(await watch.wait_for(has(a), 20))
        proxy.freeze()
        b1 = await append("after 1")
        b2 = await append("after 2")
        t0 = time.monotonic()
        self.assertTrue(await watch.wait_for(has(b2), 20), f"reconnects {reconnects}")
        elapsed = time.monotonic() - t0
        log = [e.id for e in (await direct.session.get_entries(workspace=ws, session=sid)).entries]
        self.assertEqual([e.id for e in watch.entries], log, "each entry once, in order")
        self.assertEqual(log[1:], [a, b1, b2])
        self.assertEqual(reconnects[:1], ["UNAVAILABLE"])
        self.assertGreaterEqual(proxy.accepted, 2)
        self.assertLess(elapsed, 15, "found dead by the keepalive, not by anything slower")


if __name__ == "__main__":
    unittest.main()
