"""The run token and the run control, tried as an attacker would on a running link (lane
$SQUALL_TEST_LANE_BASE): the token is on no command line and in no file others can read,
the emulator listens on the carrier address only, and with the token a second NPA cannot
take the mobile role nor a datagram stop the run — each attempt refused, counted and named.
"""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import time
from pathlib import Path

import pytest

from analysis.read.emulog import read_emulator_log
from conftest import require_programs
from testbed import netns
from testbed.link import session as link_session
from testbed.link import wire
from testbed.link.session import LinkSession
from testbed.link.simple import error_free

pytestmark = pytest.mark.netns
LINK = error_free(1_000_000, 10_000, 1500)
NUL = b"\0"


def ping(lane) -> None:
    netns.run_in(lane.ns.fixed, ["ping", "-n", "-c", "2", "-i", "0.3", "-W", "2", lane.mobile_host])


def forms(token_hex: str) -> list[bytes]:
    """The ways the token could be written: hex either case, and its 8 bytes either order."""
    raw = bytes.fromhex(token_hex)
    return [token_hex.encode(), token_hex.upper().encode(), raw, raw[::-1]]


def cmdlines_with(token_hex: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if any(f in cmdline for f in forms(token_hex)):
            found.append(f"{entry.name}: {cmdline.replace(NUL, b' ').decode(errors='replace')}")
    return found


def readable_files_with(token_hex: str, roots: list[Path], since: float) -> list[str]:
    """Files under roots that other users may read (the mode's o+r, every directory above
    searchable by them or not: the mode alone is checked) and that hold the token. Only files
    changed since `since` are read: the roots are shared with other work."""
    found = []
    for root in roots:
        for directory, _, names in os.walk(root):
            for name in names:
                path = Path(directory) / name
                try:
                    st = path.lstat()
                    if not stat.S_ISREG(st.st_mode) or st.st_mtime < since or st.st_size > 1 << 24:
                        continue
                    if st.st_mode & stat.S_IROTH and any(f in path.read_bytes() for f in forms(token_hex)):
                        found.append(str(path))
                except OSError:
                    continue
    return found


def test_the_token_is_on_no_command_line_and_in_no_file_others_can_read(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    began = time.time() - 1
    with LinkSession(lane, LINK, tmp_path / "link") as session:
        ping(lane)
        assert session.programs.exit_codes() == {"emulator": None, "npa-router": None, "npa-mobile": None}
        assert cmdlines_with(session.token) == [], "the run token is on a command line"
        roots = [tmp_path, Path("/tmp"), Path("/run/squall"), Path("/dev/shm")]
        assert readable_files_with(session.token, [r for r in roots if r.exists()], began) == []
        # The private directory is the session's alone, and the token file is gone from it.
        private = Path(session.private.dir)
        assert stat.S_IMODE(private.stat().st_mode) == 0o700
        assert sorted(p.name for p in private.iterdir()) == ["control.sock"]
        assert stat.S_IMODE((private / "control.sock").stat().st_mode) == 0o600
        assert "token = <redacted>\n" in session.config_path.read_text()
    assert not private.exists(), "the private directory outlived the session"
    workdir = tmp_path / "link"
    for path in workdir.iterdir():
        assert not any(f in path.read_bytes() for f in forms(session.token)), f"{path} holds the run token"
    log = read_emulator_log(session.result.log_path)
    assert log.config["token"] == "<redacted>"


def test_the_emulator_listens_on_the_carrier_address_only(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    with LinkSession(lane, LINK, tmp_path / "link"):
        listening = netns.run_in(lane.ns.emu, ["ss", "-ulnpH"]).stdout.splitlines()
        emulator = [line.split()[3] for line in listening if '(("squall-emulat' in line]
        assert emulator == [f"{lane.emu_carrier.address}:{lane.emulator_port}"], listening
        # Nothing else of the emulation host listens on the emulator's port (the NPAs' own
        # sockets have ephemeral ports).
        on_port = [line.split()[3] for line in listening if line.split()[3].endswith(f":{lane.emulator_port}")]
        assert on_port == emulator, listening
        ping(lane)


def test_a_second_npa_with_the_token_cannot_take_the_mobile_role(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    with LinkSession(lane, LINK, tmp_path / "link") as session:
        token = int(session.token, 16)
        target = (lane.emu_carrier.address, lane.emulator_port)
        with netns.socket_in(lane.ns.mobile, socket.AF_INET, socket.SOCK_DGRAM) as forger:
            forger.settimeout(0.3)
            for seq in range(3):      # as an NPA would: HELLO until WELCOME
                forger.sendto(wire.encode(wire.MsgType.HELLO, wire.Role.MOBILE, token, seq), target)
                with pytest.raises(TimeoutError):
                    forger.recv(2048)
            forger_address = f"{lane.mobile_carrier.address}:{forger.getsockname()[1]}"
        ping(lane)      # the real mobile NPA still has its role
        assert session.programs.exit_codes()["emulator"] is None
    result = session.result
    log = read_emulator_log(result.log_path)
    assert log.counts("rejected")["role_taken"] == 3
    assert f"refused a HELLO for the mobile role from {forger_address}" in result.stderr["emulator"]
    intrusions = link_session.intrusions(result.stderr["emulator"])
    assert len(intrusions) == 1 and intrusions[0].startswith(
        f"a second NPA tried to take the mobile role (HELLO with the run token from {forger_address} while "
        f"the mobile NPA at {lane.mobile_carrier.address}:"), intrusions
    assert sum(1 for e in log.events if e.event == "peer" and "mobile up" in str(e.note)) == 1


def test_a_stop_datagram_with_the_token_does_not_end_the_run(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa")
    with LinkSession(lane, LINK, tmp_path / "link") as session:
        token = int(session.token, 16)
        target = (lane.emu_carrier.address, lane.emulator_port)
        for ns in (lane.ns.emu, lane.ns.mobile):
            with netns.socket_in(ns, socket.AF_INET, socket.SOCK_DGRAM) as sock:
                sock.settimeout(0.3)
                sock.sendto(wire.encode(wire.MsgType.STOP, wire.Role.CONTROL, token, 1), target)
                sock.sendto(wire.encode(wire.MsgType.START, wire.Role.CONTROL, token, 2), target)
                with pytest.raises(TimeoutError):
                    sock.recv(2048)     # neither BYE nor STARTED
        time.sleep(0.3)
        assert session.programs.exit_codes()["emulator"] is None, "a STOP datagram ended the run"
        ping(lane)
    result = session.result
    assert result.stop_acknowledged and result.exit_codes["emulator"] == 0 and result.stopped_by is None
    log = read_emulator_log(result.log_path)
    assert log.counts("rejected")["udp_control"] == 4
    assert log.trailer["end"]["reason"] == "stop"
    assert log.trailer["end"]["by_pid"] == str(os.getpid()), "squall's own STOP ended the run"
    assert log.counts("control") == {"start": 1, "stop": 1, "refused": 0, "bad_command": 0}


def test_a_run_stopped_by_someone_else_says_who(lane, tmp_path: Path) -> None:
    require_programs("squall-emulator", "squall-npa", "squall-control")
    with LinkSession(lane, LINK, tmp_path / "link") as session:
        socket_path = session.private.path("emu", link_session.CONTROL_SOCKET)
        proc = subprocess.run([str(link_session.program_path("squall-control")), socket_path, "stop"],
                              capture_output=True, text=True, timeout=20)
        assert (proc.returncode, proc.stdout) == (0, "stopped\n"), proc.stderr
        session.programs.wait_exit(link_session.EMULATOR, 5)
        code, stderr = session.dead_programs()[link_session.EMULATOR]
        reason = link_session.describe_death(link_session.EMULATOR, code, stderr)
    assert reason.startswith("the emulator was stopped by a STOP on its control socket from pid "), reason
    assert "(squall-control, uid 0), not by squall (exit code 0)" in reason, reason
    assert session.result.stopped_by is not None and "squall-control" in session.result.stopped_by
