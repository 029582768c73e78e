"""Bench client: ``list_sessions`` of one user's ADK sessions through the adapter vs bare ListSessions.

``python list_sessions.py '{"url": ..., "sessions": 10000, "calls": 30}'`` (and
``"workspace"``, default ``bench-adk``, which must hold no sessions yet)
(run by bench/scenarios/sa-adk-list-sessions.ts, with google-adk and this
package importable). Creates ``sessions`` sessions of one user through
``SessiondSessionService.create_session`` (many at once), then times
``calls`` calls of the adapter's ``list_sessions(app_name, user_id)`` and as
many bare ``ListSessions`` calls doing the same work: the same tag filter,
order and page size, every page. The two alternate, so that both see the
same machine. Prints one JSON line: the samples in milliseconds.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from typing import Any, Dict, List

from sessiond import AsyncSessiondClient
from sessiond.adk import SessiondSessionService
from sessiond.adk_state import APP_TAG, KIND_TAG, USER_TAG
from sessiond.v1.store_service_pb2 import SessionFilter, SortBy, SortOrder

APP = "bench-app"
USER = "bench-user"
PAGE = 1000
CREATING_AT_ONCE = 256


async def create(service: SessiondSessionService, count: int) -> None:
    gate = asyncio.Semaphore(CREATING_AT_ONCE)

    async def one(i: int) -> None:
        async with gate:
            await service.create_session(app_name=APP, user_id=USER, session_id=f"s-{i:06d}")

    await asyncio.gather(*(one(i) for i in range(count)))


async def bare_list(client: AsyncSessiondClient, workspace: str) -> int:
    """What a caller of sessiond writes by hand for the same listing: every page of the filtered ListSessions."""
    tags = {KIND_TAG: "session", APP_TAG: APP, USER_TAG: USER}
    count = 0
    token = ""
    while True:
        page = await client.store.list_sessions(
            workspace=workspace,
            filter=SessionFilter(tags=tags),
            sort_by=SortBy.SORT_BY_UPDATED,
            order=SortOrder.SORT_ORDER_OLDEST_FIRST,
            page_size=PAGE,
            page_token=token,
        )
        count += len(page.sessions)
        token = page.next_page_token
        if not token:
            return count


async def adapter_list(service: SessiondSessionService) -> int:
    listed = await service.list_sessions(app_name=APP, user_id=USER)
    return len(listed.sessions)


async def main(args: Dict[str, Any]) -> Dict[str, Any]:
    sessions = int(args["sessions"])
    calls = int(args["calls"])
    workspace = str(args.get("workspace", "bench-adk"))
    async with AsyncSessiondClient(args["url"], timeout=120.0) as client:
        service = SessiondSessionService(client, workspace)
        t0 = time.perf_counter()
        await create(service, sessions)
        create_ms = (time.perf_counter() - t0) * 1000
        for _ in range(3):  # warm-up: connections, caches, JIT-free but not import-free
            await adapter_list(service)
            await bare_list(client, workspace)
        adapter_ms: List[float] = []
        bare_ms: List[float] = []
        for _ in range(calls):
            t = time.perf_counter()
            listed = await adapter_list(service)
            adapter_ms.append((time.perf_counter() - t) * 1000)
            t = time.perf_counter()
            bare = await bare_list(client, workspace)
            bare_ms.append((time.perf_counter() - t) * 1000)
            if listed != sessions or bare != sessions:
                raise SystemExit(f"listed {listed} (adapter) and {bare} (bare) of {sessions} sessions")
    return {"sessions": sessions, "createMs": create_ms, "adapterMs": adapter_ms, "bareMs": bare_ms}


if __name__ == "__main__":
    print(json.dumps(asyncio.run(main(json.loads(sys.argv[1])))))
