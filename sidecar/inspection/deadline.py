"""The deadline of the inspector now running, for work that can stop part-way.

The chain runs a heavy batch's local inspectors in a worker thread under the link's
timeout. When the timeout passes the chain stops waiting and applies the link's
on_error at once; the thread learns of it here, at its next check (once per call,
where the call's shell analysis is fetched), and stops. A context variable carries
it so that inspectors' signatures stay as they are: each thread runs in its own copy
of the context, so concurrent Inspects never see each other's deadline.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from contextvars import ContextVar
from typing import TypeVar

_DEADLINE: ContextVar[float] = ContextVar("inspector_deadline", default=math.inf)
R = TypeVar("R")


class InspectorTimeout(Exception):
    """The running inspector passed its deadline; the chain applies its on_error."""


def run_with_deadline(deadline: float, work: Callable[[], R]) -> R:
    """Run work with `check()` raising past deadline (a time.perf_counter() value).
    Call it inside a copied context (contextvars.copy_context().run)."""
    _DEADLINE.set(deadline)
    return work()


def check() -> None:
    limit = _DEADLINE.get()
    if limit != math.inf and time.perf_counter() > limit:  # no clock read on the loop
        raise InspectorTimeout
