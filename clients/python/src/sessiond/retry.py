"""When a failed unary call is tried again: the policy and the decision, without any I/O.

``SessiondClient`` and ``AsyncSessiondClient`` run the same loop (call,
and on failure ask ``Attempts.failed`` what next) and differ only in how
they call and how they wait, so the rules live here once:

- Only UNAVAILABLE is retried: the server is down or restarting, or the
  connection was lost mid-call. The request already carries the ids the
  client chose (``ids.fill_ids``), so an attempt that did reach the server
  is de-duplicated, not applied twice.
- ABORTED (a CAS conflict: ``expected_leaf_id`` / ``expected_seq``) and
  every other code are final: retrying would not change the answer.
- A DeleteSession whose earlier attempt had an unknown outcome (it may have
  deleted the session, its answer lost) and that now gets NOT_FOUND has
  succeeded: the caller wants the session gone, and it is.
- A session id the client drew in this call (``ids.SessionIdDraws``) is
  drawn again, and the request sent again, when the session the server
  finds under it is another's: ALREADY_EXISTS, or a CreateSession /
  ImportSession answered ``created=false``, while no earlier attempt with
  that id may have reached the server (with one that may have, the session
  is most likely that attempt's, the answer lost: ``created=false`` is the
  call's answer, as a retry is meant to give, and a ForkSession of the
  current leaf retried after the leaf moved is refused ALREADY_EXISTS by
  our own fork). At most ``ids.MAX_SESSION_ID_DRAWS`` draws;
  then the last answer or error is the call's. Each id starts the attempts
  afresh: no attempt carrying a new id has reached the server.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Optional

import grpc
from google.protobuf.message import Message

from .errors import SessiondError, status_of
from .ids import SessionIdDraws
from .v1 import store_service_pb2 as st

__all__ = ["Attempts", "RetryPolicy"]


@dataclass(frozen=True)
class RetryPolicy:
    """Retry of UNAVAILABLE unary calls (the TS client's defaults)."""

    #: Attempts in total, including the first.
    max_attempts: int = 5
    #: First backoff in seconds, doubled each attempt, with jitter.
    base_delay: float = 0.05
    #: Longest backoff in seconds.
    max_delay: float = 2.0

    def delay(self, attempt: int) -> float:
        """Backoff after failed attempt number ``attempt`` (1-based): half fixed, half jitter."""
        d = min(self.max_delay, self.base_delay * 2.0 ** (attempt - 1))
        return d / 2 + random.random() * (d / 2)


def not_sent(err: BaseException) -> bool:
    """UNAVAILABLE because no connection could be made: the server never saw the request.

    Anything else (a connection lost mid-call, a server going away) may
    have come after the server acted: the outcome is unknown. grpc-core
    says so only in the details, the same for the sync and the asyncio API.
    """
    return "failed to connect to all addresses" in status_of(err)[1]


class Attempts:
    """The attempts of one unary call: after each failure or answer, whether to try again.

    ``failed(err)`` answers with the pause (seconds) before the next
    attempt, or ``None`` when the call turns out to have succeeded (the
    DeleteSession rule above; the response is then ``succeeded_response``),
    or raises the ``SessiondError`` that ends the call. ``answered(res)``
    says whether an answer is not the call's after all (another session's:
    a new session id is in the request, send it again). ``draws``: the
    session id the call drew (none: the rules of drawn ids never apply).
    """

    def __init__(
        self, request: Message, policy: Optional[RetryPolicy], draws: Optional[SessionIdDraws] = None
    ) -> None:
        self._delete = isinstance(request, st.DeleteSessionRequest)
        self._policy = policy
        self._draws = draws if draws is not None else SessionIdDraws()
        #: 1-based number of the attempt that is running or just failed (since the last draw).
        self.attempt = 1
        #: An earlier attempt (with the session id sent now) may have been applied (its answer was lost).
        self.outcome_unknown = False

    def failed(self, err: grpc.RpcError) -> Optional[float]:
        code, _ = status_of(err)
        if self._delete and self.outcome_unknown and code == grpc.StatusCode.NOT_FOUND:
            return None
        if code == grpc.StatusCode.ALREADY_EXISTS and not self.outcome_unknown and self._draw_again():
            return 0.0  # another session holds the id drawn: at once with a new one
        policy = self._policy
        if policy is None or code != grpc.StatusCode.UNAVAILABLE or self.attempt >= policy.max_attempts:
            raise SessiondError.from_rpc_error(err) from None
        self.outcome_unknown = self.outcome_unknown or not not_sent(err)
        pause = policy.delay(self.attempt)
        self.attempt += 1
        return pause

    def answered(self, res: Message) -> bool:
        """Whether ``res`` is another session's, a new session id now in the request: send it again.

        ``created=false`` from a CreateSession / ImportSession under an id
        this call drew, no earlier attempt with it having maybe reached the
        server: the session was there before this call.
        """
        if not isinstance(res, (st.CreateSessionResponse, st.ImportSessionResponse)):
            return False
        return not res.created and not self.outcome_unknown and self._draw_again()

    def _draw_again(self) -> bool:
        if not self._draws.again():
            return False
        self.attempt = 1
        self.outcome_unknown = False
        return True

    @staticmethod
    def succeeded_response() -> st.DeleteSessionResponse:
        """What a DeleteSession that a lost attempt performed returns: an empty response."""
        return st.DeleteSessionResponse()
