"""asyncpg against psycopg 3 (+ psycopg_pool), on a real PostgreSQL started here: the
measurement behind the choice of driver (docs/STATUS.md, issue 12).

The shapes are the store's own: a parameterised one-row read (the Inspect snapshot), an
upsert (the write after the chain) and a transaction of a read, a conditional update and
three inserts (an Append). Each is timed serially (p50 of round trips) and at
concurrency 32 over a pool of 8 connections, in alternating rounds.

Run: python -m bench.pg_driver_bench  (needs PostgreSQL: make tools)
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable

import asyncpg
import psycopg
import psycopg_pool

from tests.postgres_server import PostgresServer

SETUP = """
CREATE TABLE IF NOT EXISTS kv (session_id TEXT PRIMARY KEY, name TEXT NOT NULL,
    digest TEXT NOT NULL, count BIGINT NOT NULL, version BIGINT NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS rows (session_id TEXT NOT NULL, seq BIGINT NOT NULL,
    body TEXT NOT NULL, PRIMARY KEY (session_id, seq));
INSERT INTO kv SELECT 's' || i, 'shell', 'd' || i, i, 0 FROM generate_series(0, 999) AS i
    ON CONFLICT DO NOTHING;
"""
READ = "SELECT name, digest, count FROM kv WHERE session_id = $1"
UPSERT = (
    "INSERT INTO kv (session_id, name, digest, count) VALUES ($1, $2, $3, 1) "
    "ON CONFLICT (session_id) DO UPDATE SET count = kv.count + 1, digest = EXCLUDED.digest"
)
BUMP = "UPDATE kv SET version = version + 1 WHERE session_id = $1 AND version >= $2"
INSERT = "INSERT INTO rows (session_id, seq, body) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING"


def _psycopg(sql: str) -> str:
    for n in range(9, 0, -1):
        sql = sql.replace(f"${n}", "%s")
    return sql


class Asyncpg:
    name = "asyncpg"

    async def open(self, dsn: str) -> None:
        self.pool = await asyncpg.create_pool(dsn, min_size=8, max_size=8)

    async def read(self, n: int) -> None:
        async with self.pool.acquire() as conn:
            await conn.fetchrow(READ, f"s{n % 1000}")

    async def upsert(self, n: int) -> None:
        async with self.pool.acquire() as conn:
            await conn.execute(UPSERT, f"w{n % 1000}", "shell", f"d{n}")

    async def append(self, n: int) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.fetchrow(READ, f"s{n % 1000}")
            await conn.execute(BUMP, f"s{n % 1000}", 0)
            await conn.executemany(
                INSERT, [(f"a{n % 1000}", n * 3 + i, "x" * 200) for i in range(3)]
            )

    async def close(self) -> None:
        await self.pool.close()


class Psycopg:
    name = "psycopg"

    async def open(self, dsn: str) -> None:
        self.pool = psycopg_pool.AsyncConnectionPool(dsn, min_size=8, max_size=8, open=False)
        await self.pool.open(wait=True)

    async def read(self, n: int) -> None:
        async with self.pool.connection() as conn:
            await (await conn.execute(_psycopg(READ), (f"s{n % 1000}",), prepare=True)).fetchone()

    async def upsert(self, n: int) -> None:
        async with self.pool.connection() as conn:
            await conn.execute(_psycopg(UPSERT), (f"w{n % 1000}", "shell", f"d{n}"), prepare=True)

    async def append(self, n: int) -> None:
        async with self.pool.connection() as conn, conn.transaction():
            await (await conn.execute(_psycopg(READ), (f"s{n % 1000}",), prepare=True)).fetchone()
            await conn.execute(_psycopg(BUMP), (f"s{n % 1000}", 0), prepare=True)
            async with conn.cursor() as cursor:
                await cursor.executemany(
                    _psycopg(INSERT), [(f"a{n % 1000}", n * 3 + i, "x" * 200) for i in range(3)]
                )

    async def close(self) -> None:
        await self.pool.close()


async def _serial(work: Callable[[int], Awaitable[None]], rounds: int) -> float:
    times = []
    for n in range(rounds):
        started = time.perf_counter()
        await work(n)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def _throughput(work: Callable[[int], Awaitable[None]], total: int) -> float:
    counter = iter(range(total))

    async def worker() -> None:
        for n in counter:
            await work(n)

    started = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(32)))
    return total / (time.perf_counter() - started)


async def main(rounds: int, repeat: int) -> None:
    server = PostgresServer().start()
    try:
        async with await psycopg.AsyncConnection.connect(server.dsn, autocommit=True) as conn:
            await conn.execute(SETUP)
        drivers: list[Asyncpg | Psycopg] = [Asyncpg(), Psycopg()]
        for driver in drivers:
            await driver.open(server.dsn)
        results: dict[tuple[str, str, str], list[float]] = {}
        for _ in range(repeat):
            for shape in ("read", "upsert", "append"):
                for driver in drivers:
                    work = getattr(driver, shape)
                    p50 = await _serial(work, rounds)
                    rate = await _throughput(work, rounds * 4)
                    results.setdefault((shape, driver.name, "p50"), []).append(p50 * 1e6)
                    results.setdefault((shape, driver.name, "rate"), []).append(rate)
        for driver in drivers:
            await driver.close()
    finally:
        server.stop()
    print(
        "| shape | asyncpg p50 | psycopg p50 | asyncpg /s at 32 | psycopg /s at 32 "
        "| psycopg ÷ asyncpg (p50) |"
    )
    print("|---|---|---|---|---|---|")
    for shape in ("read", "upsert", "append"):
        a = statistics.median(results[(shape, "asyncpg", "p50")])
        p = statistics.median(results[(shape, "psycopg", "p50")])
        ar = statistics.median(results[(shape, "asyncpg", "rate")])
        pr = statistics.median(results[(shape, "psycopg", "rate")])
        print(f"| {shape} | {a:.0f} µs | {p:.0f} µs | {ar:.0f} | {pr:.0f} | {p / a:.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    asyncio.run(main(args.rounds, args.repeat))
