"""squall's analysed cells -> values under the reference tables' keys (validation.reference).

The cell's labels give the key: `link`, `tcp` (the variant), `workload` (or the page of the
HTTP flow), `http` (or the flow's version). The metrics follow the report tables of the
analysis package (analysis/report/contents.py), so a value here is the one `squall report` prints:

- IIP HTTP: Time = median page response time; Med_thro = median over the replications of
  the main object's response throughput, bytes / (first data segment -> ACK of the FIN at the
  server), section 6's HTTP elapsed time ("does not include the request, but only the
  response"; validation/PROTOCOL.md), so that Med/Min/Max_thro share one definition (the
  connection's throughput, SYN -> ACK of the FIN, is the sensitivity variant
  `protocol.CONNECTION_THROUGHPUT`); Min/Max_thro = the smallest/largest throughput of any
  connection in any replication — for HTTP/1.0 the in-line objects' connections included
  (the report's exception 1 of 7.2 restricts only the median to main objects; its e0 s+2s
  Min_thro of 845 B/s against a main-object median of 1809 B/s can only come from in-line
  connections), for HTTP/1.1 the one connection's (the main object's); Drops_c/Drops_e =
  median drops (HTTP/1.0: the highest median of the connection classes).
- Saarto: response_time, Med_th_m (the main object's response throughput, as Med_thro: the
  slides do not define it and the IIP report, whose section 6 does, used the same HTTP/1.0
  tool, seeds/003 line 163), Slowest_th_i, Fastest_th_i, Drops_c/Drops_e (page
  medians), Sum_max_drops; response_time_diff = a variant's median response time relative
  to that of the variant the slides' table is relative to (BL+TS, BL-TS at arq-high) on the
  same link and workload, in %.
- Mixtures: per flow role the elapsed-time statistics, Med_thro, Drops_c, Drops_e,
  Rext_pkts; roles fastest/medium/slowest are the analysis' ranking; with a flow started
  later (3tcp-0s-0s-5s) the analysis ranks only the two early flows (the tables'
  faster/slower); the late one's values are its flow's, `tcp3.*` (the tables' `third`). UDP: Drops_c,
  Drops_e, Med_thro, Jitter_min/Jitter_max = range over the replications of the mean jitter,
  |Δreceive − Δsend| over consecutive datagrams both received (`jitter_mean_ms`), the report's
  section 6 definition ("how much the spacing between two incoming packets has changed compared
  to the spacing they were sent"). The mean receive spacing (`spacing_mean_ms`), which the
  tables' values resemble (their error-free values are the send spacing itself), is the
  sensitivity variant `protocol.JITTER_SPACING` (validation/explanations/jitter/).

Cells that ran a workload fitted to the tables (`protocol.FITTED_WORKLOADS`: the mixtures' UDP
stream every 34.6 ms) give no main value: their values go to that variant
(`Measurements.variants`) and their reference rows are pending the protocol's run.

Why the connection throughput was chosen before (the variant): the report's text measures an
HTTP object's elapsed time over its response only, but its e0 numbers cannot be that. Table 9's s+2s
Baseline HTTP/1.0 page took 3.9 s and its main object 1809 B/s: 6288 B at 1809 B/s last
3.48 s, while the response can start no earlier than the request's arrival (0.9 s: a
handshake and a request over the 300 ms link) and end no later than the server's receipt of
the ACK of its FIN (4.2 s): 3.3 s at most. From the server's receipt of the SYN (0.3 s) the
connection has the 3.5 s needed. Over squall's e0 HTTP/1.0 cells of s+2s and m+8m the
connection throughput is within 3 % of the tables at the median (ln r +0.03), the response
throughput 19-32 % above them (+0.28, +0.17) (validation/README.md). The in-line objects'
connections are in the analysis' values only with their response throughput, so Min/Max_thro
and Saarto's in-line classes keep that.

Besides the joined metrics every cell gets `spurious_rtos` and `rto_events` (mean over the
replications of the whole run's count, from `conn.*` values, see `connection_totals`) and the
per-replication congestion drops (`Measurements.series`), which the conclusions use.
"""
from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field, replace
from typing import Callable, Iterable

from analysis.report.contents import http_drops, sigma_max_drops
from analysis.aggregate.run_analysis import CellResult

from .protocol import CONNECTION_THROUGHPUT, FITTED_WORKLOADS, JITTER_SPACING, Sensitivity
from .reference import Key

# scenarios/iip-mixture.toml: the flow that starts 5 s after the others in 3tcp-0s-0s-5s
LATE_FLOW = "tcp3"
ELAPSED_STATS = (("Elapsed_min", "min"), ("Elapsed_perc25", "p25"),
                 ("Elapsed_median", "median"), ("Elapsed_perc75", "p75"),
                 ("Elapsed_max", "max"), ("Elapsed_avg", "mean"))


@dataclass
class Measurements:
    values: dict[Key, float | None] = field(default_factory=dict)
    series: dict[Key, list[float | None]] = field(default_factory=dict)   # per replication
    replications: dict[Key, int] = field(default_factory=dict)            # counted, per cell key
    # sensitivity variant -> its values under the reference keys (validation/protocol.py)
    variants: dict[Sensitivity, dict[Key, float | None]] = field(default_factory=dict)


def _counted_values(cell: CellResult, metric: str) -> list[float | None]:
    return [r.values.get(metric) if r.counts else None
            for r in sorted(cell.replications, key=lambda r: r.ref.rep)]


def cell_key(study: str, cell: CellResult, metric: str) -> Key:
    labels = cell.labels
    http_flows = cell.flows_of("http")
    flow = http_flows[0] if http_flows else None
    workload = labels.get("workload") or labels.get("flows.web.workload") or (
        flow.workload if flow and flow.workload else "")
    http = labels.get("http") or labels.get("flows.web.http") or (
        flow.http_version if flow and flow.http_version else "")
    return Key(study, labels.get("link", ""), labels.get("tcp", ""), workload, http, metric)


def _http_metrics(study: str, cell: CellResult) -> dict[str, float | None]:
    flow = cell.flows_of("http")[0]
    name = flow.name
    version = cell_key(study, cell, "").http or "1.0"
    if study == "saarto":
        return {
            "response_time": cell.stat(f"{name}.response_time_s", "median"),
            "Med_th_m": cell.stat(f"{name}.main.response_throughput_Bps", "median"),
            "Slowest_th_i": cell.stat(f"{name}.inline_slowest.throughput_Bps", "median"),
            "Fastest_th_i": cell.stat(f"{name}.inline_fastest.throughput_Bps", "median"),
            "Drops_c": cell.stat(f"{name}.congestion_drops", "median"),
            "Drops_e": cell.stat(f"{name}.error_drops", "median"),
            "Sum_max_drops": sigma_max_drops(cell, name),
        }
    main = f"{name}.main.throughput_Bps"      # the response's: Min/Max_thro mix it with in-lines
    # HTTP/1.0: every connection; per replication its slowest and fastest in-line object
    slowest = (main, f"{name}.inline_slowest.throughput_Bps") if version == "1.0" else (main,)
    fastest = (main, f"{name}.inline_fastest.throughput_Bps") if version == "1.0" else (main,)
    return {
        "Time": cell.stat(f"{name}.response_time_s", "median"),
        "Med_thro": cell.stat(f"{name}.main.response_throughput_Bps", "median"),
        "Min_thro": _over_connections(cell, slowest, min),
        "Max_thro": _over_connections(cell, fastest, max),
        "Drops_c": http_drops(cell, name, version, "congestion_drops"),
        "Drops_e": http_drops(cell, name, version, "error_drops"),
    }


def connection_throughput(cell: CellResult, flow: str) -> float | None:
    """Median over the counted replications of the main object's bytes / its connection's elapsed
    time (first SYN -> ACK of the FIN, at the server): the tables' main-object throughput."""
    values = [r.values[f"{flow}.main.bytes"] / r.values[f"{flow}.main.elapsed_s"] for r in cell.replications
              if r.counts and r.values.get(f"{flow}.main.bytes") is not None and r.values.get(f"{flow}.main.elapsed_s")]
    return statistics.median(values) if values else None


def _over_connections(cell: CellResult, metrics: tuple[str, ...],
                      pick: Callable[[list[float]], float]) -> float | None:
    """`pick` (min or max) over the counted replications' values of `metrics`."""
    values = [v for r in cell.replications if r.counts for m in metrics
              if (v := r.values.get(m)) is not None]
    return pick(values) if values else None


def _tcp_role_metrics(cell: CellResult, table_role: str, p: str) -> dict[str, float | None]:
    """The tables' `<table_role>.*` from the analysis' `<p>.*` summaries (`tcp.<role>` for a
    ranked transfer, the flow's name for one starting later)."""
    out = {f"{table_role}.{name}": cell.stat(f"{p}.elapsed_s", stat)
           for name, stat in ELAPSED_STATS}
    for name, metric in (("Med_thro", "throughput_Bps"), ("Drops_c", "congestion_drops"),
                         ("Drops_e", "error_drops"), ("Rext_pkts", "retransmissions")):
        out[f"{table_role}.{name}"] = cell.median(f"{p}.{metric}")
    return out


def _mixture_metrics(cell: CellResult, workload: str) -> dict[str, float | None]:
    out: dict[str, float | None] = {}
    if workload.startswith("3tcp") and not workload.endswith("-0s-0s-0s"):
        # the tables' role -> the analysis' (two transfers start together, tcp3 later)
        roles = {"faster": "tcp.fastest", "slower": "tcp.slowest", "third": LATE_FLOW}
    else:
        roles = {role: f"tcp.{role}" for role in ("fastest", "medium", "slowest")}
    for table_role, role in roles.items():
        out.update(_tcp_role_metrics(cell, table_role, role))
    for flow in cell.flows_of("udp"):
        n = flow.name
        out["udp.Drops_c"] = cell.stat(f"{n}.congestion_drops", "median")
        out["udp.Drops_e"] = cell.stat(f"{n}.error_drops", "median")
        out["udp.Med_thro"] = cell.stat(f"{n}.throughput_Bps", "median")
        out["udp.Jitter_min"] = cell.stat(f"{n}.jitter_mean_ms", "min")
        out["udp.Jitter_max"] = cell.stat(f"{n}.jitter_mean_ms", "max")
    return out


def _variant_metrics(study: str, cell: CellResult) -> dict[Sensitivity, dict[str, float | None]]:
    """The values the sensitivity variants of definitions put under the reference's metrics."""
    out: dict[Sensitivity, dict[str, float | None]] = {}
    http = cell.flows_of("http")
    if http:
        out[CONNECTION_THROUGHPUT] = {"Med_thro" if study == "iip" else "Med_th_m":
                                      connection_throughput(cell, http[0].name)}
    for flow in cell.flows_of("udp"):
        out[JITTER_SPACING] = {"udp.Jitter_min": cell.stat(f"{flow.name}.spacing_mean_ms", "min"),
                               "udp.Jitter_max": cell.stat(f"{flow.name}.spacing_mean_ms", "max")}
    return out


def fitted_variant(cell: CellResult) -> Sensitivity | None:
    """The variant of a cell that ran a workload fitted to the tables, None for the protocol's."""
    return next((FITTED_WORKLOADS[f.workload] for f in cell.flows if f.workload in FITTED_WORKLOADS), None)


def _common_metrics(cell: CellResult) -> dict[str, float | None]:
    return {"spurious_rtos": cell.stat("conn.spurious_rtos", "mean"),
            "rto_events": cell.stat("conn.rto_events", "mean"),
            "rto_too_early": cell.stat("conn.rto_too_early", "mean")}


def measure_cell(study: str, cell: CellResult, into: Measurements) -> None:
    base = cell_key(study, cell, "")
    if cell.flows_of("http"):
        metrics = _http_metrics(study, cell)
        drops_metric = f"{cell.flows_of('http')[0].name}.congestion_drops"
    else:
        metrics = _mixture_metrics(cell, base.workload)
        drops_metric = "run.congestion_drops"
    metrics.update(_common_metrics(cell))
    fitted = fitted_variant(cell)
    target = into.values if fitted is None else into.variants.setdefault(fitted, {})
    for metric, value in metrics.items():
        target[replace(base, metric=metric)] = value
    for variant, values in _variant_metrics(study, cell).items():
        into.variants.setdefault(variant, {}).update({replace(base, metric=m): v for m, v in values.items()})
    if fitted is not None:
        return
    into.series[base] = _counted_values(cell, drops_metric)
    into.replications[base] = sum(r.counts for r in cell.replications)


# The variant each of Saarto's difference tables is relative to (scenarios/reference/
# saarto-arq-*-response-time-diff.csv, column relative_to): BL+TS, but BL-TS at high persistency.
SAARTO_DIFF_BASE = {"arq-high": "baseline-nots"}


def saarto_diff_base(link: str) -> str:
    return SAARTO_DIFF_BASE.get(link, "baseline")


def add_response_time_diffs(m: Measurements) -> None:
    """Saarto's `response_time_diff`: % of a variant's response time over that of the variant
    the slides' table of the link is relative to (`saarto_diff_base`)."""
    for key, value in list(m.values.items()):
        base_variant = saarto_diff_base(key.link)
        if key.study != "saarto" or key.metric != "response_time" or key.variant == base_variant:
            continue
        base = m.values.get(Key(key.study, key.link, base_variant, key.workload, key.http,
                                "response_time"))
        # a time beyond the timeout (inf) on either side makes no percentage (a finite one over
        # an infinite baseline is not 100 % faster)
        diff = None if value is None or not base or not math.isfinite(value) or not math.isfinite(base) \
            else (value / base - 1) * 100
        m.values[Key(key.study, key.link, key.variant, key.workload, key.http,
                     "response_time_diff")] = diff


def measure(runs: Iterable[tuple[str, Iterable[CellResult]]]) -> Measurements:
    """(study, cells) per run -> every cell's values; cells that never ran are left out."""
    m = Measurements()
    for study, cells in runs:
        for cell in cells:
            if any(r.counts for r in cell.replications):
                measure_cell(study, cell, m)
    add_response_time_diffs(m)
    return m


def connection_totals(rows: Iterable[dict]) -> dict[tuple[str, int], dict[str, float]]:
    """Connection rows (as in connections.csv) -> per (cell, replication) the sum of every
    TCP connection's `spurious_rtos` and `rto_events` (run-level values have them for single
    flows only)."""
    totals: dict[tuple[str, int], dict[str, float]] = {}
    for row in rows:
        if row.get("kind") != "tcp":
            continue
        t = totals.setdefault((row["cell"], int(row["replication"])),
                              {"conn.spurious_rtos": 0.0, "conn.rto_events": 0.0})
        for name in ("spurious_rtos", "rto_events"):
            if row.get(name) not in (None, ""):
                t[f"conn.{name}"] += float(row[name])
    return totals
