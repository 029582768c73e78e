"""The caller's W3C trace context, sent with every call so the server's spans join its trace.

The ``opentelemetry`` API is optional: when it is installed, the context of
the active span goes out as ``traceparent`` / ``tracestate`` metadata, as
its configured propagator writes them (``opentelemetry.propagate.inject``);
without it, nothing is sent. A ``traceparent`` the caller passes in
``headers`` is kept instead.
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Dict, Optional, Tuple

_HEADERS = ("traceparent", "tracestate")
_UNSET: Any = object()
#: ``opentelemetry.propagate.inject``, None without the API; looked up on first use.
_inject: Any = _UNSET


def _injector() -> Optional[Callable[[Dict[str, str]], None]]:
    global _inject
    if _inject is _UNSET:
        # importlib, not an import statement: the API is optional, so a type
        # checker must not require its stubs (and it is typed by hand here).
        try:
            _inject = importlib.import_module("opentelemetry.propagate").inject
        except ImportError:
            _inject = None
    found: Optional[Callable[[Dict[str, str]], None]] = _inject
    return found


def trace_headers() -> Tuple[Tuple[str, str], ...]:
    """``traceparent`` (and ``tracestate``) of the active span, or nothing."""
    inject = _injector()
    if inject is None:
        return ()
    carrier: Dict[str, str] = {}
    inject(carrier)
    return tuple((k, carrier[k]) for k in _HEADERS if k in carrier)
