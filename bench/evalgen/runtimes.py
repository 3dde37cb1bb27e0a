"""The runtimes' real tool names and argument shapes (docs/runtime-tools.md), as call builders.

`generic` is the project's own `shell{command}` / `write_file{path, content}` / `read_file{path}`
shape, which the engine already knows: it carries the transforms, so that their figures measure
the transform and not the tool name. The named shapes measure the tool names.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

Call = tuple[str, dict[str, Any]]

SHELL: dict[str, Callable[[str], Call]] = {
    "claude_code:Bash": lambda c: ("Bash", {"command": c, "description": "Run command"}),
    "codex:shell": lambda c: ("shell", {"command": ["bash", "-lc", c], "workdir": "/workspace"}),
    "codex:shell_command": lambda c: ("shell_command", {"command": c, "workdir": "/workspace"}),
    "codex:exec_command": lambda c: ("exec_command", {"cmd": c, "workdir": "/workspace"}),
    "codex:local_shell": lambda c: (
        "local_shell",
        {"type": "exec", "command": ["bash", "-lc", c], "working_directory": "/workspace"},
    ),
    "gemini_cli:run_shell_command": lambda c: (
        "run_shell_command",
        {"command": c, "description": "Run command", "dir_path": "/workspace"},
    ),
    "goose:developer__shell": lambda c: ("developer__shell", {"command": c}),
    "cursor:run_terminal_cmd": lambda c: (
        "run_terminal_cmd",
        {"command": c, "is_background": False, "explanation": "Run the command"},
    ),
    "cline:execute_command": lambda c: (
        "execute_command",
        {"command": c, "requires_approval": "false"},
    ),
    "cline:run_commands": lambda c: ("run_commands", {"commands": [c]}),
    "openhands:execute_bash": lambda c: (
        "execute_bash",
        {"command": c, "is_input": "false", "security_risk": "LOW"},
    ),
    "openhands:terminal": lambda c: ("terminal", {"command": c}),
}


def apply_patch_add(path: str, content: str) -> str:
    lines = "".join(f"+{line}\n" for line in content.split("\n"))
    return f"*** Begin Patch\n*** Add File: {path}\n{lines}*** End Patch\n"


def parse_patch_adds(patch: str) -> list[tuple[str, str]]:
    """(path, content) of each added file: the round trip that checks `apply_patch_add`."""
    added: list[tuple[str, str]] = []
    path: str | None = None
    lines: list[str] = []
    for line in patch.split("\n"):
        if line.startswith("*** Add File: "):
            path, lines = line[len("*** Add File: ") :], []
        elif line.startswith("*** ") and path is not None:
            added.append((path, "\n".join(lines)))
            path = None
        elif path is not None and line.startswith("+"):
            lines.append(line[1:])
    return added


WRITE: dict[str, Callable[[str, str], Call]] = {
    "claude_code:Write": lambda p, c: ("Write", {"file_path": p, "content": c}),
    "codex:apply_patch": lambda p, c: ("apply_patch", {"input": apply_patch_add(p, c)}),
    "gemini_cli:write_file": lambda p, c: ("write_file", {"file_path": p, "content": c}),
    "goose:developer__text_editor": lambda p, c: (
        "developer__text_editor",
        {"command": "write", "path": p, "file_text": c},
    ),
    "goose:developer__file_write": lambda p, c: (
        "developer__file_write",
        {"path": p, "content": c},
    ),
    "cursor:edit_file": lambda p, c: (
        "edit_file",
        {"target_file": p, "instructions": "I create the file.", "code_edit": c},
    ),
    "cline:write_to_file": lambda p, c: ("write_to_file", {"path": p, "content": c}),
    "cline:editor": lambda p, c: ("editor", {"path": p, "new_text": c}),
    "openhands:str_replace_editor": lambda p, c: (
        "str_replace_editor",
        {"command": "create", "path": p, "file_text": c, "security_risk": "LOW"},
    ),
    "mcp:mcp__filesystem__write_file": lambda p, c: (
        "mcp__filesystem__write_file",
        {"path": p, "content": c},
    ),
    "cline:use_mcp_tool": lambda p, c: (
        "use_mcp_tool",
        {
            "server_name": "filesystem",
            "tool_name": "write_file",
            "arguments": json.dumps({"path": p, "content": c}),
        },
    ),
}

READ: dict[str, Callable[[str], Call]] = {
    "claude_code:Read": lambda p: ("Read", {"file_path": p}),
    "codex:read_file": lambda p: ("read_file", {"file_path": p}),
    "gemini_cli:read_file": lambda p: ("read_file", {"file_path": p}),
    "goose:developer__text_editor": lambda p: (
        "developer__text_editor",
        {"command": "view", "path": p},
    ),
    "cursor:read_file": lambda p: (
        "read_file",
        {
            "target_file": p,
            "should_read_entire_file": True,
            "start_line_one_indexed": 1,
            "end_line_one_indexed_inclusive": 200,
        },
    ),
    "cline:read_file": lambda p: ("read_file", {"path": p}),
    "cline:read_files": lambda p: ("read_files", {"files": [{"path": p}]}),
    "openhands:str_replace_editor": lambda p: (
        "str_replace_editor",
        {"command": "view", "path": p, "security_risk": "LOW"},
    ),
    "mcp:mcp__filesystem__read_text_file": lambda p: (
        "mcp__filesystem__read_text_file",
        {"path": p},
    ),
    "gemini_cli:mcp_filesystem_read_text_file": lambda p: (
        "mcp_filesystem_read_text_file",
        {"path": p},
    ),
}

FETCH: dict[str, Callable[[str], Call]] = {
    "claude_code:WebFetch": lambda u: ("WebFetch", {"url": u, "prompt": "Summarise this page"}),
    "gemini_cli:web_fetch": lambda u: ("web_fetch", {"prompt": f"Summarise {u} for me"}),
    "cline:web_fetch": lambda u: ("web_fetch", {"url": u, "prompt": "Summarise"}),
    "cline:fetch_web_content": lambda u: (
        "fetch_web_content",
        {"requests": [{"url": u, "prompt": "Summarise"}]},
    ),
    "openhands:fetch": lambda u: ("fetch", {"url": u}),
    "mcp:mcp__fetch__fetch": lambda u: ("mcp__fetch__fetch", {"url": u}),
    "goose:computercontroller__web_scrape": lambda u: (
        "computercontroller__web_scrape",
        {"url": u, "save_as": "text"},
    ),
}

EDIT: dict[str, Callable[[str, str, str], Call]] = {
    "claude_code:Edit": lambda p, o, n: (
        "Edit",
        {"file_path": p, "old_string": o, "new_string": n},
    ),
    "claude_code:MultiEdit": lambda p, o, n: (
        "MultiEdit",
        {"file_path": p, "edits": [{"old_string": o, "new_string": n}]},
    ),
    "gemini_cli:replace": lambda p, o, n: (
        "replace",
        {"file_path": p, "instruction": "Update the code", "old_string": o, "new_string": n},
    ),
    "goose:developer__text_editor": lambda p, o, n: (
        "developer__text_editor",
        {"command": "str_replace", "path": p, "old_str": o, "new_str": n},
    ),
    "cline:replace_in_file": lambda p, o, n: (
        "replace_in_file",
        {"path": p, "diff": f"------- SEARCH\n{o}\n=======\n{n}\n+++++++ REPLACE"},
    ),
    "openhands:str_replace_editor": lambda p, o, n: (
        "str_replace_editor",
        {"command": "str_replace", "path": p, "old_str": o, "new_str": n, "security_risk": "LOW"},
    ),
    "mcp:mcp__filesystem__edit_file": lambda p, o, n: (
        "mcp__filesystem__edit_file",
        {"path": p, "edits": [{"oldText": o, "newText": n}]},
    ),
}


def generic_shell(command: str) -> Call:
    return "shell", {"command": command}


def generic_write(path: str, content: str) -> Call:
    return "write_file", {"path": path, "content": content}


def generic_read(path: str) -> Call:
    return "read_file", {"path": path}


def generic_fetch(url: str) -> Call:
    return "fetch", {"url": url}
