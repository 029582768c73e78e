"""The caller's trace context on every call (sessiond.trace), with and without the opentelemetry API."""

from __future__ import annotations

import unittest
from typing import Dict

from sessiond import trace
from sessiond.metadata import CallDefaults

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


def _fake_inject(carrier: Dict[str, str]) -> None:
    """What opentelemetry.propagate.inject writes for an active, sampled span."""
    carrier["traceparent"] = TRACEPARENT
    carrier["tracestate"] = "vendor=1"
    carrier["baggage"] = "k=v"


class TraceHeadersTest(unittest.TestCase):
    def setUp(self) -> None:
        self._saved = trace._inject

    def tearDown(self) -> None:
        trace._inject = self._saved

    def test_sends_nothing_without_the_opentelemetry_api(self) -> None:
        trace._inject = None
        self.assertEqual(trace.trace_headers(), ())
        self.assertEqual(
            CallDefaults.for_token("t", None, None).metadata_for(None),
            (("authorization", "Bearer t"),),
        )

    def test_sends_the_active_span_as_traceparent_and_tracestate_only(self) -> None:
        trace._inject = _fake_inject
        md = CallDefaults().metadata_for([("x-extra", "1")])
        self.assertEqual(
            md, (("traceparent", TRACEPARENT), ("tracestate", "vendor=1"), ("x-extra", "1"))
        )

    def test_keeps_a_traceparent_the_caller_passes(self) -> None:
        trace._inject = _fake_inject
        mine = "00-11111111111111111111111111111111-2222222222222222-01"
        md = CallDefaults().metadata_for([("traceparent", mine)])
        self.assertEqual(md, (("traceparent", mine),))


if __name__ == "__main__":
    unittest.main()
