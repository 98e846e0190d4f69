"""A link that cannot come up says which program failed and why, and leaves nothing running."""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from conftest import require_programs
from testbed import netns
from testbed.link.session import LinkSession, SessionError, npa_priority_for, scheduled, top_link_priority
from testbed.link.simple import error_free

pytestmark = pytest.mark.netns


def test_an_emulator_that_refuses_its_configuration_is_reported_with_its_stderr(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    missing = tmp_path / "no-such-trace.txt"
    base = error_free(64_000, 300_000, 576)
    link = replace(base, channel=replace(base.channel, trace=str(missing)))
    session = LinkSession(lane, link, tmp_path / "link")
    with pytest.raises(SessionError, match=r"squall-emulator.*exited with code 1.*no-such-trace") as failure:
        with session:
            pass
    assert session.result is not None and session.result.exit_codes == {"emulator": 1}, failure.value
    assert netns.pids(lane.ns.emu) == [] and netns.pids(lane.ns.mobile) == []


def test_an_npa_that_cannot_make_its_device_is_reported_with_its_stderr(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    # A device named wl0 already on the mobile host: the mobile NPA cannot create its TUN.
    netns.run_in(lane.ns.mobile, ["ip", "link", "add", "wl0", "type", "veth", "peer", "name", "wl0-peer"])
    session = LinkSession(lane, error_free(64_000, 300_000, 576), tmp_path / "link")
    with pytest.raises(SessionError, match=r"npa-mobile did not come up: .*squall-npa --role mobile.*stderr: .*wl0 already exists"):
        with session:
            pass
    codes = session.result.exit_codes
    assert set(codes) == {"emulator", "npa-router", "npa-mobile"} and codes["npa-mobile"] != 0
    assert netns.pids(lane.ns.emu) == [] and netns.pids(lane.ns.mobile) == []


def test_npas_run_one_priority_above_the_emulator(monkeypatch) -> None:
    """An NPA must not wait behind an emulator's poll or standby thread: the end-to-end time
    is what the hosts see (emulator/README.md, "The NPAs above the emulator")."""
    monkeypatch.delenv("SQUALL_NPA_PRIORITY", raising=False)
    monkeypatch.delenv("SQUALL_REALTIME_PRIORITY", raising=False)
    assert npa_priority_for(10) == 11
    assert npa_priority_for(99) == 99     # the highest real-time priority there is
    assert npa_priority_for(0) == 0       # normal scheduling stays normal
    monkeypatch.setattr("os.geteuid", lambda: 0)
    monkeypatch.setattr("shutil.which", lambda name: "/usr/bin/chrt")
    assert scheduled(["squall-npa"], npa_priority_for(10)) == ["chrt", "--fifo", "11", "squall-npa"]
    assert scheduled(["squall-npa"], 0) == ["squall-npa"]
    monkeypatch.setenv("SQUALL_REALTIME_PRIORITY", "20")
    assert top_link_priority() == 21      # where the bench runs cyclictest
    monkeypatch.setenv("SQUALL_NPA_PRIORITY", "9")
    assert top_link_priority() == 20
    link = error_free(None, 0, 1500)
    assert LinkSession(None, link, "unused").top_priority == 20          # what cyclictest runs at
    assert LinkSession(None, link, "unused", priority=0).top_priority == 0
