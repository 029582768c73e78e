"""Waiting between retries without stalling grpcio's reconnect (sync and asyncio)."""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Optional

import grpc
import grpc.aio

#: When the last connectivity watch of wait_reconnecting ended (time.monotonic()).
_last_watch_end = 0.0
#: How long grpcio's connectivity poller may still use a channel after its
#: watch is cancelled: it polls in rounds of 0.2 s and stops within two.
_POLLER_LINGER = 0.45


def wait_reconnecting(
    channel: Optional[grpc.Channel], seconds: float, stop: Optional[threading.Event] = None
) -> None:
    """Waits ``seconds`` (or until ``stop`` is set) while ``channel`` reconnects.

    grpcio's C core reads and writes a connection only while something polls
    the channel: an active call or a connectivity watch. A plain sleep
    between attempts leaves a new connection unattended, so its HTTP/2
    handshake stalls until the next call, which may fail fast (the channel
    is still in TRANSIENT_FAILURE) and let the attempt be dropped again:
    seen here as a client that never got through after a server restart.
    Watching the channel meanwhile drives the handshake.
    """
    ready = grpc.channel_ready_future(channel) if channel is not None else None
    try:
        if stop is not None:
            stop.wait(seconds)
        else:
            time.sleep(seconds)
    finally:
        if ready is not None:
            ready.cancel()
            global _last_watch_end
            _last_watch_end = time.monotonic()


def close_channel(channel: grpc.Channel) -> None:
    """Closes ``channel`` once grpcio's connectivity poller has let go of it.

    The watch of wait_reconnecting runs on a grpcio thread that goes on
    polling the channel for up to two rounds of 0.2 s after the watch is
    cancelled (longer when a later watch asked it to connect). A channel
    closed meanwhile makes that thread print "ValueError: Cannot invoke RPC:
    Channel closed!" with its traceback on stderr (a grpcio race, harmless
    otherwise, but it lands in the caller's output). So a close within
    ``_POLLER_LINGER`` of the last watch waits out the rest of it.
    """
    wait = _last_watch_end + _POLLER_LINGER - time.monotonic()
    if wait > 0:
        time.sleep(wait)
    channel.close()


async def await_reconnecting(
    channel: Optional[grpc.aio.Channel], seconds: float, stop: Optional[asyncio.Event] = None
) -> None:
    """The asyncio form of ``wait_reconnecting``: waits ``seconds`` (or until ``stop`` is set).

    grpc.aio polls its channels all the time (a poller thread), so a new
    connection's handshake goes on while the event loop sleeps; what the
    wait must still do is ask for a connection: a channel that went IDLE
    (the server closed it) connects again only when asked, and the next
    attempt should find it connecting or ready, not start from scratch.
    """
    if channel is not None:
        channel.get_state(try_to_connect=True)
    if stop is None:
        await asyncio.sleep(seconds)
        return
    try:
        await asyncio.wait_for(stop.wait(), seconds)
    except asyncio.TimeoutError:
        pass
