"""What the LangGraph saver's tests share: the live server, and a graph with a scripted model and a tool.

Environment: ``SESSIOND_URL`` (the server; without it every test is
skipped), ``SESSIOND_TOKEN`` (its bearer token, if any).

The graph: an agent node whose "model" is a script (it answers from the
state alone, so two processes and two savers get the same answers), a
``multiply`` tool run by LangGraph's ``ToolNode``, and a human node that
``interrupt``s for an approval. ``scenario`` drives it through a run, an
interrupt, a resume (optionally in a new process), a time-travel fork from
the checkpoint before the question and an ``update_state`` fork, and
returns everything a user sees, with the random ids (message ids,
checkpoint ids) replaced by their order of appearance, so that the same
scenario on ``InMemorySaver`` must give an equal result.
"""

from __future__ import annotations

import os
import subprocess
import sys
import unittest
import uuid
from typing import Annotated, Any, Callable, Dict, List, Optional, TypedDict

from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.prebuilt import ToolNode
from langgraph.types import Command, interrupt

from sessiond import AsyncSessiondClient, SessiondClient

URL = os.environ.get("SESSIOND_URL", "")
TOKEN = os.environ.get("SESSIOND_TOKEN") or None
HERE = os.path.dirname(os.path.abspath(__file__))


def need_server() -> None:
    if not URL:
        raise unittest.SkipTest("SESSIOND_URL is not set: no live server to test against")


def client() -> SessiondClient:
    return SessiondClient(URL, TOKEN)


def aclient() -> AsyncSessiondClient:
    return AsyncSessiondClient(URL, TOKEN)


def workspace(prefix: str = "lg") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


# ---- the graph


@tool
def multiply(a: int, b: int) -> int:
    """Multiplies two integers."""
    return a * b


class State(TypedDict, total=False):
    messages: Annotated[List[AnyMessage], add_messages]
    document: str
    sent: bool


def scripted_model(state: State) -> Dict[str, Any]:
    """The "model": a reply chosen by the last message, the same in every process."""
    last = state["messages"][-1]
    if isinstance(last, HumanMessage):
        text = str(last.content)
        numbers = [int(w) for w in text.replace("?", " ").split() if w.isdigit()]
        a, b = (numbers + [6, 7])[:2]
        call = {"name": "multiply", "args": {"a": a, "b": b}, "id": f"call-{a}-{b}"}
        return {"messages": [AIMessage(content="", tool_calls=[call])]}
    if isinstance(last, ToolMessage):
        return {"messages": [AIMessage(content=f"The answer is {last.content}. Shall I send it?")]}
    return {"messages": [AIMessage(content="Done.")]}


def route(state: State) -> str:
    last = state["messages"][-1]
    if isinstance(last, AIMessage) and last.tool_calls:
        return "tools"
    if isinstance(last, AIMessage) and str(last.content).endswith("Shall I send it?"):
        return "human"
    return END


def human(state: State) -> Dict[str, Any]:
    """Asks the human (an interrupt); the answer comes back with ``Command(resume=...)``."""
    question = str(state["messages"][-1].content)
    answer = interrupt({"question": question})
    sent = str(answer).lower().startswith("yes")
    reply = AIMessage(content="Sent." if sent else "Not sent.")
    return {"messages": [HumanMessage(content=str(answer)), reply], "sent": sent}


def build(checkpointer: BaseCheckpointSaver[Any]) -> Any:
    g = StateGraph(State)
    g.add_node("agent", scripted_model)
    g.add_node("tools", ToolNode([multiply]))
    g.add_node("human", human)
    g.add_edge(START, "agent")
    g.add_conditional_edges("agent", route, ["tools", "human", END])
    g.add_edge("tools", "agent")
    g.add_edge("human", END)
    return g.compile(checkpointer=checkpointer)


# ---- what a user sees, without the random ids


class Renamer:
    """Replaces random ids by their order of appearance (``m0``, ``c0`` ...)."""

    def __init__(self) -> None:
        self.names: Dict[str, str] = {}

    def __call__(self, kind: str, value: Optional[str]) -> Optional[str]:
        if value is None:
            return None
        if value not in self.names:
            self.names[value] = f"{kind}{sum(1 for n in self.names.values() if n.startswith(kind))}"
        return self.names[value]


def plain(value: Any, ids: Renamer) -> Any:
    if isinstance(value, BaseMessage):
        out: Dict[str, Any] = {"type": value.type, "content": value.content, "id": ids("m", value.id)}
        if isinstance(value, AIMessage):
            out["tool_calls"] = [{k: c[k] for k in ("name", "args", "id")} for c in value.tool_calls]
        if isinstance(value, ToolMessage):
            out["tool_call_id"] = value.tool_call_id
            out["name"] = value.name
        return out
    if isinstance(value, dict):
        return {k: plain(v, ids) for k, v in sorted(value.items())}
    if isinstance(value, (list, tuple)):
        return [plain(v, ids) for v in value]
    if hasattr(value, "value") and hasattr(value, "id") and type(value).__name__ == "Interrupt":
        return {"interrupt": plain(value.value, ids)}
    return value


def snapshot(graph: Any, config: Dict[str, Any], ids: Renamer) -> Dict[str, Any]:
    """The thread as ``get_state`` and ``get_state_history`` show it, ids renamed."""
    state = graph.get_state(config)
    history = list(graph.get_state_history(config))
    return {
        "state": _snap(state, ids),
        "history": [_snap(s, ids) for s in history],
    }


def _snap(s: Any, ids: Renamer) -> Dict[str, Any]:
    md = s.metadata or {}
    parent = s.parent_config["configurable"]["checkpoint_id"] if s.parent_config else None
    return {
        "checkpoint": ids("c", s.config["configurable"]["checkpoint_id"]),
        "parent": ids("c", parent),
        "values": plain(s.values, ids),
        "next": list(s.next),
        "source": md.get("source"),
        "step": md.get("step"),
        "interrupts": [plain(i.value, ids) for t in s.tasks for i in t.interrupts],
    }


# ---- the scenario

QUESTION = "What is 6 times 7?"


def first_run(graph: Any, config: Dict[str, Any], ids: Renamer) -> Any:
    """The run up to the human's question (an interrupt)."""
    return plain(graph.invoke({"messages": [HumanMessage(content=QUESTION, id="q1")]}, config), ids)


def scenario(
    saver: BaseCheckpointSaver[Any],
    thread_id: str,
    resume: Optional[Callable[[], Any]] = None,
) -> Dict[str, Any]:
    """Run, interrupt, resume (by ``resume()``, say in a new process), time travel and fork.

    Returns the outputs of every invoke and the thread's state and history
    after each step, ids renamed.
    """
    ids = Renamer()
    graph = build(saver)
    config = {"configurable": {"thread_id": thread_id}}
    out: Dict[str, Any] = {}
    out["run"] = first_run(graph, config, ids)
    out["after_run"] = snapshot(graph, config, ids)
    if resume is None:
        out["resume"] = plain(graph.invoke(Command(resume="yes, send it"), config), ids)
    else:
        out["resume"] = plain(resume(), ids)
    out["after_resume"] = snapshot(graph, config, ids)
    # Time travel: back to the checkpoint before the tool ran, and on from there: a
    # branch that asks again, and takes another answer.
    before_tools = next(s for s in graph.get_state_history(config) if s.next == ("tools",))
    out["fork"] = plain(graph.invoke(None, before_tools.config), ids)
    out["fork_resume"] = plain(graph.invoke(Command(resume="no, keep it"), config), ids)
    out["after_fork"] = snapshot(graph, config, ids)
    # A fork by update_state: before the tool ran, a new question.
    forked = graph.update_state(
        before_tools.config,
        {"messages": [HumanMessage(content="What is 3 times 5?", id="q2")]},
        as_node="tools",
    )
    out["update"] = plain(graph.invoke(None, forked), ids)
    out["after_update"] = snapshot(graph, config, ids)
    return out


def run_process(*args: str) -> str:
    """Runs ``python <args>`` from this directory; its stdout (fails on a non-zero exit)."""
    done = subprocess.run(
        [sys.executable, *args],
        cwd=HERE,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [HERE, os.environ.get("PYTHONPATH")]))},
    )
    if done.returncode != 0:
        raise AssertionError(f"{args} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout
