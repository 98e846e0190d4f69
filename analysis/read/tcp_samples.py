"""The kernel's view of every TCP connection over time: squall-tcp-sampler's `<host>.tcpinfo.tsv`
(instruments/README.md), one line per connection every 50 ms with its tcp_info.

`read_tcp_samples(path)` parses a file (AnalysisInputError naming file and line otherwise);
`tcpinfo_rows(samples, t0_us, host, flow_of)` gives the tidy rows of summary/tcpinfo.csv:
`t_s` on the emulator's clock (seconds since its t = 0, like the other series), the host, the
connection's flow (or "" for none of the scenario's), its endpoints, and `cwnd` (segments),
`ssthresh` (segments; empty while it is the kernel's "infinite" initial value), `srtt_ms`,
`rttvar_ms`, `rto_ms`, `mss`, `unacked`, `retrans` (retransmitted segments in flight),
`lost`, `total_retrans`, `delivered`, `bytes_acked`, `bytes_received`, `state` (the kernel's
TCP state number, 1 = ESTABLISHED) and `ca_state` (0 Open, 1 Disorder, 2 CWR, 3 Recovery,
4 Loss).

Two things are settled once, where a file is read: an address is plain IPv4 also where a
dual-stack socket reports it IPv4-mapped (`::ffff:198.18.1.1`, e.g. iperf3's server), so the
connection is found under its flow; and a socket the kernel gives no tcp_info for (TIME_WAIT,
a request socket; the sampler leaves those fields empty, an older sampler wrote zeros) has
`None` for every tcp_info value — an empty CSV cell and a Parquet null, never 0."""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.errors import AnalysisInputError

FORMAT_LINE = "# squall-tcp-sampler format 1"
COLUMNS = ("time_us", "src", "sport", "dst", "dport", "state", "ca_state", "cwnd", "ssthresh", "srtt_us",
           "rttvar_us", "rto_us", "mss", "unacked", "retrans", "lost", "total_retrans", "delivered",
           "bytes_acked", "bytes_received")
TEXT = ("src", "dst")
INFO = COLUMNS[COLUMNS.index("ca_state"):]      # the tcp_info fields, absent for some sockets
INFINITE_SSTHRESH = 0x7FFFFFFF      # TCP_INFINITE_SSTHRESH: no loss yet
Endpoint = tuple[str, int]
FlowOf = Callable[[str, Endpoint, Endpoint], str | None]


@dataclass
class TcpSamples:
    path: Path
    t0_realtime_us: int
    interval_us: int
    rows: list[dict[str, Any]]      # COLUMNS, numbers as int
    complete: bool                  # the trailer line is there (the sampler was stopped, not killed)


def read_tcp_samples(path: Path) -> TcpSamples:
    try:
        lines = Path(path).read_text().splitlines()
    except (OSError, UnicodeDecodeError) as e:
        raise AnalysisInputError(f"{path}: cannot read the TCP samples: {e}") from e
    if not lines or lines[0] != FORMAT_LINE:
        raise AnalysisInputError(f"{path}:1: expected {FORMAT_LINE!r}")
    header: dict[str, int] = {}
    rows, complete = [], False
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("# end "):
            complete = True
        elif line.startswith("# "):
            key, _, value = line[2:].partition(" ")
            header[key] = _int(value, path, number, key)
        elif line.startswith("time_us\t"):
            if tuple(line.split("\t")) != COLUMNS:
                raise AnalysisInputError(f"{path}:{number}: expected the columns {' '.join(COLUMNS)}")
        else:
            rows.append(_row(line, path, number))
    for key in ("t0_realtime_us", "interval_us"):
        if key not in header:
            raise AnalysisInputError(f"{path}: no '# {key}' line")
    return TcpSamples(Path(path), header["t0_realtime_us"], header["interval_us"], rows, complete)


def _int(text: str, path: Path, number: int, column: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise AnalysisInputError(f"{path}:{number}: {column}: expected an integer, got {text!r}") from None


def _row(line: str, path: Path, number: int) -> dict[str, Any]:
    fields = line.split("\t")
    if len(fields) != len(COLUMNS):
        raise AnalysisInputError(f"{path}:{number}: {len(fields)} tab-separated columns; expected {len(COLUMNS)}")
    row = {c: _address(v) if c in TEXT else None if v == "" and c in INFO else _int(v, path, number, c)
           for c, v in zip(COLUMNS, fields)}
    if all(row[c] == 0 for c in INFO):     # no tcp_info, written as zeros by an older sampler
        row.update(dict.fromkeys(INFO))
    return row


def _address(text: str) -> str:
    """The address as the captures and the flows write it: IPv4-mapped IPv6 as plain IPv4."""
    try:
        mapped = ipaddress.ip_address(text)
    except ValueError:
        return text
    return str(mapped.ipv4_mapped) if isinstance(mapped, ipaddress.IPv6Address) and mapped.ipv4_mapped else text


def _ms(us: int | None) -> float | None:
    return None if us is None else us / 1e3


def tcpinfo_rows(samples: TcpSamples, t0_us: int, host: str, flow_of: FlowOf) -> list[dict[str, Any]]:
    rows = []
    for s in samples.rows:
        src, dst = (s["src"], s["sport"]), (s["dst"], s["dport"])
        rows.append({
            "t_s": (samples.t0_realtime_us + s["time_us"] - t0_us) / 1e6, "host": host,
            "flow": flow_of("tcp", src, dst) or "", "src": s["src"], "sport": s["sport"], "dst": s["dst"],
            "dport": s["dport"], "state": s["state"], "ca_state": s["ca_state"], "cwnd": s["cwnd"],
            "ssthresh": None if s["ssthresh"] is None or s["ssthresh"] >= INFINITE_SSTHRESH else s["ssthresh"],
            "srtt_ms": _ms(s["srtt_us"]), "rttvar_ms": _ms(s["rttvar_us"]), "rto_ms": _ms(s["rto_us"]),
            **{c: s[c] for c in ("mss", "unacked", "retrans", "lost", "total_retrans", "delivered",
                                 "bytes_acked", "bytes_received")},
        })
    return rows


TCPINFO_FIELDS = ("t_s", "host", "flow", "src", "sport", "dst", "dport", "state", "ca_state", "cwnd", "ssthresh",
                  "srtt_ms", "rttvar_ms", "rto_ms", "mss", "unacked", "retrans", "lost", "total_retrans",
                  "delivered", "bytes_acked", "bytes_received")
