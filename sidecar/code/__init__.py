"""Code in other languages: what Python, JavaScript, PowerShell, Ruby, Perl and PHP code
handed to an interpreter would do, as effects (sidecar.effects.model).

Two entry points: `code_invocations` finds the code a command line hands to an
interpreter (`python3 -c CODE`, `node -e`, `pwsh -EncodedCommand`, `perl` reading a
here-document); `analyse_code` turns code into a CodeAnalysis (effects, the command lines
it hands to a shell, and what it cannot resolve).
"""

from sidecar.code.analysis import DEFAULT_MAX_BYTES, LANGUAGES, analyse_code
from sidecar.code.invocations import code_invocations

__all__ = ["DEFAULT_MAX_BYTES", "LANGUAGES", "analyse_code", "code_invocations"]
