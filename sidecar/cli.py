"""Command line: sidecar serve | inspect | test | check | schema."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from sidecar import __version__
from sidecar.config import ConfigError, Settings, load_settings
from sidecar.engine import EngineParts, PolicyEngine, compile_policy
from sidecar.inspection.model import CallVerdict, ToolCall
from sidecar.inspection.verdict import Verdict
from sidecar.observability.decision_log import DecisionLog
from sidecar.observability.logs import configure_logging
from sidecar.policy.loader import PolicyError, bundled_policy_dir, load_policy
from sidecar.policy.schema import policy_json_schema
from sidecar.policy.testing import load_suites, run_suites, suite_files
from sidecar.secrets import SecretScanner
from sidecar.server import ListenError, Sidecar, policy_directories, serve_until_signalled
from sidecar.store.errors import StateError

MODES = ("auto", "smart_approve", "approve", "chat")
SHELL_TOOL = "shell"  # the bundled policy's shell tool name
# `sidecar inspect` exit codes (documented in the README and in --help).
EXIT_ALLOW, EXIT_USAGE, EXIT_APPROVAL, EXIT_DENY = 0, 2, 3, 4
EXIT_CODES = {
    Verdict.ALLOW: EXIT_ALLOW,
    Verdict.REQUIRE_APPROVAL: EXIT_APPROVAL,
    Verdict.DENY: EXIT_DENY,
}


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
    serve.add_argument(
        "--state",
        metavar="PATH|DSN",
        help="SQLite state file, ':memory:', or postgresql://USER@HOST:PORT/DBNAME shared by "
        "replicas and workers (also SIDECAR_STATE)",
    )
    serve.add_argument(
        "--state-password-file",
        type=Path,
        metavar="FILE",
        help="password of a postgresql:// state, read from a file",
    )
    serve.add_argument(
        "--state-pool-size", type=int, metavar="N", help="PostgreSQL connections per process"
    )
    serve.add_argument(
        "--state-timeout-seconds",
        type=float,
        metavar="S",
        help="longest wait for a PostgreSQL connection or statement (default 5)",
    )
    serve.add_argument(
        "--state-unavailable",
        choices=("require_approval", "deny", "unavailable"),
        help="Inspect while the store is lost: calls that would be allowed need approval "
        "(default), are denied, or Inspect answers UNAVAILABLE",
    )
    serve.add_argument(
        "--workers",
        metavar="N|auto",
        help="server processes sharing the address (SO_REUSEPORT); auto: one per core (default 1)",
    )
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
        "--log-format",
        choices=("json", "text"),
        help="server log format (default: text on a terminal, json otherwise)",
    )
    serve.add_argument(
        "--health-listen",
        metavar="ADDR",
        help="host:port serving only grpc.health.v1, for kubelet probes, or 'off' (default off)",
    )
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
    serve.add_argument(
        "--analysis-workers",
        type=int,
        metavar="N",
        help="processes that analyse large command lines (default 1; 0: in-process)",
    )
    serve.add_argument(
        "--analysis-budget-ms",
        type=float,
        metavar="MS",
        help="time to analyse one large command line before it asks (default 250)",
    )
    serve.add_argument(
        "--analysis-memory-mb",
        type=int,
        metavar="MB",
        help="memory cap of an analysis process (default 1024)",
    )
    serve.add_argument(
        "--context-cache-mib",
        type=int,
        metavar="MIB",
        help="memory for sessions kept in memory, and again for their views (default 64)",
    )

    inspect = commands.add_parser(
        "inspect",
        help="judge tool calls without a server",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description=(
            "Judge tool calls with the policy, without a server, and print each verdict.\n"
            "  sidecar inspect -c 'rm -rf /'                       a shell command\n"
            '  sidecar inspect --tool read_file --args \'{"path": "x"}\'\n'
            "  sidecar inspect calls.jsonl   (or JSON on stdin)   a JSON list, one object or\n"
            '      JSON lines of {"id", "name" or "tool", "arguments" or "args"}, judged in\n'
            "      one session, in order.\n"
            "On a terminal the verdict is printed for a person; with --json, or when output\n"
            "is not a terminal, as one JSON line per call."
        ),
        epilog=(
            "exit status: 0 every call allowed, 3 a call needs approval (none denied), "
            "4 a call denied, 2 usage or input error"
        ),
    )
    # A string, not a Path: Path("rm -rf /") drops the slash from the error message.
    inspect.add_argument("file", nargs="?", help="input file of JSON calls")
    what = inspect.add_mutually_exclusive_group()
    what.add_argument(
        "-c",
        "--command",
        dest="command_text",  # `command` names the subcommand
        metavar="CMD",
        help=f"a shell command (tool {SHELL_TOOL!r})",
    )
    what.add_argument("--tool", metavar="NAME", help="a call of tool NAME (arguments: --args)")
    inspect.add_argument(
        "--args", metavar="JSON", help="arguments of the --tool call, a JSON object"
    )
    inspect.add_argument("--json", action="store_true", help="print JSON lines")
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
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "serve":
            return _serve(args)
        if args.command == "inspect":
            if args.args is not None and args.tool is None:
                print("sidecar inspect: --args goes with --tool NAME", file=sys.stderr)
                return EXIT_USAGE
            if args.file is not None and (args.command_text or args.tool):
                print(
                    "sidecar inspect: give a FILE, -c CMD or --tool NAME, not several",
                    file=sys.stderr,
                )
                return EXIT_USAGE
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
        "log_format": args.log_format,
        "health_listen": args.health_listen,
        "approval_token_file": args.approval_token_file,
        "approval_question_ttl_seconds": args.approval_question_ttl_seconds,
        "approval_once_ttl_seconds": args.approval_once_ttl_seconds,
        "approval_max_questions": args.approval_max_questions,
        "analysis_workers": args.analysis_workers,
        "analysis_budget_ms": args.analysis_budget_ms,
        "analysis_memory_mb": args.analysis_memory_mb,
        "context_cache_mib": args.context_cache_mib,
        "state_password_file": args.state_password_file,
        "state_pool_size": args.state_pool_size,
        "state_timeout_seconds": args.state_timeout_seconds,
        "state_unavailable": args.state_unavailable,
        "workers": args.workers,
    }
    warnings: list[str] = []
    settings = load_settings(flags, config_file=args.config, warnings=warnings)
    # One handler for the server log: the chosen format, every line masked.
    configure_logging(settings.log_level, settings.log_format, secrets=SecretScanner())
    for warning in warnings:
        logging.getLogger("sidecar.config").warning("%s", warning)
    if settings.worker_count > 1:
        from sidecar.workers import run_supervisor

        return asyncio.run(run_supervisor(settings))
    return asyncio.run(_run_server(settings))


async def _run_server(settings: Settings) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    sidecar = Sidecar(settings, owns_process=True)
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
    return EngineParts.local()


async def _inspect(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    calls = _calls_to_inspect(args, stdin)
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
    as_json = args.json or not stdout.isatty()
    colour = not as_json and "NO_COLOR" not in os.environ
    strictest = Verdict.ALLOW
    for call in calls:
        decision = await engine.inspect(args.session, [call])
        verdict = decision.verdicts[0]
        strictest = max(strictest, verdict.verdict)
        if as_json:
            stdout.write(json.dumps(verdict_record(verdict, decision.mode.name.lower())) + "\n")
        else:
            stdout.write(readable_verdict(verdict, parts.secrets, colour))
    return EXIT_CODES[strictest]


def _calls_to_inspect(args: argparse.Namespace, stdin: TextIO) -> list[ToolCall]:
    if args.command_text is not None:
        return [ToolCall(id="call-1", name=SHELL_TOOL, arguments={"command": args.command_text})]
    if args.tool is not None:
        return [ToolCall(id="call-1", name=args.tool, arguments=_arguments(args.args))]
    if args.file is not None:
        return parse_calls(_read_input(args.file), args.file)
    if stdin.isatty():
        raise InputError(
            "nothing to inspect: give -c CMD, --tool NAME [--args JSON], a FILE of JSON "
            "calls, or JSON calls on stdin (see sidecar inspect --help)"
        )
    return parse_calls(stdin.read(), "<stdin>")


def _arguments(text: str | None) -> dict[str, Any]:
    if text is None or not text.strip():
        return {}
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise InputError(f"--args: not valid JSON: {error.msg} (column {error.colno})") from None
    if not isinstance(value, dict):
        raise InputError('--args: must be a JSON object, e.g. \'{"path": "README.md"}\'')
    return value


def _read_input(path: str) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        hint = ""
        if " " in path or not Path(path).suffix:  # it reads like a command, not a file
            hint = f"; to judge a shell command: sidecar inspect -c {shlex.quote(path)}"
        raise InputError(f"{path}: no such file{hint}") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a file of JSON calls") from None
    except UnicodeDecodeError:
        raise InputError(f"{path}: not UTF-8 text") from None
    except OSError as error:
        raise InputError(f"{path}: {error.strerror}") from None


def verdict_record(verdict: CallVerdict, mode: str) -> dict[str, Any]:
    """One JSON line per call: what a script reads."""
    return {
        "id": verdict.call.id,
        "tool": verdict.call.name,
        "verdict": verdict.verdict.label,
        "reason": verdict.reason,  # already masked by the engine
        "approval_prompt": verdict.approval_prompt,
        "mode": mode,
        "rules": [f.rule_id for f in verdict.findings if f.verdict is not Verdict.ALLOW],
        "findings": [
            {
                "inspector": f.inspector,
                "rule_id": f.rule_id,
                "verdict": f.verdict.label,
                "risk": f.risk.name.lower(),
                "confidence": f.confidence,
                "message": f.message,
            }
            for f in verdict.findings
        ],
    }


_COLOURS = {Verdict.ALLOW: "32", Verdict.REQUIRE_APPROVAL: "33", Verdict.DENY: "31"}
_HEADLINES = {
    Verdict.ALLOW: "ALLOW",
    Verdict.REQUIRE_APPROVAL: "REQUIRE APPROVAL",
    Verdict.DENY: "DENY",
}


def readable_verdict(verdict: CallVerdict, secrets: SecretScanner, colour: bool) -> str:
    """What a person at a terminal reads: verdict, reason, findings, approval prompt."""
    call = verdict.call
    command = call.arguments.get("command")
    if isinstance(command, str):
        what = f"{call.name}: {command}"
    else:
        what = f"{call.name} {json.dumps(call.arguments, ensure_ascii=False)}"
    what = secrets.mask(what)
    if len(what) > 200:
        what = what[:200] + "…"
    headline = _HEADLINES[verdict.verdict]
    if colour:
        headline = f"\033[1;{_COLOURS[verdict.verdict]}m{headline}\033[0m"
    lines = [f"{headline}  {what}"]
    if verdict.reason:
        lines.append(f"  reason: {verdict.reason}")
    if verdict.findings:
        lines.append("  findings:")
        for f in verdict.findings:
            lines.append(
                f"    - {f.verdict.label:<16} {f.inspector}/{f.rule_id} "
                f"(risk {f.risk.name.lower()}): {f.message}"
            )
    if verdict.approval_prompt:
        lines.append(f"  approval prompt: {verdict.approval_prompt}")
    return "\n".join(lines) + "\n\n"


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
