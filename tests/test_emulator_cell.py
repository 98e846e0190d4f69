"""A cell of several hosts through the emulator program (emulator/LINK_MODEL.md "A cell of
several hosts", emulator/CONFIG.md "[cell]"): `--print-packets` runs the link model on the
configuration file, so what the file says is what the model does. (A run with several mobile
NPAs: emulator/tests/test_peers_loopback.c.)"""
from __future__ import annotations

import subprocess
from pathlib import Path

from conftest import require_programs
from testbed.paths import bin_dir

LINK = ["token = 0123456789abcdef", "log = /dev/null", "seed = 5", "replication = 2",
        "[channel]", "good = exponential(300ms)", "bad = exponential(100ms)",
        "[down]", "mtu = 576B", "bandwidth = 64kbit", "delay = 20ms", "send_buffer = 100000B",
        "error_good = 0.05", "error_bad = 0.6", "arq_retransmissions = 3", "arq_delay = 40ms",
        "[up]", "mtu = 576B", "bandwidth = 32kbit", "delay = 20ms", "send_buffer = 100000B",
        "error_bad = 0.5", "arq_retransmissions = 2", "arq_delay = 40ms"]


def emulator(tmp_path: Path, extra: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    conf = tmp_path / "cell.conf"
    conf.write_text("\n".join([*LINK, *extra, ""]))
    return subprocess.run([str(bin_dir() / "squall-emulator"), *args, str(conf)],
                          capture_output=True, text=True, timeout=120)


def packets(tmp_path: Path, extra: list[str], count: int = 200) -> list[list[str]]:
    done = emulator(tmp_path, extra, "--print-packets", str(count))
    assert done.returncode == 0, done.stderr
    return [line.split("\t") for line in done.stdout.splitlines()]


def test_a_cell_of_one_host_is_the_link(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    alone = packets(tmp_path, [])
    assert len(alone) > 2000 and any(row[2] == "hit" for row in alone)
    assert packets(tmp_path, ["[cell]", "hosts = 1", "scheduler = proportional_fair"]) == alone


def test_round_robin_gives_each_host_every_third_frame(tmp_path: Path) -> None:
    # three hosts, each with a packet every millisecond in each direction: the transmitter is
    # always busy, so frames go to hosts 1, 2, 3, 1, ... in both directions
    require_programs("squall-emulator")
    rows = packets(tmp_path, ["[cell]", "hosts = 3"], count=60)
    assert all(len(row) == 8 for row in rows)
    for direction in ("down", "up"):
        hosts = [int(row[7]) for row in rows if row[1] == direction and row[2] == "tx" and row[5] == "0"]
        assert len(hosts) == 180
        assert hosts == [1 + i % 3 for i in range(180)]


def test_a_hosts_own_values_apply_to_it_alone(tmp_path: Path) -> None:
    # host 2's down frames never get through and are not retransmitted: each of its 60
    # packets ends in drop_err at its first attempt; hosts 1 and 3 keep the link's ARQ
    require_programs("squall-emulator")
    rows = packets(tmp_path, ["[cell]", "hosts = 3", "[host.2.down]", "error_good = 1",
                              "error_bad = 1", "arq_retransmissions = 0"], count=60)
    down = [row for row in rows if row[1] == "down"]
    assert sum(1 for row in down if row[7] == "2" and row[2] == "drop_err" and row[5] == "0") == 60
    assert not any(row[7] == "2" and row[2] == "out" for row in down)
    for host in ("1", "3"):
        assert sum(1 for row in down if row[7] == host and row[2] == "out") > 40
        assert any(row[7] == host and row[2] == "tx" and row[5] != "0" for row in down)


def test_each_host_has_its_own_timeline_and_host_1_the_links(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    alone = emulator(tmp_path, [], "--print-timeline", "60s")
    cell = emulator(tmp_path, ["[cell]", "hosts = 3", "[host.3.channel]", "bad = fixed(5s)"],
                    "--print-timeline", "60s")
    assert alone.returncode == 0 and cell.returncode == 0, cell.stderr
    timelines: dict[str, list[str]] = {}
    for line in cell.stdout.splitlines():
        start, state, host = line.split()
        timelines.setdefault(host, []).append(f"{start} {state}")
    assert list(timelines) == ["1", "2", "3"]
    assert timelines["1"] == alone.stdout.splitlines()        # host 1's streams are the link's
    assert timelines["2"] != timelines["1"] and len(timelines["2"]) > 50
    bad_lengths = {int(b.split()[0]) - int(a.split()[0])
                   for a, b in zip(timelines["3"], timelines["3"][1:]) if a.endswith("bad")}
    assert bad_lengths == {5_000_000}                         # its own channel's bad state


def test_check_names_a_hosts_key(tmp_path: Path) -> None:
    require_programs("squall-emulator")
    assert emulator(tmp_path, ["[cell]", "hosts = 2"], "--check").returncode == 0
    done = emulator(tmp_path, ["[cell]", "hosts = 2", "[host.2.up]", "send_buffer = 100B"], "--check")
    assert done.returncode == 2
    assert "cell.conf: host.2.up.send_buffer: 100 B is below the MTU 576 B" in done.stderr
