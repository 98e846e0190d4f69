"""Tearing a lane down in the middle of a run (a crash, Ctrl-C) leaves nothing behind."""
from __future__ import annotations

from pathlib import Path

import pytest

from conftest import lane_base, leftovers, namespace_inodes, require_programs
from testbed.lanes import lane as lanes
from testbed import netns
from testbed.lanes.capture import Capture
from testbed.link.session import LinkSession
from testbed.link.simple import error_free

pytestmark = pytest.mark.netns


def test_teardown_during_a_run_stops_every_program_and_removes_namespaces_and_tuns(tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    number = lane_base() + 4
    addr = lanes.create(number)
    inodes = namespace_inodes(addr)
    session = LinkSession(addr, error_free(64_000, 50_000, 576), tmp_path / "link")
    try:
        session.__enter__()
        capture = Capture(addr.ns.mobile, addr.mobile_wireless.dev, tmp_path / "mobile.pcap")
        capture.start()
        pinger = netns.popen_in(addr.ns.fixed, ["ping", "-q", "-i", "0.2", addr.mobile_host])
        tuns = netns.run_in(addr.ns.emu, ["ip", "-d", "link", "show", "wl0"]).stdout
        assert "tun" in tuns, "the router NPA should have made a TUN named wl0"
        lanes.teardown(number)       # while emulator, NPAs, tcpdump and ping all run
        programs = [p.proc for p in session.programs.programs.values()] + [capture.proc, pinger]
        assert all(p.wait(5) is not None for p in programs)
    finally:
        session.close()
        lanes.teardown(number)
    assert leftovers(number, inodes) == []
    assert not session.result.stop_acknowledged
