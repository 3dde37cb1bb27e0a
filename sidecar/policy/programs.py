"""The program catalogue's schema: what each program (and subcommand) does, as data.

A policy file may hold `programs:`, a mapping from a program's name to its spec. Files merge
like the rest of the policy (later files add programs or extend a spec). See
`sidecar/effects/catalogue.py` for how a parsed command is turned into effects with it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any, Literal

import re2
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

ActionName = Literal[
    "read", "write", "delete", "move", "chmod", "chown", "execute", "send", "fetch", "connect",
    "listen", "install", "persist", "privilege", "kill", "destroy", "disable",
]  # fmt: skip
OriginName = Literal["none", "literal", "network", "decoded", "file", "unknown", "input"]
TargetKind = Literal["path", "host", "url", "package", "process", "resource", "text"]
OutputName = Literal[
    "none",
    "network",
    "decoded",
    "literal",
    "printf",
    "input",
    "files",
    "repository",
    "local_facts",
    "shell_history",
]

# Target selectors: which words of the command an effect applies to.
#   operands            every operand (arguments that are not options or option values)
#   operands[1:]        a slice of the operands (Python slice syntax, one or two bounds)
#   operand[0]          one operand (negative indexes count from the end)
#   option:-o|--output  the values of these options
#   assign:of           values written as `of=VALUE` among the operands (dd)
#   literal:TEXT        a fixed target
#   command             the whole command line (for resources such as `kubectl delete ns x`)
#   stdin               what the command reads on standard input
# Prefixes refine a selector: `basename:` (the last path segment of each word, e.g. the file
# wget saves), `local:` / `remote:` (only words that name a local path, or only `host:path`
# and URL words: scp, rsync), `inside:` (the path of a `POD:/path` word: kubectl cp, docker
# cp), `mount_source:` (the host path of a container mount, `-v SRC:DST`),
# `value:` (the PATH of `KEY=PATH`, kubectl's --from-file), `file_address:` (the path of a
# socat file address, `FILE:/path,opts`), `alias:` (a remote word, or `ALIAS/path` not written
# as a local path: the MinIO client's configured hosts), `field_file:` (the PATH of an HTTPie
# item `field@PATH`, `field=@PATH` or `field:=@PATH`: a file sent in the request), `text:`
# (a value sent as text, never a file: only what a run-time word carries counts, as in
# `gh secret set X --body "$(cat key)"`).
SELECTOR_HELP = (
    "operands | operands[i:j] | operand[i] | option:-x|--long | assign:NAME | literal:TEXT | "
    "command | stdin, optionally prefixed by basename:, local:, remote:, inside:, mount_source:, "
    "value:, file_address:, alias:, field_file: or text:"
)
SELECTOR_PREFIXES = (
    "basename:", "local:", "remote:", "inside:", "mount_source:", "value:", "file_address:",
    "alias:", "field_file:", "text:",
)  # fmt: skip


def _compiles_in_re2(pattern: str) -> str:
    try:
        re2.compile(pattern)
    except re2.error as error:
        raise ValueError(f"not a valid RE2 pattern: {error}") from None
    return pattern


Re2Text = Annotated[str, AfterValidator(_compiles_in_re2)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _valid_selector(value: str) -> str:
    for prefix in SELECTOR_PREFIXES:
        if value.startswith(prefix):
            _valid_selector(value[len(prefix) :])
            return value
    head = value.split(":", 1)[0]
    if value in ("operands", "command", "stdin") or head in ("option", "assign", "literal"):
        return value
    if value.startswith(("operands[", "operand[")) and value.endswith("]"):
        body = value[value.index("[") + 1 : -1]
        parts = body.split(":")
        if len(parts) <= 2 and all(p.strip().lstrip("-").isdigit() or not p for p in parts):
            if value.startswith("operand[") and (len(parts) != 1 or not parts[0]):
                raise ValueError(f"operand[i] takes one index: {value!r}")
            return value
    raise ValueError(f"not a target selector: {value!r} (use {SELECTOR_HELP})")


class EffectSpec(_Strict):
    action: ActionName
    target: str = Field(default="operands", description=f"Which words: {SELECTOR_HELP}.")
    kind: TargetKind = "path"
    when: tuple[str, ...] = Field(
        default=(), description="Only when one of these named flags is given."
    )
    unless: tuple[str, ...] = Field(
        default=(), description="Not when one of these named flags is given."
    )
    when_all: tuple[str, ...] = Field(
        default=(), description="Only when every one of these named flags is given."
    )
    flags: tuple[str, ...] = Field(default=(), description="Flags the effect always carries.")
    origin: OriginName = Field(
        default="none",
        description="Where executed code or written content comes from; 'input' means from "
        "whatever feeds the command (a pipe, a here-document, a redirect).",
    )
    data: str | None = Field(
        default=None, description="send: the files sent (a selector); 'stdin' for piped input."
    )
    mode: str | None = Field(
        default=None,
        description="chmod: the selector of the mode (`operand[0]`, `option:-m`); the effect "
        "then carries `loosen` (group/world writable), `setuid` or `exec` as the mode gives.",
    )
    content: str | None = Field(
        default=None,
        description="write/persist: the selector of the text written (`npm pkg set "
        "scripts.postinstall=...`), judged like content written by a redirect.",
    )
    match: Re2Text | None = Field(
        default=None,
        description="RE2: only the selected words that match (a SQL statement that drops, a "
        "refspec that deletes); searched in the word as written.",
    )
    not_match: Re2Text | None = Field(
        default=None, description="RE2: only the selected words that do not match."
    )

    @field_validator("target")
    @classmethod
    def _target(cls, value: str) -> str:
        return _valid_selector(value)

    @field_validator("data", "mode", "content")
    @classmethod
    def _data(cls, value: str | None) -> str | None:
        return None if value is None else _valid_selector(value)


class ProgramExample(_Strict):
    command: str = Field(min_length=1)
    effects: tuple[str, ...] = Field(
        default=(),
        description="Expected effects, each 'ACTION TARGET' (and ' +flag' for flags it must "
        "carry); the command must have exactly these effects (ignoring extra flags).",
    )


class SecretOutput(_Strict):
    """When a program prints a credential (`gh auth token`, `vault kv get`, `kubectl get
    secret -o json`): all given conditions must hold. What it prints then counts as a
    secret wherever it flows: sending it anywhere is credential exfiltration."""

    when: tuple[str, ...] = Field(
        default=(), description="Only when one of these named flags is given."
    )
    unless: tuple[str, ...] = Field(
        default=(), description="Not when one of these named flags is given."
    )
    match: Re2Text | None = Field(
        default=None,
        description="RE2 searched in the command line (the program and its words, joined "
        "by spaces): `(^|\\s)token\\s+create\\b`.",
    )
    not_match: Re2Text | None = Field(
        default=None,
        description="RE2: not when the command line matches (a jsonpath that selects only "
        "a public certificate).",
    )


class ProgramSpec(_Strict):
    aliases: tuple[str, ...] = Field(default=(), description="Other names of the same program.")
    description: str = ""
    value_options: tuple[str, ...] = Field(
        default=(), description="Options that take the next word as their value."
    )
    flags: dict[str, tuple[str, ...]] = Field(
        default={}, description="Named flags and their spellings, e.g. recursive: [-r, -R]."
    )
    text_flags: dict[str, Re2Text] = Field(
        default={},
        description="Named flags given when the command line (the program and its words, "
        "joined by spaces) matches an RE2 pattern, e.g. production: '(?i)\\bprod\\b'. "
        "Subcommands inherit them.",
    )
    operands_below: tuple[str, ...] = Field(
        default=(),
        description="Options whose value is the directory relative operands are in (`tar -C "
        "DIR -cf - .` reads DIR).",
    )
    place_is_directory: bool = Field(
        default=False,
        description="The working directory names the environment the program acts on "
        "(`terraform apply` in envs/prod): a production directory makes its destroys "
        "production and its applies production changes.",
    )
    runs_command: bool = Field(
        default=False,
        description="The first operand that is not a subcommand names a program, run with the "
        "words after it (npx, bundle exec, poetry run): those words are read as that program's.",
    )
    effects: tuple[EffectSpec, ...] = ()
    subcommands: dict[str, ProgramSpec] = Field(
        default={},
        description="Subcommands by name ('a|b' for several names of one; a name with `*` is a "
        "glob, tried after the exact names: 'delete-*').",
    )
    output: OutputName = Field(
        default="none",
        description="What the command prints: downloaded data, decoded data, literal text (its "
        "words; with the named flag `escapes`, backslash escapes read as echo -e does), its "
        "words formatted as printf does, its input passed on, the contents of the files it "
        "reads, the repository's (git diff, git show: the working tree's files), facts "
        "about this machine and its user (uname, ip addr, ps, the clipboard) or the shell's "
        "history (~/.bash_history, which holds typed secrets).",
    )
    output_when: tuple[str, ...] = Field(
        default=(), description="`output` applies only when one of these named flags is given."
    )
    decodes_when: tuple[str, ...] = Field(
        default=(),
        description="With one of these named flags the output is decoded data (base64 -d).",
    )
    bundled_first_word: bool = Field(
        default=False,
        description="A first word without a dash is a bundle of short options (tar xzf, ps aux).",
    )
    single_dash_words: bool = Field(
        default=False,
        description="Options are whole words after one dash, in any case, and may be shortened "
        "to a unique prefix (PowerShell: -NoProfile, -nop, -Command, -comm); never letters.",
    )
    slash_options: bool = Field(
        default=False,
        description="Windows switches: a word `/x` or `/x:value` anywhere is an option, in any "
        "case (spelt lower-case in flags and value_options: copy /y, robocopy /MIR).",
    )
    runs_stdin: bool = Field(
        default=False, description="Runs its standard input as code when given no script."
    )
    read_only: bool = Field(
        default=False,
        description="Only reads (listing, printing, querying): smart_approve may run it unasked "
        "when it reads nothing sensitive and writes nothing.",
    )
    read_only_unless: tuple[str, ...] = Field(
        default=(),
        description="Read-only except with one of these named flags (ruff check --fix).",
    )
    read_only_when: tuple[str, ...] = Field(
        default=(),
        description="Read-only only with one of these named flags (ruff format --check, "
        "bash -c, kubectl apply --dry-run=client); `read_only_unless` still applies.",
    )
    unknown_subcommand: Literal["own_effects", "unresolved"] = Field(
        default="own_effects",
        description="A subcommand not listed: use the program's own effects, or 'unresolved' "
        "(cannot tell what it does: ask).",
    )
    prints_secrets: tuple[SecretOutput, ...] = Field(
        default=(),
        description="What the command prints is a credential when one of these holds "
        "(`true` for always). Subcommands inherit them.",
    )
    examples: tuple[ProgramExample, ...] = ()

    @field_validator("prints_secrets", mode="before")
    @classmethod
    def _always(cls, value: object) -> object:
        if value is True:
            return [{}]
        if value is False or value is None:
            return []
        if isinstance(value, dict):
            return [value]
        return value


ProgramSpec.model_rebuild()


def resolve_text_patterns(spec: Any, patterns: Mapping[str, Any], where: str) -> Any:
    """A raw program spec with each `@name` text flag replaced by the named pattern, in its
    subcommands too. An unknown name is an error naming where it was used."""
    if not isinstance(spec, dict):
        return spec
    resolved = dict(spec)
    flags = spec.get("text_flags")
    if isinstance(flags, dict):
        resolved["text_flags"] = {
            flag: _named(value, patterns, f"{where}.text_flags.{flag}")
            for flag, value in flags.items()
        }
    subcommands = spec.get("subcommands")
    if isinstance(subcommands, dict):
        resolved["subcommands"] = {
            name: resolve_text_patterns(sub, patterns, f"{where}.subcommands.{name}")
            for name, sub in subcommands.items()
        }
    return resolved


def _named(value: Any, patterns: Mapping[str, Any], where: str) -> Any:
    if not (isinstance(value, str) and value.startswith("@")):
        return value
    if value[1:] not in patterns:
        raise ValueError(f"{where}: no text pattern named {value[1:]!r} (text_patterns)")
    return patterns[value[1:]]
