"""What can go wrong with the state store, as the rest of the sidecar sees it."""

from __future__ import annotations


class StoreUnavailable(Exception):
    """The store cannot be reached or used right now (a lost database, a full disk, a
    pool exhausted past its timeout). Context calls answer UNAVAILABLE; Inspect follows
    the configured `state_unavailable` policy (fail closed); nothing is acknowledged."""


class StoreConflict(Exception):
    """Another writer (a replica, a worker) changed the same rows first."""


class StateError(Exception):
    """The state store cannot be used at all (a bad path or DSN, a schema newer than this
    sidecar knows); the message names it, never a password. The sidecar refuses to start."""
