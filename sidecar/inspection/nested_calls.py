"""Tools that carry other tools' calls: `multi_tool_use.parallel{tool_uses: [{recipient_name,
parameters}]}`, `batch{invocations: [{tool_name, input}]}`, `call_tool{name, arguments}`.

Each carried call is judged as if the agent had made it, and the carrier gets the strictest
verdict among them: a wrapper never hides a call from the chain.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import NamedTuple

import re2

from sidecar.inspection.model import ToolCall

MAX_CARRIED = 64  # carried calls judged per call; a call carrying more asks
_MAX_DEPTH = 3
_NAME_KEYS = ("recipient_name", "tool_name", "toolname", "tool", "name", "function", "recipient")
_ARGUMENT_KEYS = ("parameters", "arguments", "args", "input", "params", "tool_input", "payload")
_LIST_KEYS = re2.compile(
    r"(?i)^(tool_?uses|invocations|calls|tool_?calls|tools|steps|actions|operations|requests|"
    r"batch|jobs|tasks|items)$"
)
# Tools whose name says they run other tools (one or several).
_CARRIER_NAME = re2.compile(
    r"(?i)(parallel|batch|multi|sequence|pipeline|run_tools|use_tools|call_tool|invoke_tool|"
    r"run_tool|use_tool|execute_tool|dispatch|proxy|tool_call)"
)
_PREFIXES = ("functions.", "tools.", "function.")


def carried_calls(call: ToolCall) -> tuple[list[ToolCall], bool]:
    """The calls `call` carries (flattened; [] when it carries none), and whether some were
    left unjudged (more than MAX_CARRIED, or nested deeper than _MAX_DEPTH)."""
    out: list[ToolCall] = []
    cut = _carried(call, 0, out)
    if len(out) > MAX_CARRIED:
        del out[MAX_CARRIED:]
        cut = True
    return out, cut


def _carried(call: ToolCall, depth: int, out: list[ToolCall]) -> bool:
    """Appends what `call` carries to `out`; True when something was cut."""
    found = _direct(call)
    if not found:
        return False
    if depth >= _MAX_DEPTH:
        return True  # a carrier this deep: what it carries is not judged
    cut = False
    for inner in found:
        if len(out) > MAX_CARRIED:
            return True
        before = len(out)
        inner_cut = _carried(inner, depth + 1, out)
        if len(out) == before and not inner_cut:
            out.append(inner)  # carries nothing: judged as the call it is
        cut = cut or inner_cut
    return cut


def _direct(call: ToolCall) -> list[ToolCall]:
    """The calls `call` itself holds, one level down."""
    if not isinstance(call.arguments, Mapping):
        return []
    found: list[ToolCall] = []
    named = _CARRIER_NAME.search(call.name) is not None
    if named:
        inner = _as_call(call.arguments, f"{call.id}/0")
        if inner is not None:
            found.append(inner)
    for key, value in call.arguments.items():
        if not isinstance(value, list) or not (named or _LIST_KEYS.match(str(key))):
            continue
        for item in value[: MAX_CARRIED + 1]:
            inner = _as_call(item, f"{call.id}/{len(found)}")
            if inner is not None:
                found.append(inner)
    return found[: MAX_CARRIED + 1]


def _as_call(item: object, call_id: str) -> ToolCall | None:
    if not isinstance(item, Mapping):
        return None
    function = item.get("function")
    if isinstance(function, Mapping):  # OpenAI's {"function": {"name", "arguments"}}
        item = function
    name = next((item[k] for k in _NAME_KEYS if isinstance(item.get(k), str)), None)
    arguments = next((item[k] for k in _ARGUMENT_KEYS if k in item), None)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if len(arguments) < 1_000_000 else None
        except (ValueError, RecursionError):
            arguments = None
    if not name or not isinstance(arguments, dict):
        return None
    for prefix in _PREFIXES:
        name = name.removeprefix(prefix)
    server = str(item.get("server_name", item.get("server", "")) or "")
    if server and "__" not in name:
        name = f"mcp__{server}__{name}"
    return ToolCall(call_id, name[:200], arguments, server=server[:200])


class Expansion(NamedTuple):
    calls: list[ToolCall]
    owners: list[int]  # for each call, the index of the call it came from
    cut: set[int]  # original calls that carry more than MAX_CARRIED


def expanded(calls: Sequence[ToolCall]) -> Expansion | None:
    """The calls with each carrier replaced by what it carries; None when no call carries
    others."""
    out: list[ToolCall] = []
    owners: list[int] = []
    cut: set[int] = set()
    changed = False
    for index, call in enumerate(calls):
        inner, was_cut = carried_calls(call)
        if was_cut:
            cut.add(index)
        if inner or was_cut:
            changed = True
            if _CARRIER_NAME.search(call.name) is None:
                # `create_pipeline{steps: [{name, params}]}`: its steps look like calls, and
                # the tool still does what it does itself.
                inner = [call, *inner]
            out.extend(inner)
            owners.extend([index] * len(inner))
        else:
            out.append(call)
            owners.append(index)
    return Expansion(out, owners, cut) if changed else None
