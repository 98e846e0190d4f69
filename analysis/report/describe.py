"""What a run was: the scenario (expanded.json) and the machine (meta.json), as report
tables.

- `run_facts`: scenario name and description, the run's title and note (`squall run --title
  --note`), seed, replications, timeout, the run's selection, squall version and revision, the
  host that made the run and those its replications ran on (status.json), kernel, machine, Python, tool versions, the versions of the programs the command flows
  ran, testbed backend and lanes or hosts, the scenario file's SHA-256.
- `cell_parameters`: every resolved parameter of a cell, flattened to dotted names with
  units written out (`link.down.bandwidth` = `384 kbit/s`, `link.down.delay` = `100 ms`,
  `link.channel.bad` = `exponential(1 s)`, `router.classes.EF.queue.limit` = `10`,
  `tcp.sysctls.net.ipv4.tcp_sack` = `1`, `flows.voice.tos` = `184`), without the settings
  expanded.json's `inapplicable` names (they change nothing in that cell). Keys ending in `_us`
  are times, `_bps` rates, `_bytes` and the link's and flows' sizes bytes; the suffix is
  dropped from the name. Settings that are not set (null) are left out.
- `parameter_tables`: the parameters every cell shares (one row each), and those that
  differ (one row per cell, one column per parameter)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from analysis.report.printable import escaped
from analysis.results.directory import read_run_json
from analysis.report.table import Table

SIZE_KEYS = frozenset({"mtu", "send_buffer", "recv_buffer", "overhead", "length", "size",
                       "request_size"})
NOT_PARAMETERS = frozenset({"cell", "cell_id", "id", "axes", "labels", "axis_si", "inapplicable"})


def time_text(us: int | float) -> str:
    if us % 1_000_000 == 0 or (abs(us) >= 1_000_000 and us % 1000 == 0):
        return f"{us / 1e6:g} s"
    if us % 1000 == 0:
        return f"{us / 1000:g} ms"
    return f"{us:g} µs"


def rate_text(bps: int | float) -> str:
    if bps and bps % 1_000_000 == 0:
        return f"{bps / 1e6:g} Mbit/s"
    return f"{bps / 1000:g} kbit/s"


def _distribution(d: dict[str, Any]) -> str:
    """A channel state's length distribution as the scenario files write it."""
    args = [time_text(v) for v in (d.get("a_us"), d.get("b_us")) if v is not None]
    bounds = [f"{k}={time_text(d[f'{k}_us'])}" for k in ("min", "max")
              if d.get(f"{k}_us") is not None]
    return f"{d['kind']}({', '.join(args + bounds)})"


def _schedule(steps: list[dict[str, Any]]) -> str:
    if len(steps) == 1:
        return rate_text(steps[0]["rate_bps"])
    return ", ".join(f"{time_text(s['at_us'])}: {rate_text(s['rate_bps'])}" for s in steps)


def _scalar(key: str, value: Any) -> tuple[str, str]:
    """(name without unit suffix, text with unit)."""
    if value is None:
        return key, "–"
    if isinstance(value, bool):
        return key, "yes" if value else "no"
    if isinstance(value, (int, float)):
        if key.endswith("_us"):
            return key[:-3], time_text(value)
        if key.endswith("_bps"):
            return key[:-4], rate_text(value)
        if key.endswith("_bytes"):
            return key[:-6], f"{value:g} B"
        if key in SIZE_KEYS:
            return key, f"{value:g} B"
        return key, f"{value:g}" if isinstance(value, float) else str(value)
    return key, str(value)


def _flatten(prefix: str, value: Any, out: dict[str, str]) -> None:
    if isinstance(value, dict):
        if "kind" in value and "a_us" in value:
            out[prefix] = _distribution(value)
            return
        for k, v in value.items():
            if (prefix == "" and k in NOT_PARAMETERS) or v is None:
                continue   # not a parameter, or not set
            if isinstance(v, (dict, list)):
                _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
            else:
                name, text = _scalar(str(k), v)
                out[f"{prefix}.{name}" if prefix else name] = text
        return
    if isinstance(value, list):
        if value and all(isinstance(v, dict) and "rate_bps" in v and "at_us" in v
                         for v in value):
            out[prefix.removesuffix("_bps")] = _schedule(value)
        elif all(isinstance(v, dict) and "name" in v for v in value) and value:
            for v in value:
                _flatten(f"{prefix}.{v['name']}", {k: x for k, x in v.items() if k != "name"},
                         out)
        elif all(isinstance(v, dict) for v in value) and value:
            for i, v in enumerate(value):
                _flatten(f"{prefix}[{i}]", v, out)
        else:
            out[prefix] = ", ".join(str(v) for v in value) if value else "–"
        return
    name, text = _scalar(prefix, value)
    out[name] = text


def cell_parameters(spec: dict[str, Any]) -> dict[str, str]:
    """The cell's expanded.json entry flattened (module docstring), without the settings the
    testbed found not to apply (`inapplicable`: `flows.web.parallel` of an HTTP/1.1 flow, the
    `link.channel` of a link without errors)."""
    out: dict[str, str] = {}
    _flatten("", spec, out)
    hidden = tuple(str(k) for k in spec.get("inapplicable") or ())
    return {k: v for k, v in out.items()
            if not any(k == h or k.startswith(h + ".") for h in hidden)}


def parameter_tables(specs: dict[str, dict[str, Any]],
                     labels: dict[str, dict[str, str]]) -> list[Table]:
    """Parameters shared by every cell, then those that differ (with the cells' labels)."""
    params = {cell: cell_parameters(spec) for cell, spec in specs.items() if spec}
    if not params:
        return []
    names = list(dict.fromkeys(n for p in params.values() for n in p))
    same = [n for n in names if len({p.get(n, "–") for p in params.values()}) == 1]
    differ = [n for n in names if n not in same]
    first = next(iter(params.values()))
    tables = [Table("Parameters of every cell", ["parameter", "value"],
                    [[n, first.get(n, "–")] for n in same],
                    "Every resolved setting of the scenario (expanded.json) that is the same "
                    "in every cell; times, rates and sizes with their units.")]
    axes = list(dict.fromkeys(a for c in params for a in labels.get(c, {})))
    # an axis that sets one key by name (e.g. `flows.web.http`) is already its own column
    differ = [n for n in differ if not (n in axes and all(
        str(labels.get(c, {}).get(n)) == str(p.get(n)) for c, p in params.items()))]
    if differ or axes:
        tables.append(Table("Parameters that differ between cells",
                            ["cell", *axes, *differ],
                            [[c, *(labels.get(c, {}).get(a, "") for a in axes),
                              *(p.get(n, "–") for n in differ)] for c, p in params.items()],
                            "One row per cell: its axis labels and every setting that is not "
                            "the same in all cells."))
    return tables


def _tools(meta: dict[str, Any]) -> str:
    tools = meta.get("tools")
    if not isinstance(tools, dict):
        return "–"
    return "; ".join(f"{v}" for v in tools.values()) or "–"


def _replication_hosts(root: Path) -> str:
    """The hosts each replication's status.json names (details.provenance.host: on a cluster
    every node can differ from the machine that created the run), with how many each ran."""
    hosts: dict[str, int] = {}
    for path in sorted(root.glob("cells/*/rep-*/status.json")):
        provenance = (read_run_json(path).get("details") or {}).get("provenance") or {}
        host = provenance.get("host") if isinstance(provenance, dict) else None
        if host:
            hosts[str(host)] = hosts.get(str(host), 0) + 1
    return ", ".join(f"{h} ({n})" for h, n in sorted(hosts.items())) or "–"


def _programs(meta: dict[str, Any]) -> str:
    programs = meta.get("flow_programs")
    if not isinstance(programs, dict) or not programs:
        return "–"
    return "; ".join(f"{name}: {version}" for name, version in programs.items())


def _testbed(meta: dict[str, Any]) -> str:
    tb = meta.get("testbed")
    if not isinstance(tb, dict):
        return "–"
    parts = [str(tb.get("backend", "?"))]
    if tb.get("lanes"):
        parts.append("lanes " + ", ".join(str(x) for x in tb["lanes"]))
    hosts = tb.get("hosts")
    if isinstance(hosts, dict):
        parts.append("hosts " + ", ".join(f"{role} {_host(h)}" for role, h in hosts.items()))
    elif isinstance(hosts, list):
        parts.append("hosts " + ", ".join(_host(h) for h in hosts))
    return "; ".join(parts)


def _host(h: Any) -> str:
    if isinstance(h, dict):
        return str(h.get("address") or h.get("host") or h.get("ssh") or json.dumps(h))
    return str(h)


def _replications(run: dict[str, Any], scenario: dict[str, Any]) -> str:
    """How many replications per cell the run selected, and which when it started past the first."""
    last = run.get("replications") or scenario.get("replications")
    if not isinstance(last, int):
        return "–"
    first = run.get("first_replication") or 1
    return str(last) if first == 1 else f"{last - first + 1} (replications {first}..{last})"


def run_facts(root: Path, scenario: dict[str, Any], meta: dict[str, Any]) -> Table:
    """The run as a two-column table (module docstring)."""
    run = meta.get("testbed", {}).get("run", {}) if isinstance(meta.get("testbed"), dict) else {}
    timeout = scenario.get("timeout_us")
    rows: list[list[Any]] = [
        ["scenario", scenario.get("name", "–")],
        ["description", escaped(str(scenario.get("description") or "–"))],
        *([k, escaped(str(meta[k]))] for k in ("title", "note") if meta.get(k)),
        ["run directory", root.name],
        ["seed", scenario.get("seed", "–")],
        ["replications per cell", _replications(run, scenario)],
        ["cells run", run.get("cells") or "all"],
        ["timeout per replication", time_text(timeout) if isinstance(timeout, int) else "–"],
        ["squall version", meta.get("squall_version", "–")],
        ["squall revision", meta.get("squall_revision", "–")],
        ["host", meta.get("host", "–")],
        ["replications ran on", _replication_hosts(root)],
        ["kernel", meta.get("kernel", "–")],
        ["machine", meta.get("machine", "–")],
        ["Python", meta.get("python", "–")],
        ["testbed", _testbed(meta)],
        ["tools", _tools(meta)],
        ["programs the command flows ran", _programs(meta)],
        ["scenario file SHA-256", meta.get("scenario_sha256", "–")],
    ]
    rows = [[k, "–" if v is None else str(v)] for k, v in rows]
    sysctls = meta.get("host_sysctls")
    if isinstance(sysctls, dict) and sysctls:
        rows.append(["machine's TCP sysctls (before the lanes' own)",
                     ", ".join(f"{k.removeprefix('net.ipv4.')} {v}" for k, v in sysctls.items())])
    return Table("The run", ["item", "value"], rows,
                 "From the run's expanded.json (the scenario fully resolved) and meta.json "
                 "(the machine it ran on).")
