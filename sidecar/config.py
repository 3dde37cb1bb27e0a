"""Server configuration from a file, SIDECAR_* environment variables and flags (in that order)."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sidecar.inspection.verdict import Mode
from sidecar.policy.yaml_text import parse_yaml
from sidecar.suggestions import did_you_mean

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_METRICS_LISTEN = "127.0.0.1:9464"
ENV_PREFIX = "SIDECAR_"
# Settings whose environment value is a comma-separated list.
LIST_SETTINGS = frozenset({"listen", "policies", "shadow_policies"})
# Environment names that are not settings but are read as such.
NOT_SETTINGS = frozenset({"SIDECAR_CONFIG"})
log = logging.getLogger("sidecar.config")


class ConfigError(Exception):
    """A setting that cannot be used; the message names it."""


class Settings(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    listen: tuple[str, ...] = Field(
        default=(DEFAULT_LISTEN,),
        min_length=1,
        description="host:port or unix:/path; repeat to listen on several.",
    )
    metrics_listen: str = Field(
        default=DEFAULT_METRICS_LISTEN, description="host:port for /metrics, or 'off'."
    )
    policies: tuple[Path, ...] = Field(
        default=(), description="Operator policy directories, applied over the bundled policy."
    )
    bundled_policies: bool = True
    policy_watch_seconds: float = Field(
        default=2.0, ge=0, le=3600, description="Poll the policy directories; 0 turns it off."
    )
    shadow_policies: tuple[Path, ...] = Field(
        default=(), description="Candidate policy directories, judged beside the active ones."
    )
    state: str = Field(
        default=".sidecar/state.db",
        description="SQLite file, ':memory:', or postgresql://USER@HOST:PORT/DBNAME (shared "
        "by replicas and workers).",
    )
    mode: Literal["auto", "smart_approve", "approve", "chat"] | None = None
    tls_cert: Path | None = None
    tls_key: Path | None = None
    tls_client_ca: Path | None = Field(
        default=None, description="Require client certificates signed by this CA (mutual TLS)."
    )
    max_message_bytes: int = Field(default=4 * 1024 * 1024, ge=1024, le=256 * 1024 * 1024)
    grace_seconds: float = Field(default=10.0, ge=0, le=3600)
    decision_log: str = Field(default="stderr", description="'stderr', 'off' or a file path.")
    log_level: Literal["debug", "info", "warning", "error"] = "info"
    # Context service.
    context_cache_mib: int = Field(
        default=64,
        ge=1,
        le=64 * 1024,
        description="Memory for sessions kept in memory, and again for their encoded views.",
    )

    # Operations: probes and logs.
    health_listen: str = Field(
        default="off",
        description="host:port of a port serving only grpc.health.v1 (for kubelet probes), "
        "or 'off'.",
    )
    log_format: Literal["json", "text"] | None = Field(
        default=None, description="'json' or 'text'; unset: text on a terminal, json otherwise."
    )

    # Approvals: who may answer (RecordDecision), and how long questions and answers last.
    approval_token_file: Path | None = Field(
        default=None,
        description="File holding the bearer token RecordDecision requires; the agent's "
        "tools must not be able to read it.",
    )
    approval_question_ttl_seconds: float = Field(
        default=86_400.0, gt=0, le=30 * 86_400, description="How long a question can be answered."
    )
    approval_once_ttl_seconds: float = Field(
        default=3_600.0, gt=0, le=30 * 86_400, description="How long a once answer waits for use."
    )
    approval_max_questions: int = Field(
        default=100_000, ge=1, description="Unanswered questions kept; the oldest go first."
    )

    # Bounded work per request (sidecar/shell/isolation.py): large command lines are
    # analysed in separate processes, killed past their budget or memory cap.
    analysis_workers: int = Field(
        default=1, ge=0, le=16, description="Analysis processes; 0 analyses in-process."
    )
    analysis_budget_ms: float = Field(
        default=250.0, ge=10, le=60_000, description="Time to analyse one command line."
    )
    analysis_memory_mb: int = Field(
        default=1024, ge=128, le=65_536, description="Address space of an analysis process."
    )

    # Shared state and workers (issue 12): the store's password, pool and timeouts, what
    # Inspect does while the store is lost, and how many server processes run.
    state_password_file: Path | None = Field(
        default=None,
        description="File holding the password of a postgresql:// state (so that it is in "
        "neither the DSN, the environment nor the process list).",
    )
    state_pool_size: int = Field(
        default=10, ge=1, le=200, description="PostgreSQL connections per server process."
    )
    state_timeout_seconds: float = Field(
        default=5.0,
        gt=0,
        le=300,
        description="Longest wait for a PostgreSQL connection, a statement or a connect.",
    )
    state_unavailable: Literal["require_approval", "deny", "unavailable"] = Field(
        default="require_approval",
        description="Inspect while the store cannot be read or written: calls that would be "
        "allowed need approval (fail closed), are denied, or Inspect answers UNAVAILABLE.",
    )
    workers: int | Literal["auto"] = Field(
        default=1,
        description="Server processes on the same address (SO_REUSEPORT); 'auto': one per "
        "core. A Unix socket is served by the first worker only.",
    )

    @field_validator("workers")
    @classmethod
    def _workers(cls, value: int | str) -> int | str:
        if isinstance(value, int) and not 1 <= value <= 64:
            raise ValueError("must be 1 to 64, or 'auto'")
        return value

    @field_validator("state")
    @classmethod
    def _state(cls, value: str) -> str:
        from sidecar.store.dsn import check_dsn, is_postgres
        from sidecar.store.errors import StateError

        if is_postgres(value):
            try:
                check_dsn(value)
            except StateError as error:
                raise ValueError(str(error)) from None
        return value

    @field_validator("listen")
    @classmethod
    def _addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for address in value:
            check_address(address, allow_unix=True)
        return value

    @field_validator("metrics_listen", "health_listen")
    @classmethod
    def _tcp_address(cls, value: str) -> str:
        if value != "off":
            check_address(value, allow_unix=False)
        return value

    @field_validator("approval_token_file")
    @classmethod
    def _token_file(cls, value: Path | None) -> Path | None:
        if value is not None and not value.is_file():
            raise ValueError(f"{value} is not a readable file")
        return value

    @model_validator(mode="after")
    def _tls_pair(self) -> Settings:
        if (self.tls_cert is None) != (self.tls_key is None):
            raise ValueError("tls_cert and tls_key must be set together")
        if self.tls_client_ca is not None and self.tls_cert is None:
            raise ValueError("tls_client_ca needs tls_cert and tls_key")
        for path in (self.tls_cert, self.tls_key, self.tls_client_ca):
            if path is not None and not path.is_file():
                raise ValueError(f"{path} is not a readable file")
        return self

    @model_validator(mode="after")
    def _shared_state(self) -> Settings:
        from sidecar.store.dsn import is_postgres

        postgres = is_postgres(self.state)
        if self.state_password_file is not None:
            if not postgres:
                raise ValueError("state_password_file needs a postgresql:// state")
            if not self.state_password_file.is_file():
                raise ValueError(f"{self.state_password_file} is not a readable file")
        if self.worker_count > 1 and self.state == ":memory:":
            raise ValueError(
                "workers > 1 need a state they can share: a SQLite file or postgresql://"
            )
        if self.worker_count > 1 and all(a.startswith("unix:") for a in self.listen):
            raise ValueError(
                "workers > 1 need a TCP listen address (a Unix socket is served by one worker)"
            )
        return self

    @property
    def worker_count(self) -> int:
        return (os.cpu_count() or 1) if self.workers == "auto" else int(self.workers)

    @property
    def permission_mode(self) -> Mode | None:
        return Mode.parse(self.mode) if self.mode else None


def check_address(address: str, allow_unix: bool) -> None:
    if address.startswith("unix:"):
        if not allow_unix:
            raise ValueError(f"{address!r}: a Unix socket is not supported here")
        if len(address) <= len("unix:"):
            raise ValueError(f"{address!r}: missing socket path")
        return
    host, sep, port = address.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise ValueError(f"{address!r} is not host:port (for example 127.0.0.1:50051)")


def load_settings(
    flags: Mapping[str, Any],
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
    warnings: list[str] | None = None,
) -> Settings:
    """Merge file < environment < flags; raise ConfigError naming the bad setting.

    Unknown SIDECAR_* variables are warnings, not errors: Kubernetes injects service-link
    variables (SIDECAR_..._SERVICE_HOST) for every Service whose name starts with
    "sidecar", and a pod must not crash-loop over a Service it never asked for. The
    warnings go to `warnings` when given (the CLI logs them once logging is set up)."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    file_path = config_file or (
        Path(environ["SIDECAR_CONFIG"]) if "SIDECAR_CONFIG" in environ else None
    )
    file_lines: dict[str, int] = {}
    if file_path is not None:
        from_file, file_lines = _from_file(file_path)
        values.update(from_file)
    known = set(Settings.model_fields)
    for key, raw in environ.items():
        if not key.startswith(ENV_PREFIX) or key in NOT_SETTINGS:
            continue
        name = key[len(ENV_PREFIX) :].lower()
        if name not in known:
            if not is_service_link(key):
                # Compare what follows the prefix, which every name shares.
                names = [k.upper() for k in known] + [n[len(ENV_PREFIX) :] for n in NOT_SETTINGS]
                hint = did_you_mean(key[len(ENV_PREFIX) :], names).replace(
                    "mean ", f"mean {ENV_PREFIX}"
                )
                _warn(f"environment variable {key} is not a setting; ignored{hint}", warnings)
            continue
        values[name] = (
            [p.strip() for p in raw.split(",") if p.strip()] if name in LIST_SETTINGS else raw
        )
    values.update({k: v for k, v in flags.items() if v is not None})
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        name = ".".join(str(p) for p in first["loc"]) or "settings"
        top = name.split(".")[0]
        source = _source_of(top, flags, environ, file_path, file_lines)
        hint = did_you_mean(top, known) if first["type"] == "extra_forbidden" else ""
        raise ConfigError(f"{source}: {first['msg']}{hint}") from None


def is_service_link(name: str) -> bool:
    """A variable Kubernetes injects for a Service (docker-link style), not a setting:
    X_SERVICE_HOST, X_SERVICE_PORT, X_SERVICE_PORT_<port name>, X_PORT, X_PORT_<n>_TCP...."""
    return (
        name.endswith(("_SERVICE_HOST", "_SERVICE_PORT", "_PORT"))
        or "_SERVICE_PORT_" in name
        or "_PORT_" in name
    )


def _warn(message: str, warnings: list[str] | None) -> None:
    if warnings is None:
        log.warning("%s", message)
    else:
        warnings.append(message)


def _source_of(
    name: str,
    flags: Mapping[str, Any],
    environ: Mapping[str, str],
    file: Path | None,
    lines: Mapping[str, int],
) -> str:
    if flags.get(name) is not None:
        return f"--{name.replace('_', '-')}"
    if f"{ENV_PREFIX}{name.upper()}" in environ:
        return f"environment variable {ENV_PREFIX}{name.upper()}"
    if file is not None:
        line = lines.get(name)
        return f"{file}:{line}: {name}" if line else f"{file}: {name}"
    return name


def _from_file(path: Path) -> tuple[dict[str, Any], dict[str, int]]:
    """The file's settings (dashes read as underscores) and the line of each key."""
    try:
        text = path.read_text(encoding="utf-8")
        data = parse_yaml(text, unique_keys=True)
    except OSError as error:
        raise ConfigError(f"config file {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"config file {path}: not UTF-8 text") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"config file {where}: not valid YAML") from None
    if data is None:
        return {}, {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: must be a mapping of settings")
    lines: dict[str, int] = {}
    root = yaml.compose(text)
    if isinstance(root, yaml.MappingNode):
        for key, _ in root.value:
            lines[str(key.value).replace("-", "_")] = key.start_mark.line + 1
    return {str(k).replace("-", "_"): v for k, v in data.items()}, lines
