"""Recognise credentials in text so they can be blocked and masked (RE2, linear time)."""

from __future__ import annotations

from dataclasses import dataclass

import re2

# (kind, pattern). Kept specific: a broad pattern here masks ordinary text and,
# in the egress inspector, blocks ordinary calls.
SECRET_PATTERNS: tuple[tuple[str, str], ...] = (
    ("aws_access_key", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("github_token", r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{36,255}\b"),
    ("github_pat", r"\bgithub_pat_[A-Za-z0-9_]{22,255}\b"),
    ("gitlab_token", r"\bglpat-[A-Za-z0-9_-]{20,}\b"),
    ("slack_token", r"\bxox[abposr]-[A-Za-z0-9-]{10,}\b"),
    ("anthropic_key", r"\bsk-ant-[A-Za-z0-9_-]{20,}\b"),
    ("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}\b"),
    ("google_api_key", r"\bAIza[0-9A-Za-z_-]{35}\b"),
    ("stripe_key", r"\b(?:sk|rk)_live_[0-9A-Za-z]{20,}\b"),
    ("jwt", r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )?PRIVATE KEY-----"),
)

MASK = "****"
_MAX_REMEMBERED = 4096
_REMEMBERED_LENGTH = 512
# Every default pattern contains one of these literally: text without any of them
# cannot hold a secret, and a substring test is far cheaper than a regex call.
DEFAULT_LITERALS = (
    "AKIA", "ASIA", "ABIA", "ACCA", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
    "glpat-", "xox", "sk-", "AIza", "_live_", "eyJ", "-----BEGIN ",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class SecretMatch:
    kind: str
    start: int
    end: int


class SecretScanner:
    """Compiled once; shared by the egress inspector and the decision log."""

    def __init__(self, patterns: tuple[tuple[str, str], ...] = SECRET_PATTERNS) -> None:
        self._literals = DEFAULT_LITERALS if patterns is SECRET_PATTERNS else None
        self._kinds = [kind for kind, _ in patterns]
        self._patterns = [re2.compile(pattern) for _, pattern in patterns]
        combined = "|".join(f"(?:{pattern})" for _, pattern in patterns)
        self._any = re2.compile(combined)
        # Verdict texts are mostly fixed rule messages: each is scanned once, not per call.
        self._clean: dict[str, None] = {}

    def any_in(self, texts: list[str]) -> bool:
        """Whether any of the texts holds a credential."""
        clean = self._clean
        for text in texts:
            if text in clean:
                continue
            if self.find(text):
                return True
            if len(text) <= _REMEMBERED_LENGTH:
                if len(clean) >= _MAX_REMEMBERED:
                    clean.clear()
                clean[text] = None
        return False

    def find(self, text: str) -> list[SecretMatch]:
        if self._literals is not None and not any(lit in text for lit in self._literals):
            return []
        if not self._any.search(text):
            return []  # one linear pass for the common case
        found: list[SecretMatch] = []
        for kind, pattern in zip(self._kinds, self._patterns, strict=True):
            for match in pattern.finditer(text):
                found.append(SecretMatch(kind, match.start(), match.end()))
        return found

    def mask(self, text: str) -> str:
        """Keep a short prefix so operators can tell which key leaked, hide the rest."""
        matches = self.find(text)
        if not matches:
            return text
        out: list[str] = []
        cursor = 0
        for match in sorted(matches, key=lambda m: m.start):
            if match.start < cursor:
                continue
            keep = min(4, (match.end - match.start) // 4)
            out.append(text[cursor : match.start + keep])
            out.append(MASK)
            cursor = match.end
        out.append(text[cursor:])
        return "".join(out)
