"""`squall run` end to end on real lanes: the results layout, failures recorded while the matrix
goes on, --resume, and SIGTERM leaving nothing behind.

Lanes $SQUALL_RUNNER_LANE_BASE (default 70) … +6.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import require_programs
from support_run import LENIENT, run_squall, three_flow_scenario      # LENIENT: not about timing
from analysis.read.emulog import read_emulator_log
from analysis.read.pcap import read_packets
from analysis.results.stored import stored
from analysis.read.tcp_samples import read_tcp_samples
from testbed import netns
from testbed.addresses import lane_addresses, namespaces
from testbed.link import session as link_session

pytestmark = pytest.mark.netns
REPO = Path(__file__).resolve().parents[1]
BASE = int(os.environ.get("SQUALL_RUNNER_LANE_BASE", "70"))
PROGRAMS = ("squall-emulator", "squall-npa", "squall-http", "squall-bulk", "squall-udp", "squall-queue-monitor")

MATRIX = """
[matrix]
tcp = ["baseline", "iw4"]
"""
CELLS = ("tcp-baseline", "tcp-iw4")


def write_scenario(tmp_path: Path, udp: str = "500ms") -> Path:
    path = tmp_path / "runner-test.toml"
    path.write_text(three_flow_scenario("runner-test", 11, udp, MATRIX))
    return path


@pytest.fixture
def run_tokens(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every run token the link sessions of this process make (replications run in threads)."""
    made: list[str] = []
    real = link_session.secrets.token_hex

    def recording(nbytes: int | None = None) -> str:
        value = real(nbytes)
        if nbytes == 8:
            made.append(value)
        return value

    monkeypatch.setattr(link_session.secrets, "token_hex", recording)
    return made


def assert_no_token(root: Path, tokens: list[str]) -> None:
    """No file of the run directory holds a run token in any spelling: hex in either case, or
    its 8 bytes in either order (a header captured somewhere)."""
    assert tokens
    forms = [f for t in tokens for f in (t.encode(), t.upper().encode(), bytes.fromhex(t), bytes.fromhex(t)[::-1])]
    holding = [str(p) for p in root.rglob("*") if p.is_file() and any(f in p.read_bytes() for f in forms)]
    assert holding == [], f"files with a run token: {holding}"


def only_run_dir(results: Path) -> Path:
    dirs = [d for d in results.iterdir() if d.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


def status(rep_dir: Path) -> dict:
    return json.loads((rep_dir / "status.json").read_text())


def assert_nothing_left(lanes: range, marker: str) -> None:
    present = set(netns.list_namespaces())
    assert not [ns for lane in lanes for ns in namespaces(lane).all() if ns in present]
    assert not Path("/sys/class/net/wl0").exists(), "a wl0 in the root namespace"
    assert not [pid for pid, cmd in processes() if marker in cmd], "a process of the run is still running"
    for lane in lanes:
        assert not Path(f"/run/squall/lanes/{lane}.json").exists(), f"owner record of lane {lane} left"
        private = lane_addresses(lane).private_prefix
        assert not list(Path(tempfile.gettempdir()).glob(private + "*")), f"a private directory of lane {lane} left"
        assert not cpu_wait_groups(lane), f"a CPU-wait cgroup of lane {lane} left"
    if Path(marker).is_dir():       # the test's own directory: no half-written file in it
        assert not list(Path(marker).rglob("*.tmp")), "a half-written *.tmp file left"


def cpu_wait_groups(lane: int) -> list[Path]:
    """The cgroups of the lane's programs (testbed/cpu_wait.py) that exist now."""
    from testbed import cpu_wait

    base = cpu_wait._base()
    return [] if base is None else [base / ns for ns in namespaces(lane).all() if (base / ns).exists()]


def processes() -> list[tuple[int, str]]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                found.append((int(entry.name), (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()))
            except OSError:
                pass
    return found


def unacknowledged_fins(pcap: Path, address: str) -> list[str]:
    """The FINs that `address`, the capture's host, sent and that no ACK in the capture
    acknowledges (read with scapy)."""
    from scapy.layers.inet import IP, TCP
    from scapy.utils import rdpcap

    fins: dict[tuple, int] = {}     # (src, sport, dst, dport) -> the ACK number that covers the FIN
    segments = [(f[IP], f[TCP]) for f in rdpcap(str(pcap)) if f.haslayer(TCP)]
    for ip, tcp in segments:
        if tcp.flags.F and ip.src == address:
            length = ip.len - 4 * ip.ihl - 4 * tcp.dataofs      # the capture keeps headers only
            fins[(ip.src, tcp.sport, ip.dst, tcp.dport)] = (tcp.seq + length + 1) % 2**32
    acked = {(ip.dst, tcp.dport, ip.src, tcp.sport) for ip, tcp in segments
             if tcp.flags.A and fins.get((ip.dst, tcp.dport, ip.src, tcp.sport)) == tcp.ack}
    return [f"{k[0]}:{k[1]} -> {k[2]}:{k[3]}" for k in fins if k not in acked]


def assert_complete_replication(rep: Path, lane_numbers: range) -> None:
    st = status(rep)
    assert st["status"] == "ok", st["reason"]
    assert st["details"]["testbed"]["lane"] in lane_numbers
    log = read_emulator_log(stored(rep, "emulator.log"))
    assert not log.cut_short, f"{rep}/emulator.log has no trailer"
    # The link was drained before STOP: no segment (e.g. the last ACK) was cut off in it; the
    # drain ended when the link was empty and no connection waited for an ACK, before its
    # worst case. In each capture (scapy's reading) every FIN its host sent was acknowledged.
    assert log.trailer["pending"]["count"] == "0"
    drain = st["details"]["drain"]
    assert drain["ended_by"] == "settled", drain
    assert st["details"]["timings"]["drain_s"] < drain["longest_s"]
    for host in ("fixed", "mobile"):
        address = st["details"]["testbed"][f"{host}_host"]
        assert unacknowledged_fins(stored(rep, f"{host}.pcap"), address) == [], host
    fixed, mobile = read_packets(stored(rep, "fixed.pcap")), read_packets(stored(rep, "mobile.pcap"))
    # Every flow crossed the link: the HTTP, bulk and UDP ports in both captures.
    for packets in (fixed, mobile):
        ports = {p.dport for p in packets if p.proto in (6, 17)}
        assert {8080, 5002, 6003} <= ports, ports
    workloads = json.loads((rep / "workloads.json").read_text())
    assert workloads["web"]["client"]["summary"]["ok"]
    assert [o["bytes"] for o in workloads["web"]["client"]["summary"]["objects"]] == [6288, 2096, 2096]
    assert workloads["bulk1"]["receiver"]["summary"]["bytes"] == 10 * 2096
    assert workloads["voice"]["receiver"]["summary"]["received"] > 0
    tcp = json.loads((rep / "tcp.json").read_text())
    assert tcp["profile"] == rep.parent.name.removeprefix("tcp-")
    assert {r["initcwnd"] for r in tcp["hosts"]["fixed"]["routes"]} == {2 if "baseline" in rep.parent.name else 4}
    assert "pfifo limit 20" in (rep / "router.tc").read_text()
    assert (rep / "router-queue.tsv").read_text().count("\n") > 1
    assert json.loads((rep / "tc-stats.json").read_text())["device"] == "wl0"
    for name in ("web.client.log", "bulk1.sender.log", "voice.receiver.log", "web.access.log"):
        assert (rep / name).stat().st_size > 0, name
    # the kernel's tcp_info at both hosts, the sampler stopped by squall: the bulk and web
    # connections are in it at the host that sends their data
    fixed_samples, mobile_samples = (read_tcp_samples(rep / f"{h}.tcpinfo.tsv") for h in ("fixed", "mobile"))
    assert fixed_samples.complete and mobile_samples.complete
    assert {5002, 8080} <= {r[k] for r in fixed_samples.rows + mobile_samples.rows for k in ("sport", "dport")}
    acked = max(r["bytes_acked"] or 0 for r in fixed_samples.rows if r["dport"] == 5002)   # None: no tcp_info
    assert 0 < acked <= 10 * 2096 + 2        # data, the SYN and the FIN; as far as sampled


@pytest.mark.parametrize("parallel, lane_base", [(1, BASE), (2, BASE + 1)])
def test_a_short_matrix_gives_the_full_results_layout(tmp_path: Path, parallel: int, lane_base: int,
                                                     run_tokens: list[str]) -> None:
    require_programs(*PROGRAMS)
    # The serial run also gets the analysis package's report at the end.
    code, out, err = run_squall(write_scenario(tmp_path), tmp_path / "results", lane_base, parallel,
                         analyse=parallel == 1)
    assert code == 0, err
    root = only_run_dir(tmp_path / "results")
    assert root.name.startswith("runner-test-")
    assert {"scenario.toml", "expanded.json", "meta.json"} <= {p.name for p in root.iterdir()}
    assert [c["cell"] for c in json.loads((root / "expanded.json").read_text())["cells"]] == list(CELLS)
    lanes = range(lane_base, lane_base + parallel)
    for cell in CELLS:
        assert sorted(p.name for p in (root / "cells" / cell).iterdir()) == ["rep-01", "rep-02"]
        for rep in ("rep-01", "rep-02"):
            assert_complete_replication(root / "cells" / cell / rep, lanes)
            assert "\ntoken = <redacted>\n" in (root / "cells" / cell / rep / "emulator.conf").read_text()
    # The results hold no run token: configuration, log, meta.json, status.json, programs'
    # output, router.tc, captures, ...
    assert len(run_tokens) == 4
    assert_no_token(root, run_tokens)
    # Same replication number, same channel timeline: the emulator got (seed, replication).
    logs = [read_emulator_log(stored(root / "cells" / c / "rep-02", "emulator.log")) for c in CELLS]
    assert [(log.seed, log.replication) for log in logs] == [(11, 2), (11, 2)]
    assert f"results: {root}" in out and "tcp-iw4" in out and "web: page time" in out
    assert "replications 4/4 done, 0 failed" in err
    if parallel == 1:
        assert {"report.md", "cells.csv", "runs.csv", "connections.csv"} <= {p.name for p in (root / "summary").iterdir()}
        assert (root / "summary" / "report.md").read_text() in out
        # the same report as `squall report`'s: its plots embedded (issue 34)
        assert "data:image/png;base64," in (root / "summary" / "report.html").read_text()
        assert list((root / "summary" / "plots").glob("*.svg"))
    assert_nothing_left(lanes, str(tmp_path))


def net_namespace(pid: int) -> int | None:
    try:
        return os.stat(f"/proc/{pid}/ns/net").st_ino
    except OSError:
        return None


def kill_when_running(root_of: callable, cell: str, rep: str, victim: str, lane: int,
                      stop: threading.Event) -> None:
    """SIGKILLs a link program of one replication (on `lane`) once its flows run."""
    while not stop.is_set():
        root = root_of()
        partial = root / "cells" / cell / f"{rep}.partial" if root else None
        if partial and (partial / "voice.sender.stdout").exists():
            time.sleep(0.5)
            ns = namespaces(lane)
            inode = os.stat(f"/run/netns/{ns.emu if victim == 'emulator' else ns.mobile}").st_ino
            for pid, cmd in processes():
                if net_namespace(pid) != inode:
                    continue    # only this test's lane, never another run's programs
                if (victim == "emulator" and f"{partial}/emulator.conf" in cmd) or \
                        (victim == "npa-mobile" and "squall-npa" in cmd and "--role mobile" in cmd):
                    os.kill(pid, signal.SIGKILL)
                    return
        time.sleep(0.05)


def test_killed_emulator_and_npa_are_recorded_and_resume_completes(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    results = tmp_path / "results"
    results.mkdir()

    def root_of() -> Path | None:
        dirs = list(results.iterdir())
        return dirs[0] if dirs else None

    stop = threading.Event()
    killers = [threading.Thread(target=kill_when_running,
                                args=(root_of, "tcp-baseline", "rep-02", "emulator", BASE + 3, stop)),
               threading.Thread(target=kill_when_running,
                                args=(root_of, "tcp-iw4", "rep-01", "npa-mobile", BASE + 3, stop))]
    for k in killers:
        k.start()
    try:
        code, out, err = run_squall(write_scenario(tmp_path, udp="3s"), results, BASE + 3)
    finally:
        stop.set()
        for k in killers:
            k.join()
    assert code == 1
    root = root_of()
    emu = status(root / "cells/tcp-baseline/rep-02")
    assert emu["status"] == "failed"
    assert "the emulator exited with code -9 during the replication" in emu["reason"]
    npa = status(root / "cells/tcp-iw4/rep-01")
    assert npa["status"] == "failed" and "the npa-mobile exited with code -9" in npa["reason"]
    for cell, rep in (("tcp-baseline", "rep-01"), ("tcp-iw4", "rep-02")):
        assert status(root / "cells" / cell / rep)["status"] == "ok"     # the matrix went on
    assert "--resume" in err
    assert_nothing_left(range(BASE + 3, BASE + 4), str(tmp_path))

    code, out, err = run_squall(None, results, BASE + 3, resume=root)
    assert code == 0, err
    assert "2 to run" in err
    for cell in CELLS:
        for rep in ("rep-01", "rep-02"):
            assert status(root / "cells" / cell / rep)["status"] == "ok"
    kept = status(root / "cells/tcp-baseline/attempts/rep-02-1")
    assert kept["status"] == "failed" and "emulator" in kept["reason"]
    assert status(root / "cells/tcp-iw4/attempts/rep-01-1")["status"] == "failed"
    assert_nothing_left(range(BASE + 3, BASE + 4), str(tmp_path))


@pytest.mark.parametrize("stop_signal", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_sigint_stops_cleanly_and_the_run_resumes(tmp_path: Path, stop_signal: int) -> None:
    require_programs(*PROGRAMS)
    results = tmp_path / "results"
    lanes = range(BASE + 4, BASE + 6)
    proc = subprocess.Popen([sys.executable, "-m", "testbed.cli", "run", str(write_scenario(tmp_path, udp="5s")),
                             "--parallel", "2", "--results", str(results), "--lane-base", str(lanes.start)],
                            cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while not list(results.glob("*/cells/*/rep-*.partial/voice.sender.stdout")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.05)
        time.sleep(0.5)
        proc.send_signal(stop_signal)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 128 + stop_signal, err
    root = only_run_dir(results)
    assert f"squall run --resume {root}" in err
    assert_nothing_left(lanes, str(tmp_path))
    assert not list(root.glob("cells/*/rep-??/status.json")), "an interrupted replication was recorded"

    code, out, err = run_squall(None, results, lanes.start, parallel=2, resume=root)
    assert code == 0, err
    assert sorted(str(p.relative_to(root)) for p in root.glob("cells/*/rep-*") if p.is_dir()) == \
        [f"cells/{c}/rep-0{r}" for c in CELLS for r in (1, 2)]
    assert list(root.glob("cells/*/attempts/rep-*")), "the interrupted attempts are kept"
    assert_nothing_left(lanes, str(tmp_path))


def test_an_emulator_engine_router_runs_in_the_emulator(tmp_path: Path) -> None:
    """RED on a kernel without sch_red: the runner gives the router to the emulator's router stage."""
    require_programs(*PROGRAMS)
    path = tmp_path / "red.toml"
    path.write_text('name = "red"\nseed = 5\ntimeout = "30s"\n' + LENIENT +
                    '[link]\nbandwidth = "1Mbit"\ndelay = "10ms"\nmtu = "576B"\nsend_buffer = "576B"\n'
                    '[router]\nprofile = "iip-red"\nengine = "emulator"\n'
                    '[flows.bulk1]\nkind = "bulk"\ncount = 40\nlength = "2096B"\n')
    code, out, err = run_squall(path, tmp_path / "results", BASE + 6)
    assert code == 0, err
    rep = only_run_dir(tmp_path / "results") / "cells" / "default" / "rep-01"
    assert status(rep)["status"] == "ok"
    conf = (rep / "emulator.conf").read_text()
    assert "[down.router]" in conf and "discipline = red" in conf
    assert "nothing was applied with tc" in (rep / "router.tc").read_text()
    assert not (rep / "router-queue.tsv").exists()
    stats = json.loads((rep / "router-stats.json").read_text())
    assert stats["engine"] == "emulator" and stats["class"][0]["arrivals"] > 0
    assert json.loads((rep / "workloads.json").read_text())["bulk1"]["receiver"]["summary"]["bytes"] == 40 * 2096
    assert_nothing_left(range(BASE + 6, BASE + 7), str(tmp_path))


def test_a_replication_past_its_timeout_is_stopped_and_recorded(tmp_path: Path) -> None:
    require_programs(*PROGRAMS)
    path = tmp_path / "slow.toml"
    path.write_text('name = "slow"\nseed = 5\ntimeout = "2s"\n' + LENIENT +
                    '[link]\nbandwidth = "1Mbit"\ndelay = "10ms"\nmtu = "576B"\n'
                    '[flows.voice]\nkind = "udp"\nworkload = "cbr-32k"\nduration = "20s"\n'
                    '[flows.quick]\nkind = "bulk"\ncount = 2\n')
    code, out, err = run_squall(path, tmp_path / "results", BASE + 6)
    assert code == 1
    st = status(only_run_dir(tmp_path / "results") / "cells" / "default" / "rep-01")
    assert st["status"] == "timeout"
    assert st["reason"] == "flows voice still running after the timeout of 2 s"
    assert st["details"]["timings"]["flows_s"] >= 2
    assert_nothing_left(range(BASE + 6, BASE + 7), str(tmp_path))


def test_cbi_replications_share_their_lane_and_tcp_metrics(tmp_path: Path) -> None:
    """A profile keeping TCP metrics: its replications run on one lane without a rebuild, so the
    second one starts with the cache the first one's connections left."""
    require_programs(*PROGRAMS)
    path = tmp_path / "cbi.toml"
    path.write_text('name = "cbi"\nseed = 5\nreplications = 2\ntimeout = "30s"\n' + LENIENT +
                    '[link]\nbandwidth = "1Mbit"\ndelay = "10ms"\nmtu = "576B"\n'
                    '[flows.bulk1]\nkind = "bulk"\ncount = 5\n'
                    '[matrix]\ntcp = ["cbi", "baseline"]\n')
    code, out, err = run_squall(path, tmp_path / "results", BASE + 6)
    assert code == 0, err
    cells = only_run_dir(tmp_path / "results") / "cells"
    fresh = {(c, r): status(cells / c / f"rep-0{r}")["details"]["fresh_lane"]
             for c in ("tcp-cbi", "tcp-baseline") for r in (1, 2)}
    assert fresh == {("tcp-cbi", 1): True, ("tcp-cbi", 2): False, ("tcp-baseline", 1): True,
                     ("tcp-baseline", 2): True}
    tcp = json.loads((cells / "tcp-cbi" / "rep-02" / "tcp.json").read_text())
    assert tcp["hosts"]["fixed"]["sysctl"]["net.ipv4.tcp_no_metrics_save"] == "0"
    assert tcp["hosts"]["fixed"]["metrics_flushed"] is False
    mobile_host = status(cells / "tcp-cbi" / "rep-02")["details"]["testbed"]["mobile_host"]
    assert any(line.startswith(mobile_host + " ") for line in tcp["metrics_cache_at_start"]["fixed"])
    for c, r in (("tcp-cbi", 1), ("tcp-baseline", 2)):
        cache = json.loads((cells / c / f"rep-0{r}" / "tcp.json").read_text())["metrics_cache_at_start"]
        assert cache == {"fixed": [], "mobile": []}
    assert status(cells / "tcp-cbi" / "rep-02")["details"]["cache"] == {"metrics": "kept"}
    # the first replication's connections all closed in its drain: none left to destroy
    assert status(cells / "tcp-cbi" / "rep-02")["details"]["lingering_connections_destroyed"] == 0
    assert "cache" not in status(cells / "tcp-baseline" / "rep-02")["details"]

    # Resumed to a third replication, the chain starts on a fresh lane: the replications before
    # it run again first, in order and unrecorded, so that the third starts with the chain's cache.
    code, out, err = run_squall(None, tmp_path / "results", BASE + 6, resume=cells.parent, replications=3)
    assert code == 0, err
    third = status(cells / "tcp-cbi" / "rep-03")["details"]
    assert third["fresh_lane"] is True
    assert {k: third["cache"][k] for k in ("metrics", "warmed_by_replications", "warm_up_status")} == \
        {"metrics": "warmed", "warmed_by_replications": [1, 2], "warm_up_status": "ok"}
    assert third["cache"]["warm_up_drain"]["ended_by"] == "settled"
    assert third["cache"]["warm_up_lingering_connections_destroyed"] == 0    # a fresh lane
    assert third["lingering_connections_destroyed"] == 0
    warm = json.loads((cells / "tcp-cbi" / "rep-03" / "tcp.json").read_text())["metrics_cache_at_start"]
    assert any(line.startswith(mobile_host + " ") for line in warm["fixed"]), warm
    cold = json.loads((cells / "tcp-baseline" / "rep-03" / "tcp.json").read_text())["metrics_cache_at_start"]
    assert cold == {"fixed": [], "mobile": []}
    assert sorted(p.name for p in (cells / "tcp-cbi").iterdir()) == ["rep-01", "rep-02", "rep-03"]
    assert not list(cells.glob("*/.warm-up-*")), "a warm-up's files were left"
    assert_nothing_left(range(BASE + 6, BASE + 7), str(tmp_path))


def test_the_link_drains_before_stop_so_connections_end_in_the_captures(tmp_path: Path) -> None:
    """An HTTP page ends when the client has the server's FIN; the client's last ACK is then
    still in a 300 ms link. The run must keep the link and captures until it is out."""
    require_programs(*PROGRAMS)
    path = tmp_path / "drain.toml"
    path.write_text('name = "drain"\nseed = 3\ntimeout = "30s"\n' + LENIENT +
                    '[link]\nbandwidth = "1Mbit"\ndelay = "300ms"\nmtu = "576B"\n'
                    '[flows.web]\nkind = "http"\nobjects = [2000]\nhttp = "1.0"\n')
    code, out, err = run_squall(path, tmp_path / "results", BASE + 5)
    assert code == 0, err
    rep = only_run_dir(tmp_path / "results") / "cells" / "default" / "rep-01"
    assert read_emulator_log(stored(rep, "emulator.log")).trailer["pending"]["count"] == "0"
    # The fixed host (server side) saw the ACK of its own FIN: the connection ended in the capture.
    packets = [p for p in read_packets(stored(rep, "fixed.pcap")) if p.proto == 6]
    server_fin = next(p for p in packets if p.sport == 8080 and p.tcp_flags & 0x01)
    fin_end = (server_fin.tcp_seq + server_fin.payload_len + 1) % 2**32
    assert any(p.dport == 8080 and p.tcp_ack == fin_end for p in packets), \
        "the ACK of the server's FIN never reached the fixed host before the run stopped"
    assert_nothing_left(range(BASE + 5, BASE + 6), str(tmp_path))


def test_prepare_ahead_sets_up_the_next_replication_while_one_runs_its_flows(tmp_path: Path) -> None:
    """--parallel 1 --prepare-ahead: two lanes, one replication in its flows at a time, the
    next one built and set up meanwhile, so it starts as soon as the previous flows end."""
    require_programs(*PROGRAMS)
    path = tmp_path / "ahead.toml"
    path.write_text('name = "ahead"\nseed = 3\nreplications = 4\ntimeout = "30s"\n' + LENIENT +
                    '[link]\nbandwidth = "1Mbit"\ndelay = "300ms"\nmtu = "576B"\n'
                    '[flows.web]\nkind = "http"\nobjects = [2000]\nhttp = "1.0"\n')
    lanes = range(BASE + 4, BASE + 6)
    code, out, err = run_squall(path, tmp_path / "results", lanes.start, prepare_ahead=True)
    assert code == 0, err
    assert "a spare lane setting up the next replication (--prepare-ahead)" in err
    reps = sorted((only_run_dir(tmp_path / "results") / "cells" / "default").glob("rep-*"))
    spans = []
    for rep in reps:
        st = status(rep)
        assert st["status"] == "ok", st["reason"]
        assert st["details"]["drain"]["ended_by"] == "settled"
        d = st["details"]
        t0, t = d["t0_realtime_us"] / 1e6, d["timings"]
        assert t["slot_wait_s"] >= 0
        set_up = t0 - t["slot_wait_s"] - t["setup_s"]
        spans.append((set_up, t0, t0 + t["flows_s"], t0 + t["flows_s"] + t["drain_s"]))
    assert {status(r)["details"]["testbed"]["lane"] for r in reps} == set(lanes)
    spans.sort(key=lambda s: s[1])
    for (_, _, flows_end, drain_end), (set_up, start, _, _) in zip(spans, spans[1:]):
        # flows_s is rounded to the ms and measured on another clock than START's time: 2 ms slack
        assert start >= flows_end - 0.002, "two replications ran their flows at once with one slot"
        assert set_up < drain_end, "the next replication was not set up while the previous one drained"
    assert_nothing_left(lanes, str(tmp_path))
