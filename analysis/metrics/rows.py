"""Flat rows (one per connection / flow) for CSV and JSON output."""

from __future__ import annotations

from analysis.metrics.tcp import CLASSES, TcpMetrics
from analysis.metrics.udp import UdpMetrics

Row = dict[str, object]


def _endpoint(e: tuple[str, int]) -> str:
    return f"[{e[0]}]:{e[1]}" if ":" in e[0] else f"{e[0]}:{e[1]}"


def sending_fields(m: TcpMetrics | None, prefix: str = "") -> Row:
    """What one endpoint's segments went through: retransmissions by class, timeouts, SYNs
    sent again, fast recoveries, the timeouts it undid itself, and their link fates (all
    None when its capture was not there)."""
    def get(attr: str) -> object:
        return None if m is None else getattr(m, attr)
    row: Row = {f"{prefix}{name}": get(name) for name in (
        "packets_sent", "retransmissions", "unnecessary_retransmissions", "rto_events",
        "spurious_rtos", "fast_retransmits", "syn_retransmissions", "loss_undos",
        "congestion_drops", "error_drops")}
    for kind in CLASSES:
        row[f"{prefix}retx_{kind}"] = None if m is None else m.retransmissions_by_kind.get(kind, 0)
    return row


def tcp_row(side: str, m: TcpMetrics) -> Row:
    row: Row = {
        "kind": "tcp", "measured_at": side, "client": _endpoint(m.client),
        "server": _endpoint(m.server), "sender": _endpoint(m.sender), "complete": m.complete,
        "first_syn_us": m.first_syn_us, "elapsed_us": m.elapsed_us,
        "response_us": m.response_us, "data_transmit_us": m.data_transmit_us,
        "bytes": m.bytes, "throughput_bytes_per_s": m.throughput_bytes_per_s,
        "response_throughput_bytes_per_s": m.response_throughput_bytes_per_s,
        "packets_sent": m.packets_sent, "retransmissions": m.retransmissions,
        "unnecessary_retransmissions": m.unnecessary_retransmissions,
        "rto_events": m.rto_events, "spurious_rtos": m.spurious_rtos,
        "fast_retransmits": m.fast_retransmits,
        "congestion_drops": m.congestion_drops, "error_drops": m.error_drops,
        "ecn_marks": m.ecn_marks, "frame_errors": m.frame_errors,
        "dscp": m.dscp,
    }
    for kind in CLASSES:
        row[f"retx_{kind}"] = m.retransmissions_by_kind.get(kind, 0)
    for fate in ("drop_sbuf", "drop_router", "unseen", "drop_err", "drop_mtu", "drop_loss", "pending"):
        row[f"fate_{fate}"] = None if m.fates is None else m.fates.get(fate, 0)
    for fate in ("drop_sbuf", "drop_router", "drop_err", "drop_mtu", "drop_loss", "pending"):
        row[f"ack_fate_{fate}"] = (None if m.reverse_fates is None
                                   else m.reverse_fates.get(fate, 0))
    row["syn_retransmissions"], row["loss_undos"] = m.syn_retransmissions, m.loss_undos
    # the other endpoint's packets (an HTTP client's SYNs and requests, a bulk receiver's
    # ACKs), measured in its own capture
    row.update(sending_fields(m.peer, "peer_"))
    return row


def udp_row(side: str, m: UdpMetrics) -> Row:
    row: Row = {
        "kind": "udp", "received_at": side, "src": _endpoint(m.src), "dst": _endpoint(m.dst),
        "sent": m.sent, "generator_sent": m.generator_sent, "received": m.received,
        "expected": m.expected, "lost": m.lost,
        "lost_congestion": m.lost_congestion, "lost_error": m.lost_error,
        "lost_unseen": m.lost_unseen,
        "duplicates": m.duplicates, "reordered": m.reordered, "bytes": m.bytes,
        "first_recv_us": m.first_recv_us, "last_recv_us": m.last_recv_us,
        "throughput_bytes_per_s": m.throughput_bytes_per_s,
        "jitter_min_us": m.jitter_min_us, "jitter_max_us": m.jitter_max_us,
        "jitter_mean_us": m.jitter_mean_us, "jitter_samples": m.jitter_samples,
        "spacing_mean_us": m.spacing_mean_us,
        "link_delay_median_us": m.link_delay_median_us,
        "link_delay_variation_us": m.link_delay_variation_us, "owd_median_us": m.owd_median_us,
        "sequence_received": m.sequence_received,
        "dscp": m.dscp,
        # as for TCP connections: congestion = send buffer + router (+ unseen: tc router)
        "congestion_drops": None if m.fates is None else sum(
            m.fates.get(f, 0) for f in ("drop_sbuf", "drop_router", "unseen")),
        "error_drops": None if m.fates is None else m.fates.get("drop_err", 0),
    }
    for fate in ("drop_sbuf", "drop_router", "unseen", "drop_err", "drop_mtu", "drop_loss", "pending"):
        row[f"fate_{fate}"] = None if m.fates is None else m.fates.get(fate, 0)
    row["na_reason"] = "; ".join(m.reasons) or None  # why the empty cells are empty
    return row
