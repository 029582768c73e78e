#!/usr/bin/env python3
"""Holds one WatchEntries stream open with plain grpcio and reports what arrives.

Used by test/integration/idle-timeout.test.ts (and by hand for long runs) to
show that a live stream survives the server's idle timeout. Generate the
message classes as described in sessiond_client.py, then:

    /usr/bin/python3 test/python/watch_entries.py 127.0.0.1:50051 /tmp/sessiond-py \\
        --workspace W --session ID --seconds 600

Prints one JSON line per message ({"t": seconds since start, "event":
"heartbeat"} or {"t", "event": "entry", "seq", "id"}), then a last line
{"end": "deadline"} when the stream stayed open --seconds after its first
message, or {"end": "error", "code": ..., "details": ...} when the stream was
ended (CANCELLED when no message came within a minute). The seconds count
from the first message, not from the start: on a loaded machine connecting
can take a good part of a short run, and the stream must be open that long.
"""

import argparse
import json
import sys
import threading
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("target", help="server address, host:port")
    p.add_argument("gen_dir", help="directory holding the generated sessiond/v1/*_pb2.py")
    p.add_argument("--workspace", required=True)
    p.add_argument("--session", required=True)
    p.add_argument("--after-seq", type=int, default=0)
    p.add_argument("--seconds", type=float, required=True, help="cancel the stream this long after its first message")
    return p.parse_args()


args = parse_args()
sys.path.insert(0, args.gen_dir)

import grpc  # noqa: E402
from sessiond.v1 import session_service_pb2 as sess  # noqa: E402


def emit(line):
    print(json.dumps(line), flush=True)


def main():
    start = time.monotonic()
    channel = grpc.insecure_channel(args.target)
    watch = channel.unary_stream(
        "/sessiond.v1.SessionService/WatchEntries",
        request_serializer=sess.WatchEntriesRequest.SerializeToString,
        response_deserializer=sess.WatchEntriesResponse.FromString,
    )
    stream = watch(
        sess.WatchEntriesRequest(workspace=args.workspace, session=args.session, after_seq=args.after_seq)
    )
    deadline_hit = threading.Event()

    def cancel_at_deadline():
        deadline_hit.set()
        stream.cancel()

    timer = threading.Timer(args.seconds, cancel_at_deadline)
    never_opened = threading.Timer(60, stream.cancel)
    never_opened.start()
    try:
        for event in stream:
            t = round(time.monotonic() - start, 3)
            if not timer.is_alive() and not deadline_hit.is_set():
                never_opened.cancel()
                timer.start()
            if event.WhichOneof("event") == "entry":
                emit({"t": t, "event": "entry", "seq": event.entry.seq, "id": event.entry.id})
            else:
                emit({"t": t, "event": "heartbeat"})
        emit({"t": round(time.monotonic() - start, 3), "end": "error", "code": "OK", "details": "stream ended"})
    except grpc.RpcError as err:
        t = round(time.monotonic() - start, 3)
        if deadline_hit.is_set() and err.code() == grpc.StatusCode.CANCELLED:
            emit({"t": t, "end": "deadline"})
        else:
            emit({"t": t, "end": "error", "code": err.code().name, "details": err.details()})
    finally:
        never_opened.cancel()
        timer.cancel()
        channel.close()


if __name__ == "__main__":
    main()
