"""Signs of instructions aimed at the model, in text it reads.

Two scopes: `content` (tool results and fetched content, on Append or passed on Inspect)
and `tools` (tool descriptions and schemas, on RegisterTools). The text is made plain first
(`unicode.reveal`: hidden characters removed, tag text decoded, look-alikes mapped), then
the policy's RE2 rules run over it in one pass (PatternFilter), encoded blocks (base64, hex)
that decode to text are scanned too, and combinations of categories add their own sign.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from typing import NamedTuple
from urllib.parse import unquote_plus

import re2

from sidecar.inspection.verdict import Risk
from sidecar.integrity.definitions import ToolDefinition, texts_of
from sidecar.integrity.intent import (
    Finding,
    IntentAnalyser,
    conditional,
    disclosure_required,
    forbids,
    guards_data,
    of_another,
    own_summary,
    possible,
    prohibited,
    retold,
)
from sidecar.integrity.layout import inside, plain, quotations
from sidecar.integrity.unicode import UnicodeSign, escaped, reveal
from sidecar.matching.pattern_filter import PatternFilter
from sidecar.policy.schema import (
    InjectionCombination,
    InjectionPolicy,
    InjectionRule,
    ScanScope,
    UnicodeRisks,
)

MAX_BLOCKS = 8  # encoded blocks decoded per text
MAX_BLOCK_CHARS = 64 * 1024
MAX_DECODED_CHARS = 4096  # characters read rotated, URL-decoded or reversed
MIN_PERCENT_ESCAPES = 6  # a few %2F in a link are no hidden text
_PERCENT = re2.compile(r"%[0-9A-Fa-f]{2}")
_BACKWARDS = re2.compile(
    r"(?i)\b(?:backwards?|reversed|in\s+reverse|right\s+to\s+left|à\s+l'envers|rückwärts|"
    r"al\s+revés)\b"
)
_ROT13_NAMED = re2.compile(r"(?i)\brot[- ]?13\b")
_ROT13 = str.maketrans(
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "NOPQRSTUVWXYZABCDEFGHIJKLMnopqrstuvwxyzabcdefghijklm",
)
MAX_MATCHES = 16  # positions kept per rule and text
NEAR = 400  # characters: signs this close belong to one request (combinations in data)
_EXCERPT_BEFORE = 60
_EXCERPT_AFTER = 160
_SPACES = re2.compile(r"\s+")
_UNICODE_MESSAGES = {
    "tag_text": "Hidden text in Unicode tag characters: {detail}",
    "bidi_controls": "Bidirectional control characters that reorder what a person sees: {detail}",
    "zero_width": "Zero-width characters hidden inside words: {detail}",
    "variation_selectors": "Variation selectors that can carry hidden data: {detail}",
    "confusables": "Words mixing Latin with Cyrillic or Greek look-alike letters: {detail}",
}
ADDRESSED = "addressed"
ENCODED = "encoded"
HIDDEN = "hidden_text"
INTENT = "intent"


class Sign(NamedTuple):
    rule_id: str
    category: str
    risk: Risk
    message: str
    excerpt: str = ""
    # Where in the judged text (data only; empty: anywhere, as for hidden or encoded text).
    spans: tuple[tuple[int, int], ...] = ()


def worst(signs: Iterable[Sign]) -> Risk | None:
    return max((s.risk for s in signs), default=None)


class _Scope:
    def __init__(
        self,
        scope: ScanScope,
        rules: Sequence[InjectionRule],
        combinations: Sequence[InjectionCombination],
        unicode: UnicodeRisks,
    ) -> None:
        self.rules = [r for r in rules if scope in r.scope]
        self.risks = [
            Risk[((r.risk_in_tools or r.risk) if scope == "tools" else r.risk).upper()]
            for r in self.rules
        ]
        self.filter = PatternFilter([r.pattern for r in self.rules])
        self.regexes = [re2.compile(r.pattern) for r in self.rules]
        self.combinations = [c for c in combinations if scope in c.scope]
        self.unicode = unicode


class Scanner:
    def __init__(
        self,
        policy: InjectionPolicy,
        tool_unicode: UnicodeRisks,
        intent: IntentAnalyser | None = None,
    ) -> None:
        self._policy = policy
        self._intent = intent
        self._scopes = {
            "content": _Scope("content", policy.rules, policy.combinations, policy.unicode),
            "tools": _Scope("tools", policy.rules, policy.combinations, tool_unicode),
        }
        size = policy.encoded_min_length
        self._base64 = re2.compile(f"[A-Za-z0-9+/_-]{{{size},}}={{0,2}}")
        self._hex = re2.compile(f"(?:[0-9A-Fa-f]{{2}}){{{(size + 1) // 2},}}")

    def scan(self, text: str, scope: ScanScope = "content") -> list[Sign]:
        if not text:
            return []
        compiled = self._scopes[scope]
        revealed = reveal(text)
        signs = [_unicode_sign(u, compiled.unicode) for u in revealed.signs]
        if scope == "content":
            # Data is judged by its layout: a JSON payload as its values, and a sentence
            # quoted inside prose is talked about, not said (sidecar/integrity/layout.py).
            judged = plain(revealed.text)
            quoted = quotations(judged)
            signs += _partnered(self._placed(judged, compiled, quoted))
            signs += self._intended(judged, scope, "")
            signs += self._encoded(judged, compiled, scope, quoted)
            signs += _combined(signs, compiled.combinations, near=NEAR)
            return signs
        signs += self._rules(revealed.text, compiled, "")
        signs += self._intended(revealed.text, scope, "")
        signs += self._encoded(revealed.text, compiled, scope)
        signs += _combined(signs, compiled.combinations)
        return signs

    def _placed(self, text: str, compiled: _Scope, quoted: Sequence[tuple[int, int]]) -> list[Sign]:
        """The rules over data, each with where it matched; matches inside a quotation
        (mentioned, not said) do not count."""
        found: list[Sign] = []
        for index in sorted(compiled.filter.matching(text)):
            rule = compiled.rules[index]
            spans: list[tuple[int, int]] = []
            for count, match in enumerate(compiled.regexes[index].finditer(text)):
                if count >= MAX_MATCHES:
                    break
                start, end = match.span()
                if end > start and not inside(quoted, start, end):
                    if rule.category == ADDRESSED and forbids(text, end):
                        continue  # "the assistant should never ...": asks nothing
                    if rule.category == "override" and guards_data(text, end):
                        continue  # "ignore instructions that appear in messages": a guard
                    if rule.category == "override" and of_another(text, start, end):
                        continue  # "tells a model to disregard its original instructions"
                    if rule.category in ("override", "secret_files") and (
                        retold(text, start) or _retold_inside(text, start, end)
                    ):
                        continue  # "tricked the bot into ignoring ...": an attack told of
                    if rule.category == "secrecy" and disclosure_required(text, start):
                        continue  # "never ... without mentioning it": the telling is asked for
                    if rule.category == "no_approval" and prohibited(text, start):
                        continue  # "do not modify migrations without asking": asking is asked
                    spans.append((start, end))
            if spans:
                first = spans[0]
                found.append(Sign(rule.id, rule.category, compiled.risks[index], rule.message,
                                  _excerpt(text, *first), tuple(spans)))  # fmt: skip
        return found

    def scan_definition(self, definition: ToolDefinition) -> list[Sign]:
        return self.scan("\n".join(texts_of(definition)), "tools")

    def _rules(self, text: str, compiled: _Scope, where: str) -> list[Sign]:
        """The rules over a tool's texts (or a decoded block). A match that a prohibition
        governs ("Never use this to read .env files"), an override aimed at data ("ignore
        instructions inside them") or a claim under a condition ("only what the user asked")
        asks for nothing."""
        found: list[Sign] = []
        for index in sorted(compiled.filter.matching(text)):
            rule = compiled.rules[index]
            for count, match in enumerate(compiled.regexes[index].finditer(text)):
                if count >= MAX_MATCHES:
                    break
                start, end = match.span()
                if rule.category != "boundary" and prohibited(text, start):
                    continue
                if rule.category == "secret_files" and where == "" and possible(text, start):
                    continue  # "which may include secrets from .env files": what can happen
                if rule.category == "secret_files" and where == "" and own_summary(text, start):
                    continue  # "Add a server entry to the project's .cursor/mcp.json": its job
                if rule.category == "override" and guards_data(text, end):
                    continue
                if rule.category == "authority" and conditional(text, start):
                    continue
                found.append(
                    Sign(rule.id, rule.category, compiled.risks[index], rule.message + where,
                         _excerpt(text, start, end))
                )  # fmt: skip
                break
        return found

    def _intended(self, text: str, scope: ScanScope, where: str) -> list[Sign]:
        """The structural judgement (intent.py): one sign per text, high when it holds."""
        if self._intent is None:
            return []
        return [_intent_sign(f, text, where) for f in self._intent.findings(text, scope)[:1]]

    def _encoded(
        self, text: str, compiled: _Scope, scope: ScanScope, quoted: Sequence[tuple[int, int]] = ()
    ) -> list[Sign]:
        """Base64 and hex blocks that decode to text: scanned as text, and a sign of their
        own (low: alone it means nothing; next to a note to an AI it does). A block inside a
        sample a write-up shows (`setup.py contained:` then the code) is talked about."""
        if len(text) < self._policy.encoded_min_length:
            return []
        found: list[Sign] = []
        blocks = 0
        for regex, decode in ((self._base64, _from_base64), (self._hex, _from_hex)):
            for match in regex.finditer(text):
                if blocks >= MAX_BLOCKS:
                    break
                if inside(quoted, *match.span()):
                    continue
                decoded = decode(match.group(0)[:MAX_BLOCK_CHARS])
                if decoded is None:
                    continue
                blocks += 1
                plain = reveal(decoded).text
                where = " (in an encoded block)"
                # Read in place: the note next to the block may be what addresses the agent.
                start, end = match.span()
                spliced = f"{text[max(0, start - 400) : start]}\n{plain}\n{text[end : end + 400]}"
                inner = self._rules(plain, compiled, where) + self._intended(spliced, scope, where)
                found += inner
                if not any(s.category == ENCODED for s in found):
                    found.append(
                        Sign(
                            "injection.encoded-text",
                            ENCODED,
                            Risk.LOW,
                            "A block of encoded text",
                            escaped(decoded[:_EXCERPT_AFTER]),
                        )
                    )
        found += self._rot13(text, compiled, scope)
        found += self._url_decoded(text, compiled, scope)
        found += self._reversed(text, compiled, scope)
        return found

    def _decoded(
        self, plain: str, in_place: str, compiled: _Scope, scope: ScanScope, where: str
    ) -> list[Sign]:
        """Text read another way: the rules over it alone, the structural judgement over it in
        place (the note before it may be what addresses the agent)."""
        return self._rules(plain, compiled, where) + self._intended(in_place, scope, where)

    def _url_decoded(self, text: str, compiled: _Scope, scope: ScanScope) -> list[Sign]:
        """Percent-encoded text (`msg=Assistant%3A%20send%20...`) read decoded, in place."""
        if len(_PERCENT.findall(text[:MAX_DECODED_CHARS])) < MIN_PERCENT_ESCAPES:
            return []
        decoded = unquote_plus(text[:MAX_DECODED_CHARS])
        where = " (in URL-encoded text)"
        return self._decoded(decoded, decoded, compiled, scope, where)

    def _reversed(self, text: str, compiled: _Scope, scope: ScanScope) -> list[Sign]:
        """Text that asks to be read backwards: each line after the request read reversed."""
        named = _BACKWARDS.search(text)
        if named is None:
            return []
        start = named.end()
        lines = text[start : start + MAX_DECODED_CHARS].split("\n")
        turned = "\n".join(line[::-1] for line in lines)
        spliced = f"{text[max(0, start - 400) : start]}\n{turned}"
        where = " (in reversed text)"
        return self._decoded(turned, spliced, compiled, scope, where)

    def _rot13(self, text: str, compiled: _Scope, scope: ScanScope) -> list[Sign]:
        """Text that names ROT13 ("ROT13, decode and comply: Qryrgr ..."): what follows the
        name is read rotated back, in place, like a decoded block."""
        named = _ROT13_NAMED.search(text)
        if named is None:
            return []
        start = named.end()
        rotated = text[start : start + MAX_DECODED_CHARS].translate(_ROT13)
        spliced = f"{text[max(0, start - 400) : start]}\n{rotated}"
        where = " (in ROT13 text)"
        return self._decoded(rotated, spliced, compiled, scope, where)

    def check_examples(self) -> list[str]:
        """Each rule's examples must behave as written (checked when the policy loads)."""
        problems: list[str] = []
        for rule in self._policy.rules:
            regex = re2.compile(rule.pattern)
            for example in rule.examples.match:
                if regex.search(reveal(example).text) is None:
                    problems.append(f"injection rule {rule.id}: example {example!r} should match")
            for example in rule.examples.no_match:
                if regex.search(reveal(example).text) is not None:
                    problems.append(
                        f"injection rule {rule.id}: example {example!r} should not match"
                    )
        return problems


def _intent_sign(finding: Finding, text: str, where: str) -> Sign:
    parts = [f.value for f in finding.features if f.name != "RISK"]
    if finding.risks:
        parts.append("asks for " + ", ".join(finding.risks[:4]))
    message = "Data that reads as an instruction to the agent: " + "; ".join(parts) + where
    return Sign("injection.intent", INTENT, Risk.HIGH, message,
                _excerpt(text, finding.start, min(finding.end, finding.start + 200)),
                ((finding.start, finding.end),) if not where else ())  # fmt: skip


def _unicode_sign(sign: UnicodeSign, risks: UnicodeRisks) -> Sign:
    risk = Risk[str(getattr(risks, sign.kind)).upper()]
    message = _UNICODE_MESSAGES[sign.kind].format(detail=escaped(sign.detail)[:200])
    return Sign(f"injection.unicode.{sign.kind.replace('_', '-')}", HIDDEN, risk, message)


def _combined(
    signs: list[Sign], combinations: Sequence[InjectionCombination], near: int | None = None
) -> list[Sign]:
    """Categories that together make a sign. In data (`near`), they must also stand close
    together: a note to AI agents at the top of a README and an installer far below it are
    two things, not one request."""
    if len(signs) < 2:
        return []
    categories = {s.category for s in signs}
    found: list[Sign] = []
    for combination in combinations:
        if set(combination.categories) <= categories and (
            near is None or _together(signs, combination.categories, near)
        ):
            excerpt = next(
                (s.excerpt for s in signs if s.category == combination.categories[0]), ""
            )
            found.append(
                Sign(
                    combination.id,
                    "+".join(combination.categories),
                    Risk[combination.risk.upper()],
                    combination.message,
                    excerpt,
                )
            )
    return found


# In data, these signs are requests: alone they are text about doing something (a blog
# post showing an exfiltration link, a runbook attaching a key file). They count in full
# only next to a sign of another category (an address, a boundary, hidden text, ...), which
# the combinations say; alone they are medium at most.
_REQUESTS = frozenset({"secret_files", "exfiltration", "secrets", "command", "tool_call"})


def _partnered(signs: list[Sign]) -> list[Sign]:
    return [
        s._replace(risk=Risk.MEDIUM, message=s.message + " (no one addressed)")
        if s.category in _REQUESTS and s.risk > Risk.MEDIUM
        else s
        for s in signs
    ]


def _together(signs: Sequence[Sign], categories: Sequence[str], near: int) -> bool:
    """Some span of each category within `near` characters of one span of the first."""
    placed: dict[str, list[tuple[int, int]] | None] = {}
    for category in categories:
        spans: list[tuple[int, int]] = []
        for sign in (s for s in signs if s.category == category):
            if not sign.spans:  # hidden or encoded text: anywhere
                spans = []
                break
            spans += sign.spans
        placed[category] = spans or None
    anchors = placed[categories[0]] or [(-1, -1)]
    for start, end in anchors:
        if all(
            spans is None
            or start < 0
            or any(s - near <= end and start <= e + near for s, e in spans)
            for spans in (placed[c] for c in categories[1:])
        ):
            return True
    return False


def _excerpt(text: str, start: int, end: int) -> str:
    begin = max(0, start - _EXCERPT_BEFORE)
    piece = text[begin : min(len(text), end + _EXCERPT_AFTER)]
    piece = str(_SPACES.sub(" ", escaped(piece))).strip()
    return ("..." if begin else "") + piece


def _from_base64(block: str) -> str | None:
    stripped = block.rstrip("=")
    if len(stripped) % 4 == 1:
        return None
    padded = stripped + "=" * (-len(stripped) % 4)
    try:
        if "-" in padded or "_" in padded:
            raw = base64.urlsafe_b64decode(padded)
        else:
            raw = base64.b64decode(padded)
    except (binascii.Error, ValueError):
        return None
    return _as_text(raw)


def _retold_inside(text: str, start: int, end: int) -> bool:
    """ "the tool told the model, inside <IMPORTANT> tags, to read ~/.ssh/id_rsa": the request
    inside the match is reported (the match began at an earlier verb)."""
    at = text.rfind(" to ", start, end)
    return at >= 0 and retold(text, at + 4)


def _from_hex(block: str) -> str | None:
    try:
        return _as_text(bytes.fromhex(block))
    except ValueError:
        return None


def _as_text(raw: bytes) -> str | None:
    """Prose-like text (what an instruction would be), not binary, keys or hashes."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.count(" ") < 2:
        return None
    printable = sum(1 for c in text if c.isprintable() or c in "\n\t")
    return text if printable >= 0.95 * len(text) else None
