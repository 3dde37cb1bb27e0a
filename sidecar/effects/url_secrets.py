"""Credentials carried in the URLs a call sends (a web fetch tool's URL, curl's or wget's):
in the query string or the path, percent-encoded or not. The credential shapes are the
secret scanner's (sidecar/secrets.py); this module only finds where in a URL a value stands:
a nested URL with a password (`?q=DATABASE_URL%3Dpostgres%3A%2F%2Fadmin%3AS3cr3t%40db`),
a parameter named for a secret (`password=`, `token=` with a random value), a shape that
percent-encoding hid from the scanner (`-----BEGIN%20RSA%20PRIVATE%20KEY-----`).

The URL's own userinfo (`https://user:token@host/`) is not counted: that is the credential
presented to the host it belongs to, not carried to somewhere else.
"""

from __future__ import annotations

from urllib.parse import unquote_plus

import re2

from sidecar.secrets import SecretScanner, shannon_entropy

_MAX_URLS = 32
_MAX_URL = 8192
_URL = re2.compile(r"(?i)\b[a-z][a-z0-9+.-]*://[^\s\"'<>`\\]+")
# A URL inside the rest with a password in its userinfo (any scheme: postgres, redis, amqp).
_NESTED_PASSWORD = re2.compile(r"(?i)[a-z0-9]://[^\s/:@?#&=\"']*:([^\s/@?#&\"']+)@")
# `name=value` and `name:value` pairs, in a query, a fragment or a path segment.
# A value in a query may hold `/` (base64); in a path it ends the segment: both are read.
_PAIRS = (
    re2.compile(r"(?i)(?:^|[?&;/#,\s=])([a-z0-9_.\-\[\]]{2,64})[=:]([^&;/#,\s=]*)"),
    re2.compile(r"(?i)(?:^|[?&;#,\s=])([a-z0-9_.\-\[\]]{2,64})[=:]([^&;#,\s=]*)"),
)
_PASSWORD_NAMES = re2.compile(
    r"(?i)^(?:[a-z0-9_.-]*[_.-])?(?:pass|passwd|password|passphrase|pwd|secret|"
    r"client[_-]?secret|secret[_-]?(?:access[_-]?)?key)$"
)
_TOKEN_NAMES = re2.compile(
    r"(?i)^(?:[a-z0-9_.-]*[_.-])?(?:token|access[_-]?token|auth[_-]?token|api[_-]?key|"
    r"apikey|access[_-]?key|private[_-]?key|auth|key|session[_-]?id|bearer|credentials?)$"
)
# Signed-URL parameters: a signature or temporary credential made to be handed out.
_SIGNED = re2.compile(r"(?i)^(?:x-amz-|x-goog-|sig$|signature$|sv$|se$|sp$|policy$|expires$)")
# Every finding below needs one of these past the host: `=`/`:` for a pair or a nested
# URL's password, `%`/`+` for a decoding that differs from the text as written.
_MAY_CARRY = frozenset("=:%+")
_PLACEHOLDER = re2.compile(
    r"(?i)^(?:\$.*|<.*>|\{.*\}|\*+|x+|\.+|password|passwd|pass|secret|token|changeme|"
    r"example|redacted|null|none|true|false|undefined|your[_-].*|\d{1,8})$"
)


def secrets_in_urls(text: str, scanner: SecretScanner) -> list[str]:
    """Kinds of credentials that URLs in the text carry (empty when none)."""
    if "://" not in text:
        return []
    if text.count(":") == 1 and "=" not in text and "%" not in text and "+" not in text:
        return []  # one URL, whose only `:` is its scheme's, and nothing else `_in_url` needs
    kinds: list[str] = []
    for url in _URL.findall(text)[:_MAX_URLS]:
        kinds.extend(_in_url(url[:_MAX_URL], scanner))
    return list(dict.fromkeys(kinds))


def _in_url(url: str, scanner: SecretScanner) -> list[str]:
    rest = _past_host(url)
    if not rest or not _MAY_CARRY.intersection(rest):
        return []  # no pair, no nested userinfo, nothing encoded: most URLs, cheaply
    kinds: list[str] = []
    for decoded in _decodings(rest):
        if decoded != rest:  # percent-encoding may hide a shape from the scanner
            kinds.extend(match.kind for match in scanner.find(decoded))
        for password in _NESTED_PASSWORD.findall(decoded):
            if _PLACEHOLDER.search(password) is None:
                kinds.append("url_password")
        for pairs in _PAIRS:
            for name, value in pairs.findall(decoded):
                kinds.extend(_named(name, value))
    return kinds


def _past_host(url: str) -> str:
    """The URL past its scheme and host: from the first `/`, `?` or `#` after `://`. String
    operations, not an RE2 substitution (~10 us). `url` is a match of `_URL`, possibly cut
    short before its `://` (then it is returned whole)."""
    start = url.find("://")
    if start < 0:
        return url
    start += 3
    ends = [i for i in (url.find("/", start), url.find("?", start), url.find("#", start)) if i >= 0]
    return url[min(ends) :] if ends else ""


def _decodings(rest: str) -> list[str]:
    """The text as written and percent-decoded (twice: `%253D` is `=` encoded twice)."""
    found = [rest]
    for _ in range(2):
        decoded = unquote_plus(found[-1])
        if decoded == found[-1]:
            break
        found.append(decoded)
    return found


def _named(name: str, value: str) -> list[str]:
    if _SIGNED.search(name) is not None or _PLACEHOLDER.search(value) is not None:
        return []
    if _PASSWORD_NAMES.search(name) is not None and len(value) >= 6:
        return ["password_in_url"]
    if _TOKEN_NAMES.search(name) is not None and _random(value):
        return ["token_in_url"]
    return []


def _random(value: str) -> bool:
    """Long, mixing letters and digits, with high entropy: a key, not a word or an id."""
    return (
        len(value) >= 16
        and any(c.isdigit() for c in value)
        and any(c.isalpha() for c in value)
        and shannon_entropy(value) >= 3.5
    )
