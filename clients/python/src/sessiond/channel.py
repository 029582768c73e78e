"""What a client's channel is made of: address, credentials and options, from the constructor's arguments.

``SessiondClient`` opens a ``grpc.Channel`` and ``AsyncSessiondClient`` a
``grpc.aio.Channel`` from the same ``ChannelSettings``, so that both read a
target, a CA or a keepalive option the same way.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import grpc

__all__ = ["DEFAULT_TARGET", "ChannelSettings", "Pem", "channel_settings", "parse_target"]

DEFAULT_TARGET = "127.0.0.1:50051"

#: PEM bytes, PEM text, or the path of a PEM file.
Pem = Union[bytes, str, "os.PathLike[str]", None]

#: Channel options: reconnect quickly after a server restart (grpc's default
#: first backoff is 1 s growing to 120 s, during which calls fail at once).
#: The longest backoff, 250 ms, is below what the default retry waits in all
#: (4 pauses, 50 ms doubling, half of each jitter: 0.375 to 0.75 s): with
#: 2 s, a channel that had backed off through an outage of a few seconds was
#: still waiting to reconnect when every attempt of a call made right after
#: the server came back had failed (tests/test_restart.py, the conformance
#: vector 07). A down server costs a few refused connects a second per
#: channel that has calls waiting. Then keepalive: a connection that dies without a word (the server's host
#: lost power, a NAT or proxy dropped it) sends no FIN and no RST, so a call
#: on it, a watch above all, would wait forever. While calls are open and
#: nothing has arrived for 20 s, grpc sends a PING; no answer within 10 s
#: closes the connection, its calls fail with UNAVAILABLE, and the resumable
#: watch and the retry go on over a new one. A watch's heartbeats are
#: traffic, so a healthy watch is never pinged; an idle channel is not
#: either. ``options`` given to a client override any of these (e.g.
#: ``("grpc.keepalive_time_ms", 2**31 - 1)`` for no PING at all).
CHANNEL_OPTIONS: Tuple[Tuple[str, Any], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 100),
    ("grpc.min_reconnect_backoff_ms", 100),
    ("grpc.max_reconnect_backoff_ms", 250),
    ("grpc.keepalive_time_ms", 20_000),
    ("grpc.keepalive_timeout_ms", 10_000),
    ("grpc.keepalive_permit_without_calls", 0),
    # grpc stops pinging after 2 PINGs without data by default; a long call
    # with no data (none of sessiond's streams is one: heartbeats) stays covered.
    ("grpc.http2.max_pings_without_data", 0),
    # Since grpc-core's ping rework (grpcio 1.5x), an unanswered keepalive PING
    # closes the connection only after grpc.http2.ping_timeout_ms (default
    # 60 s), whatever keepalive_timeout_ms says (measured with grpcio 1.85.1:
    # a frozen connection with keepalive_timeout_ms 500 was still open after
    # 20 s). It follows keepalive_timeout_ms unless given (channel_settings).
    ("grpc.http2.ping_timeout_ms", 10_000),
)


@dataclass(frozen=True)
class ChannelSettings:
    """The arguments of ``grpc[.aio].insecure_channel`` / ``secure_channel``."""

    #: ``host:port``.
    address: str
    #: TLS credentials, or None for cleartext HTTP/2.
    credentials: Optional[grpc.ChannelCredentials]
    #: One value per key: the caller's over the client's own.
    options: List[Tuple[str, Any]]


def read_pem(v: Pem) -> Optional[bytes]:
    """PEM bytes, PEM text, or a path to a PEM file."""
    if v is None or isinstance(v, bytes):
        return v
    s = os.fspath(v)
    if s.lstrip().startswith("-----BEGIN"):
        return s.encode()
    with open(s, "rb") as f:
        return f.read()


def parse_target(url: str) -> Tuple[str, Optional[bool]]:
    """``http://h:p`` (cleartext), ``https://h:p`` (TLS) or a bare ``h:p`` (either: None)."""
    for scheme, tls in (("http://", False), ("https://", True)):
        if url.startswith(scheme):
            return url[len(scheme) :].rstrip("/"), tls
    return url, None


def channel_settings(
    target: str,
    *,
    tls: Optional[bool],
    ca: Pem,
    cert: Pem,
    key: Pem,
    options: Sequence[Tuple[str, Any]],
) -> ChannelSettings:
    """The channel a client's arguments describe (see ``SessiondClient``)."""
    address, scheme_tls = parse_target(target)
    if scheme_tls is False and (tls or ca is not None):
        raise ValueError("an http:// target is cleartext; use https:// for TLS")
    use_tls = scheme_tls or bool(tls) or ca is not None or cert is not None
    # One value per key, the caller's over ours: grpc does not promise
    # which of two values of a key it reads.
    merged: Dict[str, Any] = dict(CHANNEL_OPTIONS)
    merged.update(options)
    given = dict(options)
    if "grpc.keepalive_timeout_ms" in given and "grpc.http2.ping_timeout_ms" not in given:
        merged["grpc.http2.ping_timeout_ms"] = given["grpc.keepalive_timeout_ms"]
    creds = (
        grpc.ssl_channel_credentials(
            root_certificates=read_pem(ca),
            private_key=read_pem(key),
            certificate_chain=read_pem(cert),
        )
        if use_tls
        else None
    )
    return ChannelSettings(address, creds, list(merged.items()))
