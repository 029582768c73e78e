"""One grpcio channel calling grpc.health.v1.Health/Check every 100 ms (5 s
deadline), as a client fleet does while its server restarts. Prints
`UP <unix ms>` at the first success after a failure (or at start) and
`DOWN <unix ms> <error>` at the first failure after a success, for
t12-reconnect.ts. argv: port, backoff ("default" or "short": 100-500 ms,
min connect timeout 100 ms)."""
import sys
import time

import grpc

port, backoff = int(sys.argv[1]), sys.argv[2]
options = []
if backoff == "short":
    options = [
        ("grpc.initial_reconnect_backoff_ms", 100),
        ("grpc.max_reconnect_backoff_ms", 500),
        ("grpc.min_reconnect_backoff_ms", 100),
    ]
channel = grpc.insecure_channel(f"127.0.0.1:{port}", options=options)
check = channel.unary_unary("/grpc.health.v1.Health/Check")
up = None
while True:
    try:
        check(b"", timeout=5)
        if up is not True:
            print(f"UP {int(time.time() * 1000)}", flush=True)
        up = True
    except grpc.RpcError as err:
        if up is not False:
            print(f"DOWN {int(time.time() * 1000)} {err.details()}", flush=True)
        up = False
    time.sleep(0.1)
