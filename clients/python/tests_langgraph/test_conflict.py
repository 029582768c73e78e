"""Two writers of one thread: the later one gets CheckpointConflictError instead of a silent fork.

Two savers (two processes' worth: own clients, own copies of the session)
read the same latest checkpoint and both continue it: the first stores,
the second is refused and stores nothing. The control: a writer that asks
for a fork (a ``checkpoint_id`` of its own choosing, as time travel does)
stores its branch. Then the same under LangGraph's loop: a run paused
inside a node while another run moves the thread on fails when it saves.
"""

from __future__ import annotations

import threading
import unittest
from typing import Any, Dict, List, Optional, TypedDict

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.base.id import uuid6
from langgraph.graph import END, START, StateGraph

import lg_support as s

from sessiond.langgraph import LATEST_MARK, CheckpointConflictError, SessiondSaver


def checkpoint() -> Any:
    cp = empty_checkpoint()
    cp["id"] = str(uuid6(clock_seq=-1))
    return cp


def put(saver: SessiondSaver, config: RunnableConfig, step: int) -> RunnableConfig:
    return saver.put(config, checkpoint(), {"source": "loop", "step": step, "parents": {}}, {})


class TwoWriters(unittest.TestCase):
    def setUp(self) -> None:
        s.need_server()
        self.ws = s.workspace()
        self.a_client, self.b_client = s.client(), s.client()
        self.a = SessiondSaver(self.a_client, workspace=self.ws)
        self.b = SessiondSaver(self.b_client, workspace=self.ws)
        self.thread = {"configurable": {"thread_id": "shared", "checkpoint_ns": ""}}
        self.first = put(self.a, self.thread, 0)

    def tearDown(self) -> None:
        self.a_client.close()
        self.b_client.close()

    def ids(self) -> List[str]:
        return [t.checkpoint["id"] for t in self.a.list(self.thread)]

    def test_the_second_writer_of_the_latest_checkpoint_gets_a_conflict(self) -> None:
        """Both read the latest; A stores its next checkpoint; B's is refused, nothing of it stored."""
        read_a = self.a.get_tuple(self.thread)
        read_b = self.b.get_tuple(self.thread)
        assert read_a is not None and read_b is not None
        self.assertEqual(read_b.config["configurable"][LATEST_MARK], self.first["configurable"]["checkpoint_id"])
        stored = put(self.a, read_a.config, 1)
        with self.assertRaises(CheckpointConflictError) as caught:
            put(self.b, read_b.config, 1)
        err = caught.exception
        self.assertEqual(err.parent_id, self.first["configurable"]["checkpoint_id"])
        self.assertEqual(err.latest_id, stored["configurable"]["checkpoint_id"])
        self.assertIn("no longer the latest", str(err))
        self.assertIn("'shared'", str(err))
        self.assertEqual(len(self.ids()), 2)
        latest = self.b.get_tuple(self.thread)
        assert latest is not None
        self.assertEqual(latest.checkpoint["id"], stored["configurable"]["checkpoint_id"])

    def test_a_fork_asked_for_by_checkpoint_id_is_stored(self) -> None:
        """The control: B names the checkpoint it continues (time travel), so its branch is stored."""
        read_a = self.a.get_tuple(self.thread)
        assert read_a is not None
        put(self.a, read_a.config, 1)
        addressed = self.b.get_tuple({"configurable": {**self.thread["configurable"], **self.first["configurable"]}})
        assert addressed is not None
        self.assertNotIn(LATEST_MARK, addressed.config["configurable"])
        forked = put(self.b, addressed.config, 1)
        self.assertEqual(len(self.ids()), 3)
        tup = self.a.get_tuple(forked)
        assert tup is not None and tup.parent_config is not None
        self.assertEqual(tup.parent_config["configurable"]["checkpoint_id"], self.first["configurable"]["checkpoint_id"])

    def test_writers_of_other_checkpoints_are_no_conflict(self) -> None:
        """Pending writes by another writer move the session's head, not the latest checkpoint: A re-plans and stores."""
        read_a = self.a.get_tuple(self.thread)
        assert read_a is not None
        self.b.put_writes(self.first, [("ch", "from b")], "task-b")
        stored = put(self.a, read_a.config, 1)
        self.assertEqual(self.ids()[0], stored["configurable"]["checkpoint_id"])


class Counter(TypedDict):
    n: int


RELEASE = threading.Event()
PAUSED = threading.Event()


def slow(state: Counter, config: RunnableConfig) -> Dict[str, int]:
    if config["configurable"].get("pause"):
        PAUSED.set()
        RELEASE.wait(60)
    return {"n": state["n"] + 1}


class TwoRunsOfOneThread(unittest.TestCase):
    def test_a_run_overtaken_by_another_fails_when_it_saves(self) -> None:
        """Run B pauses in its node; run A moves the thread on; B's save raises, A's result stands."""
        s.need_server()
        ws = s.workspace()
        g = StateGraph(Counter)
        g.add_node("slow", slow)
        g.add_edge(START, "slow")
        g.add_edge("slow", END)
        with s.client() as ca, s.client() as cb:
            run_a = g.compile(checkpointer=SessiondSaver(ca, workspace=ws))
            run_b = g.compile(checkpointer=SessiondSaver(cb, workspace=ws))
            config: RunnableConfig = {"configurable": {"thread_id": "counter"}}
            self.assertEqual(run_a.invoke({"n": 1}, config), {"n": 2})
            failure: List[Optional[BaseException]] = [None]

            def b() -> None:
                try:
                    # durability="sync": B's checkpoints before its node are stored
                    # before the node runs (so before run A starts).
                    run_b.invoke(
                        {"n": 10},
                        {"configurable": {"thread_id": "counter", "pause": True}},
                        durability="sync",
                    )
                except BaseException as err:  # noqa: BLE001 - handed to the test thread
                    failure[0] = err

            RELEASE.clear()
            PAUSED.clear()
            worker = threading.Thread(target=b)
            worker.start()
            self.assertTrue(PAUSED.wait(60))
            self.assertEqual(run_a.invoke({"n": 100}, config), {"n": 101})
            RELEASE.set()
            worker.join(60)
            self.assertIsInstance(failure[0], CheckpointConflictError)
            self.assertEqual(run_a.get_state(config).values, {"n": 101})
            history = [h.values for h in run_a.get_state_history(config)]
            self.assertNotIn({"n": 11}, history)
