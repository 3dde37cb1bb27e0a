"""Configuration: file < environment < flags, and errors that name the setting."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.config import ConfigError, load_settings
from sidecar.inspection.verdict import Mode


def test_defaults_are_loopback_and_a_local_sqlite_file() -> None:
    settings = load_settings({}, environ={})
    assert settings.listen == ("127.0.0.1:50051",)
    assert settings.metrics_listen == "127.0.0.1:9464"
    assert settings.state == ".sidecar/state.db"
    assert settings.permission_mode is None


def test_file_then_environment_then_flags(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("mode: approve\ngrace-seconds: 3\nlisten: ['127.0.0.1:7000']\n")
    settings = load_settings(
        {"mode": "chat"},
        environ={"SIDECAR_GRACE_SECONDS": "4", "SIDECAR_LISTEN": "127.0.0.1:1, unix:/tmp/s"},
        config_file=config,
    )
    assert settings.permission_mode is Mode.CHAT
    assert settings.grace_seconds == 4.0
    assert settings.listen == ("127.0.0.1:1", "unix:/tmp/s")


def test_config_file_from_the_environment(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("decision_log: 'off'\n")
    assert load_settings({}, environ={"SIDECAR_CONFIG": str(config)}).decision_log == "off"


@pytest.mark.parametrize(
    ("flags", "environ", "message"),
    [
        ({"listen": ["localhost"]}, {}, "--listen: Value error, 'localhost' is not host:port"),
        ({"listen": ["unix:"]}, {}, "--listen: Value error, 'unix:': missing socket path"),
        ({}, {"SIDECAR_METRICS_LISTEN": "unix:/x"}, "SIDECAR_METRICS_LISTEN"),
        ({}, {"SIDECAR_MODE": "yolo"}, "environment variable SIDECAR_MODE"),
        ({"grace_seconds": -1}, {}, "--grace-seconds"),
        ({"tls_cert": Path("/nonexistent")}, {}, "tls_cert and tls_key must be set together"),
    ],
)
def test_bad_values_name_their_source(flags, environ, message: str) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings(flags, environ=environ)
    assert message in str(raised.value)


def test_unknown_key_in_the_file_names_the_file(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("colour: blue\n")
    with pytest.raises(ConfigError) as raised:
        load_settings({}, environ={}, config_file=config)
    assert f"{config}:1: colour" in str(raised.value)


def test_a_misspelt_key_in_the_file_suggests_the_setting_with_its_line(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("state: ':memory:'\nmod: approve\n")
    with pytest.raises(ConfigError) as raised:
        load_settings({}, environ={}, config_file=config)
    assert str(raised.value) == (
        f"{config}:2: mod: Extra inputs are not permitted (did you mean mode?)"
    )


def test_a_bad_value_in_the_file_names_its_line(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("state: ':memory:'\n\ngrace-seconds: -3\n")
    with pytest.raises(ConfigError) as raised:
        load_settings({}, environ={}, config_file=config)
    assert str(raised.value).startswith(f"{config}:3: grace_seconds: ")


def service_links(service: str, ports: dict[str, int]) -> dict[str, str]:
    """Exactly the variables the kubelet injects for a Service (enableServiceLinks)."""
    name = service.upper().replace("-", "_")
    host = "10.96.12.34"
    first = next(iter(ports.values()))
    env = {
        f"{name}_SERVICE_HOST": host,
        f"{name}_SERVICE_PORT": str(first),
        f"{name}_PORT": f"tcp://{host}:{first}",
    }
    for port_name, port in ports.items():
        env[f"{name}_SERVICE_PORT_{port_name.upper().replace('-', '_')}"] = str(port)
        prefix = f"{name}_PORT_{port}_TCP"
        env[prefix] = f"tcp://{host}:{port}"
        env[f"{prefix}_PROTO"] = "tcp"
        env[f"{prefix}_PORT"] = str(port)
        env[f"{prefix}_ADDR"] = host
    return env


@pytest.mark.parametrize(
    "service",
    # `helm install sidecar ...` names the Service sidecar-agent-policy-sidecar; a Service
    # named after a setting (sidecar-mode) must not be read as that setting either.
    ["sidecar-agent-policy-sidecar", "sidecar", "sidecar-mode", "sidecar-metrics-listen"],
)
def test_kubernetes_service_links_are_ignored_silently(service: str) -> None:
    env = service_links(service, {"grpc": 50051, "metrics": 9464, "health": 50052})
    assert all(key.startswith("SIDECAR_") for key in env)
    warnings: list[str] = []
    settings = load_settings({}, environ=env, warnings=warnings)
    assert settings == load_settings({}, environ={})
    assert warnings == []


def test_an_unknown_sidecar_variable_is_a_warning_with_a_suggestion() -> None:
    warnings: list[str] = []
    settings = load_settings(
        {}, environ={"SIDECAR_MOD": "auto", "SIDECAR_COLOUR": "blue"}, warnings=warnings
    )
    assert settings.mode is None
    assert sorted(warnings) == [
        "environment variable SIDECAR_COLOUR is not a setting; ignored",
        "environment variable SIDECAR_MOD is not a setting; ignored (did you mean SIDECAR_MODE?)",
    ]


def test_operations_settings_from_the_environment() -> None:
    settings = load_settings(
        {}, environ={"SIDECAR_HEALTH_LISTEN": "0.0.0.0:50052", "SIDECAR_LOG_FORMAT": "json"}
    )
    assert settings.health_listen == "0.0.0.0:50052"
    assert settings.log_format == "json"
    assert load_settings({}, environ={}).health_listen == "off"
    with pytest.raises(ConfigError) as raised:
        load_settings({}, environ={"SIDECAR_HEALTH_LISTEN": "unix:/x"})
    assert "SIDECAR_HEALTH_LISTEN" in str(raised.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({}, environ={}, config_file=tmp_path / "none.yaml")
    assert "none.yaml" in str(raised.value)
