"""The analysis's fast paths give what the simple ones give: the C log reader vs the Python
parser, the vectorised join vs order matching with dictionaries, connections grouped from
records vs from Packet objects. Random inputs with many equal identities, reused packet
ids and 4-tuples, so the corner cases of each are exercised."""

from __future__ import annotations

import random
from collections import defaultdict, deque
from pathlib import Path

import pytest

from analysis.read import emulog
from analysis.metrics.connections import TcpConnection, tcp_connections, tcp_connections_of
from analysis.read.emulog import FINAL_EVENTS, COLUMNS, read_emulator_log
from analysis.read.event_table import fast_read
from analysis.join.identity import PENDING, UNSEEN, PacketFate, event_identity, packet_identity
from analysis.join.by_identity import join_capture, join_records
from analysis.read.pcap import ip_records, read_capture, read_packets, reader_path
from tests.test_analysis_support import FIXED, MOBILE, ScriptedLink, tcp, write_pcap

pytestmark = pytest.mark.skipif(not reader_path().exists(), reason="needs `make build`")

HEADER = ["# squall-emulator event log", "# format 1", "# seed 7", "# replication 1",
          "# started yes", "# start_realtime_us 1795312345000000",
          f"# columns {' '.join(COLUMNS)}"]
TRAILER = ["# end time_us 999999 reason stop", "# pending 0"]


def python_parse(path: Path) -> emulog.EmulatorLog:
    parser = emulog._LogParser(path)
    parser.parse(path.read_text().splitlines())
    parser.log._events = parser.events
    return parser.log


def same_log(a: emulog.EmulatorLog, b: emulog.EmulatorLog) -> None:
    for name in ("format", "seed", "replication", "started", "start_realtime_us", "config",
                 "end_us", "trailer", "events"):
        assert getattr(a, name) == getattr(b, name), name


def sample_log(tmp_path: Path) -> Path:
    link = ScriptedLink()
    for i in range(5):
        link.send(i * 1000, tcp(FIXED, MOBILE, 40000, 5001, 1 + 100 * i, 1, "PA", 100),
                  fate=("out", "drop_err", "drop_sbuf")[i % 3], hits=i % 2, ecn_mark=i == 4)
    return link.write(tmp_path)[2]


def test_c_log_reader_gives_what_the_python_parser_gives(tmp_path: Path) -> None:
    path = sample_log(tmp_path)
    assert fast_read(path) is not None  # the C reader took it
    same_log(read_emulator_log(path), python_parse(path))


@pytest.mark.parametrize("edit", ["crlf", "plus_sign", "non_ascii_note", "long_integer"])
def test_odd_but_valid_logs_are_read_by_the_python_parser(tmp_path: Path, edit: str) -> None:
    path = sample_log(tmp_path)
    plain = python_parse(path)
    lines = path.read_text().splitlines()
    cols = lines[9].split("\t")
    if edit == "crlf":
        path.write_bytes("\r\n".join(lines).encode() + b"\r\n")
    else:
        if edit == "plus_sign":
            cols[3] = "+" + cols[3]
        elif edit == "non_ascii_note":
            cols[19] = "naïve"
        else:
            cols[15] = "0000000000000000000" + cols[15]  # 19+ digits, still the same number
        lines[9] = "\t".join(cols)
        path.write_text("\n".join(lines) + "\n")
    assert fast_read(path) is None  # left to the Python parser
    log = read_emulator_log(path)
    if edit == "non_ascii_note":
        assert log.events[1].note == "naïve"
        log.events[1].note = plain.events[1].note
    same_log(log, plain)


def test_event_after_trailer_and_time_backwards_are_errors_on_the_fast_path(
        tmp_path: Path) -> None:
    path = sample_log(tmp_path)
    lines = path.read_text().splitlines()
    after = tmp_path / "after.log"
    after.write_text("\n".join(lines + [lines[9]]) + "\n")
    with pytest.raises(emulog.LogFormatError, match=rf"after\.log:{len(lines) + 1}: event "
                       "line after the trailer"):
        read_emulator_log(after)
    backwards = tmp_path / "backwards.log"
    backwards.write_text("\n".join(lines[:-8] + ["0" + lines[-9][lines[-9].index("\t"):]]
                                   + lines[-8:]) + "\n")
    with pytest.raises(emulog.LogFormatError, match=r"backwards\.log:\d+: time_us 0 is earlier"):
        read_emulator_log(backwards)


# --- the join ---------------------------------------------------------------------------

def reference_join(packets, log, side: str | None = None) -> dict[int, PacketFate]:
    """Order matching as LOG_FORMAT.md defines it, one event at a time: a packet the
    capture's host sent is the k-th with its identity there and joins the k-th `in` with
    it; one it received (from addresses of the other side only) joins the k-th `out`.
    Without a side every packet counts as sent."""
    at_end: dict[str, dict[tuple, deque[int]]] = {"in": defaultdict(deque),
                                                  "out": defaultdict(deque)}
    sources: dict[str | None, set[str]] = defaultdict(set)
    lives: dict[int, list] = {}
    for e in log.events:
        if e.pkt_id is None:
            continue
        if e.event == "in":
            at_end["in"][event_identity(e)].append(e.pkt_id)
            sources[e.dir].add(e.src)
            lives[e.pkt_id] = [e.dir, e.time_us, PENDING, None, 0, False, event_identity(e)]
            continue
        life = lives.get(e.pkt_id)
        if life is None:
            continue
        if e.event == "hit":
            life[4] += 1
        elif e.event == "ecn_mark":
            life[5] = True
        elif e.event in FINAL_EVENTS:
            life[2], life[3] = e.event, e.time_us
        if e.event == "out":  # with its packet's identity, as logged at its `in`
            at_end["out"][life[6]].append(e.pkt_id)
    sends, receives = {"fixed": ("down", "up"), "mobile": ("up", "down")}.get(side, (None, None))
    fates = {}
    for p in packets:
        received = side is not None and p.src in sources[receives] - sources[sends]
        ids = at_end["out" if received else "in"].get(packet_identity(p))
        if not ids:
            fates[p.frame_no] = PacketFate(p.frame_no, UNSEEN, None, None, None, None, 0)
            continue
        pkt_id = ids.popleft()
        d, in_us, fate, end_us, hits, marked, _ = lives[pkt_id]
        fates[p.frame_no] = PacketFate(p.frame_no, fate, pkt_id, d, in_us, end_us, hits, marked)
    return fates


def random_transfer(rng: random.Random, directory: Path) -> tuple[Path, Path]:
    """Packets from a small set of identities (so many are equal), logged with reused
    packet ids, events before their `in`, events of unknown ids; the capture has some
    packets the log never saw."""
    identities = [tcp(src, dst, sp, dp, seq, 1, "PA", n) for src, dst, sp, dp in
                  ((FIXED, MOBILE, 40000, 5001), (MOBILE, FIXED, 5001, 40000))
                  for seq in (1, 101) for n in (0, 100)]
    link = ScriptedLink()
    for i in range(120):
        pkt = rng.choice(identities).copy()
        link.ip_id = 100 + rng.randrange(3) - 1  # IP ids repeat
        fate = rng.choice(("out", "out", "drop_err", "drop_sbuf", "drop_router", "drop_mtu"))
        link.send(i * 1000, pkt, fate=fate, hits=rng.randrange(3), in_log=rng.random() > 0.1,
                  ecn_mark=rng.random() < 0.2)
        if rng.random() < 0.1:
            link.next_pkt_id -= rng.randrange(1, 4)  # the next `in` reuses a packet id
    fixed, _, log = link.write(directory, trailer=rng.random() < 0.5)
    lines = log.read_text().splitlines()
    events = [i for i, line in enumerate(lines) if not line.startswith("#")]
    for _ in range(10):  # an event of an id before its `in`, or of an id never seen
        i = rng.choice(events[1:])
        cols = lines[i].split("\t")
        cols[1], cols[3] = rng.choice(("hit", "out", "drop_err", "ecn_mark")), str(
            rng.choice((int(cols[3]) + 1, 999)))
        lines.insert(i, "\t".join(cols))
    log.write_text("\n".join(lines) + "\n")
    return fixed, log


@pytest.mark.parametrize("seed", range(12))
def test_vectorised_join_is_order_matching(tmp_path: Path, seed: int) -> None:
    fixed, log_path = random_transfer(random.Random(seed), tmp_path)
    log = read_emulator_log(log_path)
    packets = read_packets(fixed)
    expected = reference_join(packets, python_parse(log_path))
    assert dict(join_capture(packets, log)) == expected
    assert dict(join_records(read_capture(fixed).records, log)) == expected


def test_join_falls_back_to_exact_matching_on_a_hash_collision(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from analysis.join import fate_index
    fixed, log_path = random_transfer(random.Random(99), tmp_path)
    packets = read_packets(fixed)
    expected = reference_join(packets, python_parse(log_path))
    monkeypatch.setattr(fate_index, "_hash", lambda columns, n: fate_index.np.zeros(
        n, fate_index.np.uint64))  # every identity collides
    assert dict(join_capture(packets, read_emulator_log(log_path))) == expected


@pytest.mark.parametrize("collide", [False, True])
@pytest.mark.parametrize("seed", range(12))
def test_vectorised_join_at_either_end_of_the_link_is_order_matching(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int, collide: bool) -> None:
    """Each host's capture, with its side: what it sent joins `in` events, what it
    received joins `out` events. collide: every hash is equal, so the exact matching
    does the work."""
    from analysis.join import fate_index
    fixed, log_path = random_transfer(random.Random(seed), tmp_path)
    reference_log = python_parse(log_path)
    if collide:
        monkeypatch.setattr(fate_index, "_hash", lambda columns, n: fate_index.np.zeros(
            n, fate_index.np.uint64))
    log = read_emulator_log(log_path)
    for side, path in (("fixed", fixed), ("mobile", fixed.parent / "mobile.pcap")):
        packets = read_packets(path)
        expected = reference_join(packets, reference_log, side)
        assert dict(join_capture(packets, log, side)) == expected
        assert dict(join_records(read_capture(path).records, log, side)) == expected


# --- connections ------------------------------------------------------------------------

def random_connections(rng: random.Random, path: Path) -> None:
    """Segments of a few 4-tuples with SYNs (some retransmitted, some with a new ISN),
    SYN+ACKs, FINs and RSTs in random order: connections open, close and are reused."""
    frames = []
    for i in range(300):
        cport = rng.choice((40000, 40001, 40002))
        forward = rng.random() < 0.5
        flags = rng.choice(("S", "SA", "A", "A", "PA", "PA", "FA", "R", "RA"))
        seq = rng.choice((1000, 2000)) if "S" in flags else rng.randrange(1, 10**6)
        src, dst, sp, dp = ((FIXED, MOBILE, cport, 5001) if forward
                            else (MOBILE, FIXED, 5001, cport))
        pkt = tcp(src, dst, sp, dp, seq, 1, flags, rng.choice((0, 10, 100)))
        frames.append((i, bytes(pkt)))
    write_pcap(path, frames, linktype=101)


def view(conns: list[TcpConnection]) -> list[tuple]:
    return [(c.client, c.server, c.saw_syn, [p.frame_no for p in c.packets]) for c in conns]


@pytest.mark.parametrize("seed", range(12))
def test_connections_from_records_are_those_from_packets(tmp_path: Path, seed: int) -> None:
    path = tmp_path / "c.pcap"
    random_connections(random.Random(seed), path)
    expected = tcp_connections(read_packets(path))
    lazy = tcp_connections_of(ip_records(read_capture(path)))
    for a, b in zip(lazy, expected):  # the answers without making Packet objects
        for endpoint in (a.client, a.server, ("198.18.0.9", 1)):
            assert a.payload_bytes(endpoint) == b.payload_bytes(endpoint)
            assert a.frames_sent_by(endpoint) == [p.frame_no for p in b.sent_by(endpoint)]
        assert a.first_packet() == b.packets[0]
    assert view(lazy) == view(expected)
    assert lazy == expected


@pytest.mark.parametrize("seed", range(5))
def test_interval_set_covers_exactly_the_added_points(seed: int) -> None:
    from analysis.metrics.intervals import IntervalSet
    rng = random.Random(seed)
    intervals, points = IntervalSet(), set()
    for _ in range(300):  # mostly in order, as a sender's data is delivered
        start = rng.randrange(0, 400) if rng.random() < 0.3 else max(points, default=0)
        end = start + rng.randrange(0, 12)
        intervals.add(start, end)
        points.update(range(start, end))
        a = rng.randrange(0, 420)
        b = a + rng.randrange(0, 8)
        assert intervals.covers(a, b) == all(x in points for x in range(a, b))
    assert len(intervals) == sum(1 for x in points if x - 1 not in points)


@pytest.mark.parametrize("seed", range(6))
def test_metrics_of_connections_from_records_are_those_from_packets(tmp_path: Path,
                                                                     seed: int) -> None:
    from analysis.metrics.tcp import tcp_metrics
    path = tmp_path / "c.pcap"
    random_connections(random.Random(seed), path)
    packets = read_packets(path)
    expected = tcp_connections(packets)
    lazy = tcp_connections_of(ip_records(read_capture(path)))
    for a, b in zip(lazy, expected):
        for sender in (a.client, a.server):
            assert tcp_metrics(a, sender) == tcp_metrics(b, sender)
        assert a.unmade_records() is not None  # measured without Packet objects
    fixed, log_path = random_transfer(random.Random(seed), tmp_path)
    log = read_emulator_log(log_path)
    packets = read_packets(fixed)
    [a] = tcp_connections_of(ip_records(read_capture(fixed)))
    [b] = tcp_connections(packets)
    for sender in (a.client, a.server):
        assert tcp_metrics(a, sender, join_records(read_capture(fixed).records, log)) == \
            tcp_metrics(b, sender, join_capture(packets, log))


def test_router_trailer_lines_are_kept_per_direction_and_class(tmp_path: Path) -> None:
    path = sample_log(tmp_path)
    lines = path.read_text().splitlines()
    at = lines.index("# state_changes 0") + 1
    lines[at:at] = ["# router down EF arrivals 5 enqueued 4 drops 1 tail_drops 1 red_drops 0 dequeue_drops 0 "
                    "marks 0 backlog_pkts 0 backlog_bytes 0",
                    "# router down BE arrivals 9 enqueued 9 drops 0 tail_drops 0 red_drops 0 dequeue_drops 0 "
                    "marks 2 backlog_pkts 1 backlog_bytes 576"]
    path.write_text("\n".join(lines) + "\n")
    log = read_emulator_log(path)
    assert log.counts("router down EF")["drops"] == 1
    assert log.counts("router down BE") == {
        "arrivals": 9, "enqueued": 9, "drops": 0, "tail_drops": 0, "red_drops": 0, "dequeue_drops": 0, "marks": 2,
        "backlog_pkts": 1, "backlog_bytes": 576}
    same_log(log, python_parse(path))
