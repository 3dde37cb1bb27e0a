"""Which store a `--state` value selects, and the settings around it: a DSN is never taken
for a file path, never shown with its password, and the password may come from a file."""

from __future__ import annotations

from pathlib import Path

import pytest

from sidecar.cli import main
from sidecar.config import ConfigError, load_settings
from sidecar.store.dsn import is_postgres, masked, read_password
from sidecar.store.errors import StateError
from sidecar.store.open import open_store
from sidecar.store.postgres import PostgresStore
from sidecar.store.sqlite import SqliteStore


@pytest.mark.parametrize(
    "state",
    ["postgresql://u:pw@db:5432/x", "postgres://u@db/x", "POSTGRESQL://u@db/x"],
)
def test_a_postgresql_dsn_selects_postgresql_from_a_flag_or_the_environment(state: str) -> None:
    assert is_postgres(state)
    assert isinstance(open_store(load_settings({"state": state}, environ={}).state), PostgresStore)
    from_env = load_settings({}, environ={"SIDECAR_STATE": state})
    assert isinstance(open_store(from_env.state), PostgresStore)


def test_a_path_or_memory_keeps_sqlite(tmp_path: Path) -> None:
    assert isinstance(open_store(str(tmp_path / "s.db")), SqliteStore)
    assert isinstance(open_store(":memory:"), SqliteStore)
    assert not is_postgres("./postgresql.db")


def test_a_dsn_never_becomes_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It used to be read as a SQLite path: a file `postgresql:/…` appeared in the cwd."""
    monkeypatch.chdir(tmp_path)
    assert main(["serve", "--state", "postgresql://u:secret@db.invalid:notaport/x"]) == 2
    error = capsys.readouterr().err
    assert "--state" in error and "port is not a number" in error
    assert "secret" not in error and "u:***@db.invalid" in error
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://app:s3cr3t@127.0.0.1:5432/app", "postgresql://app:***@127.0.0.1:5432/app"),
        ("postgres://app:p%40ss@h/db?sslmode=require", "postgres://app:***@h/db?sslmode=require"),
        ("postgresql://app@h/db?password=s3cr3t", "postgresql://app@h/db?password=***"),
        ("postgresql://h/db", "postgresql://h/db"),
    ],
)
def test_a_dsn_is_shown_without_its_password(dsn: str, shown: str) -> None:
    assert masked(dsn) == shown


def test_the_password_file_and_what_it_goes_with(tmp_path: Path) -> None:
    secret = tmp_path / "password"
    secret.write_text("s3cr3t\n")  # as a mounted Secret key often ends
    assert read_password(secret) == "s3cr3t"
    settings = load_settings(
        {"state": "postgresql://app@db/x", "state_password_file": secret}, environ={}
    )
    assert settings.state_password_file == secret
    with pytest.raises(ConfigError, match="state_password_file needs a postgresql:// state"):
        load_settings({"state": "x.db", "state_password_file": secret}, environ={})
    with pytest.raises(ConfigError, match="is not a readable file"):
        load_settings(
            {"state": "postgresql://app@db/x", "state_password_file": tmp_path / "missing"},
            environ={},
        )
    (tmp_path / "empty").write_text("\n")
    with pytest.raises(StateError, match="is empty"):
        read_password(tmp_path / "empty")


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"state": ":memory:", "workers": 2}, "need a state they can share"),
        ({"listen": ["unix:/tmp/x.sock"], "workers": 2, "state": "x.db"}, "need a TCP listen"),
        ({"workers": 0}, "must be 1 to 64"),
        ({"workers": "many"}, "workers"),
        ({"state_unavailable": "allow"}, "--state-unavailable: Input should be"),
    ],
)
def test_settings_that_cannot_work_are_refused(settings: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(settings, environ={})


def test_workers_auto_is_one_per_core() -> None:
    import os

    assert load_settings({"workers": "auto"}, environ={}).worker_count == (os.cpu_count() or 1)
    assert load_settings({}, environ={"SIDECAR_WORKERS": "3"}).worker_count == 3
