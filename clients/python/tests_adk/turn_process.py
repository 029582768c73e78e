"""One scripted turn through ADK's Runner over sessiond, in a process of its own.

``python turn_process.py WORKSPACE SESSION_ID COUNTER_START TEXT`` runs the
turn and prints, as one JSON line, the contents the model was sent: the
agent "restarted", with nothing but the server to remember the session.
"""

from __future__ import annotations

import asyncio
import json
import sys

import support_adk as s

from sessiond.adk import SessiondSessionService


async def main(ws: str, session_id: str, start: int, text: str) -> None:
    s.deterministic(start)
    model = s.ScriptedLlm()
    model.requests = []
    async with s.client() as c:
        await s.turn(s.runner(SessiondSessionService(c, ws), model), session_id, text)
    print(json.dumps(model.requests))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]))
