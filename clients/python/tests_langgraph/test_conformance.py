"""LangGraph's own conformance suite (langgraph-checkpoint-conformance) against SessiondSaver.

Every case of the base capabilities (put, put_writes, get_tuple, list,
delete_thread) is a test of its own, twice: the saver on an
``AsyncSessiondClient`` (its async driver) and on a ``SessiondClient``
alone (its sync driver, which the async methods then run in a thread).
Each case gets a fresh saver in a workspace of its own, as ``validate``
gives each capability a fresh saver. ``test_validate_report`` runs the
suite's own runner and checks its verdict: the base capabilities pass, and
the extended ones (delete_for_runs, copy_thread, prune) are reported not
implemented: the saver does not have them (the client README says why).
"""

from __future__ import annotations

import asyncio
import unittest
from typing import Any, AsyncIterator, Awaitable, Callable

from langgraph.checkpoint.conformance import checkpointer_test, validate
from langgraph.checkpoint.conformance.spec.test_delete_thread import ALL_DELETE_THREAD_TESTS
from langgraph.checkpoint.conformance.spec.test_get_tuple import ALL_GET_TUPLE_TESTS
from langgraph.checkpoint.conformance.spec.test_list import ALL_LIST_TESTS
from langgraph.checkpoint.conformance.spec.test_put import ALL_PUT_TESTS
from langgraph.checkpoint.conformance.spec.test_put_writes import ALL_PUT_WRITES_TESTS

import lg_support as s

from sessiond.langgraph import SessiondSaver

CASES = {
    "put": ALL_PUT_TESTS,
    "put_writes": ALL_PUT_WRITES_TESTS,
    "get_tuple": ALL_GET_TUPLE_TESTS,
    "list": ALL_LIST_TESTS,
    "delete_thread": ALL_DELETE_THREAD_TESTS,
}


async def _on_async_client(case: Callable[[Any], Awaitable[None]]) -> None:
    async with s.aclient() as c:
        await case(SessiondSaver(c, workspace=s.workspace("conf")))


async def _on_sync_client(case: Callable[[Any], Awaitable[None]]) -> None:
    with s.client() as c:
        await case(SessiondSaver(c, workspace=s.workspace("conf")))


def _test(run: Callable[..., Awaitable[None]], case: Callable[[Any], Awaitable[None]]) -> Callable[[Any], None]:
    def test(self: unittest.TestCase) -> None:
        s.need_server()
        asyncio.run(run(case))

    test.__doc__ = case.__doc__
    return test


class ConformanceOnAsyncClient(unittest.TestCase):
    """Each base case, SessiondSaver over an AsyncSessiondClient."""


class ConformanceOnSyncClient(unittest.TestCase):
    """Each base case, SessiondSaver over a SessiondClient only (async methods run it in a thread)."""


for capability, cases in CASES.items():
    for case in cases:
        name = f"test_{capability}__{case.__name__.removeprefix('test_')}"
        setattr(ConformanceOnAsyncClient, name, _test(_on_async_client, case))
        setattr(ConformanceOnSyncClient, name, _test(_on_sync_client, case))


class ValidateReport(unittest.TestCase):
    def test_validate_report(self) -> None:
        """The suite's own runner: every base capability passes; the extended ones are not implemented."""
        s.need_server()

        async def main() -> Any:
            async with s.aclient() as c:

                @checkpointer_test(name="SessiondSaver")
                async def saver() -> AsyncIterator[SessiondSaver]:
                    yield SessiondSaver(c, workspace=s.workspace("conf"))

                return await validate(saver)

        report = asyncio.run(main())
        failures = {k: r.failures for k, r in report.results.items() if r.failures}
        self.assertEqual(failures, {})
        self.assertTrue(report.passed_all_base())
        passed = {k: r.tests_passed for k, r in report.results.items() if r.detected}
        self.assertEqual(
            passed, {"put": 17, "put_writes": 10, "get_tuple": 10, "list": 16, "delete_thread": 5}
        )
        missing = {k for k, r in report.results.items() if not r.detected}
        self.assertEqual(missing, {"delete_for_runs", "copy_thread", "prune"})
