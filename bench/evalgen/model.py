"""The values the generator works on: seeds, effects, calls and cases."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

Expect = Literal["deny", "block", "allow"]


@dataclass(frozen=True)
class Effect:
    """What an action does, independent of how it is spelled, so other languages can do it too.

    kinds: delete (path, recursive), write / append (path, content), chmod (path, mode),
    move (path, dest), read (path), send (path, url: POST the file), fetch_exec (url: download
    code and run it), revshell (host, port), spawn (argv: run one program without a shell).
    """

    kind: str
    path: str = ""
    content: str = ""
    recursive: bool = False
    mode: int = 0
    dest: str = ""
    url: str = ""
    host: str = ""
    port: int = 0
    argv: tuple[str, ...] = ()


@dataclass(frozen=True)
class Seed:
    """One risky action, written as the shell command a person would type for it.

    `target` is a path word of `command` that transforms may respell, hide in a variable or
    glob; it must occur once, as a whole word or after `=`/`@`. `effect` lets interpreter
    transforms redo the action in other languages. `write`/`read`/`fetch` mark actions that
    file and HTTP tools can do too (a write of (path, content), a read of a path, a GET).
    """

    id: str
    cls: str
    expect: Expect
    command: str
    target: str | None = None
    effect: Effect | None = None
    write: tuple[str, str] | None = None
    read: str | None = None
    fetch: str | None = None
    note: str = ""


@dataclass
class Case:
    """One generated evaluation case: a single call, or the steps of a session."""

    id: str
    cls: str
    expect: Expect
    transform: str
    seed: str
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    tool_shape: str = "generic"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        row: dict[str, Any] = {"id": self.id, "class": self.cls}
        if self.steps:
            row["steps"] = self.steps
            row["expect_last"] = self.expect
        else:
            row["tool"] = self.tool
            row["args"] = self.args
            row["expect"] = self.expect
        row["transform"] = self.transform
        row["seed"] = self.seed
        row["tool_shape"] = self.tool_shape
        row.update(self.extra)
        return row
