"""What leaves this machine through a tool that is not a local one.

Files written into a repository through a forge's API (a GitHub or GitLab MCP server's
`create_or_update_file`, `push_files`) leave this machine: what they hold is sent to the
forge, and from there to everyone who can read the repository. A `.env` file or a text with
credentials in it is a credential sent away, not a local write."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from sidecar.effects.adapters import FileChange
from sidecar.effects.model import Action, Effect
from sidecar.effects.paths import normalise
from sidecar.effects.secret_output import secret_data
from sidecar.json_strings import json_strings
from sidecar.secrets import SecretScanner

_CREDENTIALS = "credentials"
_KEY_STORES = "key_stores"
_MAX_SCANNED = 256 * 1024


def forge_host(tool: str, arguments: Mapping[str, Any]) -> str:
    """The forge a file tool writes to ("" when it writes here): repository coordinates in
    the arguments (`owner` and `repo`, GitLab's `project_id`) or the forge in the name."""
    name = tool.lower()
    names_repo = ("owner" in arguments and "repo" in arguments) or "project_id" in arguments
    if "gitlab" in name or ("project_id" in arguments and "github" not in name):
        return "gitlab.com" if names_repo or "gitlab" in name else ""
    if "github" in name or names_repo:
        return "github.com"
    return ""


def forge_sends(
    host: str,
    changes: Sequence[FileChange],
    classify: Callable[[str], Iterable[str]],
    scanner: SecretScanner,
) -> list[Effect]:
    """A send to the forge for each file written that is a credential store by its path or
    holds credentials by their shape."""
    found: list[Effect] = []
    for change in changes:
        if change.action not in ("write", "edit"):
            continue
        path = normalise(change.path)
        data: list[str] = []
        if {_CREDENTIALS, _KEY_STORES} & set(classify(path)):
            data.append(path)
        kinds = scanner.kinds_in(change.content[:_MAX_SCANNED]) if change.content else set()
        if kinds:
            data.append(secret_data(f"{path}: {', '.join(sorted(kinds))}"))
        if data:
            found.append(Effect(Action.SEND, host, data=tuple(data), program="forge file tool"))
    return found


# Tools whose calls are messages to a service, not work here: their arguments go to it.
_LOCAL_FORMS = frozenset({"shell", "files", "code"})
_MAX_ARGUMENT_TEXT = 256 * 1024


def service_of(tool: str, server: str) -> str:
    """The service a tool talks to, for messages: its MCP server, else its name's prefix
    (`mcp__slack__post_message` -> slack)."""
    if server:
        return server
    parts = [p for p in tool.split("__") if p]
    if len(parts) >= 3 and parts[0].lower() == "mcp":
        return parts[1]
    return tool


def argument_secret_sends(
    tool: str, server: str, form_kind: str, arguments: Mapping[str, Any], scanner: SecretScanner
) -> list[Effect]:
    """A send of credentials to the service when a message-like call (a chat post, an
    issue, an e-mail, a fetch) carries credentials by their shape in its arguments."""
    if form_kind in _LOCAL_FORMS:
        return []
    text = "\n".join(json_strings(arguments))[:_MAX_ARGUMENT_TEXT]
    kinds = scanner.kinds_in(text) if text else set()
    if not kinds:
        return []
    data = (secret_data(f"{tool} arguments: {', '.join(sorted(kinds))}"),)
    return [Effect(Action.SEND, service_of(tool, server), data=data, program=tool)]
