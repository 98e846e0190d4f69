"""The run's report: what was run, then the results.

What was run (every report): the run (scenario, description, seed, squall revision,
kernel, hosts: analysis/report/describe.py), the parameters every cell shares and those that
differ, and per cell how many replications are in the statistics and how many failed,
timed out, are missing, unanalysable or degraded (with the reasons below; only ok ones are
in the statistics).

The results of the studies' own scenarios (STUDY_SCENARIOS, by the scenario's name) are laid
out like the studies (IIP report sections 7-8, Saarto 2003), by the cells' flows:
- an HTTP flow: IIP tables 9-30 (rows Time, Med_thro, Min_thro, Max_thro, Drops_c,
  Drops_e; columns variant x workload; one table per HTTP version and the other axes)
  and Saarto's summary (response time, main and in-line throughputs, drops, Σ maximum drops);
- bulk TCP and/or UDP flows: IIP tables 32-36 (per flow role elapsed-time statistics,
  throughput, retransmissions, drops; UDP throughput, drops and jitter range);
- anything else: a generic table of every metric.
Any other scenario gets plain tables, one per flow (the cells as rows, the axes as their
first columns; the bulk transfers in one table, the command flows' TCP connections in
another), in one unit system stated in every header: times in s, throughputs in
kbit/s, delays and jitter in ms, counts (packets) as integers, loss in %; each median with
its 95 % bootstrap interval. Then the router queue per DiffServ class.

Definitions (analysis/README.md "Run analysis"): Time is the median page response time;
Med/Min/Max_thro the median/min/max over replications of the main object connection's
throughput (bytes / response transfer time, B/s); Drops_c/Drops_e the median over
replications of the page's drops for HTTP/1.1 and the highest per-class median for
HTTP/1.0 (IIP report, table 11 note 2)."""

from __future__ import annotations

from analysis.aggregate.statistics import sum_of_maxima
from analysis.report.describe import parameter_tables, run_facts
from analysis.aggregate.run_analysis import CellResult, RunAnalysis
from analysis.aggregate.replication_values import QUEUE_PREFIX
from analysis.results.directory import EXPANDED_FILE, META_FILE, read_run_json
from analysis.report.bulk_roles import bulk_roles
from analysis.report.degraded_table import degraded_tables
from analysis.report.table import Cell, Count, Table, count, fmt, kbit, markdown_table
from analysis.report.kernel_table import kernel_table
from analysis.report.timing_table import timing_table
from analysis.report.printable import escaped
from analysis.report.round_trips import round_trip_table
from analysis.report.probes import probe_table
from analysis.report.flent import flent_table
from analysis.report.warnings_table import warnings_table

__all__ = ["Cell", "Count", "Table", "build_tables", "bulk_roles", "fmt", "kbit", "markdown_table",
           "render_markdown"]


# --- axes -------------------------------------------------------------------------------

def _is_variant(axis: str) -> bool:
    return axis in ("tcp", "variant") or axis.startswith("tcp.")


def _is_workload(axis: str) -> bool:
    return "workload" in axis


def _is_http(axis: str) -> bool:
    return axis.split(".")[-1] == "http"


def variant_of(cell: CellResult) -> str:
    return next((v for a, v in cell.labels.items() if _is_variant(a)), "")


def workload_of(cell: CellResult, flow: str | None = None) -> str:
    label = next((v for a, v in cell.labels.items() if _is_workload(a)), None)
    if label:
        return label
    flows = [f for f in cell.flows if flow is None or f.name == flow]
    return next((f.workload for f in flows if f.workload), flow or cell.cell)


def other_labels(cell: CellResult, http_version: str | None = None) -> list[tuple[str, str]]:
    rest = [(a, v) for a, v in cell.labels.items()
            if not (_is_variant(a) or _is_workload(a) or _is_http(a))]
    if http_version is not None:
        rest.append(("HTTP", http_version))
    return rest


# --- HTTP tables --------------------------------------------------------------------------

def _http_flow(cell: CellResult) -> tuple[str, str]:
    flow = cell.flows_of("http")[0]
    version = flow.http_version or next(
        (v for a, v in cell.labels.items() if _is_http(a)), "?")
    return flow.name, version


def _classes(cell: CellResult, flow: str) -> list[str]:
    prefix = f"{flow}."
    names = {m[len(prefix):].rsplit(".", 1)[0] for m in cell.summaries if m.startswith(prefix)}
    return sorted(n for n in names if n == "main" or (n.startswith("inline")
                                                     and n[6:].isdigit()))


def _class_medians(cell: CellResult, flow: str, kind: str) -> float | None:
    medians = [cell.median(f"{flow}.{c}.{kind}") for c in _classes(cell, flow)]
    present = [m for m in medians if m is not None]
    return max(present) if present else None


def http_drops(cell: CellResult, flow: str, version: str, kind: str) -> float | None:
    if version == "1.0":
        return _class_medians(cell, flow, kind)
    return cell.median(f"{flow}.{kind}")


def sigma_max_drops(cell: CellResult, flow: str) -> float | None:
    values: dict[str, list[float | None]] = {}
    counting = [r for r in cell.replications if r.counts]
    if not counting:
        return None
    for c in _classes(cell, flow):
        values[c] = [_add(r.values.get(f"{flow}.{c}.congestion_drops"),
                          r.values.get(f"{flow}.{c}.error_drops")) for r in counting]
    return sum_of_maxima(values)


def _same(value: Cell) -> Cell:
    return value


def _add(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a + b


def _group(cells: list[CellResult], key) -> dict[tuple, list[CellResult]]:
    groups: dict[tuple, list[CellResult]] = {}
    for c in cells:
        groups.setdefault(key(c), []).append(c)
    return groups


def _variant_major(cells: list[CellResult]) -> list[CellResult]:
    """Columns as in the IIP tables: each variant's workloads side by side (orders of
    first appearance)."""
    variants = list(dict.fromkeys(variant_of(c) for c in cells))
    workloads = list(dict.fromkeys(workload_of(c, _http_flow(c)[0]) for c in cells))
    return sorted(cells, key=lambda c: (variants.index(variant_of(c)),
                                        workloads.index(workload_of(c, _http_flow(c)[0]))))


def _title_of(labels: list[tuple[str, str]]) -> str:
    return ", ".join(f"{a} {v}" for a, v in labels) or "all cells"


def http_tables(cells: list[CellResult]) -> list[Table]:
    tables = []
    groups = _group(cells, lambda c: tuple(other_labels(c, _http_flow(c)[1])))
    for key, group in groups.items():
        group = _variant_major(group)
        header = ["Name"] + [" ".join(x for x in (variant_of(c), workload_of(c, _http_flow(c)[0]))
                                      if x) for c in group]
        rows: list[list[Cell]] = []
        spec = [("Time", "response_time_s", "median"), ("Med_thro", "main.throughput_Bps", "median"),
                ("Min_thro", "main.throughput_Bps", "min"), ("Max_thro", "main.throughput_Bps", "max")]
        for name, metric, stat in spec:
            rows.append([name] + [c.stat(f"{_http_flow(c)[0]}.{metric}", stat) for c in group])
        for name, kind in (("Drops_c", "congestion_drops"), ("Drops_e", "error_drops")):
            rows.append([name] + [count(http_drops(c, *_http_flow(c), kind)) for c in group])
        rows.append(["n (failed)"] + [_n_failed(c, f"{_http_flow(c)[0]}.response_time_s")
                                      for c in group])
        tables.append(Table(f"HTTP pages: {_title_of(list(key))}", header, rows,
                            "Time: median page response time (s). Med/Min/Max_thro: median, "
                            "minimum and maximum over replications of the main object's "
                            "throughput (B/s). Drops_c/Drops_e: median congestion/error drops "
                            "(HTTP/1.0: highest median of the connection classes)."))
    return tables


def _n_failed(cell: CellResult, metric: str) -> str:
    """`n (failed)`, and how many of the n are beyond the timeout (∞) where some are."""
    s = cell.summaries.get(metric)
    failed = s.failed if s else len(cell.replications)
    return f"{s.n if s else 0} ({failed}{f'; {s.censored} ∞' if s and s.censored else ''})"


def saarto_tables(cells: list[CellResult]) -> list[Table]:
    tables = []
    groups = _group(cells, lambda c: (variant_of(c), *other_labels(c, _http_flow(c)[1])))
    for key, group in groups.items():
        variant, labels = key[0], list(key[1:])
        header = ["WL"] + [workload_of(c, _http_flow(c)[0]) for c in group]
        spec = [("Response time (s)", "response_time_s"), ("Med th. (m) B/s", "main.throughput_Bps"),
                ("Slowest th. (i) B/s", "inline_slowest.throughput_Bps"),
                ("Fastest th. (i) B/s", "inline_fastest.throughput_Bps"),
                ("Drops (c) median", "congestion_drops"), ("Drops (e) median", "error_drops")]
        rows: list[list[Cell]] = [[name] + [(count if "drops" in m else _same)(
            c.median(f"{_http_flow(c)[0]}.{m}")) for c in group] for name, m in spec]
        rows.append(["Σ maximum drops"] + [count(sigma_max_drops(c, _http_flow(c)[0]))
                                           for c in group])
        title = f"Summary of {variant or 'the'} results: {_title_of(labels)}"
        tables.append(Table(title, header, rows, "Medians over replications; Σ maximum "
                            "drops: per connection class the largest drops (c + e) over the "
                            "replications, summed over the classes."))
    return tables


# --- mixtures -----------------------------------------------------------------------------

def mixture_table(cells: list[CellResult]) -> Table:
    axes = list(dict.fromkeys(a for c in cells for a in c.labels))
    with_udp = any(c.flows_of("udp") for c in cells)
    header = [*axes, "TCP flow", "Elapsed min (s)", "perc25", "median", "perc75", "max", "avg",
              "Through (B/s) median", "Rext pkts median", "conges drops median",
              "error drops median"]
    if with_udp:
        header += ["UDP conges drops median", "UDP error drops median",
                   "UDP through (B/s) median", "UDP jitter (ms) (min-max)"]
    rows: list[list[Cell]] = []
    for c in cells:
        udp = c.flows_of("udp")[0].name if c.flows_of("udp") else None
        for i, (role, p) in enumerate(bulk_roles(c) or [("", "")]):
            row: list[Cell] = [c.labels.get(a, "") if i == 0 else "" for a in axes]
            row += [role or "–"] + [c.stat(f"{p}.elapsed_s", st) for st in
                                    ("min", "p25", "median", "p75", "max", "mean")]
            row += [c.median(f"{p}.throughput_Bps"), count(c.median(f"{p}.retransmissions")),
                    count(c.median(f"{p}.congestion_drops")), count(c.median(f"{p}.error_drops"))]
            if with_udp:
                lo, hi = (c.stat(f"{udp}.jitter_mean_ms", st) for st in ("min", "max")) if udp \
                    else (None, None)
                row += [count(c.median(f"{udp}.congestion_drops")) if udp else None,
                        count(c.median(f"{udp}.error_drops")) if udp else None,
                        c.median(f"{udp}.throughput_Bps") if udp else None,
                        None if lo is None or hi is None else f"({lo:.2f}-{hi:.2f})"]
            rows.append(row)
    return Table("Traffic mixture: TCP transfers by elapsed time" +
                 (" and the UDP flow" if with_udp else ""), header, rows,
                 "TCP flows ranked by elapsed time in each replication (fastest first); "
                 "elapsed-time statistics over replications in seconds; throughput in B/s; "
                 "UDP jitter: range (min-max) over replications of the mean jitter.")


# --- generic ------------------------------------------------------------------------------

def generic_table(cell: CellResult) -> Table:
    rows: list[list[Cell]] = []
    for name, s in cell.summaries.items():
        rows.append([name, s.min, s.p25, s.median, s.p75, s.max, s.mean, s.n, s.failed])
    return Table(f"Cell {cell.cell}: every metric", ["metric", "min", "p25", "median", "p75",
                                                    "max", "mean", "n", "failed"], rows)


def failures_table(analysis: RunAnalysis) -> Table | None:
    rows: list[list[Cell]] = []
    for r in analysis.replications:
        if r.counts or (r.ref.status == "degraded" and r.error is None):   # their own tables
            continue
        what = r.error if r.error else r.ref.reason
        state = r.ref.status if not r.error else f"{r.ref.status}, unanalysable"
        rows.append([r.ref.cell, r.ref.rep, state, what])
    if not rows:
        return None
    return Table("Replications not in the statistics", ["cell", "rep", "status", "reason"],
                 rows, "Counted as failed in every statistic (the `failed` column of cells.csv); "
                 "degraded ones that were analysed are in their own tables.")


def replications_table(analysis: RunAnalysis) -> Table:
    """Per cell: its labels, n in the statistics and every other outcome."""
    axes = _axes(analysis.cells)
    rows: list[list[Cell]] = []
    for c in analysis.cells:
        by = [r.ref.status for r in c.replications]
        unanalysable = sum(r.error is not None for r in c.replications)
        rows.append([c.cell, *(c.labels.get(a, "") for a in axes), sum(r.counts for r in
                                                                     c.replications),
                     by.count("ok"), by.count("degraded"), by.count("failed"),
                     by.count("timeout"), by.count("missing"), unanalysable])
    return Table("Replications per cell", ["cell", *axes, "n (in the statistics)", "ok",
                                           "degraded", "failed", "timeout", "missing",
                                           "unanalysable"], rows,
                 "n: replications whose values enter the statistics (ok, and timed out with "
                 "something unfinished, counted as longer than the timeout; analysable); "
                 "degraded ones (beyond the timing or CPU-wait tolerance) are analysed but not "
                 "in the statistics, like failed ones. A value undefined in some of them "
                 "(e.g. an incomplete connection) has a smaller n of its own: see cells.csv.")


def queue_table(cells: list[CellResult]) -> Table | None:
    """Medians over replications of the router's queue, in total and per DiffServ class."""
    metrics = (("max_backlog_pkts", "max backlog (packets)"),
               ("mean_backlog_pkts", "mean backlog (packets)"),
               ("arrivals", "arrivals (packets)"), ("drops", "drops (packets)"),
               ("marks", "ECN marks (packets)"))
    rows: list[list[Cell]] = []
    used: set[str] = set()
    for c in cells:
        for name, prefix in _queue_rows(c):
            values = {m: c.median(f"{prefix}.{m}") for m, _ in metrics}
            if all(v is None for v in values.values()):
                continue
            used |= {m for m, v in values.items() if v is not None}
            rows.append([c.cell, name, *(values[m] if m == "mean_backlog_pkts"
                                         else count(values[m]) for m, _ in metrics)])
    if not rows:
        return None
    keep = [i for i, (m, _) in enumerate(metrics) if m in used]
    return Table("Router queue (medians over replications)",
                 ["cell", "class", *(metrics[i][1] for i in keep)],
                 [row[:2] + [row[2 + i] for i in keep] for row in rows],
                 "The tc router: its leaf qdiscs as router-queue.tsv samples them (backlog, "
                 "drops and marks over the run); the emulator's router stage: its per-class "
                 "counters (packets that arrived, drops, ECN marks) and the most packets it "
                 "held. Per class when the router has several DiffServ classes; the uplink's "
                 "router ([router.up]) in the rows `uplink: …`.")


def _queue_rows(c: CellResult) -> list[tuple[str, str]]:
    """(row label, value prefix) of each router direction (replication_values.QUEUE_PREFIX) in
    total and per class: `queue.<class>.<metric>`, `queue_up.<class>.<metric>`."""
    rows = []
    for direction, label in (("down", ""), ("up", "uplink: ")):
        prefix = QUEUE_PREFIX[direction]
        classes = sorted({m.split(".")[1] for m in c.summaries if m.startswith(f"{prefix}.") and m.count(".") == 2})
        rows += [(f"{label}all classes", prefix)] + [(f"{label}{k}", f"{prefix}.{k}") for k in classes]
    return rows


# --- plain tables (scenarios other than the studies') -------------------------------------

STUDY_SCENARIOS = ("iip-http", "saarto-http10", "iip-mixture")


def is_study(analysis: RunAnalysis) -> bool:
    """The studies' own scenarios get the studies' layouts (titles, jargon, B/s)."""
    return analysis.layout.name in STUDY_SCENARIOS


def _axes(cells: list[CellResult]) -> list[str]:
    return list(dict.fromkeys(a for c in cells for a in c.labels))


def _ci(cell: CellResult, metric: str, scale=_same) -> str | None:
    s = cell.summaries.get(metric)
    if s is None or s.median_ci_low is None or s.median_ci_high is None:
        return None
    return f"{fmt(scale(s.median_ci_low))}–{fmt(scale(s.median_ci_high))}"


def _n(cell: CellResult, metric: str) -> list[Cell]:
    s = cell.summaries.get(metric)
    return [s.n if s else 0, s.failed if s else len(cell.replications)]


def _transfer_row(cell: CellResult, axes: list[str], name: str, prefix: str,
                  middle: list[Cell]) -> list[Cell]:
    """A transfer's row: the cell, its axes, the transfer, the statistics of its elapsed time
    and its median throughput (metrics `prefix`.*), the table's own `middle` columns, n/failed."""
    return [cell.cell, *(cell.labels.get(a, "") for a in axes), name,
            *_stats(cell, f"{prefix}.elapsed_s"), kbit(cell.median(f"{prefix}.throughput_Bps")),
            *middle, *_n(cell, f"{prefix}.elapsed_s")]


def _transfer_header(axes: list[str], name: str, middle: list[str]) -> list[str]:
    """The header of _transfer_row's columns; `name` heads the transfer's column."""
    return ["cell", *axes, name, *_stat_header("elapsed time", "s"), "throughput median (kbit/s)",
            *middle, "n", "failed"]


def _stats(cell: CellResult, metric: str, scale=_same) -> list[Cell]:
    """median, its 95 % interval, p25, p75, min, max."""
    return [scale(cell.median(metric)), _ci(cell, metric, scale),
            *(scale(cell.stat(metric, st)) for st in ("p25", "p75", "min", "max"))]


def _stat_header(what: str, unit: str) -> list[str]:
    return [f"{what} median ({unit})", f"95 % CI of the median ({unit})", f"p25 ({unit})",
            f"p75 ({unit})", f"min ({unit})", f"max ({unit})"]


def _medians(cell: CellResult, prefix: str, names: tuple[str, ...]) -> list[Cell]:
    return [count(cell.median(f"{prefix}.{n}")) for n in names]


DROPS = ("retransmissions", "congestion_drops", "error_drops")


def _drop_header(whose: str = "") -> list[str]:
    """DROPS' columns; `whose`: the other way's (the HTTP client's packets, a receiver's ACKs)."""
    return [f"{whose}{n.replace('_', ' ')} median (packets)" for n in DROPS]


DROP_HEADER = _drop_header()


def plain_http_table(cells: list[CellResult], flow: str) -> Table:
    axes = _axes(cells)
    rows = [[c.cell, *(c.labels.get(a, "") for a in axes),
             *_stats(c, f"{flow}.response_time_s"),
             kbit(c.median(f"{flow}.main.response_throughput_Bps")),
             count(c.median(f"{flow}.connections")), *_medians(c, flow, DROPS),
             *_medians(c, flow, tuple(f"client_{n}" for n in DROPS)),
             c.median(f"{flow}.link_delay_median_ms"),
             *_n(c, f"{flow}.response_time_s")] for c in cells]
    return Table(f"HTTP flow {flow}: page response time",
                 ["cell", *axes, *_stat_header("page response time", "s"),
                  "main object throughput median (kbit/s)", "connections median",
                  *DROP_HEADER, *_drop_header("client's packets: "),
                  "link delay of data packets, median (ms)", "n", "failed"],
                 rows, "Page response time at the client (first SYN -> last server FIN, "
                 "client capture); main object throughput = its bytes / (first data segment "
                 "-> ACK of FIN); drops and retransmissions summed over the page's "
                 "connections, the server's packets (down) and the client's (up: SYNs, "
                 "requests, ACKs) apart; n/failed: replications with/without a value.")


def plain_bulk_table(cells: list[CellResult]) -> Table:
    axes = _axes(cells)
    rows: list[list[Cell]] = []
    for c in cells:
        for role, p in bulk_roles(c):
            rows.append(_transfer_row(c, axes, role, p, [
                *_medians(c, p, DROPS), *_medians(c, p, tuple(f"peer_{n}" for n in DROPS)),
                count(c.median(f"{p}.rto_events")),
                c.median(f"{role}.link_delay_median_ms") if not p.startswith("tcp.") else None,
                c.median("tcp.jain_index") if p.startswith("tcp.") else None]))
    return Table("Bulk TCP transfers: elapsed time and throughput",
                 _transfer_header(axes, "transfer", [
                     *DROP_HEADER, *_drop_header("receiver's ACKs: "), "RTO events median",
                     "link delay of data segments, median (ms)", "Jain index median"]), rows,
                 "Elapsed time at the sender (first SYN -> ACK of FIN); throughput = bytes / "
                 "elapsed time; drops and retransmissions of the sender's packets, and of the "
                 "receiver's (its SYN-ACK and ACKs, the other way) apart. Transfers that start "
                 "together are ranked by elapsed time in each replication (fastest … slowest; "
                 "their Jain fairness index beside them); a transfer alone or starting later is "
                 "named by its flow.")


def plain_command_table(cells: list[CellResult]) -> Table:
    """The TCP connections of each command flow (any program) as one transfer."""
    axes = _axes(cells)
    rows: list[list[Cell]] = []
    for c in cells:
        for flow in (f.name for f in c.flows_of("command") if has_tcp_values(c, f.name)):
            rows.append(_transfer_row(c, axes, flow, flow, [
                kbit(c.median(_largest(c, flow, "throughput_Bps"))),
                count(c.median(f"{flow}.connections")), *_medians(c, flow, DROPS),
                count(c.median(f"{flow}.rto_events")), c.median(f"{flow}.link_delay_median_ms")]))
    return Table("Command flows: elapsed time and throughput of their TCP connections",
                 _transfer_header(axes, "flow", [
                     "largest connection's throughput median (kbit/s)", "connections median",
                     *DROP_HEADER, "RTO events median", "link delay of data packets, median (ms)"]), rows,
                 "A flow of one connection is measured as a bulk transfer: at its sender, first "
                 "SYN -> ACK of FIN, throughput = bytes / elapsed time. A flow of several (e.g. "
                 "iperf3's control and data connections): from the first SYN to the last ACK "
                 "of a FIN, all in the capture of the host that sent the most data; throughput "
                 "= every connection's payload / that time; the largest connection (iperf3's "
                 "data connection) also on its own. Retransmissions and drops summed over the "
                 "connections.")


def has_tcp_values(cell: CellResult, flow: str) -> bool:
    """Whether a command flow has a row in the command table: it had TCP connections, or
    nothing of it was measured (the row then counts its failed replications); a flow of UDP
    datagrams only has its UDP table."""
    return f"{flow}.connections" in cell.summaries or not has_udp_values(cell, flow)


def has_udp_values(cell: CellResult, flow: str) -> bool:
    return f"{flow}.udp.throughput_Bps" in cell.summaries


def _largest(cell: CellResult, flow: str, metric: str) -> str:
    """The largest connection's metric: `<flow>.main.*`, or for a flow of one connection
    the flow's own."""
    main = f"{flow}.main.{metric}"
    return main if main in cell.summaries else f"{flow}.{metric}"


def plain_udp_table(cells: list[CellResult], flow: str, prefix: str | None = None) -> Table:
    """A UDP flow's, or (`prefix` `<flow>.udp`) a command flow's datagrams."""
    axes = _axes(cells)
    name, flow = flow, prefix or flow
    rows: list[list[Cell]] = []
    for c in cells:
        lo, hi = (c.stat(f"{flow}.jitter_mean_ms", st) for st in ("min", "max"))
        rows.append([c.cell, *(c.labels.get(a, "") for a in axes),
                     *_stats(c, f"{flow}.throughput_Bps", kbit),
                     c.median(f"{flow}.loss_pct"), _ci(c, f"{flow}.loss_pct"),
                     *_medians(c, flow, ("sent", "lost", "congestion_drops", "error_drops")),
                     c.median(f"{flow}.jitter_mean_ms"),
                     None if lo is None or hi is None else f"{fmt(lo)}–{fmt(hi)}",
                     c.median(f"{flow}.link_delay_median_ms"),
                     c.median(f"{flow}.link_delay_p95_ms"), *_n(c, f"{flow}.throughput_Bps")])
    what = f"UDP datagrams of command flow {name}" if prefix else f"UDP flow {name}"
    return Table(f"{what}: throughput, loss, jitter, delay",
                 ["cell", *axes, *_stat_header("throughput", "kbit/s"), "loss median (%)",
                  "95 % CI of the median (%)", "sent median (packets)",
                  "lost median (packets)", "congestion drops median (packets)",
                  "error drops median (packets)", "mean jitter median (ms)",
                  "mean jitter min–max (ms)", "link delay median (ms)",
                  "link delay 95th percentile, median (ms)", "n", "failed"], rows,
                 "At the receiver: throughput = payload bytes / (first -> last receive); "
                 "loss = lost / sent (sender's capture); jitter = |Δreceive − Δsend| of "
                 "consecutive datagrams; link delay = emulator in -> out of each delivered "
                 "datagram (its median and 95th percentile in each replication, then the "
                 "median over replications).")


def without_empty_columns(t: Table, keep: int = 1) -> Table:
    """The table without the columns (after the first `keep`) that no row has a value in
    (e.g. the median's interval with fewer than 3 replications, the Jain index of a
    transfer alone)."""
    used = [i for i in range(len(t.header))
            if i < keep or any(row[i] not in (None, "") for row in t.rows)]
    return Table(t.title, [t.header[i] for i in used], [[row[i] for i in used] for row in t.rows],
                 t.note)


def plain_tables(cells: list[CellResult]) -> list[Table]:
    tables: list[Table] = []
    for flow in dict.fromkeys(f.name for c in cells for f in c.flows_of("http")):
        tables.append(plain_http_table([c for c in cells if any(
            f.name == flow for f in c.flows_of("http"))], flow))
    bulk = [c for c in cells if c.flows_of("bulk")]
    if bulk:
        tables.append(plain_bulk_table(bulk))
    command = [c for c in cells if any(has_tcp_values(c, f.name) for f in c.flows_of("command"))]
    if command:
        tables.append(plain_command_table(command))
    for flow in dict.fromkeys(f.name for c in cells for f in c.flows_of("udp")):
        tables.append(plain_udp_table([c for c in cells if any(
            f.name == flow for f in c.flows_of("udp"))], flow))
    for flow in dict.fromkeys(f.name for c in cells for f in c.flows_of("command")
                              if has_udp_values(c, f.name)):
        tables.append(plain_udp_table([c for c in cells if any(
            f.name == flow for f in c.flows_of("command"))], flow, f"{flow}.udp"))
    return [without_empty_columns(t, keep=1 + len(_axes(cells))) for t in tables]


# --- the whole report ---------------------------------------------------------------------

def description_tables(analysis: RunAnalysis) -> list[Table]:
    root = analysis.layout.root
    scenario = read_run_json(root / EXPANDED_FILE)
    specs = {c.get("cell", c.get("cell_id", c.get("id"))): c
             for c in scenario.get("cells", []) if isinstance(c, dict)}
    chosen = {c.cell: specs.get(c.cell, {}) for c in analysis.cells}
    labels = {c.cell: c.labels for c in analysis.cells}
    return [run_facts(root, scenario, read_run_json(root / META_FILE)),
            *parameter_tables(chosen, labels), replications_table(analysis)]


def result_tables(analysis: RunAnalysis) -> list[Table]:
    """The results: the studies' layouts for their scenarios, plain tables otherwise."""
    if not is_study(analysis):
        known = [c for c in analysis.cells if any(f.kind in ("http", "bulk", "udp", "command")
                                                  for f in c.flows)]
        return plain_tables(known) + [generic_table(c) for c in analysis.cells
                                      if c not in known]
    http = [c for c in analysis.cells if c.flows_of("http")]
    mixed = [c for c in analysis.cells if c.flows_of("bulk") or c.flows_of("udp")]
    other = [c for c in analysis.cells if c not in http and c not in mixed]
    tables: list[Table] = []
    if http:
        tables += http_tables(http) + saarto_tables(http)
    if mixed:
        tables.append(mixture_table(mixed))
    return tables + [generic_table(c) for c in other]


def build_tables(analysis: RunAnalysis) -> list[Table]:
    tables = description_tables(analysis)
    tables += [t for t in [failures_table(analysis)] if t]
    tables += degraded_tables(analysis)
    tables += result_tables(analysis)
    tables += [t for t in [queue_table(analysis.cells), round_trip_table(analysis.cells),
                                probe_table(analysis.cells), flent_table(analysis.cells)] if t]
    tables += [t for t in [timing_table(analysis), kernel_table(analysis)] if t]
    tables += [t for t in [warnings_table(analysis)] if t]
    return tables


UNITS = ("Units: times in s, throughputs in kbit/s (payload, 1 kbit = 1000 bit), delays and "
         "jitter in ms, counts in packets (a median of counts may end in .5), loss in %. "
         "Statistics over the replications in the statistics; a median's 95 % interval is a "
         "percentile bootstrap (analysis/README.md), given from 3 replications on.")
STUDY_UNITS = ("Units as in the studies' tables: times in s, throughputs in B/s (payload), "
               "jitter in ms, counts in packets.")


def overview(analysis: RunAnalysis) -> list[str]:
    reps = analysis.replications
    counting = sum(r.counts for r in reps)
    by_status: dict[str, int] = {}
    for r in reps:
        by_status[r.ref.status] = by_status.get(r.ref.status, 0) + 1
    unanalysable = sum(r.error is not None for r in reps)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
    description = str(read_run_json(analysis.layout.root / EXPANDED_FILE).get("description") or "")
    lines = [escaped(description)] if description else []
    lines.append(f"Run `{analysis.layout.root.name}` (scenario {analysis.layout.name}): "
                 f"{len(analysis.cells)} cells, {len(reps)} replications ({statuses}); "
                 f"{counting} in the statistics, {unanalysable} unanalysable.")
    degraded = by_status.get("degraded", 0)
    if degraded:
        lines.append(f"{degraded} replication(s) degraded (beyond the scenario's timing or CPU-wait "
                     "tolerance): analysed but not in the statistics; why, what to do, and their values "
                     "under \"Degraded replications\".")
    censored = sum(r.ref.status == "timeout" for r in reps if r.counts)
    if censored:
        lines.append(f"{censored} replication(s) reached the scenario's timeout with connections still "
                     "open: results of the link, in the statistics, where what had not finished has a "
                     "time of ∞ (longer than the timeout) and a throughput of 0 (analysis/metrics/censoring.py).")
    finished = [r for r in reps if r.counts and r.ref.status != "timeout"]
    tcp = sum(int(r.values.get("run.tcp_connections") or 0) for r in finished)
    incomplete = sum(int(r.values.get("run.tcp_incomplete") or 0) for r in finished)
    if incomplete:
        lines.append(f"{incomplete} of {tcp} TCP connections are incomplete in their "
                     "sender's capture (handshake or the ACK of the sender's FIN not "
                     "captured): their elapsed and response times, and the throughputs "
                     "based on them, are undefined (–) and counted as failed.")
    lines.append(STUDY_UNITS if is_study(analysis) else UNITS)
    return lines


def render_markdown(analysis: RunAnalysis, tables: list[Table] | None = None) -> str:
    tables = build_tables(analysis) if tables is None else tables
    out = [f"# squall report: {analysis.layout.name}", ""]
    for line in overview(analysis):
        out += [line, ""]
    for t in tables:
        out += [f"## {t.title}", ""]
        out += markdown_table(t.header, [[fmt(v) for v in row] for row in t.rows])
        if t.note:
            out += ["", t.note]
        out.append("")
    return "\n".join(out)
