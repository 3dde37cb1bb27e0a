"""A person's "once" answer settles the next Inspect of exactly the call that was asked about.

The chain merges strictest first, so an inspector cannot turn another's REQUIRE_APPROVAL into
ALLOW; the person answering the question can. This runs on the merged verdicts: an "allow
once" answer turns REQUIRE_APPROVAL into ALLOW (never DENY into anything), a "deny once"
answer makes the call DENY. Either is used up by that Inspect, whatever its verdict
(`SessionStates.settle_once` finds the answer in the session's snapshot and uses it up
in the store, where only one replica can win it).
"""

from __future__ import annotations

import hashlib

from sidecar.inspection.model import CallVerdict, Finding, ToolCall
from sidecar.inspection.verdict import Verdict
from sidecar.state.approvals import OnceAnswer

RULE_ID = "permission.answered_once"


def arguments_digest(call: ToolCall) -> str:
    """What "the same arguments" means: the canonical JSON (key order, spacing ignored)."""
    text = call.canonical_arguments.encode("utf-8", "surrogatepass")
    return hashlib.sha256(text).hexdigest()


def settle(verdict: CallVerdict, answer: OnceAnswer) -> CallVerdict:
    label = "allowed" if answer.verdict is Verdict.ALLOW else "denied"
    message = (
        f"a person {label} this call once "
        f"(decision {answer.decision_id}, call {answer.tool_call_id})"
    )
    finding = Finding(
        inspector="permission", verdict=answer.verdict, rule_id=RULE_ID, message=message
    )
    findings = [*verdict.findings, finding]
    if verdict.verdict is Verdict.DENY:
        return CallVerdict(verdict.call, Verdict.DENY, verdict.reason, "", findings)
    return CallVerdict(verdict.call, answer.verdict, message, "", findings)
