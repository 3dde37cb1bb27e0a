"""Hosts named in command words: URLs, user@host:path, host:port, bare host names."""

from __future__ import annotations

import re2

URL = re2.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://(?:[^/?#@]*@)?(\[[0-9A-Fa-f:.]+\]|[^/:?#]+)")
_USER_HOST = re2.compile(
    r"^(?:[^@/\s]+@)?([A-Za-z0-9.-]+\.[A-Za-z]{2,}|\d{1,3}(?:\.\d{1,3}){3}|localhost)(?::|$)"
)
_HOSTLIKE = re2.compile(r"^([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+|\d{1,3}(?:\.\d{1,3}){3}|localhost)$")
_SOCKET_SPEC = re2.compile(r"(?i)^(?:tcp|udp|tcp4|tcp6|openssl|ssl)[a-z0-9-]*:([^:,]+):\d+")
_DEV_TCP = re2.compile(r"^/dev/(?:tcp|udp)/([^/]+)/\d+")


def host_of(word: str) -> str:
    """The host a word names, lower-cased, or "" if it names none."""
    # Each pattern is tried only where the text it needs is there: an RE2 call costs
    # microseconds, and most words are paths and flags that name no host.
    if "://" in word:
        url = URL.search(word)
        if url:
            return str(url.group(1)).strip("[]").lower()
    found = (_SOCKET_SPEC.search(word) if ":" in word else None) or (
        _DEV_TCP.search(word) if word.startswith("/dev/") else None
    )
    if found:
        return str(found.group(1)).lower()
    if word.startswith(("-", "/", ".", "~")) or ("." not in word and "localhost" not in word):
        return ""  # both need a dot or `localhost`; neither counts after these
    found = _USER_HOST.search(word) or _HOSTLIKE.search(word)
    if found:
        return str(found.group(1)).lower()
    return ""


def is_url(word: str) -> bool:
    return URL.search(word) is not None
