"""Repetition: identical consecutive calls beyond the limit are denied, inside the real pipeline."""

from __future__ import annotations

import json

import grpc

from sidecar.v1 import sidecar_pb2 as pb
from sidecar.v1 import sidecar_pb2_grpc as pb_grpc
from tests.conftest import StartSidecar, write_policy


def call(call_id: str, command: str, spacing: str = "") -> pb.ToolCall:
    arguments = json.dumps({"command": command, "cwd": "/w"}, indent=spacing or None)
    return pb.ToolCall(id=call_id, name="shell", arguments_json=arguments)


async def test_identical_calls_beyond_the_limit_are_denied(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar(mode="auto")
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        verdicts = []
        for n in range(7):
            # Key order and whitespace differ, the canonical arguments do not.
            response = await stub.Inspect(
                pb.InspectRequest(
                    session_id="r", tool_calls=[call(str(n), "ls", spacing="  " if n % 2 else "")]
                )
            )
            verdicts.append(response.verdicts[0].verdict)
        other_session = await stub.Inspect(
            pb.InspectRequest(session_id="other", tool_calls=[call("x", "ls")])
        )
    assert verdicts == [pb.VERDICT_ALLOW] * 5 + [pb.VERDICT_DENY] * 2
    assert other_session.verdicts[0].verdict == pb.VERDICT_ALLOW


async def test_a_different_call_resets_the_count(start_sidecar: StartSidecar) -> None:
    sidecar = await start_sidecar(mode="auto")
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        stub = pb_grpc.PolicyServiceStub(channel)
        sequence = ["ls"] * 5 + ["pwd"] + ["ls"] * 5
        results = []
        for n, command in enumerate(sequence):
            response = await stub.Inspect(
                pb.InspectRequest(session_id="r", tool_calls=[call(str(n), command)])
            )
            results.append(response.verdicts[0].verdict)
    assert results == [pb.VERDICT_ALLOW] * len(sequence)


async def test_repeats_within_one_batch_count_and_the_limit_is_configurable(
    start_sidecar: StartSidecar, operator_policies
) -> None:
    write_policy(operator_policies, "rep.yaml", "repetition: {max_consecutive: 2}\n")
    sidecar = await start_sidecar(mode="auto")
    async with grpc.aio.insecure_channel(sidecar.addresses[0]) as channel:
        response = await pb_grpc.PolicyServiceStub(channel).Inspect(
            pb.InspectRequest(session_id="b", tool_calls=[call(str(n), "make") for n in range(4)])
        )
    assert [v.verdict for v in response.verdicts] == [
        pb.VERDICT_ALLOW,
        pb.VERDICT_ALLOW,
        pb.VERDICT_DENY,
        pb.VERDICT_DENY,
    ]
    assert response.verdicts[2].findings[-1].rule_id == "repetition.limit"


def test_the_tracker_compares_canonical_arguments_not_python_equality() -> None:
    from sidecar.inspection.model import ToolCall
    from sidecar.inspection.repetition import RepetitionTracker

    tracker = RepetitionTracker()
    assert tracker.observe("s", ToolCall("1", "t", {"a": 1, "b": [1, 2]})) == 1
    assert tracker.observe("s", ToolCall("2", "t", {"b": [1, 2], "a": 1})) == 2  # key order
    # Python calls 1, 1.0 and True equal; as JSON they are different arguments.
    assert tracker.observe("s", ToolCall("3", "t", {"b": [1, 2], "a": True})) == 1
    assert tracker.observe("s", ToolCall("4", "t", {"b": [1, 2], "a": 1.0})) == 1
    assert tracker.observe("s", ToolCall("5", "u", {"b": [1, 2], "a": 1.0})) == 1  # name


def test_the_tracker_keeps_at_most_its_bound_and_forgets_the_least_recent() -> None:
    from sidecar.inspection.model import ToolCall
    from sidecar.inspection.repetition import RepetitionTracker

    tracker = RepetitionTracker(max_sessions=2)
    same = ToolCall("1", "shell", {"command": "ls"})
    assert tracker.observe("a", same) == 1
    assert tracker.observe("b", same) == 1
    assert tracker.observe("a", same) == 2  # a is now the most recent
    assert tracker.observe("c", same) == 1  # evicts b, the least recent
    assert len(tracker._streaks) == 2
    assert tracker.observe("a", same) == 3  # a was kept
    assert tracker.observe("b", same) == 1  # b was forgotten (and now evicts c)
    assert tracker.observe("a", same) == 4


async def test_the_finding_names_the_inspector_and_rule() -> None:
    from sidecar.inspection.model import InspectionContext, ToolCall
    from sidecar.inspection.repetition import RepetitionInspector, RepetitionTracker
    from sidecar.inspection.verdict import Mode, Risk, Verdict

    inspector = RepetitionInspector(1, RepetitionTracker())
    context = InspectionContext("s", "d", Mode.AUTO)
    call = ToolCall("1", "shell", {"command": "ls"})
    assert inspector.name == "repetition"
    assert inspector.inspect_now([call], context) == [[]]
    ((finding,),) = inspector.inspect_now([call], context)
    assert finding.inspector == "repetition" and finding.rule_id == "repetition.limit"
    assert finding.verdict is Verdict.DENY and finding.risk is Risk.MEDIUM
    assert finding.message == (
        "shell was called 2 times in a row with the same arguments (limit 1); "
        "try something different"
    )
