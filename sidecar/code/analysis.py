"""One entry point for every language: size limit, language names, the nesting of
eval-of-eval, and a last guard so no input ever raises out of an analysis."""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable

from sidecar.code.collector import Nested
from sidecar.code.data_destruction import data_destruction
from sidecar.code.generic import analyse_generic
from sidecar.code.ipython import analyse_ipython
from sidecar.code.javascript import analyse_javascript
from sidecar.code.perl import analyse_perl
from sidecar.code.php import analyse_php
from sidecar.code.powershell import analyse_powershell
from sidecar.code.python import analyse_python
from sidecar.code.ruby import analyse_ruby
from sidecar.effects.model import CodeAnalysis

DEFAULT_MAX_BYTES = 64 * 1024  # past this, code is not analysed: "too large to analyse"
LANGUAGES = ("python", "javascript", "powershell", "ruby", "perl", "php", "ipython", "generic")

# Other names of the same languages (program names, file extensions).
_NAMES = {
    "python": "python",
    "py": "python",
    "ipython": "ipython",
    "jupyter": "ipython",
    "python2": "python",
    "python3": "python",
    "javascript": "javascript",
    "js": "javascript",
    "node": "javascript",
    "nodejs": "javascript",
    "deno": "javascript",
    "bun": "javascript",
    "typescript": "javascript",
    "ts": "javascript",
    "powershell": "powershell",
    "pwsh": "powershell",
    "ps1": "powershell",
    "ruby": "ruby",
    "rb": "ruby",
    "perl": "perl",
    "pl": "perl",
    "php": "php",
    "generic": "generic",
}

log = logging.getLogger(__name__)


def analyse_code(language: str, code: str, *, max_bytes: int = DEFAULT_MAX_BYTES) -> CodeAnalysis:
    """What `code` in `language` would do. Never raises: what cannot be analysed is a
    problem in the result (a problem means "ask")."""
    name = _NAMES.get(language.lower())
    if name is None:
        return CodeAnalysis(problems=(f"code in {language[:40]!r} cannot be analysed",))
    if len(code) > max_bytes or len(code.encode("utf-8", "surrogatepass")) > max_bytes:
        return CodeAnalysis(problems=(f"{name} code too large to analyse ({len(code)} chars)",))
    return _cached(name, code, 0)


@functools.lru_cache(maxsize=1024)
def _cached(language: str, code: str, depth: int) -> CodeAnalysis:
    return _analyse(language, code, depth)


def _analyse(language: str, code: str, depth: int) -> CodeAnalysis:
    try:
        result = _ANALYSERS[language](code, _analyse, depth)
        destroyed = data_destruction(code)  # ORMs' bulk deletes: named the same everywhere
        return result._replace(effects=result.effects + tuple(destroyed)) if destroyed else result
    except Exception:  # an analyser's bug must not break the chain: ask instead
        log.exception("analysing %s code failed", language)
        return CodeAnalysis(problems=(f"{language} code could not be analysed",))


_ANALYSERS: dict[str, Callable[[str, Nested, int], CodeAnalysis]] = {
    "python": analyse_python,
    "generic": analyse_generic,
    "ipython": analyse_ipython,
    "javascript": analyse_javascript,
    "powershell": analyse_powershell,
    "ruby": analyse_ruby,
    "perl": analyse_perl,
    "php": analyse_php,
}
