"""What masking costs per Inspect, as ratios against baselines measured in the same run.

1. The whole in-process Inspect of one typical call with the decision log on (written to
   /dev/null, masked as in production), beside the same engine whose scanner masks nothing.
   The difference is what masking costs a call.
2. Masking one text: our scanner (RE2, a literal pre-check first) beside detect-secrets'
   plugins (Python `re`), on the same texts, when detect-secrets is importable. It is not
   a dependency: install it beside the project to reproduce that line
   (`pip install detect-secrets`).

Run: python -m bench.masking_bench
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import time
from collections.abc import Callable, Iterator

from sidecar.engine import EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.model import ToolCall
from sidecar.observability.decision_log import DecisionLog
from sidecar.policy.loader import bundled_policy_dir, load_policy
from sidecar.secrets import MASK_LIMIT, SecretScanner

SOURCE = "\n".join(
    f"def handler_{i}(request):\n    return respond(request, {i})" for i in range(40)
)
# {n} makes every round's text new, so no remembered answer (masking's or the
# shell walk's) hides the cost.
TEMPLATES = [
    ("shell", "command", "ls -la dir{n}"),
    ("shell", "command", "cd src && npm test -- --watch=false # {n}"),
    ("shell", "command", "git commit -m 'fix: handle the empty token list {n}'"),
    ("write_file", "content", SOURCE + "# {n}"),
    ("shell", "command", "PGPASSWORD=hunter2x{n} psql -h db -c 'select 1'"),
]
CALLS = [ToolCall("1", tool, {key: text}) for tool, key, text in TEMPLATES]


class NoMasking(SecretScanner):
    """The same scanner for egress, with masking turned off: the baseline."""

    def mask(self, text: str, limit: int = MASK_LIMIT) -> str:
        return text[:limit]  # the cut, without the scan

    def any_in(self, texts: list[str]) -> bool:
        return False


def engine(scanner: SecretScanner) -> PolicyEngine:
    parts = EngineParts.local(secrets=scanner)
    built = PolicyEngine(parts, DecisionLog(os.devnull, scanner))
    built.replace(compile_policy(load_policy([bundled_policy_dir()]), parts, None))
    return built


def per_call_us(run: Callable[[], object], rounds: int) -> float:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        run()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e6


def inspect_cost(rounds: int) -> None:
    masked, plain = engine(SecretScanner()), engine(NoMasking())
    loop = asyncio.new_event_loop()
    print("Inspect of one call, in-process, decision log on (p50, microseconds)")
    print(f"{'call':<32} {'no masking':>11} {'masking':>9} {'ratio':>6}")
    for tool, key, template in TEMPLATES:
        counter = iter(range(10**9))

        def one(
            chosen: PolicyEngine,
            tool: str = tool,
            key: str = key,
            template: str = template,
            counter: Iterator[int] = counter,
        ) -> Callable[[], object]:
            def run() -> object:
                n = next(counter)
                call = ToolCall("1", tool, {key: template.replace("{n}", str(n))})
                # A new session per round keeps the repetition inspector out of the way.
                return loop.run_until_complete(chosen.inspect(f"s{n}", [call]))

            return run

        for chosen in (masked, plain):
            per_call_us(one(chosen), 50)  # warm caches
        base = per_call_us(one(plain), rounds)
        cost = per_call_us(one(masked), rounds)
        label = json.dumps({key: template})[:30]
        print(f"{label:<32} {base:>11.1f} {cost:>9.1f} {cost / base:>6.2f}")
    loop.close()


def detect_secrets_cost(rounds: int) -> None:
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class  # type: ignore
        from detect_secrets.core.scan import _process_line_based_plugins  # type: ignore  # noqa: F401
        from detect_secrets.settings import default_settings  # type: ignore
    except ImportError:
        print("detect-secrets is not installed: its comparison is skipped")
        return
    with default_settings():
        plugins = [cls() for cls in get_mapping_from_secret_type_to_class().values()]
    scanner = SecretScanner()
    print("Masking one text (p50, microseconds): ours vs detect-secrets' plugins")
    print(f"{'text':<32} {'ours':>8} {'detect-secrets':>15} {'ratio':>6}")
    for call in CALLS:
        text = call.canonical_arguments
        fresh = iter(range(10**9))

        def ours_once(text: str = text, fresh: Iterator[int] = fresh) -> object:
            return scanner.mask(text + str(next(fresh)))

        def theirs(text: str = text) -> object:
            found = []
            for line in text.splitlines() or [""]:
                for plugin in plugins:
                    found.extend(plugin.analyze_line(filename="x", line=line, line_number=1))
            return found

        ours = per_call_us(ours_once, rounds)
        them = per_call_us(theirs, max(rounds // 10, 20))
        print(f"{text[:30]:<32} {ours:>8.1f} {them:>15.1f} {them / ours:>6.0f}x")


def main() -> None:
    rounds = int(os.environ.get("BENCH_ROUNDS", "2000"))
    inspect_cost(rounds)
    print()
    detect_secrets_cost(rounds)


if __name__ == "__main__":
    main()
