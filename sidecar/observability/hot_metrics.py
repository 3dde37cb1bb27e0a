"""Counters and histograms for the per-call hot path, exported through prometheus_client.

prometheus_client's own metrics take a lock on every increment, and the Inspect path
makes about fourteen of them per call. These keep plain numbers that only the event
loop thread updates (every Inspect and RPC runs there), and a custom collector turns
them into ordinary metric families when Prometheus scrapes. A scrape running in the
exposition thread may see one series a call ahead of another; totals are never lost.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Sequence

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector


class CounterChild:
    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class HistogramChild:
    __slots__ = ("_bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self._bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last one is +Inf
        self.sum = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self._bounds, value)] += 1
        self.sum += value


class _Family:
    def __init__(self, name: str, documentation: str, labelnames: Sequence[str]) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = tuple(labelnames)


class HotCounter(_Family):
    def __init__(self, name: str, documentation: str, labelnames: Sequence[str]) -> None:
        super().__init__(name, documentation, labelnames)
        self._children: dict[tuple[str, ...], CounterChild] = {}

    def labels(self, **labels: str) -> CounterChild:
        key = tuple(str(labels[n]) for n in self.labelnames)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = CounterChild()
        return child

    def collect(self) -> Metric:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, child in list(self._children.items()):
            family.add_metric(list(key), child.value)
        return family


class HotHistogram(_Family):
    def __init__(
        self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float]
    ) -> None:
        super().__init__(name, documentation, labelnames)
        self._bounds = tuple(buckets)
        self._children: dict[tuple[str, ...], HistogramChild] = {}

    def labels(self, **labels: str) -> HistogramChild:
        key = tuple(str(labels[n]) for n in self.labelnames)
        child = self._children.get(key)
        if child is None:
            child = self._children[key] = HistogramChild(self._bounds)
        return child

    def collect(self) -> Metric:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for key, child in list(self._children.items()):
            counts = list(child.counts)
            cumulative: list[tuple[str, float]] = []
            running = 0
            for bound, count in zip([*self._bounds, float("inf")], counts, strict=True):
                running += count
                cumulative.append(("+Inf" if bound == float("inf") else repr(bound), running))
            family.add_metric(list(key), cumulative, child.sum)
        return family


class HotMetrics(Collector):
    """Registers the hot families on a registry as one collector."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._families: list[HotCounter | HotHistogram] = []
        registry.register(self)

    def counter(self, name: str, documentation: str, labelnames: Sequence[str]) -> HotCounter:
        family = HotCounter(name, documentation, labelnames)
        self._families.append(family)
        return family

    def histogram(
        self, name: str, documentation: str, labelnames: Sequence[str], buckets: Sequence[float]
    ) -> HotHistogram:
        family = HotHistogram(name, documentation, labelnames, buckets)
        self._families.append(family)
        return family

    def collect(self) -> Iterator[Metric]:
        for family in self._families:
            yield family.collect()
