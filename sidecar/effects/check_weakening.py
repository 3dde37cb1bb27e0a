"""Edits that weaken a project's checks: a CI job's security scan or tests removed from what
gates a deploy, a failing step let pass, a workflow given write access to everything or run
with secrets on strangers' pull requests, a secret scanner dropped from pre-commit, a
security team dropped from CODEOWNERS.

Judged from what an edit takes out and puts in (the replaced text and the replacement): a
check word (test, lint, scan, security, gitleaks, codeql, a team handle ...) that was there
and is nowhere in the new text is a check removed; a loosening switch that appears is one
turned off. Renaming a step (`npm test` to `npm run test:ci`) keeps its word and is no
weakening. RE2 over untrusted text.
"""

from __future__ import annotations

import re2

_CHECK_WORD = re2.compile(
    r"(?i)(@[\w-]+/[\w.-]+|\b(?:tests?|pytest|jest|vitest|mocha|rspec|lint|linters?|eslint|"
    r"ruff|flake8|pylint|mypy|typecheck|tsc|scan|scans|scanner|security|secrets?|gitleaks|"
    r"trufflehog|detect-secrets|codeql|trivy|grype|snyk|semgrep|bandit|gosec|audit|sast|dast|"
    r"sonar\w*|checkov|tfsec|review|reviewers|approvals?|required|codeowners|verify|signatures?|"
    r"cosign|sigstore|integration|e2e|coverage)\b)"
)
_LOOSENING = re2.compile(
    r"(?i)(permissions:\s*write-all|continue-on-error:\s*true|\bif:\s*(?:false|\$\{\{\s*false\s*\}\})"
    r"|--no-verify\b|\|\|\s*true\b|allow_failure:\s*true|\bpull_request_target\b|"
    r"\bSKIP\s*=\s*[\w,-]+|--exit-zero\b|--no-fail\b|-x\s+test\b|fail_ci_if_error:\s*false)"
)


def weakens_checks(removed: str, added: str) -> bool:
    """Whether replacing `removed` by `added` in a CI, hook or review file weakens it."""
    if not removed and not added:
        return False
    if _LOOSENING.search(added) is not None and _LOOSENING.search(removed) is None:
        return True
    before = {m.lower() for m in _CHECK_WORD.findall(removed)}
    after = {m.lower() for m in _CHECK_WORD.findall(added)}
    return bool(before - after)


# An agent runtime's guards: the hooks that call the policy sidecar, permission rules.
_GUARD_WORD = re2.compile(
    r"(?i)\b(sidecar|agent-policy|PreToolUse|PostToolUse|hooks|deny|ask|disallowedTools|"
    r"permissions|sandbox|approval_policy|approvalMode|autoApprove)\b"
)
_SIDECAR = re2.compile(r"(?i)(sidecar|agent-policy)")


def weakens_guard(removed: str, added: str) -> str:
    """What replacing `removed` by `added` in an agent's settings takes out: "sidecar" when
    a hook or entry naming the policy sidecar goes, "guard" when another guard word does,
    "" when nothing does."""
    if _SIDECAR.search(removed) is not None and _SIDECAR.search(added) is None:
        return "sidecar"
    before = {m.lower() for m in _GUARD_WORD.findall(removed)}
    after = {m.lower() for m in _GUARD_WORD.findall(added)}
    return "guard" if before - after else ""
