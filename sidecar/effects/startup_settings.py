"""Lines written to a shell startup file that only set the shell up.

Everyday setup appends settings to `~/.bashrc`: an alias, an exported variable, a PATH entry
for a toolchain, a tool's shell hook (`eval "$(direnv hook bash)"`). Those run at every login
but do nothing there beyond configuring the shell. The check is an allowlist of line shapes:
anything else (a command, a function, a conditional, a substitution of an unknown program, an
alias that shadows a command people type with secrets, a variable that redirects code loading
or traffic) is not "settings", and the write is judged as persistence (it asks).
"""

from __future__ import annotations

import re2

_MAX_CHARS = 8192
_SAFE_VALUE = r"[A-Za-z0-9_ ./:=@%+,~*{}$-]*"
_ALIAS = re2.compile(
    rf"^alias\s+([A-Za-z0-9_.+-]+)=('({_SAFE_VALUE})'|\"({_SAFE_VALUE})\"|([A-Za-z0-9_./=:-]+))$"
)
_ASSIGN = re2.compile(
    rf"^(?:export\s+|declare\s+-x\s+|typeset\s+-x\s+)?([A-Za-z_][A-Za-z0-9_]*)="
    rf"('({_SAFE_VALUE})'|\"({_SAFE_VALUE})\"|([A-Za-z0-9_./:=@%+,~{{}}$-]*))$"
)
_EXPORT_NAMES = re2.compile(r"^export(\s+[A-Za-z_][A-Za-z0-9_]*)+$")
# `eval "$(direnv hook bash)"`, `source <(kubectl completion zsh)`: a known tool prints code
# that sets the shell up.
_HOOK = re2.compile(
    r"^(?:eval\s+\"\$\(([A-Za-z0-9_./~$-]+)((?:\s+[A-Za-z0-9_=.-]+)*)\)\""
    r"|eval\s+\$\(([A-Za-z0-9_./~$-]+)((?:\s+[A-Za-z0-9_=.-]+)*)\)"
    r"|(?:source|\.)\s+<\(([A-Za-z0-9_./~$-]+)((?:\s+[A-Za-z0-9_=.-]+)*)\))$"
)
_HOOK_TOOLS = frozenset(
    [
        "direnv",
        "starship",
        "zoxide",
        "pyenv",
        "pyenv-virtualenv",
        "rbenv",
        "nodenv",
        "goenv",
        "jenv",
        "plenv",
        "phpenv",
        "fnm",
        "mise",
        "rtx",
        "asdf",
        "conda",
        "micromamba",
        "mamba",
        "brew",
        "atuin",
        "mcfly",
        "fzf",
        "kubectl",
        "helm",
        "gh",
        "glab",
        "npm",
        "pnpm",
        "pip",
        "pipx",
        "uv",
        "rustup",
        "poetry",
        "pdm",
        "rye",
        "volta",
        "oh-my-posh",
        "navi",
        "just",
        "kind",
        "minikube",
        "k3d",
        "eksctl",
        "stern",
        "flux",
        "argocd",
        "velero",
        "tkn",
    ]
)
_HOOK_WORDS = frozenset(
    [
        "hook",
        "init",
        "env",
        "shellenv",
        "completion",
        "completions",
        "activate",
        "--path",
        "--sh",
        "bash",
        "zsh",
        "fish",
        "-",
        "shell-init",
    ]
)
# `source ~/.cargo/env`, `[ -s "$NVM_DIR/nvm.sh" ] && . "$NVM_DIR/nvm.sh"`: a toolchain's own
# setup script, kept in a dot-directory of home or a system share.
_TOOL_HOMES = (
    r"\$\{?(?:NVM_DIR|SDKMAN_DIR|PYENV_ROOT|RBENV_ROOT|NODENV_ROOT|CARGO_HOME|RUSTUP_HOME|ASDF_DIR|"
    r"ASDF_DATA_DIR|BUN_INSTALL|VOLTA_HOME|DENO_INSTALL|FNM_DIR|PNPM_HOME|GOROOT|GOPATH|"
    r"JAVA_HOME|ANDROID_HOME|ANDROID_SDK_ROOT|FLUTTER_ROOT)\}?"
)
_SOURCED = (
    r"\"?((?:~|\$HOME|\$\{HOME\})/\.[A-Za-z0-9_./-]+|" + _TOOL_HOMES + r"/[A-Za-z0-9_./-]+|"
    r"/usr/(?:local/)?(?:share|etc)/[A-Za-z0-9_./-]+|/etc/bash_completion(?:\.d/[A-Za-z0-9_.-]+)?|"
    r"/opt/homebrew/[A-Za-z0-9_./-]+)\"?"
)
_SOURCE = re2.compile(
    rf"^(?:(?:\[\s+-[fsre]\s+{_SOURCED}\s+\]|test\s+-[fsre]\s+{_SOURCED})\s+&&\s+)?"
    rf"(?:source|\\?\.)\s+{_SOURCED}$"
)
_OPTIONS = re2.compile(
    r"^(?:set\s+-o\s+(?:vi|emacs|noclobber|pipefail)|shopt\s+-[su](?:\s+[a-z_]+)+"
    r"|setopt(?:\s+[A-Za-z_]+)+|unsetopt(?:\s+[A-Za-z_]+)+"
    r"|autoload\s+(?:-[A-Za-z+]+\s+)*[A-Za-z_]+(?:\s+&&\s+(?:compinit|bashcompinit))?"
    r"|compinit|bashcompinit|bindkey\s+[A-Za-z0-9_^\[\]'\" -]+"
    r"|zstyle\s+[A-Za-z0-9_:*.'\" -]+|fpath(?:\+)?=\(?[A-Za-z0-9_./~${} -]*\)?)$"
)
# direnv's standard library in an .envrc: a language's layout, a dev environment, .env files.
_DIRENV = re2.compile(
    r"^(?:layout\s+(?:python[23]?|node|ruby|go|perl|php|pipenv|poetry|pyenv|uv|anaconda|julia)"
    r"(?:\s+[A-Za-z0-9_.-]+)?|use\s+(?:nix|flake|node|asdf|mise|guix|julia|rbenv|vim)"
    r"(?:\s+[A-Za-z0-9_.:#/-]+)?|dotenv(?:_if_exists)?(?:\s+[A-Za-z0-9_./-]+)?"
    r"|source_up(?:_if_exists)?|source_env(?:_if_exists)?(?:\s+[A-Za-z0-9_./-]+)?"
    r"|PATH_add\s+[A-Za-z0-9_./-]+|watch_file(?:\s+[A-Za-z0-9_./-]+)+"
    r"|strict_env|unstrict_env|env_vars_required(?:\s+[A-Za-z_0-9]+)+)$"
)
# Names whose value redirects code loading, traffic, package sources, history or prompts.
_GUARDED_VARIABLE = re2.compile(
    r"^(LD_|DYLD_|GIT_|SSH_|PIP_|NPM_CONFIG_|UV_|POETRY_|CARGO_REGISTR|BUNDLE_|GEM_|HIST|BASH_)"
    r"|(PROXY|proxy|ASKPASS|INDEX_URL|REGISTRY|STARTUP|OPTIONS|OPT|LIB|PYTHONPATH|NODE_PATH)$"
    r"|^(PROMPT_COMMAND|PS0|PS1|PS2|PS3|PS4|ENV|IFS|SHELLOPTS|BASHOPTS|CDPATH|TMOUT|"
    r"EDITOR|VISUAL|PAGER|SUDO_EDITOR|MANPAGER|LESSOPEN|LESSCLOSE|ZDOTDIR|PERL5OPT|RUBYOPT)$"
)
# Commands people type with passwords or keys, or that others build on: an alias that
# redefines them (to anything but themselves with options) can capture or redirect.
_GUARDED_ALIAS = frozenset(
    [
        "sudo",
        "su",
        "doas",
        "pkexec",
        "ssh",
        "scp",
        "sftp",
        "rsync",
        "git",
        "gpg",
        "passwd",
        "login",
        "kinit",
        "aws",
        "gcloud",
        "az",
        "kubectl",
        "docker",
        "vault",
        "op",
        "pass",
        "cd",
        "ls",
        "cat",
        "echo",
        "python",
        "python3",
        "pip",
        "pip3",
        "npm",
        "node",
        "curl",
        "wget",
        "env",
        "command",
        "builtin",
        "exec",
        "eval",
        "source",
        ".",
        "unalias",
        "alias",
        "which",
        "type",
    ]
)
# Programs an alias must not stand for: they destroy, send or run code.
_RISKY_ALIAS_PROGRAM = frozenset(
    [
        "rm",
        "rmdir",
        "dd",
        "shred",
        "mkfs",
        "wipefs",
        "truncate",
        "chmod",
        "chown",
        "chattr",
        "kill",
        "pkill",
        "killall",
        "curl",
        "wget",
        "nc",
        "ncat",
        "netcat",
        "socat",
        "telnet",
        "ssh",
        "scp",
        "bash",
        "sh",
        "zsh",
        "dash",
        "ksh",
        "fish",
        "eval",
        "exec",
        "source",
        "python",
        "python3",
        "perl",
        "ruby",
        "node",
        "php",
        "base64",
        "xxd",
        "openssl",
        "sudo",
        "su",
        "doas",
        "crontab",
        "systemctl",
    ]
)
_PATH_ENTRY = re2.compile(
    r"^(\$PATH|\$\{PATH\}|(?:~|\$HOME|\$\{HOME\}|" + _TOOL_HOMES + r"|/usr|/opt|/snap|"
    r"/home/[A-Za-z0-9_.-]+)(?:/[A-Za-z0-9_.+-]+)*/?)$"
)
# Search paths of code a program loads: pointing them elsewhere runs other code.
_LOAD_PATHS = frozenset(
    [
        "PYTHONPATH",
        "LD_LIBRARY_PATH",
        "NODE_PATH",
        "CLASSPATH",
        "CDPATH",
        "PKG_CONFIG_PATH",
        "GEM_PATH",
        "PERL5LIB",
        "RUBYLIB",
        "LUA_PATH",
        "DYLD_LIBRARY_PATH",
        "DYLD_FALLBACK_LIBRARY_PATH",
    ]
)
_TEMPORARY = ("/tmp", "/var/tmp", "/dev/shm", "/..", "..")  # noqa: S108 (rejected, not used)


def only_settings(content: str) -> bool:
    """True when every line of `content` sets the shell up and nothing else; False for
    empty content, anything unrecognised, or content too large to be a few settings."""
    if len(content) > _MAX_CHARS:
        return False
    seen = False
    for raw in content.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if not _setting(line):
            return False
        seen = True
    return seen


def _setting(line: str) -> bool:
    alias = _ALIAS.match(line)
    if alias is not None:
        value = alias.group(3) or alias.group(4) or alias.group(5) or ""
        return _harmless_alias(alias.group(1), value)
    assign = _ASSIGN.match(line)
    if assign is not None:
        value = assign.group(3) or assign.group(4) or assign.group(5) or ""
        return _harmless_assignment(assign.group(1), value)
    hook = _HOOK.match(line)
    if hook is not None:
        tool = hook.group(1) or hook.group(3) or hook.group(5) or ""
        words = (hook.group(2) or hook.group(4) or hook.group(6) or "").split()
        return _known_hook(tool, words)
    if _SOURCE.match(line) is not None:
        return not any(t in line for t in _TEMPORARY)
    return (
        _EXPORT_NAMES.match(line) is not None
        or _OPTIONS.match(line) is not None
        or _DIRENV.match(line) is not None
    )


def _harmless_alias(name: str, value: str) -> bool:
    words = value.split()
    first = words[0] if words else ""
    if "$" in value or "/" in first:
        return False
    if first in _RISKY_ALIAS_PROGRAM and first != name:
        return False
    return name not in _GUARDED_ALIAS or first == name


def _harmless_assignment(name: str, value: str) -> bool:
    if name in _LOAD_PATHS:
        return False
    if name == "PATH":
        if "$PATH" not in value and "${PATH}" not in value:
            return False  # replaces the search path rather than adding to it
        return all(
            _PATH_ENTRY.match(e) is not None and not any(t in e for t in _TEMPORARY)
            for e in value.split(":")
        )
    if _GUARDED_VARIABLE.search(name) is not None or any(t in value for t in _TEMPORARY):
        return False
    return "$(" not in value and "`" not in value


def _known_hook(tool: str, words: list[str]) -> bool:
    name = tool.rsplit("/", 1)[-1]
    if "/" in tool and not tool.startswith(("/usr/", "/opt/", "~/", "$HOME/", "/home/")):
        return False
    if any(t in tool for t in _TEMPORARY):
        return False
    return name in _HOOK_TOOLS and bool(words) and all(w in _HOOK_WORDS for w in words)
