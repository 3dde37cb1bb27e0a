"""Fixtures: a real sidecar on loopback TCP and a Unix socket, with a real SQLite file."""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest

from sidecar.config import Settings
from sidecar.engine import EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.model import ToolCall
from sidecar.inspection.verdict import Mode, Verdict
from sidecar.observability.decision_log import DecisionLog
from sidecar.policy.loader import bundled_policy_dir, load_policy
from sidecar.server import Sidecar
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.postgres_server import PostgresServer

StartSidecar = Callable[..., Awaitable[Sidecar]]


@pytest.fixture
def state_path(tmp_path: Path) -> Path:
    return tmp_path / "state" / "sidecar.db"


@pytest.fixture
def operator_policies(tmp_path: Path) -> Path:
    """An empty operator policy directory; tests write override files into it."""
    directory = tmp_path / "policies"
    directory.mkdir()
    return directory


@pytest.fixture
def state_engine() -> str:
    """The store the started sidecars use; a module runs on both engines by overriding it
    with `params=["sqlite", "postgresql"]`."""
    return "sqlite"


@pytest.fixture
def state_setting(state_engine: str, state_path: Path, request: pytest.FixtureRequest) -> str:
    if state_engine == "postgresql":
        return str(request.getfixturevalue("postgres_dsn"))
    return str(state_path)


@pytest.fixture
async def start_sidecar(
    tmp_path: Path, state_setting: str, operator_policies: Path
) -> AsyncIterator[StartSidecar]:
    started: list[Sidecar] = []

    async def start(**overrides: Any) -> Sidecar:
        values: dict[str, Any] = {
            "listen": ("127.0.0.1:0", f"unix:{tmp_path}/sidecar-{len(started)}.sock"),
            "metrics_listen": "127.0.0.1:0",
            "policies": (operator_policies,),
            "state": state_setting,
            "decision_log": str(tmp_path / "decisions.jsonl"),
            "grace_seconds": 2.0,
        }
        values.update(overrides)
        sidecar = Sidecar(Settings(**values))
        await sidecar.start()
        started.append(sidecar)
        return sidecar

    yield start
    for sidecar in started:
        await sidecar.stop(grace=0)


@pytest.fixture
async def sidecar(start_sidecar: StartSidecar) -> Sidecar:
    return await start_sidecar()


@pytest.fixture
async def channel(sidecar: Sidecar) -> AsyncIterator[grpc.aio.Channel]:
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as chan:
        yield chan


@pytest.fixture
def policy_stub(channel: grpc.aio.Channel) -> pb_grpc.PolicyServiceStub:
    return pb_grpc.PolicyServiceStub(channel)


def shell(call_id: str, command: str) -> pb.ToolCall:
    return pb.ToolCall(id=call_id, name="shell", arguments_json=json.dumps({"command": command}))


def tool(call_id: str, name: str, read_only: bool | None = None, **arguments: Any) -> pb.ToolCall:
    annotations = pb.ToolAnnotations()
    if read_only is not None:
        annotations.read_only_hint = read_only
    return pb.ToolCall(
        id=call_id, name=name, arguments_json=json.dumps(arguments), annotations=annotations
    )


def engine_for_mode(mode: Mode | None, *overrides: Path) -> PolicyEngine:
    """The bundled policy (plus override directories) compiled in-process, no server."""
    parts = EngineParts.local()
    engine = PolicyEngine(parts, DecisionLog("off", parts.secrets))
    loaded = load_policy([bundled_policy_dir(), *overrides])
    engine.replace(compile_policy(loaded, parts, mode))
    return engine


async def verdict_in(engine: PolicyEngine, tool: str, arguments: dict[str, Any]) -> Verdict:
    """The verdict of one call in a session of its own (nothing remembered from another)."""
    decision = await engine.inspect(f"{tool}-{arguments}", [ToolCall("1", tool, arguments)])
    return decision.verdicts[0].verdict


async def last_verdict(
    engine: PolicyEngine, session: str, steps: Sequence[tuple[str, dict[str, Any]]]
) -> Verdict:
    """The verdict of the last of `steps`, each inspected in order in one session."""
    verdict = Verdict.ALLOW
    for index, (tool, args) in enumerate(steps):
        decision = await engine.inspect(session, [ToolCall(str(index), tool, args)])
        verdict = decision.verdicts[0].verdict
    return verdict


def write_policy(directory: Path, name: str, text: str) -> Path:
    path = directory / name
    path.write_text(text, encoding="utf-8")
    return path


# -- PostgreSQL: a real server the tests start on loopback (tests/postgres_server.py) ------


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """One server for the whole run (about a second to start); each test gets a database
    of its own. No PostgreSQL here is a failure, not a skip: `make tools` installs it."""
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


_databases = itertools.count()


@pytest.fixture
def postgres_dsn(postgres_server: PostgresServer) -> Iterator[str]:
    """A new empty database, dropped after the test."""
    name = f"test_{os.getpid()}_{next(_databases)}"
    dsn = postgres_server.fresh_database(name)
    yield dsn
    postgres_server.psql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
