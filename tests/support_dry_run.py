"""The emulator's link model alone in virtual time (`squall-emulator --print-packets[-from]`), read
back for the tests' independent references of the router stage (tests/test_codel_reference.py,
test_fq_codel_reference.py, test_pie_reference.py, test_dualpi2_reference.py)."""
from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

from testbed.paths import bin_dir


def one_class_router(seed: int, replication: int, mtu: int, bandwidth: str, class_keys: dict[str, str]) -> str:
    """An emulator configuration: an error-free link, a down router with one class `all` of
    class_keys (discipline, limit, its own keys), a send buffer of one MTU behind it."""
    link = [f"mtu = {mtu}B", "delay = 10ms", f"send_buffer = {mtu}B"]
    return "\n".join([
        "token = 0123456789abcdef", "log = /dev/null", f"seed = {seed}", f"replication = {replication}",
        "[channel]", "good = fixed(1000s)", "bad = fixed(1s)",
        "[down]", *link, f"bandwidth = {bandwidth}",
        "[down.router]", "default = all",
        "[down.router.class.all]", *(f"{k} = {v}" for k, v in class_keys.items()),
        "[up]", *link, "bandwidth = unlimited", ""])


@dataclass(frozen=True)
class Line:
    t: int
    event: str
    pkt: int
    ip_len: int


ROUTER_EVENTS = ("in", "enqueue", "drop_router", "ecn_mark")


def down_lines(conf: Path, *source: str, events: tuple[str, ...] | None = None) -> list[Line]:
    """The down direction's events (of `events` if given) in the order the model made them, for
    the packets of `source` (`--print-packets N` or `--print-packets-from FILE`)."""
    done = subprocess.run([str(bin_dir() / "squall-emulator"), *source, str(conf)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = []
    for text in done.stdout.splitlines():
        t, direction, event, pkt, ip_len, *_ = text.split("\t")
        if direction == "down" and (events is None or event in events):
            lines.append(Line(int(t), event, int(pkt), int(ip_len)))
    return lines


def write_packets(path: Path, count: int, mtu: int, ecn: str) -> None:
    """A packet file (emulator/README.md, --print-packets-from): count packets of mtu bytes a
    direction, down then up every millisecond (so packet i of the down direction has id 2i, as
    with --print-packets), packet i of each direction with the ECN field ecn's i mod n-th value."""
    fields = [int(v) for v in ecn.split(",")]
    with path.open("w") as out:
        for i in range(count):
            field = fields[i % len(fields)]
            out.write(f"{i * 1000} down {mtu} {field}\n{i * 1000} up {mtu} {field}\n")


def emulator_lines(conf: Path, count: int, mtu: int, ecn: str = "0") -> list[Line]:
    """The down direction's events in the order the model made them for write_packets' stream
    ("0,1,2": the ECN fields cycled)."""
    packets = conf.with_suffix(".packets")
    write_packets(packets, count, mtu, ecn)
    return down_lines(conf, "--print-packets-from", str(packets))


def sojourns(lines: list[Line], start_us: int, end_us: int, packets: set[int] | None = None) -> list[int]:
    """Each admitted packet's time in the router (its move into the send buffer less its
    arrival), for packets arriving in [start_us, end_us) (and in `packets` if given)."""
    arrived = {line.pkt: line.t for line in lines if line.event == "in"}
    return [line.t - arrived[line.pkt] for line in lines
            if line.event == "enqueue" and start_us <= arrived[line.pkt] < end_us
            and (packets is None or line.pkt in packets)]
