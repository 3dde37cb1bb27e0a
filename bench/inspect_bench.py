"""Benchmarks, reported as ratios against baselines measured in the same run.

1. The full default chain in-process, per tool call, for typical commands, beside a bare
   tree-sitter parse of the same commands (the floor for anything that parses shell).
   Three cases, from cheapest to dearest:
   - repeated lines: the same command line again (its analysis is remembered);
   - new lines: every line is new (a changing comment), its commands familiar, as when an
     agent runs `npm test` inside ever different lines; parse and walk are never cached;
   - new words: every simple command carries a word never seen before, so nothing at
     all is remembered. This is the worst case.
2. Inspect over loopback gRPC, beside an empty gRPC call (health Check) on the same server.

Run: make bench
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from collections.abc import Awaitable, Callable

import grpc
import tree_sitter_bash
from grpc_health.v1 import health_pb2, health_pb2_grpc
from tree_sitter import Language, Parser

from bench.local_sidecar import local_sidecar
from sidecar.engine import EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.model import ToolCall
from sidecar.observability.decision_log import DecisionLog
from sidecar.policy.loader import bundled_policy_dir, load_policy
from sidecar.shell.limits import StructuralLimits
from sidecar.shell.walk import _analyse_default
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc

TYPICAL = [
    "ls -la",
    "git status",
    "git commit -m 'fix: handle empty input'",
    "pytest -q tests/test_api.py -k 'not slow'",
    "cd src && grep -rn 'TODO' . | head -20",
    "npm run build && npm test",
    "find . -name '*.pyc' -delete",
    "curl -s https://api.github.com/repos/o/r | jq .stargazers_count",
    "docker build -t app:dev . && docker run --rm app:dev",
    "python3 -c 'import sys; print(sys.version)'",
]
# The same commands with a fresh word in every simple command ({n} is the round).
TYPICAL_NEW_WORDS = [
    "ls -la dir{n}",
    "git status -- path{n}",
    "git commit -m 'fix: handle empty input {n}'",
    "pytest -q tests/test_api{n}.py -k 'not slow'",
    "cd src{n} && grep -rn 'TODO{n}' . | head -{n}",
    "npm run build{n} && npm test -- {n}",
    "find . -name '*.pyc{n}' -delete",
    "curl -s https://api.github.com/repos/o/r{n} | jq .stargazers_count{n}",
    "docker build -t app:dev{n} . && docker run --rm app:dev{n}",
    "python3 -c 'import sys; print(sys.version, {n})'",
]


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


async def timed(run: Callable[[], Awaitable[object]], rounds: int) -> list[float]:
    samples = []
    for _ in range(rounds):
        started = time.perf_counter()
        await run()
        samples.append(time.perf_counter() - started)
    return samples


def fresh_engine() -> PolicyEngine:
    parts = EngineParts.local()
    engine = PolicyEngine(parts, DecisionLog("off", parts.secrets))
    engine.replace(compile_policy(load_policy([bundled_policy_dir()]), parts, None))
    return engine


def command_lines(case: str, round_number: int) -> list[str]:
    if case == "repeated lines":
        return TYPICAL
    if case == "new lines":
        return [f"{command} # {round_number}" for command in TYPICAL]
    return [template.format(n=round_number) for template in TYPICAL_NEW_WORDS]


CASES = ("repeated lines", "new lines", "new words")


async def chain_vs_parse(rounds: int) -> dict[str, dict[str, float]]:
    """Per case: the chain's and a bare parse's p50/p99, measured side by side."""
    parser = Parser(Language(tree_sitter_bash.language()))
    results: dict[str, dict[str, float]] = {}
    for case in CASES:
        engine = fresh_engine()  # nothing remembered from another case
        chain_samples: list[float] = []
        parse_samples: list[float] = []
        for round_number in range(-20, rounds):  # negative rounds warm up, unrecorded
            for index, text in enumerate(command_lines(case, round_number)):
                call = ToolCall(str(index), "shell", {"command": text})
                started = time.perf_counter()
                await engine.inspect(f"bench-{round_number}", [call])
                chain_time = time.perf_counter() - started
                started = time.perf_counter()
                parser.parse(text.encode())
                parse_time = time.perf_counter() - started
                if round_number >= 0:
                    chain_samples.append(chain_time)
                    parse_samples.append(parse_time)
        _analyse_default.cache_clear()
        results[case] = {
            "chain_p50_us": percentile(chain_samples, 0.5) * 1e6,
            "chain_p99_us": percentile(chain_samples, 0.99) * 1e6,
            "parse_p50_us": percentile(parse_samples, 0.5) * 1e6,
            "parse_p99_us": percentile(parse_samples, 0.99) * 1e6,
        }
    return results


async def grpc_vs_empty(rounds: int) -> dict[str, float]:
    async with (
        local_sidecar(mode="auto") as sidecar,
        grpc.aio.insecure_channel(sidecar.addresses[0]) as channel,
    ):
        health = health_pb2_grpc.HealthStub(channel)
        policy = pb_grpc.PolicyServiceStub(channel)
        calls = [
            pb.ToolCall(id=str(i), name="shell", arguments_json=json.dumps({"command": c}))
            for i, c in enumerate(TYPICAL[:5])
        ]

        async def empty() -> object:
            return await health.Check(health_pb2.HealthCheckRequest())

        counter = iter(range(10**9))

        async def inspect() -> object:
            # A new session each time, so the repetition inspector never denies.
            request = pb.InspectRequest(session_id=f"s{next(counter)}", tool_calls=calls)
            return await policy.Inspect(request)

        await timed(empty, 50)
        await timed(inspect, 50)
        empty_samples: list[float] = []
        inspect_samples: list[float] = []
        for _ in range(rounds // 10):  # interleave, so noise hits both alike
            empty_samples += await timed(empty, 10)
            inspect_samples += await timed(inspect, 10)
    return {
        "empty_p50_us": statistics.median(empty_samples) * 1e6,
        "inspect5_p50_us": statistics.median(inspect_samples) * 1e6,
        "inspect5_p99_us": percentile(inspect_samples, 0.99) * 1e6,
        "empty_p99_us": percentile(empty_samples, 0.99) * 1e6,
    }


# Hostile shapes, each built at a size n: the chain must take linear time in n, with its
# per-request limits lifted (see unbounded_engine).
HOSTILE: dict[str, tuple[int, Callable[[int], str]]] = {
    "pipeline stages": (2_500, lambda n: " | ".join(["cat"] * n)),
    "nested subshells": (2_500, lambda n: "( " * n + "ls" + " )" * n),
    "chained commands": (2_500, lambda n: " && ".join(["ls -la"] * n)),
    "assignments": (2_500, lambda n: " && ".join(["A=1"] * n)),
    "os.system calls": (1_500, lambda n: "python3 -c '" + 'os.system("ls"); ' * n + "'"),
    "git -c settings": (
        1_200,
        lambda n: "git " + " ".join(f"-c alias.a{i}='!ls'" for i in range(n)),
    ),
    "alias uses": (1_000, lambda n: "alias a='" + "ls " * 100 + "'; " + ";".join(["a"] * n)),
    "staged secrets": (
        1_000,
        lambda n: "; ".join(f"tar czf /tmp/a{i}.tgz ~/.ssh" for i in range(n)),
    ),
}


def unbounded_engine() -> PolicyEngine:
    """The chain with its per-request bounds lifted: the limits and budgets would cut
    these lines short (bench/hostile_bench.py measures that), and here the question is
    whether the analysis itself stays linear."""
    engine = fresh_engine()
    shell_calls = engine.active.chain.shell_calls
    assert shell_calls is not None
    big = 10**9
    shell_calls.limits = StructuralLimits(big, big, big, big, big, big, big)
    shell_calls.max_bytes = big
    shell_calls.inline_budget = shell_calls.fallback_budget = 3600.0
    return engine


async def scaling() -> dict[str, tuple[int, float, float]]:
    """Per shape: the base size, seconds at it, and the time at 4x over that (4.0 is linear)."""
    engine = unbounded_engine()
    results: dict[str, tuple[int, float, float]] = {}
    for name, (base, build) in HOSTILE.items():
        times = []
        for size in (base, 4 * base):
            call = ToolCall("1", "shell", {"command": build(size)})
            started = time.perf_counter()
            await engine.inspect(f"hostile-{name}-{size}", [call])
            times.append(time.perf_counter() - started)
        results[name] = (base, times[0], times[1] / times[0])
    return results


async def main() -> None:
    chain = await chain_vs_parse(rounds=300)
    print("In-process default chain, one shell call per Inspect, typical commands:")
    print(f"  {'case':15} {'chain p50':>10} {'p99':>8} {'parse p50':>10} {'p99':>7}  ratio p50")
    for case, row in chain.items():
        print(
            f"  {case:15} {row['chain_p50_us']:7.1f} us {row['chain_p99_us']:5.0f} us"
            f" {row['parse_p50_us']:7.1f} us {row['parse_p99_us']:4.0f} us"
            f"  {row['chain_p50_us'] / row['parse_p50_us']:5.1f}x"
        )
    rpc = await grpc_vs_empty(rounds=1000)
    print("Loopback gRPC over a Unix socket, Inspect of 5 shell calls vs an empty health Check:")
    print(f"  empty    p50 {rpc['empty_p50_us']:8.1f} us   p99 {rpc['empty_p99_us']:8.1f} us")
    print(f"  inspect5 p50 {rpc['inspect5_p50_us']:8.1f} us   p99 {rpc['inspect5_p99_us']:8.1f} us")
    print(f"  ratio inspect5/empty p50 {rpc['inspect5_p50_us'] / rpc['empty_p50_us']:.2f}x")
    grown = await scaling()
    print("Hostile inputs: time at 4x the size over time at the size (4.0 is linear):")
    for name, (base, seconds, ratio) in grown.items():
        print(f"  {name:17} {seconds * 1000:8.1f} ms at {base:5,}   x{ratio:4.1f} at {4 * base:6,}")


if __name__ == "__main__":
    asyncio.run(main())
