"""Recognise credentials in text so they can be blocked and masked (RE2, linear time).

Two kinds of knowledge:
- *shapes*: credentials recognisable on their own (an AWS key id, a GitHub token). The egress
  inspector denies calls that would send one out; masking keeps a short prefix of each.
- *positions*: text that is secret because of where it stands, whatever it looks like (the
  value of `PGPASSWORD=`, a URL's userinfo password, `mysql -p…`, a PEM block's body, a
  high-entropy value assigned to anything). Masking hides the whole value. Positions are
  only masked, never used to block: they are too broad to deny calls on.

Texts are often JSON (canonical arguments, log lines), so values may sit in `"…"` or `\\"…\\"`.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Any

import re2

# (kind, pattern). Kept specific: a broad pattern here masks ordinary text and,
# in the egress inspector, blocks ordinary calls.
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"),
    ("github_pat", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    # Personal, runner, deploy, pipeline-trigger, feed, incoming-mail, agent, OAuth tokens.
    ("gitlab_token", r"\bgl(?:pat|rt|dt|ptt|ft|imt|cbt|oas|soat)-[A-Za-z0-9_-]{20,}\b"),
    ("slack_token", r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9-]{10,}\b"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}\b"),
    # Also sk-proj-, sk-svcacct-, sk-admin-: the class takes their dash.
    ("openai_key", r"\bsk-[A-Za-z0-9_-]{20,}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("stripe_key", r"\b(?:(?:sk|rk)_live_[0-9A-Za-z]{20,}\b|whsec_[A-Za-z0-9]{24,}\b)"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )?PRIVATE KEY-----"),
    ("huggingface_token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("npm_token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    # Every PyPI token's macaroon starts with the same bytes (base64 of its location).
    ("pypi_token", r"\bpypi-AgE[A-Za-z0-9_-]{39,}[A-Za-z0-9]\b"),
    ("sendgrid_key", r"\bSG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}\b"),
    ("shopify_token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
    ("digitalocean_token", r"\bdo[por]_v1_[a-f0-9]{64}\b"),
    ("vault_token", r"\bhv[sbr]\.[A-Za-z0-9_-]{23,}[A-Za-z0-9]\b"),
    ("databricks_token", r"\bdapi[a-f0-9]{32}\b"),
    (
        "grafana_token",
        r"\b(?:glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}\b|glc_[A-Za-z0-9+/]{31,}[A-Za-z0-9]\b)",
    ),
    ("age_secret_key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b"),
    ("telegram_bot_token", r"\b[0-9]{8,10}:AA[A-Za-z0-9_-]{33}\b"),
)

# A value: quoted (plain, JSON-escaped or single quotes) or a bare word. Each alternative
# is a group; whichever took part is masked whole.
_VALUE = (
    r"""(?:\\"((?:[^"\\]|\\[^"])*)\\"|"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|"""
    r"""([^\s"'\\,;&|<>(){}\[\]`]+))"""
)
_BLANK = r"(?:[ \t]|\\t)"  # a space or tab, also as JSON escapes it
_QUOTE = r"""(?:\\?["'])?"""  # an optional quote, plain or JSON-escaped
# A value attached to a short option (`-p'x'`, `-pX`): quoted, or up to a shell operator.
_ATTACHED = (
    r"""(?:\\"((?:[^"\\]|\\[^"])*)\\"|"((?:[^"\\\n]|\\.)*)"|'([^'\n]*)'|"""
    r"""([^\s"'\\;&|]+))"""
)
# Within one command of a line: no operator between the program and its option.
_SAME_COMMAND = r"[^|;&\n]*?"
_WORD = r"""[^\s"'\\|;&-][^\s"'\\|;&]*"""
_SEPARATOR = rf"""(?:\\?["'])?{_BLANK}*[:=]{_BLANK}*"""
# Names whose value is a secret: PGPASSWORD, client_secret, GITHUB_TOKEN, x-api-key, MYSQL_PWD…
_SECRET_NAME = (
    r"(?:pass(?:word|wd|phrase)|secret|token|credentials?"  # noqa: S105 (names, not a password)
    r"|[_.-](?:key|pass|pwd|auth)|(?:api|access|account|secret|private|master)key|sshpass"
    r"|(?:^|[^a-z0-9_.-])auth)"
)
# `--password`, `--db-pass`, `--aws-secret-access-key`, `--client-token`; not `--password-stdin`.
_SECRET_OPTION = (
    r"--(?:[a-z0-9-]*(?:pass(?:word|wd|phrase)|secret|token|api-?key|credentials?)"  # noqa: S105
    r"(?:-(?:access-key|key|value|string|literal|text))?|pass|pw|pwd)"
)


def _option_of(programs: str, option: str, *, attached_only: bool = False) -> str:
    """The value of `option` given to one of `programs`, attached or after blanks."""
    gap = "" if attached_only else f"{_BLANK}*"
    return rf"\b(?:{programs})\b{_SAME_COMMAND}{_BLANK}{option}{gap}{_ATTACHED}"


POSITION_PATTERNS: tuple[tuple[str, str], ...] = (
    # The whole block, not just its BEGIN line; to the END line, or as far as it looks
    # like key material when the END line is missing (a truncated key is still a key).
    (
        "pem_block",
        r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"(?:((?:[^\"\\]|\\.)*?)-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----"
        r"|((?:[A-Za-z0-9+/=:,.\t\r\n -]|\\+[rnt])*))",
    ),
    # Any scheme (https, s3, git+ssh) ends in a letter or digit right before "://".
    ("url_password", r"(?i)[a-z0-9]://[^\s/:@\"'\\]*:([^\s/@\"'\\]+)@"),
    # Go's MySQL DSN has no scheme: user:password@tcp(host:3306)/db.
    ("dsn_password", r"""[^\s/:@"'\\(=]*:([^\s"'\\]+)@(?:tcp|udp|unix)\("""),
    ("named_secret", rf"(?i){_SECRET_NAME}{_SEPARATOR}{_VALUE}"),
    # `"pwd": …` and ODBC's `Pwd=…`, but not the shell's PWD=/home/u.
    ("short_name", rf"""(?i)\\?["'](?:pwd|pw|pass)\\?["']{_BLANK}*:{_BLANK}*{_VALUE}"""),
    ("short_name", r"""(?i)(?:^|[;\s"'{])pwd=([^\s/~"'\\;&|][^\s"'\\;&|]*)"""),
    ("password_option", rf"(?i){_SECRET_OPTION}(?:=|{_BLANK}+){_VALUE}"),
    # keytool -storepass/-keypass/-srcstorepass, -password, -passphrase, openssl -pass.
    (
        "password_option",
        rf"""(?i)(?:^|{_BLANK}|\\?["'])-(?:[a-z]*pass|password|passwd|passphrase|pwd)"""
        rf"(?:=|{_BLANK}+){_ATTACHED}",
    ),
    # `aws configure set aws_secret_access_key X`, `npm config set //r/:_authToken X`.
    (
        "config_secret",
        rf"""(?i)\bconfig(?:ure)?{_BLANK}+set{_BLANK}+[^\s"'\\]*"""
        rf"""(?:secret|token|password|passwd|key)[^\s"'\\]*{_BLANK}+{_ATTACHED}""",
    ),
    # mysql, mysqldump, mysqladmin, mysqlsh, mariadb, mariadb-dump…: masking a little more
    # (another program whose name holds "mysql") costs nothing.
    ("mysql_password", rf"(?i)(?:mysql|mariadb)[^|;&\n]*?{_BLANK}-p{_ATTACHED}"),
    ("sshpass", rf"\bsshpass{_BLANK}+-p{_BLANK}*{_ATTACHED}"),
    # docker/podman/helm/az/oc … login, useradd/usermod (a crypt hash), mongo shells.
    ("program_password", _option_of(r"login|useradd|usermod|mongo|mongosh|mongodump", "-p")),
    ("program_password", _option_of(r"redis-cli", "-a")),
    ("program_password", _option_of(r"ldap[a-z]*", "-w")),
    ("program_password", _option_of(r"zip|unzip|zipcloak", "-P")),
    ("program_password", _option_of(r"7z|7za|7zz|rar|unrar", "-p", attached_only=True)),
    ("program_password", _option_of(r"openssl", f"-k{_BLANK}")),
    ("program_password", rf"{_BLANK}-pass(?:in|out)?{_BLANK}+pass:{_ATTACHED}"),
    # htpasswd -b[c|n…] [file] user password: the last word.
    (
        "program_password",
        rf"\bhtpasswd(?:{_BLANK}+-[a-zA-Z]+)*?{_BLANK}+-[a-zA-Z]*b[a-zA-Z]*"
        rf"(?:{_BLANK}+-[a-zA-Z]+)*{_BLANK}+(?:{_WORD}{_BLANK}+)?{_WORD}{_BLANK}+{_ATTACHED}",
    ),
    # What is piped into chpasswd, passwd --stdin or sudo -S is a password.
    (
        "piped_password",
        rf"\becho{_BLANK}+(?:-[a-zA-Z]+{_BLANK}+)*{_ATTACHED}{_BLANK}*\|{_BLANK}*"
        rf"(?:sudo(?:{_BLANK}+-[a-zA-Z]+)*{_BLANK}+)?"
        rf"(?:chpasswd|passwd{_BLANK}+--stdin|sudo{_BLANK}{_SAME_COMMAND}-[a-zA-Z]*S\b)",
    ),
    ("piped_password", rf"\bchpasswd{_BLANK}*<<<{_BLANK}*{_ATTACHED}"),
    # Samba's user%password.
    (
        "user_password",
        rf"""(?:{_BLANK}-U{_BLANK}*|--user(?:name)?(?:=|{_BLANK}+)){_QUOTE}[^\s%"'\\]+%"""
        r"""([^\s"'\\]+)""",
    ),
    (
        "user_password",
        rf"(?:{_BLANK}-u{_BLANK}*|--user(?:=|{_BLANK}){_BLANK}*)(?:\\?[\"'])?[^\s:\"'\\]*:([^\s\"'\\]+)",
    ),
    # Also as a JSON key: {"Authorization": "Bearer …"}.
    (
        "authorization",
        rf"(?i)authorization{_QUOTE}{_BLANK}*:{_BLANK}*{_QUOTE}"
        rf"(?:(?:bearer|basic|token|digest|negotiate){_BLANK}+)?"
        r"([^\s\"'\\]+)",
    ),
    # A cookie header holds sessions: all of its value.
    ("cookie", rf"""(?i)\b(?:set-)?cookie{_QUOTE}{_BLANK}*:{_BLANK}*{_QUOTE}([^"'\\\n]+)"""),
    ("cookie", _option_of("curl", rf"(?:-b|--cookie)(?:={_BLANK}*|{_BLANK}+)")),
)

# Any name: its value is masked only when it looks random (checked in Python, below).
_MIN_RANDOM = 20
_ASSIGNED_VALUE = rf"""[=:][ \t]*(?:\\?["'])?([A-Za-z0-9+/_-]{{{_MIN_RANDOM},}}={{0,2}})"""
MIN_ENTROPY_BITS = 4.0  # per character; random base64 is ~5.5, English words ~3-3.5

MASK = "****"
# Characters of one text scanned and shown; the rest is hidden and the text says how much.
# Bounds the work per text: masking runs on the event loop and on every log line.
MASK_LIMIT = 16_384
# Scanned past the cut, so a secret that crosses it (a quoted value, a key) is still seen.
_LOOKAHEAD = 512
# Where a word ends, for a word cut by the limit (its head may be part of a secret).
_WORD_TAIL = re2.compile(r"""[^\s"'\\,;&|<>(){}\[\]`]+$""")
_MAX_REMEMBERED = 4096
_REMEMBERED_LENGTH = 512
# Every default pattern contains one of these literally: text without any of them
# cannot hold a secret, and a substring test is far cheaper than a regex call.
DEFAULT_LITERALS = (
    "AKIA", "ASIA", "ABIA", "ACCA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "xox", "sk-", "AIza", "_live_", "eyJ", "-----BEGIN ", "glrt-", "gldt-", "glptt-",
    "glft-", "glimt-", "glcbt-", "gloas-", "glsoat-", "xapp-", "whsec_", "hf_", "npm_", "pypi-",
    "SG.", "shpat_", "shpca_", "shppa_", "shpss_", "_v1_", "hvs.", "hvb.", "hvr.", "dapi",
    "glsa_", "glc_", "AGE-SECRET-KEY-", ":AA",
)  # fmt: skip
# Matches classified by kinds_in: enough to name what a text holds, few enough to be cheap.
_MAX_CLASSIFIED = 16
# Past this length one RE2 pass is cheaper than the substring tests.
_LITERAL_CHECK_LENGTH = 256


@dataclass(frozen=True, slots=True)
class SecretMatch:
    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class _Span:
    start: int
    end: int
    keep: int  # characters at the start left visible


def shannon_entropy(text: str) -> float:
    """Bits per character of the text's own character distribution."""
    if not text:
        return 0.0
    counts = Counter(text)
    length = len(text)
    return -sum(n / length * math.log2(n / length) for n in counts.values())


def looks_random(value: str) -> bool:
    """Mixed letters and digits with high entropy: a key, not a word, path or hex digest."""
    return (
        any(c.isupper() for c in value)
        and any(c.islower() for c in value)
        and any(c.isdigit() for c in value)
        and shannon_entropy(value) >= MIN_ENTROPY_BITS
    )


class _Regex:
    """One pattern compiled twice: ASCII text (most of it) is searched as bytes, which the
    RE2 binding does several times faster; byte and character offsets then agree."""

    __slots__ = ("groups", "on_bytes", "on_text")

    def __init__(self, pattern: str) -> None:
        self.on_text = re2.compile(pattern)
        self.on_bytes = re2.compile(pattern.encode())
        self.groups: int = self.on_text.groups

    def of(self, subject: str | bytes) -> Any:
        return self.on_bytes if isinstance(subject, bytes) else self.on_text


def _subject(text: str) -> str | bytes:
    return text.encode() if text.isascii() else _scannable(text)


_SURROGATES = {code: "\ufffd" for code in range(0xD800, 0xE000)}


def _scannable(text: str) -> str:
    """Text RE2 can take: a lone surrogate (no UTF-8 form) becomes U+FFFD, one code point
    for one, so offsets into the original stay right."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.translate(_SURROGATES)
    return text


def _text(value: str | bytes) -> str:
    return value.decode() if isinstance(value, bytes) else value


class SecretScanner:
    """Compiled once; shared by the egress inspector, the decision log and the server log."""

    def __init__(self, patterns: tuple[tuple[str, str], ...] = SECRET_PATTERNS) -> None:
        self._literals = DEFAULT_LITERALS if patterns is SECRET_PATTERNS else None
        self._shapes = [(kind, _Regex(pattern)) for kind, pattern in patterns]
        self._any_shape = _Regex("|".join(f"(?:{pattern})" for _, pattern in patterns))
        self._positions = [(kind, _Regex(p)) for kind, p in POSITION_PATTERNS]
        self._any_position = _Regex("|".join(f"(?:{p})" for _, p in POSITION_PATTERNS))
        self._assigned = _Regex(_ASSIGNED_VALUE)
        # One RE2 pass says whether anything at all may need masking. On long texts it is
        # cheaper than substring tests (each of which is a pass of its own).
        everything = [p for _, p in patterns] + [p for _, p in POSITION_PATTERNS]
        self._any_at_all = _Regex("|".join(f"(?:{p})" for p in [*everything, _ASSIGNED_VALUE]))
        # Verdict texts are mostly fixed rule messages: each is scanned once, not per call.
        self._clean: dict[str, None] = {}

    def any_in(self, texts: list[str]) -> bool:
        """Whether any of the texts holds something masking would hide."""
        clean = self._clean
        for text in texts:
            if text in clean:
                continue
            if len(text) > MASK_LIMIT:
                return True  # mask() would cut it
            if self._spans(text):
                return True
            self._remember_clean(text)
        return False

    def _remember_clean(self, text: str) -> None:
        if len(text) <= _REMEMBERED_LENGTH:
            clean = self._clean
            if len(clean) >= _MAX_REMEMBERED:
                clean.clear()
            clean[text] = None

    def find(self, text: str) -> list[SecretMatch]:
        """Credentials recognisable by their shape (what egress blocks)."""
        return self._find(text, None)

    def _find(self, text: str, subject: str | bytes | None) -> list[SecretMatch]:
        if (
            self._literals is not None
            and len(text) <= _LITERAL_CHECK_LENGTH
            and not any(lit in text for lit in self._literals)
        ):
            return []
        if subject is None:
            subject = _subject(text)
        if not self._any_shape.of(subject).search(subject):
            return []  # one linear pass for the common case
        found: list[SecretMatch] = []
        for kind, pattern in self._shapes:
            for match in pattern.of(subject).finditer(subject):
                found.append(SecretMatch(kind, match.start(), match.end()))
        return found

    def kinds_in(self, text: str) -> set[str]:
        """Kinds of credential in the text (what egress blocks), from its first few
        matches: one linear pass up to them, however many keys a large text repeats."""
        if (
            self._literals is not None
            and len(text) <= _LITERAL_CHECK_LENGTH
            and not any(lit in text for lit in self._literals)
        ):
            return set()
        subject = _subject(text)
        kinds: set[str] = set()
        for count, match in enumerate(self._any_shape.of(subject).finditer(subject), 1):
            found = match.group(0)
            kinds.update(kind for kind, pattern in self._shapes if pattern.of(found).search(found))
            if count >= _MAX_CLASSIFIED:
                break
        return kinds

    def find_positions(self, text: str) -> list[SecretMatch]:
        """Values that are secret because of where they stand (what masking also hides)."""
        return self._find_positions(text, _subject(text))

    def _find_positions(self, text: str, subject: str | bytes) -> list[SecretMatch]:
        found: list[SecretMatch] = []
        if self._any_position.of(subject).search(subject):
            for kind, pattern in self._positions:
                for match in pattern.of(subject).finditer(subject):
                    for group in range(1, pattern.groups + 1):
                        start, end = match.span(group)
                        if start >= 0 and end > start:
                            found.append(SecretMatch(kind, start, end))
        if len(text) > _MIN_RANDOM:
            for match in self._assigned.of(subject).finditer(subject):
                if looks_random(_text(match.group(1))):
                    found.append(SecretMatch("random_value", match.start(1), match.end(1)))
        return found

    def _spans(self, text: str) -> list[_Span]:
        subject = _subject(text)
        if not self._any_at_all.of(subject).search(subject):
            return []
        # A PEM BEGIN line is a label, not key material: its block's body is masked instead.
        spans = [
            _Span(m.start, m.end, min(4, (m.end - m.start) // 4))
            for m in self._find(text, subject)
            if m.kind != "private_key"
        ]
        spans += [_Span(m.start, m.end, 0) for m in self._find_positions(text, subject)]
        return spans

    def mask(self, text: str, limit: int = MASK_LIMIT) -> str:
        """Hide every secret; a shaped key keeps a short prefix so operators can tell which.
        Past `limit` characters nothing is shown: the text ends in a note of how much."""
        if len(text) > limit:
            return self._mask_cut(text, limit)
        if text in self._clean:
            return text  # session ids, tool names, repeated commands: scanned once
        spans = self._spans(text)
        if not spans:
            self._remember_clean(text)
            return text
        return _apply(text, spans, len(text))[0]

    def _mask_cut(self, text: str, limit: int) -> str:
        window = text[: limit + _LOOKAHEAD]
        masked, shown = _apply(window, self._spans(window), limit)
        if shown == limit and limit < len(text) and not _ends_word(text, limit):
            # A word runs across the cut: its head may be a secret too long to recognise.
            # Only the end is searched; a word longer than that is hidden from there on.
            base = max(0, len(masked) - _LOOKAHEAD)
            tail = _WORD_TAIL.search(masked[base:])
            if tail is not None:
                masked = masked[: base + tail.start()] + MASK
        hidden = len(text) - shown
        if hidden <= 0:
            return masked
        return f"{masked}…[{hidden} characters past the {limit}-character masking limit not shown]"


def _ends_word(text: str, index: int) -> bool:
    """Whether a word boundary of the kind masking cares about falls at `index`."""
    return text[index - 1].isspace() or text[index].isspace()


def _apply(text: str, spans: list[_Span], upto: int) -> tuple[str, int]:
    """The text up to `upto` with each span starting before it replaced by the mask;
    also how far into the text that reaches (a span may end past `upto`)."""
    out: list[str] = []
    cursor = 0
    for span in sorted(spans, key=lambda s: (s.start, -s.end, s.keep)):
        if span.start >= upto:
            break
        if span.end <= cursor:
            continue  # inside a span already hidden
        start = max(span.start, cursor)
        keep = span.keep if start == span.start else 0
        out.append(text[cursor : start + keep])
        out.append(MASK)
        cursor = span.end
    if cursor < upto:
        out.append(text[cursor:upto])
        cursor = upto
    return "".join(out), cursor
