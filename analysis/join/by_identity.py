"""Joining a host capture with the emulator log by packet identity, never by time.

Identity (emulator/LOG_FORMAT.md, "Packet identity"): the packet columns (proto, src,
sport, dst, dport, ip_id, tcp_seq, tcp_ack, tcp_flags, payload_len; identity.py) and the
occurrence number at the capture point. A packet the host sent is the k-th with its
columns in that capture and joins the k-th `in` event with them; a packet the host
received through the link joins the k-th `out` event with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np

from analysis.read.emulog import EmulatorLog
from analysis.join.fate_index import ENTRY, EXIT, FateIndex, fate_index
from analysis.join.fate_map import FateMap
from analysis.join.identity import (CONGESTION_FATES, PENDING, PROTO_NAMES, UNSEEN, Columns,
                               PacketFate, PacketIdentity, capture_columns, event_identity,
                               from_addresses, identity_records, packet_identity)
from analysis.read.pcap import Packet, only_ip

# identity.py's names stay importable from here, where they were first defined
__all__ = ["CONGESTION_FATES", "PENDING", "PROTO_NAMES", "UNSEEN", "PacketFate",
           "PacketIdentity", "event_identity", "packet_identity", "join_capture",
           "join_records"]

# a host's side of the link -> (the direction it sends in, the one it receives from)
SIDES = {"fixed": ("down", "up"), "mobile": ("up", "down")}


def join_capture(packets: Iterable[Packet], log: EmulatorLog,
                 side: str | None = None) -> Mapping[int, PacketFate]:
    """The fate of every captured packet, by frame number. `side` is the host whose
    capture this is ("fixed" or "mobile"): its packets from the other side's addresses
    were received through the link and join `out` events; all others were sent and join
    `in` events. Without a side every packet is taken as sent. A packet the log never saw
    gets UNSEEN: sent, it was dropped before the link (tc router); received, it did not
    come through the link. A read-only mapping (compares equal to the dict) that makes
    each PacketFate when it is looked up."""
    return join_records(identity_records(list(packets)), log, side)


def join_records(records: np.ndarray, log: EmulatorLog, side: str | None = None) -> FateMap:
    """join_capture for a capture's records (pcap.Capture.records), without Packet
    objects; non-IP and malformed frames are left out as pcap.ip_packets does."""
    r = only_ip(records)
    index = fate_index(log)
    columns = capture_columns(r)
    end = np.where(_received(columns, index, side), EXIT, ENTRY)
    match = index.events.match(end, columns)
    if match is None:  # a hash collision: the exact, slow way
        match = index.events.match_exactly(end, columns)
    return FateMap.of(r["frame_no"].astype(np.int64), index, match)


def _received(columns: Columns, index: FateIndex, side: str | None) -> np.ndarray:
    """Mask of the packets the host received through the link: sent from addresses of
    the other side only (sources of the log's `in` events in the direction towards it)."""
    if side is None:
        return np.zeros(len(columns[0]), bool)
    if side not in SIDES:
        raise ValueError(f"side {side!r} is not one of {', '.join(SIDES)}")
    sends, receives = SIDES[side]
    return (from_addresses(columns, index.sources[receives])
            & ~from_addresses(columns, index.sources[sends]))
