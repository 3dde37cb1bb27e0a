"""Application consoles that run code inside an app, with its database and settings:
`manage.py shell -c CODE` (Django), `rails runner CODE` (Rails), `artisan tinker --execute`
(Laravel). The code is analysed like `python3 -c`; what it does to the app's data is what
the command does.
"""

from __future__ import annotations

from collections.abc import Sequence

Found = list[tuple[str, str]]

_PYTHONS = ("python", "python2", "python3", "pypy", "pypy3")


def app_console_code(name: str, args: Sequence[str]) -> Found:
    """The (language, code) a console command runs; `name` is the program's basename."""
    words = list(args)
    if (name in _PYTHONS or name.startswith("python3.")) and words:
        name, words = _basename(words[0]), words[1:]  # python manage.py ...
    elif name == "php" and words:
        name, words = _basename(words[0]), words[1:]  # php artisan ...
    elif name == "bundle" and words[:1] == ["exec"] and len(words) > 1:
        name, words = _basename(words[1]), words[2:]  # bundle exec rails ...
    if name in ("manage.py", "django-admin"):
        return _option_code("python", words, ("shell", "shell_plus"), ("-c", "--command"))
    if name == "artisan":
        return _option_code("php", words, ("tinker",), ("--execute",))
    if name == "rails":
        return _rails_runner(words)
    return []


def _basename(word: str) -> str:
    return word.rsplit("/", 1)[-1]


def _option_code(
    language: str, words: list[str], subcommands: tuple[str, ...], options: tuple[str, ...]
) -> Found:
    operands = [w for w in words if not w.startswith("-")]
    if not operands or operands[0] not in subcommands:
        return []
    for index, word in enumerate(words):
        option, equals, value = word.partition("=")
        if option in options:
            if equals:
                return [(language, value)]
            if index + 1 < len(words):
                return [(language, words[index + 1])]
    return []


_RAILS_VALUES = frozenset({"-e", "--environment"})


def _rails_runner(words: list[str]) -> Found:
    index = 0
    while index < len(words) and words[index].startswith("-"):
        index += 2 if words[index] in _RAILS_VALUES else 1
    if index >= len(words) or words[index] not in ("runner", "r"):
        return []
    index += 1
    while index < len(words):
        word = words[index]
        if word in _RAILS_VALUES:
            index += 2
            continue
        if word.startswith("-"):
            index += 1
            continue
        if word.endswith(".rb") and " " not in word:
            return []  # a script file: read where it was written
        return [("ruby", word)]
    return []
