"""The reduced soak (bench/soak.py; `make soak` runs five minutes): mixed load on a real
`sidecar serve` process, from every kind of caller at once."""

from __future__ import annotations

from bench.soak import soak


async def test_a_short_mixed_soak_has_no_errors_and_allows_nothing_dangerous() -> None:
    result = await soak(seconds=5, warmup=3, concurrency=8)
    assert result.calls > 100
    assert not result.errors, result.errors
    assert result.allowed_dangerous == 0, result.allowed_examples
    assert result.exit_code == 0
    # Seconds say little about drift (`make soak` measures it); this catches a leak
    # that doubles memory within seconds.
    assert result.rss_end < 2 * result.rss_after_warmup
