"""The run's tables, laid out like the studies (IIP report sections 7-8, Saarto 2003).

Which layout a cell gets follows from its flows:
- an HTTP flow: IIP tables 9-30 (rows Time, Med_thro, Min_thro, Max_thro, Drops_c,
  Drops_e; columns variant x workload; one table per HTTP version and the other axes)
  and Saarto's summary (response time, main and in-line throughputs, drops, Σ maximum drops);
- bulk TCP and/or UDP flows: IIP tables 32-36 (per flow role elapsed-time statistics,
  throughput, retransmissions, drops; UDP throughput, drops and jitter range);
- anything else: a generic table of every metric.

Definitions (analysis/README.md "Run analysis"): Time is the median page response time;
Med/Min/Max_thro the median/min/max over replications of the main object connection's
throughput (bytes / response transfer time, B/s); Drops_c/Drops_e the median over
replications of the page's drops for HTTP/1.1 and the highest per-class median for
HTTP/1.0 (IIP report, table 11 note 2)."""

from __future__ import annotations

from dataclasses import dataclass

from analysis.aggregate import sum_of_maxima
from analysis.run import CellResult, RunAnalysis
from analysis.run_metrics import role_names

Cell = str | float | int | None


@dataclass
class Table:
    title: str
    header: list[str]
    rows: list[list[Cell]]
    note: str = ""


def fmt(value: Cell) -> str:
    """Seconds and drop counts with 3 decimals, throughputs (>= 100) with 1, like the
    studies' tables."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.1f}" if abs(value) >= 100 else f"{value:.3f}"
    return str(value)


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
            rows.append([name] + [http_drops(c, *_http_flow(c), kind) for c in group])
        rows.append(["n (failed)"] + [_n_failed(c, f"{_http_flow(c)[0]}.response_time_s")
                                      for c in group])
        tables.append(Table(f"HTTP pages: {_title_of(list(key))}", header, rows,
                            "Time: median page response time (s). Med/Min/Max_thro: median, "
                            "minimum and maximum over replications of the main object's "
                            "throughput (B/s). Drops_c/Drops_e: median congestion/error drops "
                            "(HTTP/1.0: highest median of the connection classes)."))
    return tables


def _n_failed(cell: CellResult, metric: str) -> str:
    s = cell.summaries.get(metric)
    failed = s.failed if s else len(cell.replications)
    return f"{s.n if s else 0} ({failed})"


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
        rows: list[list[Cell]] = [[name] + [c.median(f"{_http_flow(c)[0]}.{m}") for c in group]
                                  for name, m in spec]
        rows.append(["Σ maximum drops"] + [sigma_max_drops(c, _http_flow(c)[0]) for c in group])
        title = f"Summary of {variant or 'the'} results: {_title_of(labels)}"
        tables.append(Table(title, header, rows, "Medians over replications; Σ maximum "
                            "drops: per connection class the largest drops (c + e) over the "
                            "replications, summed over the classes."))
    return tables


# --- mixtures -----------------------------------------------------------------------------

def _roles(cell: CellResult) -> list[str]:
    n = max((int(r.values.get("tcp.transfers") or 0) for r in cell.replications
             if r.counts), default=0)
    present = {m.split(".")[1] for m in cell.summaries if m.count(".") == 2
               and m.startswith("tcp.")}
    ranked = [r for r in role_names(n) if r in present] if n else []
    return ranked + sorted(present - set(ranked))   # later-starting transfers by name


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
        for i, role in enumerate(_roles(c) or [""]):
            p = f"tcp.{role}"
            row: list[Cell] = [c.labels.get(a, "") if i == 0 else "" for a in axes]
            row += [role or "–"] + [c.stat(f"{p}.elapsed_s", st) for st in
                                    ("min", "p25", "median", "p75", "max", "mean")]
            row += [c.median(f"{p}.throughput_Bps"), c.median(f"{p}.retransmissions"),
                    c.median(f"{p}.congestion_drops"), c.median(f"{p}.error_drops")]
            if with_udp:
                lo, hi = (c.stat(f"{udp}.jitter_mean_ms", st) for st in ("min", "max")) if udp \
                    else (None, None)
                row += [c.median(f"{udp}.congestion_drops") if udp else None,
                        c.median(f"{udp}.error_drops") if udp else None,
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
        if r.counts:
            continue
        what = r.error if r.error else r.ref.reason
        state = r.ref.status if not r.error else f"{r.ref.status}, unanalysable"
        rows.append([r.ref.cell, r.ref.rep, state, what])
    if not rows:
        return None
    return Table("Replications not in the statistics", ["cell", "rep", "status", "reason"],
                 rows, "Counted as failed in every statistic (the `failed` column of cells.csv).")


def queue_table(cells: list[CellResult]) -> Table | None:
    metrics = ("queue.max_backlog_pkts", "queue.mean_backlog_pkts", "queue.drops",
               "queue.marks")
    rows: list[list[Cell]] = [[c.cell] + [c.median(m) for m in metrics] for c in cells
                              if any(m in c.summaries for m in metrics)]
    if not rows:
        return None
    return Table("Router queue (medians over replications)",
                 ["cell", "max backlog (pkts)", "mean backlog (pkts)", "drops", "ECN marks"],
                 rows)


def build_tables(analysis: RunAnalysis) -> list[Table]:
    http = [c for c in analysis.cells if c.flows_of("http")]
    mixed = [c for c in analysis.cells if c.flows_of("bulk") or c.flows_of("udp")]
    other = [c for c in analysis.cells if c not in http and c not in mixed]
    tables = [t for t in [failures_table(analysis)] if t]
    if http:
        tables += http_tables(http) + saarto_tables(http)
    if mixed:
        tables.append(mixture_table(mixed))
    tables += [generic_table(c) for c in other]
    tables += [t for t in [queue_table(analysis.cells)] if t]
    return tables


def overview(analysis: RunAnalysis) -> list[str]:
    reps = analysis.replications
    counting = sum(r.counts for r in reps)
    by_status: dict[str, int] = {}
    for r in reps:
        by_status[r.ref.status] = by_status.get(r.ref.status, 0) + 1
    unanalysable = sum(r.error is not None for r in reps)
    statuses = ", ".join(f"{n} {s}" for s, n in sorted(by_status.items()))
    lines = [f"Run `{analysis.layout.root.name}` (scenario {analysis.layout.name}): "
             f"{len(analysis.cells)} cells, {len(reps)} replications ({statuses}); "
             f"{counting} in the statistics, {unanalysable} unanalysable."]
    tcp = sum(int(r.values.get("run.tcp_connections") or 0) for r in reps if r.counts)
    incomplete = sum(int(r.values.get("run.tcp_incomplete") or 0) for r in reps if r.counts)
    if incomplete:
        lines.append(f"{incomplete} of {tcp} TCP connections are incomplete in their "
                     "sender's capture (handshake or the ACK of the sender's FIN not "
                     "captured): their elapsed and response times, and the throughputs "
                     "based on them, are undefined (–) and counted as failed.")
    return lines


def markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """The lines of a Markdown table; a `|` inside a cell is escaped."""
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in rows]
    return out


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
