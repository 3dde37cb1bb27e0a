"""Write BENCHMARKS.md from one run of each: Inspect and Project against an empty gRPC
server (bench/rpc_bench.py), the soak's resident-memory drift (bench/soak.py) and the
fuzz cases survived (bench/fuzz.py).

Run: make bench (SOAK_SECONDS, SOAK_WARMUP, FUZZ_CASES set the long forms' sizes).
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import os
import platform
from pathlib import Path

import grpc

from bench import fuzz, hostile_bench, rpc_bench, soak, store_bench, workers_bench
from bench.local_sidecar import local_sidecar


async def _fuzz(cases: int) -> fuzz.Report:
    async with (
        local_sidecar(mode="auto") as sidecar,
        grpc.aio.insecure_channel(sidecar.addresses[0]) as channel,
    ):
        report = await fuzz.run_cases(channel, fuzz.all_cases(cases))
        await channel.unary_unary(fuzz.HEALTH)(fuzz.SEEDS[fuzz.HEALTH][0], timeout=5)
    return report


def _host() -> str:
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    python = f"{platform.python_implementation()} {platform.python_version()}"
    return f"{python}, {os.cpu_count()} CPUs, load average {load} at the end"


async def _run(args: argparse.Namespace) -> str:
    started = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    rpc = await rpc_bench.run()
    # Issue 10's criterion: Inspect of 10 never-seen calls, p50 <= 2.5x the empty server's.
    rpc["Inspect, 10 calls"] = (await rpc_bench.run(inspect_calls=10, only=("Inspect",)))["Inspect"]
    stores = await store_bench.run()
    workers = await workers_bench.main(seconds=8.0, rounds=3, state="")
    hostile = await hostile_bench.run()
    fuzzed = await _fuzz(args.fuzz_cases)
    soaks = [
        await soak.soak(args.soak_seconds, args.soak_warmup, mix=mix) for mix in ("all", "policy")
    ]
    mb = 1024 * 1024
    return "\n".join(
        [
            "# Benchmarks",
            "",
            f"One run of `make bench`, started {started} ({_host()}). Machines here are shared",
            "and noisy: compare ratios, not microseconds, and run again before concluding much.",
            "",
            "## Inspect and Project against an empty gRPC server",
            "",
            "The empty server (bench/empty_server.py) runs the same grpc.aio stack in its own",
            "process and answers with the same response bytes, doing nothing else; measured in",
            "the same run, alternating in short rounds. Inspect carries 5 shell calls with words",
            "never seen before (nothing remembered), and 10 in the row for issue 10's criterion",
            "(p50 at most 2.5x the empty server's); Project returns a 100-message session.",
            "Latency ratios above 1 and throughput ratios below 1 are what the sidecar adds.",
            "",
            rpc_bench.table(rpc),
            "",
            "## The shared store: PostgreSQL against SQLite",
            "",
            "Two `sidecar serve` processes side by side (bench/store_bench.py), one on a SQLite",
            "file and one on a PostgreSQL server started on loopback, alternating in short",
            "rounds. Append carries one call and its result; Project returns a 100-message",
            'session; Inspect is of a tool the person answered "always allow" in mode approve.',
            "PostgreSQL pays round trips: two per Inspect (the snapshot, the write), about",
            "six per Append (the version check, duplicate ids, the transaction).",
            "",
            store_bench.table(stores),
            "",
            "## More than one core: `--workers 2` against `--workers 1`",
            "",
            "bench/workers_bench.py: Inspect of 10 shell calls never seen before, at",
            "concurrency 32 over 16 connections, against `sidecar serve --workers N` on a",
            "SQLite file, alternating rounds. The client shares the two cores.",
            "",
            f"| workers | throughput |\n|---|---|\n| 1 | {workers['one']:.0f}/s |\n"
            f"| 2 | {workers['two']:.0f}/s ({workers['ratio']:.2f}x) |",
            "",
            "## Hostile shapes, with a health check running beside each",
            "",
            "The shapes of the hardening probe (issue 11) against a `sidecar serve` process",
            "(bench/hostile_bench.py). Before this work the first took 11 s and 3.2 GB that",
            "never came back, and held health checks for the same 11 s; 31 valid 128 KiB",
            "commands blocked the server for 4.5 s. The idle rows are the host's own floor.",
            "",
            hostile_bench.table(hostile),
            "",
            "## Soak: resident memory under mixed load",
            "",
            f"`bench/soak.py`, concurrency 16, {soaks[0].seconds:.0f} s after a "
            f"{soaks[0].warmup:.0f} s warm-up, against a `sidecar serve` process. `all` is the",
            "whole mix (bench/soak.py lists it); `policy` leaves out Append, Project and History,",
            "to tell the policy side's memory from the context service's.",
            "",
            "| mix | calls | errors | dangerous allowed | RSS after warm-up | at the end | drift "
            "| peak |",
            "|---|---|---|---|---|---|---|---|",
            *(
                f"| {r.mix} | {r.calls:,} | {sum(r.errors.values())} | {r.allowed_dangerous} "
                f"| {r.rss_after_warmup / mb:.1f} MB | {r.rss_end / mb:.1f} MB | {r.drift:+.1%} "
                f"| {r.rss_max / mb:.1f} MB ({r.peak_drift:+.1%}) |"
                for r in soaks
            ),
            "",
            "## Fuzz: malformed requests",
            "",
            f"`bench/fuzz.py`: {fuzzed.survived:,} of {fuzzed.cases:,} cases survived (an answer a",
            "client can act on: INVALID_ARGUMENT where the input is malformed, never UNKNOWN or",
            "INTERNAL), and the server still answered afterwards.",
            "",
        ]
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--soak-seconds", type=float, default=300)
    parser.add_argument("--soak-warmup", type=float, default=60)
    parser.add_argument("--fuzz-cases", type=int, default=5000)
    parser.add_argument("--output", type=Path, default=Path("BENCHMARKS.md"))
    args = parser.parse_args()
    text = asyncio.run(_run(args))
    args.output.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
