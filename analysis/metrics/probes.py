"""A probe flow's probes (irtt, testbed/scenario/flows/probe.py): irtt's own round-trip and
one-way delays of each probe beside the emulator log's fate and link delay of the same
datagrams (analysis README, "Probes").

irtt's JSON (the client's stdout, <flow>.client.stdout) lists every probe by sequence number:
`lost` (false | true | true_up | true_down), its delays (ns; the RTT leaves out the server's
turnaround, given by the server's timestamps) and timestamps. The log holds the flow's
datagrams (series.link_delays: one row per datagram the link took in, with its fate and link
delay, and its end-to-end delay between the two captures). The requests are the datagrams of the
direction that sent first (the client's), the probes among them those of irtt's packet length
(the others are its handshake); the k-th probe request the link took in is irtt's probe k (irtt
sends them in order). A reply is matched to the request it answers by round_trips.py's rule (the
latest request delivered before it, within the server's turnaround), so a reply is never
assigned by counting. Where the log's probes and irtt's disagree in number the join is not made
(a warning says so) rather than shifted.

Values per flow: `<flow>.rtt_min_ms|median_ms|p95_ms|max_ms` (irtt's RTTs of answered probes),
`<flow>.rtt_link_median_ms` (the link's share: request and reply `in` -> `out`),
`<flow>.owd_up_median_ms|owd_down_median_ms` (irtt's one-way delays by the link's direction),
`<flow>.probes`, `<flow>.probes_lost_up|probes_lost_down` (from the log's fates)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from analysis.join.flows import FlowSpec
from analysis.results.stored import open_text, stored

IRTT_HEADER_BYTES = 60          # irtt's packet with both timestamps and its received stats
PROBE_COLUMNS = ("flow", "seqno", "t_s", "request_state", "irtt_lost", "irtt_rtt_ms", "irtt_send_delay_ms",
                 "irtt_receive_delay_ms", "irtt_server_ms", "request_dir", "request_fate", "reply_fate", "request_link_ms",
                 "reply_link_ms", "request_e2e_ms", "reply_e2e_ms", "capture_rtt_ms")
_NS_PER_MS = 1e6
Row = dict[str, Any]


def output_file(flow: str) -> str:
    """The probe client's stdout in the replication directory (the runner's <program>.stdout)."""
    return f"{flow}.client.stdout"


def irtt_summary(found: Mapping[str, Any]) -> dict[str, Any]:
    """workloads.json's summary of irtt's JSON: counts and median delays (the whole record
    stays in <flow>.client.stdout)."""
    stats, config = found.get("stats") or {}, found.get("config") or {}

    def median_ms(key: str) -> float | None:
        value = (stats.get(key) or {}).get("median")
        return None if value is None else value / _NS_PER_MS
    return {"tool": "irtt", "ok": True, "local": config.get("local_address"),
            "remote": config.get("remote_address"), "length": (config.get("params") or {}).get("length"),
            "packets_sent": stats.get("packets_sent"), "packets_received": stats.get("packets_received"),
            "server_packets_received": stats.get("server_packets_received"),
            "rtt_median_ms": median_ms("rtt"), "send_delay_median_ms": median_ms("send_delay"),
            "receive_delay_median_ms": median_ms("receive_delay")}


def read_irtt(path: Path) -> dict[str, Any] | None:
    """irtt's JSON, or None where the file is absent or not irtt's JSON."""
    try:
        with open_text(stored(path.parent, path.name)) as f:
            found = json.load(f)
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) and "round_trips" in found else None


def probe_rows(directory: Path, specs: list[FlowSpec] | None, delays: Mapping[str, np.ndarray],
               round_trips: list[Row], warnings: list[str]) -> list[Row]:
    """One row per probe (PROBE_COLUMNS) of every probe flow of the replication."""
    rows: list[Row] = []
    for spec in specs or []:
        if spec.kind != "probe":
            continue
        irtt = read_irtt(directory / output_file(spec.name))
        if irtt is None:
            warnings.append(f"{directory / output_file(spec.name)}: no irtt JSON; flow {spec.name}'s probes "
                            "are left out")
            continue
        rows += _flow_rows(spec.name, irtt, delays, round_trips, warnings)
    return rows


def _flow_rows(flow: str, irtt: Mapping[str, Any], delays: Mapping[str, np.ndarray],
               round_trips: list[Row], warnings: list[str]) -> list[Row]:
    length = ((irtt.get("config") or {}).get("params") or {}).get("length")
    trips = sorted(irtt["round_trips"], key=lambda t: t["seqno"])
    mine = np.flatnonzero(delays["flow"] == flow) if len(delays.get("flow", ())) else np.zeros(0, int)
    mine = mine[np.argsort(delays["pkt_id"][mine], kind="stable")]
    if len(mine) == 0:
        warnings.append(f"flow {flow}: none of its datagrams is in the emulator log; its probes are left out")
        return []
    request_dir = str(delays["dir"][mine[0]])
    probes = [int(i) for i in mine if delays["dir"][i] == request_dir and delays["payload_len"][i] == length]
    if len(probes) != len(trips):
        warnings.append(f"flow {flow}: the emulator log took in {len(probes)} probe requests of {length} B, irtt "
                        f"sent {len(trips)}; its probes are not joined")
        return []
    # the request/reply pairs round_trips.py matched, by the request's SP packet id
    matched = {r["request_pkt_id"]: r for r in round_trips if r["flow"] == flow}
    by_pkt = {int(delays["pkt_id"][i]): int(i) for i in mine}
    return [_row(flow, trip, delays, i, request_dir, matched.get(int(delays["pkt_id"][i])), by_pkt)
            for trip, i in zip(trips, probes)]


def _row(flow: str, trip: Mapping[str, Any], delays: Mapping[str, np.ndarray], i: int, request_dir: str,
         matched: Row | None, by_pkt: dict[int, int]) -> Row:
    delay = trip.get("delay") or {}
    reply = None if matched is None or matched["reply_pkt_id"] is None else by_pkt.get(matched["reply_pkt_id"])
    return {"flow": flow, "seqno": trip["seqno"], "t_s": float(delays["t_s"][i]),
            "request_state": None if matched is None else matched["request_state"],
            "irtt_lost": trip.get("lost"), "irtt_rtt_ms": _ms(delay.get("rtt")),
            "irtt_send_delay_ms": _ms(delay.get("send")), "irtt_receive_delay_ms": _ms(delay.get("receive")),
            "irtt_server_ms": _server_ms(trip),
            "request_dir": request_dir, "request_fate": str(delays["fate"][i]),
            "reply_fate": None if reply is None else str(delays["fate"][reply]),
            "request_link_ms": _finite(delays["delay_ms"][i]),
            "reply_link_ms": None if reply is None else _finite(delays["delay_ms"][reply]),
            "request_e2e_ms": _finite(delays["e2e_delay_ms"][i]),
            "reply_e2e_ms": None if reply is None else _finite(delays["e2e_delay_ms"][reply]),
            "capture_rtt_ms": None if matched is None else matched["rtt_ms"]}


def _server_ms(trip: Mapping[str, Any]) -> float | None:
    """The server's turnaround (its send - its receive, wall clock), which irtt's RTT leaves out."""
    server = (trip.get("timestamps") or {}).get("server") or {}
    received, sent = (server.get("receive") or {}).get("wall"), (server.get("send") or {}).get("wall")
    return None if received is None or sent is None else _ms(sent - received)


def _ms(ns: Any) -> float | None:
    return None if not isinstance(ns, (int, float)) else ns / _NS_PER_MS


def _finite(value: Any) -> float | None:
    return None if value is None or not np.isfinite(value) else float(value)


def probe_values(rows: list[Row]) -> dict[str, float | None]:
    """The run values of each probe flow (module docstring)."""
    values: dict[str, float | None] = {}
    for flow in dict.fromkeys(r["flow"] for r in rows):
        mine = [r for r in rows if r["flow"] == flow]
        rtt = [r["irtt_rtt_ms"] for r in mine if r["irtt_rtt_ms"] is not None]
        link = [r["request_link_ms"] + r["reply_link_ms"] for r in mine
                if r["request_link_ms"] is not None and r["reply_link_ms"] is not None]
        up_is_request = mine[0]["request_dir"] == "up"
        send = [r["irtt_send_delay_ms"] for r in mine if r["irtt_send_delay_ms"] is not None]
        receive = [r["irtt_receive_delay_ms"] for r in mine if r["irtt_receive_delay_ms"] is not None]
        up, down = (send, receive) if up_is_request else (receive, send)
        lost_request = sum(r["request_fate"] != "out" for r in mine)
        lost_reply = sum(r["request_fate"] == "out" and r["reply_fate"] != "out" for r in mine)
        values[f"{flow}.probes"] = len(mine)
        values[f"{flow}.probes_lost_up"] = lost_request if up_is_request else lost_reply
        values[f"{flow}.probes_lost_down"] = lost_reply if up_is_request else lost_request
        for name, q in (("min", 0), ("median", 50), ("p95", 95), ("max", 100)):
            values[f"{flow}.rtt_{name}_ms"] = _percentile(rtt, q)
        values[f"{flow}.rtt_link_median_ms"] = _percentile(link, 50)
        values[f"{flow}.owd_up_median_ms"] = _percentile(up, 50)
        values[f"{flow}.owd_down_median_ms"] = _percentile(down, 50)
    return values


def _percentile(xs: list[float], q: float) -> float | None:
    return float(np.percentile(xs, q)) if xs else None
