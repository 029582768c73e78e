"""A LangGraph graph (scripted model, a tool, a human interrupt) on SessiondSaver, against InMemorySaver.

The same scenario (run to the human's question, resume, time-travel to
the question and answer otherwise, fork by ``update_state`` before the
tool) must show the same outputs, states and histories on both savers:
in one process, with the resume in a new process that has nothing but
the server, and on the async API. Then what sessiond holds: the thread's
checkpoint tree is the session's tree, a channel that keeps its version is
stored once, and a subgraph's namespace is a subagent session.
"""

from __future__ import annotations

import asyncio
import base64
import json
import unittest
from typing import Any, Dict, List

from google.protobuf import json_format
from langchain_core.load import load
from langchain_core.messages import HumanMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import START, StateGraph
from langgraph.types import Command

import lg_support as s

from sessiond import SessiondClient
from sessiond.langgraph import CHECKPOINT_NS, WRITES_NS, SessiondSaver
from sessiond.v1.entry_pb2 import Entry


def entries(c: SessiondClient, ws: str, session: str) -> List[Entry]:
    """Every entry of a session, raw."""
    out: List[Entry] = []
    while True:
        page = c.session.get_entries(workspace=ws, session=session, after_seq=len(out), limit=1000)
        out.extend(page.entries)
        if not page.entries or len(out) >= page.head_seq:
            return out


def data(e: Entry) -> Dict[str, Any]:
    return json_format.MessageToDict(e.custom.data)


def _decoded(e: Entry) -> bytes:
    """The payloads of an entry's values and writes, decoded (base64 off)."""
    d = data(e)
    items = d.get("values", []) + d.get("writes", [])
    if "checkpoint" in d:
        items.append(d["checkpoint"])
    return b"".join(base64.b64decode(i.get("b64", "")) for i in items)


class GraphEqualsInMemorySaver(unittest.TestCase):
    def setUp(self) -> None:
        s.need_server()

    def test_scenario_equals_in_memory_saver(self) -> None:
        """Run, interrupt, resume, time travel and two forks: equal outputs, states and histories."""
        expected = s.scenario(InMemorySaver(), "thread-1")
        with s.client() as c:
            got = s.scenario(SessiondSaver(c, workspace=s.workspace()), "thread-1")
        self.assertEqual(expected["run"]["__interrupt__"], [{"interrupt": {"question": "The answer is 42. Shall I send it?"}}])
        self.assertEqual(len(expected["after_update"]["history"]), 14)
        for step in expected:
            self.assertEqual(got[step], expected[step], step)

    def test_resume_in_a_new_process_equals_in_memory_saver(self) -> None:
        """The interrupted thread is resumed by another process that knows nothing but the server."""
        ws = s.workspace()
        expected = s.scenario(InMemorySaver(), "thread-2")

        def resume() -> Any:
            out = s.run_process("resume_process.py", ws, "thread-2", "yes, send it")
            return load(json.loads(out))

        with s.client() as c:
            got = s.scenario(SessiondSaver(c, workspace=ws), "thread-2", resume=resume)
        self.assertEqual(got["resume"]["messages"][-1]["content"], "Sent.")
        for step in expected:
            self.assertEqual(got[step], expected[step], step)

    def test_async_api_equals_in_memory_saver(self) -> None:
        """ainvoke to the interrupt, resume, then a time-travel fork; aget_state and history equal."""

        async def scenario(saver: Any) -> Dict[str, Any]:
            ids = s.Renamer()
            graph = s.build(saver)
            config = {"configurable": {"thread_id": "thread-3"}}
            out: Dict[str, Any] = {}
            q = {"messages": [HumanMessage(content="What is 4 times 5?", id="q1")]}
            out["run"] = s.plain(await graph.ainvoke(q, config), ids)
            out["resume"] = s.plain(await graph.ainvoke(Command(resume="yes"), config), ids)
            history = [h async for h in graph.aget_state_history(config)]
            before_tools = next(h for h in history if h.next == ("tools",))
            out["fork"] = s.plain(await graph.ainvoke(None, before_tools.config), ids)
            out["fork_resume"] = s.plain(await graph.ainvoke(Command(resume="no"), config), ids)
            out["state"] = s._snap(await graph.aget_state(config), ids)
            out["history"] = [s._snap(h, ids) async for h in graph.aget_state_history(config)]
            return out

        async def on_sessiond() -> Dict[str, Any]:
            async with s.aclient() as c:
                return await scenario(SessiondSaver(c, workspace=s.workspace()))

        expected = asyncio.run(scenario(InMemorySaver()))
        got = asyncio.run(on_sessiond())
        self.assertEqual(expected["fork_resume"]["messages"][-1]["content"], "Not sent.")
        for step in expected:
            self.assertEqual(got[step], expected[step], step)


class WhatSessiondHolds(unittest.TestCase):
    def setUp(self) -> None:
        s.need_server()

    def test_the_checkpoint_tree_is_the_session_tree(self) -> None:
        """Each checkpoint entry's parent is its parent checkpoint's entry; forks are branches; writes hang under theirs."""
        ws = s.workspace()
        with s.client() as c:
            s.scenario(SessiondSaver(c, workspace=ws), "tree")
            log = entries(c, ws, "tree")
            tree = c.session.get_tree(workspace=ws, session="tree")
        root = log[0]
        self.assertEqual(root.session_info.tags["langgraph.kind"], "thread")
        cps = {data(e)["checkpoint_id"]: e for e in log if e.custom.namespace == CHECKPOINT_NS}
        self.assertEqual(len(cps), 14)
        for cid, e in cps.items():
            parent = data(e).get("parent_checkpoint_id")
            self.assertEqual(e.parent_id, cps[parent].id if parent else root.id, cid)
            self.assertEqual(e.id, f"cp-{cid}")
        children: Dict[str, int] = {}
        for e in cps.values():
            children[e.parent_id] = children.get(e.parent_id, 0) + 1
        self.assertEqual([n for n in children.values() if n > 1], [3])  # the run, the fork, the update
        writes = [e for e in log if e.custom.namespace == WRITES_NS]
        self.assertTrue(writes)
        for e in writes:
            # LangGraph may store a step's writes before the checkpoint they belong
            # to (both from background threads): such writes hang under the root.
            mine = cps[data(e)["checkpoint_id"]]
            self.assertEqual(e.parent_id, root.id if e.seq < mine.seq else mine.id)
        self.assertEqual({n.id for n in tree.nodes}, {e.id for e in log})

    def test_a_channel_that_keeps_its_version_is_stored_once(self) -> None:
        """A 100 KB document given once and never changed: one copy in the log, however many checkpoints name it."""
        ws = s.workspace()
        document = "lorem ipsum " * 9000
        with s.client() as c:
            graph = s.build(SessiondSaver(c, workspace=ws))
            config = {"configurable": {"thread_id": "doc"}}
            first = {"messages": [HumanMessage(content="What is 2 times 21?", id="q1")], "document": document}
            graph.invoke(first, config)
            graph.invoke(Command(resume="yes"), config)
            self.assertEqual(graph.get_state(config).values["document"], document)
            log = entries(c, ws, "doc")
        cps = [data(e) for e in log if e.custom.namespace == CHECKPOINT_NS]
        stored = [(v["channel"], v["version"]) for cp in cps for v in cp["values"]]
        self.assertEqual(len(stored), len(set(stored)), "a channel version stored twice")
        self.assertEqual([ch for ch, _ in stored].count("document"), 1)
        self.assertEqual(len(cps), 6)
        # Six checkpoints name the document; LangGraph's input (the __start__
        # channel and the input task's writes) holds it too, as on every saver.
        held = [e for e in log if document.encode() in _decoded(e)]
        self.assertEqual(len(held), 3)

    def test_a_subgraph_namespace_is_a_subagent_session(self) -> None:
        """A subgraph that interrupts: its checkpoints in a subagent session; resume equals InMemorySaver."""

        def run(saver: Any) -> Dict[str, Any]:
            ids = s.Renamer()
            outer = StateGraph(s.State)
            outer.add_node("assistant", s.build(None))
            outer.add_edge(START, "assistant")
            graph = outer.compile(checkpointer=saver)
            config = {"configurable": {"thread_id": "outer"}}
            out: Dict[str, Any] = {}
            q = {"messages": [HumanMessage(content="What is 6 times 9?", id="q1")]}
            out["run"] = s.plain(graph.invoke(q, config), ids)
            state = graph.get_state(config, subgraphs=True)
            out["inner"] = s._snap(state.tasks[0].state, ids)
            out["resume"] = s.plain(graph.invoke(Command(resume="yes"), config), ids)
            out["after"] = s.snapshot(graph, config, ids)
            return out

        expected = run(InMemorySaver())
        ws = s.workspace()
        with s.client() as c:
            got = run(SessiondSaver(c, workspace=ws))
            subs = c.store.list_sessions(workspace=ws, parent_session_id="outer").sessions
        self.assertEqual(expected["inner"]["next"], ["human"])
        for step in expected:
            self.assertEqual(got[step], expected[step], step)
        self.assertEqual(len(subs), 1)
        self.assertEqual(subs[0].agent_type, "langgraph-subgraph")
        self.assertTrue(subs[0].tags["langgraph.ns"].startswith("assistant:"))
