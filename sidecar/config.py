"""Server configuration from a file, SIDECAR_* environment variables and flags (in that order)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from sidecar.inspection.verdict import Mode

DEFAULT_LISTEN = "127.0.0.1:50051"
DEFAULT_METRICS_LISTEN = "127.0.0.1:9464"
ENV_PREFIX = "SIDECAR_"
# Settings whose environment value is a comma-separated list.
LIST_SETTINGS = frozenset({"listen", "policies", "shadow_policies"})


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
    state: str = Field(default=".sidecar/state.db", description="SQLite file, or ':memory:'.")
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

    @field_validator("listen")
    @classmethod
    def _addresses(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for address in value:
            check_address(address, allow_unix=True)
        return value

    @field_validator("metrics_listen")
    @classmethod
    def _metrics_address(cls, value: str) -> str:
        if value != "off":
            check_address(value, allow_unix=False)
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
) -> Settings:
    """Merge file < environment < flags; raise ConfigError naming the bad setting."""
    environ = os.environ if environ is None else environ
    values: dict[str, Any] = {}
    file_path = config_file or (
        Path(environ["SIDECAR_CONFIG"]) if "SIDECAR_CONFIG" in environ else None
    )
    if file_path is not None:
        values.update(_from_file(file_path))
    known = set(Settings.model_fields)
    for key, raw in environ.items():
        if not key.startswith(ENV_PREFIX) or key == "SIDECAR_CONFIG":
            continue
        name = key[len(ENV_PREFIX) :].lower()
        if name not in known:
            raise ConfigError(f"environment variable {key}: unknown setting")
        values[name] = (
            [p.strip() for p in raw.split(",") if p.strip()] if name in LIST_SETTINGS else raw
        )
    values.update({k: v for k, v in flags.items() if v is not None})
    try:
        return Settings.model_validate(values)
    except ValidationError as error:
        first = error.errors()[0]
        name = ".".join(str(p) for p in first["loc"]) or "settings"
        source = _source_of(name.split(".")[0], flags, environ, file_path)
        raise ConfigError(f"{source}: {first['msg']}") from None


def _source_of(
    name: str, flags: Mapping[str, Any], environ: Mapping[str, str], file: Path | None
) -> str:
    if flags.get(name) is not None:
        return f"--{name.replace('_', '-')}"
    if f"{ENV_PREFIX}{name.upper()}" in environ:
        return f"environment variable {ENV_PREFIX}{name.upper()}"
    if file is not None:
        return f"{file}: {name}"
    return name


def _from_file(path: Path) -> dict[str, Any]:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"config file {path}: {error.strerror}") from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"config file {where}: not valid YAML") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {path}: must be a mapping of settings")
    return {str(k).replace("-", "_"): v for k, v in data.items()}
