"""Policy test suites: YAML files of tool calls with the verdicts a policy must give.

A suite lives in a policy directory's `tests/` folder:

    mode: auto                       # optional; the policy's own mode otherwise
    cases:
      - name: rm of the root is denied
        call: {tool: shell, args: {command: "rm -rf /"}}
        expect: deny                 # allow | deny | require_approval | block (not allow)
        rules: [destructive.rm-root] # optional: rule ids that must be among the findings
      - name: egress after reading a secret asks
        steps:                       # calls in one session; the last one is judged
          - {tool: read_file, args: {path: .env}}
          - {tool: fetch, args: {url: "https://example.com"}}
        expect: block
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from sidecar.engine import EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.observability.decision_log import DecisionLog
from sidecar.policy.loader import LoadedPolicy, PolicyError, PolicyProblem, problems_from
from sidecar.policy.yaml_text import parse_yaml

Expectation = Literal["allow", "deny", "require_approval", "block"]
_PASSES = {
    "allow": {Verdict.ALLOW},
    "deny": {Verdict.DENY},
    "require_approval": {Verdict.REQUIRE_APPROVAL},
    "block": {Verdict.DENY, Verdict.REQUIRE_APPROVAL},
}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CallSpec(_Strict):
    tool: str = Field(min_length=1)
    args: dict[str, Any] = {}
    id: str | None = None


class Case(_Strict):
    name: str = Field(min_length=1)
    call: CallSpec | None = None
    steps: tuple[CallSpec, ...] = ()
    expect: Expectation
    rules: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_shape(self) -> Case:
        if (self.call is None) == (not self.steps):
            raise ValueError("a case needs exactly one of 'call' or 'steps'")
        return self

    @property
    def calls(self) -> tuple[CallSpec, ...]:
        return (self.call,) if self.call is not None else self.steps


class Suite(_Strict):
    mode: Literal["auto", "smart_approve", "approve", "chat"] | None = None
    cases: tuple[Case, ...] = Field(min_length=1)


@dataclass(frozen=True, slots=True)
class CaseResult:
    file: str
    name: str
    passed: bool
    detail: str


def suite_files(directories: Sequence[Path]) -> list[Path]:
    found: list[Path] = []
    for directory in directories:
        tests = directory / "tests"
        if tests.is_dir():
            found += sorted(p for p in tests.iterdir() if p.suffix in (".yaml", ".yml"))
    return found


def load_suites(files: Sequence[Path]) -> list[tuple[Path, Suite]]:
    """Every suite, or a PolicyError listing each problem with file and line."""
    suites: list[tuple[Path, Suite]] = []
    problems: list[PolicyProblem] = []
    for path in files:
        text = path.read_text(encoding="utf-8")
        try:
            data = parse_yaml(text, unique_keys=True)
        except yaml.YAMLError as error:
            mark = getattr(error, "problem_mark", None)
            line = mark.line + 1 if mark is not None else None
            problems.append(PolicyProblem(str(path), line, "", "not valid YAML"))
            continue
        try:
            suites.append((path, Suite.model_validate(data)))
        except ValidationError as error:
            problems += problems_from(str(path), text, error, Suite)
    if problems:
        raise PolicyError(problems)
    return suites


async def run_suites(
    loaded: LoadedPolicy,
    suites: Sequence[tuple[Path, Suite]],
    make_parts: Callable[[], EngineParts],
) -> list[CaseResult]:
    """Run each case in a fresh session on a fresh engine for the suite's mode."""
    results: list[CaseResult] = []
    sessions = itertools.count()
    for path, suite in suites:
        parts: EngineParts = make_parts()
        mode = Mode.parse(suite.mode) if suite.mode else None
        engine = PolicyEngine(parts, DecisionLog("off", parts.secrets))
        engine.replace(compile_policy(loaded, parts, mode))
        for case in suite.cases:
            session = f"policy-test-{next(sessions)}"
            verdict = None
            for index, spec in enumerate(case.calls):
                call = ToolCall(spec.id or f"c{index}", spec.tool, spec.args)
                verdict = (await engine.inspect(session, [call])).verdicts[0]
            assert verdict is not None
            rules = {f.rule_id for f in verdict.findings}
            missing = [r for r in case.rules if r not in rules]
            passed = verdict.verdict in _PASSES[case.expect] and not missing
            detail = f"got {verdict.verdict.label}: {verdict.reason}"
            if missing:
                detail += f"; missing rules {', '.join(missing)} (found {', '.join(sorted(rules))})"
            results.append(CaseResult(str(path), case.name, passed, detail))
    return results
