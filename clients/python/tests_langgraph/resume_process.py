"""Resumes a thread stopped at the human's question, in a process of its own.

``python resume_process.py WORKSPACE THREAD_ID ANSWER`` builds the graph on
a new SessiondSaver (nothing but the server remembers the thread), resumes
it with ``Command(resume=ANSWER)`` and prints the output as one JSON line
(LangChain's ``dumpd``).
"""

from __future__ import annotations

import json
import sys

import lg_support as s
from langchain_core.load import dumpd
from langgraph.types import Command

from sessiond.langgraph import SessiondSaver


def main(ws: str, thread_id: str, answer: str) -> None:
    with s.client() as c:
        graph = s.build(SessiondSaver(c, workspace=ws))
        out = graph.invoke(Command(resume=answer), {"configurable": {"thread_id": thread_id}})
    print(json.dumps(dumpd(out)))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3])
