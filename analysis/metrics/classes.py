"""Connection classes of the IIP report (section 6).

HTTP/1.0: the main object has its own class; the in-line objects of each page are ranked
by throughput, highest first (class inline1 .. inlineN). Mixtures: TCP transfers of a run
ranked by elapsed time (fastest first)."""

from __future__ import annotations

import math

from analysis.metrics.tcp import TcpMetrics

MAIN = "main"


def _throughput(m: TcpMetrics) -> float:
    """The response's throughput (the transfer of the object); unknown ranks last."""
    value = m.response_throughput_bytes_per_s
    return -math.inf if value is None else value


def http10_classes(page: list[TcpMetrics]) -> list[tuple[str, TcpMetrics]]:
    """Classes of one page's connections (measured at the server). The main object is the
    connection whose SYN came first."""
    if not page:
        return []
    ordered = sorted(page, key=lambda m: (m.first_syn_us is None, m.first_syn_us or 0))
    main, inline = ordered[0], ordered[1:]
    ranked = sorted(inline, key=_throughput, reverse=True)
    return [(MAIN, main)] + [(f"inline{i}", m) for i, m in enumerate(ranked, start=1)]


def rank_by_elapsed(transfers: list[TcpMetrics]) -> list[tuple[int, TcpMetrics]]:
    """(rank, metrics) with rank 1 the fastest; incomplete transfers rank last."""
    ordered = sorted(transfers, key=lambda m: (m.elapsed_us is None, m.elapsed_us or 0))
    return list(enumerate(ordered, start=1))
