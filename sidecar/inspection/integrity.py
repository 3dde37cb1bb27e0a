"""Integrity inspector: what only a sidecar that sees both halves of an agent can tell.

- A call to a registered tool whose definition changed from the trusted one asks (the prompt
  shows both definitions) until AcceptToolChange; one whose description or schemas hold
  instructions aimed at the model asks or is denied, per policy.
- In a session that read untrusted input (a tool result that looked like a prompt injection,
  or one a classifier could not judge), calls with risky effects ask even in mode auto:
  the effect rules with `session: [untrusted_input]`, and tools whose effects cannot be seen
  and that are not known to only read. Every call of such a session carries a finding that
  says so.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Protocol

import re2

from sidecar.effects.adapters import ToolAdapters
from sidecar.effects.paths import normalise
from sidecar.inspection.call_effects import CallEffects
from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.verdict import Risk, Verdict
from sidecar.integrity.checks import VERDICTS, IntegrityChecks
from sidecar.integrity.definitions import ToolDefinition, shown
from sidecar.matching.globs import GlobSet
from sidecar.state.injection_taint import TaintEntry, TaintStatus
from sidecar.state.tool_registry import SessionTool, ToolKey, ToolRecord

NAME = "integrity"
UNTRUSTED = frozenset({"untrusted_input"})
# A URL with a query string: data can leave in it, GET or not (`?d=<secret>`, an image).
_URL_WITH_DATA = re2.compile(
    r"(?i)\b[a-z][a-z0-9+.-]*://[^\s/?#\"'\\]+[^\s?#\"'\\]*\?[^\s\"'\\]{6,}"
)
_MAX_SIGN_FINDINGS = 5


class ToolLookup(Protocol):
    """The tools a session registered and the trust in them (store/states.py)."""

    def has_tools(self, session_id: str) -> bool: ...

    def record(self, key: ToolKey) -> ToolRecord | None: ...

    def session_tool(self, session_id: str, name: str, server: str = "") -> SessionTool | None: ...

    def servers_offering(self, session_id: str, name: str) -> list[str]: ...


class TaintLookup(Protocol):
    """Whether a session read a prompt injection (store/states.py)."""

    def status(self, session_id: str) -> TaintStatus | None: ...


class IntegrityInspector(LocalInspector):
    name = NAME

    def __init__(
        self,
        checks: IntegrityChecks,
        effects: CallEffects,
        adapters: ToolAdapters,
        read_only_tools: Sequence[str],
        registry: ToolLookup | None = None,
        taint: TaintLookup | None = None,
    ) -> None:
        self._checks = checks
        self._effects = effects
        self._adapters = adapters
        self._read_only = GlobSet(read_only_tools)
        self._registry = registry
        self._taint = taint
        self._prompts: dict[tuple[ToolKey, str, str], str] = {}

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        session_id = context.session_id
        registry = self._registry
        definitions = registry is not None and (
            registry.has_tools(session_id) or any(call.server for call in calls)
        )
        status = self._taint.status(session_id) if self._taint is not None else None
        untrusted = status is not None and status.untrusted
        if not definitions and not untrusted:
            return [[] for _ in calls]  # the common case: nothing registered, nothing read
        results: list[list[Finding]] = []
        for call in calls:
            findings: list[Finding] = []
            if definitions:
                findings += self._definition(call, session_id)
            if untrusted:
                assert status is not None
                findings += self._untrusted(call, session_id, status)
            results.append(findings)
        return results

    # -- tool definitions ------------------------------------------------------------

    def _definition(self, call: ToolCall, session_id: str) -> list[Finding]:
        assert self._registry is not None
        name, server = self._called(call)
        tool = self._registry.session_tool(session_id, name, server)
        if tool is None and server:
            record = self._registry.record(ToolKey(server, name))
            tool = SessionTool(record, record.latest_fingerprint) if record else None
        if tool is None:
            return []
        findings: list[Finding] = []
        if not server and len(self._registry.servers_offering(session_id, name)) > 1:
            servers = ", ".join(repr(s) for s in self._registry.servers_offering(session_id, name))
            findings.append(
                Finding(
                    NAME, Verdict.REQUIRE_APPROVAL, "tools.ambiguous",
                    f"Several servers offer a tool named {name!r} ({servers}); the call does "
                    "not say which one it reaches",
                    Risk.HIGH, 0.8,
                    f"Several servers offer {name!r} ({servers}): one may shadow another. "
                    "Allow this call?",
                )
            )  # fmt: skip
        record = tool.record
        definition = record.definition_of(tool.fingerprint)
        if tool.fingerprint != record.trusted_fingerprint:
            findings.append(self._drift(tool, definition))
        if definition is not None:
            findings += self._poisoned(tool, definition)
        return findings

    def _called(self, call: ToolCall) -> tuple[str, str]:
        """The tool's name and server; a wrapper (`use_mcp_tool`) names the tool it wraps."""
        adapter = self._adapters.adapter_for(call.name)
        if adapter is not None and adapter.kind == "mcp_wrapper":
            tool = call.arguments.get(adapter.tool_key)
            server = call.arguments.get(adapter.server_key)
            if isinstance(tool, str) and tool:
                return tool, server if isinstance(server, str) else ""
        return call.name, call.server

    def _drift(self, tool: SessionTool, definition: ToolDefinition | None) -> Finding:
        record = tool.record
        key = record.key
        prompt_key = (key, record.trusted_fingerprint, tool.fingerprint)
        prompt = self._prompts.get(prompt_key)
        if prompt is None:
            trusted_on = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(record.trusted_at))
            now = (
                shown(definition)
                if definition is not None
                else "(that definition is no longer kept; the server registered another since)"
            )
            prompt = (
                f"The tool {key.name!r} from server {key.server or '(runtime)'!r} is not the "
                "tool that was trusted: its definition changed.\n"
                f"Trusted (fingerprint {record.trusted_fingerprint}, since {trusted_on}):\n"
                f"{_indented(shown(record.trusted()))}\n"
                f"Now (fingerprint {tool.fingerprint}):\n{_indented(now)}\n"
                "Allow this call? To trust the new definition for good, accept it with "
                f"AcceptToolChange(server={key.server!r}, name={key.name!r}, "
                f"fingerprint={tool.fingerprint!r})."
            )
            if len(self._prompts) >= 1024:
                self._prompts.clear()
            self._prompts[prompt_key] = prompt
        return Finding(
            NAME,
            self._checks.drift_verdict,
            "tools.definition-changed",
            f"The definition of {key.name!r} (server {key.server or '(runtime)'!r}) changed "
            f"since it was trusted ({record.trusted_fingerprint[:12]} -> "
            f"{tool.fingerprint[:12]})",
            Risk.HIGH,
            1.0,
            prompt,
        )

    def _poisoned(self, tool: SessionTool, definition: ToolDefinition) -> list[Finding]:
        signs = self._checks.definition_signs(tool.fingerprint, definition)
        if not signs:
            return []
        key = tool.record.key
        verdicts = self._checks.tools.risk_verdicts
        findings: list[Finding] = []
        for sign in sorted(signs, key=lambda s: -s.risk)[:_MAX_SIGN_FINDINGS]:
            verdict = VERDICTS[verdicts[sign.risk.name.lower()]]  # type: ignore[index]
            quoted = f": {sign.excerpt!r}" if sign.excerpt else ""
            message = f"The definition of tool {key.name!r} holds {sign.message.lower()}{quoted}"
            findings.append(
                Finding(
                    NAME, verdict, f"tools.{sign.rule_id}", message, sign.risk, 0.8,
                    f"{message}. Its description or schema may be poisoned: it speaks to the "
                    "model, not to you. Allow this call?",
                )
            )  # fmt: skip
        return findings

    # -- sessions that read untrusted input ---------------------------------------------

    def _untrusted(self, call: ToolCall, session_id: str, status: TaintStatus) -> list[Finding]:
        cause = _cause(status)
        findings = [
            Finding(
                NAME, Verdict.ALLOW, "injection.session-untrusted", cause, Risk.LOW, 1.0,
            )
        ]  # fmt: skip
        report = self._effects.of(call, session_id)
        cwd = normalise(report.form.cwd) if report.form.cwd else ""
        judged = self._effects.analyser.judge_in_session(report.effects, UNTRUSTED, cwd)
        verdicts = self._checks.effect_verdicts
        seen: set[str] = set()
        for item in judged:
            rule = item.rule
            if rule.id in seen:
                continue
            seen.add(rule.id)
            what = item.message()
            verdict = VERDICTS[rule.verdict or ""] if rule.verdict else verdicts[rule.risk]
            findings.append(
                Finding(
                    NAME, verdict, rule.id, f"{what}, in a session that {cause}",
                    Risk[rule.risk.upper()], 0.8,
                    f"This session {cause}. This call: {what}. Allow it?",
                )
            )  # fmt: skip
        url = _URL_WITH_DATA.search(call.canonical_arguments)
        if url is not None:
            shown_url = url.group(0)[:120]
            findings.append(
                Finding(
                    NAME, Verdict.REQUIRE_APPROVAL, "untrusted.url-with-data",
                    f"Sends data in a URL ({shown_url}), in a session that {cause}",
                    Risk.HIGH, 0.6,
                    f"This session {cause}. This call opens {shown_url}, whose query can "
                    "carry data out. Allow it?",
                )
            )  # fmt: skip
        if not judged and self._opaque(call, report.effects, report.form.kind):
            findings.append(
                Finding(
                    NAME, self._checks.opaque_verdict, "injection.opaque-tool",
                    f"{call.name} may act on the world and cannot be seen into, in a session "
                    f"that {cause}",
                    Risk.HIGH, 0.6,
                    f"This session {cause}. {call.name} is not known to only read, and what it "
                    "does cannot be checked. Allow it?",
                )
            )  # fmt: skip
        return findings

    def _opaque(self, call: ToolCall, effects: Sequence[object], kind: str) -> bool:
        if effects or kind in ("shell", "code"):
            return False  # what it does is known (and judged by the rules above)
        if call.read_only_hint is True:
            return False
        return call.read_only_hint is False or not self._read_only.matches(call.name)


def _cause(status: TaintStatus) -> str:
    if status.flagged is not None:
        entry = status.flagged
        more = f" (and {status.flagged_count - 1} more)" if status.flagged_count > 1 else ""
        return f"read untrusted input that looks like a prompt injection: {_named(entry)}{more}"
    assert status.unchecked is not None
    entry = status.unchecked
    why = "is still being checked" if entry.state == "pending" else "could not be checked"
    return f"read a tool result that {why} for prompt injection: {_named(entry)}"


def _named(entry: TaintEntry) -> str:
    where = {
        "append": "message",
        "inspect": "tool output",
        "classifier": "message",
    }[entry.source]
    rules = f" ({', '.join(entry.rules)})" if entry.rules else ""
    excerpt = f": {entry.excerpt[:200]!r}" if entry.excerpt else ""
    return f"{where} {entry.message_id!r}{rules}{excerpt}"


def _indented(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())
