"""Bearer tokens and TLS, against servers started for them (skipped without their env vars)."""

from __future__ import annotations

import os
import unittest

from sessiond import (
    AsyncSessiondClient,
    RetryPolicy,
    SessiondClient,
    SessiondError,
    text_of,
    user_message,
)

AUTH_URL = os.environ.get("SESSIOND_AUTH_URL", "")
AUTH_TOKEN = os.environ.get("SESSIOND_AUTH_TOKEN", "")
TLS_URL = os.environ.get("SESSIOND_TLS_URL", "")
TLS_CA = os.environ.get("SESSIOND_TLS_CA", "")


@unittest.skipUnless(AUTH_URL and AUTH_TOKEN, "SESSIOND_AUTH_URL / SESSIOND_AUTH_TOKEN not set")
class TokenTest(unittest.TestCase):
    def test_token_is_sent_as_bearer(self) -> None:
        with SessiondClient(AUTH_URL, token=AUTH_TOKEN) as c:
            sid = c.store.create_session(title="authed").session.id
            self.assertEqual(c.store.get_session(session=sid).session.title, "authed")

    def test_missing_or_wrong_token_is_unauthenticated_and_not_retried(self) -> None:
        for token in (None, AUTH_TOKEN + "x"):
            with SessiondClient(AUTH_URL, token=token) as c, self.assertRaises(SessiondError) as cm:
                c.store.list_sessions()
            self.assertEqual(cm.exception.code_name, "UNAUTHENTICATED")


@unittest.skipUnless(TLS_URL and TLS_CA, "SESSIOND_TLS_URL / SESSIOND_TLS_CA not set")
class TlsTest(unittest.TestCase):
    def test_tls_with_the_ca(self) -> None:
        with SessiondClient(TLS_URL, ca=TLS_CA) as c:
            sid = c.store.create_session().session.id
            c.session.append(session=sid, entries=[user_message("over tls")])
            self.assertEqual(text_of(c.session.get_state(session=sid)), "over tls")

    def test_tls_without_the_ca_fails_the_handshake(self) -> None:
        once = RetryPolicy(max_attempts=1)
        with SessiondClient(TLS_URL, retry=once, timeout=10) as c, self.assertRaises(SessiondError) as cm:
            c.store.list_sessions()
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")

    def test_cleartext_to_a_tls_port_fails(self) -> None:
        plain = TLS_URL.replace("https://", "http://")
        once = RetryPolicy(max_attempts=1)
        with SessiondClient(plain, retry=once, timeout=10) as c, self.assertRaises(SessiondError):
            c.store.list_sessions()


@unittest.skipUnless(AUTH_URL and AUTH_TOKEN, "SESSIOND_AUTH_URL / SESSIOND_AUTH_TOKEN not set")
class AsyncTokenTest(unittest.IsolatedAsyncioTestCase):
    async def test_token_is_sent_as_bearer_and_a_wrong_one_is_refused(self) -> None:
        async with AsyncSessiondClient(AUTH_URL, token=AUTH_TOKEN) as c:
            sid = (await c.store.create_session(title="authed")).session.id
            self.assertEqual((await c.store.get_session(session=sid)).session.title, "authed")
        async with AsyncSessiondClient(AUTH_URL, token=AUTH_TOKEN + "x") as c:
            with self.assertRaises(SessiondError) as cm:
                await c.store.list_sessions()
            self.assertEqual(cm.exception.code_name, "UNAUTHENTICATED")


@unittest.skipUnless(TLS_URL and TLS_CA, "SESSIOND_TLS_URL / SESSIOND_TLS_CA not set")
class AsyncTlsTest(unittest.IsolatedAsyncioTestCase):
    async def test_tls_with_the_ca(self) -> None:
        async with AsyncSessiondClient(TLS_URL, ca=TLS_CA) as c:
            sid = (await c.store.create_session()).session.id
            await c.session.append(session=sid, entries=[user_message("over tls")])
            self.assertEqual(text_of(await c.read_state(session=sid)), "over tls")

    async def test_tls_without_the_ca_fails_the_handshake(self) -> None:
        once = RetryPolicy(max_attempts=1)
        async with AsyncSessiondClient(TLS_URL, retry=once, timeout=10) as c:
            with self.assertRaises(SessiondError) as cm:
                await c.store.list_sessions()
        self.assertEqual(cm.exception.code_name, "UNAVAILABLE")


if __name__ == "__main__":
    unittest.main()
