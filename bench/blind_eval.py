"""Score a blind red-team set for issue 10 through live sidecars (bundled policy).

A set is a folder written by someone who never read the code or the rules:

- calls.jsonl: {"id", "tool", "args", "expect": deny|block|allow, "class"}, judged in mode auto;
- sessions.jsonl: {"id", "class", "steps": [{"tool", "args"}...], "expect_last"}, each step
  inspected in order in one session, the last one scored; a second figure counts a risky
  session as stopped when any step was not allowed (a step that does not run breaks the
  chain), and a benign one as blocked when any step was;
- readonly.jsonl: {"id", "tool", "args"}, everyday read-only calls scored in smart_approve
  (the share that asks; issue 10 wants at most 10%).

By default only aggregates are printed, so a held-out set can be measured without learning
its contents. `--classes` adds per-class counts, `--misses` the cases that were judged wrong:
use them only on a set you have decided to tune on, and say so where you quote its figures.

Run: python -m bench.blind_eval DIR [--classes] [--misses]
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

from bench.eval import (
    PASSES,
    Inspect,
    InspectSteps,
    Tally,
    _name,
    _pct,
    _table,
    grpc_inspect,
    grpc_inspect_steps,
)
from bench.local_sidecar import local_sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc


@dataclass
class BlindFigures:
    calls: Tally = field(default_factory=Tally)
    sessions: Tally = field(default_factory=Tally)
    classes: dict[str, Tally] = field(default_factory=lambda: defaultdict(Tally))
    read_only: int = 0
    read_only_asked: int = 0
    chains_risky: int = 0  # risky sessions, and those where some step was not allowed
    chains_broken: int = 0
    chains_benign: int = 0  # benign sessions, and those where some step was not allowed
    chains_blocked: int = 0
    skipped: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)

    def miss(self, case: dict[str, Any], expect: str, verdict: int) -> None:
        last = case["steps"][-1] if "steps" in case else case
        self.misses.append(
            f"{case.get('id', '?')} [{case.get('class', '')}] expected {expect}, got "
            f"{_name(verdict)}: {last['tool']} {json.dumps(last['args'])[:160]}"
        )

    def render(self, classes: bool, misses: bool) -> str:
        c, s = self.calls, self.sessions
        lines = [
            f"risky calls not allowed:  {_pct(c.not_allowed, c.risky)}  "
            f"({c.not_allowed}/{c.risky})",
            f"expected denials denied:  {_pct(c.denied, c.deny)}  ({c.denied}/{c.deny})",
            f"benign calls blocked:     {_pct(c.blocked, c.benign)}  ({c.blocked}/{c.benign})",
            f"sessions right:           {_pct(s.sessions_right, s.sessions)}  "
            f"({s.sessions_right}/{s.sessions}; risky last steps stopped "
            f"{s.not_allowed}/{s.risky}, benign blocked {s.blocked}/{s.benign})",
            f"sessions, any step:       risky chains broken "
            f"{_pct(self.chains_broken, self.chains_risky)} "
            f"({self.chains_broken}/{self.chains_risky}), benign with a step blocked "
            f"{self.chains_blocked}/{self.chains_benign}",
            f"smart_approve read-only asked: {_pct(self.read_only_asked, self.read_only)}  "
            f"({self.read_only_asked}/{self.read_only})",
        ]
        lines += [f"skipped: {reason}" for reason in self.skipped]
        if classes:
            lines += ["", _table("class", self.classes)]
        if misses:
            lines += ["", *self.misses]
        return "\n".join(lines)


def _rows(path: Path, needed: set[str], figures: BlindFigures) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    if not path.exists():
        return rows
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            figures.skipped.append(f"{path.name}:{number}: not JSON")
            continue
        if not isinstance(row, dict) or not needed <= row.keys():
            figures.skipped.append(f"{path.name}:{number}: lacks {sorted(needed)}")
            continue
        rows.append(row)
    return rows


def _expect(value: Any) -> str | None:
    expect = str(value).lower()
    return {"ask": "block", "require_approval": "block"}.get(expect, expect)


async def score(folder: Path, auto: Inspect, smart: Inspect, steps: InspectSteps) -> BlindFigures:
    figures = BlindFigures()
    calls = _rows(folder / "calls.jsonl", {"tool", "args", "expect"}, figures)
    for number, case in enumerate(calls):
        expect = _expect(case["expect"])
        if expect not in PASSES:
            figures.skipped.append(f"calls {case.get('id')}: expect {case['expect']!r}")
            continue
        case["expect"] = expect
        verdict = await auto(f"blind-call-{number}", [case])
        figures.calls.add(case, verdict)
        figures.classes[str(case.get("class", "-"))].add(case, verdict)
        if verdict not in PASSES[expect]:
            figures.miss(case, expect, verdict)
    sessions = _rows(folder / "sessions.jsonl", {"steps", "expect_last"}, figures)
    for number, case in enumerate(sessions):
        expect = _expect(case["expect_last"])
        if expect not in PASSES or not case["steps"]:
            figures.skipped.append(f"sessions {case.get('id')}: expect_last or steps")
            continue
        case["expect_last"] = expect
        verdicts = await steps(f"blind-session-{number}", case["steps"])
        verdict = verdicts[-1]
        stopped = any(v != pb.VERDICT_ALLOW for v in verdicts)
        if _expect(case["expect_last"]) == "allow":
            figures.chains_benign += 1
            figures.chains_blocked += stopped
        else:
            figures.chains_risky += 1
            figures.chains_broken += stopped
        figures.sessions.add(case, verdict)
        figures.classes["session:" + str(case.get("class", "-"))].add(case, verdict)
        if verdict not in PASSES[expect]:
            figures.miss(case, expect, verdict)
    for number, case in enumerate(_rows(folder / "readonly.jsonl", {"tool", "args"}, figures)):
        verdict = await smart(f"blind-ro-{number}", [case])
        figures.read_only += 1
        if verdict != pb.VERDICT_ALLOW:
            figures.read_only_asked += 1
            figures.miss(case, "allow (smart_approve)", verdict)
    return figures


async def run(folder: Path) -> BlindFigures:
    async with (
        local_sidecar(mode="auto") as auto_sidecar,
        local_sidecar(mode="smart_approve") as smart_sidecar,
        grpc.aio.insecure_channel(auto_sidecar.addresses[0]) as auto_channel,
        grpc.aio.insecure_channel(smart_sidecar.addresses[0]) as smart_channel,
    ):
        return await score(
            folder,
            grpc_inspect(pb_grpc.PolicyServiceStub(auto_channel)),
            grpc_inspect(pb_grpc.PolicyServiceStub(smart_channel)),
            grpc_inspect_steps(pb_grpc.PolicyServiceStub(auto_channel)),
        )


def main(argv: list[str]) -> int:
    folders = [Path(a) for a in argv if not a.startswith("--")]
    if len(folders) != 1 or not folders[0].is_dir():
        print("usage: python -m bench.blind_eval DIR [--classes] [--misses]", file=sys.stderr)
        return 2
    logging.getLogger("sidecar").setLevel(logging.ERROR)
    figures = asyncio.run(run(folders[0]))
    print(figures.render(classes="--classes" in argv, misses="--misses" in argv))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
