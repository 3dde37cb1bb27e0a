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
        ({}, {"SIDECAR_NOPE": "1"}, "environment variable SIDECAR_NOPE: unknown setting"),
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
    assert f"{config}: colour" in str(raised.value)


def test_missing_config_file(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        load_settings({}, environ={}, config_file=tmp_path / "none.yaml")
    assert "none.yaml" in str(raised.value)
