"""For any secret of a known shape embedded anywhere in a call, no line written anywhere
(the decision log, the server log, the response's reasons and prompts) contains it."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from sidecar.engine import ActivePolicy, EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.chain import ChainLink, InspectorChain
from sidecar.inspection.inspector import LocalInspector
from sidecar.inspection.model import Finding, InspectionContext, ToolCall
from sidecar.inspection.verdict import Mode
from sidecar.observability.decision_log import DecisionLog
from sidecar.observability.server_log import MaskingFormatter
from sidecar.policy.loader import bundled_policy_dir, load_policy
from sidecar.secrets import SecretScanner
from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, write_policy

UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
LOWER = UPPER.lower()
DIGITS = "0123456789"
ALNUM = UPPER + LOWER + DIGITS
BASE64 = ALNUM + "+/"


def chars(alphabet: str, size: int, max_size: int | None = None) -> st.SearchStrategy[str]:
    return st.text(alphabet, min_size=size, max_size=size if max_size is None else max_size)


def mixed(text: str) -> bool:
    """Upper, lower and digit: such a string does not turn up in a log line by chance."""
    return (
        any(c in UPPER for c in text)
        and any(c in LOWER for c in text)
        and any(c in DIGITS for c in text)
    )


passwords = chars(ALNUM + "!#%+.=?^_~-", 10, 24).filter(mixed)
names = chars(UPPER + "_", 1, 12).filter(lambda n: n[0] != "_")

# Each strategy draws (secret, text that holds it in its known position).
shaped = st.one_of(
    st.builds(
        lambda p, s: (p + s, p + s), st.sampled_from(["AKIA", "ASIA"]), chars(UPPER + DIGITS, 16)
    ),
    st.builds(lambda s: ("ghp_" + s, "ghp_" + s), chars(ALNUM, 36, 60)),
    st.builds(lambda s: ("github_pat_" + s, "github_pat_" + s), chars(ALNUM + "_", 22, 40)),
    st.builds(lambda s: ("glpat-" + s, "glpat-" + s), chars(ALNUM, 20, 30)),
    st.builds(lambda s: ("xoxb-" + s, "xoxb-" + s), chars(ALNUM, 12, 30)),
    st.builds(lambda s: ("sk-ant-" + s, "sk-ant-" + s), chars(ALNUM, 20, 40)),
    st.builds(lambda s: ("sk-proj-" + s, "sk-proj-" + s), chars(ALNUM, 20, 40)),
    st.builds(lambda s: ("AIza" + s, "AIza" + s), chars(ALNUM, 35)),
    st.builds(lambda s: ("sk_live_" + s, "sk_live_" + s), chars(ALNUM, 24, 30)),
    st.builds(
        lambda a, b, c: (f"eyJ{a}.eyJ{b}.{c}", f"eyJ{a}.eyJ{b}.{c}"),
        chars(ALNUM, 10, 20),
        chars(ALNUM, 10, 20),
        chars(ALNUM, 10, 20),
    ),
).filter(lambda pair: mixed(pair[0][4:]))
positioned = st.one_of(
    st.builds(lambda p: (p, f"PGPASSWORD={p} psql -h db"), passwords),
    st.builds(lambda p: (p, f"MYSQL_PWD={p} mysql shop"), passwords),
    st.builds(lambda p: (p, f"mysql -u root -p{p} shop"), passwords),
    st.builds(lambda p: (p, f"tool --password={p} --verbose"), passwords),
    st.builds(lambda p: (p, f"tool --password {p} --verbose"), passwords),
    st.builds(lambda p: (p, f"curl https://user:{p}@db.example.com/x"), passwords),
    st.builds(lambda p: (p, f"curl -H 'Authorization: Bearer {p}' https://x"), passwords),
    # Families a re-probe found in clear (issue 11): quoted -p, login -p, program options.
    st.builds(lambda p: (p, f"mysql -uroot -p'{p}' shop"), passwords),
    st.builds(lambda p: (p, f"docker login -u me -p {p} registry.example"), passwords),
    st.builds(lambda p: (p, f"redis-cli -h cache -a {p} ping"), passwords),
    st.builds(lambda p: (p, f"openssl rsa -in k.pem -passin pass:{p}"), passwords),
    st.builds(lambda p: (p, f"keytool -list -storepass {p} -keystore k.jks"), passwords),
    st.builds(lambda p: (p, f"curl -H 'Cookie: sid={p}' https://x"), passwords),
    st.builds(lambda p: (p, f"./app --dsn 'root:{p}@tcp(db:3306)/app'"), passwords),
    st.builds(lambda p: (p, f"aws configure set aws_secret_access_key {p}"), passwords),
    st.builds(lambda p: (p, f"echo {p} | sudo -S apt update"), passwords),
    st.builds(
        lambda n, s, p: (p, f"export {n}_{s}={p}"),
        names,
        st.sampled_from(["TOKEN", "SECRET", "PASSWORD", "KEY", "API_KEY"]),
        passwords,
    ),
    st.builds(
        lambda p: (p, f"AWS_SECRET_ACCESS_KEY={p} aws s3 ls"), chars(BASE64, 40).filter(mixed)
    ),
    st.builds(
        lambda n, p: (p, f"{n}={p}"),
        names,
        chars(ALNUM, 24, 40).filter(lambda v: mixed(v) and len(set(v)) >= 18),
    ),
)
pem_bodies = st.lists(chars(BASE64, 64), min_size=1, max_size=4).filter(
    lambda lines: mixed("".join(lines))
)
pem = st.builds(
    lambda kind, lines, end: (
        lines[0],
        f"-----BEGIN {kind}PRIVATE KEY-----\n"
        + "\n".join(lines)
        + (f"\n-----END {kind}PRIVATE KEY-----" if end else ""),
    ),
    st.sampled_from(["", "RSA ", "EC ", "OPENSSH "]),
    pem_bodies,
    st.booleans(),
)
secrets_in_place = st.one_of(shaped, positioned, pem)

benign_words = st.lists(
    st.sampled_from(["ls", "-la", "cd", "src", "&&", "make", "echo", "hello", "|", "cat", "x.txt"]),
    max_size=5,
)


class Raising(LocalInspector):
    """Fails the way a buggy inspector would: an exception quoting the call's arguments."""

    name = "raising"

    def inspect_now(
        self, calls: Sequence[ToolCall], context: InspectionContext
    ) -> list[list[Finding]]:
        raise RuntimeError(f"cannot judge {calls[0].name} {calls[0].arguments}")


def build_engine(log_path: Path) -> PolicyEngine:
    scanner = SecretScanner()
    parts = EngineParts.local(secrets=scanner)
    engine = PolicyEngine(parts, DecisionLog(str(log_path), scanner))
    compiled = compile_policy(load_policy([bundled_policy_dir()]), parts, Mode.SMART_APPROVE)
    links = [*compiled.chain.links, ChainLink(Raising(), 0.05, "require_approval")]
    engine.replace(
        ActivePolicy(compiled.loaded, InspectorChain(links, parts.metrics), compiled.mode)
    )
    return engine


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Any:
    directory = tmp_path_factory.mktemp("masking")
    log_path = directory / "decisions.jsonl"
    engine = build_engine(log_path)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(MaskingFormatter(SecretScanner()))
    root = logging.getLogger()
    root.addHandler(handler)
    previous = root.level
    root.setLevel(logging.DEBUG)
    yield engine, log_path, stream
    root.removeHandler(handler)
    root.setLevel(previous)


def _calls(secret_text: str, words: list[str], where: str, position: int) -> list[ToolCall]:
    words = list(words)
    words.insert(min(position, len(words)), secret_text)
    command = " ".join(words)
    if where == "shell":
        return [ToolCall("1", "shell", {"command": command})]
    if where == "nested":
        return [ToolCall("1", "deploy", {"env": [{"note": command}], "n": 1})]
    if where == "key":
        return [ToolCall("1", "http_request", {command: "value", "url": "https://x.example"})]
    return [ToolCall("1", f"tool {command}" if "\n" not in command else "tool", {"q": command})]


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    found=secrets_in_place,
    words=benign_words,
    where=st.sampled_from(["shell", "nested", "key", "name"]),
    position=st.integers(0, 5),
)
def test_no_line_written_anywhere_holds_the_secret(
    harness: Any, found: tuple[str, str], words: list[str], where: str, position: int
) -> None:
    engine, log_path, stream = harness
    secret, text = found
    assume(secret not in text.replace(secret, "", 1))
    calls = _calls(text, words, where, position)
    stream.seek(0)
    stream.truncate()
    before = log_path.stat().st_size if log_path.exists() else 0
    decision = asyncio.run(engine.inspect("masking", calls))
    with open(log_path, encoding="utf-8") as log:
        log.seek(before)
        decision_lines = log.read()
    server_lines = stream.getvalue()
    assert "cannot judge" in server_lines  # the failing inspector's traceback was logged
    assert decision_lines.count("\n") == 1
    responses = []
    for verdict in decision.verdicts:
        responses += [verdict.reason, verdict.approval_prompt]
        responses += [f.message for f in verdict.findings]
        responses += [f.approval_prompt for f in verdict.findings]
    json_secret = json.dumps(secret)[1:-1]
    for written in (decision_lines, server_lines, *responses):
        assert secret not in written
        assert json_secret not in written


# -- over gRPC: error messages and GetStatus are masked too -----------------------------


async def test_error_messages_do_not_quote_secrets(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar()
    secret = "AKIA" + "QWERTYUIOP123456"
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        duplicate = pb.ToolCall(id=f"PASSWORD=hunter2x {secret}", name="t", arguments_json="{}")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await stub.Inspect(pb.InspectRequest(session_id="s", tool_calls=[duplicate, duplicate]))
    details = raised.value.details() or ""
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith("tool_calls[1].id: duplicate id")
    assert secret not in details and "hunter2x" not in details


async def test_get_status_masks_secrets_quoted_by_a_reload_error(
    start_sidecar: StartSidecar, operator_policies: Path
) -> None:
    sidecar = await start_sidecar(policy_watch_seconds=0)
    write_policy(
        operator_policies,
        "broken.yaml",
        "version: 1\nsecurity:\n  rules:\n    - id: x.leaky\n      message: m\n      risk: high\n      category: test\n"
        "      shell: {program: [psql]}\n"
        "      examples: {match: ['PGPASSWORD=hunter2x ls']}\n",
    )
    assert sidecar.reloader is not None
    await sidecar.reloader.reload("test")
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        status = await pb_grpc.PolicyServiceStub(channel).GetStatus(pb.GetStatusRequest())
    assert not status.last_reload.ok
    assert "PGPASSWORD=****" in status.last_reload.error, status.last_reload.error
    print(status.last_reload.error)
    assert "hunter2x" not in status.last_reload.error


def test_the_server_log_masks_what_any_logger_writes() -> None:
    from sidecar.observability.server_log import configure_server_log

    root = logging.getLogger()
    saved = list(root.handlers), root.level
    stream = io.StringIO()
    key = "AKIA" + "QWERTYUIOP123456"
    try:
        configure_server_log("info", stream, SecretScanner())
        assert len(root.handlers) == 1
        logging.getLogger("some.library").warning("connecting with %s", "PGPASSWORD=hunter2x")
        try:
            raise ValueError(f"bad key {key}")
        except ValueError:
            logging.getLogger("sidecar.x").exception("failed")
        logging.getLogger("sidecar.x").debug("below the level PGPASSWORD=dropped1")
    finally:
        for handler in list(root.handlers):
            root.removeHandler(handler)
        for handler in saved[0]:
            root.addHandler(handler)
        root.setLevel(saved[1])
    written = stream.getvalue()
    assert "WARNING some.library connecting with PGPASSWORD=****" in written
    assert "ValueError: bad key AKIA****" in written  # the traceback too
    assert "hunter2x" not in written and key[4:] not in written
    assert "dropped1" not in written
