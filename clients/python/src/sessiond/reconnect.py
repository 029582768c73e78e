"""Waiting between retries without stalling grpcio's reconnect."""

from __future__ import annotations

import threading
import time
from typing import Optional

import grpc


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
