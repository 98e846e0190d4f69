"""One replication of a run -> connection rows and run-level values.

Run-level values are flat `name -> number` (None: undefined in this replication, counted as
failed when aggregated). Names (README "Run analysis"):

- `<flow>.*` per named flow: HTTP `response_time_s` (client capture), `main.*`,
  `inline_fastest.*`, `inline_slowest.*`, `<class>.*`; bulk `elapsed_s`, `throughput_Bps`...;
  UDP `throughput_Bps`, `jitter_*_ms`, `lost`, drops; command (any program) its TCP
  connections as one transfer (`elapsed_s`, `throughput_Bps`, `connections`, drops; with
  several also `main.*`, the largest) and its UDP datagrams as `udp.*`; browser `page_load_s`,
  `dom_content_loaded_s`, ... from the browser's request log (analysis/metrics/browser.py).
- `tcp.<role>.*`: two or more bulk transfers that start together ranked by elapsed time
  (fastest, medium, slowest); a single transfer and one starting later only under its flow
  name (no column repeats another).
- `run.*`: totals; `queue.*`: router queue statistics, `queue.<class>.*` per DiffServ class.
- `host.<side>.*`: every TCP segment a host sent, by class, and `.kernel` the host's own
  counters (analysis.metrics.kernel_truth).

Besides the values, each replication gives its time series (analysis/metrics/series.py): the
throughput of each flow over time and every packet's link delay; and the round trips of a
flow's UDP requests and replies with the link's state (analysis/metrics/round_trips.py,
`<flow>.rtt.<state>.*`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from analysis.metrics import censoring
from analysis.aggregate.statistics import jain_index
from analysis.metrics.classes import http10_classes, rank_by_elapsed
from analysis.metrics.connections import TcpConnection
from analysis.errors import AnalysisInputError
from analysis.join.flows import FlowMatch, FlowSpec, match_flow, read_workloads
from analysis.gc_pause import gc_paused
from analysis.metrics.http import page_response_time
from analysis.metrics.kernel_truth import host_values, read_kernel_deltas
from analysis.metrics.router_backlog import router_backlog
from analysis.read.router_queue import QUEUE_NAME, queue_stats, read_queue_samples
from analysis.read.router_queue import class_of_parent
from analysis.metrics.per_connection import CAPTURES, LOG_NAME, ReplicationMetrics, analyse_replication
from analysis.results.stored import stored
from analysis.metrics.series import SERIES_INTERVAL_US, link_delays, throughput_rows
from analysis.read.tcp_samples import FlowOf, read_tcp_samples, tcpinfo_rows
from analysis.metrics.rows import Row, tcp_row, udp_row
from analysis.results.directory import TCPINFO_SUFFIX as TCPINFO_FILE_SUFFIX
from analysis.results.layout import ReplicationRef
from analysis.metrics.tcp import RTO_FLOOR_US, TcpMetrics
from analysis.metrics.udp import UdpMetrics, combined, sequence_disagreements, with_generator_count
from analysis.metrics.round_trips import round_trip_rows, round_trip_values
from analysis.metrics.probes import probe_rows, probe_values
from analysis.metrics.flent import flent_values
from analysis.metrics.browser import browser_values

Values = dict[str, float | None]
FATES = ("out", "drop_sbuf", "drop_router", "unseen", "drop_err", "drop_mtu", "drop_loss", "pending")
REQUIRED = (LOG_NAME, *CAPTURES.values())


@dataclass
class FlowInfo:
    name: str
    kind: str
    http_version: str | None = None
    workload: str | None = None
    start_us: int | None = None       # offset from the emulator's t = 0


@dataclass
class ReplicationResult:
    ref: ReplicationRef
    analysed: bool = False
    error: str | None = None          # why it could not be analysed (file and offset)
    rows: list[Row] = field(default_factory=list)
    values: Values = field(default_factory=dict)
    flows: list[FlowInfo] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    throughput: list[Row] = field(default_factory=list)            # series.throughput_rows
    delays: dict[str, np.ndarray] = field(default_factory=dict)    # series.link_delays
    tcpinfo: list[Row] = field(default_factory=list)                # tcp_samples.tcpinfo_rows
    round_trips: list[Row] = field(default_factory=list)            # round_trips.round_trip_rows
    probes: list[Row] = field(default_factory=list)                 # probes.probe_rows

    @property
    def counts(self) -> bool:
        """Enters the cell statistics (else counted as failed): ok, or timed out with something
        the network held up past the deadline (analysis/metrics/censoring.py)."""
        return censoring.counts(self.ref.status, self.analysed, self.values)


def role_names(n: int) -> list[str]:
    """Mixture roles by elapsed time, fastest first (IIP tables 32-36)."""
    if n == 1:
        return ["only"]
    if n == 2:
        return ["fastest", "slowest"]
    if n == 3:
        return ["fastest", "medium", "slowest"]
    return ["fastest"] + [f"rank{i}" for i in range(2, n)] + ["slowest"]


def _tcp_values(prefix: str, m: TcpMetrics, values: Values, timed_out: bool) -> None:
    values[f"{prefix}.elapsed_s"] = censoring.time_s(m.elapsed_us, m.complete, timed_out)
    values[f"{prefix}.response_s"] = censoring.time_s(m.response_us, m.complete, timed_out)
    values[f"{prefix}.throughput_Bps"] = censoring.throughput(m.throughput_bytes_per_s, m.complete, timed_out)
    values[f"{prefix}.response_throughput_Bps"] = censoring.throughput(
        m.response_throughput_bytes_per_s, m.complete, timed_out)
    values[f"{prefix}.bytes"] = m.bytes
    values[f"{prefix}.retransmissions"] = m.retransmissions
    values[f"{prefix}.unnecessary_retransmissions"] = m.unnecessary_retransmissions
    values[f"{prefix}.rto_events"] = m.rto_events
    values[f"{prefix}.spurious_rtos"] = m.spurious_rtos
    values[f"{prefix}.congestion_drops"] = m.congestion_drops
    values[f"{prefix}.error_drops"] = m.error_drops
    # the other endpoint's packets (the client's SYN and request, the receiver's ACKs)
    for attr in PEER_VALUES:
        values[f"{prefix}.peer_{attr}"] = None if m.peer is None else getattr(m.peer, attr)


# what is counted of the packets of a connection's other endpoint, or of a page's client
PEER_VALUES = ("retransmissions", "rto_events", "syn_retransmissions", "congestion_drops",
               "error_drops")


def _sum(ms: Sequence[TcpMetrics | None], attr: str) -> float | None:
    xs = [None if m is None else getattr(m, attr) for m in ms]
    return None if any(x is None for x in xs) else sum(x for x in xs if x is not None)


def _client_metrics(m: TcpMetrics) -> TcpMetrics | None:
    """The metrics of the HTTP client's own packets on a connection measured at its sender."""
    return m if m.sender == m.client else m.peer


@dataclass(frozen=True)
class ClientReport:
    """What squall-http's summary line says of its page; a page it did not finish has no time
    (the summary then says 0)."""
    finished: bool | None             # None: no summary
    response_time_us: int | None
    objects: int | None               # the page's objects, the main one included
    http: str | None
    retried_requests: int | None      # resent after the server closed a persistent connection

    @classmethod
    def of(cls, spec: FlowSpec | None) -> "ClientReport":
        if spec is None or spec.summary("ok") is None:
            return cls(None, None, None, None, None)
        finished = spec.summary("ok") is True
        objects = spec.summary("objects")
        return cls(finished, spec.summary("response_time_us") if finished else None,
                   len(objects) if isinstance(objects, list) else None, spec.summary("http"),
                   spec.summary("retried_requests"))


def _http_values(flow: str, ms: list[TcpMetrics], client_conns: list[TcpConnection],
                 values: Values, classes: dict[int, str], timed_out: bool, client: ClientReport) -> None:
    page = page_response_time(client_conns)
    # in a timeout the client decides whether the page was finished: the capture times the
    # connections that exist, not the in-line objects never requested
    finished = client.finished if client.finished is not None else page is not None
    values[f"{flow}.response_time_s"] = censoring.time_s(
        page.response_time_us if page is not None and (finished or not timed_out) else None, finished, timed_out)
    values[f"{flow}.client_response_time_s"] = censoring.time_s(client.response_time_us, finished, timed_out)
    values[f"{flow}.connections"] = len(ms)
    values[f"{flow}.client_retried_requests"] = client.retried_requests
    for attr in ("congestion_drops", "error_drops", "retransmissions", "bytes"):
        values[f"{flow}.{attr}"] = _sum(ms, attr)
    # the other way: the client's SYNs, requests and ACKs, from the client's capture
    clients = [_client_metrics(m) for m in ms]
    for attr in PEER_VALUES:
        values[f"{flow}.client_{attr}"] = _sum(clients, attr)
    ranked = http10_classes(ms)
    if ranked:
        _tcp_values(f"{flow}.main", ranked[0][1], values, timed_out)
    for cls, m in ranked:
        # an HTTP object's throughput is that of its response (DESIGN.md §3.5)
        classes[id(m)] = cls
        values[f"{flow}.{cls}.throughput_Bps"] = censoring.throughput(m.response_throughput_bytes_per_s,
                                                                      m.complete, timed_out)
        values[f"{flow}.{cls}.congestion_drops"] = m.congestion_drops
        values[f"{flow}.{cls}.error_drops"] = m.error_drops
    inline = [cls for cls, _ in ranked[1:]] + _never_requested(ranked, client, timed_out and not finished)
    for cls in inline[len(ranked) - 1:]:
        values[f"{flow}.{cls}.throughput_Bps"] = censoring.UNFINISHED_BYTES_PER_S
    if inline:
        values[f"{flow}.inline_fastest.throughput_Bps"] = values[f"{flow}.{inline[0]}.throughput_Bps"]
        values[f"{flow}.inline_slowest.throughput_Bps"] = values[f"{flow}.{inline[-1]}.throughput_Bps"]


def _never_requested(ranked: list[tuple[str, TcpMetrics]], client: ClientReport, unfinished: bool) -> list[str]:
    """The in-line classes of an unfinished HTTP/1.0 page's objects that had no connection yet
    (one per object): they rank last, with nothing delivered."""
    if not unfinished or client.http != "1.0" or client.objects is None or not ranked:
        return []
    return [f"inline{i}" for i in range(len(ranked), client.objects)]


def udp_prefix(match: FlowMatch) -> str:
    """Where a UDP flow's values go: a command flow's datagrams (iperf3 -u) under
    `<flow>.udp`, so that they never overwrite the values of its TCP connections."""
    return f"{match.name}.udp" if match.kind == "command" else match.name


def _udp_values(flow: str, u: UdpMetrics, values: Values) -> None:
    def ms(us: float | None) -> float | None:
        return None if us is None else us / 1000

    values[f"{flow}.throughput_Bps"] = u.throughput_bytes_per_s
    values[f"{flow}.bytes"] = u.bytes
    values[f"{flow}.duplicates"] = u.duplicates
    values[f"{flow}.reordered"] = u.reordered
    values[f"{flow}.jitter_mean_ms"] = ms(u.jitter_mean_us)
    values[f"{flow}.jitter_min_ms"] = ms(u.jitter_min_us)
    values[f"{flow}.jitter_max_ms"] = ms(u.jitter_max_us)
    values[f"{flow}.spacing_mean_ms"] = ms(u.spacing_mean_us)
    values[f"{flow}.sent"] = u.sent
    values[f"{flow}.received"] = u.received
    values[f"{flow}.lost"] = u.lost
    values[f"{flow}.loss_pct"] = 100 * u.lost / u.sent if u.lost is not None and u.sent else None
    values[f"{flow}.lost_congestion"] = u.lost_congestion
    values[f"{flow}.lost_error"] = u.lost_error
    values[f"{flow}.lost_unseen"] = u.lost_unseen
    values[f"{flow}.link_delay_variation_ms"] = ms(u.link_delay_variation_us)
    values[f"{flow}.owd_median_ms"] = ms(u.owd_median_us)
    fates = u.fates
    values[f"{flow}.congestion_drops"] = None if fates is None else sum(
        fates.get(f, 0) for f in ("drop_sbuf", "drop_router", "unseen"))
    values[f"{flow}.error_drops"] = None if fates is None else fates.get("drop_err", 0)


def _generator_sent(specs: list[FlowSpec] | None, flow: str) -> int | None:
    """The datagrams the flow's sender says it sent (squall-udp send's `packets`): a check
    of its capture's count."""
    spec = next((f for f in specs or [] if f.name == flow), None)
    return next((s["packets"] for s in (spec.summaries if spec else [])
                 if s.get("mode") == "send" and isinstance(s.get("packets"), int)), None)


def _totals(tcp: list[TcpMetrics], udp: list[UdpMetrics], values: Values) -> None:
    values["run.tcp_connections"] = len(tcp)
    values["run.tcp_incomplete"] = sum(not m.complete for m in tcp)
    values["run.udp_flows"] = len(udp)
    values["run.tcp_bytes"] = sum(m.bytes for m in tcp)
    values["run.retransmissions"] = sum(m.retransmissions for m in tcp)
    values["run.congestion_drops"] = _sum(tcp, "congestion_drops")
    values["run.error_drops"] = _sum(tcp, "error_drops")
    for fate in FATES:
        counts = [x.fates for x in [*tcp, *udp]]
        values[f"run.fate_{fate}"] = (None if any(c is None for c in counts)
                                      else sum(c.get(fate, 0) for c in counts if c))


def _queue_values(rep_dir: Path, classes: list[str], values: Values) -> None:
    """The tc router's queue (router-queue.tsv): over all leaf qdiscs, and per class when
    there are several."""
    path = rep_dir / QUEUE_NAME
    if not path.exists():
        return
    samples = read_queue_samples(path)
    parents = samples.leaf_parents()
    for prefix, leaf in [("queue", None)] + ([(f"queue.{class_of_parent(p, classes)}", h)
                                              for h, p in parents.items()]
                                             if len(parents) > 1 else []):
        stats = queue_stats(samples, leaf)
        if stats is None:
            continue
        values[f"{prefix}.max_backlog_pkts"] = stats.max_backlog_pkts
        values[f"{prefix}.mean_backlog_pkts"] = stats.mean_backlog_pkts
        values[f"{prefix}.max_backlog_bytes"] = stats.max_backlog_bytes
        values[f"{prefix}.drops"] = stats.drops
        values[f"{prefix}.marks"] = stats.marks


# The values' prefix of each direction's router: `[router]` (the downlink) keeps `queue`, the
# tc router's too; `[router.up]` (the uplink, the emulator's stage only) is `queue_up`.
QUEUE_PREFIX = {"down": "queue", "up": "queue_up"}


def _router_stage_values(r: ReplicationMetrics, values: Values) -> None:
    """The emulator's router stage per direction (its log trailer's `# router DIR CLASS` lines):
    packets that arrived, drops and ECN marks, in total and per class when there are several,
    and the most packets it held (router_backlog.py)."""
    if r.log is None:
        return
    per_direction: dict[str, dict[str, dict[str, int]]] = {}
    for line in (k for k in r.log.trailer if k.startswith("router ")):
        _, direction, name = line.split(" ", 2)
        per_direction.setdefault(direction, {})[name] = r.log.counts(line)
    for direction, per_class in per_direction.items():
        prefix = QUEUE_PREFIX[direction]
        for what in ("arrivals", "drops", "marks"):
            values[f"{prefix}.{what}"] = sum(c.get(what, 0) for c in per_class.values())
        values[f"{prefix}.max_backlog_pkts"] = router_backlog(r.log, direction).max_packets
        if len(per_class) > 1:
            for name, counts in per_class.items():
                for what in ("arrivals", "drops", "marks"):
                    values[f"{prefix}.{name}.{what}"] = counts.get(what, 0)


def _flow_infos(specs: list[FlowSpec] | None, seen: dict[str, FlowMatch]) -> list[FlowInfo]:
    infos = {s.name: FlowInfo(s.name, s.kind, s.http_version, s.workload, s.start_us)
             for s in specs or []}
    for match in seen.values():
        infos.setdefault(match.name, FlowInfo(match.name, match.kind))
    return list(infos.values())


def analyse_run_replication(ref: ReplicationRef, rto_floor_us: int = RTO_FLOOR_US,
                            interval_us: int = SERIES_INTERVAL_US,
                            router_classes: tuple[str, ...] = ()) -> ReplicationResult:
    """Never raises on bad input: an unreadable replication comes back with `error`.
    `router_classes`: the DiffServ classes in the scenario's order (names the tc router's
    per-class queues); `interval_us`: the throughput series' bin."""
    result = ReplicationResult(ref)
    if ref.status == "missing":
        return result
    try:
        for name in REQUIRED:
            if not stored(ref.directory, name).exists():
                raise AnalysisInputError(f"{ref.directory / name}: missing (plain or .gz)")
        # millions of small objects, none freed until the end: the cyclic collector
        # would only cost time (about a fifth of it)
        with gc_paused():
            _analyse(ref, result, rto_floor_us, interval_us, list(router_classes))
        result.analysed = True
    except AnalysisInputError as e:
        result.error = str(e)
        result.rows, result.values, result.throughput, result.delays, result.tcpinfo = [], {}, [], {}, []
        result.round_trips, result.probes = [], []
    return result


def _analyse(ref: ReplicationRef, result: ReplicationResult, rto_floor_us: int,
             interval_us: int, router_classes: list[str]) -> None:
    specs = read_workloads(ref.directory)
    r = analyse_replication(ref.directory, rto_floor_us)
    result.warnings = list(r.warnings)
    matches: dict[str, FlowMatch] = {}
    by_flow: dict[str, list[tuple[str, TcpMetrics]]] = {}
    for side, m in r.tcp:
        match = match_flow(specs, "tcp", m.client, m.server)
        matches[match.name] = match
        by_flow.setdefault(match.name, []).append((side, m))
    classes = _tcp_flow_values(r, specs, by_flow, matches, result.values, ref.status == "timeout")
    result.warnings += _page_time_disagreements(result.values, [n for n, m in matches.items() if m.kind == "http"])
    udp = []
    streams: dict[str, list[UdpMetrics]] = {}     # value prefix -> its streams (several: a command flow's)
    for side, u in r.udp:
        match = match_flow(specs, "udp", u.src, u.dst)
        matches[match.name] = match
        u = with_generator_count(u, _generator_sent(specs, match.name))
        result.warnings += sequence_disagreements(u) + [
            f"{match.name}: UDP {u.src} -> {u.dst}: {why}" for why in u.reasons]
        udp.append(u)
        streams.setdefault(udp_prefix(match), []).append(u)
        result.rows.append(_row(ref, match, match.kind, udp_row(side, u)))
    for prefix, found in streams.items():
        _udp_values(prefix, combined(found), result.values)
        result.values[f"{prefix}.streams"] = len(found)
    for name, items in by_flow.items():
        result.rows += [_row(ref, matches[name], classes.get(id(m), ""), tcp_row(side, m))
                        for side, m in items]
    _totals([m for _, m in r.tcp], udp, result.values)
    _queue_values(ref.directory, router_classes, result.values)
    _router_stage_values(r, result.values)
    try:
        deltas = read_kernel_deltas(ref.directory)
    except AnalysisInputError as e:
        deltas = None
        result.warnings.append(f"{e}; the kernel's counters are left out")
    result.values.update(host_values(r.hosts, deltas))
    result.flows = _flow_infos(specs, matches)
    if ref.status == "timeout" and not censoring.censored(result.values):
        result.warnings.append("timed out although every connection had finished: a program ran over, "
                               "not the network; left out of the statistics")
    _series(r, specs, matches, interval_us, result)


def _series(r: ReplicationMetrics, specs: list[FlowSpec] | None,
            matches: dict[str, FlowMatch], interval_us: int, result: ReplicationResult) -> None:
    """Throughput over time and link delays per flow (analysis/metrics/series.py)."""
    tcp_flow = {frozenset((m.client, m.server)): match_flow(specs, "tcp", m.client, m.server).name
                for _, m in r.tcp}
    udp_flow = {(u.src, u.dst): match_flow(specs, "udp", u.src, u.dst).name for _, u in r.udp}

    def flow_of(proto: str, src: tuple[str, int], dst: tuple[str, int]) -> str | None:
        if proto == "tcp":
            return tcp_flow.get(frozenset((src, dst)))
        return udp_flow.get((src, dst)) if proto == "udp" else None

    parts: dict[str, list] = {}
    for rx in r.received:
        name = flow_of(rx.proto, rx.src, rx.dst)
        if name is not None:
            parts.setdefault(name, []).append((rx.ts_us, rx.payload))
    t0 = r.log.start_realtime_us if r.log is not None else None
    if t0 is not None:
        kinds = {name: m.kind for name, m in matches.items()}
        result.throughput = throughput_rows(parts, kinds, t0, interval_us)
    if r.log is not None:
        result.delays = link_delays(r.log, flow_of, r.capture_times)
        _delay_values(result.delays, result.values)
        result.round_trips = round_trip_rows(r.log, r.capture_times, flow_of)
        result.values.update(round_trip_values(result.round_trips))
        result.probes = probe_rows(r.directory, specs, result.delays, result.round_trips, result.warnings)
        result.values.update(probe_values(result.probes))
    result.values.update(flent_values(r.directory, specs, result.warnings))
    result.values.update(browser_values(r.directory, specs, result.warnings))
    if t0 is not None:
        result.tcpinfo = _tcpinfo(r.directory, t0, flow_of, result.warnings)


def _tcpinfo(directory: Path, t0_us: int, flow_of: FlowOf, warnings: list[str]) -> list[Row]:
    """The kernel's tcp_info series of each host (analysis/read/tcp_samples.py), where sampled."""
    rows: list[Row] = []
    for host in ("fixed", "mobile"):
        path = directory / f"{host}.{TCPINFO_FILE_SUFFIX}"
        if not path.exists():
            continue
        try:
            samples = read_tcp_samples(path)
        except AnalysisInputError as e:     # the series is lost, the replication's metrics are not
            warnings.append(f"{e}; its TCP samples are left out")
            continue
        if not samples.complete:
            warnings.append(f"{path}: no trailer: the sampler did not end by squall's stop")
        rows += tcpinfo_rows(samples, t0_us, host, flow_of)
    return rows


def _delay_values(delays: dict[str, np.ndarray], values: Values) -> None:
    """`<flow>.link_delay_median_ms` and `_p95_ms`: over the flow's delivered data packets
    (with payload: TCP segments, not pure ACKs; UDP datagrams)."""
    data = (delays["payload_len"] > 0) & ~np.isnan(delays["delay_ms"])
    for flow in dict.fromkeys(delays["flow"][data].tolist()):
        xs = delays["delay_ms"][data & (delays["flow"] == flow)]
        values[f"{flow}.link_delay_median_ms"] = float(np.percentile(xs, 50))
        values[f"{flow}.link_delay_p95_ms"] = float(np.percentile(xs, 95))


def _tcp_flow_values(r: ReplicationMetrics, specs: list[FlowSpec] | None,
                     by_flow: dict[str, list[tuple[str, TcpMetrics]]],
                     matches: dict[str, FlowMatch], values: Values, timed_out: bool) -> dict[int, str]:
    """Values of the HTTP, bulk and command flows; returns each connection's class (by id).
    `timed_out`: the replication reached its timeout (what had not finished is censored)."""
    classes: dict[int, str] = {}
    bulk: list[tuple[str, TcpMetrics]] = []
    for name, items in by_flow.items():
        ms = [m for _, m in items]
        if matches[name].kind == "http":
            conns = [c for c in r.connections.get(_client_side(items), [])
                     if match_flow(specs, "tcp", c.client, c.server).name == name]
            spec = next((f for f in specs or [] if f.name == name), None)
            _http_values(name, ms, conns, values, classes, timed_out, ClientReport.of(spec))
            continue
        if matches[name].kind == "command":
            _command_values(name, items, values, classes, timed_out)
            continue
        if matches[name].kind == "bulk":
            bulk += [(name, m) for m in ms]
        if len(ms) == 1:
            _tcp_values(name, ms[0], values, timed_out)
    _bulk_roles(bulk, {f.name: f.start_us for f in specs or []}, values, classes, timed_out)
    return classes


# what a command flow with several connections sums over them
SUMMED = ("retransmissions", "unnecessary_retransmissions", "rto_events", "spurious_rtos",
          "congestion_drops", "error_drops")


# The capture's page time (first SYN -> ACK of the last FIN) and squall-http's own (connect ->
# close) are taken a few hundred microseconds apart on one host; more means one of them is wrong.
PAGE_TIME_AGREEMENT_S = 0.05


def _page_time_disagreements(values: Values, http_flows: list[str]) -> list[str]:
    out = []
    for name in http_flows:
        capture, client = values.get(f"{name}.response_time_s"), values.get(f"{name}.client_response_time_s")
        if capture is not None and client is not None and abs(capture - client) > PAGE_TIME_AGREEMENT_S:
            out.append(f"{name}: the page time from the client's capture, {capture:.3f} s, and squall-http's "
                       f"own, {client:.3f} s, differ by more than {PAGE_TIME_AGREEMENT_S * 1000:.0f} ms")
    return out


def _command_values(flow: str, items: list[tuple[str, TcpMetrics]], values: Values,
                    classes: dict[int, str], timed_out: bool) -> None:
    """A program's connections as one flow (README "Run analysis"): one connection's values
    are a bulk transfer's; several (iperf3's control and data connections, a client that
    opens one per object) span them all at the host that sent the most, as a page's
    response time spans its connections, and the largest one is also `<flow>.main.*`."""
    values[f"{flow}.connections"] = len(items)
    if len(items) == 1:
        _tcp_values(flow, items[0][1], values, timed_out)
        return
    side, main = max(items, key=lambda item: item[1].bytes)
    elapsed = _span_at(side, items)
    total = sum(m.bytes for _, m in items)
    finished = all(m.complete for _, m in items)
    values[f"{flow}.elapsed_s"] = censoring.time_s(elapsed, finished, timed_out)
    values[f"{flow}.bytes"] = total
    values[f"{flow}.throughput_Bps"] = censoring.throughput(total / (elapsed / 1e6) if elapsed else None,
                                                            finished, timed_out)
    ms = [m for _, m in items]
    for attr in SUMMED:
        values[f"{flow}.{attr}"] = _sum(ms, attr)
    for attr in PEER_VALUES:
        values[f"{flow}.peer_{attr}"] = _sum([m.peer for m in ms], attr)
    _tcp_values(f"{flow}.main", main, values, timed_out)
    classes[id(main)] = "main"


def _span_at(side: str, items: list[tuple[str, TcpMetrics]]) -> int | None:
    """First SYN -> the last ACK of the host's own FIN over the connections, all in the
    capture of `side` (taking each connection at its own sender would shift some ends by
    the link's delay); None when one of them is incomplete or missing there."""
    seen = [m if at == side else m.peer for at, m in items]
    starts = [v.first_syn_us for v in seen if v is not None and v.first_syn_us is not None]
    ends = [v.fin_acked_us for v in seen if v is not None and v.fin_acked_us is not None]
    if len(starts) < len(items) or len(ends) < len(items):
        return None
    return max(ends) - min(starts)


def _bulk_roles(bulk: list[tuple[str, TcpMetrics]], starts: dict[str, int | None],
                values: Values, classes: dict[int, str], timed_out: bool) -> None:
    """Two or more transfers that start together are ranked by elapsed time (fastest ..
    slowest, `tcp.<role>.*`) and their fairness is the Jain index of their throughputs; a
    transfer starting later keeps its flow name as its role (IIP table 33's "3rd flow") and
    its values are its flow's (`<flow>.*`), like those of a transfer alone."""
    if not bulk:
        return
    first = min((starts.get(name) or 0) for name, _ in bulk)
    together = [m for name, m in bulk if (starts.get(name) or 0) == first]
    later = [(name, m) for name, m in bulk if (starts.get(name) or 0) != first]
    if len(together) > 1:
        for (_, m), role in zip(rank_by_elapsed(together), role_names(len(together))):
            classes[id(m)] = role
            _tcp_values(f"tcp.{role}", m, values, timed_out)
    for name, m in later:
        classes[id(m)] = name
    values["tcp.transfers"] = len(together)
    if len(together) > 1:
        # over the roles' throughputs: a transfer unfinished at the deadline counts as 0
        tputs = [values[f"tcp.{role}.throughput_Bps"] for role in role_names(len(together))]
        values["tcp.jain_index"] = None if any(t is None for t in tputs) else jain_index(tputs)


def _client_side(items: list[tuple[str, TcpMetrics]]) -> str:
    """The side whose capture is the HTTP client's: a connection is measured at its
    sender, which is the server unless the client uploads."""
    side, m = items[0]
    return side if m.sender == m.client else ("mobile" if side == "fixed" else "fixed")


def _row(ref: ReplicationRef, match: FlowMatch, cls: str, row: Row) -> Row:
    return {"cell": ref.cell, "replication": ref.rep, "status": ref.status,
            "flow": match.name, "flow_kind": match.kind, "class": cls, **row}
