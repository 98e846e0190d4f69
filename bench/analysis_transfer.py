"""A long synthetic TCP transfer as a replication directory, for the full-analysis benchmark.

The fixed host (198.18.60.1:40000) sends 512-byte segments to the mobile host every
100 µs; the link delays each packet 40 µs; the mobile host ACKs every second segment when
it arrives. Both host captures (fixed: Ethernet, snapped at 96 bytes as the testbed
captures; mobile: raw IP) and the emulator log (`in` and `out` of every packet, the events
the join needs) describe the same packets. Built with numpy: a million frames take about
a second to write."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np

from analysis.read.emulog import COLUMNS

FIXED, MOBILE = bytes([198, 18, 60, 1]), bytes([198, 18, 61, 2])
FIXED_TEXT, MOBILE_TEXT = "198.18.60.1", "198.18.61.2"
SPORT, DPORT = 40000, 5001
PAYLOAD = 512
SNAPLEN = 96
PERIOD_US = 100        # between data segments
DELAY_US = 40          # link delay each way
START_US = 1_795_312_345_000_000
ISN_DATA, ISN_ACK = 1_000_000, 7_000_000
ETHERNET = b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01\x08\x00"
TS_OPTION = b"\x01\x01\x08\x0a" + struct.pack(">II", 1, 2)


def ip_tcp(src: bytes, dst: bytes, sport: int, dport: int, flags: int, payload: int) -> bytes:
    ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + 32 + payload, 0, 0x4000, 64, 6, 0, src, dst)
    tcp = struct.pack(">HHIIBBHHH", sport, dport, 0, 0, (32 // 4) << 4, flags, 65535, 0, 0)
    return ip + tcp + TS_OPTION + b"d" * payload


def pcap_rows(template: bytes, n: int, snap: int, ts: np.ndarray, ip_id: np.ndarray,
          seq: np.ndarray, ack: np.ndarray, l2: int) -> np.ndarray:
    """n pcap records (16-byte header + frame cut at snap) with per-row fields filled."""
    frame = np.frombuffer(template[:snap], np.uint8)
    rows = np.empty((n, 16 + len(frame)), np.uint8)
    rows[:, 16:] = frame
    header = np.empty(n, np.dtype([("s", "<u4"), ("us", "<u4"), ("cap", "<u4"), ("len", "<u4")]))
    header["s"] = ts // 1_000_000
    header["us"] = ts % 1_000_000
    header["cap"] = len(frame)
    header["len"] = len(template)
    rows[:, :16] = header.view(np.uint8).reshape(n, 16)
    base = 16 + l2
    rows[:, base + 4:base + 6] = ip_id.astype(">u2").view(np.uint8).reshape(n, 2)
    rows[:, base + 24:base + 28] = seq.astype(">u4").view(np.uint8).reshape(n, 4)
    rows[:, base + 28:base + 32] = ack.astype(">u4").view(np.uint8).reshape(n, 4)
    return rows


def _interleave(data: np.ndarray, acks: np.ndarray) -> bytes:
    """Frames in capture order: data 2j, data 2j+1, then ack j."""
    groups = np.concatenate([data.reshape(len(acks), -1), acks], axis=1)
    return groups.tobytes()


def _times(n_acks: int) -> dict[str, np.ndarray]:
    k = np.arange(2 * n_acks, dtype=np.int64)
    j = np.arange(n_acks, dtype=np.int64)
    sent = k * PERIOD_US
    ack_sent = sent[1::2] + DELAY_US   # when the second segment arrives
    return {"data_sent": sent, "data_recv": sent + DELAY_US, "ack_sent": ack_sent,
            "ack_recv": ack_sent + DELAY_US, "k": k, "j": j}


def write_transfer(directory: Path, frames_per_capture: int) -> int:
    """fixed.pcap, mobile.pcap (each about `frames_per_capture` frames) and emulator.log.
    Returns the number of frames in each capture."""
    n_acks = max(1, -(-frames_per_capture // 3))  # at least frames_per_capture frames
    t = _times(n_acks)
    data_ip_id = (t["k"] % 65536).astype(np.uint16)
    ack_ip_id = (t["j"] % 65536).astype(np.uint16)
    seq = (ISN_DATA + 1 + PAYLOAD * t["k"]) % 2**32
    ack_of_data = np.full(len(seq), ISN_ACK + 1)
    ack_seq = np.full(n_acks, ISN_ACK + 1)
    acked = (ISN_DATA + 1 + PAYLOAD * (2 * t["j"] + 2)) % 2**32
    data_ip = ip_tcp(FIXED, MOBILE, SPORT, DPORT, 0x18, PAYLOAD)
    ack_ip = ip_tcp(MOBILE, FIXED, DPORT, SPORT, 0x10, 0)
    fixed_hdr = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, SNAPLEN, 1)
    mobile_hdr = struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 101)
    fixed = _interleave(
        pcap_rows(ETHERNET + data_ip, len(seq), SNAPLEN, START_US + t["data_sent"], data_ip_id, seq,
              ack_of_data, 14),
        pcap_rows(ETHERNET + ack_ip, n_acks, SNAPLEN, START_US + t["ack_recv"], ack_ip_id, ack_seq,
              acked, 14))
    mobile = _interleave(
        pcap_rows(data_ip, len(seq), len(data_ip), START_US + t["data_recv"], data_ip_id, seq,
              ack_of_data, 0),
        pcap_rows(ack_ip, n_acks, len(ack_ip), START_US + t["ack_sent"], ack_ip_id, ack_seq, acked, 0))
    (directory / "fixed.pcap").write_bytes(fixed_hdr + fixed)
    (directory / "mobile.pcap").write_bytes(mobile_hdr + mobile)
    _write_log(directory / "emulator.log", t, seq, acked)
    return 3 * n_acks


def _write_log(path: Path, t: dict[str, np.ndarray], seq: np.ndarray, acked: np.ndarray) -> None:
    ip_len_data, ip_len_ack = 20 + 32 + PAYLOAD, 20 + 32
    down = (f"\tdown\t{{id}}\t{ip_len_data}\tgood\t0\t0\t0\ttcp\t{FIXED_TEXT}\t{SPORT}\t"
            f"{MOBILE_TEXT}\t{DPORT}\t{{ipid}}\t{{seq}}\t{ISN_ACK + 1}\tPA\t{PAYLOAD}\t-")
    up = (f"\tup\t{{id}}\t{ip_len_ack}\tgood\t0\t0\t0\ttcp\t{MOBILE_TEXT}\t{DPORT}\t"
          f"{FIXED_TEXT}\t{SPORT}\t{{ipid}}\t{ISN_ACK + 1}\t{{ack}}\tA\t0\t-")
    with open(path, "w") as f:
        f.write("\n".join(["# squall-emulator event log", "# format 1", "# seed 1",
                           "# replication 1", "# started yes",
                           f"# start_realtime_us {START_US}", f"# columns {' '.join(COLUMNS)}",
                           f"0\tstart\t-\t-\t-\tgood\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t{START_US}"])
                + "\n")
        lines: list[str] = []
        for j in range(len(t["j"])):
            for k in (2 * j, 2 * j + 1):
                d = down.format(id=k + 1, ipid=k % 65536, seq=int(seq[k]))
                lines.append(f"{int(t['data_sent'][k])}\tin{d}")
                lines.append(f"{int(t['data_recv'][k])}\tout{d}")
            u = up.format(id=2 * len(t["j"]) + j + 1, ipid=j % 65536, ack=int(acked[j]))
            lines.append(f"{int(t['ack_sent'][j])}\tin{u}")
            lines.append(f"{int(t['ack_recv'][j])}\tout{u}")
            if len(lines) > 60_000:
                f.write("\n".join(lines) + "\n")
                lines.clear()
        if lines:
            f.write("\n".join(lines) + "\n")
        end = int(t["ack_recv"][-1])
        f.write(f"# end time_us {end} reason stop\n")
