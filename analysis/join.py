"""Joining a host capture with the emulator log by packet identity, never by time.

Identity (LOG_FORMAT.md): (proto, src, sport, dst, dport, ip_id, tcp_seq, tcp_ack,
payload_len). Identical identities (IPv6 has no IP id; a host may resend a packet
bit-for-bit) are matched in order: the k-th such packet in the capture is the k-th
`in` event with that identity in the log.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Iterable, Mapping

import numpy as np

from analysis.emulog import EmulatorLog
from analysis.fate_index import FateIndex, FateMap, IdentityKeys, fate_index
from analysis.identity import (CONGESTION_FATES, PENDING, PROTO_NAMES, UNSEEN, PacketFate,
                               PacketIdentity, event_identity, packet_identity)
from analysis.pcap import Packet

# identity.py's names stay importable from here, where they were first defined
__all__ = ["CONGESTION_FATES", "PENDING", "PROTO_NAMES", "UNSEEN", "PacketFate",
           "PacketIdentity", "event_identity", "packet_identity", "join_capture",
           "join_records"]


def join_capture(packets: Iterable[Packet], log: EmulatorLog) -> Mapping[int, PacketFate]:
    """The fate of every captured packet, by frame number. A packet the log never saw
    gets UNSEEN; whether that is a drop depends on where the capture was taken (a sender's
    capture: it was dropped before the link; a receiver's: it never went through it).
    A read-only mapping (compares equal to the dict) that makes each PacketFate when it
    is looked up."""
    index = fate_index(log)
    return _join(index.packet_keys(list(packets)), index)


def join_records(records: np.ndarray, log: EmulatorLog) -> FateMap:
    """join_capture for a capture's records (pcap.Capture.records), without Packet
    objects; non-IP and malformed frames are left out as pcap.ip_packets does."""
    index = fate_index(log)
    return _join(index.record_keys(records), index)


def _join(packets: IdentityKeys, index: FateIndex) -> FateMap:
    match = index.match(packets)
    if match is None:  # a hash collision: the exact, slow way
        match = _match_exactly(packets, index)
    return FateMap.of(packets.frame_no, index, match)


def _match_exactly(packets: IdentityKeys, index: FateIndex) -> np.ndarray:
    """Order matching with Python dictionaries on the identity columns."""
    queues: dict[tuple[int, ...], deque[int]] = defaultdict(deque)
    for row, key in enumerate(zip(*(c.tolist() for c in index.in_keys.columns))):
        queues[key].append(row)
    match = np.full(len(packets.frame_no), -1, np.int64)
    for i, key in enumerate(zip(*(c.tolist() for c in packets.columns))):
        rows = queues.get(key)
        if rows:
            match[i] = rows.popleft()
    return match
