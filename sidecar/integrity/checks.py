"""One policy's integrity checks, compiled: the injection scanner and what its signs mean
for tool definitions and for sessions."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from sidecar.effects.catalogue import Catalogue
from sidecar.inspection.verdict import Risk, Verdict
from sidecar.integrity.definitions import ToolDefinition
from sidecar.integrity.intent import IntentAnalyser
from sidecar.integrity.scanner import Scanner, Sign
from sidecar.policy.schema import InjectionPolicy, Policy, ToolIntegrityPolicy

VERDICTS = {
    "allow": Verdict.ALLOW,
    "require_approval": Verdict.REQUIRE_APPROVAL,
    "deny": Verdict.DENY,
}
_MAX_REMEMBERED = 4096


class IntegrityChecks:
    def __init__(self, policy: Policy, catalogue: Catalogue | None = None) -> None:
        self.injection: InjectionPolicy = policy.injection
        self.tools: ToolIntegrityPolicy = policy.tool_integrity
        self.scanner = Scanner(
            policy.injection,
            policy.tool_integrity.unicode,
            IntentAnalyser(policy, catalogue) if policy.injection.structure else None,
        )
        self.taint_risk = Risk[policy.injection.taint_risk.upper()]
        self.drift_verdict = VERDICTS[policy.tool_integrity.drift_verdict]
        self.opaque_verdict = VERDICTS[policy.injection.opaque_tools]
        # Effect rules with a session condition map risk to verdict like the others.
        self.effect_verdicts = {
            risk: VERDICTS[verdict] for risk, verdict in policy.security.risk_verdicts.items()
        }
        self._definition_signs: dict[str, tuple[Sign, ...]] = {}
        self._lock = threading.Lock()

    def problems(self) -> list[str]:
        found = self.scanner.check_examples()
        categories = {r.category for r in self.injection.rules} | {
            "encoded",
            "hidden_text",
            "intent",
        }
        for combination in self.injection.combinations:
            for category in combination.categories:
                if category not in categories:
                    found.append(
                        f"injection combination {combination.id}: no rule has category "
                        f"{category!r} (known: {', '.join(sorted(categories))})"
                    )
        return found

    def definition_signs(self, fingerprint: str, definition: ToolDefinition) -> tuple[Sign, ...]:
        """What the scan of a definition finds; remembered by fingerprint for this policy."""
        found = self._definition_signs.get(fingerprint)
        if found is None:
            found = tuple(self.scanner.scan_definition(definition))
            with self._lock:
                if len(self._definition_signs) >= _MAX_REMEMBERED:
                    self._definition_signs.clear()
                self._definition_signs[fingerprint] = found
        return found

    def verdict_for_signs(self, signs: Sequence[Sign]) -> Verdict:
        verdicts = self.tools.risk_verdicts
        return max(
            (VERDICTS[verdicts[s.risk.name.lower()]] for s in signs),  # type: ignore[index]
            default=Verdict.ALLOW,
        )

    def flagged(self, signs: Sequence[Sign]) -> list[Sign]:
        """The signs that taint a session."""
        return [s for s in signs if s.risk >= self.taint_risk]
