"""Which store a `--state` value selects, and a DSN safe to log.

`postgresql://…` or `postgres://…` selects PostgreSQL; anything else is a SQLite file
path (or `:memory:`). The password may come from a file (`--state-password-file`) so that
it appears in neither the DSN, the environment nor the process list; a DSN is never
logged with its password.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import parse_qsl, urlsplit

from sidecar.store.errors import StateError

SCHEMES = ("postgresql://", "postgres://")
# user:password@ in the authority; a password may hold anything but '@' and '/'.
_PASSWORD = re.compile(r"^(?P<head>[a-z]+://[^:@/]*:)(?P<password>[^@/]*)(?P<tail>@)", re.I)
_QUERY_PASSWORD = re.compile(r"(?i)([?&]password=)[^&]*")


def is_postgres(state: str) -> bool:
    return state.lower().startswith(SCHEMES)


def masked(dsn: str) -> str:
    """The DSN with any password replaced by ***."""
    text = _PASSWORD.sub(r"\g<head>***\g<tail>", dsn)
    return _QUERY_PASSWORD.sub(r"\1***", text)


def check_dsn(dsn: str) -> None:
    """Refuse a DSN that cannot name a database, with the reason (never the password)."""
    parts = urlsplit(dsn)
    if not parts.hostname and "host" not in dict(parse_qsl(parts.query)):
        raise StateError(f"{masked(dsn)}: no host (postgresql://USER@HOST:PORT/DBNAME)")
    try:
        parts.port  # noqa: B018 (raises on a port that is not a number)
    except ValueError:
        raise StateError(f"{masked(dsn)}: the port is not a number") from None
    if not parts.path.strip("/"):
        raise StateError(f"{masked(dsn)}: no database name (postgresql://USER@HOST:PORT/DBNAME)")


def read_password(path: Path) -> str:
    """The password file's content without its final newline (as Kubernetes mounts it)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise StateError(f"state password file {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise StateError(f"state password file {path}: not UTF-8 text") from None
    password = text.rstrip("\r\n")
    if not password:
        raise StateError(f"state password file {path} is empty")
    return password


def describe(state: str) -> str:
    """How the store appears in logs: a masked DSN, or the SQLite path."""
    return masked(state) if is_postgres(state) else state
