"""A host's capture read back beside the emulator log: what the runner's instrument checks
(testbed/run/instruments.py, docs/runner.md "Instruments") and its timing error need from the
analysis, in one place: how many packets each saw per direction, which logged packets no
captured one joins, and the joined packets' times at either end.

Directions are the log's: the fixed host's packets enter the link `down`, the mobile host's
`up` (metrics/series.py SENDER_SIDE)."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.errors import AnalysisInputError
from analysis.join.by_identity import join_records
from analysis.join.fate_index import FATE_NAMES, fate_index
from analysis.join.fate_map import FateMap
from analysis.metrics.per_connection import side_addresses
from analysis.metrics.series import SENDER_SIDE
from analysis.metrics.udp import generator_sequence_numbers
from analysis.read.emulog import EmulatorLog, read_emulator_log
from analysis.read.event_table import NULL
from analysis.read.pcap import PROTO_UDP, address_texts, ip_records, read_capture

SENDS = {side: direction for direction, side in SENDER_SIDE.items()}   # side -> its packets' direction


def receives(side: str) -> str:
    """The direction of the packets the link delivers towards `side`."""
    return "up" if SENDS[side] == "down" else "down"


@dataclass
class CaptureFile:
    """One capture point's file read back."""
    side: str                         # fixed | mobile
    records: np.ndarray | None        # IP frames (read/pcap.py records); None: unreadable
    sources: list[str]                # each IP frame's source address
    frames: int = 0                   # every frame in the file
    error: str | None = None
    fates: FateMap | None = None      # its join with the log, once made (joined)


def read_log(path: Path) -> tuple[EmulatorLog | None, str | None]:
    """The log, or None and why it cannot be read."""
    try:
        return read_emulator_log(path), None
    except (AnalysisInputError, OSError) as e:
        return None, str(e)


def read_capture_file(path: Path, side: str) -> CaptureFile:
    """The capture of `side`; one that cannot be read has no records and says why."""
    try:
        capture = read_capture(path)
    except (AnalysisInputError, OSError) as e:
        return CaptureFile(side, None, [], error=str(e))
    r = ip_records(capture)
    return CaptureFile(side, r, address_texts(r["ip_version"], r["src"]) if len(r) else [], len(capture.records))


def _lost_in_emulator(log: EmulatorLog, side: str) -> int:
    """Packets towards `side` the emulator could not hand to its TUN."""
    undeliverable = log.counts("undeliverable")
    return undeliverable.get(receives(side), 0) + undeliverable.get("send_errors", 0)


def directions(file: CaptureFile, log: EmulatorLog, cutoff_us: int | None = None) -> dict[str, dict[str, int]]:
    """Packets of the capture the host sent / received through the link (by source address,
    the log's sides) against the log's `in` events of the host's direction and `out` events
    of the other one (less those the emulator could not deliver), up to `cutoff_us`."""
    side = file.side
    sides = side_addresses(log)
    other = "mobile" if side == "fixed" else "fixed"
    table = log.table
    counted = np.ones(len(table), bool) if cutoff_us is None else table.ints["time_us"] <= cutoff_us
    log_in = int(np.count_nonzero(table.is_("event", "in") & table.is_("dir", SENDS[side]) & counted))
    log_out = int(np.count_nonzero(table.is_("event", "out") & table.is_("dir", receives(side)) & counted))
    return {"sent": {"captured": sum(s in sides[side] for s in file.sources), "log_in": log_in},
            "received": {"captured": sum(s in sides[other] for s in file.sources),
                         "log_out": max(0, log_out - _lost_in_emulator(log, side))}}


def joined(file: CaptureFile, log: EmulatorLog) -> FateMap:
    """The capture's packets joined with the log by identity (join/by_identity.py), made once;
    received copies join `out` events."""
    if file.fates is None:
        assert file.records is not None
        file.fates = join_records(file.records, log, file.side)
    return file.fates


def unmatched(file: CaptureFile, log: EmulatorLog, cutoff_us: int | None) -> dict[str, int]:
    """The packet lives of the log (up to `cutoff_us`) that no packet of the capture joins:
    entered the link from the capture's host (`sent`), delivered towards it (`received`, less
    those the emulator could not hand to its TUN)."""
    index, fates = fate_index(log), joined(file, log)
    is_joined = np.isin(index.pkt_id, fates.pkt_id[fates.pkt_id != NULL])
    until = cutoff_us if cutoff_us is not None else np.iinfo(np.int64).max
    sent = (index.dir == SENDS[file.side]) & (index.in_us <= until)
    out = FATE_NAMES.index("out")
    delivered = ((index.dir == receives(file.side)) & (index.fate == out) & (index.end_us != NULL)
                 & (index.end_us <= until))
    return {"sent": int(np.count_nonzero(sent & ~is_joined)),
            "received": max(0, int(np.count_nonzero(delivered & ~is_joined)) - _lost_in_emulator(log, file.side))}


def matched(file: CaptureFile, log: EmulatorLog) -> dict[str, np.ndarray]:
    """The capture's packets joined with the log by identity: capture times and `in` times of
    what the host sent, capture times and `out` times of what it received (NULL where the log
    has none)."""
    r = file.records
    assert r is not None
    fates = joined(file, log)
    rows = np.searchsorted(r["frame_no"], fates.frame_no)
    ts = r["ts_us"][rows].astype(np.int64)
    mine = side_addresses(log)[file.side]
    sent = np.fromiter((file.sources[row] in mine for row in rows.tolist()), bool, len(rows))
    received = ~sent & (fates.fate_names() == "out")
    return {"sent_ts": ts[sent], "sent_in": fates.in_us[sent],
            "received_ts": ts[received], "received_out": fates.end_us[received]}


def udp_generator_packets(file: CaptureFile, port: int) -> tuple[np.ndarray, np.ndarray]:
    """The capture's UDP packets to `port` that carry the CBR generator's header: their capture
    times and sequence numbers (metrics/udp.py reads the header)."""
    assert file.records is not None
    r = file.records
    mine = r[(r["proto"] == PROTO_UDP) & (r["dport"] == port)]
    seq = generator_sequence_numbers(mine)
    sent = seq >= 0
    return mine["ts_us"][sent], seq[sent]
