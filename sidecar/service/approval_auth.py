"""Only the approval channel may answer: RecordDecision needs a token the agent does not have.

The agent and the runtime share the pod (and often the network namespace), so a network
address alone does not tell them apart. The runtime holds a token in a file the agent's
tools cannot read and sends it as `authorization: Bearer <token>` metadata.
"""

from __future__ import annotations

import enum
import hmac
from collections.abc import Iterable
from pathlib import Path

import grpc

from sidecar.config import ConfigError

METADATA_KEY = "authorization"
_SCHEME = "bearer "
MIN_TOKEN_LENGTH = 16


class AuthFailure(enum.Enum):
    MISSING = "missing"  # UNAUTHENTICATED
    WRONG = "wrong"  # PERMISSION_DENIED


def read_token(path: Path) -> bytes:
    """The token is the file's content without surrounding whitespace."""
    try:
        token = path.read_bytes().strip()
    except OSError as error:
        raise ConfigError(f"approval_token_file {path}: {error.strerror}") from None
    if len(token) < MIN_TOKEN_LENGTH:
        raise ConfigError(
            f"approval_token_file {path}: the token must be at least {MIN_TOKEN_LENGTH} bytes"
        )
    return token


class ApprovalGate:
    """None as token means no credential is configured: every caller may answer."""

    def __init__(self, token: bytes | None) -> None:
        self._token = token

    @property
    def required(self) -> bool:
        return self._token is not None

    def check(self, metadata: Iterable[tuple[str, str | bytes]] | None) -> AuthFailure | None:
        token = self._token
        if token is None:
            return None
        offered: bytes | None = None
        headers = 0
        for key, value in metadata or ():
            if key.lower() != METADATA_KEY:
                continue
            headers += 1
            text = value.encode("utf-8", "replace") if isinstance(value, str) else value
            if text[: len(_SCHEME)].lower() == _SCHEME.encode():
                offered = text[len(_SCHEME) :].strip()
        if headers > 1:
            return AuthFailure.WRONG  # two credentials: which one a proxy checked is unclear
        if offered is None:
            return AuthFailure.MISSING
        # Constant time: the comparison must not tell how much of a guess was right.
        return None if hmac.compare_digest(offered, token) else AuthFailure.WRONG


# The status a refused call gets, per failure (RecordDecision, DeleteSession).
AUTH_CODES = {
    AuthFailure.MISSING: (
        grpc.StatusCode.UNAUTHENTICATED,
        "this call needs the approval token (metadata authorization: Bearer <token>)",
    ),
    AuthFailure.WRONG: (grpc.StatusCode.PERMISSION_DENIED, "the approval token is not valid"),
}
