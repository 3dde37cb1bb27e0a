"""One JSON line per Inspect, with secrets masked, for audit and debugging."""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import IO, Any

from sidecar.inspection.model import CallVerdict
from sidecar.inspection.verdict import Verdict
from sidecar.secrets import SecretScanner

MAX_ARGUMENTS_CHARS = 2048


class DecisionLog:
    def __init__(self, target: str, secrets: SecretScanner) -> None:
        """target: "stderr", "off", or a file path (appended to)."""
        self._secrets = secrets
        self._stream: IO[str] | None
        self._owned = False
        if target == "off":
            self._stream = None
        elif target == "stderr":
            self._stream = sys.stderr
        else:
            self._stream = open(target, "a", encoding="utf-8", buffering=1)  # noqa: SIM115
            self._owned = True
        self._lock = threading.Lock()

    @property
    def enabled(self) -> bool:
        return self._stream is not None

    def write(
        self,
        decision_id: str,
        session_id: str,
        revision: str,
        mode: str,
        verdicts: list[CallVerdict],
        failures: dict[str, str],
        latency_seconds: float,
    ) -> None:
        if self._stream is None:
            return
        record: dict[str, Any] = {
            "ts": round(time.time(), 6),
            "event": "decision",
            "decision_id": decision_id,
            "session_id": self._secrets.mask(session_id),  # client text, like ids and names
            "policy_revision": revision,
            "mode": mode,
            "latency_ms": round(latency_seconds * 1000, 3),
            "inspector_failures": failures,
            "calls": [self._call(v) for v in verdicts],
        }
        line = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()

    def _call(self, verdict: CallVerdict) -> dict[str, Any]:
        per_inspector: dict[str, Verdict] = {}
        for finding in verdict.findings:
            current = per_inspector.get(finding.inspector, Verdict.ALLOW)
            per_inspector[finding.inspector] = max(current, finding.verdict)
        # Mask before cutting, so a cut cannot expose half a secret.
        arguments = self._secrets.mask(verdict.call.canonical_arguments)
        if len(arguments) > MAX_ARGUMENTS_CHARS:
            arguments = arguments[:MAX_ARGUMENTS_CHARS] + "…"
        return {
            "id": self._secrets.mask(verdict.call.id),
            "tool": self._secrets.mask(verdict.call.name),
            "verdict": verdict.verdict.label,
            "reason": verdict.reason,  # already masked by the engine
            "inspectors": {name: v.label for name, v in per_inspector.items()},
            "rules": [f.rule_id for f in verdict.findings if f.verdict is not Verdict.ALLOW],
            "arguments": arguments,
        }

    def close(self) -> None:
        if self._owned and self._stream is not None:
            self._stream.close()
