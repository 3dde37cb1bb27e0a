"""A real PostgreSQL server for tests and benchmarks, started on loopback in a temp dir.

PostgreSQL refuses to run as root, so initdb and pg_ctl run as the `postgres` system
user (Debian's package creates it) when this process is root. Where /etc/passwd is not
readable by other users (these sandboxes make it 0600), PostgreSQL cannot look up its own
user, so it runs under nss_wrapper with a passwd file of its own. `make tools` installs
the server and nss_wrapper (`apt-get install postgresql libnss-wrapper`) when missing.
"""

from __future__ import annotations

import glob
import os
import pwd
import secrets
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path


class PostgresUnavailable(Exception):
    """No PostgreSQL binaries here (run `make tools`)."""


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2] or 0))
    if not found or not Path(found[-1], "initdb").exists():
        raise PostgresUnavailable("PostgreSQL is not installed (make tools installs it)")
    return Path(found[-1])


NSS_WRAPPERS = (
    "/usr/lib/x86_64-linux-gnu/libnss_wrapper.so",
    "/usr/lib/aarch64-linux-gnu/libnss_wrapper.so",
)


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class PostgresServer:
    """initdb, start, a role and a database with a password; stop removes everything."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="sidecar-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.user = "app"
        self.password = secrets.token_hex(12)
        self.database = "app"
        self._as_postgres = os.geteuid() == 0
        self._env = dict(os.environ)
        if self._as_postgres:
            shutil.chown(self.root, "postgres", "postgres")
            if os.stat("/etc/passwd").st_mode & 0o004 == 0:
                self._wrap_nss()

    def _wrap_nss(self) -> None:
        wrapper = next((w for w in NSS_WRAPPERS if Path(w).exists()), None)
        if wrapper is None:
            raise PostgresUnavailable(
                "/etc/passwd is private here and nss_wrapper is missing (make tools installs it)"
            )
        user = pwd.getpwnam("postgres")
        passwd, group = self.root / "passwd", self.root / "group"
        passwd.write_text(f"postgres:x:{user.pw_uid}:{user.pw_gid}::{self.root}:/bin/sh\n")
        group.write_text(f"postgres:x:{user.pw_gid}:\n")
        for path in (passwd, group):
            path.chmod(0o644)
        self._env.update(
            LD_PRELOAD=wrapper, NSS_WRAPPER_PASSWD=str(passwd), NSS_WRAPPER_GROUP=str(group)
        )

    def _run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [*args]
        if self._as_postgres:
            command = ["runuser", "-u", "postgres", "--", *command]
        try:
            return subprocess.run(
                command, check=check, capture_output=True, text=True, timeout=120, env=self._env
            )
        except subprocess.CalledProcessError as error:
            raise RuntimeError(f"{args[0]} failed: {error.stderr}") from None

    @property
    def dsn(self) -> str:
        return self.dsn_for(self.database)

    def dsn_for(self, database: str) -> str:
        return f"postgresql://{self.user}:{self.password}@127.0.0.1:{self.port}/{database}"

    def start(self) -> PostgresServer:
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", "postgres",
            "--auth-local=trust", "--auth-host=scram-sha-256", "-E", "UTF8", "--no-locale",
            "--no-sync",
        )  # fmt: skip
        self.resume()
        self.psql(
            f"CREATE ROLE {self.user} LOGIN CREATEDB PASSWORD '{self.password}'",
            f"CREATE DATABASE {self.database} OWNER {self.user}",
        )
        return self

    def resume(self) -> None:
        """Start (again) on the same port and data directory."""
        options = (
            f"-c listen_addresses=127.0.0.1 -c port={self.port} "
            f"-c unix_socket_directories={self.root} -c fsync=off -c max_connections=200"
        )
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.root / "server.log"),
            "-w", "-o", options, "start",
        )  # fmt: skip

    def pause(self) -> None:
        """Stop the server (clients see the database go away); `resume` brings it back."""
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")

    def psql(self, *statements: str, database: str = "postgres") -> str:
        args = [str(self.bin / "psql"), "-h", str(self.root), "-p", str(self.port)]
        args += ["-U", "postgres", "-d", database, "-v", "ON_ERROR_STOP=1", "-At"]
        for statement in statements:
            args += ["-c", statement]
        return self._run(*args).stdout

    def fresh_database(self, name: str) -> str:
        """A new empty database owned by the app role; its DSN."""
        self.psql(
            f"DROP DATABASE IF EXISTS {name} WITH (FORCE)",
            f"CREATE DATABASE {name} OWNER {self.user}",
        )
        return self.dsn_for(name)

    def stop(self) -> None:
        self._run(
            str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop",
            check=False,
        )  # fmt: skip
        shutil.rmtree(self.root, ignore_errors=True)
