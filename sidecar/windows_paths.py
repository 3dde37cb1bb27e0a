"""Paths written for Windows in command lines the shell walk reads with bash's grammar.

An agent on Windows writes `tmp\\devtray.reg` or `src\\app\\main.cs` unquoted; to bash those
backslashes escape ordinary letters, a no-op nobody writes, so the word is a Windows path.
"""

from __future__ import annotations

import re2

# Folders joined by backslashes, ending in a file with an extension: `r\m`, `c\at` and
# `.s\sh` are bash's escapes of ordinary letters (an old trick to hide a name), not paths.
_RELATIVE = re2.compile(
    r"^[A-Za-z0-9_.-]+(?:\\[A-Za-z0-9_.-]+)*\\[A-Za-z0-9_-]+\.[A-Za-z0-9]{1,8}$"
)
_DRIVE_OR_VARIABLE = re2.compile(
    r"^(?:[A-Za-z]:\\|%[A-Za-z_][A-Za-z0-9_]*%\\|\\\\[A-Za-z0-9._-]+\\)"
)


def is_windows_relative(word: str) -> bool:
    """`tmp\\a.reg`, `.\\tmp\\t.txt`: a relative Windows path to a file."""
    return "\\" in word and _RELATIVE.match(word) is not None


def is_windows_absolute(word: str) -> bool:
    """`C:\\Users\\bob`, `%TEMP%\\x`, `\\\\server\\share`: a drive, a variable or a share."""
    return "\\" in word and _DRIVE_OR_VARIABLE.match(word) is not None


# A program run by path also starts `.\\`, `..\\` or `$env:NAME\\` (as an argument, `.\\ssh`
# stays bash's `.ssh`: the same escape hides a key folder).
_PROGRAM_ONLY = re2.compile(r"^(?:\.{1,2}\\|\\\\|\$env:[A-Za-z_]+\\)")


def is_windows_program_path(word: str) -> bool:
    """`C:\\x\\y.exe`, `%APPDATA%\\...\\run.cmd`, `.\\tool.exe`: a program at a Windows path."""
    return is_windows_absolute(word) or ("\\" in word and _PROGRAM_ONLY.match(word) is not None)
