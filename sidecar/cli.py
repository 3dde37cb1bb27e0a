"""Command line: sidecar serve | inspect | test | check | schema."""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from sidecar import __version__
from sidecar.config import ConfigError, Settings, load_settings
from sidecar.engine import EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.model import ToolCall
from sidecar.inspection.repetition import RepetitionTracker
from sidecar.observability.decision_log import DecisionLog
from sidecar.observability.metrics import Metrics
from sidecar.observability.server_log import configure_server_log
from sidecar.policy.loader import PolicyError, bundled_policy_dir, load_policy
from sidecar.policy.schema import policy_json_schema
from sidecar.policy.testing import load_suites, run_suites, suite_files
from sidecar.secrets import SecretScanner
from sidecar.server import ListenError, Sidecar, policy_directories, serve_until_signalled
from sidecar.state.approvals import ApprovalStore
from sidecar.state.store import StateError, StateStore

MODES = ("auto", "smart_approve", "approve", "chat")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="sidecar", description="Policy sidecar for AI agents: inspects tool calls over gRPC."
    )
    parser.add_argument("--version", action="version", version=f"sidecar {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    serve = commands.add_parser(
        "serve",
        help="run the gRPC server",
        description="Run the gRPC server. Settings: flags > SIDECAR_* environment > --config file.",
    )
    serve.add_argument("--config", type=Path, help="YAML file of settings (or SIDECAR_CONFIG)")
    serve.add_argument(
        "--listen",
        action="append",
        metavar="ADDR",
        help="host:port or unix:/path; repeatable (default 127.0.0.1:50051)",
    )
    serve.add_argument(
        "--metrics-listen", metavar="ADDR", help="host:port or 'off' (default 127.0.0.1:9464)"
    )
    serve.add_argument(
        "--policies",
        action="append",
        type=Path,
        metavar="DIR",
        help="operator policy directory applied over the bundled policy; repeatable",
    )
    serve.add_argument(
        "--no-bundled-policies", action="store_true", help="do not load the bundled policy"
    )
    serve.add_argument(
        "--policy-watch-seconds",
        type=float,
        metavar="S",
        help="poll the policy directories and reload on change; 0 turns it off (default 2)",
    )
    serve.add_argument(
        "--shadow-policies",
        action="append",
        type=Path,
        metavar="DIR",
        help="candidate policy directory judged beside the active one (shadow mode); repeatable",
    )
    serve.add_argument("--state", metavar="PATH", help="SQLite state file, or ':memory:'")
    serve.add_argument("--mode", choices=MODES, help="permission mode; overrides the policy")
    serve.add_argument("--tls-cert", type=Path, metavar="FILE", help="server certificate (PEM)")
    serve.add_argument("--tls-key", type=Path, metavar="FILE", help="server private key (PEM)")
    serve.add_argument(
        "--tls-client-ca", type=Path, metavar="FILE", help="CA for client certificates (mTLS)"
    )
    serve.add_argument("--max-message-bytes", type=int, metavar="N", help="largest gRPC message")
    serve.add_argument("--grace-seconds", type=float, metavar="S", help="drain time on SIGTERM")
    serve.add_argument("--decision-log", metavar="TARGET", help="'stderr', 'off' or a file path")
    serve.add_argument("--log-level", choices=("debug", "info", "warning", "error"))
    serve.add_argument(
        "--approval-token-file",
        type=Path,
        metavar="FILE",
        help="bearer token RecordDecision requires (keep it from the agent's tools)",
    )
    serve.add_argument(
        "--approval-question-ttl-seconds",
        type=float,
        metavar="S",
        help="how long an approval question can be answered (default 86400)",
    )
    serve.add_argument(
        "--approval-once-ttl-seconds",
        type=float,
        metavar="S",
        help="how long a once answer waits for its call (default 3600)",
    )
    serve.add_argument(
        "--approval-max-questions", type=int, metavar="N", help="unanswered questions kept"
    )

    inspect = commands.add_parser(
        "inspect",
        help="judge tool calls without a server",
        description=(
            "Read tool calls as JSON (a list, one object, or JSON lines) from FILE or stdin, "
            'each {"id", "name" or "tool", "arguments" or "args"}, and print one verdict '
            "per call as JSON lines. Calls run in one session, in order."
        ),
    )
    inspect.add_argument("file", nargs="?", type=Path, help="input file (default: stdin)")
    inspect.add_argument("--policies", action="append", type=Path, metavar="DIR")
    inspect.add_argument("--no-bundled-policies", action="store_true")
    inspect.add_argument("--mode", choices=MODES, help="permission mode; overrides the policy")
    inspect.add_argument("--session", default="cli", help="session id (default: cli)")

    test = commands.add_parser(
        "test",
        help="run policy test suites",
        description=(
            "Load the bundled policy and each DIR, then run the YAML suites in every loaded "
            "directory's tests/ folder. Prints PASS/FAIL per case; exits 1 if any case fails."
        ),
    )
    test.add_argument("directories", nargs="*", type=Path, metavar="DIR")
    test.add_argument("--no-bundled-policies", action="store_true")
    test.add_argument("-v", "--verbose", action="store_true", help="print passing cases too")

    commands.add_parser(
        "schema",
        help="print the policy file JSON Schema",
        description="Print the JSON Schema of policy files, for editors and CI linters.",
    )

    check = commands.add_parser(
        "check",
        help="validate policy directories",
        description="Validate policy directories; print every problem with file and line.",
    )
    check.add_argument("directories", nargs="*", type=Path, metavar="DIR")
    check.add_argument("--no-bundled-policies", action="store_true")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "inspect":
            return asyncio.run(_inspect(args, sys.stdin, sys.stdout))
        if args.command == "test":
            return asyncio.run(_test(args))
        if args.command == "schema":
            sys.stdout.write(policy_json_schema())
            return 0
        return _check(args)
    except ConfigError as error:
        print(f"sidecar: {error}", file=sys.stderr)
        return 2
    except PolicyError as error:
        print(f"sidecar: the policy cannot be used:\n{error}", file=sys.stderr)
        return 2


def _serve(args: argparse.Namespace) -> int:
    flags = {
        "listen": args.listen,
        "metrics_listen": args.metrics_listen,
        "policies": args.policies,
        "bundled_policies": False if args.no_bundled_policies else None,
        "policy_watch_seconds": args.policy_watch_seconds,
        "shadow_policies": args.shadow_policies,
        "state": args.state,
        "mode": args.mode,
        "tls_cert": args.tls_cert,
        "tls_key": args.tls_key,
        "tls_client_ca": args.tls_client_ca,
        "max_message_bytes": args.max_message_bytes,
        "grace_seconds": args.grace_seconds,
        "decision_log": args.decision_log,
        "log_level": args.log_level,
        "approval_token_file": args.approval_token_file,
        "approval_question_ttl_seconds": args.approval_question_ttl_seconds,
        "approval_once_ttl_seconds": args.approval_once_ttl_seconds,
        "approval_max_questions": args.approval_max_questions,
    }
    settings = load_settings(flags, config_file=args.config)
    configure_server_log(settings.log_level, sys.stderr, SecretScanner())
    return asyncio.run(_run_server(settings))


async def _run_server(settings: Settings) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    sidecar = Sidecar(settings)
    loop.add_signal_handler(signal.SIGHUP, sidecar.request_reload)
    try:
        await serve_until_signalled(sidecar, stop)
    except (ListenError, StateError, OSError) as error:
        print(f"sidecar: {error}", file=sys.stderr)
        return 1
    return 0


def _check(args: argparse.Namespace) -> int:
    directories = ([] if args.no_bundled_policies else [bundled_policy_dir()]) + args.directories
    loaded = load_policy(directories)
    parts = _local_parts()
    compile_policy(loaded, parts, None)
    print(f"ok: {len(loaded.sources)} file(s), revision {loaded.revision}")
    return 0


async def _test(args: argparse.Namespace) -> int:
    directories = ([] if args.no_bundled_policies else [bundled_policy_dir()]) + args.directories
    loaded = load_policy(directories)
    suites = load_suites(suite_files(directories))
    if not suites:
        print("sidecar: no test suites found (looked in DIR/tests/*.yaml)", file=sys.stderr)
        return 2
    results = await run_suites(loaded, suites, _local_parts)
    for result in results:
        if not result.passed:
            print(f"FAIL {result.file}: {result.name}: {result.detail}")
        elif args.verbose:
            print(f"PASS {result.file}: {result.name}")
    failed = sum(not r.passed for r in results)
    print(f"{len(results) - failed} passed, {failed} failed")
    return 1 if failed else 0


def _local_parts() -> EngineParts:
    return EngineParts(
        Metrics(), ApprovalStore(StateStore(":memory:")), SecretScanner(), RepetitionTracker()
    )


async def _inspect(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    text = args.file.read_text(encoding="utf-8") if args.file else stdin.read()
    source = str(args.file) if args.file else "<stdin>"
    calls = parse_calls(text, source)
    settings = Settings(
        policies=tuple(args.policies or ()),
        bundled_policies=not args.no_bundled_policies,
        mode=args.mode,
        state=":memory:",
    )
    parts = _local_parts()
    loaded = load_policy(policy_directories(settings))
    engine = PolicyEngine(parts, DecisionLog("off", parts.secrets))
    engine.replace(compile_policy(loaded, parts, settings.permission_mode))
    for call in calls:
        decision = await engine.inspect(args.session, [call])
        verdict = decision.verdicts[0]
        record = {
            "id": call.id,
            "tool": call.name,
            "verdict": verdict.verdict.label,
            "reason": verdict.reason,  # already masked by the engine
            "rules": [f.rule_id for f in verdict.findings if f.verdict.label != "allow"],
        }
        stdout.write(json.dumps(record) + "\n")
    return 0


class InputError(ConfigError):
    pass


def parse_calls(text: str, source: str) -> list[ToolCall]:
    """A JSON list, a single object, or JSON lines; errors name the source and line."""
    stripped = text.strip()
    items: list[tuple[int, Any]] = []
    if stripped.startswith("["):
        try:
            items = [(1, item) for item in json.loads(stripped)]
        except json.JSONDecodeError as error:
            raise InputError(f"{source}:{error.lineno}: not valid JSON: {error.msg}") from None
    else:
        for number, line in enumerate(text.splitlines(), start=1):
            if line.strip():
                try:
                    items.append((number, json.loads(line)))
                except json.JSONDecodeError as error:
                    raise InputError(f"{source}:{number}: not valid JSON: {error.msg}") from None
    calls = []
    for index, (where, item) in enumerate(items):
        line = str(where)
        if not isinstance(item, dict):
            raise InputError(f"{source}:{line}: a tool call must be a JSON object")
        name = item.get("name", item.get("tool"))
        arguments = item.get("arguments", item.get("args", {}))
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError:
                raise InputError(f"{source}:{line}: arguments are not valid JSON") from None
        if not isinstance(name, str) or not name:
            raise InputError(f"{source}:{line}: missing tool name ('name' or 'tool')")
        if not isinstance(arguments, dict):
            raise InputError(f"{source}:{line}: arguments must be a JSON object")
        calls.append(
            ToolCall(id=str(item.get("id", f"call-{index + 1}")), name=name, arguments=arguments)
        )
    if not calls:
        raise InputError(f"{source}: no tool calls found")
    return calls
