"""The first process of test_runner.py's script: two turns with tool calls and a pop_item.

``python first_process.py URL WORKSPACE SESSION_ID SQLITE_FILE OUT_JSON`` runs
them on a SessiondSession and on the SDK's SQLiteSession (a file), each
with its own scripted model, writes what each model was sent and what
pop_item returned to OUT_JSON, and exits: the test carries on in its own
process from what the sessions kept.
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any, Dict

from agents import SQLiteSession
from agents.testing import ScriptedModel
from oa_support import run, script

from sessiond import AsyncSessiondClient
from sessiond.openai_agents import SessiondSession


async def first_half(session: Any) -> Dict[str, Any]:
    model = ScriptedModel(script()[:4])
    await run(model, "What is 1+2?", session)
    await run(model, "And 2+5?", session)
    popped = await session.pop_item()
    return {"inputs": [call.input for call in model.calls], "popped": [popped]}


async def main(url: str, workspace: str, session_id: str, sqlite_file: str, out: str) -> None:
    async with AsyncSessiondClient(url, timeout=20.0) as client:
        ours = await first_half(SessiondSession(session_id, client=client, workspace=workspace))
    theirs = await first_half(SQLiteSession(session_id, sqlite_file))
    with open(out, "w", encoding="utf-8") as f:
        json.dump({"sessiond": ours, "sqlite": theirs}, f)


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
